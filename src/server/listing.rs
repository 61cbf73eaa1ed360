//! The streamed listing `/cache` and `/db` answer with: a JSON array of objects or, for a
//! browser, an HTML table of the same fields, written on a blocking thread while the client
//! reads.

use std::io::Write;

use hyper::Response;
use hyper::header::{self, HeaderValue};
use serde::Serialize;

use super::body::{Body, StreamWriter};
use super::reply::{HTML, JSON};

/// `s` as HTML text: safe inside an element and a quoted attribute.
pub(super) fn html_escape(s: &str) -> String {
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

/// What ends an HTML listing: its table and page.
const HTML_END: &str = "</table>\n</body></html>\n";

/// A listing streamed as a JSON array of objects or, for a browser, an HTML table of the same
/// fields: the framing `/cache` and `/db` share.
pub(super) struct Listing {
    out: StreamWriter,
    html: bool,
    rows: u64,
}

/// Why a listing ended early.
pub(super) enum Broke {
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
    pub(super) fn row<const N: usize>(
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
pub(super) fn listing(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            html_escape("<a href='x'>&"),
            "&lt;a href=&#39;x&#39;&gt;&amp;"
        );
    }
}
