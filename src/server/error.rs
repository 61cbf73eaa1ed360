//! Errors as the API answers them: a status, a stable code and a message, as JSON
//! (`{"error": "...", "code": "..."}`), never something that could be read as an ID.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::body::Body;
use super::reply::{JSON, respond_with};
use crate::segment::SegmentError;
use crate::snowflake::SnowflakeError;
use crate::worker::IssueError;

/// A failure answered as `{"error": "...", "code": "..."}`.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// Ask the client to retry after a second (503s).
    retry: bool,
    /// Also carry Leaf's `errorMsg` key (`/decodeSnowflakeId`).
    leaf_error_msg: bool,
    /// A refused segment request's tag, as its buffers were when it was refused.
    buffers: Option<Buffers>,
}

/// A tag's buffers as a refusal found them: what a checker needs to judge the refusal (a
/// single ID refused while IDs were buffered; IDs taken from the buffers but never answered).
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct Buffers {
    /// IDs the tag's buffers held.
    pub buffered: u64,
    /// IDs handed out for the tag by this process since its buffers were made (from the
    /// buffers and from batch claims).
    pub issued: u64,
}

impl ApiError {
    /// An error answered with `status`, `code` and `message`.
    pub(super) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry: status == StatusCode::SERVICE_UNAVAILABLE,
            leaf_error_msg: false,
            buffers: None,
        }
    }

    /// Also carries the refused tag's buffers (`buffered`, `issued`).
    pub(super) fn with_buffers(mut self, buffers: Buffers) -> ApiError {
        self.buffers = Some(buffers);
        self
    }

    /// A 400: the request itself is wrong.
    pub(super) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// A 404 for a mode this server was not started with.
    pub(super) fn mode_disabled(mode: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "mode_disabled",
            format!("{mode} mode is not enabled on this server (start it with --{mode})"),
        )
    }

    /// Also carries Leaf's `errorMsg` key, as Leaf's `/decodeSnowflakeId` answers.
    pub(super) fn with_leaf_error_msg(mut self) -> ApiError {
        self.leaf_error_msg = true;
        self
    }

    /// The answer: the JSON body, with `Retry-After` on a 503 that may pass and
    /// `WWW-Authenticate` on a 401.
    pub(super) fn response(self) -> Response<Body> {
        #[derive(Serialize)]
        struct ErrorBody<'a> {
            error: &'a str,
            code: &'a str,
            #[serde(rename = "errorMsg", skip_serializing_if = "Option::is_none")]
            error_msg: Option<&'a str>,
            #[serde(flatten, skip_serializing_if = "Option::is_none")]
            buffers: Option<Buffers>,
        }
        let body = serde_json::to_vec(&ErrorBody {
            error: &self.message,
            code: self.code,
            error_msg: self.leaf_error_msg.then_some(self.message.as_str()),
            buffers: self.buffers,
        })
        .unwrap_or_default();
        let mut r = respond_with(self.status, JSON, body);
        if self.retry {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

/// How a segment failure is answered: its status and code, never which database.
pub(super) fn segment_error(e: SegmentError) -> ApiError {
    let unavailable = |code| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string());
    match &e {
        // Which database (a URL, a file path) is not the client's business; the log has it.
        SegmentError::UnknownTag { tag, .. } => ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_tag",
            format!("unknown tag {tag:?}"),
        ),
        SegmentError::InvalidTag { .. }
        | SegmentError::InvalidCount(_)
        | SegmentError::TooFew { .. } => ApiError::bad_request(e.to_string()),
        // Used up for good: no retry hint.
        SegmentError::Exhausted {
            max_id, ceiling, ..
        } if max_id >= ceiling => ApiError::new(StatusCode::GONE, "exhausted", e.to_string()),
        // A batch larger than what is left: the tag still has IDs for a smaller one.
        SegmentError::Exhausted {
            max_id, ceiling, ..
        } => ApiError::bad_request(format!("{e}; fewer IDs are left ({})", ceiling - max_id)),
        SegmentError::BadRow { .. } | SegmentError::OutsideBlock { .. } => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())
        }
        // Not transient: an operator must move the tag forward (`leafctl tag bump`).
        SegmentError::WentBackwards { .. } => ApiError {
            retry: false,
            ..unavailable("went_backwards")
        },
        // Not ready, database down, table gone: nothing to hand out right now.
        _ => unavailable("not_ready"),
    }
}

/// How a snowflake failure is answered.
pub(super) fn issue_error(e: IssueError) -> ApiError {
    let msg = e.to_string();
    match e {
        IssueError::Snowflake(SnowflakeError::ClockMovedBackwards { .. }) => {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "clock_backwards", msg)
        }
        IssueError::Snowflake(SnowflakeError::FenceFailed(_))
        | IssueError::Snowflake(SnowflakeError::FenceReached { .. })
        | IssueError::Worker(_) => {
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "lease_lost", msg)
        }
        IssueError::Snowflake(_) => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", msg)
        }
    }
}
