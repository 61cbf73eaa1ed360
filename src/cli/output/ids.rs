//! Streams of IDs and rows to standard output: one large buffer, written every 64 KiB.

use std::io::{self, Write};

use super::digits::{push_decimal, put_decimal};
use super::format::RowFormat;
use leafctl::idformat::compact::Encoding;

/// How a [`RowWriter`] frames its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One row per line after a header line of tab-separated column names.
    Tsv,
    /// A JSON array: `[`, the rows separated by commas, `]`; `pretty` puts each row on its own
    /// lines (the caller indents the row by two spaces).
    JsonArray {
        /// Line breaks between rows, as `serde_json`'s pretty printer writes them.
        pretty: bool,
    },
    /// One JSON value per line.
    Ndjson,
}

/// Writes a stream of IDs to stdout through one large fixed buffer (no allocation or lock per
/// ID): one per line (`text`), after an `id` header line (`tsv`), as a JSON array of strings
/// (`json`) or one JSON string per line (`ndjson`).
pub struct IdWriter {
    /// Descriptor 1 itself: no line buffer between the IDs and the descriptor, so a failed
    /// write says exactly which IDs went out.
    out: RawStdout,
    /// Held so nothing else writes to stdout meanwhile.
    _lock: io::StdoutLock<'static>,
    /// `FLUSH_AT` bytes plus room for one more line of any kind.
    buf: Box<[u8]>,
    len: usize,
    json: bool,
    /// JSON strings (`json`, `ndjson`) rather than bare digits.
    quoted: bool,
    first: bool,
    /// IDs in the buffer, not yet written.
    pending: u64,
    /// IDs written out whole.
    written: u64,
    /// Lines in the buffer that are not IDs (the TSV header), until it is written.
    header_lines: u64,
    /// Each ID as a compact string (`next --encode`), always a JSON string under JSON.
    encoding: Option<Encoding>,
}

const FLUSH_AT: usize = 1 << 16;
/// Room past `FLUSH_AT`: one fixed-size line copy (`LINE`), or a JSON item (at most 23 bytes).
const SLACK: usize = 64;
/// The fixed size of one line as copied by the counting path (an ID is at most 20 digits).
const LINE: usize = 32;

/// The streaming writer for commands that print many rows (`decode`; `next` has the specialised
/// [`IdWriter`]): rows go into one buffer that is written out every 64 KiB (no allocation, lock
/// or syscall per row), framed as TSV with a header, a JSON array or NDJSON. Memory stays
/// constant whatever the number of rows.
///
/// The header and the opening `[` are written with the first row, so a run that fails before
/// any row prints nothing; [`RowWriter::finish`] closes the array (`[]` when no row came).
pub struct RowWriter<W: Write> {
    out: W,
    /// The current row's bytes go here, between [`RowWriter::begin_row`] and
    /// [`RowWriter::end_row`].
    pub buf: Vec<u8>,
    framing: Framing,
    header: Vec<u8>,
    rows: u64,
}

impl<W: Write> RowWriter<W> {
    /// A writer on `out`; `columns` names the TSV header (unused by other framings).
    pub fn new(out: W, framing: Framing, columns: &[&str]) -> RowWriter<W> {
        let mut header = columns.join("\t").into_bytes();
        header.push(b'\n');
        RowWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            framing,
            header,
            rows: 0,
        }
    }

    /// A line-per-row writer whose first line is `header` (with its line break added).
    pub fn with_header_line(out: W, mut header: Vec<u8>) -> RowWriter<W> {
        header.push(b'\n');
        RowWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            framing: Framing::Tsv,
            header,
            rows: 0,
        }
    }

    /// Starts a row: the header or `[` before the first one, a separator between JSON rows.
    #[inline]
    pub fn begin_row(&mut self) {
        if self.rows == 0 {
            self.open();
        } else if let Framing::JsonArray { pretty } = self.framing {
            self.buf
                .extend_from_slice(if pretty { b",\n" } else { b"," });
        }
        self.rows += 1;
    }

    #[cold]
    fn open(&mut self) {
        match self.framing {
            Framing::Tsv => self.buf.extend_from_slice(&self.header),
            Framing::JsonArray { pretty } => {
                self.buf
                    .extend_from_slice(if pretty { b"[\n" } else { b"[" })
            }
            Framing::Ndjson => {}
        }
    }

    /// Ends a row (a line break unless in a JSON array) and writes the buffer out once full.
    #[inline]
    pub fn end_row(&mut self) -> io::Result<()> {
        if !matches!(self.framing, Framing::JsonArray { .. }) {
            self.buf.push(b'\n');
        }
        if self.buf.len() >= FLUSH_AT {
            self.write_buf()?;
        }
        Ok(())
    }

    fn write_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes out everything buffered, so a reader sees the rows so far (call it before waiting
    /// for more input).
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.write_buf()?;
        }
        self.out.flush()
    }

    /// Closes a JSON array (`[]` when no row came) and flushes; returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        if let Framing::JsonArray { pretty } = self.framing {
            let close: &[u8] = match (self.rows, pretty) {
                (0, _) => b"[]\n",
                (_, true) => b"\n]\n",
                (_, false) => b"]\n",
            };
            self.buf.extend_from_slice(close);
        }
        self.flush()?;
        Ok(self.out)
    }
}

