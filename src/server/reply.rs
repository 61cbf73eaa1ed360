//! The responses every answer is built from: their content types, one ID, lines of IDs, JSON,
//! and the two fixed pages (`/healthz`, the status page for a browser).

use crate::idformat::compact::Encoding;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::body::Body;

/// IDs, `/healthz`.
pub(super) const TEXT: &str = "text/plain;charset=UTF-8";
/// Everything else the API answers, errors included.
pub(super) const JSON: &str = "application/json";
/// `/cache` and `/db` for a browser.
pub(super) const HTML: &str = "text/html;charset=UTF-8";

/// A response of `status` with `body` as `content_type`.
pub(super) fn respond_with(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response<Body> {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// The answer of a get route without `?count`: the ID's digits, kept inline (no allocation).
pub(super) fn one_id(id: u64) -> Response<Body> {
    let mut r = Response::new(Body::id(id));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT));
    r
}

/// The answer of a get route with `?count=N`: the `count` IDs of `ids`, one a line.
pub(super) fn id_lines(count: u64, ids: impl IntoIterator<Item = u64>) -> Response<Body> {
    let mut body = Vec::with_capacity(count as usize * 20);
    let mut buf = itoa::Buffer::new();
    for id in ids {
        body.extend_from_slice(buf.format(id).as_bytes());
        body.push(b'\n');
    }
    respond_with(StatusCode::OK, TEXT, body)
}

/// The answer of a get route: its IDs as numbers ([`one_id`], [`id_lines`]), or with
/// `?encode=` as compact strings, one a line.
pub(super) fn ids_answer(
    count: u64,
    ids: impl IntoIterator<Item = u64>,
    encode: Option<Encoding>,
) -> Response<Body> {
    let Some(encoding) = encode else {
        return id_lines(count, ids);
    };
    let mut body = Vec::with_capacity(count as usize * 15);
    for id in ids {
        body.extend_from_slice(encoding.encode(id).as_bytes());
        body.push(b'\n');
    }
    respond_with(StatusCode::OK, TEXT, body)
}

/// `value` as a JSON answer.
pub(super) fn json<T: Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    respond_with(status, JSON, serde_json::to_vec(value).unwrap_or_default())
}

/// `/healthz`: the process answers.
pub(super) fn healthz() -> Response<Body> {
    respond_with(StatusCode::OK, TEXT, b"ok\n".to_vec())
}

/// `/` for a browser: the status page, which fetches its figures as JSON.
pub(super) fn status_page() -> Response<Body> {
    respond_with(
        StatusCode::OK,
        "text/html; charset=utf-8",
        super::status::PAGE.as_bytes().to_vec(),
    )
}
