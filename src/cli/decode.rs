//! `leafctl decode`: what an ID says, and which IDs a time range holds.

use std::io::{self, BufRead, IsTerminal, Write};

use clap::Args;
use leafctl::snowflake::{Layout, Preset};
use serde::Serialize;

use super::error::{AlreadyReported, EXIT_USAGE, usage};
use super::output::{
    Framing, OutputFormat, Rfc3339Ms, RowFormat, RowWriter, age, print_json, print_text, push_age,
    push_decimal, push_signed, render, rfc3339_ms, table, write_err,
};
use super::time::{parse_instant, parse_instant_end};
use super::{Context, LayoutArgs};

pub const EXAMPLES: &str = "\
Examples:
  leafctl decode 1864829180581093376
  leafctl decode 175928847299117063 --preset discord     an ID from Discord's API docs
  leafctl decode --epoch 2020-01-01T00:00:00Z --layout 41,10,12 123456789012345
  grep -o '[0-9]\\{18,19\\}' app.log | leafctl decode | head       streams; TSV off a terminal
  grep -o '[0-9]\\{18,19\\}' app.log | leafctl decode --output ndjson | jq -c 'select(.worker == 7)'
  leafctl decode --output tsv < ids.txt | cut -f 2                        the times only
  leafctl decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z
      smallest and largest ID of that hour, for WHERE id BETWEEN ... AND ...

Rows are decoded and written as they are read, in constant memory. --output text on a terminal
draws a table of the IDs given as arguments (up to 1000) and shows IDs read from stdin as aligned
rows the moment each is read; off a terminal it writes tab-separated lines with a header, as tsv
always does; json is one array (streamed); ndjson is one object per line.

Values that are not IDs (not a number, negative, over 2^63-1, or a time far in the future,
which usually means the wrong --preset) are reported on stderr with their line number; the
rest are still printed, and the exit code is 2.";

/// IDs decoding to more than this far in the future are taken as a wrong layout.
const FUTURE_SLACK_MS: i64 = 24 * 3600 * 1000;

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// IDs in decimal or 0x hex; none or `-` reads one per line from stdin
    #[arg(
        value_name = "ID",
        conflicts_with = "from",
        allow_negative_numbers = true
    )]
    pub ids: Vec<String>,
    /// Print the ID range from this time (now, Unix ms, RFC 3339 or YYYY-MM-DD)
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,
    /// End of the range, inclusive (default: now)
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// IDs that a terminal gets as a bordered table; from the next one on, tab-separated lines.
const TABLE_MAX_ROWS: usize = 1000;

/// Longest input line kept; an ID is at most 21 characters, so a longer line is reported by its
/// beginning and the rest is skipped (memory stays constant whatever the input).
const MAX_LINE: usize = 256;

/// One decoded ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    id: u64,
    ms: i64,
    worker: u64,
    sequence: u64,
}

/// Parses one ID as typed: decimal or `0x` hex, at most 2^63-1.
#[cfg(test)]
fn parse_id(raw: &str) -> Result<u64, String> {
    parse_id_bytes(raw.trim().as_bytes())
}

/// [`parse_id`] on bytes without surrounding whitespace; plain decimals take a fast path.
#[inline]
fn parse_id_bytes(s: &[u8]) -> Result<u64, String> {
    const OVER: &str = "over 2^63-1, so not a 64-bit ID";
    if !s.is_empty() && s.len() <= 19 && s.iter().all(u8::is_ascii_digit) {
        let v = s
            .iter()
            .fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
        return if v > i64::MAX as u64 {
            Err(OVER.into())
        } else {
            Ok(v)
        };
    }
    let Ok(s) = std::str::from_utf8(s) else {
        return Err("not a number".into());
    };
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with('-') {
        return Err("negative; IDs are never negative".into());
    }
    let value = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u128::from_str_radix(hex, 16).map_err(|_| "not a hex number".to_string())?
    } else {
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err("not a number".into());
        }
        s.parse::<u128>().map_err(|_| OVER.to_string())?
    };
    if value > i64::MAX as u128 {
        return Err(OVER.into());
    }
    Ok(value as u64)
}

