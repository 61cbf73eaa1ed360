//! `leafctl decode`: what an ID says, and which IDs a time range holds.

use std::io::BufRead;

use clap::Args;
use leafctl::snowflake::{Layout, Preset};
use serde::Serialize;

use super::error::{AlreadyReported, EXIT_USAGE, usage};
use super::output::{OutputFormat, age, print_json, print_text, rfc3339_ms, table};
use super::time::parse_instant;
use super::{Context, LayoutArgs};

pub const EXAMPLES: &str = "\
Examples:
  leafctl decode 1864829180581093376
  leafctl decode 0x19e1b2c3d4e5f607 --preset discord
  leafctl decode --epoch 2020-01-01T00:00:00Z --layout 41,10,12 123456789012345
  grep -o '[0-9]\\{18,19\\}' app.log | leafctl decode --output json
  leafctl decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z
      smallest and largest ID of that hour, for WHERE id BETWEEN ... AND ...

Values that are not IDs (not a number, negative, over 2^63-1, or a time far in the future,
which usually means the wrong --preset) are reported on stderr; the rest are still printed,
and the exit code is 2.";

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

#[derive(Debug, Serialize)]
struct Decoded {
    id: String,
    time: String,
    timestamp_ms: i64,
    worker: u64,
    sequence: u64,
}

/// Parses one ID as typed: decimal or `0x` hex, at most 2^63-1.
fn parse_id(raw: &str) -> Result<u64, String> {
    let s = raw.trim();
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
        s.parse::<u128>()
            .map_err(|_| "over 2^63-1, so not a 64-bit ID".to_string())?
    };
    if value > i64::MAX as u128 {
        return Err("over 2^63-1, so not a 64-bit ID".into());
    }
    Ok(value as u64)
}

/// The non-blank lines of `input`. A line that is not UTF-8 is kept (shown with U+FFFD in place
/// of its bad bytes) so that it is reported as not an ID like any other bad value, instead of
/// ending the run.
fn read_lines(mut input: impl BufRead) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|e| anyhow::Error::new(e).context("cannot read standard input"))?;
        if n == 0 {
            return Ok(lines);
        }
        let line = String::from_utf8_lossy(&buf);
        if !line.trim().is_empty() {
            lines.push(line.into_owned());
        }
    }
}

fn decode_one(layout: &Layout, label: &str, raw: &str, now_ms: i64) -> Result<Decoded, String> {
    let id = parse_id(raw)?;
    let parts = layout.decode(id).map_err(|e| e.to_string())?;
    let ms = layout.unix_ms(parts.ticks);
    if ms > now_ms + FUTURE_SLACK_MS {
        return Err(format!(
            "decodes to {} under the {label} layout, which is in the future; is --preset right?",
            rfc3339_ms(ms)
        ));
    }
    Ok(Decoded {
        id: id.to_string(),
        time: rfc3339_ms(ms),
        timestamp_ms: ms,
        worker: parts.worker,
        sequence: parts.sequence,
    })
}

pub fn run(ctx: &Context, args: DecodeArgs) -> anyhow::Result<()> {
    let choice = &ctx.settings.layout.value;
    if let Some(from) = &args.from {
        return range(ctx, &choice.layout, from, args.to.as_deref());
    }
    let now = chrono::Utc::now().timestamp_millis();
    let inputs: Vec<String> = if args.ids.is_empty() || args.ids == ["-"] {
        read_lines(std::io::stdin().lock())?
    } else {
        args.ids
    };
    if inputs.is_empty() {
        return Err(usage(
            "no IDs to decode",
            "pass IDs as arguments or one per line on stdin",
        ));
    }
    let mut good = Vec::with_capacity(inputs.len());
    let mut bad = 0usize;
    for raw in &inputs {
        match decode_one(&choice.layout, &choice.label, raw, now) {
            Ok(d) => good.push(d),
            Err(reason) => {
                bad += 1;
                eprintln!("error: {:?}: {reason}", raw.trim());
            }
        }
    }
    if !good.is_empty() {
        match ctx.output {
            OutputFormat::Json => print_json(&good)?,
            OutputFormat::Text => {
                let worker_col = if choice.label == Preset::Sonyflake.name() {
                    "machine"
                } else {
                    "worker"
                };
                let mut t = table(&["id", "time (UTC)", "age", worker_col, "sequence"]);
                for d in &good {
                    t.add_row(vec![
                        d.id.clone(),
                        d.time.clone(),
                        age(d.timestamp_ms, now),
                        d.worker.to_string(),
                        d.sequence.to_string(),
                    ]);
                }
                print_text(&t.to_string())?;
            }
        }
    }
    if bad > 0 {
        eprintln!(
            "  hint: {bad} of {} values are not IDs of the {} layout",
            inputs.len(),
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
    let parse = |flag: &str, s: &str| {
        parse_instant(s).map_err(|e| {
            usage(
                format!("invalid {flag} {s:?}: {e}"),
                "for example --from 2026-11-21T10:00:00Z",
            )
        })
    };
    let from_ms = parse("--from", from)?;
    let to_ms = match to {
        Some(t) => parse("--to", t)?,
        None => chrono::Utc::now().timestamp_millis(),
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
    match ctx.output {
        OutputFormat::Json => print_json(&r),
        OutputFormat::Text => print_text(&format!(
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

    #[test]
    fn stdin_lines_that_are_not_utf8_are_values_not_a_failure() {
        let lines = read_lines(&b"1\n\xff\xfe\n\n  \r\n2\r\n3"[..]).unwrap();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(parse_id(&lines[0]), Ok(1));
        assert!(parse_id(&lines[1]).unwrap_err().contains("not a number"));
        assert_eq!(parse_id(&lines[2]), Ok(2));
        assert_eq!(parse_id(&lines[3]), Ok(3));
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
                let _ = decode_one(&preset.layout(), preset.name(), &raw, 1_800_000_000_000);
            }
            let lines = read_lines(&bytes[..]).unwrap();
            prop_assert!(lines.len() <= bytes.iter().filter(|&&b| b == b'\n').count() + 1);
            for line in &lines {
                let _ = parse_id(line);
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
