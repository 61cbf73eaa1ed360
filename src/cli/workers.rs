//! `leafctl workers`: list, reclaim and check worker ids.

use std::sync::Arc;

use clap::Subcommand;
use leafctl::region::{self, Region};
use leafctl::snowflake::{Clock, SystemClock};
use leafctl::worker::scope::RegionCheck;
use leafctl::worker::{ClockReport, Registry, RegistryKind, WorkerRecord};
use serde::Serialize;

use super::Context;
use super::error::{CliError, usage};
use super::output::{OutputFormat, age, print_json, print_text, render, rfc3339_ms, table};
use super::registry::inspected;

/// `workers`' examples and what a live worker is, the databases' part from
/// [`leafctl::db::DATABASES`].
fn examples() -> String {
    let dbs = leafctl::db::registry_databases();
    let mut lines = String::from(EXAMPLES);
    let mut live = Vec::new();
    for (i, (d, r)) in dbs.enumerate() {
        lines.push_str(&if i == 0 {
            format!(
                "  LEAF_DB_PASSWORD=... leafctl workers list --db {}   leaf_workerid_alloc\n",
                d.example_url
            )
        } else {
            format!(
                "  leafctl workers list --db {}   the same table on {}\n",
                d.example_url, d.name
            )
        });
        live.push(format!("a {} row while {} is held", d.name, r.held_by));
    }
    format!(
        "{lines}\nA worker is live when someone can issue IDs with it now:\n{},\n{EXPLAINED}",
        live.join(",\n")
    )
}

/// `workers`' examples without a database URL.
const EXAMPLES: &str = "\
Examples:
  leafctl workers list --zk zk1:2181
  leafctl --zk zk1:2181 --name order workers list --output json
  leafctl workers reclaim 0 --mode lease --zk zk1:2181    show what would be done
  leafctl workers reclaim 0 --mode lease --zk zk1:2181 --yes
  leafctl workers doctor --zk zk1:2181
  leafctl workers list --etcd http://etcd1:2379,http://etcd2:2379
  leafctl workers reclaim 0 --etcd http://etcd1:2379 --yes   revokes the holder's lease if live
  LEAF_ETCD_USER=leaf LEAF_ETCD_PASSWORD=... leafctl workers doctor --etcd https://etcd1:2379
";

/// What a live worker is, after the databases' rows.
const EXPLAINED: &str = "\
a lease (ZooKeeper or etcd) while its ephemeral node or lease key exists, a forever node while its
temporary node exists or it reported within 3 report intervals (9 s; Leaf's own servers hold no
temporary node). Once the holder exits, a database row or lease is stale at once. reclaim refuses live
workers unless --force is given. etcd does not report its own clock, so doctor --etcd compares
this host with the live holders' reports only (it watches them for up to 4.5 s).";

#[derive(Debug, Subcommand)]
pub enum WorkersCommand {
    /// Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)
    #[command(after_help = examples())]
    List,
    /// Free a worker id: a lease becomes free (keeping its reserved_until), a database row is
    /// marked given back for the next new identity (keeping its max_timestamp), a forever node
    /// is deleted
    #[command(after_help = examples())]
    Reclaim {
        /// A worker id or an identity IP:PORT
        target: String,
        /// Do it (without --yes only says what would be done)
        #[arg(long)]
        yes: bool,
        /// Reclaim even a live worker (two generators could then share the id)
        #[arg(long)]
        force: bool,
        /// Only consider this mode when a worker id exists in both
        #[arg(long, value_name = leafctl::registries::modes(), value_parser = super::parse_registry)]
        mode: Option<RegistryKind>,
    },
    /// Check this host's clock against ZooKeeper's (or etcd's holders') and the live peers' and
    /// print a verdict
    #[command(after_help = examples())]
    Doctor,
}

#[derive(Debug, Serialize)]
struct Row {
    worker: u64,
    identity: String,
    mode: String,
    last_seen: Option<String>,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reserved_until: Option<String>,
    held: bool,
    node: String,
    /// With `--regions N`: the region the worker id belongs to (null: past the last region).
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Option<u32>>,
}

/// The region of `count` worker id `worker` belongs to in `layout` (none past the last one).
fn region_of(worker: u64, layout: &leafctl::snowflake::Layout, count: u32) -> Option<u32> {
    Region::of_worker(worker, layout.worker_bits(), count)
        .ok()
        .map(|r| r.index())
}

