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
/// large fixed buffer (no allocation or lock per ID).
pub struct IdWriter {
    out: io::StdoutLock<'static>,
    /// `FLUSH_AT` bytes plus room for one more line of any kind.
    buf: Box<[u8]>,
    len: usize,
    json: bool,
    first: bool,
}

const FLUSH_AT: usize = 1 << 16;
/// Room past `FLUSH_AT`: one fixed-size line copy (`LINE`), or a JSON item (at most 23 bytes).
const SLACK: usize = 64;
/// The fixed size of one line as copied by the counting path (an ID is at most 20 digits).
const LINE: usize = 32;

impl IdWriter {
    /// A writer in the given format.
    pub fn new(format: OutputFormat) -> IdWriter {
        let json = format == OutputFormat::Json;
        let mut w = IdWriter {
            out: io::stdout().lock(),
            buf: vec![0u8; FLUSH_AT + SLACK].into_boxed_slice(),
            len: 0,
            json,
            first: true,
        };
        if json {
            w.buf[0] = b'[';
            w.len = 1;
        }
        w
    }

    #[inline]
    fn flush_if_full(&mut self) -> anyhow::Result<()> {
        if self.len >= FLUSH_AT {
            self.out
                .write_all(&self.buf[..self.len])
                .map_err(write_err)?;
            self.len = 0;
        }
        Ok(())
    }

    /// Appends one ID.
    #[inline]
    pub fn push(&mut self, id: u64) -> anyhow::Result<()> {
        let (buf, mut len) = (&mut self.buf, self.len);
        if self.json {
            if !self.first {
                buf[len] = b',';
                len += 1;
            }
            buf[len] = b'"';
            len += 1;
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'"';
            len += 1;
        } else {
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'\n';
            len += 1;
        }
        self.len = len;
        self.first = false;
        self.flush_if_full()
    }

    /// Appends `count` IDs `first, first + stride, ...` (a snowflake block). Consecutive IDs in
    /// text are counted up in place like [`write_range`]: one fixed-size copy per line and a digit
    /// increment, no division per ID.
    pub fn push_block(&mut self, first: u64, stride: u64, count: u64) -> anyhow::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if self.json || stride != 1 || first.checked_add(count - 1).is_none() {
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
            while len < FLUSH_AT && remaining > 0 {
                self.buf[len..len + LINE].copy_from_slice(&line);
                len += width + 1;
                remaining -= 1;
                if remaining > 0 {
                    count_up(&mut line, &mut width);
                }
            }
            self.len = len;
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
        self.out
            .write_all(&self.buf[..self.len])
            .map_err(write_err)?;
        self.len = 0;
        write_range(&mut self.out, start, end, progress).map_err(write_err)?;
        self.first = false;
        Ok(())
    }

    /// Closes the JSON array and flushes everything.
    pub fn finish(mut self) -> anyhow::Result<()> {
        if self.json {
            self.buf[self.len..self.len + 2].copy_from_slice(b"]\n");
            self.len += 2;
        }
        self.out
            .write_all(&self.buf[..self.len])
            .map_err(write_err)?;
        self.out.flush().map_err(write_err)
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
        out.write_all(&chunk[..pos])?;
        progress(before - remaining);
    }
    Ok(())
}

/// Appends the decimal digits of `n`.
#[inline]
pub fn push_decimal(buf: &mut Vec<u8>, n: u64) {
    let mut tmp = [0u8; 20];
    let len = put_decimal(&mut tmp, n);
    buf.extend_from_slice(&tmp[..len]);
}

/// Writes the decimal digits of `n` at the start of `out` (at least 20 bytes) and returns how
/// many there are.
#[inline]
pub fn put_decimal(out: &mut [u8], mut n: u64) -> usize {
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
    let len = tmp.len() - i;
    out[..len].copy_from_slice(&tmp[i..]);
    len
}

/// A progress bar on stderr, shown only when stderr is a terminal, the run is long, and not `-q`.
pub fn progress(total: u64, quiet: bool) -> ProgressBar {
    const LONG_RUN: u64 = 1_000_000;
    if quiet || total < LONG_RUN || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = progress_style() {
        bar.set_style(style);
    }
    bar
}

/// The style of every progress bar: `7,498,744/30,000,000 IDs (3.77 M IDs/s, eta 6s)`.
fn progress_style() -> Result<ProgressStyle, indicatif::style::TemplateError> {
    Ok(ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:40} {human_pos}/{human_len} IDs ({rate}, eta {eta})",
    )?
    .with_key(
        "rate",
        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&human_rate(state.per_sec()));
        },
    ))
}

/// A rate the way people read it: three significant digits and a unit prefix
/// (`512 IDs/s`, `12.3 k IDs/s`, `3.77 M IDs/s`); `- IDs/s` before there is a rate.
pub fn human_rate(per_sec: f64) -> String {
    const PREFIX: [&str; 5] = ["", " k", " M", " G", " T"];
    if !per_sec.is_finite() || per_sec < 0.0 {
        return "- IDs/s".into();
    }
    let (mut v, mut i) = (per_sec, 0);
    // 999.5 and up would round to 1000: show it with the next prefix instead.
    while v >= 999.5 && i < PREFIX.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        return format!("{v:.0} IDs/s");
    }
    let decimals = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:.decimals$}{} IDs/s", PREFIX[i])
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
                    OutputFormat::Json
                } else {
                    OutputFormat::Text
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
    fn rates_read_as_people_say_them() {
        assert_eq!(human_rate(3_766_305.4515), "3.77 M IDs/s");
        assert_eq!(human_rate(0.0), "0 IDs/s");
        assert_eq!(human_rate(0.4), "0 IDs/s");
        assert_eq!(human_rate(512.3), "512 IDs/s");
        assert_eq!(human_rate(999.4), "999 IDs/s");
        assert_eq!(human_rate(999.6), "1.00 k IDs/s");
        assert_eq!(human_rate(12_345.0), "12.3 k IDs/s");
        assert_eq!(human_rate(99_960.0), "100 k IDs/s");
        assert_eq!(human_rate(999_600.0), "1.00 M IDs/s");
        assert_eq!(human_rate(37_700_000.0), "37.7 M IDs/s");
        assert_eq!(human_rate(377_000_000.0), "377 M IDs/s");
        assert_eq!(human_rate(1.5e9), "1.50 G IDs/s");
        assert_eq!(human_rate(2.0e18), "2000000 T IDs/s");
        assert_eq!(human_rate(f64::INFINITY), "- IDs/s");
        assert_eq!(human_rate(f64::NAN), "- IDs/s");
        assert_eq!(human_rate(-1.0), "- IDs/s");
    }

    #[test]
    fn the_progress_template_is_valid() {
        assert!(progress_style().is_ok());
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(0, 5_000), "5s ago");
        assert_eq!(age(0, 3_600_000 * 26), "1d 2h ago");
        assert_eq!(age(10_000, 0), "in 10s");
        assert_eq!(rfc3339_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
    }
}