impl IdWriter {
    /// A writer in the given format.
    pub fn new(format: RowFormat) -> IdWriter {
        let json = format == RowFormat::Json;
        let mut lock = io::stdout().lock();
        // Nothing should be pending; if it is, it goes first.
        let _ = lock.flush();
        let mut w = IdWriter {
            out: RawStdout::new(),
            _lock: lock,
            buf: vec![0u8; FLUSH_AT + SLACK].into_boxed_slice(),
            len: 0,
            json,
            quoted: json || format == RowFormat::Ndjson,
            first: true,
            pending: 0,
            written: 0,
            header_lines: 0,
            encoding: None,
        };
        // Written out with the first flush, so a run that fails before any ID prints nothing.
        let opening: &[u8] = match format {
            RowFormat::Json => b"[",
            RowFormat::Tsv => b"id\n",
            RowFormat::Text | RowFormat::Ndjson => b"",
        };
        w.buf[..opening.len()].copy_from_slice(opening);
        w.len = opening.len();
        w.header_lines = u64::from(format == RowFormat::Tsv);
        w
    }

    #[inline]
    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.len >= FLUSH_AT {
            self.write_buffered()?;
        }
        Ok(())
    }

    /// Writes out the buffer; its IDs then count as written (after a failed write, those of
    /// the lines that went out whole).
    fn write_buffered(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let header = std::mem::take(&mut self.header_lines);
        let len = std::mem::take(&mut self.len);
        if let Err((e, lines)) = write_lines(&mut self.out, &self.buf[..len]) {
            self.written += lines.saturating_sub(header).min(pending);
            return Err(e);
        }
        self.written += pending;
        Ok(())
    }

    /// How many IDs were handed to standard output whole (those of a failed write are not).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes each ID as a compact string in `encoding` (`None`: in decimal).
    pub fn encoded(mut self, encoding: Option<Encoding>) -> IdWriter {
        self.encoding = encoding;
        self
    }

    /// Appends one ID as a compact string: a JSON string under JSON, a line otherwise.
    fn push_encoded(&mut self, id: u64, encoding: Encoding) -> io::Result<()> {
        let text = encoding.encode(id);
        let (buf, mut len) = (&mut self.buf, self.len);
        if self.json {
            if !self.first {
                buf[len] = b',';
                len += 1;
            }
            buf[len] = b'"';
            len += 1;
        } else if self.quoted {
            buf[len] = b'"';
            len += 1;
        }
        buf[len..len + text.len()].copy_from_slice(text.as_bytes());
        len += text.len();
        if self.quoted {
            buf[len] = b'"';
            len += 1;
        }
        if !self.json {
            buf[len] = b'\n';
            len += 1;
        }
        self.len = len;
        self.first = false;
        self.pending += 1;
        self.flush_if_full()
    }

    /// Appends one ID.
    #[inline]
    pub fn push(&mut self, id: u64) -> io::Result<()> {
        if let Some(encoding) = self.encoding {
            return self.push_encoded(id, encoding);
        }
        let (buf, mut len) = (&mut self.buf, self.len);
        if self.quoted {
            if self.json && !self.first {
                buf[len] = b',';
                len += 1;
            }
            buf[len] = b'"';
            len += 1;
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'"';
            len += 1;
            if !self.json {
                buf[len] = b'\n';
                len += 1;
            }
        } else {
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'\n';
            len += 1;
        }
        self.len = len;
        self.first = false;
        self.pending += 1;
        self.flush_if_full()
    }

    /// Appends `count` IDs `first, first + stride, ...` (a snowflake block). Consecutive IDs in
    /// text are counted up in place like [`write_range`]: one fixed-size copy per line and a digit
    /// increment, no division per ID.
    pub fn push_block(&mut self, first: u64, stride: u64, count: u64) -> io::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if self.quoted
            || self.encoding.is_some()
            || stride != 1
            || first.checked_add(count - 1).is_none()
        {
            let mut id = first;
            for i in 0..count {
                if i > 0 {
                    id += stride;
                }
                self.push(id)?;
            }
            return Ok(());
        }
        let mut line = [b'\n'; LINE];
        let mut width = put_decimal(&mut line[..20], first);
        line[width] = b'\n';
        let mut remaining = count;
        while remaining > 0 {
            let mut len = self.len;
            let before = remaining;
            while len < FLUSH_AT && remaining > 0 {
                self.buf[len..len + LINE].copy_from_slice(&line);
                len += width + 1;
                remaining -= 1;
                if remaining > 0 {
                    count_up(&mut line, &mut width);
                }
            }
            self.len = len;
            self.pending += before - remaining;
            self.flush_if_full()?;
        }
        self.first = false;
        Ok(())
    }

    /// Appends the consecutive IDs `start..end`, ascending: the digits are counted up in place
    /// instead of formatted per ID, so a long range prints at about the speed of `seq`.
    /// `progress` is told how many IDs went out at each flush.
    pub fn push_range(
        &mut self,
        start: u64,
        end: u64,
        mut progress: impl FnMut(u64),
    ) -> io::Result<()> {
        if start >= end {
            return Ok(());
        }
        if self.quoted || self.encoding.is_some() {
            let mut pending = 0;
            for id in start..end {
                self.push(id)?;
                pending += 1;
                if pending == 1 << 16 {
                    progress(pending);
                    pending = 0;
                }
            }
            progress(pending);
            return Ok(());
        }
        // What is already buffered (a header, earlier IDs) goes first.
        self.write_buffered()?;
        let written = &mut self.written;
        write_range(&mut self.out, start, end, |n| {
            *written += n;
            progress(n);
        })?;
        self.first = false;
        Ok(())
    }

    /// Closes the JSON array and flushes everything.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.json {
            self.buf[self.len..self.len + 2].copy_from_slice(b"]\n");
            self.len += 2;
        }
        self.write_buffered()
    }
}

