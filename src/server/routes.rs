//! The routes: Leaf's (`/api/segment/get/{key}`, `/api/snowflake/get/{key}`,
//! `/decodeSnowflakeId`, `/cache`, `/db`) and leafctl's (`?count=N`, `/metrics`, `/healthz`,
//! `/readyz`), with errors that are never an ID.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;

pub(crate) use super::body::Body;
use super::body::StreamWriter;
use super::status::{TagQuery, TagSort};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use serde::Serialize;
use std::io::Write;
use subtle::ConstantTimeEq;

use super::conn::{HeaderWait, mono_ns};
use super::route::{Route, not_found, route_of};
use super::{LeafService, MAX_BATCH};
use crate::segment::{
    LeafAlloc, RowPages, SegmentBufferView, SegmentError, TagFilter, TagHealth, validate_tag,
};
use crate::snowflake::{IdBlock, SnowflakeError};
use crate::worker::IssueError;

const TEXT: &str = "text/plain;charset=UTF-8";
const JSON: &str = "application/json";
const HTML: &str = "text/html;charset=UTF-8";

/// A failure answered as `{"error": "...", "code": "..."}`.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// Ask the client to retry after a second (503s).
    retry: bool,
    /// Also carry Leaf's `errorMsg` key (`/decodeSnowflakeId`).
    leaf_error_msg: bool,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry: status == StatusCode::SERVICE_UNAVAILABLE,
            leaf_error_msg: false,
        }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn mode_disabled(mode: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "mode_disabled",
            format!("{mode} mode is not enabled on this server (start it with --{mode})"),
        )
    }

    fn response(self) -> Response<Body> {
        #[derive(Serialize)]
        struct ErrorBody<'a> {
            error: &'a str,
            code: &'a str,
            #[serde(rename = "errorMsg", skip_serializing_if = "Option::is_none")]
            error_msg: Option<&'a str>,
        }
        let body = serde_json::to_vec(&ErrorBody {
            error: &self.message,
            code: self.code,
            error_msg: self.leaf_error_msg.then_some(self.message.as_str()),
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

fn segment_error(e: SegmentError) -> ApiError {
    let unavailable = |code| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string());
    match &e {
        // Which database (a URL, a file path) is not the client's business; the log has it.
        SegmentError::UnknownTag { tag, .. } => ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_tag",
            format!("unknown tag {tag:?}"),
        ),
        SegmentError::InvalidTag { .. } | SegmentError::InvalidCount(_) => {
            ApiError::bad_request(e.to_string())
        }
        // Used up for good: no retry hint.
        SegmentError::Exhausted { max_id, .. } if *max_id == i64::MAX => {
            ApiError::new(StatusCode::GONE, "exhausted", e.to_string())
        }
        // A batch larger than what is left: the tag still has IDs for a smaller one.
        SegmentError::Exhausted { max_id, .. } => {
            ApiError::bad_request(format!("{e}; fewer IDs are left ({})", i64::MAX - max_id))
        }
        SegmentError::BadRow { .. } => {
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

fn issue_error(e: IssueError) -> ApiError {
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

/// A longer path is refused with a JSON 414: every route's path is far shorter (a tag of 128
/// four-byte characters is 1,536 bytes percent-encoded).
const MAX_PATH_BYTES: usize = 16 * 1024;

fn respond_with(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn one_id(id: u64) -> Response<Body> {
    let mut r = Response::new(Body::id(id));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT));
    r
}

fn id_lines(count: u64, fill: impl FnOnce(&mut Vec<u8>)) -> Response<Body> {
    let mut body = Vec::with_capacity(count as usize * 20);
    fill(&mut body);
    respond_with(StatusCode::OK, TEXT, body)
}

fn push_id(body: &mut Vec<u8>, buf: &mut itoa::Buffer, id: u64) {
    body.extend_from_slice(buf.format(id).as_bytes());
    body.push(b'\n');
}

fn json<T: Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    respond_with(status, JSON, serde_json::to_vec(value).unwrap_or_default())
}

/// Decodes `%XX` escapes (borrowing when there are none); `None` when an escape is malformed or
/// the result is not UTF-8.
#[inline]
fn percent_decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.bytes().any(|b| b == b'%') {
        return Some(Cow::Borrowed(s));
    }
    decode_escapes(s).map(Cow::Owned)
}

/// [`percent_decode`] of a string with escapes (out of line: request keys rarely have any).
#[cold]
fn decode_escapes(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The value of `name` in a query string (`+` is a space, as in forms), if present.
fn query_param(query: Option<&str>, name: &str) -> Result<Option<String>, ApiError> {
    let Some(q) = query else { return Ok(None) };
    for pair in q.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == name {
            let v = v.replace('+', " ");
            return percent_decode(&v)
                .map(|d| Some(d.into_owned()))
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "query parameter {name} is not valid percent-encoded UTF-8"
                    ))
                });
        }
    }
    Ok(None)
}