fn row(r: &WorkerRecord, ctx: &Context) -> Row {
    let layout = &ctx.settings.layout.value.layout;
    Row {
        region: ctx
            .settings
            .region_count
            .map(|n| region_of(r.worker, layout, n)),
        worker: r.worker,
        identity: r.identity.clone(),
        mode: r.mode.to_string(),
        last_seen: r.last_seen_ms.map(rfc3339_ms),
        status: r.status.to_string(),
        reserved_until: r.reserved_until_ms.filter(|&t| t > 0).map(rfc3339_ms),
        held: r.held,
        node: r.location.clone(),
    }
}

pub fn run(ctx: &Context, cmd: WorkersCommand) -> anyhow::Result<()> {
    match cmd {
        WorkersCommand::List => list(ctx),
        WorkersCommand::Reclaim {
            target,
            yes,
            force,
            mode,
        } => reclaim(ctx, &target, yes, force, mode),
        WorkersCommand::Doctor => doctor(ctx),
    }
}

/// `workers list`: every worker id the registry knows, with its holder and status.
fn list(ctx: &Context) -> anyhow::Result<()> {
    let clock = SystemClock;
    let registry = inspected(ctx)?;
    let now = clock.now_ms();
    let records = registry.list(now)?;
    if !ctx.quiet {
        note_in_use(ctx, registry.as_ref(), &records, now);
    }
    match ctx.output {
        OutputFormat::Json => print_json(&records.iter().map(|r| row(r, ctx)).collect::<Vec<_>>()),
        OutputFormat::Text => list_text(ctx, registry.as_ref(), &records, now),
    }
}

/// Running out visible before it happens: how many of the layout's worker ids are taken (live
/// or held), on stderr so the rows stay rows.
fn note_in_use(ctx: &Context, registry: &dyn Registry, records: &[WorkerRecord], now: i64) {
    let layout = &ctx.settings.layout.value;
    let total = layout.layout.max_worker().saturating_add(1);
    let mut in_use: Vec<u64> = records
        .iter()
        .filter(|r| r.held || r.is_live(now))
        .map(|r| r.worker)
        .collect();
    in_use.sort_unstable();
    in_use.dedup();
    super::error::note(&format!(
        "{} of {total} worker ids in use (live or held) under {}, {} registered; the {} layout holds {total}",
        in_use.len(),
        registry.place(),
        records.len(),
        layout.label
    ));
}

/// `workers list` as a table for people (with a region column under `--regions N`).
fn list_text(
    ctx: &Context,
    registry: &dyn Registry,
    records: &[WorkerRecord],
    now: i64,
) -> anyhow::Result<()> {
    let mut columns = vec!["worker", "identity", "mode", "last report", "status"];
    if ctx.settings.region_count.is_some() {
        columns.push("region");
    }
    let mut t = table(&columns);
    if records.is_empty() {
        let what = format!("no worker ids registered under {}", registry.place());
        // On a terminal a sentence; piped, rows were promised: the header alone,
        // the sentence on stderr (as `tag list`).
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            return print_text(&what);
        }
        if !ctx.quiet {
            super::error::note(&what);
        }
        return print_text(&render(t));
    }
    for r in records {
        let mut cells = vec![
            r.worker.to_string(),
            r.identity.clone(),
            r.mode.to_string(),
            r.last_seen_ms
                .map(|ms| format!("{} ({})", rfc3339_ms(ms), age(ms, now)))
                .unwrap_or_else(|| "-".into()),
            r.status.to_string(),
        ];
        if let Some(reg) = row(r, ctx).region {
            cells.push(reg.map_or("-".into(), |i| i.to_string()));
        }
        t.add_row(cells);
    }
    print_text(&render(t))
}