fn decode_one(layout: &Layout, label: &str, raw: &[u8], now_ms: i64) -> Result<Row, String> {
    let id = parse_id_bytes(raw)?;
    let parts = layout.decode(id).map_err(|e| e.to_string())?;
    let ms = layout.unix_ms(parts.ticks);
    if ms > now_ms + FUTURE_SLACK_MS {
        return Err(format!(
            "decodes to {} under the {label} layout, which is in the future; is --preset right?",
            rfc3339_ms(ms)
        ));
    }
    Ok(Row {
        id,
        ms,
        worker: parts.worker,
        sequence: parts.sequence,
    })
}

/// How streamed rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Tsv,
    Json,
    Ndjson,
    /// Space-aligned columns under a header line, for a terminal reading a stream: each row
    /// shows as it is decoded (a table would wait for the end of the input).
    Aligned,
}

/// Column widths of [`Style::Aligned`]: an ID has at most 19 digits, a time 24 characters.
const ALIGNED: [usize; 5] = [19, 24, 12, 7, 8];

/// Pads what was pushed to `b` since `from` to `width` characters (left-aligned text), or
/// right-aligns it.
fn pad(b: &mut Vec<u8>, from: usize, width: usize, right: bool) {
    let len = std::str::from_utf8(&b[from..]).map_or(b.len() - from, |t| t.chars().count());
    if len >= width {
        return;
    }
    let spaces = width - len;
    if right {
        b.splice(from..from, std::iter::repeat_n(b' ', spaces));
    } else {
        b.extend(std::iter::repeat_n(b' ', spaces));
    }
}

/// Where decoded rows go: a bounded table for a terminal, or a stream.
enum Sink {
    Table(Vec<Row>),
    Stream(RowWriter<io::StdoutLock<'static>>, Style),
}

/// Writes decoded rows as they come, in constant memory.
struct Printer {
    now_ms: i64,
    columns: [&'static str; 5],
    times: Rfc3339Ms,
    quiet: bool,
    sink: Sink,
}

impl Printer {
    fn new(
        format: RowFormat,
        now_ms: i64,
        sonyflake: bool,
        quiet: bool,
        streaming: bool,
    ) -> Printer {
        let columns = [
            "id",
            "time (UTC)",
            "age",
            if sonyflake { "machine" } else { "worker" },
            "sequence",
        ];
        let stream = |style: Style| {
            let framing = match style {
                Style::Tsv | Style::Aligned => Framing::Tsv,
                Style::Json => Framing::JsonArray { pretty: true },
                Style::Ndjson => Framing::Ndjson,
            };
            Sink::Stream(
                RowWriter::new(io::stdout().lock(), framing, &columns),
                style,
            )
        };
        let sink = match format {
            // Read from a stream at a terminal (`tail -f log | grep | leafctl decode`): rows
            // as they come, aligned; IDs given as arguments: a table.
            RowFormat::Text if io::stdout().is_terminal() && streaming => {
                let mut header = Vec::new();
                for (i, (name, width)) in columns.iter().zip(ALIGNED).enumerate() {
                    if i > 0 {
                        header.extend_from_slice(b"  ");
                    }
                    let from = header.len();
                    header.extend_from_slice(name.as_bytes());
                    pad(&mut header, from, width, i == 0 || i >= 3);
                }
                Sink::Stream(
                    RowWriter::with_header_line(io::stdout().lock(), header),
                    Style::Aligned,
                )
            }
            RowFormat::Text if io::stdout().is_terminal() => Sink::Table(Vec::new()),
            RowFormat::Text | RowFormat::Tsv => stream(Style::Tsv),
            RowFormat::Json => stream(Style::Json),
            RowFormat::Ndjson => stream(Style::Ndjson),
        };
        Printer {
            now_ms,
            columns,
            times: Rfc3339Ms::default(),
            quiet,
            sink,
        }
    }

