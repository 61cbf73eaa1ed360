//! `leafctl decode`: what an ID says, which layout an unknown number has, where IDs sit in log
//! text, and which IDs a time range or the moments around one ID hold. The formats and the rules
//! are the library's (`leafctl::idformat`); this module parses flags and prints.

mod around;
mod guess;
mod scan;

use std::io::{self, BufRead, IsTerminal, Write};

use clap::Args;
use leafctl::config::Origin;
use leafctl::idformat::{Decoded, GuessOptions, NamedLayout, Reading, decode_value, local_workers};
use leafctl::snowflake::Layout;
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
  leafctl decode 017f22e2-79b0-7cc3-98c4-dc0c0c07398f    UUIDv7, ULID, KSUID, ObjectId: by shape
  leafctl decode --guess 175928847299117063              every layout ranked by plausibility
  leafctl decode --scan app.log | head                   each line, its IDs annotated
  leafctl decode --scan --output ndjson app.log | jq -c 'select(.worker == 7)'
  leafctl decode --around 1864829180581093376 --window 10m
      the same worker's IDs 10 minutes either side, for WHERE id BETWEEN ...
  leafctl decode --epoch 2020-01-01T00:00:00Z --layout 41,10,12 123456789012345
  grep -o '[0-9]\\{18,19\\}' app.log | leafctl decode | head       streams; TSV off a terminal
  leafctl decode --output tsv < ids.txt | tail -n +2 | cut -f 2           the times only (no header)
  leafctl decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z
      smallest and largest ID of that hour, for WHERE id BETWEEN ... AND ...

Numbers are read under --preset or the custom layout (default leaf); UUIDs (versions 1, 6, 7),
ULIDs, KSUIDs and ObjectIds by their shape. With no layout configured, a number whose time under
leaf is in the future is read under the most plausible other layout, with a note on stderr.

Rows are decoded and written as they are read, in constant memory. --output text on a terminal
draws a table of the IDs given as arguments (up to 1000) and shows IDs read from stdin as aligned
rows the moment each is read; off a terminal it writes tab-separated lines with a header, as tsv
always does; json is one array (streamed); ndjson is one object per line.

--scan reads files (or stdin) of any text and prints every line with each ID's time and worker
beside it (coloured on a terminal unless NO_COLOR is set); with --output tsv, json or ndjson it
prints one record per ID with its file, line and column instead. It looks for IDs made in the last
ten years: numbers of the layout's length, UUIDs, ULIDs, KSUIDs and ObjectIds.

Values that are not IDs (not a number or ID of a known shape, negative, over 2^63-1, a UUID
version without time, or a time in the future, which usually means the wrong --preset) are
reported on stderr with their line number; the rest are still printed, and the exit code is 2.";

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// IDs (a number in decimal or 0x hex, a UUID, ULID, KSUID or ObjectId); none or `-` reads
    /// one per line from stdin. With --scan: files to read (none or `-`: stdin)
    #[arg(
        value_name = "ID",
        conflicts_with_all = ["from", "around"],
        allow_negative_numbers = true
    )]
    pub ids: Vec<String>,
    /// Rank every known layout by how plausible it makes each ID (time after the layout's epoch
    /// and not in the future, recent, the configured layout, a worker id this host issued with);
    /// exit 2 when none is plausible
    #[arg(long, conflicts_with_all = ["from", "scan", "around"])]
    pub guess: bool,
    /// Find IDs in any text (logs, JSON lines, CSV) from files or stdin and print each line
    /// with their times and workers beside them, or one record per ID with --output tsv|json|ndjson
    #[arg(long, conflicts_with_all = ["from", "around"])]
    pub scan: bool,
    /// Print the range of IDs the same worker made within --window of this ID's time, for
    /// WHERE id BETWEEN ... during an incident
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub around: Option<String>,
    /// With --around: how far either side of the ID's time (500ms, 30s, 10m, 2h, 1d; a bare
    /// number is ms) [default: 5m]
    #[arg(long, value_name = "DURATION", requires = "around", value_parser = parse_window)]
    pub window: Option<i64>,
    /// With --scan: find IDs made from this time on (now, Unix ms, RFC 3339 or YYYY-MM-DD)
    /// [default: ten years ago]
    #[arg(long, value_name = "TIME", requires = "scan")]
    pub since: Option<String>,
    /// With --scan: find IDs made up to this time (a date: its whole day) [default: a day from
    /// now]
    #[arg(long, value_name = "TIME", requires = "scan")]
    pub until: Option<String>,
    /// Print the ID range from this time (now, Unix ms, RFC 3339 or YYYY-MM-DD)
    #[arg(long, value_name = "TIME", conflicts_with = "around")]
    pub from: Option<String>,
    /// End of the range, inclusive (default: now)
    #[arg(long, value_name = "TIME", requires = "from")]
    pub to: Option<String>,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

