//! The nemesis (issue 28): every fault of the suite at once, drawn from a seed, against real
//! processes on a private network of namespaces (`support::netns`).
//!
//! Topology: three database hosts, each running a node of one Galera cluster and a member of
//! one registry ensemble (ZooKeeper, or etcd in the second run); three server hosts, each
//! running `leafctl serve --segment --snowflake` on a URL listing every Galera node (in its own
//! order) and the registry's hosts, with its wall clock read from a file (libfaketime) and its
//! link through this process (so it can be made lossy or slow). Clients on each server host ask
//! for segment and snowflake IDs without pause, and `leafctl next` runs beside them.
//!
//! A seeded schedule (`support::nemesis::schedule`) starts a fault every 0.5-4 s and heals it
//! 1-12 s later: SIGKILL and restart or SIGSTOP/SIGCONT of any server, Galera node or registry
//! member, a partition of any host, a lossy or slow link, a clock step forward or back, a Galera
//! node leaving and rejoining. One cut of a server lasts 26-32 s, longer than a claim takes to give
//! up, with batches of a tag no client asks for before, early and late in it (`long_cut`). Faults on
//! different servers and on a server's process, link and
//! clock overlap; one fault at a time on the database side keeps both clusters' quorum.
//!
//! The same seed draws what users and operators do (issue 33): batches of 1-100,000 IDs (some
//! inside outages), clients dropping mid-batch, `leafctl tag` remove/add/bump/set-step on extra
//! tags the clients ask for, graceful restarts and restarts under a new `--instance`, with 3
//! worker bits so one run sees more identities than worker ids. Beside the answers, each
//! server's `/cache` and the registry's `workers list` are sampled.
//!
//! Afterwards the checker (`support::nemesis::check`) reads the whole history. A failure prints
//! the seed, the schedule, what was done when, and the history around each problem, with the
//! command that replays the schedule: `scripts/nemesis --registry zk --seed S --seconds N`.
//! The seed and length come from `LEAF_NEMESIS_SEED` and `LEAF_NEMESIS_SECONDS` (CI: fixed
//! seeds, 60 s); `LEAF_NEMESIS_SHOW` (`scripts/nemesis --show`) prints the schedule and what was
//! done for a run that passed too. See RELIABILITY.md, "The nemesis".
//!
//! The multi-region run (issue 37, `nemesis_across_regions`) splits the deployment into 2 or 3
//! regions (`LEAF_NEMESIS_REGIONS`) on nets of their own joined by a 50 ms WAN
//! (`support::regions`): each region its own MariaDB or PostgreSQL, ZooKeeper or etcd, and two
//! `serve --region r --regions N`. Its schedule (`support::nemesis::region_schedule`) cuts
//! regions off from the others and heals them, beside the faults that apply there (a server's
//! process, link and clock, a region's database or registry paused or killed), batches and
//! restarts; the checker reads every answer of every region (no ID twice across regions) and
//! each ID against its region's share (`check_regions`). Replay: `scripts/nemesis --registry
//! regions ...`.

#[path = "../support/mod.rs"]
mod support;

// One concern a file: `world` (the processes a run starts and what it records), `clients` (the
// requests and samples beside the faults), `faults` (the schedule applied), `operator` (the
// `leafctl tag` and `region add` commands), `single_region` and `multi_region` (the two runs end
// to end), `ending` (recovery, the history gathered and the problems shown), and `checker` (the
// checker's own tests on made-up histories).
mod checker;
mod clients;
mod ending;
mod faults;
mod multi_region;
mod operator;
mod schedules;
mod single_region;
mod world;

use std::sync::Mutex;
use std::time::Duration;

use multi_region::{RegionRun, nemesis_regions};
use single_region::{Run, nemesis};
use support::nemesis::TAGS;
use world::Kind;

const TAG: &str = TAGS[0];
/// A tag only the start and recovery probes ask for: the checker judges what the clients asked
/// (IDs answered against the server's own count), and a probe's answer is not in the history.
const PROBE_TAG: &str = "nem_probe";
const SEG: &str = "/api/segment/get/nem_probe";
/// The snowflake layout of the run: 3 worker bits (`WORKER_IDS` ids), so restarts under new
/// identities outnumber the ids within one short run.
const LAYOUT: &str = "41,3,19";
/// Each server's `/cache` is read this often (for the buffer rule).
const CACHE_EVERY: Duration = Duration::from_millis(300);
/// The registry's `workers list` is read this often (for the worker rule).
const WORKERS_EVERY: Duration = Duration::from_millis(1_500);
/// An operator retries a `leafctl tag` command that failed (the database unreachable, say) for
/// this long; one still failing after it is a problem.
const OPERATOR_BOUND: Duration = Duration::from_secs(30);
const SNOW: &str = "/api/snowflake/get/nem";
/// After the last fault heals, every server issues both kinds of ID again within this.
const RECOVERY_BOUND: Duration = Duration::from_secs(45);
/// A `leafctl next` run that has not ended after this is killed and reported.
const NEXT_BOUND: Duration = Duration::from_secs(40);
/// IDs per `next` run.
const NEXT_COUNT: usize = 200;

/// One topology at a time: two on two cores would measure the machine, not leafctl.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// CI's schedule on ZooKeeper: 60 s of faults on a fixed seed (`scripts/nemesis` for others).
#[test]
fn nemesis_on_galera_and_a_zookeeper_ensemble() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    nemesis(&Run::from_env(Kind::Zk, 1));
}

/// The same over an etcd cluster.
#[test]
fn nemesis_on_galera_and_an_etcd_cluster() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    nemesis(&Run::from_env(Kind::Etcd, 2));
}

/// CI's multi-region schedule: two regions (MariaDB + ZooKeeper, PostgreSQL + etcd), 60 s of
/// region partitions and the other faults on a fixed seed (`scripts/nemesis --registry regions`
/// for others, `--regions 3` for three).
#[test]
fn nemesis_across_regions() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    nemesis_regions(&RegionRun::from_env(3));
}
