//! `leafctl region`: the region a segment database records (`show`), adding a region beside a
//! running deployment (`add`), and checking several regions' databases (`check`). The rules are
//! the library's (`leafctl::db::regions`, `leafctl::region`).

use clap::Subcommand;
use leafctl::db::DbAddress;
use leafctl::db::regions::{self, Finding, RegionDb, Severity};
use leafctl::region::Region;
use leafctl::segment::{AllocStore, SegmentError};
use serde::Serialize;

use super::Context;
use super::error::{AlreadyReported, CliError, EXIT_RUNTIME, usage};
use super::output::{OutputFormat, print_json, print_text};

const EXAMPLES: &str = "\
Examples:
  leafctl region show --db mysql://leaf@eu/leaf
  leafctl region add --from mysql://leaf@eu/leaf --db mysql://leaf@us/leaf --region 1 --regions 2
      makes the running deployment's database (eu) region 0 of 2, and seeds region 1's new
      database (us) with its tags, above every ID issued so far; safe to run again
  leafctl db init --db postgres://leaf@ap/leaf --region 2 --regions 4
      a new region's empty database, recorded as region 2 of 4
  leafctl region check mysql://leaf@eu/leaf mysql://leaf@us/leaf
      exit 0 when the regions are set up right, 1 when not (--output json for scripts)

Each region keeps its own leaf_alloc and issues segment IDs from its own block below 2^53:
region r of N owns [r * 2^(53-b), (r+1) * 2^(53-b)), b the bits that number N regions (1 for 2,
2 for 3-4, 3 for 5-8). A database records its region in the table leaf_region the first time a
command given --region/--regions with it succeeds (a refused one records nothing); a command given
another region, or none, refuses it.
Passwords: LEAF_DB_PASSWORD (or the configured password) applies to --db, and to --from and
region check's URLs unless a URL carries its own (user:password@).";

#[derive(Debug, Subcommand)]
pub enum RegionCommand {
    /// Show the region the database (--db) records, if any
    #[command(after_help = EXAMPLES)]
    Show,
    /// Add a region beside a running deployment: record the old database's region (region 0
    /// when it has none), record --region in the new database (--db), create its tables and add
    /// every old tag there at the start of the new region's block (safe to run again)
    #[command(after_help = EXAMPLES)]
    Add {
        /// The running deployment's database (any region of it)
        #[arg(long, value_name = "URL")]
        from: String,
    },
    /// Check several regions' databases against each other: each records a region, all the same
    /// count, no region twice, every tag inside its region's block; a tag some regions lack is a
    /// note. Exit 0 when all is well, 1 when something is wrong
    #[command(after_help = EXAMPLES)]
    Check {
        /// Each region's database
        #[arg(value_name = "URL", required = true, num_args = 2..)]
        urls: Vec<String>,
    },
}

#[derive(Serialize)]
struct Mark {
    database: String,
    region: Option<u32>,
    regions: Option<u32>,
    /// The block of segment IDs the region owns, `[start, end)`, as decimal strings.
    block: Option<[String; 2]>,
}

fn mark(database: String, region: Option<Region>) -> Mark {
    Mark {
        database,
        region: region.map(|r| r.index()),
        regions: region.map(|r| r.count()),
        block: region.map(|r| {
            let b = r.segment_block();
            [b.start.to_string(), b.end.to_string()]
        }),
    }
}

fn mark_text(m: &Mark) -> String {
    match (m.region, m.regions, &m.block) {
        (Some(r), Some(n), Some([start, end])) => {
            format!(
                "{}: region {r} of {n}, segment IDs [{start}, {end})",
                m.database
            )
        }
        _ => format!("{}: no region recorded", m.database),
    }
}

