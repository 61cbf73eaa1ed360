//! `leafctl db`: the segment database - opening it for every command, and `db init`.

use clap::Subcommand;
use leafctl::config::Origin;
use leafctl::db::{self, Database, DbAddress, OpenMode};
use leafctl::segment::AllocStore;
use serde::Serialize;

use super::Context;
use super::output::{OutputFormat, print_json, print_text};

/// The databases help's examples show on a server (those that keep worker ids too), in the
/// order of [`db::DATABASES`].
pub fn example_databases() -> Vec<Database> {
    db::registry_databases().map(|(d, _)| d).collect()
}

/// `db init`'s examples, their URLs from [`db::DATABASES`].
fn examples() -> String {
    examples_with(
        "Examples:
  leafctl db init                                   the embedded SQLite database (default)
  leafctl db init --db sqlite:///var/lib/leaf/leaf.db
  leafctl db init --db sqlite://region-1.db --region 1 --regions 2   a database of region 1 of 2
                                                    (see `leafctl region --help`)
",
        &[
            DbExample::Each("  LEAF_DB_PASSWORD=... leafctl db init --db {url}   {name}\n"),
            DbExample::First("  leafctl db init --print --db {url}   the DDL, for a DBA to run\n"),
            DbExample::Hosts("  leafctl db init --db {hosts}   {name} ({picks})\n"),
        ],
        EXPLAINED,
    )
}

/// A line of a help's examples written for the databases [`example_databases`] lists: a
/// template in which `{url}` is a database's example URL, `{name}` its name, `{hosts}` its
/// example URL of several hosts and `{picks}` which of them it picks.
pub enum DbExample {
    /// A line for the first database.
    First(&'static str),
    /// A line for each database.
    Each(&'static str),
    /// A line for each database that has an example of several hosts.
    Hosts(&'static str),
}

/// A help's examples: `before`, then the lines `lines` make for the databases, then `after`.
/// What `db init`, `next` and `serve` write their examples with.
pub fn examples_with(before: &str, lines: &[DbExample], after: &str) -> String {
    let dbs = example_databases();
    let mut text = String::from(before);
    for line in lines {
        let (template, of) = match line {
            DbExample::First(t) => (t, &dbs[..dbs.len().min(1)]),
            DbExample::Each(t) | DbExample::Hosts(t) => (t, &dbs[..]),
        };
        for d in of {
            let hosts = match (line, d.example_hosts) {
                (DbExample::Hosts(_), None) => continue,
                (_, hosts) => hosts.unwrap_or_default(),
            };
            text.push_str(
                &template
                    .replace("{url}", d.example_url)
                    .replace("{name}", d.name)
                    .replace("{hosts}", hosts.0)
                    .replace("{picks}", hosts.1),
            );
        }
    }
    text + after
}

/// What `db init --help` says after the examples.
const EXPLAINED: &str = "
Without --db/LEAF_DB/db.url, leafctl uses its own SQLite file ($XDG_DATA_HOME/leafctl/leaf.db),
which gets its table on first use; a database named explicitly must be set up with `db init`
(any other command there says so).

The table is Leaf's leaf_alloc, unchanged: a table created by Leaf's scripts/leaf_alloc.sql works
as it is, and Leaf servers and leafctl can share it. Beside it, leaf_alloc_removed keeps the last
max_id of each removed tag, so `leafctl tag add` of that name continues above every ID it issued;
Leaf's servers never read it (a database without it gets it from the first `leafctl tag remove`).";

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe
    /// to run again)
    #[command(after_help = examples())]
    Init {
        /// Print the DDL instead of running it (nothing is connected to)
        #[arg(long)]
        print: bool,
    },
}

/// Opens the configured database. The embedded default (no --db, LEAF_DB or db.url) is
/// leafctl's own file and gets its table on first use; any URL given explicitly must already
/// have the table (`leafctl db init`).
pub fn open(ctx: &Context) -> anyhow::Result<Box<dyn AllocStore>> {
    let s = &ctx.settings;
    let mode = if s.db_url.origin == Origin::Default {
        OpenMode::CreateSchema
    } else {
        OpenMode::Existing
    };
    let password = s.db_password.as_ref().map(|p| p.value.as_str());
    let (store, to_record) =
        DbAddress::parse(&s.db_url.value)?.open_in_region_unrecorded(password, mode, s.region)?;
    if to_record.is_some() {
        ctx.region_to_record.set(to_record);
    }
    Ok(store)
}

#[derive(Serialize)]
struct InitReport {
    database: String,
    table: &'static str,
    ready: bool,
    /// The region recorded in the database (`--region R --regions N`), if one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<u32>,
}

pub fn run(ctx: &Context, cmd: DbCommand) -> anyhow::Result<()> {
    let DbCommand::Init { print } = cmd;
    let s = &ctx.settings;
    let address = DbAddress::parse(&s.db_url.value)?;
    if print {
        let mut text = String::new();
        for stmt in address.segment_ddl() {
            text.push_str(stmt);
            text.push_str(";\n");
        }
        // The region mark, when a region is given: a DBA's database is then that region's.
        if let Some(region) = s.region {
            for stmt in address.region_sql(region) {
                text.push_str(&stmt);
                text.push_str(";\n");
            }
        }
        // The worker id registry of the database, if it keeps worker ids (NotFound9's table).
        if let Some(ddl) = db::db_registry(&s.db_url.value).and_then(db::table_ddl) {
            text.push_str(ddl);
            text.push_str(";\n");
        }
        return print_text(&text);
    }
    let password = s.db_password.as_ref().map(|p| p.value.as_str());
    // The store's connections close before the registry's table is made on one of its own: a
    // pool of one server connection in front (PgBouncer in session mode) would hold the second
    // until the first closed.
    let database = address
        .open_in_region(password, OpenMode::CreateSchema, s.region)?
        .describe();
    db::init_table(&s.db_url.value, password)?;
    let report = InitReport {
        database,
        table: "leaf_alloc",
        ready: true,
        region: s.region.map(|r| r.index()),
        regions: s.region.map(|r| r.count()),
    };
    match ctx.output {
        OutputFormat::Json => print_json(&report),
        OutputFormat::Text => {
            let recorded = s
                .region
                .map(|r| format!(", recorded as {r}"))
                .unwrap_or_default();
            print_text(&format!(
                "leaf_alloc is ready in {}{recorded}",
                report.database
            ))
        }
    }
}