fn parse_count(query: Option<&str>) -> Result<Option<u64>, ApiError> {
    if query.is_none() {
        return Ok(None);
    }
    let Some(raw) = query_param(query, "count")? else {
        return Ok(None);
    };
    match raw.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_BATCH).contains(&n) => Ok(Some(n)),
        _ => Err(ApiError::bad_request(format!(
            "count must be a whole number from 1 to {MAX_BATCH}, not {raw:?}"
        ))),
    }
}

/// The key of a get route ([`Route::key`]), decoded; never empty.
#[inline]
fn key_of(raw: &str) -> Result<Cow<'_, str>, ApiError> {
    let key = percent_decode(raw)
        .ok_or_else(|| ApiError::bad_request("the key is not valid percent-encoded UTF-8"))?;
    if key.is_empty() {
        return Err(no_key());
    }
    Ok(key)
}

/// [`key_of`]'s answer to a path without a key: it names the get routes.
#[cold]
fn no_key() -> ApiError {
    let listed = |r: Route| r.listed().unwrap_or_default();
    ApiError::bad_request(format!(
        "no key: ask {} or {}",
        listed(Route::Segment),
        listed(Route::Snowflake)
    ))
}

/// Whether the client prefers HTML (a browser) to JSON.
/// `/?format=json`, or an `Accept` header that prefers JSON to HTML.
fn wants_status_json<B>(req: &Request<B>) -> bool {
    let format_json = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "format=json"));
    let accept_json = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json") && !prefers_html(a));
    format_json || accept_json
}

fn wants_html<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(prefers_html)
}

/// Whether an `Accept` header prefers HTML to JSON: the higher q-value wins (RFC 9110 12.5.1),
/// the one listed first on a tie; `*/*` and `text/*` count for HTML only when nothing names
/// JSON. Without either, JSON (the API's own type).
fn prefers_html(accept: &str) -> bool {
    let mut html: Option<(f32, usize)> = None;
    let mut json: Option<(f32, usize)> = None;
    for (pos, item) in accept.split(',').enumerate() {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|v| v.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "text/html" | "application/xhtml+xml" => &mut html,
            "application/json" => &mut json,
            _ => continue,
        };
        if slot.is_none_or(|(best, _)| q > best) {
            *slot = Some((q, pos));
        }
    }
    match (html, json) {
        (Some((hq, _)), _) if hq <= 0.0 => false,
        (Some((hq, hp)), Some((jq, jp))) => hq > jq || (hq == jq && hp < jp),
        (Some(_), None) => true,
        _ => false,
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const HTML_END: &str = "</table>\n</body></html>\n";

/// A listing streamed as a JSON array of objects or, for a browser, an HTML table of the same
/// fields: the framing `/cache` and `/db` share.
struct Listing {
    out: StreamWriter,
    html: bool,
    rows: u64,
}

/// Why a listing ended early.
enum Broke {
    /// The client went away: nothing more to do.
    ClientGone,
    /// The source failed: the answer is cut off with this reason.
    Failed(String),
}

impl From<std::io::Error> for Broke {
    fn from(_: std::io::Error) -> Broke {
        Broke::ClientGone
    }
}

impl Listing {
    /// One row: its JSON object, or its HTML cells.
    fn row<const N: usize>(
        &mut self,
        value: &impl Serialize,
        cells: impl FnOnce() -> [String; N],
    ) -> std::io::Result<()> {
        if self.html {
            html_row(&mut self.out, &cells())?;
        } else {
            self.out
                .write_all(if self.rows == 0 { b"[" } else { b"," })?;
            serde_json::to_writer(&mut self.out, value).map_err(std::io::Error::other)?;
        }
        self.rows += 1;
        Ok(())
    }
}

/// A listing answer whose rows `produce` writes on a blocking thread while the client reads.
fn listing(
    html: bool,
    title: &'static str,
    columns: &'static [&'static str],
    produce: impl FnOnce(&mut Listing) -> Result<(), Broke> + Send + 'static,
) -> Response<Body> {
    let body = Body::stream(move |mut out| {
        if html && html_head(&mut out, title, columns).is_err() {
            return;
        }
        let mut listing = Listing { out, html, rows: 0 };
        match produce(&mut listing) {
            Ok(()) => {
                let end: &[u8] = match (html, listing.rows) {
                    (true, _) => HTML_END.as_bytes(),
                    (false, 0) => b"[]",
                    (false, _) => b"]",
                };
                if listing.out.write_all(end).is_ok() {
                    let _ = listing.out.finish();
                }
            }
            Err(Broke::Failed(why)) => {
                tracing::warn!("{why}");
                listing.out.fail(why);
            }
            Err(Broke::ClientGone) => {}
        }
    });
    let mut r = Response::new(body);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(if html { HTML } else { JSON }),
    );
    r
}