pub fn run(ctx: &Context, cmd: RegionCommand) -> anyhow::Result<()> {
    let s = &ctx.settings;
    let password = s.db_password.as_ref().map(|p| p.value.as_str());
    match cmd {
        RegionCommand::Show => {
            let store = DbAddress::parse(&s.db_url.value)?.open_for_inspection(password)?;
            let m = mark(
                store.describe(),
                leafctl::segment::recorded_region(store.as_ref())?,
            );
            match ctx.output {
                OutputFormat::Json => print_json(&m),
                OutputFormat::Text => print_text(&mark_text(&m)),
            }
        }
        RegionCommand::Add { from } => add(ctx, &from),
        RegionCommand::Check { urls } => check(ctx, &urls),
    }
}

#[derive(Serialize)]
struct AddReport {
    old: Mark,
    old_recorded_now: bool,
    new: Mark,
    tags_added: u64,
    tags_existing: Vec<String>,
    /// Removed tags whose tombstones were carried over (their IDs reached the new block).
    tombstones_carried: u64,
    /// Tags not added: a removed tag of the name used the new block up.
    tags_used_up: Vec<String>,
}

/// `region add`: the old database's region recorded (region 0 when it has none), the new one
/// (--db) made the new region's, and every old tag seeded there; both checked before either
/// records anything.
fn add(ctx: &Context, from: &str) -> anyhow::Result<()> {
    let s = &ctx.settings;
    let Some(region) = s.region else {
        return Err(usage(
            "region add needs the new region: --region R --regions N",
            "give the new region's number and the region count, e.g. --region 1 --regions 2",
        ));
    };
    let password = s.db_password.as_ref().map(|p| p.value.as_str());
    let new_address = DbAddress::parse(&s.db_url.value)?;
    let old = open_other(ctx, from)?;
    if new_address.redacted() == old.describe() {
        return Err(usage(
            format!("--from and --db are the same database ({})", old.describe()),
            "give --db the new region's own database",
        ));
    }
    // Both databases are checked before either records its region: a refused `region add`
    // records nothing anywhere.
    let prepared = prepare_old(old.as_ref(), region, from)?;
    // The registry's table first, on a connection closed before the store opens its own (a pool
    // of one server connection in front would hold the second until the first closed).
    new_address.init_registry_table(password)?;
    let quiet = ctx.quiet;
    let progress = |done| {
        if !quiet && done % 1000 == 0 {
            super::error::progress(&format!("region add: {done} tags seeded"));
        }
    };
    let (new, seeded) = regions::add_region(
        prepared,
        old.as_ref(),
        (&new_address, password),
        region,
        progress,
    )?;
    let report = AddReport {
        old: mark(old.describe(), Some(prepared.region)),
        old_recorded_now: prepared.recorded_now,
        new: mark(new.describe(), Some(region)),
        tags_added: seeded.added,
        tags_existing: seeded.existing,
        tombstones_carried: seeded.tombstones,
        tags_used_up: seeded.used_up,
    };
    match ctx.output {
        OutputFormat::Json => print_json(&report),
        OutputFormat::Text => print_text(&add_text(&report, region)),
    }
}

/// The old database's region for a deployment adding `region` ([`regions::prepare_old_region`]),
/// nothing recorded yet. A tag outside the old region's block is the old database's to repair:
/// the hint names `from`'s URL.
fn prepare_old(
    old: &dyn AllocStore,
    region: Region,
    from: &str,
) -> anyhow::Result<regions::OldRegion> {
    regions::prepare_old_region(old, region).map_err(|e| match e {
        SegmentError::OutsideBlock {
            ref tag,
            max_id,
            floor,
            ceiling,
            ..
        } => {
            let url = leafctl::db::url_without_password(from);
            let flags = format!(" --db {}", leafctl::segment::tag_for_shell(&url));
            anyhow::Error::new(CliError {
                usage: false,
                hint: Some(super::error::outside_block_hint(
                    tag,
                    max_id,
                    (floor, ceiling),
                    &flags,
                )),
                message: e.to_string(),
            })
        }
        e => e.into(),
    })
}

