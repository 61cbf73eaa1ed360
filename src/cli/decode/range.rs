//! `decode --from/--to`: the smallest and largest ID of a time range.

use leafctl::snowflake::Layout;
use serde::Serialize;

use super::super::Context;
use super::super::error::usage;
use super::super::output::rfc3339_ms;
use super::super::time::{parse_instant, parse_instant_end};
use super::rows::print_record;

#[derive(Debug, Serialize)]
struct Range {
    from: String,
    to: String,
    min_id: String,
    max_id: String,
}

pub(super) fn range(
    ctx: &Context,
    layout: &Layout,
    from: &str,
    to: Option<&str>,
) -> anyhow::Result<()> {
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
    print_record(
        ctx,
        &["from", "to", "min_id", "max_id"],
        &[&r.from, &r.to, &r.min_id, &r.max_id],
        &r,
        || {
            format!(
                "from    {}\nto      {}\nmin_id  {}\nmax_id  {}\nSQL:    WHERE id BETWEEN {} AND {}",
                r.from, r.to, r.min_id, r.max_id, r.min_id, r.max_id
            )
        },
    )
}