/// `workers reclaim`: frees one worker id (a dry run without --yes), refusing a live one
/// unless --force.
fn reclaim(
    ctx: &Context,
    target: &str,
    yes: bool,
    force: bool,
    mode: Option<RegistryKind>,
) -> anyhow::Result<()> {
    let clock = SystemClock;
    let registry = inspected(ctx)?;
    let now = clock.now_ms();
    let record = find_worker(registry.as_ref(), target, mode, now)?;
    let plan = registry.reclaim_plan(&record);
    if record.is_live(now) && !force {
        return Err(live_refusal(registry.as_ref(), &record));
    }
    // An id free already: the dry run says so rather than promising a change that
    // --yes would not make, and --yes changes nothing.
    let Some(what) = plan else {
        return free_already(ctx, &record, yes);
    };
    if !yes {
        return print_text(&format!("would {what}\nrun again with --yes to do it"));
    }
    if record.is_live(now) && !ctx.quiet {
        super::error::warning(&format!(
            "worker id {} is live; if its process keeps running, it and the next holder may issue the same IDs",
            record.worker
        ));
    }
    let deleted = registry.reclaim(&record)?;
    match ctx.output {
        OutputFormat::Json => print_json(&serde_json::json!({
            "worker": record.worker,
            "identity": record.identity,
            "mode": record.mode.to_string(),
            "deleted": deleted,
        })),
        OutputFormat::Text => print_text(&if deleted.is_empty() {
            format!("worker id {} was already free", record.worker)
        } else {
            format!(
                "reclaimed worker id {}: deleted {}",
                record.worker,
                deleted.join(", ")
            )
        }),
    }
}

/// The one worker entry `target` (a worker id or an identity IP:PORT) names in `mode` (any
/// when none), or a usage error when it names none or several.
fn find_worker(
    registry: &dyn Registry,
    target: &str,
    mode: Option<RegistryKind>,
    now: i64,
) -> anyhow::Result<WorkerRecord> {
    let matches: Vec<WorkerRecord> = registry
        .list(now)?
        .into_iter()
        .filter(|r| match target.parse::<u64>() {
            Ok(id) => r.worker == id,
            Err(_) => r.identity == target,
        })
        .filter(|r| mode.is_none_or(|m| r.mode == m))
        .collect();
    match matches.as_slice() {
        [] => Err(usage(
            format!("no worker {target:?} under {}", registry.place()),
            "`leafctl workers list` shows the worker ids there are",
        )),
        [one] => Ok(one.clone()),
        _ => Err(usage(
            format!("{target:?} matches {} worker entries", matches.len()),
            "pass --mode forever or --mode lease, or name the identity IP:PORT",
        )),
    }
}

/// The refusal to reclaim a live worker id without --force, saying why it counts as live.
fn live_refusal(registry: &dyn Registry, record: &WorkerRecord) -> anyhow::Error {
    CliError {
        usage: false,
        message: format!(
            "worker id {} ({}) is live: {}; reclaiming it could let two generators share the id",
            record.worker,
            record.identity,
            if record.held {
                registry.held_because(record)
            } else {
                "it reported within the last 9 s"
            }
        ),
        hint: Some(
            "stop that process first; --force overrides, at the risk of duplicate IDs if it is still running"
                .into(),
        ),
    }
    .into()
}

/// `workers reclaim` of an id free already: nothing to do, said the same way with and without
/// `--yes`.
fn free_already(ctx: &Context, record: &WorkerRecord, yes: bool) -> anyhow::Result<()> {
    match ctx.output {
        OutputFormat::Json if yes => print_json(&serde_json::json!({
            "worker": record.worker,
            "identity": record.identity,
            "mode": record.mode.to_string(),
            "deleted": [],
        })),
        _ => print_text(&format!(
            "worker id {} is already free ({}: no process holds it and it was given back); reclaiming it changes nothing, with or without --yes",
            record.worker, record.location
        )),
    }
}

/// `workers doctor`: this host's clock against the registry's and the live holders' (where
/// the registry keeps clocks), and the registry's region mark and worker ids against the region.
fn doctor(ctx: &Context) -> anyhow::Result<()> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let registry = inspected(ctx)?;
    let report = registry.clock_report(&|| clock.now_ms())?;
    let regions = leafctl::worker::scope::region_check(
        registry.as_ref(),
        ctx.settings.worker_scope(),
        ctx.settings.layout.value.layout.worker_bits(),
        clock.now_ms(),
    )?;
    let kind = registry.kind();
    match ctx.output {
        OutputFormat::Json => print_json(&doctor_json(kind, report.as_ref(), &regions))?,
        OutputFormat::Text => {
            let mut t = table(&["check", "result"]);
            match &report {
                Some(report) => clock_rows(&mut t, report),
                None => {
                    t.add_row(vec![
                        "clocks".to_string(),
                        format!("not compared: the {kind} registry keeps no clocks"),
                    ]);
                }
            }
            region_rows(&mut t, &regions);
            let verdict = verdict(kind, report.as_ref(), &regions);
            print_text(&format!("{}\n{verdict}", render(t)))?;
        }
    }
    doctor_outcome(report.as_ref(), &regions)
}

