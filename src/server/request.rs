//! What a request asks for: its key, `?count`, query parameters, and whether it prefers HTML
//! to JSON (`Accept` negotiation).

use crate::idformat::compact::Encoding;
use std::borrow::Cow;

use hyper::Request;
use hyper::header;

use super::MAX_BATCH;
use super::error::ApiError;
use super::route::Route;
use super::status::{TagQuery, TagSort};

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
pub(super) fn query_param(query: Option<&str>, name: &str) -> Result<Option<String>, ApiError> {
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

/// `?encode=base36|crockford` of a get route (issue 48): the IDs as compact strings with a check
/// character, leafctl's own parameter (Leaf's routes answer numbers without it); `None` without.
pub(super) fn parse_encode(query: Option<&str>) -> Result<Option<Encoding>, ApiError> {
    match query_param(query, "encode")? {
        None => Ok(None),
        Some(name) => name.parse().map(Some).map_err(ApiError::bad_request),
    }
}

/// `?count=N` of a get route, checked to be from 1 to [`MAX_BATCH`]; `None` without one.
pub(super) fn parse_count(query: Option<&str>) -> Result<Option<u64>, ApiError> {
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
pub(super) fn key_of(raw: &str) -> Result<Cow<'_, str>, ApiError> {
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

/// Whether the status route is asked for its JSON rather than the page: `/?format=json`, or an
/// `Accept` header that prefers JSON to HTML.
pub(super) fn wants_status_json<B>(req: &Request<B>) -> bool {
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

/// Whether the client prefers HTML (a browser) to JSON (`/cache`, `/db`).
pub(super) fn wants_html<B>(req: &Request<B>) -> bool {
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

/// The status listing a query string asks for: `q`, `page`, `per_page`, `sort`.
pub(super) fn status_query(query: Option<&str>) -> Result<TagQuery, ApiError> {
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
}

/// Parser fuzzing (issue 8): arbitrary paths and query strings never panic, and decoding
/// inverts encoding. `PROPTEST_CASES=100000 cargo test --release --lib fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::super::listing::html_escape;
    use super::super::route::route_of;
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