/// The start of an HTML table page (Leaf's `/cache` and `/db` for a browser), up to its header row.
fn html_head(out: &mut impl Write, title: &str, header: &[&str]) -> std::io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title></head><body>\n<h1>{t}</h1>\n<table border=\"1\">\n<tr>",
        t = html_escape(title)
    )?;
    for h in header {
        write!(out, "<th>{}</th>", html_escape(h))?;
    }
    out.write_all(b"</tr>\n")
}

/// One row of such a table.
fn html_row(out: &mut impl Write, cells: &[String]) -> std::io::Result<()> {
    out.write_all(b"<tr>")?;
    for cell in cells {
        write!(out, "<td>{}</td>", html_escape(cell))?;
    }
    out.write_all(b"</tr>\n")
}

fn local_time(unix_ms: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(unix_ms).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S%.3f").to_string(),
        None => "?".into(),
    }
}

fn rfc3339_s(unix_s: i64) -> String {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Leaf's `SegmentBufferView`, plus leafctl's load state.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheEntry {
    key: String,
    init_ok: bool,
    next_ready: bool,
    pos: usize,
    value0: String,
    max0: String,
    step0: u64,
    value1: String,
    max1: String,
    step1: u64,
    loading: bool,
    step: i64,
    min_step: i64,
    last_error: Option<String>,
}

/// Every field of the JSON, the load state and the last error included.
const CACHE_COLUMNS: [&str; 14] = [
    "key",
    "initOk",
    "nextReady",
    "pos",
    "value0",
    "max0",
    "step0",
    "value1",
    "max1",
    "step1",
    "loading",
    "step",
    "minStep",
    "lastError",
];

fn cache_entry(v: SegmentBufferView) -> CacheEntry {
    CacheEntry {
        key: v.tag,
        init_ok: v.init_ok,
        next_ready: v.next_ready,
        pos: v.pos,
        value0: v.segments[0].value.to_string(),
        max0: v.segments[0].max.to_string(),
        step0: v.segments[0].step,
        value1: v.segments[1].value.to_string(),
        max1: v.segments[1].max.to_string(),
        step1: v.segments[1].step,
        loading: v.loading,
        step: v.step,
        min_step: v.min_step,
        last_error: v.last_error,
    }
}

impl CacheEntry {
    /// The cells of its HTML row, in [`CACHE_COLUMNS`] order.
    fn cells(&self) -> [String; 14] {
        [
            self.key.clone(),
            self.init_ok.to_string(),
            self.next_ready.to_string(),
            self.pos.to_string(),
            self.value0.clone(),
            self.max0.clone(),
            self.step0.to_string(),
            self.value1.clone(),
            self.max1.clone(),
            self.step1.to_string(),
            self.loading.to_string(),
            self.step.to_string(),
            self.min_step.to_string(),
            self.last_error.clone().unwrap_or_default(),
        ]
    }
}

/// Leaf's `LeafAlloc` row.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DbRow {
    key: String,
    max_id: String,
    step: i64,
    description: Option<String>,
    update_time: String,
}

const DB_COLUMNS: [&str; 5] = ["key", "maxId", "step", "description", "updateTime"];

fn db_row(r: &LeafAlloc) -> DbRow {
    DbRow {
        key: r.tag.clone(),
        max_id: r.max_id.to_string(),
        step: r.step,
        description: r.description.clone(),
        update_time: rfc3339_s(r.update_time_s),
    }
}

impl DbRow {
    /// The cells of its HTML row, in [`DB_COLUMNS`] order.
    fn cells(&self) -> [String; 5] {
        [
            self.key.clone(),
            self.max_id.clone(),
            self.step.to_string(),
            self.description.clone().unwrap_or_default(),
            self.update_time.clone(),
        ]
    }
}