/// Standard output's descriptor, written without std's line buffer. It is never closed.
struct RawStdout(std::mem::ManuallyDrop<std::fs::File>);

impl RawStdout {
    fn new() -> RawStdout {
        #[cfg(unix)]
        // SAFETY: descriptor 1 stays open for the life of the process (Rust's runtime opens
        // /dev/null there if it was closed at start), and ManuallyDrop never closes it.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(1) };
        RawStdout(std::mem::ManuallyDrop::new(file))
    }
}

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Adds one to the decimal number in `line[..width]` (followed by a newline), growing it by a
/// digit at 99..9.
#[inline]
fn count_up(line: &mut [u8; LINE], width: &mut usize) {
    let mut i = *width - 1;
    loop {
        if line[i] < b'9' {
            line[i] += 1;
            return;
        }
        line[i] = b'0';
        if i == 0 {
            line.copy_within(0..*width, 1);
            line[0] = b'1';
            *width += 1;
            line[*width] = b'\n';
            return;
        }
        i -= 1;
    }
}

/// Writes `start..end` one per line, counting the digits up in place: every ID copies one
/// fixed-size line (a couple of vector moves) and advances by its real length.
pub fn write_range(
    out: &mut impl Write,
    start: u64,
    end: u64,
    mut progress: impl FnMut(u64),
) -> io::Result<()> {
    let mut line = [b'\n'; LINE];
    let mut tmp = Vec::with_capacity(24);
    push_decimal(&mut tmp, start);
    let mut width = tmp.len();
    line[..width].copy_from_slice(&tmp);
    let mut chunk = vec![0u8; FLUSH_AT + LINE];
    let mut remaining = end.saturating_sub(start);
    while remaining > 0 {
        let mut pos = 0;
        let before = remaining;
        while pos + LINE <= chunk.len() && remaining > 0 {
            chunk[pos..pos + LINE].copy_from_slice(&line);
            pos += width + 1;
            remaining -= 1;
            count_up(&mut line, &mut width);
        }
        if let Err((e, lines)) = write_lines(out, &chunk[..pos]) {
            progress(lines);
            return Err(e);
        }
        progress(before - remaining);
    }
    Ok(())
}

