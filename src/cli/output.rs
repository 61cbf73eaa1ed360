//! Writing results: fast buffered ID lists, JSON, tables, progress bars.

use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::error::ClosedPipe;

/// `--output`: human text or JSON for scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// Tables and plain lines for people (IDs: one per line).
    #[default]
    Text,
    /// JSON; every 64-bit ID is a decimal string.
    Json,
}

/// Maps a write error to [`ClosedPipe`] when the reader went away, so the run ends quietly.
pub fn write_err(e: io::Error) -> anyhow::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ClosedPipe.into()
    } else {
        anyhow::Error::new(e).context("cannot write to standard output")
    }
}

/// Writes a stream of IDs to stdout, one per line or as a JSON array of strings, through one
/// large buffer (no allocation or lock per ID).
pub struct IdWriter {
    out: io::StdoutLock<'static>,
    buf: Vec<u8>,
    json: bool,
    first: bool,
}

const FLUSH_AT: usize = 1 << 16;

impl IdWriter {
    /// A writer in the given format.
    pub fn new(format: OutputFormat) -> IdWriter {
        let json = format == OutputFormat::Json;
        let mut buf = Vec::with_capacity(FLUSH_AT + 64);
        if json {
            buf.push(b'[');
        }
        IdWriter {
            out: io::stdout().lock(),
            buf,
            json,
            first: true,
        }
    }

    /// Appends one ID.
    #[inline]
    pub fn push(&mut self, id: u64) -> anyhow::Result<()> {
        if self.json {
            if !self.first {
                self.buf.push(b',');
            }
            self.buf.push(b'"');
            push_decimal(&mut self.buf, id);
            self.buf.push(b'"');
        } else {
            push_decimal(&mut self.buf, id);
            self.buf.push(b'\n');
        }
        self.first = false;
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf).map_err(write_err)?;
            self.buf.clear();
        }
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
    ) -> anyhow::Result<()> {
        if start >= end {
            return Ok(());
        }
        if self.json {
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
        // What is already buffered goes first.
        self.out.write_all(&self.buf).map_err(write_err)?;
        self.buf.clear();
        write_range(&mut self.out, start, end, progress).map_err(write_err)?;
        self.first = false;
        Ok(())
    }

    /// Closes the JSON array and flushes everything.
    pub fn finish(mut self) -> anyhow::Result<()> {
        if self.json {
            self.buf.extend_from_slice(b"]\n");
        }
        self.out.write_all(&self.buf).map_err(write_err)?;
        self.out.flush().map_err(write_err)
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
    const LINE: usize = 32;
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
            let mut i = width - 1;
            loop {
                if line[i] < b'9' {
                    line[i] += 1;
                    break;
                }
                line[i] = b'0';
                if i == 0 {
                    // 99..9 + 1: one digit more.
                    line.copy_within(0..width, 1);
                    line[0] = b'1';
                    width += 1;
                    line[width] = b'\n';
                    break;
                }
                i -= 1;
            }
        }
        out.write_all(&chunk[..pos])?;
        progress(before - remaining);
    }
    Ok(())
}

/// Appends the decimal digits of `n`.
#[inline]
pub fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// A progress bar on stderr, shown only when stderr is a terminal, the run is long, and not `-q`.
pub fn progress(total: u64, quiet: bool) -> ProgressBar {
    const LONG_RUN: u64 = 1_000_000;
    if quiet || total < LONG_RUN || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:40} {human_pos}/{human_len} IDs ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Prints a serialisable value as pretty JSON with a trailing newline.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n").map_err(write_err)?;
    out.flush().map_err(write_err)
}

/// Prints text to stdout, ending quietly on a closed pipe.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(write_err)?;
    if !text.ends_with('\n') {
        out.write_all(b"\n").map_err(write_err)?;
    }
    out.flush().map_err(write_err)
}

/// A table in leafctl's house style.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_header(header.iter().copied());
    t
}

/// Formats Unix ms as RFC 3339 UTC with milliseconds and `Z`.
pub fn rfc3339_ms(unix_ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(unix_ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("{unix_ms} ms"),
    }
}

/// A short human age: `3d 4h ago`, `12s ago`, `in 5m`.
pub fn age(unix_ms: i64, now_ms: i64) -> String {
    let diff = now_ms.saturating_sub(unix_ms);
    let (secs, future) = ((diff / 1000).unsigned_abs(), diff < 0);
    let text = if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m {}s", secs / 60, secs % 60)
    } else if secs < 86_400 {
        format!("{}h {}m", secs / 3600, (secs % 3600) / 60)
    } else if secs < 86_400 * 365 {
        format!("{}d {}h", secs / 86_400, (secs % 86_400) / 3600)
    } else {
        format!(
            "{}y {}d",
            secs / (86_400 * 365),
            (secs % (86_400 * 365)) / 86_400
        )
    };
    if future {
        format!("in {text}")
    } else {
        format!("{text} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_std() {
        for n in [0, 1, 9, 10, 99, 12345, u64::MAX, i64::MAX as u64] {
            let mut b = Vec::new();
            push_decimal(&mut b, n);
            assert_eq!(String::from_utf8(b).unwrap(), n.to_string());
        }
    }

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
        let mut w = IdWriter::new(OutputFormat::Json);
        w.push_range(top - 2, top + 1, |_| {}).unwrap();
        assert_eq!(
            String::from_utf8(w.buf.clone()).unwrap(),
            format!("[\"{}\",\"{}\",\"{}\"", top - 2, top - 1, top)
        );
        w.buf.clear();
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(0, 5_000), "5s ago");
        assert_eq!(age(0, 3_600_000 * 26), "1d 2h ago");
        assert_eq!(age(10_000, 0), "in 10s");
        assert_eq!(rfc3339_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
    }
}