#[derive(Serialize)]
struct Readiness {
    ready: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    segment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snowflake: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

/// What a route does with a request: answered already, or work for a blocking thread (a
/// database claim, a wait for a segment or the next tick) that owns everything it needs.
enum Step {
    /// One ID, answered 200 with its digits ([`one_id`]).
    Id(u64),
    Done(Result<Response<Body>, ApiError>),
    Blocking(BlockingWork),
    /// One snowflake ID that the non-blocking try could not issue
    /// ([`LeafService::snowflake_one_in_turn`]).
    SnowflakeInTurn,
}

type BlockingWork = Box<dyn FnOnce(&LeafService) -> Result<Response<Body>, ApiError> + Send>;

impl Step {
    fn blocking(
        work: impl FnOnce(&LeafService) -> Result<Response<Body>, ApiError> + Send + 'static,
    ) -> Step {
        Step::Blocking(Box::new(work))
    }
}

impl From<Result<Response<Body>, ApiError>> for Step {
    fn from(result: Result<Response<Body>, ApiError>) -> Step {
        Step::Done(result)
    }
}

/// The answer to one request (see [`LeafService::answer`]): ready at once, or work running on a
/// blocking thread. Small (two words), as hyper moves it around: a single ID's response is made
/// when the answer is polled.
pub(crate) enum Answer {
    Id(u64),
    /// Taken by the first poll.
    Ready(Option<Box<Response<Body>>>),
    Later(std::pin::Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>>),
}

impl std::future::Future for Answer {
    type Output = Response<Body>;
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Response<Body>> {
        match self.get_mut() {
            Answer::Id(id) => std::task::Poll::Ready(one_id(*id)),
            Answer::Ready(r) => match r.take() {
                Some(r) => std::task::Poll::Ready(*r),
                // Polled after it completed: hyper never does that.
                None => std::task::Poll::Pending,
            },
            Answer::Later(f) => f.as_mut().poll(cx),
        }
    }
}

/// What the access log says of a request answered later (kept only when that log is on).
struct Logged {
    method: hyper::Method,
    path: String,
}

impl LeafService {
    /// Answers one request. Leaf's routes take any method, as Leaf does; the request body is
    /// never read.
    pub async fn respond<B>(self: &Arc<Self>, req: Request<B>) -> Response<Full<Bytes>> {
        let answer = self.answer(&req, None);
        drop(req);
        let (parts, body) = answer.await.into_parts();
        // A streamed answer (`/cache`, `/db`) is gathered here; one cut short by a failure
        // ends where it broke.
        let bytes = match http_body_util::BodyExt::collect(body).await {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                tracing::warn!("an answer broke off: {e}");
                Bytes::new()
            }
        };
        Response::from_parts(parts, Full::new(bytes))
    }

    /// Answers one request: what needs no blocking thread (every single-ID answer from a
    /// loaded segment or the current tick) is answered before this returns. The answer keeps
    /// nothing of the request, so the caller drops it at once: the connection's read buffer,
    /// which its path and headers share, is then free again when hyper next reads into it.
    /// `wait` is the connection's header deadline ([`run`](super::run)): cleared while an
    /// answer is coming, restarted when it is handed over.
    pub(crate) fn answer<B>(
        self: &Arc<Self>,
        req: &Request<B>,
        wait: Option<&Arc<HeaderWait>>,
    ) -> Answer {
        let started = mono_ns();
        let path = req.uri().path();
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        let route = route_of(path);
        let step = match route {
            // A path too long for any route gets the same JSON errors as everything else
            // (hyper answers past its own, larger, limit, with an empty body).
            _ if path.len() > MAX_PATH_BYTES => Step::Done(Err(ApiError::new(
                StatusCode::URI_TOO_LONG,
                "path_too_long",
                format!(
                    "the path has {} bytes; at most {MAX_PATH_BYTES}",
                    path.len()
                ),
            ))),
            Route::Healthz => Step::Done(Ok(respond_with(StatusCode::OK, TEXT, b"ok\n".to_vec()))),
            Route::Readyz => Step::Done(Ok(self.readyz())),
            // The page holds no data (it fetches the JSON with the token), so it is served to
            // anyone; the JSON is guarded like every other route.
            Route::Status if !wants_status_json(req) => Step::Done(Ok(respond_with(
                StatusCode::OK,
                "text/html; charset=utf-8",
                super::status::PAGE.as_bytes().to_vec(),
            ))),
            _ => match self.authorize(req) {
                Err(e) => Step::Done(Err(e)),
                Ok(()) => self.route(route, path, req),
            },
        };
        match step {
            Step::Id(id) => {
                let now = self.count_and_log(route, started, 200, req.method(), req.uri().path());
                if let Some(w) = wait {
                    w.answered(now);
                }
                Answer::Id(id)
            }
            Step::Done(result) => {
                let response = result.unwrap_or_else(ApiError::response);
                let status = response.status().as_u16();
                let now =
                    self.count_and_log(route, started, status, req.method(), req.uri().path());
                if let Some(w) = wait {
                    w.answered(now);
                }
                Answer::Ready(Some(Box::new(response)))
            }
            Step::Blocking(work) => self.later(route, started, req, wait, Some(work)),
            Step::SnowflakeInTurn => self.later(route, started, req, wait, None),
        }
    }

