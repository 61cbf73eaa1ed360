//! `leafctl decode`: what an ID says, which layout an unknown number has, where IDs sit in log
//! text, and which IDs a time range or the moments around one ID hold. The formats and the rules
//! are the library's (`leafctl::idformat`); this module parses flags and prints.

mod around;
mod guess;
mod lines;
mod range;
mod rows;
mod scan;
mod tagged;
mod values;

use clap::Args;
use leafctl::config::Origin;
use leafctl::idformat::{GuessOptions, NamedLayout, local_workers};

use super::error::{AlreadyReported, EXIT_USAGE, usage};
use super::{Context, LayoutArgs};
use rows::Printer;
use values::{Decoder, decode_stdin};

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
  leafctl decode --regions 8 1864829180581093376          with the region its worker field says
  leafctl decode --encode crockford 1KR9M89NN3800V        the same ID as `next --encode` prints it
  leafctl --key-file id.key decode --tag order-no 482915730264    an opaque ID's dense ID
  leafctl decode --around 1864829180581093376 --region 3 --regions 8
      every ID region 3's workers (384 to 511) made 5 minutes either side
  leafctl decode --epoch 2020-01-01T00:00:00Z --layout 41,10,12 123456789012345
  grep -o '[0-9]\\{18,19\\}' app.log | leafctl decode | head       streams; TSV off a terminal
  leafctl decode --output tsv < ids.txt | tail -n +2 | cut -f 2           the times only (no header)
  leafctl decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z
      smallest and largest ID of that hour, for WHERE id BETWEEN ... AND ...

Numbers are read under --preset or the custom layout (default leaf); UUIDs (versions 1, 6, 7),
ULIDs, KSUIDs and ObjectIds by their shape. With no layout configured, a number that is no leaf ID
(below 2^31, or a time in the future) is read under the most plausible other layout, with a note on
stderr, and an argument that reads as an old Leaf ID while --guess ranks another layout first (a
Mastodon status ID) is printed with a note naming that layout.

Rows are decoded and written as they are read, in constant memory. --output text on a terminal
draws a table of the IDs given as arguments (up to 1000) and shows IDs read from stdin as aligned
rows the moment each is read; off a terminal it writes tab-separated lines with a header, as tsv
always does; json is one array (streamed); ndjson is one object per line.

--scan reads files (or stdin) of any text and prints every line with each ID's time and worker
beside it (coloured on a terminal unless NO_COLOR is set); with --output tsv, json or ndjson it
prints one record per ID with its file, line and column instead. It looks for IDs made in the last
ten years (--since/--until choose): numbers of the layout's length, UUIDs, ULIDs, KSUIDs and
ObjectIds; base64 text and Unix times in nanoseconds (near the window's end, or after a key such as
ts or time) are not taken for IDs.

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
    /// Read each ID as the compact string `next --encode` prints (base36 or crockford), its
    /// check character verified: a mistyped character is an error, not another ID
    #[arg(long, value_name = "base36|crockford", conflicts_with_all = ["from", "scan", "around", "guess"])]
    pub encode: Option<leafctl::idformat::compact::Encoding>,
    /// Read the IDs as IDs of this segment tag, with its shape from the table (--db): an opaque
    /// tag's dense IDs need its key (--key-file)
    #[arg(long, value_name = "NAME", conflicts_with_all = ["from", "scan", "around", "guess", "encode"])]
    pub tag: Option<String>,
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

/// `leafctl decode`: the mode its flags choose (a time range, --around, --scan, --guess), else
/// the IDs decoded one by one.
pub fn run(ctx: &Context, args: DecodeArgs) -> anyhow::Result<()> {
    refuse_ignored_flags(&args)?;
    let choice = &ctx.settings.layout.value;
    if let Some(from) = &args.from {
        return range::range(ctx, &choice.layout, from, args.to.as_deref());
    }
    let now = chrono::Utc::now().timestamp_millis();
    let opts = guess_options(ctx, now);
    if let Some(id) = &args.around {
        return around::run(ctx, &opts, id, args.window.unwrap_or(DEFAULT_WINDOW_MS));
    }
    if args.scan {
        let window = scan_window(&args, now)?;
        return scan::run(ctx, &opts, &args.ids, window);
    }
    if let Some(tag) = &args.tag {
        return tagged::run(ctx, tag, &args.ids);
    }
    let from_stdin = args.ids.is_empty() || args.ids == ["-"];
    if args.guess {
        return guess::run(ctx, &opts, &args.ids, from_stdin);
    }
    decode_values(ctx, &opts, &args.ids, from_stdin, now, args.encode)
}