    #[inline]
    fn push(&mut self, row: Row) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Stream(w, style) => {
                write_row(w, *style, &mut self.times, self.now_ms, row).map_err(write_err)
            }
            Sink::Table(rows) if rows.len() < TABLE_MAX_ROWS => {
                rows.push(row);
                Ok(())
            }
            Sink::Table(_) => {
                self.switch_to_tsv()?;
                self.push(row)
            }
        }
    }

    /// Too many rows for a table: the rows so far and the rest as tab-separated lines.
    #[cold]
    fn switch_to_tsv(&mut self) -> anyhow::Result<()> {
        if !self.quiet {
            eprintln!(
                "note: more than {TABLE_MAX_ROWS} IDs: printing tab-separated lines instead of a table (as --output tsv does)"
            );
        }
        let mut w = RowWriter::new(io::stdout().lock(), Framing::Tsv, &self.columns);
        if let Sink::Table(rows) = &self.sink {
            for row in rows {
                write_row(&mut w, Style::Tsv, &mut self.times, self.now_ms, *row)
                    .map_err(write_err)?;
            }
        }
        self.sink = Sink::Stream(w, Style::Tsv);
        Ok(())
    }

    /// Lets a reader see the rows so far (before waiting for more input).
    fn flush(&mut self) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Stream(w, _) => w.flush().map_err(write_err),
            Sink::Table(_) => Ok(()),
        }
    }

    /// Draws the table, or closes the stream (a JSON array is closed even when every value was
    /// bad).
    fn finish(self) -> anyhow::Result<()> {
        match self.sink {
            Sink::Stream(w, _) => w.finish().map(|_| ()).map_err(write_err),
            Sink::Table(rows) if rows.is_empty() => Ok(()),
            Sink::Table(rows) => {
                let mut t = table(&self.columns);
                for r in &rows {
                    t.add_row(vec![
                        r.id.to_string(),
                        rfc3339_ms(r.ms),
                        age(r.ms, self.now_ms),
                        r.worker.to_string(),
                        r.sequence.to_string(),
                    ]);
                }
                print_text(&render(t))
            }
        }
    }
}

/// One row: TSV columns, a pretty JSON object (as `serde_json` indents it inside an array) or a
/// compact one.
#[inline]
fn write_row(
    w: &mut RowWriter<impl Write>,
    style: Style,
    times: &mut Rfc3339Ms,
    now_ms: i64,
    r: Row,
) -> io::Result<()> {
    w.begin_row();
    let b = &mut w.buf;
    match style {
        Style::Tsv => {
            push_decimal(b, r.id);
            b.push(b'\t');
            times.push(b, r.ms);
            b.push(b'\t');
            push_age(b, r.ms, now_ms);
            b.push(b'\t');
            push_decimal(b, r.worker);
            b.push(b'\t');
            push_decimal(b, r.sequence);
        }
        Style::Json => {
            b.extend_from_slice(b"  {\n    \"id\": \"");
            push_decimal(b, r.id);
            b.extend_from_slice(b"\",\n    \"time\": \"");
            times.push(b, r.ms);
            b.extend_from_slice(b"\",\n    \"timestamp_ms\": ");
            push_signed(b, r.ms);
            b.extend_from_slice(b",\n    \"worker\": ");
            push_decimal(b, r.worker);
            b.extend_from_slice(b",\n    \"sequence\": ");
            push_decimal(b, r.sequence);
            b.extend_from_slice(b"\n  }");
        }
        Style::Aligned => {
            let from = b.len();
            push_decimal(b, r.id);
            pad(b, from, ALIGNED[0], true);
            b.extend_from_slice(b"  ");
            let from = b.len();
            times.push(b, r.ms);
            pad(b, from, ALIGNED[1], false);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_age(b, r.ms, now_ms);
            pad(b, from, ALIGNED[2], false);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_decimal(b, r.worker);
            pad(b, from, ALIGNED[3], true);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_decimal(b, r.sequence);
            pad(b, from, ALIGNED[4], true);
        }
        Style::Ndjson => {
            b.extend_from_slice(b"{\"id\":\"");
            push_decimal(b, r.id);
            b.extend_from_slice(b"\",\"time\":\"");
            times.push(b, r.ms);
            b.extend_from_slice(b"\",\"timestamp_ms\":");
            push_signed(b, r.ms);
            b.extend_from_slice(b",\"worker\":");
            push_decimal(b, r.worker);
            b.extend_from_slice(b",\"sequence\":");
            push_decimal(b, r.sequence);
            b.push(b'}');
        }
    }
    w.end_row()
}