    /// The answer that waits for `work` on a blocking thread (`None`: for
    /// [`LeafService::snowflake_one_in_turn`]); no header deadline runs meanwhile.
    #[cold]
    fn later<B>(
        self: &Arc<Self>,
        route: Route,
        started: u64,
        req: &Request<B>,
        wait: Option<&Arc<HeaderWait>>,
        work: Option<BlockingWork>,
    ) -> Answer {
        let logged =
            tracing::enabled!(target: "leafctl::access", tracing::Level::INFO).then(|| Logged {
                method: req.method().clone(),
                path: req.uri().path().to_owned(),
            });
        if let Some(w) = wait {
            w.answering();
        }
        let wait = wait.cloned();
        let this = self.clone();
        Answer::Later(Box::pin(async move {
            let result = match work {
                Some(work) => {
                    let worker = this.clone();
                    blocking(move || work(&worker)).await
                }
                None => this.snowflake_one_in_turn().await,
            };
            let (method, path) = match &logged {
                Some(l) => (&l.method, l.path.as_str()),
                None => (&hyper::Method::GET, ""),
            };
            let response = result.unwrap_or_else(ApiError::response);
            let status = response.status().as_u16();
            let now = this.count_and_log(route, started, status, method, path);
            if let Some(w) = wait {
                w.answered(now);
            }
            response
        }))
    }

    /// Counts and logs an answered request; the time ([`mono_ns`]) it was done.
    fn count_and_log(
        &self,
        route: Route,
        started: u64,
        status: u16,
        method: &hyper::Method,
        path: &str,
    ) -> u64 {
        let now = mono_ns();
        let elapsed_ns = now.saturating_sub(started);
        self.metrics.request_ns(route, status, elapsed_ns);
        tracing::info!(
            target: "leafctl::access",
            "{} {} {} {:.3}ms",
            method,
            path,
            status,
            elapsed_ns as f64 / 1e6
        );
        now
    }

    fn segment_mode(&self) -> Result<&crate::segment::SegmentGenerator, ApiError> {
        self.segment
            .as_deref()
            .ok_or_else(|| ApiError::mode_disabled("segment"))
    }

    fn snowflake_mode(&self) -> Result<&crate::worker::SupervisedGenerator, ApiError> {
        self.snowflake
            .as_deref()
            .ok_or_else(|| ApiError::mode_disabled("snowflake"))
    }