/// Refuses a flag its mode would ignore: clap lets `requires` pass when IDs are given too (they
/// conflict with --around/--from), so the check is made here.
fn refuse_ignored_flags(args: &DecodeArgs) -> anyhow::Result<()> {
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
    Ok(())
}

/// `--scan`'s window (Unix ms, inclusive) from --since and --until, or their defaults around
/// `now`: the times an ID found in text may have.
fn scan_window(args: &DecodeArgs, now: i64) -> anyhow::Result<(i64, i64)> {
    let bound = |flag: &str, t: &str, parse: fn(&str) -> Result<i64, String>| {
        parse(t).map_err(|e| {
            usage(
                format!("{flag} {t:?}: {e}"),
                "give now, Unix ms, RFC 3339 or YYYY-MM-DD",
            )
        })
    };
    let since = match &args.since {
        Some(t) => bound("--since", t, super::time::parse_instant)?,
        None => now.saturating_sub(leafctl::idformat::DEFAULT_LOOKBACK_MS),
    };
    let until = match &args.until {
        Some(t) => bound("--until", t, super::time::parse_instant_end)?,
        None => now.saturating_add(leafctl::idformat::FUTURE_SLACK_MS),
    };
    if since > until {
        return Err(usage(
            "--since is after --until: the window holds no time",
            "give --since before --until",
        ));
    }
    Ok((since, until))
}

/// Plain `decode`: each ID (the arguments, or stdin's lines) decoded and printed as it comes,
/// then the notes and the closing hint its values call for.
fn decode_values(
    ctx: &Context,
    opts: &GuessOptions,
    ids: &[String],
    from_stdin: bool,
    now: i64,
    encoding: Option<leafctl::idformat::compact::Encoding>,
) -> anyhow::Result<()> {
    let mut d = Decoder {
        opts,
        encoding,
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
            ctx.settings.region_count,
        ),
    };
    if from_stdin {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) && !ctx.quiet {
            stderr!("leafctl decode: reading IDs from stdin, one per line (Ctrl-D to end)");
        }
        decode_stdin(&mut d)?;
    } else {
        for raw in ids {
            d.value(raw.as_bytes(), false, None)?;
        }
    }
    // No input at all (an empty file, a filter that matched nothing) is an empty answer: `[]`
    // in JSON, nothing in the other formats.
    let tally = Tally {
        values: d.values,
        bad: d.bad,
        guessed: (d.guessed, d.guessed_as),
        // The first doubted argument had a note of its own.
        doubted: (
            if from_stdin {
                0
            } else {
                d.doubted.saturating_sub(1)
            },
            d.doubted_as,
        ),
    };
    d.printer.finish()?;
    closing_notes(ctx, opts, &tally)
}

/// What plain `decode` counted, for the notes after the rows.
struct Tally {
    values: u64,
    bad: u64,
    /// Values read under a guessed layout, and the first such layout.
    guessed: (u64, Option<&'static str>),
    /// Values doubted beyond the first (which was noted as it came), and the layout ranked
    /// first for the first.
    doubted: (u64, Option<&'static str>),
}

/// The notes on layouts guessed and doubted, and the closing hint (exit 2) when some values
/// were no IDs.
fn closing_notes(ctx: &Context, opts: &GuessOptions, tally: &Tally) -> anyhow::Result<()> {
    let (guessed, guessed_as) = tally.guessed;
    let (doubted, doubted_as) = tally.doubted;
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
    let (values, bad) = (tally.values, tally.bad);
    if bad > 0 {
        super::error::closing_hint(
            EXIT_USAGE,
            &format!(
                "{bad} of {values} values are not IDs leafctl can read under the {} layout (see above)",
                ctx.settings.layout.value.label
            ),
        );
        return Err(AlreadyReported(EXIT_USAGE).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
