//! Decoded values as rows: a bordered table on a terminal, aligned lines for a stream, TSV, a
//! JSON array or NDJSON, each written as it is decoded.

use std::io::{self, IsTerminal, Write};

use leafctl::idformat::{Decoded, Format};
use leafctl::region::Region;
use serde::Serialize;

use super::super::Context;
use super::super::output::{
    Framing, OutputFormat, Rfc3339Ms, RowFormat, RowWriter, age, print_json, print_text, push_age,
    push_decimal, push_signed, render, rfc3339_ms, table, write_err,
};

/// IDs that a terminal gets as a bordered table; from the next one on, tab-separated lines.
pub(super) const TABLE_MAX_ROWS: usize = 1000;

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
pub(super) struct Row {
    id: IdText,
    d: Decoded,
}

impl Row {
    #[inline]
    pub(super) fn new(raw: &[u8], number: Option<u64>, d: Decoded) -> Row {
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
pub(super) fn push_worker(b: &mut Vec<u8>, d: &Decoded, json: bool) {
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

/// The region of `count` a decoded snowflake ID's worker field belongs to
/// ([`Region::of_worker`]); none for other formats, or a worker id past the last region.
pub(super) fn region_of(d: &Decoded, count: u32) -> Option<u32> {
    match d.format {
        Format::Snowflake(l) => d
            .worker
            .and_then(|w| Region::of_worker(w, l.layout.worker_bits(), count).ok())
            .map(|r| r.index()),
        _ => None,
    }
}

/// Appends the region column (`--regions N`): its number, or `-` (text) / `null` (JSON).
fn push_region(b: &mut Vec<u8>, d: &Decoded, count: u32, json: bool) {
    match region_of(d, count) {
        Some(r) => push_decimal(b, u64::from(r)),
        None if json => b.extend_from_slice(b"null"),
        None => b.push(b'-'),
    }
}

#[inline]
pub(super) fn push_sequence(b: &mut Vec<u8>, d: &Decoded, json: bool) {
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
pub(super) fn push_json_fields<const PRETTY: bool>(
    b: &mut Vec<u8>,
    times: &mut Rfc3339Ms,
    d: &Decoded,
) {
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
pub(super) fn push_json_str(b: &mut Vec<u8>, s: &[u8]) {
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
pub(super) struct Printer {
    now_ms: i64,
    columns: Vec<&'static str>,
    /// `--regions N`: a last column with each snowflake ID's region.
    regions: Option<u32>,
    times: Rfc3339Ms,
    quiet: bool,
    sink: Sink,
}

impl Printer {
    pub(super) fn new(
        format: RowFormat,
        now_ms: i64,
        worker_name: &'static str,
        quiet: bool,
        streaming: bool,
        regions: Option<u32>,
    ) -> Printer {
        let mut columns = vec!["id", "time (UTC)", "age", worker_name, "sequence", "layout"];
        if regions.is_some() {
            columns.push("region");
        }
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
                if regions.is_some() {
                    header.extend_from_slice(b"  region");
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
            regions,
            times: Rfc3339Ms::default(),
            quiet,
            sink,
        }
    }

    #[inline]
    pub(super) fn push(&mut self, row: &Row) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Stream(w, style) => {
                write_row(w, *style, &mut self.times, self.now_ms, self.regions, row)
                    .map_err(write_err)
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
            crate::cli::error::note(&format!(
                "more than {TABLE_MAX_ROWS} IDs: printing tab-separated lines instead of a table (as --output tsv does)"
            ));
        }
        let mut w = RowWriter::new(io::stdout().lock(), Framing::Tsv, &self.columns);
        if let Sink::Table(rows) = &self.sink {
            for row in rows {
                let regions = self.regions;
                write_row(
                    &mut w,
                    Style::Tsv,
                    &mut self.times,
                    self.now_ms,
                    regions,
                    row,
                )
                .map_err(write_err)?;
            }
        }
        self.sink = Sink::Stream(w, Style::Tsv);
        Ok(())
    }

    /// Lets a reader see the rows so far (before waiting for more input).
    pub(super) fn flush(&mut self) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Stream(w, _) => w.flush().map_err(write_err),
            Sink::Table(_) => Ok(()),
        }
    }

    /// Draws the table, or closes the stream (a JSON array is closed even when every value was
    /// bad).
    pub(super) fn finish(self) -> anyhow::Result<()> {
        match self.sink {
            Sink::Stream(w, _) => w.finish().map(|_| ()).map_err(write_err),
            Sink::Table(rows) if rows.is_empty() => Ok(()),
            Sink::Table(rows) => {
                let mut t = table(&self.columns);
                for r in &rows {
                    let (mut worker, mut seq) = (Vec::new(), Vec::new());
                    push_worker(&mut worker, &r.d, false);
                    push_sequence(&mut seq, &r.d, false);
                    let mut cells = vec![
                        r.id_string(),
                        rfc3339_ms(r.d.unix_ms),
                        age(r.d.unix_ms, self.now_ms),
                        String::from_utf8_lossy(&worker).into_owned(),
                        String::from_utf8_lossy(&seq).into_owned(),
                        r.d.format.name().to_string(),
                    ];
                    if let Some(count) = self.regions {
                        let mut region = Vec::new();
                        push_region(&mut region, &r.d, count, false);
                        cells.push(String::from_utf8_lossy(&region).into_owned());
                    }
                    t.add_row(cells);
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
    regions: Option<u32>,
    r: &Row,
) -> io::Result<()> {
    w.begin_row();
    match style {
        Style::Tsv | Style::Aligned => {
            push_columns(
                &mut w.buf,
                style == Style::Aligned,
                times,
                now_ms,
                regions,
                r,
            );
        }
        Style::Json | Style::Ndjson => {
            push_object(&mut w.buf, style == Style::Json, times, regions, r);
        }
    }
    w.end_row()
}

/// A row's fields separated by tabs, or (`aligned`) padded to [`ALIGNED`]'s widths.
#[inline]
fn push_columns(
    b: &mut Vec<u8>,
    aligned: bool,
    times: &mut Rfc3339Ms,
    now_ms: i64,
    regions: Option<u32>,
    r: &Row,
) {
    let d = &r.d;
    for (field, &width) in ALIGNED.iter().enumerate() {
        if field > 0 {
            b.extend_from_slice(if aligned { b"  " } else { b"\t" });
        }
        let from = b.len();
        match field {
            0 => r.push_id(b, false),
            1 => times.push(b, d.unix_ms),
            2 => push_age(b, d.unix_ms, now_ms),
            3 => push_worker(b, d, false),
            4 => push_sequence(b, d, false),
            _ => b.extend_from_slice(d.format.name().as_bytes()),
        }
        if aligned && field < 5 {
            // The ID, worker and sequence right-aligned; times and ages left.
            pad(b, from, width, matches!(field, 0 | 3 | 4));
        }
    }
    if let Some(count) = regions {
        b.extend_from_slice(if aligned { b"  " } else { b"\t" });
        push_region(b, d, count, false);
    }
}

/// A row as a JSON object: `pretty` as `serde_json` indents it inside an array, else compact.
#[inline]
fn push_object(
    b: &mut Vec<u8>,
    pretty: bool,
    times: &mut Rfc3339Ms,
    regions: Option<u32>,
    r: &Row,
) {
    let d = &r.d;
    b.extend_from_slice(if pretty {
        b"  {\n    \"id\": \""
    } else {
        b"{\"id\":\""
    });
    r.push_id(b, true);
    b.push(b'"');
    if pretty {
        push_json_fields::<true>(b, times, d);
    } else {
        push_json_fields::<false>(b, times, d);
    }
    if let Some(count) = regions {
        b.extend_from_slice(if pretty {
            b",\n    \"region\": "
        } else {
            b",\"region\":"
        });
        push_region(b, d, count, true);
    }
    b.extend_from_slice(if pretty { b"\n  }" } else { b"}" });
}

/// Prints one record (an ID range): a TSV row of `fields` under `columns`, one NDJSON line, a
/// JSON object, or the text `text` makes.
pub(super) fn print_record<T: Serialize>(
    ctx: &Context,
    columns: &[&str],
    fields: &[&str],
    record: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    match (ctx.rows, ctx.output) {
        (RowFormat::Tsv, _) => {
            let mut w = RowWriter::new(io::stdout().lock(), Framing::Tsv, columns);
            w.begin_row();
            w.buf.extend_from_slice(fields.join("\t").as_bytes());
            w.end_row().map_err(write_err)?;
            w.finish().map(|_| ()).map_err(write_err)
        }
        (RowFormat::Ndjson, _) => {
            let mut line = serde_json::to_string(record)?;
            line.push('\n');
            let mut out = io::stdout().lock();
            out.write_all(line.as_bytes()).map_err(write_err)?;
            out.flush().map_err(write_err)
        }
        (_, OutputFormat::Json) => print_json(record),
        (_, OutputFormat::Text) => print_text(&text()),
    }
}