/// `region add`'s report for people: both databases' regions, what was seeded, carried and
/// left, and how to run the new region.
fn add_text(report: &AddReport, region: Region) -> String {
    let mut text = format!(
        "{}{}\n{}\nadded {} tag(s) at {}",
        mark_text(&report.old),
        if report.old_recorded_now {
            " (recorded now)"
        } else {
            ""
        },
        mark_text(&report.new),
        report.tags_added,
        region.segment_block().start,
    );
    if report.tombstones_carried > 0 {
        text.push_str(&format!(
            "\n{} removed tag(s) had issued IDs in the new block: their tombstones were carried over, so a re-add there starts above them",
            report.tombstones_carried
        ));
    }
    if !report.tags_used_up.is_empty() {
        text.push_str(&format!(
            "\n{} tag(s) were not added: a removed tag of the name issued IDs up to the new block's end, so the name has none left there: {}",
            report.tags_used_up.len(),
            excerpt_list(&report.tags_used_up)
        ));
    }
    if !report.tags_existing.is_empty() {
        text.push_str(&format!(
            "\n{} tag(s) were there already and were left as they are: {}",
            report.tags_existing.len(),
            excerpt_list(&report.tags_existing)
        ));
    }
    text.push_str(&format!(
        "\n  next: run the new region with --region {} --regions {}",
        region.index(),
        region.count()
    ));
    text
}

/// At most 10 names, then how many more.
fn excerpt_list(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

#[derive(Serialize)]
struct CheckReport {
    ok: bool,
    databases: Vec<Mark>,
    findings: Vec<Finding>,
}

/// Opens a database other than `--db` (`--from`, `region check`'s URLs) to read it: with the
/// password its URL carries, else with the one given for `--db` (`LEAF_DB_PASSWORD`, a password
/// file, the config), so one password serves databases of one user. A refused login names the
/// password that was tried.
fn open_other(ctx: &Context, url: &str) -> anyhow::Result<Box<dyn AllocStore>> {
    let s = &ctx.settings;
    let own = leafctl::db::url_has_password(url);
    let given = s.db_password.as_ref().filter(|_| !own);
    let opened = DbAddress::parse(url)?.open_for_inspection(given.map(|p| p.value.as_str()));
    opened.map_err(|e| match e {
        SegmentError::AccessDenied { .. } => {
            let from = if own {
                Some("the URL".to_string())
            } else {
                given.and_then(|_| s.db_password_source())
            };
            anyhow::Error::new(CliError {
                usage: false,
                hint: Some(super::error::access_hint(from.as_deref())),
                message: e.to_string(),
            })
        }
        e => e.into(),
    })
}

fn check(ctx: &Context, urls: &[String]) -> anyhow::Result<()> {
    let mut dbs = Vec::with_capacity(urls.len());
    for url in urls {
        let store = open_other(ctx, url)?;
        dbs.push(RegionDb::read(store.as_ref())?);
    }
    let findings = regions::check_regions(&dbs);
    let ok = !findings.iter().any(|f| f.severity == Severity::Error);
    let report = CheckReport {
        ok,
        databases: dbs
            .iter()
            .map(|d| mark(d.database.clone(), d.region))
            .collect(),
        findings,
    };
    match ctx.output {
        OutputFormat::Json => print_json(&report)?,
        OutputFormat::Text => {
            let mut lines: Vec<String> = report.databases.iter().map(mark_text).collect();
            for f in &report.findings {
                let word = match f.severity {
                    Severity::Error => "error",
                    Severity::Note => "note",
                };
                lines.push(format!("{word}: {}", f.message));
            }
            lines.push(if ok {
                "the regions are set up right: no two can issue the same ID".into()
            } else {
                "the regions are NOT set up right: fix the errors above before they issue IDs"
                    .into()
            });
            print_text(&lines.join("\n"))?
        }
    }
    if ok {
        Ok(())
    } else {
        Err(AlreadyReported(EXIT_RUNTIME).into())
    }
}