/// `--around`'s window when --window is not given: 5 minutes either side.
const DEFAULT_WINDOW_MS: i64 = 5 * 60 * 1000;

/// A duration as typed after --window: a number and a unit (ms, s, m, h, d), or bare ms.
fn parse_window(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: i64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration such as 500ms, 30s, 10m, 2h or 1d"))?;
    let per = match unit {
        "" | "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?}; use ms, s, m, h or d (such as 10m)"
            ));
        }
    };
    n.checked_mul(per)
        .filter(|ms| *ms <= 3650 * 86_400_000)
        .ok_or_else(|| format!("{s:?} is longer than ten years"))
}

/// IDs that a terminal gets as a bordered table; from the next one on, tab-separated lines.
const TABLE_MAX_ROWS: usize = 1000;

/// Longest input line kept; an ID is at most 21 characters, so a longer line is reported by its
/// beginning and the rest is skipped (memory stays constant whatever the input).
const MAX_LINE: usize = 256;

/// Longest ID text kept in a row (a UUID in braces is 38 characters).
const ID_MAX: usize = 48;

/// How a row's ID is written: a number in decimal, or a text ID as given.
#[derive(Debug, Clone, Copy)]
enum IdText {
    Number(u64),
    Text([u8; ID_MAX], u8),
}

/// One decoded value: its ID and what it says.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: IdText,
    d: Decoded,
}

impl Row {
    #[inline]
    fn new(raw: &[u8], number: Option<u64>, d: Decoded) -> Row {
        let id = match number {
            Some(n) => IdText::Number(n),
            None => {
                let mut t = [0u8; ID_MAX];
                let n = raw.len().min(ID_MAX);
                t[..n].copy_from_slice(&raw[..n]);
                IdText::Text(t, n as u8)
            }
        };
        Row { id, d }
    }

    /// Appends the ID (JSON-escaped with `json`).
    #[inline]
    fn push_id(&self, b: &mut Vec<u8>, json: bool) {
        match &self.id {
            IdText::Number(n) => push_decimal(b, *n),
            IdText::Text(t, n) if json => push_json_str(b, &t[..usize::from(*n)]),
            IdText::Text(t, n) => b.extend_from_slice(&t[..usize::from(*n)]),
        }
    }

    fn id_string(&self) -> String {
        let mut b = Vec::with_capacity(ID_MAX);
        self.push_id(&mut b, false);
        String::from_utf8_lossy(&b).into_owned()
    }
}

/// Appends the worker field as the format writes it: decimal, or hex for a UUID's node and an
/// ObjectId's process value; `-` (text) or `null` (JSON) when the format has none.
#[inline]
fn push_worker(b: &mut Vec<u8>, d: &Decoded, json: bool) {
    match d.worker {
        Some(w) if d.format.worker_in_hex() && !json => {
            let width = if matches!(d.format, leafctl::idformat::Format::ObjectId) {
                10
            } else {
                12
            };
            b.extend_from_slice(format!("{w:0width$x}").as_bytes());
        }
        Some(w) => push_decimal(b, w),
        None if json => b.extend_from_slice(b"null"),
        None => b.push(b'-'),
    }
}