/// Decodes values one by one, counting the bad ones.
struct Decoder<'a> {
    layout: &'a Layout,
    label: &'a str,
    now_ms: i64,
    values: u64,
    bad: u64,
    printer: Printer,
}

impl Decoder<'_> {
    /// One input value (`line`: its line number on stdin); blank values are skipped.
    #[inline]
    fn value(&mut self, raw: &[u8], too_long: bool, line: Option<u64>) -> anyhow::Result<()> {
        let v = raw.trim_ascii();
        // A blank stdin line is skipped; an empty argument is a mistake worth naming (an unset
        // shell variable, say).
        if v.is_empty() && !too_long && line.is_some() {
            return Ok(());
        }
        self.values += 1;
        let decoded = if too_long {
            Err(format!("longer than {MAX_LINE} bytes, so not an ID"))
        } else if v.is_empty() {
            Err("empty value, not an ID".to_string())
        } else {
            decode_one(self.layout, self.label, v, self.now_ms)
        };
        match decoded {
            Ok(row) => self.printer.push(row),
            Err(reason) => {
                self.bad += 1;
                let shown = String::from_utf8_lossy(&v[..v.len().min(64)]);
                let more = if too_long || v.len() > 64 { "..." } else { "" };
                match line {
                    Some(n) => eprintln!("error: line {n}: {shown:?}{more}: {reason}"),
                    None => eprintln!("error: {shown:?}{more}: {reason}"),
                }
                Ok(())
            }
        }
    }
}

/// Calls `on_line(ctx, line, longer_than_kept, line_number)` for every line of `reader` (without
/// its `\n`). Lines are taken straight from the read buffer; only a line split across two reads
/// is copied (at most [`MAX_LINE`] bytes of it). `on_wait` runs before any read that may wait, so
/// what has been decoded so far can be flushed while the input is slow.
fn for_each_line<C>(
    reader: impl io::Read,
    ctx: &mut C,
    mut on_wait: impl FnMut(&mut C) -> anyhow::Result<()>,
    mut on_line: impl FnMut(&mut C, &[u8], bool, u64) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = io::BufReader::with_capacity(1 << 16, reader);
    let mut partial: Vec<u8> = Vec::with_capacity(MAX_LINE);
    let mut partial_long = false;
    let keep = |partial: &mut Vec<u8>, long: &mut bool, bytes: &[u8]| {
        let room = MAX_LINE - partial.len();
        if bytes.len() > room {
            *long = true;
        }
        partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
    };
    let mut n = 0u64;
    loop {
        if reader.buffer().is_empty() {
            on_wait(ctx)?;
        }
        let avail = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow::Error::new(e).context("cannot read standard input")),
        };
        if avail.is_empty() {
            if !partial.is_empty() || partial_long {
                n += 1;
                on_line(ctx, &partial, partial_long, n)?;
            }
            return Ok(());
        }
        let mut rest = avail;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            n += 1;
            if partial.is_empty() && !partial_long {
                on_line(ctx, &rest[..i], false, n)?;
            } else {
                keep(&mut partial, &mut partial_long, &rest[..i]);
                on_line(ctx, &partial, partial_long, n)?;
                partial.clear();
                partial_long = false;
            }
            rest = &rest[i + 1..];
        }
        keep(&mut partial, &mut partial_long, rest);
        let used = avail.len();
        reader.consume(used);
    }
}

/// Decodes stdin line by line, flushing while it waits for input.
fn decode_stdin(d: &mut Decoder) -> anyhow::Result<()> {
    for_each_line(
        io::stdin().lock(),
        d,
        |d| d.printer.flush(),
        |d, line, long, n| d.value(line, long, Some(n)),
    )
}

