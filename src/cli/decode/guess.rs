//! `leafctl decode --guess`: every layout an ID could have, ranked by the library's rules.

use std::io::{self, IsTerminal};

use leafctl::idformat::{Candidate, GuessOptions, guess};
use serde::Serialize;

use super::super::Context;
use super::super::error::{AlreadyReported, EXIT_USAGE};
use super::super::output::{
    Framing, RowFormat, RowWriter, age, print_text, render, rfc3339_ms, table, write_err,
};
use super::lines::{MAX_LINE, for_each_line};
use super::rows::{push_sequence, push_worker};

/// One candidate as printed.
#[derive(Debug, Serialize)]
struct GuessRow<'a> {
    id: &'a str,
    /// 1 for the most plausible; implausible readings have none.
    rank: Option<usize>,
    layout: &'static str,
    plausible: bool,
    score: i32,
    time: String,
    timestamp_ms: i64,
    worker: Option<u64>,
    sequence: Option<u64>,
    why: String,
}

const COLUMNS: [&str; 10] = [
    "id",
    "rank",
    "layout",
    "plausible",
    "time (UTC)",
    "age",
    "worker",
    "sequence",
    "score",
    "why",
];

/// Ranks each value's readings and prints them: a table per value on a terminal, else rows.
struct GuessPrinter {
    now_ms: i64,
    /// Tables on a terminal; otherwise rows.
    out: Option<(RowWriter<io::StdoutLock<'static>>, RowFormat)>,
    values: u64,
    bad: u64,
}

impl GuessPrinter {
    /// One input value (`line`: its line number on stdin) ranked and printed; blank lines are
    /// skipped, and a value no layout reads plausibly is reported and counted bad.
    fn one(&mut self, raw: &[u8], line: Option<u64>, opts: &GuessOptions) -> anyhow::Result<()> {
        let v = raw.trim_ascii();
        if v.is_empty() && line.is_some() {
            return Ok(());
        }
        self.values += 1;
        let id = String::from_utf8_lossy(&v[..v.len().min(MAX_LINE)]).into_owned();
        let at = line.map(|n| format!("line {n}: ")).unwrap_or_default();
        let ranked = match guess(v, opts) {
            Ok(r) => r,
            Err(e) => {
                self.bad += 1;
                crate::cli::error::value_error(
                    crate::cli::error::EXIT_USAGE,
                    &format!("{at}{id:?}: {e}"),
                    None,
                );
                return Ok(());
            }
        };
        let plausible = ranked.iter().filter(|c| c.plausible).count();
        if plausible == 0 {
            self.bad += 1;
            report_implausible(&at, &id, &ranked);
        }
        match &mut self.out {
            None => print_table(&id, &ranked, plausible, self.now_ms),
            Some((w, format)) => {
                for (i, c) in ranked.iter().enumerate() {
                    write_candidate(w, *format, &id, i, c, self.now_ms).map_err(write_err)?;
                }
                Ok(())
            }
        }
    }
}

/// Reports a value no layout reads plausibly, the layouts grouped by why ("within a day of the
/// layout's epoch: leaf, discord; in the future: ...").
fn report_implausible(at: &str, id: &str, ranked: &[Candidate]) {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for c in ranked {
        let why = c.reasons.first().cloned().unwrap_or_default();
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(c.decoded.format.name()),
            None => groups.push((why, vec![c.decoded.format.name()])),
        }
    }
    let ways: Vec<String> = groups
        .iter()
        .map(|(why, names)| format!("{why}: {}", names.join(", ")))
        .collect();
    crate::cli::error::value_error(
        crate::cli::error::EXIT_USAGE,
        &format!(
            "{at}{id:?}: no known layout gives it a plausible time ({}); give its layout with --preset, or --epoch/--layout",
            ways.join("; ")
        ),
        None,
    );
}