    fn authorize<B>(&self, req: &Request<B>) -> Result<(), ApiError> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .and_then(|v| {
                // The scheme is case-insensitive (RFC 9110 11.1); one or more spaces follow it.
                let (scheme, rest) = v.split_at_checked(6)?;
                (scheme.eq_ignore_ascii_case(b"bearer") && rest.first() == Some(&b' '))
                    .then(|| rest.trim_ascii_start())
            })
            .unwrap_or_default();
        if bool::from(given.ct_eq(token.as_bytes())) {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server requires Authorization: Bearer TOKEN",
            ))
        }
    }

    fn route<B>(&self, route: Route, path: &str, req: &Request<B>) -> Step {
        let query = req.uri().query();
        match route {
            Route::Segment => {
                match key_of(Route::Segment.key(path))
                    .and_then(|key| Ok((key, parse_count(query)?)))
                {
                    Ok((key, count)) => self.segment_get(key, count),
                    Err(e) => Step::Done(Err(e)),
                }
            }
            Route::Snowflake => {
                match key_of(Route::Snowflake.key(path)).and_then(|_| parse_count(query)) {
                    Ok(count) => self.snowflake_get(count),
                    Err(e) => Step::Done(Err(e)),
                }
            }
            Route::Decode => self.decode(query).into(),
            Route::Cache => self.cache(wants_html(req)).into(),
            Route::Db => {
                let html = wants_html(req);
                // The first page is read before answering (a database that does not answer is
                // an error answer, not a broken one).
                Step::blocking(move |this| this.db(html))
            }
            Route::Status => Step::Done(
                status_query(query).map(|q| json(StatusCode::OK, &self.status_report(&q))),
            ),
            Route::Metrics => Step::Done(Ok(respond_with(
                StatusCode::OK,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                self.metrics.encode().into_bytes(),
            ))),
            Route::Healthz | Route::Readyz | Route::Other => Step::Done(Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                not_found(path),
            ))),
        }
    }

    fn segment_get(&self, tag: Cow<'_, str>, count: Option<u64>) -> Step {
        let segment = match self.segment_mode() {
            Ok(s) => s,
            Err(e) => return Step::Done(Err(e)),
        };
        if let Err(e) = validate_tag(&tag) {
            return Step::Done(Err(segment_error(e)));
        }
        match count {
            None => {
                // The common case never blocks: an ID from the current segment.
                if let Some(id) = segment.try_next_id(&tag) {
                    return Step::Id(id);
                }
                // Owned only on the paths that leave the event loop.
                let tag = tag.into_owned();
                Step::blocking(move |this| {
                    let segment = this.segment_mode()?;
                    let id = segment.next_id(&tag).map_err(segment_error)?;
                    Ok(one_id(id))
                })
            }
            Some(n) => {
                let tag = tag.into_owned();
                Step::blocking(move |this| {
                    let segment = this.segment_mode()?;
                    let ranges: Vec<Range<u64>> =
                        segment.next_ids(&tag, n).map_err(segment_error)?;
                    Ok(id_lines(n, |body| {
                        let mut buf = itoa::Buffer::new();
                        for id in ranges.into_iter().flatten() {
                            push_id(body, &mut buf, id);
                        }
                    }))
                })
            }
        }
    }

    fn snowflake_get(&self, count: Option<u64>) -> Step {
        let snowflake = match self.snowflake_mode() {
            Ok(s) => s,
            Err(e) => return Step::Done(Err(e)),
        };
        match count {
            None => {
                // The common case never blocks; a wait for the next tick or a reservation that
                // must be extended (I/O) goes to a blocking thread.
                match snowflake.try_next_block(1) {
                    Some(Ok(block)) => {
                        self.metrics.snowflake_issued(1);
                        Step::Id(block.first)
                    }
                    Some(Err(e)) => Step::Done(Err(issue_error(e))),
                    None => Step::SnowflakeInTurn,
                }
            }
            Some(n) => Step::blocking(move |this| {
                let snowflake = this.snowflake_mode()?;
                let mut blocks: Vec<IdBlock> = Vec::new();
                let mut left = n;
                while left > 0 {
                    let block = snowflake.next_block(left).map_err(issue_error)?;
                    left -= block.count;
                    blocks.push(block);
                }
                this.metrics.snowflake_issued(n);
                Ok(id_lines(n, |body| {
                    let mut buf = itoa::Buffer::new();
                    for id in blocks.into_iter().flatten() {
                        push_id(body, &mut buf, id);
                    }
                }))
            }),
        }
    }

    /// One snowflake ID when the non-blocking try could not issue one (the tick used up, a small
    /// clock rollback, or the time fence to move past what the registry has recorded, which
    /// needs I/O; inside the record the try moves it from memory). Such requests come in
    /// bursts (every request in flight when the fence is reached), and each used to take a
    /// blocking thread of its own, only to queue on the generator's lock (new threads started
    /// for a burst). Now one at a time waits on a blocking thread; the others wait here, then
    /// try again without blocking, which usually succeeds since the one before them moved the
    /// fence or the tick on.
    async fn snowflake_one_in_turn(self: &Arc<Self>) -> Result<Response<Body>, ApiError> {
        let _turn = self.snowflake_turn.lock().await;
        if let Some(result) = self.snowflake_mode()?.try_next_block(1) {
            let block = result.map_err(issue_error)?;
            self.metrics.snowflake_issued(1);
            return Ok(one_id(block.first));
        }
        let this = self.clone();
        blocking(move || {
            let snowflake = this.snowflake_mode()?;
            let block = snowflake.next_block(1).map_err(issue_error)?;
            this.metrics.snowflake_issued(1);
            Ok(one_id(block.first))
        })
        .await
    }

    fn decode(&self, query: Option<&str>) -> Result<Response<Body>, ApiError> {
        let leaf = |mut e: ApiError| {
            e.leaf_error_msg = true;
            e
        };
        let raw = query_param(query, "snowflakeId")
            .map_err(leaf)?
            .ok_or_else(|| {
                leaf(ApiError::bad_request(
                    "missing query parameter snowflakeId, e.g. /decodeSnowflakeId?snowflakeId=1234",
                ))
            })?;
        let id: u64 = raw.trim().parse().map_err(|_| {
            leaf(ApiError::bad_request(format!(
                "snowflakeId {raw:?} is not a decimal ID"
            )))
        })?;
        let parts = self
            .layout
            .decode(id)
            .map_err(|e| leaf(ApiError::bad_request(e.to_string())))?;
        let ms = self.layout.unix_ms(parts.ticks);
        Ok(json(
            StatusCode::OK,
            &serde_json::json!({
                "timestamp": format!("{ms}({})", local_time(ms)),
                "workerId": parts.worker.to_string(),
                "sequenceId": parts.sequence.to_string(),
            }),
        ))
    }

    /// Leaf's `/cache`: every tag, streamed one shard of the tag table at a time (a million
    /// tags do not grow the server), in no particular order, as Leaf's own.
    fn cache(&self, html: bool) -> Result<Response<Body>, ApiError> {
        let segment = self
            .segment
            .clone()
            .ok_or_else(|| ApiError::mode_disabled("segment"))?;
        Ok(listing(html, "Segment cache", &CACHE_COLUMNS, move |out| {
            let mut written = Ok(());
            segment.for_each_view(|v| {
                if written.is_ok() {
                    let e = cache_entry(v);
                    written = out.row(&e, || e.cells());
                }
            });
            Ok(written?)
        }))
    }

    /// Leaf's `/db`: the `leaf_alloc` rows, read and streamed a page at a time (no connection or
    /// transaction is held between pages). A failure before the first page is an error
    /// answer; one after it cuts the answer off, so it never looks complete.
    fn db(&self, html: bool) -> Result<Response<Body>, ApiError> {
        let segment = self
            .segment
            .clone()
            .ok_or_else(|| ApiError::mode_disabled("segment"))?;
        let mut pages = RowPages::new(segment.store(), TagFilter::All);
        let first = pages.next().transpose().map_err(segment_error)?;
        let after = pages.cursor();
        drop(pages);
        Ok(listing(html, "leaf_alloc", &DB_COLUMNS, move |out| {
            let rest = after.map(|a| RowPages::after(segment.store(), TagFilter::All, a));
            for page in first.into_iter().map(Ok).chain(rest.into_iter().flatten()) {
                let page = page.map_err(|e| Broke::Failed(format!("/db broke off: {e}")))?;
                for r in &page {
                    let row = db_row(r);
                    out.row(&row, || row.cells())?;
                }
            }
            Ok(())
        }))
    }

    /// The status page's report, with the page of tags `query` asks for.
    fn status_report(&self, query: &TagQuery) -> super::StatusReport {
        let readiness = self.readiness();
        self.metrics.sampler().report(
            super::status::Inputs {
                started: self.started,
                ready: readiness.ready,
                readiness: readiness.error,
                open_connections: self
                    .open_connections
                    .load(std::sync::atomic::Ordering::Relaxed),
            },
            self.segment.as_deref(),
            self.snowflake.as_deref(),
            query,
        )
    }

    /// Whether every enabled mode can issue now, and what each says (`/readyz`, the status page).
    fn readiness(&self) -> Readiness {
        let mut problems = Vec::new();
        let segment = self.segment.as_ref().map(|s| {
            // Only the tags that need attention are visited, never every tag. A tag whose
            // table went backwards needs an operator now, whatever its buffers hold (said
            // once, not again as a tag that cannot load).
            let refusals = s.guard().refusals();
            let backwards = refusals.iter().map(|r| {
                format!(
                    "tag {:?} went backwards: a claim came back starting at {} below the {} claimed before; move it forward with `leafctl tag bump {} --to {}`",
                    r.tag,
                    r.start,
                    r.mark,
                    crate::segment::tag_for_shell(&r.tag),
                    r.mark
                )
            });
            // Each tag's health as the segment room judges it, for the status page and
            // `/metrics` alike.
            let troubled: Vec<(SegmentBufferView, TagHealth)> = s
                .troubled()
                .into_iter()
                .map(|v| {
                    let health = s.health(&v);
                    (v, health)
                })
                .collect();
            let stuck: Vec<String> = troubled
                .iter()
                .filter(|(v, health)| *health == TagHealth::Failing && v.stuck())
                .map(|(v, _)| {
                    format!(
                        "tag {:?} has no IDs left and cannot load more ({})",
                        v.tag,
                        v.last_error.as_deref().unwrap_or_default()
                    )
                })
                .chain(backwards)
                .collect();
            if stuck.is_empty() {
                // A used-up tag is no outage of the server: said, not counted.
                let used_up: Vec<String> = troubled
                    .iter()
                    .filter(|(_, health)| *health == TagHealth::Exhausted)
                    .map(|(v, _)| format!("{:?}", v.tag))
                    .collect();
                if used_up.is_empty() {
                    "ok".to_string()
                } else {
                    format!("ok (used up, no IDs left: {})", first_few(&used_up))
                }
            } else {
                let m = first_few(&stuck);
                problems.push(format!("segment: {m}"));
                m
            }
        });
        let snowflake = self.snowflake.as_ref().map(|s| {
            let status = s.status();
            // A clock behind the last issued time refuses every request until it catches up.
            let problem = status.problem.or_else(|| {
                s.clock_behind_ms().map(|behind| {
                    format!(
                        "the clock is {behind} ms behind the last time worker id {} issued IDs at; issuing resumes once it passes it",
                        status.worker.unwrap_or_default()
                    )
                })
            });
            match problem {
                None => format!("ok (worker id {})", status.worker.unwrap_or_default()),
                Some(p) => {
                    problems.push(format!("snowflake: {p}"));
                    p
                }
            }
        });
        let ready = problems.is_empty();
        Readiness {
            ready,
            segment,
            snowflake,
            error: (!ready).then(|| problems.join("; ")),
            code: (!ready).then_some("not_ready"),
        }
    }

    /// 200 when every enabled mode can issue now; 503 naming what cannot.
    fn readyz(&self) -> Response<Body> {
        let body = self.readiness();
        let ready = body.ready;
        let mut r = json(
            if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            },
            &body,
        );
        if !ready {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

/// Names at most this many tags in one readiness message; the rest are counted.
const READINESS_TAGS: usize = 10;

/// The first [`READINESS_TAGS`] items joined, and how many more there are.
fn first_few(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(READINESS_TAGS)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > READINESS_TAGS {
        text.push_str(&format!(
            "; and {} more (see the status page or /metrics)",
            items.len() - READINESS_TAGS
        ));
    }
    text
}

/// The status listing a query string asks for: `q`, `page`, `per_page`, `sort`.
fn status_query(query: Option<&str>) -> Result<TagQuery, ApiError> {
    let mut q = TagQuery::default();
    if let Some(search) = query_param(query, "q")? {
        let search = search.trim();
        if search.chars().count() > crate::segment::MAX_TAG_CHARS {
            return Err(ApiError::bad_request(
                "the search is longer than a tag can be (128 characters)",
            ));
        }
        q.search = (!search.is_empty()).then(|| search.to_string());
    }
    let number = |name: &str, raw: String| {
        raw.trim().parse::<usize>().map_err(|_| {
            ApiError::bad_request(format!("{name} must be a whole number, not {raw:?}"))
        })
    };
    if let Some(page) = query_param(query, "page")? {
        q.page = number("page", page)?;
    }
    if let Some(per_page) = query_param(query, "per_page")? {
        q.per_page = number("per_page", per_page)?;
    }
    match query_param(query, "sort")?.as_deref() {
        None | Some("busiest") => {}
        Some("name") => q.sort = TagSort::Name,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "sort must be busiest or name, not {other:?}"
            )));
        }
    }
    q.check().map_err(ApiError::bad_request)?;
    Ok(q)
}