#[inline]
fn push_sequence(b: &mut Vec<u8>, d: &Decoded, json: bool) {
    match d.sequence {
        Some(s) => push_decimal(b, s),
        None if json => b.extend_from_slice(b"null"),
        None => b.push(b'-'),
    }
}

/// The JSON fields every decoded ID shares after `"id"`: time, timestamp_ms, worker, sequence,
/// layout, and random when the format has one; `PRETTY` as `serde_json` indents an object inside
/// an array (four spaces), else compact.
#[inline]
fn push_json_fields<const PRETTY: bool>(b: &mut Vec<u8>, times: &mut Rfc3339Ms, d: &Decoded) {
    // One literal per key and form: each piece is a single copy.
    macro_rules! key {
        ($k:literal) => {
            b.extend_from_slice(if PRETTY {
                concat!(",\n    \"", $k, "\": ").as_bytes()
            } else {
                concat!(",\"", $k, "\":").as_bytes()
            })
        };
    }
    key!("time");
    b.push(b'"');
    times.push(b, d.unix_ms);
    b.push(b'"');
    key!("timestamp_ms");
    push_signed(b, d.unix_ms);
    key!("worker");
    push_worker(b, d, true);
    key!("sequence");
    push_sequence(b, d, true);
    key!("layout");
    b.push(b'"');
    b.extend_from_slice(d.format.name().as_bytes());
    b.push(b'"');
    if let Some(r) = d.random {
        key!("random");
        b.push(b'"');
        b.extend_from_slice(r.hex().as_bytes());
        b.push(b'"');
    }
}

