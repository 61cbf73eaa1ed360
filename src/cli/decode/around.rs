//! `leafctl decode --around ID`: the IDs the same worker made around one ID, for SQL.

use std::ops::Range;

use leafctl::idformat::{
    Around, Decoded, Format, GuessOptions, around, around_workers, decode_value,
};
use leafctl::region::Region;
use serde::Serialize;

use super::super::Context;
use super::super::error::usage;
use super::super::output::rfc3339_ms;
use super::rows::{print_record, region_of};

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

/// The columns of `--around`'s TSV row.
const COLUMNS: [&str; 8] = [
    "id", "layout", "time", "worker", "from", "to", "min_id", "max_id",
];

/// `--around ID`: the IDs the same worker made within `window_ms` either side of the ID's time
/// (with `--region`, every worker of the region: [`in_region`]).
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
    if let Some(region) = ctx.settings.region {
        return in_region(ctx, &d, raw, window_ms, region);
    }
    let a = around(&d, window_ms).map_err(|e| {
        usage(
            format!("--around {raw:?}: {e}"),
            "UUIDv1 IDs cannot be ranged by time; search by the time column instead",
        )
    })?;
    let out = AroundOut::new(raw, &d, &a);
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
    print_record(ctx, &COLUMNS, &fields, &out, || out.text(&d, a.per_worker))
}

impl AroundOut {
    /// The record of the range `a` around `d` (given as `raw`), with the SQL that selects it.
    fn new(raw: &str, d: &Decoded, a: &Around) -> AroundOut {
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
        AroundOut {
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
        }
    }

    /// The record for people: the ID, its window (the same worker's, when `per_worker`), the
    /// bounds and the SQL.
    fn text(&self, d: &Decoded, per_worker: bool) -> String {
        let who = match (self.worker, per_worker) {
            (Some(w), true) => format!(", {} {}", d.format.worker_name(), fmt_worker(d, w)),
            _ => String::new(),
        };
        let scope = if per_worker {
            format!("the same {}", d.format.worker_name())
        } else {
            "every ID (the format has no worker to follow)".to_string()
        };
        let mongo = self
            .mongo
            .as_ref()
            .map(|m| format!("\nMongoDB: db.COLLECTION.find({m})"))
            .unwrap_or_default();
        format!(
            "id      {} ({}{who})\ntime    {}\nwindow  {} .. {} ({scope})\nmin_id  {}\nmax_id  {}\nSQL:    {}{mongo}",
            self.id, self.layout, self.time, self.from, self.to, self.min_id, self.max_id, self.sql
        )
    }
}

#[derive(Debug, Serialize)]
struct RegionAroundOut {
    id: String,
    layout: &'static str,
    time: String,
    /// The region of the ID itself (from its worker field).
    id_region: Option<u32>,
    region: u32,
    regions: u32,
    first_worker: u64,
    last_worker: u64,
    from: String,
    to: String,
    min_id: String,
    max_id: String,
    sql: String,
}

/// The columns of `--around --region`'s TSV row.
const REGION_COLUMNS: [&str; 11] = [
    "id",
    "layout",
    "time",
    "id_region",
    "region",
    "first_worker",
    "last_worker",
    "from",
    "to",
    "min_id",
    "max_id",
];

/// `--around ID --region R --regions N`: the IDs every worker of region R made in the window.
fn in_region(
    ctx: &Context,
    d: &Decoded,
    raw: &str,
    window_ms: i64,
    region: Region,
) -> anyhow::Result<()> {
    let Format::Snowflake(l) = d.format else {
        return Err(usage(
            format!("--around {raw:?} with --region: not a snowflake ID"),
            "drop --region/--regions for other formats",
        ));
    };
    let slice = region.worker_slice(l.layout.worker_bits())?;
    let a = around_workers(d, window_ms, slice.clone()).map_err(|e| {
        usage(
            format!("--around {raw:?} with --region: {e}"),
            "drop --region/--regions, or give a layout with the time on top",
        )
    })?;
    RegionAroundOut::new(raw, d, &a, region, slice).print(ctx)
}

impl RegionAroundOut {
    /// The record of the range `a` around the snowflake ID `d` (given as `raw`) that the
    /// workers of `region` (`slice`) made, with the SQL that selects it.
    fn new(raw: &str, d: &Decoded, a: &Around, region: Region, slice: Range<u64>) -> Self {
        let mut sql = format!("WHERE id BETWEEN {} AND {}", a.min, a.max);
        if let Some(w) = &a.worker_sql {
            sql.push_str(&format!(" AND {w}"));
        }
        RegionAroundOut {
            id: raw.trim().to_string(),
            layout: d.format.name(),
            time: rfc3339_ms(d.unix_ms),
            id_region: region_of(d, region.count()),
            region: region.index(),
            regions: region.count(),
            first_worker: slice.start,
            last_worker: slice.end - 1,
            from: rfc3339_ms(a.from_ms),
            to: rfc3339_ms(a.to_ms),
            min_id: a.min.clone(),
            max_id: a.max.clone(),
            sql,
        }
    }

    /// Prints the record in the run's format: a TSV row, JSON, or the text for people.
    fn print(&self, ctx: &Context) -> anyhow::Result<()> {
        let id_region = self.id_region.map_or("-".to_string(), |r| r.to_string());
        let (region, first, last) = (
            self.region.to_string(),
            self.first_worker.to_string(),
            self.last_worker.to_string(),
        );
        let fields = [
            &self.id[..],
            self.layout,
            &self.time,
            &id_region,
            &region,
            &first,
            &last,
            &self.from,
            &self.to,
            &self.min_id,
            &self.max_id,
        ];
        print_record(ctx, &REGION_COLUMNS, &fields, self, || {
            format!(
                "id      {} ({}, region {} of {})\ntime    {}\nwindow  {} .. {} (every worker of region {}: {} to {})\nmin_id  {}\nmax_id  {}\nSQL:    {}",
                self.id,
                self.layout,
                id_region,
                self.regions,
                self.time,
                self.from,
                self.to,
                self.region,
                self.first_worker,
                self.last_worker,
                self.min_id,
                self.max_id,
                self.sql
            )
        })
    }
}

/// A worker value as its format writes it: hex for a UUID's node or an ObjectId's process.
fn fmt_worker(d: &leafctl::idformat::Decoded, w: u64) -> String {
    if d.format.worker_in_hex() {
        format!("{w:x}")
    } else {
        w.to_string()
    }
}