/// One value's readings as a table for a terminal, under a line saying how many are plausible.
fn print_table(
    id: &str,
    ranked: &[Candidate],
    plausible: usize,
    now_ms: i64,
) -> anyhow::Result<()> {
    let mut t = table(&[
        "rank",
        "layout",
        "time (UTC)",
        "age",
        "worker",
        "sequence",
        "why",
    ]);
    for (i, c) in ranked.iter().enumerate() {
        let (mut w, mut s) = (Vec::new(), Vec::new());
        push_worker(&mut w, &c.decoded, false);
        push_sequence(&mut s, &c.decoded, false);
        t.add_row(vec![
            if c.plausible {
                (i + 1).to_string()
            } else {
                "-".into()
            },
            c.decoded.format.name().to_string(),
            rfc3339_ms(c.decoded.unix_ms),
            age(c.decoded.unix_ms, now_ms),
            String::from_utf8_lossy(&w).into_owned(),
            String::from_utf8_lossy(&s).into_owned(),
            c.reason(),
        ]);
    }
    let of = ranked.len();
    print_text(&format!(
        "{id}: {plausible} of {of} readings plausible\n{}",
        render(t)
    ))
}

fn write_candidate(
    w: &mut RowWriter<impl io::Write>,
    format: RowFormat,
    id: &str,
    i: usize,
    c: &Candidate,
    now_ms: i64,
) -> io::Result<()> {
    let d = &c.decoded;
    let row = GuessRow {
        id,
        rank: c.plausible.then_some(i + 1),
        layout: d.format.name(),
        plausible: c.plausible,
        score: c.score,
        time: rfc3339_ms(d.unix_ms),
        timestamp_ms: d.unix_ms,
        worker: d.worker,
        sequence: d.sequence,
        why: c.reason(),
    };
    w.begin_row();
    match format {
        RowFormat::Json => {
            let text = serde_json::to_string_pretty(&row).map_err(io::Error::other)?;
            for (k, line) in text.lines().enumerate() {
                if k > 0 {
                    w.buf.push(b'\n');
                }
                w.buf.extend_from_slice(b"  ");
                w.buf.extend_from_slice(line.as_bytes());
            }
        }
        RowFormat::Ndjson => {
            serde_json::to_writer(&mut w.buf, &row).map_err(io::Error::other)?;
        }
        RowFormat::Text | RowFormat::Tsv => {
            let (mut wk, mut sq) = (Vec::new(), Vec::new());
            push_worker(&mut wk, d, false);
            push_sequence(&mut sq, d, false);
            let fields = [
                id.to_string(),
                row.rank.map_or("-".into(), |r| r.to_string()),
                row.layout.to_string(),
                row.plausible.to_string(),
                row.time.clone(),
                age(d.unix_ms, now_ms),
                String::from_utf8_lossy(&wk).into_owned(),
                String::from_utf8_lossy(&sq).into_owned(),
                row.score.to_string(),
                row.why.replace('\t', " "),
            ];
            w.buf.extend_from_slice(fields.join("\t").as_bytes());
        }
    }
    w.end_row()
}

pub(super) fn run(
    ctx: &Context,
    opts: &GuessOptions,
    ids: &[String],
    from_stdin: bool,
) -> anyhow::Result<()> {
    let out = match ctx.rows {
        RowFormat::Text if io::stdout().is_terminal() => None,
        RowFormat::Text | RowFormat::Tsv => Some((
            RowWriter::new(io::stdout().lock(), Framing::Tsv, &COLUMNS),
            RowFormat::Tsv,
        )),
        RowFormat::Json => Some((
            RowWriter::new(
                io::stdout().lock(),
                Framing::JsonArray { pretty: true },
                &COLUMNS,
            ),
            RowFormat::Json,
        )),
        RowFormat::Ndjson => Some((
            RowWriter::new(io::stdout().lock(), Framing::Ndjson, &COLUMNS),
            RowFormat::Ndjson,
        )),
    };
    let mut p = GuessPrinter {
        now_ms: opts.now_ms,
        out,
        values: 0,
        bad: 0,
    };
    if from_stdin {
        for_each_line(
            io::stdin().lock(),
            &mut p,
            |p| match &mut p.out {
                Some((w, _)) => w.flush().map_err(write_err),
                None => Ok(()),
            },
            |p, line, _long, n| p.one(line, Some(n), opts),
        )?;
    } else {
        for raw in ids {
            p.one(raw.as_bytes(), None, opts)?;
        }
    }
    let (values, bad) = (p.values, p.bad);
    if let Some((w, _)) = p.out {
        w.finish().map(|_| ()).map_err(write_err)?;
    }
    if bad > 0 {
        crate::cli::error::closing_hint(
            EXIT_USAGE,
            &format!("{bad} of {values} values have no plausible reading"),
        );
        return Err(AlreadyReported(EXIT_USAGE).into());
    }
    Ok(())
}