/// Appends a JSON string's contents (an ID's text: quotes and control bytes escaped).
#[inline]
fn push_json_str(b: &mut Vec<u8>, s: &[u8]) {
    if s.iter().all(|&c| c >= 0x20 && c != b'"' && c != b'\\') {
        b.extend_from_slice(s);
        return;
    }
    for &c in s {
        match c {
            b'"' | b'\\' => {
                b.push(b'\\');
                b.push(c);
            }
            0..=0x1f => b.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            _ => b.push(c),
        }
    }
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

/// Column widths of [`Style::Aligned`]: an ID has at most 19 digits (a UUID 36 characters, which
/// then widen their column), a time 24 characters.
const ALIGNED: [usize; 6] = [19, 24, 12, 7, 8, 9];

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
    columns: [&'static str; 6],
    times: Rfc3339Ms,
    quiet: bool,
    sink: Sink,
}

impl Printer {
    fn new(
        format: RowFormat,
        now_ms: i64,
        worker_name: &'static str,
        quiet: bool,
        streaming: bool,
    ) -> Printer {
        let columns = ["id", "time (UTC)", "age", worker_name, "sequence", "layout"];
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
                    pad(&mut header, from, width, i == 0 || i == 3 || i == 4);
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
    fn push(&mut self, row: &Row) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Stream(w, style) => {
                write_row(w, *style, &mut self.times, self.now_ms, row).map_err(write_err)
            }
            Sink::Table(rows) if rows.len() < TABLE_MAX_ROWS => {
                rows.push(*row);
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
            stderr!(
                "note: more than {TABLE_MAX_ROWS} IDs: printing tab-separated lines instead of a table (as --output tsv does)"
            );
        }
        let mut w = RowWriter::new(io::stdout().lock(), Framing::Tsv, &self.columns);
        if let Sink::Table(rows) = &self.sink {
            for row in rows {
                write_row(&mut w, Style::Tsv, &mut self.times, self.now_ms, row)
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
                    let (mut worker, mut seq) = (Vec::new(), Vec::new());
                    push_worker(&mut worker, &r.d, false);
                    push_sequence(&mut seq, &r.d, false);
                    t.add_row(vec![
                        r.id_string(),
                        rfc3339_ms(r.d.unix_ms),
                        age(r.d.unix_ms, self.now_ms),
                        String::from_utf8_lossy(&worker).into_owned(),
                        String::from_utf8_lossy(&seq).into_owned(),
                        r.d.format.name().to_string(),
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
    r: &Row,
) -> io::Result<()> {
    w.begin_row();
    let b = &mut w.buf;
    let d = &r.d;
    match style {
        Style::Tsv => {
            r.push_id(b, false);
            b.push(b'\t');
            times.push(b, d.unix_ms);
            b.push(b'\t');
            push_age(b, d.unix_ms, now_ms);
            b.push(b'\t');
            push_worker(b, d, false);
            b.push(b'\t');
            push_sequence(b, d, false);
            b.push(b'\t');
            b.extend_from_slice(d.format.name().as_bytes());
        }
        Style::Json => {
            b.extend_from_slice(b"  {\n    \"id\": \"");
            r.push_id(b, true);
            b.push(b'"');
            push_json_fields::<true>(b, times, d);
            b.extend_from_slice(b"\n  }");
        }
        Style::Aligned => {
            let from = b.len();
            r.push_id(b, false);
            pad(b, from, ALIGNED[0], true);
            b.extend_from_slice(b"  ");
            let from = b.len();
            times.push(b, d.unix_ms);
            pad(b, from, ALIGNED[1], false);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_age(b, d.unix_ms, now_ms);
            pad(b, from, ALIGNED[2], false);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_worker(b, d, false);
            pad(b, from, ALIGNED[3], true);
            b.extend_from_slice(b"  ");
            let from = b.len();
            push_sequence(b, d, false);
            pad(b, from, ALIGNED[4], true);
            b.extend_from_slice(b"  ");
            b.extend_from_slice(d.format.name().as_bytes());
        }
        Style::Ndjson => {
            b.extend_from_slice(b"{\"id\":\"");
            r.push_id(b, true);
            b.push(b'"');
            push_json_fields::<false>(b, times, d);
            b.push(b'}');
        }
    }
    w.end_row()
}

/// Decodes values one by one, counting the bad ones and those read under a guessed layout.
struct Decoder<'a> {
    opts: &'a GuessOptions,
    values: u64,
    bad: u64,
    guessed: u64,
    /// The first layout guessed, for the closing note.
    guessed_as: Option<&'static str>,
    /// Values read under the default layout that `--guess` ranks another layout first for.
    doubted: u64,
    /// The layout ranked first for the first of them.
    doubted_as: Option<&'static str>,
    quiet: bool,
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
        } else {
            decode_value(v, self.opts).map_err(|e| e.to_string())
        };
        match decoded {
            Ok(value) => {
                let at = || line.map(|n| format!("line {n}: ")).unwrap_or_default();
                match &value.reading {
                    Reading::AsGiven => {}
                    Reading::Guessed {
                        instead_of,
                        why,
                        plausible,
                    } => {
                        self.guessed += 1;
                        let name = value.decoded.format.name();
                        if self.guessed_as.is_none() && !self.quiet {
                            let shown = String::from_utf8_lossy(v);
                            let which = if *plausible == 1 {
                                "the one plausible layout".to_string()
                            } else {
                                format!("the most plausible of {plausible} layouts")
                            };
                            super::error::note(&format!(
                                "{}{shown} is no {instead_of} ID (its time would be {why}); read as {name}, {which} (--guess ranks them)",
                                at()
                            ));
                        }
                        self.guessed_as.get_or_insert(name);
                    }
                    Reading::Doubted { likelier, unix_ms } => {
                        self.doubted += 1;
                        // Said for IDs given as arguments; a stream of IDs (a log's, an export's)
                        // is decoded quietly under the layout it was given, as before.
                        if self.doubted_as.is_none() && !self.quiet && line.is_none() {
                            let shown = String::from_utf8_lossy(v);
                            super::error::note(&format!(
                                "{}{shown} is read under leafctl's default {} layout, but --guess ranks {likelier} first ({}); give --preset {likelier} if that is its layout",
                                at(),
                                self.opts.configured.name,
                                leafctl::idformat::rfc3339(*unix_ms),
                            ));
                        }
                        self.doubted_as.get_or_insert(likelier);
                    }
                }
                self.printer.push(&Row::new(v, value.number, value.decoded))
            }
            Err(reason) => {
                self.bad += 1;
                let shown = String::from_utf8_lossy(&v[..v.len().min(64)]);
                let more = if too_long || v.len() > 64 { "..." } else { "" };
                let message = match line {
                    Some(n) => format!("line {n}: {shown:?}{more}: {reason}"),
                    None => format!("{shown:?}{more}: {reason}"),
                };
                super::error::value_error(super::error::EXIT_USAGE, &message, None);
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

/// The layout the settings name, whether it was configured rather than the default, and what
/// this host's state files say about worker ids: what every decoding mode starts from.
fn guess_options(ctx: &Context, now_ms: i64) -> GuessOptions {
    let choice = &ctx.settings.layout;
    GuessOptions {
        now_ms,
        configured: NamedLayout::custom(choice.value.layout),
        configured_explicitly: choice.origin != Origin::Default,
        local: local_workers(&ctx.settings.state_dir.value),
    }
}

pub fn run(ctx: &Context, args: DecodeArgs) -> anyhow::Result<()> {
    // clap lets `requires` pass when IDs are given too (they conflict with --around/--from):
    // a flag that would be ignored is refused here instead.
    if args.window.is_some() && args.around.is_none() {
        return Err(usage(
            "--window only applies to --around; without it the IDs are decoded and the window ignored",
            "add --around ID (the ID whose neighbours to find), or drop --window",
        ));
    }
    if (args.since.is_some() || args.until.is_some()) && !args.scan {
        return Err(usage(
            "--since and --until only apply to --scan",
            "add --scan to find IDs in text made within that window, or drop them",
        ));
    }
    if args.to.is_some() && args.from.is_none() {
        return Err(usage(
            "--to only applies to --from; without it the IDs are decoded and --to ignored",
            "add --from TIME for the ID range between two times, or drop --to",
        ));
    }
    let choice = &ctx.settings.layout.value;
    if let Some(from) = &args.from {
        return range(ctx, &choice.layout, from, args.to.as_deref());
    }
    let now = chrono::Utc::now().timestamp_millis();
    let opts = guess_options(ctx, now);
    if let Some(id) = &args.around {
        return around::run(ctx, &opts, id, args.window.unwrap_or(DEFAULT_WINDOW_MS));
    }
    if args.scan {
        let since = match &args.since {
            Some(t) => super::time::parse_instant(t).map_err(|e| {
                usage(
                    format!("--since {t:?}: {e}"),
                    "give now, Unix ms, RFC 3339 or YYYY-MM-DD",
                )
            })?,
            None => now.saturating_sub(leafctl::idformat::DEFAULT_LOOKBACK_MS),
        };
        let until = match &args.until {
            Some(t) => super::time::parse_instant_end(t).map_err(|e| {
                usage(
                    format!("--until {t:?}: {e}"),
                    "give now, Unix ms, RFC 3339 or YYYY-MM-DD",
                )
            })?,
            None => now.saturating_add(leafctl::idformat::FUTURE_SLACK_MS),
        };
        if since > until {
            return Err(usage(
                "--since is after --until: the window holds no time",
                "give --since before --until",
            ));
        }
        return scan::run(ctx, &opts, &args.ids, (since, until));
    }
    let from_stdin = args.ids.is_empty() || args.ids == ["-"];
    if args.guess {
        return guess::run(ctx, &opts, &args.ids, from_stdin);
    }
    let mut d = Decoder {
        opts: &opts,
        values: 0,
        bad: 0,
        guessed: 0,
        guessed_as: None,
        doubted: 0,
        doubted_as: None,
        quiet: ctx.quiet,
        printer: Printer::new(
            ctx.rows,
            now,
            opts.configured.worker_name(),
            ctx.quiet,
            from_stdin,
        ),
    };
    if from_stdin {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) && !ctx.quiet {
            stderr!("leafctl decode: reading IDs from stdin, one per line (Ctrl-D to end)");
        }
        decode_stdin(&mut d)?;
    } else {
        for raw in &args.ids {
            d.value(raw.as_bytes(), false, None)?;
        }
    }
    // No input at all (an empty file, a filter that matched nothing) is an empty answer: `[]`
    // in JSON, nothing in the other formats.
    let (values, bad, guessed, guessed_as) = (d.values, d.bad, d.guessed, d.guessed_as);
    let (doubted, doubted_as) = (
        if from_stdin {
            0
        } else {
            d.doubted.saturating_sub(1)
        },
        d.doubted_as,
    );
    d.printer.finish()?;
    if guessed > 1 && !ctx.quiet {
        super::error::note(&format!(
            "{guessed} values did not fit the default leaf layout and were read under the most plausible other one (first: {}); give --preset to choose",
            guessed_as.unwrap_or("?")
        ));
    }
    if doubted > 0 && !ctx.quiet {
        super::error::note(&format!(
            "{} more value{} read under leafctl's default {} layout, though --guess ranks another layout first (first: {}); give --preset to choose",
            doubted,
            if doubted == 1 { " was" } else { "s were" },
            opts.configured.name,
            doubted_as.unwrap_or("?")
        ));
    }
    if bad > 0 {
        super::error::closing_hint(
            EXIT_USAGE,
            &format!(
                "{bad} of {values} values are not IDs leafctl can read under the {} layout (see above)",
                choice.label
            ),
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
        let hint = if layout.time_first() {
            "the range must lie inside the layout's time span; check --preset"
        } else {
            "use --around ID for one worker's range"
        };
        usage(e.to_string(), hint)
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
        use leafctl::idformat::parse_number;
        let lines: Vec<Vec<u8>> = lines_of(b"1\n\xff\xfe\n\n  \r\n2\r\n3")
            .into_iter()
            .map(|(l, _)| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(parse_number(&lines[0]), Ok(1));
        assert!(
            parse_number(&lines[1])
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert_eq!(parse_number(&lines[2]), Ok(2));
        assert_eq!(parse_number(&lines[3]), Ok(3));
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

    #[test]
    fn windows_parse_with_units() {
        assert_eq!(parse_window("500ms"), Ok(500));
        assert_eq!(parse_window("30s"), Ok(30_000));
        assert_eq!(parse_window("10m"), Ok(600_000));
        assert_eq!(parse_window("2h"), Ok(7_200_000));
        assert_eq!(parse_window("1d"), Ok(86_400_000));
        assert_eq!(parse_window("250"), Ok(250));
        assert!(parse_window("10 minutes").is_err());
        assert!(parse_window("-5m").is_err());
        assert!(parse_window("99999999999d").is_err());
    }
}

/// Parser fuzzing (issue 8): arbitrary input never panics, and stdin lines stay within bounds.
/// `PROPTEST_CASES=100000 cargo test --release --bin leafctl fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_arbitrary_text_never_panics(raw in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_window(&raw);
            let lines = tests::lines_of(&bytes);
            prop_assert!(lines.len() <= bytes.iter().filter(|&&b| b == b'\n').count() + 1);
            for (line, _) in &lines {
                prop_assert!(line.len() <= MAX_LINE);
            }
        }
    }
}
