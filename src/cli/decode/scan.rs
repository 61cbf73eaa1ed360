//! `leafctl decode --scan`: IDs found in any text, annotated in place or listed as records. The
//! finding is the library's ([`leafctl::idformat::Scanner`]); this module only writes.

use std::fs::File;
use std::io::{self, IsTerminal, Write};

use leafctl::idformat::{
    Decoded, GuessOptions, ScanError, ScanSink, ScanStats, Scanner, scan_stream,
};

use super::super::Context;
use super::super::error::{AlreadyReported, EXIT_USAGE};
use super::super::output::{Framing, Rfc3339Ms, RowFormat, RowWriter, push_decimal, write_err};
use super::rows::{push_json_fields, push_json_str, push_sequence, push_worker};

/// Output buffer size: written out whenever it holds this much.
const FLUSH_AT: usize = 1 << 16;

/// Each input line as it was, with `[time worker=.. seq=..]` after every ID.
struct Annotate {
    out: io::StdoutLock<'static>,
    buf: Vec<u8>,
    times: Rfc3339Ms,
    colour: bool,
    /// The configured layout's name: its IDs are annotated without it, others with theirs.
    layout: &'static str,
}

impl ScanSink for Annotate {
    #[inline]
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
            return self.out.write_all(bytes);
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    #[inline]
    fn id(&mut self, bytes: &[u8], _line: u64, _column: u64, d: &Decoded) -> io::Result<()> {
        let b = &mut self.buf;
        if self.colour {
            b.extend_from_slice(b"\x1b[1m");
            b.extend_from_slice(bytes);
            b.extend_from_slice(b"\x1b[22;36m [");
        } else {
            b.extend_from_slice(bytes);
            b.extend_from_slice(b" [");
        }
        let name = d.format.name();
        if name != self.layout {
            b.extend_from_slice(name.as_bytes());
            b.push(b' ');
        }
        self.times.push(b, d.unix_ms);
        if d.worker.is_some() {
            b.push(b' ');
            b.extend_from_slice(d.format.worker_name().as_bytes());
            b.push(b'=');
            push_worker(b, d, false);
        }
        if d.sequence.is_some() {
            b.push(b' ');
            let seq = d.format.sequence_name();
            b.extend_from_slice(if seq == "sequence" {
                b"seq"
            } else {
                seq.as_bytes()
            });
            b.push(b'=');
            push_sequence(b, d, false);
        }
        b.push(b']');
        if self.colour {
            b.extend_from_slice(b"\x1b[0m");
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }

    fn wants_positions(&self) -> bool {
        false
    }
}

/// One record per ID: file, line, column and what it says.
struct Records {
    w: RowWriter<io::StdoutLock<'static>>,
    format: RowFormat,
    times: Rfc3339Ms,
    file: Vec<u8>,
}

const COLUMNS: [&str; 8] = [
    "file",
    "line",
    "column",
    "id",
    "layout",
    "time (UTC)",
    "worker",
    "sequence",
];

impl ScanSink for Records {
    #[inline]
    fn text(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn id(&mut self, bytes: &[u8], line: u64, column: u64, d: &Decoded) -> io::Result<()> {
        self.w.begin_row();
        let b = &mut self.w.buf;
        match self.format {
            RowFormat::Json | RowFormat::Ndjson => {
                let pretty = self.format == RowFormat::Json;
                let sep: &[u8] = if pretty { b",\n    " } else { b"," };
                let key = |b: &mut Vec<u8>, k: &[u8]| {
                    b.push(b'"');
                    b.extend_from_slice(k);
                    b.extend_from_slice(if pretty { b"\": " } else { b"\":" });
                };
                b.extend_from_slice(if pretty { b"  {\n    " } else { b"{" });
                key(b, b"file");
                b.push(b'"');
                push_json_str(b, &self.file);
                b.push(b'"');
                b.extend_from_slice(sep);
                key(b, b"line");
                push_decimal(b, line);
                b.extend_from_slice(sep);
                key(b, b"column");
                push_decimal(b, column);
                b.extend_from_slice(sep);
                key(b, b"id");
                b.push(b'"');
                push_json_str(b, bytes);
                b.push(b'"');
                if pretty {
                    push_json_fields::<true>(b, &mut self.times, d);
                } else {
                    push_json_fields::<false>(b, &mut self.times, d);
                }
                b.extend_from_slice(if pretty { b"\n  }" } else { b"}" });
            }
            RowFormat::Text | RowFormat::Tsv => {
                b.extend_from_slice(&self.file);
                b.push(b'\t');
                push_decimal(b, line);
                b.push(b'\t');
                push_decimal(b, column);
                b.push(b'\t');
                b.extend_from_slice(bytes);
                b.push(b'\t');
                b.extend_from_slice(d.format.name().as_bytes());
                b.push(b'\t');
                self.times.push(b, d.unix_ms);
                b.push(b'\t');
                push_worker(b, d, false);
                b.push(b'\t');
                push_sequence(b, d, false);
            }
        }
        self.w.end_row()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Where `--scan` writes: annotated lines or records.
enum Out {
    Annotate(Annotate),
    Records(Records),
}

/// `decode --scan` over `files`, finding IDs made within `window` (Unix ms, inclusive).
pub(super) fn run(
    ctx: &Context,
    opts: &GuessOptions,
    files: &[String],
    window: (i64, i64),
) -> anyhow::Result<()> {
    let scanner = Scanner::between(opts.configured, window.0, window.1);
    let mut out = open_out(ctx.rows, opts.configured.name);
    let stdin = ["-".to_string()];
    let inputs = if files.is_empty() { &stdin[..] } else { files };
    let mut tally = Tally::default();
    for name in inputs {
        scan_input(ctx, name, &scanner, &mut out, &mut tally)?;
    }
    match out {
        Out::Annotate(mut a) => a.flush().map_err(write_err)?,
        Out::Records(r) => {
            r.w.finish().map(|_| ()).map_err(write_err)?;
        }
    }
    // Said, not silent: numbers that look like IDs by length but not by time under this layout.
    if tally.skipped > 0 && !ctx.quiet {
        note_skipped(&scanner, tally.skipped);
    }
    if tally.unix_times > 0 && !ctx.quiet {
        note_unix_times(tally.unix_times);
    }
    if tally.bad > 0 {
        crate::cli::error::closing_hint(
            EXIT_USAGE,
            "give files that exist and can be read, or - for stdin",
        );
        return Err(AlreadyReported(EXIT_USAGE).into());
    }
    Ok(())
}

/// Where `--scan` writes for the row format `format`: the lines annotated in place for text, one
/// record per ID otherwise. `layout` is the configured layout's name.
fn open_out(format: RowFormat, layout: &'static str) -> Out {
    let stdout_tty = io::stdout().is_terminal();
    match format {
        RowFormat::Text => Out::Annotate(Annotate {
            out: io::stdout().lock(),
            buf: Vec::with_capacity(FLUSH_AT * 2),
            times: Rfc3339Ms::default(),
            colour: stdout_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            layout,
        }),
        format => Out::Records(Records {
            w: RowWriter::new(
                io::stdout().lock(),
                match format {
                    RowFormat::Json => Framing::JsonArray { pretty: true },
                    RowFormat::Ndjson => Framing::Ndjson,
                    _ => Framing::Tsv,
                },
                &COLUMNS,
            ),
            format,
            times: Rfc3339Ms::default(),
            file: Vec::new(),
        }),
    }
}

/// What `--scan` counted over its inputs, for the notes and the exit code at its end.
#[derive(Default)]
struct Tally {
    /// Inputs that could not be opened or read.
    bad: u64,
    /// Numbers of an ID's length whose time lies outside the window.
    skipped: u64,
    /// Numbers taken for Unix times in nanoseconds.
    unix_times: u64,
}

/// Scans one input (`-`: stdin) into `out`. One that cannot be opened or read is reported and
/// counted in `tally`, and the scan goes on; only a failed write ends it.
fn scan_input(
    ctx: &Context,
    name: &str,
    scanner: &Scanner,
    out: &mut Out,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    if let Out::Records(r) = out {
        r.file = name.as_bytes().to_vec();
    }
    let result = if name == "-" {
        if io::stdin().is_terminal() && !ctx.quiet {
            stderr!("leafctl decode --scan: reading text from stdin (Ctrl-D to end)");
        }
        scan_one(io::stdin().lock(), scanner, out)
    } else {
        match File::open(name) {
            Ok(f) => scan_one(f, scanner, out),
            Err(e) => {
                tally.bad += 1;
                crate::cli::error::value_error(
                    crate::cli::error::EXIT_USAGE,
                    &format!("cannot open {name}: {e}"),
                    Some("check the file's path and permissions"),
                );
                return Ok(());
            }
        }
    };
    match result {
        Ok(stats) => {
            tally.skipped += stats.skipped;
            tally.unix_times += stats.unix_times;
        }
        Err(ScanError::Write(e)) => return Err(write_err(e)),
        Err(ScanError::Read(e)) => {
            tally.bad += 1;
            crate::cli::error::value_error(
                crate::cli::error::EXIT_USAGE,
                &format!("cannot read {name}: {e}"),
                Some("check the file (a directory, a device that failed)"),
            );
        }
    }
    Ok(())
}

/// The note on `skipped` numbers of an ID's length not read as IDs: their time under the
/// layout lies outside the scanner's window.
fn note_skipped(scanner: &Scanner, skipped: u64) {
    let (lo, hi) = scanner.digit_range();
    let digits = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}-{hi}")
    };
    let (from, to) = scanner.window();
    crate::cli::error::note(&format!(
        "{skipped} number{} of {digits} digits (the length of {} IDs) not read as IDs: under that layout {} time{} outside {} .. {}; if they are IDs, give their layout with --preset (or run --guess on one), or widen the window with --since/--until",
        if skipped == 1 { "" } else { "s" },
        scanner.layout().name,
        if skipped == 1 { "its" } else { "their" },
        if skipped == 1 { " lies" } else { "s lie" },
        super::super::output::rfc3339_ms(from),
        super::super::output::rfc3339_ms(to),
    ));
}

/// The note on `unix_times` 19-digit numbers taken for Unix times in nanoseconds, not IDs.
fn note_unix_times(unix_times: u64) {
    crate::cli::error::note(&format!(
        "{unix_times} number{} of 19 digits taken as Unix times in nanoseconds, not IDs (as such {} within a month of the window's end or after a key naming a time); if {}, end the window earlier with --until",
        if unix_times == 1 { "" } else { "s" },
        if unix_times == 1 {
            "its time lies"
        } else {
            "their times lie"
        },
        if unix_times == 1 {
            "it is an ID"
        } else {
            "they are IDs"
        },
    ));
}

/// Scans one reader into whichever output `out` is.
fn scan_one(r: impl io::Read, scanner: &Scanner, out: &mut Out) -> Result<ScanStats, ScanError> {
    match out {
        Out::Annotate(a) => scan_stream(r, scanner, a),
        Out::Records(w) => scan_stream(r, scanner, w),
    }
}