/// `workers doctor`'s last line: FAIL with each region problem, else the clocks' verdict,
/// saying only what was checked.
fn verdict(kind: RegistryKind, report: Option<&ClockReport>, regions: &RegionCheck) -> String {
    if !regions.problems.is_empty() {
        return format!("FAIL: {}", regions.problems.join("\nFAIL: "));
    }
    match report {
        // Say only what was checked: without a region there is no slice to hold ids to.
        None => match regions.checked {
            Some(r) => format!(
                "ok: the {kind} registry keeps no clocks to compare with; its live worker ids lie in {r}'s slice"
            ),
            None => format!(
                "ok: the {kind} registry keeps no clocks to compare with, and no region is set, so nothing else was checked"
            ),
        },
        Some(r) if !r.ok => {
            "FAIL: this host's clock is off; fix NTP before starting a generator here".into()
        }
        Some(r) if r.store_offset_ms.is_some() => format!(
            "ok: this host's clock agrees with {} and the live peers",
            r.store
        ),
        Some(r) if r.peers == 0 => format!(
            "ok: no live peers to compare with ({} does not report its clock)",
            r.store
        ),
        Some(_) => "ok: this host's clock agrees with the live peers".into(),
    }
}

/// `workers doctor`'s JSON: what was compared and found, and whether all is well.
fn doctor_json(
    kind: RegistryKind,
    report: Option<&ClockReport>,
    regions: &RegionCheck,
) -> serde_json::Value {
    serde_json::json!({
        "registry": kind.name(),
        "clocks_compared": report.is_some(),
        "zk_offset_ms": report.and_then(|r| r.store_offset_ms),
        "round_trip_ms": report.map(|r| r.round_trip_ms),
        "peers": report.map(|r| r.peers),
        "peer_offset_ms": report.and_then(|r| r.peer_offset_ms),
        "max_skew_ms": report.map(|r| r.max_skew_ms),
        "region_mark": regions.mark.as_ref().and_then(|m| m.recorded).map(region::to_record),
        "region_checked": regions.checked.map(region::to_record),
        "outside_slice": regions.outside,
        "problems": regions.problems,
        "ok": report.is_none_or(|r| r.ok) && regions.problems.is_empty(),
    })
}

/// `workers doctor`'s exit: 1 when a region problem was found or the clock is off.
fn doctor_outcome(report: Option<&ClockReport>, regions: &RegionCheck) -> anyhow::Result<()> {
    if !regions.problems.is_empty() {
        return Err(CliError {
            usage: false,
            message: format!("region check failed: {}", regions.problems.join("; ")),
            hint: Some(
                "point each region's processes at their own registry with their own --region; reclaim worker ids outside the slice once their holders are gone (`leafctl workers reclaim ID --yes`)"
                    .into(),
            ),
        }
        .into());
    }
    if report.is_none_or(|r| r.ok) {
        Ok(())
    } else {
        Err(CliError {
            usage: false,
            message: "clock check failed".into(),
            hint: Some("check NTP on this host (chronyc tracking / timedatectl)".into()),
        }
        .into())
    }
}

/// `workers doctor`'s rows of the clock comparison.
fn clock_rows(t: &mut comfy_table::Table, report: &ClockReport) {
    t.add_row(vec![
        format!("clock vs {}", report.store),
        match report.store_offset_ms {
            Some(o) => format!("{o:+} ms (round trip {} ms)", report.round_trip_ms),
            None => format!(
                "not available: {} does not report its clock (round trip {} ms)",
                report.store, report.round_trip_ms
            ),
        },
    ]);
    t.add_row(vec![
        "clock vs live peers".to_string(),
        match report.peer_offset_ms {
            Some(o) => format!("{o:+} ms (average of {} peers)", report.peers),
            None => "no live peers".into(),
        },
    ]);
    t.add_row(vec![
        "threshold".to_string(),
        format!("{} ms", report.max_skew_ms),
    ]);
}

/// `workers doctor`'s rows of the region check.
fn region_rows(t: &mut comfy_table::Table, regions: &RegionCheck) {
    if let Some(m) = &regions.mark {
        t.add_row(vec![
            "region mark".to_string(),
            match m.recorded {
                Some(r) => format!("{r} ({})", m.place),
                None => format!("none recorded ({})", m.place),
            },
        ]);
    }
    if let Some(r) = regions.checked {
        t.add_row(vec![
            format!("worker ids outside {r}'s slice"),
            if regions.outside.is_empty() {
                "none".to_string()
            } else {
                regions
                    .outside
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ]);
    }
}