/// Runs work that may block (a database claim, a wait for a segment) off the event loop.
async fn blocking(
    work: impl FnOnce() -> Result<Response<Body>, ApiError> + Send + 'static,
) -> Result<Response<Body>, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the request's worker failed: {e}"),
        ))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn accept_headers_are_read_with_their_q_values() {
        use super::prefers_html;
        assert!(prefers_html("text/html"));
        assert!(prefers_html("text/html,application/xhtml+xml,*/*;q=0.8"));
        assert!(prefers_html("application/json;q=0.5, text/html"));
        assert!(!prefers_html("text/html;q=0.1, application/json"));
        assert!(!prefers_html("application/json, text/html"));
        assert!(prefers_html("text/html, application/json"));
        assert!(!prefers_html("text/html;q=0"));
        assert!(!prefers_html("*/*"));
        assert!(!prefers_html(""));
    }

    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%E6%B5%8B").as_deref(), Some("测"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%ff"), None, "not UTF-8");
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(parse_count(Some("count=1")).unwrap(), Some(1));
        assert_eq!(
            parse_count(Some("x=1&count=100000")).unwrap(),
            Some(100_000)
        );
        assert_eq!(parse_count(None).unwrap(), None);
        for bad in ["count=0", "count=100001", "count=-1", "count=abc", "count="] {
            assert!(parse_count(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            html_escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }
}

/// Parser fuzzing (issue 8): arbitrary paths and query strings never panic, and decoding
/// inverts encoding. `PROPTEST_CASES=100000 cargo test --release --lib fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn encode(s: &str) -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn fuzz_query_and_path_parsing_never_panics(q in any::<String>(), raw in ".{0,40}") {
            let _ = percent_decode(&q);
            let _ = key_of(&q);
            let _ = query_param(Some(&q), "count");
            if let Ok(Some(n)) = parse_count(Some(&q)) {
                prop_assert!((1..=MAX_BATCH).contains(&n));
            }
            let _ = parse_count(Some(&format!("count={raw}")));
            let _ = route_of(&q);
            let _ = html_escape(&q);
        }

        #[test]
        fn fuzz_percent_decoding_inverts_encoding(s in any::<String>()) {
            let encoded = encode(&s);
            let decoded = percent_decode(&encoded).map(|d| d.into_owned());
            prop_assert_eq!(decoded, Some(s.clone()));
            let q = format!("a=1&count={}&b", encode(&s));
            prop_assert_eq!(query_param(Some(&q), "count").ok().flatten(), Some(s));
        }
    }
}