pub fn run(ctx: &Context, args: DecodeArgs) -> anyhow::Result<()> {
    let choice = &ctx.settings.layout.value;
    if let Some(from) = &args.from {
        return range(ctx, &choice.layout, from, args.to.as_deref());
    }
    let now = chrono::Utc::now().timestamp_millis();
    let sonyflake = choice.label == Preset::Sonyflake.name();
    let mut d = Decoder {
        layout: &choice.layout,
        label: &choice.label,
        now_ms: now,
        values: 0,
        bad: 0,
        printer: Printer::new(
            ctx.rows,
            now,
            sonyflake,
            ctx.quiet,
            args.ids.is_empty() || args.ids == ["-"],
        ),
    };
    if args.ids.is_empty() || args.ids == ["-"] {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) && !ctx.quiet {
            eprintln!("leafctl decode: reading IDs from stdin, one per line (Ctrl-D to end)");
        }
        decode_stdin(&mut d)?;
    } else {
        for raw in &args.ids {
            d.value(raw.as_bytes(), false, None)?;
        }
    }
    // No input at all (an empty file, a filter that matched nothing) is an empty answer: `[]`
    // in JSON, nothing in the other formats.
    let (values, bad) = (d.values, d.bad);
    d.printer.finish()?;
    if bad > 0 {
        eprintln!(
            "  hint: {bad} of {values} values are not IDs of the {} layout",
            choice.label
        );
        return Err(AlreadyReported(EXIT_USAGE).into());
    }
    Ok(())
}

#[derive(Debug, Serialize)]
struct Range {
    from: String,
    to: String,
    min_id: String,
    max_id: String,
}