/// `write_all` that, when it fails, also says how many whole lines of `buf` went out before
/// the failure: the IDs a failed write still delivered.
fn write_lines(out: &mut impl Write, buf: &[u8]) -> Result<(), (io::Error, u64)> {
    let mut done = 0;
    while done < buf.len() {
        let e = match out.write(&buf[done..]) {
            Ok(0) => io::Error::from(io::ErrorKind::WriteZero),
            Ok(n) => {
                done += n;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => e,
        };
        let lines = buf[..done].iter().filter(|&&b| b == b'\n').count();
        return Err((e, lines as u64));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_count_up_across_digit_boundaries() {
        let top = i64::MAX as u64;
        for (start, end) in [
            (0u64, 1u64),
            (7, 13),
            (95, 1005),
            (999_999, 1_000_002),
            (0, 200_000),
            (top - 2, top + 1),
        ] {
            let mut out = Vec::new();
            let mut seen = 0;
            write_range(&mut out, start, end, |n| seen += n).unwrap();
            let expected: String = (start..end).map(|i| format!("{i}\n")).collect();
            assert!(
                String::from_utf8(out).unwrap() == expected,
                "{start}..{end}"
            );
            assert_eq!(seen, end - start);
        }
        let mut w = IdWriter::new(RowFormat::Json);
        w.push_range(top - 2, top + 1, |_| {}).unwrap();
        assert_eq!(
            String::from_utf8(w.buf[..w.len].to_vec()).unwrap(),
            format!("[\"{}\",\"{}\",\"{}\"", top - 2, top - 1, top)
        );
        w.len = 0;
    }

    #[test]
    fn blocks_print_like_their_ids() {
        let top = i64::MAX as u64;
        let cases: &[(u64, u64, u64)] = &[
            (0, 1, 1),
            (95, 1, 1005),
            (2_124_556_629_465_632_814, 1, 4096),
            (999_999_999_999_999_990, 1, 20),
            (top - 2, 1, 3),
            (u64::MAX - 1, 1, 2),
            (7, 1 << 16, 300),
            (3, 1, 200_000),
        ];
        for &(first, stride, count) in cases {
            for json in [false, true] {
                let mut w = IdWriter::new(if json {
                    RowFormat::Json
                } else {
                    RowFormat::Text
                });
                let mut seen = String::from_utf8(w.buf[..w.len].to_vec()).unwrap();
                w.len = 0;
                // Capture instead of writing to stdout: stay below one flush per step.
                let mut left = count;
                let mut id = first;
                while left > 0 {
                    let n = left.min(1_000);
                    w.push_block(id, stride, n).unwrap();
                    seen.push_str(std::str::from_utf8(&w.buf[..w.len]).unwrap());
                    w.len = 0;
                    id = id.wrapping_add(n * stride);
                    left -= n;
                }
                let ids: Vec<String> = (0..count)
                    .map(|i| (first + i * stride).to_string())
                    .collect();
                let expected = if json {
                    format!("[\"{}\"", ids.join("\",\""))
                } else {
                    ids.iter().map(|i| format!("{i}\n")).collect()
                };
                assert!(seen == expected, "{first} {stride} {count} json={json}");
            }
        }
    }

    #[test]
    fn rows_are_framed_in_every_format() {
        let write = |framing: Framing, rows: &[&str]| {
            let mut w = RowWriter::new(Vec::new(), framing, &["a", "b"]);
            for r in rows {
                w.begin_row();
                w.buf.extend_from_slice(r.as_bytes());
                w.end_row().unwrap();
            }
            String::from_utf8(w.finish().unwrap()).unwrap()
        };
        assert_eq!(write(Framing::Tsv, &["1\tx", "2\ty"]), "a\tb\n1\tx\n2\ty\n");
        assert_eq!(write(Framing::Tsv, &[]), "", "no header without rows");
        assert_eq!(
            write(Framing::JsonArray { pretty: false }, &["1", "2"]),
            "[1,2]\n"
        );
        assert_eq!(
            write(Framing::JsonArray { pretty: true }, &["  1", "  2"]),
            "[\n  1,\n  2\n]\n"
        );
        assert_eq!(write(Framing::JsonArray { pretty: true }, &[]), "[]\n");
        assert_eq!(write(Framing::Ndjson, &["{}", "{}"]), "{}\n{}\n");
    }
}
