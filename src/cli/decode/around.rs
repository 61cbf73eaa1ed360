//! `leafctl decode --around ID`: the IDs the same worker made around one ID, for SQL.

use leafctl::idformat::{GuessOptions, around, decode_value};
use serde::Serialize;

use super::super::Context;
use super::super::error::usage;
use super::super::output::rfc3339_ms;
use super::rows::print_record;

#[derive(Debug, Serialize)]
struct AroundOut {
    id: String,
    layout: &'static str,
    time: String,
    worker: Option<u64>,
    from: String,
    to: String,
    min_id: String,
    max_id: String,
    /// The WHERE clause that selects them.
    sql: String,
    /// For an ObjectId, the MongoDB filter on `_id` that selects them.
    #[serde(skip_serializing_if = "Option::is_none")]
    mongo: Option<String>,
}

pub(super) fn run(
    ctx: &Context,
    opts: &GuessOptions,
    raw: &str,
    window_ms: i64,
) -> anyhow::Result<()> {
    let value = decode_value(raw.as_bytes(), opts).map_err(|e| {
        usage(
            format!("--around {raw:?}: {e}"),
            "give one ID: a number, UUID (v6, v7), ULID, KSUID or ObjectId",
        )
    })?;
    let d = value.decoded;
    let a = around(&d, window_ms).map_err(|e| {
        usage(
            format!("--around {raw:?}: {e}"),
            "UUIDv1 IDs cannot be ranged by time; search by the time column instead",
        )
    })?;
    let q = |s: &str| {
        if a.quoted {
            format!("'{s}'")
        } else {
            s.to_string()
        }
    };
    let mut sql = format!("WHERE id BETWEEN {} AND {}", q(&a.min), q(&a.max));
    if let Some(w) = &a.worker_sql {
        sql.push_str(&format!(" AND {w}"));
    }
    let out = AroundOut {
        id: raw.trim().to_string(),
        layout: d.format.name(),
        time: rfc3339_ms(d.unix_ms),
        worker: d.worker,
        from: rfc3339_ms(a.from_ms),
        to: rfc3339_ms(a.to_ms),
        min_id: a.min.clone(),
        max_id: a.max.clone(),
        sql,
        mongo: a.mongo_filter.clone(),
    };
    let worker = out.worker.map_or("-".to_string(), |w| w.to_string());
    let fields = [
        &out.id[..],
        out.layout,
        &out.time,
        &worker,
        &out.from,
        &out.to,
        &out.min_id,
        &out.max_id,
    ];
    let columns = [
        "id", "layout", "time", "worker", "from", "to", "min_id", "max_id",
    ];
    print_record(ctx, &columns, &fields, &out, || {
        let who = match (out.worker, a.per_worker) {
            (Some(w), true) => format!(", {} {}", d.format.worker_name(), fmt_worker(&d, w)),
            _ => String::new(),
        };
        let scope = if a.per_worker {
            format!("the same {}", d.format.worker_name())
        } else {
            "every ID (the format has no worker to follow)".to_string()
        };
        let mongo = out
            .mongo
            .as_ref()
            .map(|m| format!("\nMongoDB: db.COLLECTION.find({m})"))
            .unwrap_or_default();
        format!(
            "id      {} ({}{who})\ntime    {}\nwindow  {} .. {} ({scope})\nmin_id  {}\nmax_id  {}\nSQL:    {}{mongo}",
            out.id, out.layout, out.time, out.from, out.to, out.min_id, out.max_id, out.sql
        )
    })
}

fn fmt_worker(d: &leafctl::idformat::Decoded, w: u64) -> String {
    if d.format.worker_in_hex() {
        format!("{w:x}")
    } else {
        w.to_string()
    }
}