fn range(ctx: &Context, layout: &Layout, from: &str, to: Option<&str>) -> anyhow::Result<()> {
    let parse = |flag: &str, s: &str, read: fn(&str) -> Result<i64, String>| {
        read(s).map_err(|e| {
            usage(
                format!("invalid {flag} {s:?}: {e}"),
                "for example --from 2026-11-21T10:00:00Z",
            )
        })
    };
    let from_ms = parse("--from", from, parse_instant)?;
    let now = chrono::Utc::now().timestamp_millis();
    let to_ms = match to {
        // A date as --to covers that whole day.
        Some(t) => parse("--to", t, parse_instant_end)?,
        None if from_ms > now => {
            return Err(usage(
                format!("--from {from} is in the future"),
                "give a past --from, or a --to after it for IDs that will be issued",
            ));
        }
        None => now,
    };
    if to_ms < from_ms {
        return Err(usage("--to is before --from", "swap the two times"));
    }
    let (lo, hi) = layout.id_range(from_ms, to_ms).map_err(|e| {
        usage(
            e.to_string(),
            "the range must lie inside the layout's time span; check --preset",
        )
    })?;
    let r = Range {
        from: rfc3339_ms(from_ms.max(layout.epoch_ms())),
        to: rfc3339_ms(to_ms),
        min_id: lo.to_string(),
        max_id: hi.to_string(),
    };
    match (ctx.rows, ctx.output) {
        (RowFormat::Tsv, _) => {
            let mut w = RowWriter::new(
                io::stdout().lock(),
                Framing::Tsv,
                &["from", "to", "min_id", "max_id"],
            );
            w.begin_row();
            w.buf
                .extend_from_slice([r.from, r.to, r.min_id, r.max_id].join("\t").as_bytes());
            w.end_row().map_err(write_err)?;
            w.finish().map(|_| ()).map_err(write_err)
        }
        (RowFormat::Ndjson, _) => {
            let mut line = serde_json::to_string(&r)?;
            line.push('\n');
            let mut out = io::stdout().lock();
            out.write_all(line.as_bytes()).map_err(write_err)?;
            out.flush().map_err(write_err)
        }
        (_, OutputFormat::Json) => print_json(&r),
        (_, OutputFormat::Text) => print_text(&format!(
            "from    {}\nto      {}\nmin_id  {}\nmax_id  {}\nSQL:    WHERE id BETWEEN {} AND {}",
            r.from, r.to, r.min_id, r.max_id, r.min_id, r.max_id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_in_decimal_and_hex() {
        assert_eq!(parse_id("42"), Ok(42));
        assert_eq!(parse_id(" 0x2a "), Ok(42));
        assert_eq!(parse_id("9223372036854775807"), Ok(i64::MAX as u64));
        assert!(
            parse_id("9223372036854775808")
                .unwrap_err()
                .contains("2^63-1")
        );
        assert!(parse_id("-1").unwrap_err().contains("negative"));
        assert!(parse_id("12a").unwrap_err().contains("not a number"));
        assert!(parse_id("0xzz").is_err());
        assert!(parse_id("99999999999999999999999999999999999999999").is_err());
    }

    /// Every line `for_each_line` gives for `input`: (bytes, longer than kept).
    pub(super) fn lines_of(input: &[u8]) -> Vec<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        // Reads of a few bytes at a time, so lines are split across reads.
        let reader = io::Read::chain(&input[..input.len() / 3], &input[input.len() / 3..]);
        for_each_line(
            io::BufReader::with_capacity(7, reader),
            &mut out,
            |_| Ok(()),
            |out, line, long, n| {
                assert_eq!(n as usize, out.len() + 1, "numbered in order");
                out.push((line.to_vec(), long));
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn stdin_lines_that_are_not_utf8_are_values_not_a_failure() {
        let lines: Vec<Vec<u8>> = lines_of(b"1\n\xff\xfe\n\n  \r\n2\r\n3")
            .into_iter()
            .map(|(l, _)| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(parse_id_bytes(&lines[0]), Ok(1));
        assert!(
            parse_id_bytes(&lines[1])
                .unwrap_err()
                .contains("not a number")
        );
        assert_eq!(parse_id_bytes(&lines[2]), Ok(2));
        assert_eq!(parse_id_bytes(&lines[3]), Ok(3));
    }

    #[test]
    fn lines_split_across_reads_and_long_lines_are_kept_whole_or_cut() {
        let long = vec![b'7'; MAX_LINE + 100];
        let mut input = b"123456789012345678\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\n42");
        let lines = lines_of(&input);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], (b"123456789012345678".to_vec(), false));
        assert_eq!((lines[1].0.len(), lines[1].1), (MAX_LINE, true));
        assert_eq!(lines[2], (b"42".to_vec(), false));
    }
}

/// Parser fuzzing (issue 8): arbitrary input never panics, and every ID reads back as itself.
/// `PROPTEST_CASES=100000 cargo test --release --bin leafctl fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_arbitrary_text_never_panics(raw in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Ok(id) = parse_id(&raw) {
                prop_assert!(id <= i64::MAX as u64);
            }
            for preset in [Preset::Leaf, Preset::Sonyflake, Preset::Baidu] {
                let _ = decode_one(&preset.layout(), preset.name(), raw.as_bytes(), 1_800_000_000_000);
                // Stdin lines are bytes: anything, valid UTF-8 or not.
                let _ = decode_one(&preset.layout(), preset.name(), &bytes, 1_800_000_000_000);
            }
            let lines = tests::lines_of(&bytes);
            prop_assert!(lines.len() <= bytes.iter().filter(|&&b| b == b'\n').count() + 1);
            for (line, _) in &lines {
                prop_assert!(line.len() <= MAX_LINE);
                let _ = parse_id_bytes(line.trim_ascii());
            }
        }

        #[test]
        fn fuzz_ids_read_back_in_decimal_and_hex(id in any::<u64>(), pad in "[ \t]{0,3}") {
            let dec = parse_id(&format!("{pad}{id}{pad}"));
            let hex = parse_id(&format!("{pad}0x{id:x}{pad}"));
            let upper = parse_id(&format!("0X{id:X}"));
            if id <= i64::MAX as u64 {
                prop_assert_eq!(dec, Ok(id));
                prop_assert_eq!(hex, Ok(id));
                prop_assert_eq!(upper, Ok(id));
            } else {
                prop_assert!(dec.unwrap_err().contains("2^63-1"));
                prop_assert!(hex.is_err() && upper.is_err());
            }
            let negative = parse_id(&format!("-{id}")).unwrap_err();
            prop_assert!(negative.contains("negative"), "{}", negative);
        }
    }
}
