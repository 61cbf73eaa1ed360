//! The nemesis (issues 28 and 33): a seeded schedule of overlapping faults and of what users and
//! operators do (batches of every size, tags added, removed, re-added, bumped and re-stepped,
//! graceful restarts, restarts under a new identity, clients dropping mid-batch), the history of
//! every answer the clients saw with what was sampled beside it (each server's `/cache`, the
//! registry's `workers list`), and the checker that reads all of it afterwards. The topology and
//! the hands that apply the steps are in `tests/nemesis/main.rs`; everything here is pure, so the
//! checker itself is tested on histories made up to break each rule.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

/// splitmix64: a small, well-mixed generator; one seed gives one schedule on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next() as usize % items.len()]
    }
}

/// One fault, on one process or link. Servers, database nodes and registry members are
/// numbered 0..3; database host `i` runs Galera node `i` and registry member `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// SIGKILL a `serve`, start it again (same command, state and clock) when the fault heals.
    KillServer(usize),
    /// SIGSTOP a `serve`, SIGCONT it when the fault heals (long enough to lose its lease).
    PauseServer(usize),
    /// Cut a server's host off the network (its clients are on the host and still reach it).
    CutServer(usize),
    /// Drop `loss` percent of the frames of a server's link, both ways, and delay the rest.
    LossyServer {
        server: usize,
        loss: u32,
        delay_ms: u64,
    },
    /// Delay the frames towards a server's host only.
    SlowServer { server: usize, delay_ms: u64 },
    /// Step a server's wall clock by `ms` (negative: back), and back to true time at the heal.
    ClockStep { server: usize, ms: i64 },
    /// SIGKILL a Galera node; it rejoins by IST at the heal.
    KillDb(usize),
    /// Stop a Galera node cleanly (it leaves the cluster); it rejoins at the heal.
    LeaveDb(usize),
    /// SIGSTOP a Galera node.
    PauseDb(usize),
    /// SIGKILL a registry member (ZooKeeper), restarted at the heal.
    KillRegistry(usize),
    /// SIGSTOP a registry member.
    PauseRegistry(usize),
    /// Cut a database host (its Galera node and its registry member) off the network.
    CutDbHost(usize),
    /// Cut region `r` off from every other region, both ways (the multi-region nemesis: each
    /// region has its own database and registry, so nothing of an ID's path crosses the cut).
    /// There, `PauseDb(r)`, `KillDb(r)`, `PauseRegistry(r)` and `KillRegistry(r)` pause or kill
    /// (and restart at the heal) region `r`'s database and registry.
    CutRegion(usize),
    // What users and operators do (issue 33): drawn from the seed beside the faults.
    /// A client asks server `server` for `count` IDs of `TAGS[tag]` at once; `outage`: drawn
    /// inside a fault that cuts the server off its database (or takes a Galera node away).
    Batch {
        server: usize,
        tag: usize,
        count: u64,
        outage: bool,
    },
    /// A client asks for `count` IDs and closes the connection after reading `after_bytes` of
    /// the answer (0: right after sending the request).
    DropBatch {
        server: usize,
        tag: usize,
        count: u64,
        after_bytes: u64,
    },
    /// `leafctl tag ...` on `TAGS[tag]` (never the main tag, 0) while the servers serve it.
    Tag { tag: usize, op: TagOp },
    /// SIGTERM a `serve`, wait for its exit, start it again; `new_identity`: under a new
    /// `--instance` (a pod with a new IP), else under the same one.
    Restart { server: usize, new_identity: bool },
    /// The multi-region nemesis (issue 45): `leafctl tag ...` on `TAGS[tag]` in region
    /// `region`'s database, with the region's flags, from its database host.
    RegionTag {
        region: usize,
        tag: usize,
        op: TagOp,
    },
    /// The multi-region nemesis: `leafctl region add --from` region 0's database `--db` region
    /// `region`'s (`region` > 0), as an operator re-runs it to seed the tags region 0 has: it
    /// re-adds the tags removed in that region (above their tombstones) and carries tombstones.
    RegionAdd { region: usize },
}

/// An operator's `leafctl tag` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TagOp {
    /// `tag add` of a name never removed.
    Add,
    /// `tag add` of a name removed before (its IDs must not come again).
    ReAdd,
    /// `tag remove --yes`.
    Remove,
    /// `tag bump --to` the current `max_id` plus `by`.
    Bump { by: u64 },
    /// `tag set-step`.
    SetStep(u32),
}

/// The segment tags of a run: the main one (0) is served all along and never touched by an
/// operator; the others are removed, re-added, bumped and re-stepped by the schedule while
/// clients ask for them. The first [`ADDED_AT_START`] are added before the run, the last one by
/// the schedule (clients ask for it before it exists too).
pub const TAGS: [&str; 4] = ["nem", "nem_a", "nem_b", "nem_c"];
pub const ADDED_AT_START: usize = 3;

/// What must not overlap: one process fault and one link fault and one clock fault per server
/// at a time, and one fault on the database side at a time (so Galera and the registry keep
/// their quorum of two: the nemesis looks for duplicates, not for a cluster that cannot form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    Process(usize),
    Link(usize),
    Clock(usize),
    DbSide,
    /// One operator: `leafctl tag` commands one at a time.
    Operator,
    /// A region's link to the other regions.
    Region(usize),
    /// Waits for nothing (client requests).
    Free,
}

impl Fault {
    /// A short name per kind, for the counts.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::KillServer(_) => "kill serve",
            Fault::PauseServer(_) => "pause serve",
            Fault::CutServer(_) => "partition serve",
            Fault::LossyServer { .. } => "lossy link",
            Fault::SlowServer { .. } => "slow link",
            Fault::ClockStep { ms, .. } if *ms < 0 => "clock step back",
            Fault::ClockStep { .. } => "clock step forward",
            Fault::KillDb(_) => "kill galera node",
            Fault::LeaveDb(_) => "galera node leaves",
            Fault::PauseDb(_) => "pause galera node",
            Fault::KillRegistry(_) => "kill registry member",
            Fault::PauseRegistry(_) => "pause registry member",
            Fault::CutDbHost(_) => "partition db host",
            Fault::CutRegion(_) => "partition region",
            Fault::Batch { outage: false, .. } => "batch",
            Fault::Batch { outage: true, .. } => "batch in an outage",
            Fault::DropBatch { .. } => "client drops mid-batch",
            Fault::Tag { op, .. } | Fault::RegionTag { op, .. } => match op {
                TagOp::Add => "tag add",
                TagOp::ReAdd => "tag re-add",
                TagOp::Remove => "tag remove",
                TagOp::Bump { .. } => "tag bump",
                TagOp::SetStep(_) => "tag set-step",
            },
            Fault::Restart {
                new_identity: false,
                ..
            } => "graceful restart",
            Fault::Restart {
                new_identity: true, ..
            } => "restart as a new identity",
            Fault::RegionAdd { .. } => "region add",
        }
    }

    /// A user's or operator's action rather than an infrastructure fault.
    pub fn is_action(&self) -> bool {
        matches!(
            self,
            Fault::Batch { .. }
                | Fault::DropBatch { .. }
                | Fault::Tag { .. }
                | Fault::Restart { .. }
                | Fault::RegionTag { .. }
                | Fault::RegionAdd { .. }
        )
    }

    /// The server that may lose its worker id's lease while its process runs on (frozen, cut
    /// off, on a bad link, its clock stepped): it may then hold a second id until the first one's
    /// claim expires.
    pub fn disturbs_lease(&self) -> Option<usize> {
        match *self {
            Fault::PauseServer(i) | Fault::CutServer(i) => Some(i),
            Fault::LossyServer { server, .. }
            | Fault::SlowServer { server, .. }
            | Fault::ClockStep { server, .. } => Some(server),
            _ => None,
        }
    }

    /// Whether the fault is on a registry member (sessions of dead holders may then outlive
    /// their timeout: a new ZooKeeper leader renews every session it inherits).
    pub fn touches_registry(&self) -> bool {
        matches!(
            self,
            Fault::KillRegistry(_) | Fault::PauseRegistry(_) | Fault::CutDbHost(_)
        )
    }

    pub fn slot(&self) -> Slot {
        match *self {
            Fault::KillServer(i) | Fault::PauseServer(i) => Slot::Process(i),
            Fault::Restart { server, .. } => Slot::Process(server),
            Fault::Batch { .. } | Fault::DropBatch { .. } => Slot::Free,
            Fault::Tag { .. } | Fault::RegionTag { .. } | Fault::RegionAdd { .. } => Slot::Operator,
            Fault::CutServer(i)
            | Fault::LossyServer { server: i, .. }
            | Fault::SlowServer { server: i, .. } => Slot::Link(i),
            Fault::ClockStep { server, .. } => Slot::Clock(server),
            Fault::CutRegion(r) => Slot::Region(r),
            _ => Slot::DbSide,
        }
    }

    /// About how long healing takes after the hold (generous: the schedule leaves that long
    /// before the next fault in the same slot).
    pub fn heal_ms(&self) -> u64 {
        match self {
            Fault::KillDb(_) | Fault::LeaveDb(_) => 20_000,
            Fault::PauseDb(_) | Fault::CutDbHost(_) => 8_000,
            Fault::KillRegistry(_) => 8_000,
            Fault::KillServer(_) => 3_000,
            Fault::Restart { .. } => 5_000,
            _ => 500,
        }
    }

    /// The server whose process is down or frozen during this fault (its clients may get no
    /// answer then).
    pub fn silences(&self) -> Option<usize> {
        match *self {
            Fault::KillServer(i) | Fault::PauseServer(i) => Some(i),
            Fault::Restart { server, .. } => Some(server),
            _ => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::KillServer(i) => write!(f, "kill serve {i}"),
            Fault::PauseServer(i) => write!(f, "pause serve {i}"),
            Fault::CutServer(i) => write!(f, "cut serve {i} off"),
            Fault::LossyServer {
                server,
                loss,
                delay_ms,
            } => write!(f, "serve {server}'s link: {loss}% loss, {delay_ms} ms"),
            Fault::SlowServer { server, delay_ms } => {
                write!(f, "serve {server}'s link: {delay_ms} ms inbound")
            }
            Fault::ClockStep { server, ms } => write!(f, "serve {server}'s clock {ms:+} ms"),
            Fault::KillDb(i) => write!(f, "kill galera node {i}"),
            Fault::LeaveDb(i) => write!(f, "galera node {i} leaves"),
            Fault::PauseDb(i) => write!(f, "pause galera node {i}"),
            Fault::KillRegistry(i) => write!(f, "kill registry member {i}"),
            Fault::PauseRegistry(i) => write!(f, "pause registry member {i}"),
            Fault::CutDbHost(i) => write!(f, "cut db host {i} off"),
            Fault::CutRegion(r) => write!(f, "cut region {r} off from the other regions"),
            Fault::Batch {
                server,
                tag,
                count,
                outage,
            } => write!(
                f,
                "batch of {count} {} from serve {server}{}",
                TAGS[tag],
                if outage { " (in an outage)" } else { "" }
            ),
            Fault::DropBatch {
                server,
                tag,
                count,
                after_bytes,
            } => write!(
                f,
                "batch of {count} {} from serve {server}, dropped after {after_bytes} bytes",
                TAGS[tag]
            ),
            Fault::Tag { tag, op } => match op {
                TagOp::Add | TagOp::ReAdd => write!(f, "tag add {}", TAGS[tag]),
                TagOp::Remove => write!(f, "tag remove {} --yes", TAGS[tag]),
                TagOp::Bump { by } => write!(f, "tag bump {} --to max_id+{by}", TAGS[tag]),
                TagOp::SetStep(n) => write!(f, "tag set-step {} {n}", TAGS[tag]),
            },
            Fault::Restart {
                server,
                new_identity,
            } => write!(
                f,
                "SIGTERM serve {server}, start it again{}",
                if new_identity {
                    " as a new identity"
                } else {
                    ""
                }
            ),
            Fault::RegionTag { region, tag, op } => {
                let what = match op {
                    TagOp::Add | TagOp::ReAdd => format!("tag add {} --if-not-exists", TAGS[tag]),
                    TagOp::Remove => format!("tag remove {} --yes", TAGS[tag]),
                    TagOp::Bump { by } => format!("tag bump {} --to max_id+{by}", TAGS[tag]),
                    TagOp::SetStep(n) => format!("tag set-step {} {n}", TAGS[tag]),
                };
                write!(f, "{what} in region {region}")
            }
            Fault::RegionAdd { region } => write!(
                f,
                "region add --from region 0's database --db region {region}'s"
            ),
        }
    }
}

/// One step of a schedule: `fault` starts at `at` (or as soon as its slot is free) and heals
/// `hold` later.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub at: Duration,
    pub fault: Fault,
    pub hold: Duration,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>6.1}s +{:>4.1}s  {}",
            self.at.as_secs_f64(),
            self.hold.as_secs_f64(),
            self.fault
        )
    }
}

/// What the registry under test can suffer (an etcd member is paused or cut, not killed: the
/// test's etcd helper does not restart members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abilities {
    pub registry_restarts: bool,
}

/// The faults of one run: starts spread over `seconds`, 0.5-4 s apart, each held 1-12 s, so
/// two to five are usually active at once. A fault is drawn only for a slot free by then (with
/// the time a heal takes: a Galera node rejoining, a server restarting), so the run's length is
/// the schedule's and nothing queues.
pub fn schedule(seed: u64, seconds: u64, can: Abilities) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let mut steps = Vec::new();
    let mut busy: HashMap<Slot, u64> = HashMap::new();
    let mut at_ms = rng.range(500, 2_000);
    while at_ms < seconds * 1000 {
        let s = rng.range(0, 2) as usize;
        let d = rng.range(0, 2) as usize;
        let mut kinds: Vec<Fault> = vec![
            Fault::KillServer(s),
            Fault::PauseServer(s),
            Fault::CutServer(s),
            Fault::LossyServer {
                server: s,
                loss: rng.range(10, 40) as u32,
                delay_ms: rng.range(20, 300),
            },
            Fault::SlowServer {
                server: s,
                delay_ms: rng.range(200, 1_500),
            },
            Fault::ClockStep {
                server: s,
                ms: *rng.pick(&[-3_000, -500, -5, -2, 1_000, 4_000]),
            },
            Fault::KillDb(d),
            Fault::LeaveDb(d),
            Fault::PauseDb(d),
            Fault::PauseRegistry(d),
            Fault::CutDbHost(d),
        ];
        if can.registry_restarts {
            kinds.push(Fault::KillRegistry(d));
        }
        // Some pauses outlast the registry's lease (4 s session, 3 s etcd TTL).
        let hold = rng.range(1_000, 12_000);
        let fault = *rng.pick(&kinds);
        let free = busy.get(&fault.slot()).is_none_or(|&t| t <= at_ms);
        if free {
            busy.insert(fault.slot(), at_ms + hold + fault.heal_ms());
            steps.push(Step {
                at: Duration::from_millis(at_ms),
                fault,
                hold: Duration::from_millis(hold),
            });
        }
        at_ms += rng.range(500, 4_000);
    }
    steps.extend(actions(seed, seconds, &steps));
    // Stable: a fault and an action due at the same ms keep the order they were drawn in.
    steps.sort_by_key(|s| s.at);
    steps
}

/// The faults and actions of a multi-region run: `servers` servers numbered across the regions
/// (server `i` in region `i / (servers / regions)`), starts 0.5-4 s apart over `seconds`. Beside
/// the faults that apply to one server (kill, pause, cut, lossy or slow link, clock step) and to a
/// region's single database and registry (pause; kill and restart, a registry only where it is
/// ZooKeeper: even regions), a region is cut off from every other region
/// for 5-30 s (regions cut at once overlap: two regions cut leave no two regions joined with two
/// or three regions). Actions: batches of 1..=10,000 IDs of any tag from any server every 0.5-3
/// s, the operator's tag commands and `region add` ([`region_operator`]), and a graceful restart
/// every 3-8 s where the server's process slot is free (half under a new identity). One seed
/// gives one schedule.
pub fn region_schedule(seed: u64, seconds: u64, servers: usize, regions: usize) -> Vec<Step> {
    let mut rng = Rng::new(seed ^ 0x7265_6769_6F6E);
    let mut steps = Vec::new();
    let mut busy: HashMap<Slot, u64> = HashMap::new();
    let end = seconds * 1000;
    let mut at_ms = rng.range(500, 2_000);
    while at_ms < end {
        let s = rng.range(0, servers as u64 - 1) as usize;
        let r = rng.range(0, regions as u64 - 1) as usize;
        let mut kinds: Vec<Fault> = vec![
            Fault::KillServer(s),
            Fault::PauseServer(s),
            Fault::CutServer(s),
            Fault::LossyServer {
                server: s,
                loss: rng.range(10, 40) as u32,
                delay_ms: rng.range(20, 300),
            },
            Fault::SlowServer {
                server: s,
                delay_ms: rng.range(200, 1_500),
            },
            Fault::ClockStep {
                server: s,
                ms: *rng.pick(&[-3_000, -500, -5, 1_000, 4_000]),
            },
            Fault::PauseDb(r),
            Fault::KillDb(r),
            Fault::PauseRegistry(r),
            Fault::CutRegion(r),
            Fault::CutRegion(r),
        ];
        if r.is_multiple_of(2) {
            kinds.push(Fault::KillRegistry(r));
        }
        let fault = *rng.pick(&kinds);
        let hold = match fault {
            Fault::CutRegion(_) => rng.range(5_000, 30_000),
            _ => rng.range(1_000, 12_000),
        };
        if busy.get(&fault.slot()).is_none_or(|&t| t <= at_ms) {
            busy.insert(fault.slot(), at_ms + hold + fault.heal_ms());
            steps.push(Step {
                at: Duration::from_millis(at_ms),
                fault,
                hold: Duration::from_millis(hold),
            });
        }
        at_ms += rng.range(500, 4_000);
    }
    let mut at = rng.range(200, 1_000);
    while at < end {
        let server = rng.range(0, servers as u64 - 1) as usize;
        let count = batch_size(&mut rng, 1, 10_000);
        // Half on the main tag, half on the tags the operator removes and re-adds.
        let tag = if rng.range(0, 1) == 0 {
            0
        } else {
            rng.range(1, TAGS.len() as u64 - 1) as usize
        };
        steps.push(Step {
            at: Duration::from_millis(at),
            fault: Fault::Batch {
                server,
                tag,
                count,
                outage: false,
            },
            hold: Duration::ZERO,
        });
        at += rng.range(500, 3_000);
    }
    steps.extend(region_operator(&mut rng, end, regions));
    let mut at = rng.range(2_000, 5_000);
    while at < end {
        let server = rng.range(0, servers as u64 - 1) as usize;
        let slot = Slot::Process(server);
        if busy.get(&slot).is_none_or(|&t| t <= at)
            && !steps.iter().any(|x| {
                x.fault.slot() == slot && {
                    let from = x.at.as_millis() as u64;
                    from <= at + 6_000 && at <= from + x.hold.as_millis() as u64 + 3_000
                }
            })
        {
            steps.push(Step {
                at: Duration::from_millis(at),
                fault: Fault::Restart {
                    server,
                    new_identity: rng.range(0, 1) == 0,
                },
                hold: Duration::ZERO,
            });
        }
        at += rng.range(3_000, 8_000);
    }
    steps.sort_by_key(|s| s.at);
    steps
}

/// What the operator of a multi-region run does (issue 45), every 2-6 s from 1-4 s on: in a
/// region's database, removes, re-adds, bumps and re-steps the extra tags (every tag is in every
/// region at the start; the main one is never touched), and now and then re-runs `region add`
/// from region 0 to another region, which seeds the tags removed there again. The operator's
/// model of each region's tags is approximate (a `region add` may be refused), so a re-add is
/// `--if-not-exists` and a removal of an absent tag counts as done.
fn region_operator(rng: &mut Rng, end: u64, regions: usize) -> Vec<Step> {
    let mut present = vec![[true; TAGS.len()]; regions];
    let mut removed = vec![[false; TAGS.len()]; regions];
    let mut out = Vec::new();
    let mut at = rng.range(1_000, 4_000);
    while at < end {
        let region = rng.range(0, regions as u64 - 1) as usize;
        let fault = if region > 0 && rng.range(0, 4) == 0 {
            // What region 0 has, region `region` has after it.
            let first = present[0];
            for (to, from) in present[region].iter_mut().zip(first).skip(1) {
                *to |= from;
            }
            Fault::RegionAdd { region }
        } else {
            let tag = rng.range(1, TAGS.len() as u64 - 1) as usize;
            let op = if !present[region][tag] {
                if removed[region][tag] {
                    TagOp::ReAdd
                } else {
                    TagOp::Add
                }
            } else {
                match rng.range(0, 3) {
                    0 | 1 => TagOp::Remove,
                    2 => TagOp::Bump {
                        by: rng.range(1, 1_000_000),
                    },
                    _ => TagOp::SetStep(*rng.pick(&[10, 100, 1_000, 5_000])),
                }
            };
            match op {
                TagOp::Remove => {
                    present[region][tag] = false;
                    removed[region][tag] = true;
                }
                TagOp::Add | TagOp::ReAdd => present[region][tag] = true,
                _ => {}
            }
            Fault::RegionTag { region, tag, op }
        };
        out.push(Step {
            at: Duration::from_millis(at),
            fault,
            hold: Duration::ZERO,
        });
        at += rng.range(2_000, 6_000);
    }
    out
}

/// The region rules of a multi-region run (regions of `count`, server `i` in region
/// `region_of[i]`, Leaf's 10-bit worker field): every snowflake ID a server answered has its
/// worker field inside its region's slice, every segment ID lies inside its region's block.
/// (No ID twice across regions is [`check`]'s rule: segment IDs per tag name, snowflake IDs over
/// all servers, every region's included.) One problem per server and kind, with a count.
pub fn check_regions(history: &[Record], region_of: &[u32], count: u32) -> Vec<String> {
    use leafctl::region::Region;
    let mut outside: BTreeMap<(usize, &'static str), (usize, u64)> = BTreeMap::new();
    for r in history {
        let Source::Server { index, .. } = r.source else {
            continue;
        };
        let region = Region::new(region_of[index], count).expect("a region");
        for &id in r.ids() {
            let (inside, what) = match r.mode {
                Mode::Snowflake => {
                    let worker = (id >> 12) & 0x3FF;
                    (
                        region.worker_slice(10).expect("a slice").contains(&worker),
                        "snowflake IDs outside the region's worker slice",
                    )
                }
                Mode::Segment => (
                    region.segment_block().contains(&(id as i64)),
                    "segment IDs outside the region's block",
                ),
            };
            if !inside {
                let e = outside.entry((index, what)).or_insert((0, id));
                e.0 += 1;
            }
        }
    }
    outside
        .into_iter()
        .map(|((server, what), (n, example))| {
            format!(
                "region: serve {server} (region {} of {count}) answered {n} {what} (e.g. {example})",
                region_of[server]
            )
        })
        .collect()
}

/// How many IDs a batch asks for: log-uniform over `lo..=hi` (a decade drawn first, then a
/// count within it; integers only, so one seed gives one schedule on every machine).
pub fn batch_size(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    let mut decades = Vec::new();
    let mut d = 1u64;
    while d <= hi {
        // The last decade takes `hi` in (100,000 is not a decade of its own).
        let top = if d * 10 > hi / 10 { hi } else { d * 10 - 1 };
        let (a, b) = (d.max(lo), top);
        if a <= b {
            decades.push((a, b));
        }
        if top == hi {
            break;
        }
        d *= 10;
    }
    let (a, b) = *rng.pick(&decades);
    rng.range(a, b)
}

/// Worker ids the nemesis' layout leaves (`--layout 41,3,19`): few enough that one 60 s run
/// restarts servers under more new identities than there are ids.
pub const WORKER_IDS: u64 = 8;

/// What users and operators do during a run, drawn from the seed on a stream of its own (the
/// faults of a seed are the ones it drew before these were added):
/// - a batch every 0.5-3 s from a random server, of 1..=100,000 IDs (log-uniform), half of them
///   for the main tag; and one during every fault that cuts a server off its database or takes
///   a Galera node away, of 10,000..=100,000 IDs (more than a server buffers for a while after
///   its start);
/// - a client dropping its connection mid-batch every 3-10 s;
/// - a `leafctl tag` command every 2-6 s on one of the extra tags: add (or re-add) when it is
///   removed, else remove, bump or set-step;
/// - a graceful restart every 2-5 s where the server's process slot is free (no kill or pause
///   of that server then, and no cut or lossy link), four in five of them under a new identity,
///   so a 60 s run sees more identities than [`WORKER_IDS`].
fn actions(seed: u64, seconds: u64, faults: &[Step]) -> Vec<Step> {
    let mut rng = Rng::new(seed ^ 0x7573_6572_7321);
    let end = seconds * 1000;
    let step = |at: u64, fault: Fault| Step {
        at: Duration::from_millis(at),
        fault,
        hold: Duration::ZERO,
    };
    let mut out = Vec::new();
    // Batches inside outages.
    for f in faults {
        let server = match f.fault {
            Fault::CutServer(i) | Fault::LossyServer { server: i, .. } => Some(i),
            Fault::KillDb(_) | Fault::LeaveDb(_) | Fault::PauseDb(_) | Fault::CutDbHost(_) => {
                Some(rng.range(0, 2) as usize)
            }
            _ => None,
        };
        if let Some(server) = server {
            // Early in the fault, so that the batch is still waiting on its claim when single IDs
            // would wait for a segment (3 s) and a restart does not end it (see below).
            let hold = f.hold.as_millis() as u64;
            let at = f.at.as_millis() as u64 + rng.range(300, (hold / 3).max(300));
            let tag = if rng.range(0, 1) == 0 {
                0
            } else {
                rng.range(1, 3) as usize
            };
            let count = batch_size(&mut rng, 10_000, 100_000);
            if at >= end {
                continue;
            }
            out.push(step(
                at,
                Fault::Batch {
                    server,
                    tag,
                    count,
                    outage: true,
                },
            ));
        }
    }
    // Batches, and clients dropping them.
    let mut at = rng.range(200, 1_000);
    while at < end {
        let server = rng.range(0, 2) as usize;
        let tag = if rng.range(0, 1) == 0 {
            0
        } else {
            rng.range(1, 3) as usize
        };
        let count = batch_size(&mut rng, 1, 100_000);
        out.push(step(
            at,
            Fault::Batch {
                server,
                tag,
                count,
                outage: false,
            },
        ));
        at += rng.range(500, 3_000);
    }
    let mut at = rng.range(1_000, 5_000);
    while at < end {
        let server = rng.range(0, 2) as usize;
        let tag = rng.range(0, 3) as usize;
        let count = batch_size(&mut rng, 1, 100_000);
        let after_bytes = if rng.range(0, 3) == 0 {
            0
        } else {
            rng.range(1, count * 8)
        };
        out.push(step(
            at,
            Fault::DropBatch {
                server,
                tag,
                count,
                after_bytes,
            },
        ));
        at += rng.range(3_000, 10_000);
    }
    // The operator, on the extra tags (all present at the start).
    let mut present = [false; TAGS.len()];
    present[..ADDED_AT_START].fill(true);
    let mut removed = [false; TAGS.len()];
    let mut at = rng.range(1_000, 4_000);
    while at < end {
        let tag = rng.range(1, TAGS.len() as u64 - 1) as usize;
        let op = if !present[tag] {
            if removed[tag] {
                TagOp::ReAdd
            } else {
                TagOp::Add
            }
        } else {
            match rng.range(0, 2) {
                0 => TagOp::Remove,
                1 => TagOp::Bump {
                    by: rng.range(1, 1_000_000),
                },
                _ => TagOp::SetStep(*rng.pick(&[10, 100, 1_000, 5_000])),
            }
        };
        match op {
            TagOp::Remove => {
                present[tag] = false;
                removed[tag] = true;
            }
            TagOp::Add | TagOp::ReAdd => present[tag] = true,
            _ => {}
        }
        out.push(step(at, Fault::Tag { tag, op }));
        at += rng.range(2_000, 6_000);
    }
    // Restarts, where the server's process slot is free of faults (and of earlier restarts), and
    // not while the server is cut off its database (a restart would end the batch in the outage
    // and the single IDs waiting beside it: what the buffer rule looks at).
    let mut taken: Vec<(Slot, u64, u64)> = faults
        .iter()
        .map(|f| {
            let from = f.at.as_millis() as u64;
            let slot = match f.fault {
                Fault::CutServer(i) | Fault::LossyServer { server: i, .. } => Slot::Process(i),
                _ => f.fault.slot(),
            };
            (
                slot,
                from,
                from + f.hold.as_millis() as u64 + f.fault.heal_ms(),
            )
        })
        .collect();
    let mut at = rng.range(2_000, 5_000);
    while at < end {
        let first = rng.range(0, 2) as usize;
        let new_identity = rng.range(0, 4) != 0;
        // The drawn server, else the next one whose slot is free.
        for k in 0..3 {
            let fault = Fault::Restart {
                server: (first + k) % 3,
                new_identity,
            };
            let until = at + fault.heal_ms();
            let free = !taken
                .iter()
                .any(|&(slot, from, to)| slot == fault.slot() && from < until && at < to);
            if free {
                taken.push((fault.slot(), at, until));
                out.push(step(at, fault));
                break;
            }
        }
        at += rng.range(2_000, 5_000);
    }
    out
}

/// Which mode a record is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Segment,
    Snowflake,
}

/// Who answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// Server `index` in its `incarnation`-th process (0: the first; +1 per restart).
    Server { index: usize, incarnation: u32 },
    /// The `run`-th `leafctl next` beside the servers.
    Next { run: u32 },
}

/// What came back.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A 200 with these IDs (in the order of the body).
    Ids(Vec<u64>),
    /// Not an ID: the status and the JSON body's `code` (`"not-json"` when there was none),
    /// and for a segment tag its buffers as the refusal found them (`buffered`, `issued`).
    Refused {
        status: u16,
        code: String,
        buffers: Option<(u64, u64)>,
    },
    /// No HTTP answer (refused, reset, timed out).
    NoAnswer(String),
    /// The client closed the connection mid-answer on purpose; the IDs it had read on complete
    /// lines by then.
    Dropped(Vec<u64>),
    /// A `leafctl next` that ended: its exit code (None: killed by the nemesis' bound), the
    /// IDs it printed on complete lines, and its stderr.
    Exited {
        code: Option<i32>,
        ids: Vec<u64>,
        wanted: usize,
        stderr: String,
    },
}

/// One request (or `next` run) and its outcome; times are since the start of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub source: Source,
    pub mode: Mode,
    /// The segment tag (one of [`TAGS`]) or the snowflake key.
    pub tag: &'static str,
    /// IDs asked for (1: a single-ID request, without `?count=`).
    pub count: u64,
    pub sent: Duration,
    pub done: Duration,
    pub outcome: Outcome,
}

impl Record {
    pub fn ids(&self) -> &[u64] {
        match &self.outcome {
            Outcome::Ids(ids) | Outcome::Exited { ids, .. } | Outcome::Dropped(ids) => ids,
            _ => &[],
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.source {
            Source::Server { index, incarnation } => format!("serve {index}#{incarnation}"),
            Source::Next { run } => format!("next run {run}"),
        };
        let what = match &self.outcome {
            Outcome::Ids(ids) if ids.len() <= 3 => format!("{ids:?}"),
            Outcome::Ids(ids) => format!(
                "{} IDs {}..={}",
                ids.len(),
                ids.iter().min().unwrap_or(&0),
                ids.iter().max().unwrap_or(&0)
            ),
            Outcome::Refused {
                status,
                code,
                buffers: None,
            } => format!("{status} {code}"),
            Outcome::Refused {
                status,
                code,
                buffers: Some((buffered, issued)),
            } => format!("{status} {code} (buffered {buffered}, issued {issued})"),
            Outcome::NoAnswer(e) => format!("no answer ({e})"),
            Outcome::Dropped(ids) => format!("dropped by the client after {} IDs", ids.len()),
            Outcome::Exited {
                code, ids, stderr, ..
            } => format!(
                "exit {code:?}, {} IDs, stderr {:?}",
                ids.len(),
                stderr.lines().last().unwrap_or("")
            ),
        };
        let asked = if self.count > 1 {
            format!(" x{}", self.count)
        } else {
            String::new()
        };
        write!(
            f,
            "{:>8.3}s-{:>8.3}s {who:<14} {:?} {}{asked}: {what}",
            self.sent.as_secs_f64(),
            self.done.as_secs_f64(),
            self.mode,
            self.tag
        )
    }
}

/// A server's process down or frozen from `from` to `to` (the end includes its restart).
#[derive(Clone, Copy, Debug)]
pub struct Silence {
    pub server: usize,
    pub from: Duration,
    pub to: Duration,
}

/// The codes a refusal may carry, per mode: each a clear "not now" with Retry-After.
pub const SEGMENT_REFUSALS: &[&str] = &["not_ready"];
pub const SNOWFLAKE_REFUSALS: &[&str] = &[
    "not_ready",
    "lease_lost",
    "registry_slow",
    "clock_backwards",
];

/// One tag's buffer as a server's `/cache` showed it: the IDs it held, as ranges `[start, end)`
/// (the rest of the current segment, and the other segment when it was loaded).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheSample {
    pub server: usize,
    pub incarnation: u32,
    pub sent: Duration,
    pub done: Duration,
    pub tag: &'static str,
    pub ranges: Vec<(u64, u64)>,
}

impl CacheSample {
    pub fn held(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b.saturating_sub(*a)).sum()
    }
}

/// The worker ids the registry listed as held (`workers list`, `held: true`).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerSample {
    pub sent: Duration,
    pub done: Duration,
    pub held: Vec<u64>,
}

/// One `serve` process: from its start until it was killed or stopped (None: still running at
/// the end of the history).
#[derive(Clone, Debug, PartialEq)]
pub struct Life {
    pub server: usize,
    pub incarnation: u32,
    pub identity: String,
    pub from: Duration,
    pub to: Option<Duration>,
}

/// What was seen beside the answers: when servers were silent, their buffers, the registry's
/// listing, each process's life, and the operator's changes to tags.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// Server processes down or frozen (their clients may get no answer).
    pub silences: Vec<Silence>,
    /// Servers whose lease could be lost while their process ran on (paused, cut off, a bad
    /// link, a clock step), from the fault's start to its heal.
    pub disturbed: Vec<Silence>,
    /// Faults on the registry, start to heal (dead sessions may outlive their timeout).
    pub registry_faults: Vec<(Duration, Duration)>,
    pub caches: Vec<CacheSample>,
    pub workers: Vec<WorkerSample>,
    pub lives: Vec<Life>,
    /// When an operator removed or added a tag (the command's start).
    pub tag_changes: Vec<(Duration, &'static str)>,
    /// How long a dead or cut-off holder's claim may outlive it: the registry's session timeout
    /// or TTL plus slack for its expiry check (0: the worker rule is not checked).
    pub fence: Duration,
}

/// A refusal is judged against the last `/cache` sample of the same process taken at most this
/// long before it was sent.
pub const CACHE_SAMPLE_AGE: Duration = Duration::from_secs(5);
/// A tag removed or added this long before a refusal (a server refreshes its tags every 60 s
/// and drops the buffer of a removed one then) leaves the refusal unjudged.
pub const TAG_CHANGE_SHADOW: Duration = Duration::from_secs(70);
/// The longest a request can take (the client's connect and read timeouts).
const LONGEST_REQUEST: Duration = Duration::from_secs(40);

/// What the checker found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub problems: Vec<String>,
    pub ids: BTreeMap<Mode, usize>,
    /// Segment IDs per tag.
    pub ids_by_tag: BTreeMap<&'static str, usize>,
    /// IDs answered a second (or later) time, in all.
    pub twice: usize,
    pub answers: usize,
    pub refusals: BTreeMap<String, usize>,
    pub no_answer: usize,
    pub dropped: usize,
    /// Segment batches asked for more IDs than the server's buffer held (by its last sample).
    pub beyond_buffer: usize,
    /// Single-ID 503s judged against a `/cache` sample (the rest had none recent enough, or
    /// followed a change of their tag).
    pub refusals_judged: usize,
    /// Of those, the ones refused while the buffer held IDs (one problem per burst).
    pub refused_while_buffered: usize,
    /// Segment refusals judged by the buffers they carry (`buffered`, `issued`): every one
    /// of a known tag; of those, single IDs refused while IDs were buffered, and refusals that
    /// found more IDs handed out than were answered (IDs lost).
    pub refusals_carrying_buffers: usize,
    pub single_refused_with_buffered: usize,
    pub refusals_finding_ids_lost: usize,
    /// `workers list` samples judged (all of them), and of those the ones judged with a
    /// registry fault's longer fence.
    pub worker_samples: usize,
    pub worker_samples_after_registry_faults: usize,
    /// The most worker ids held at once, and the distinct ones ever seen held.
    pub most_held: usize,
    pub worker_ids_seen: usize,
    /// Identities the servers ran under.
    pub identities: usize,
}

/// Reads the whole history:
/// - no ID twice: segment IDs per tag name over the whole run (a tag removed and added again
///   included), snowflake IDs over all servers (one ID is one worker id, time and sequence);
/// - each server incarnation's snowflake IDs ascending (an answer given before a request was
///   sent holds only lower IDs than that request's);
/// - every answer an ID or a refusal with a known code (`404 unknown_tag` too for the tags an
///   operator removes), no answer only while that server was down or frozen, every `next` run
///   its count of IDs or a non-zero exit with a message;
/// - a single ID is never refused (503) while its server's buffer holds IDs for that tag
///   ([`check_buffers`]);
/// - worker ids held never exceed live servers plus those waiting out their fence
///   ([`check_workers`]).
pub fn check(history: &[Record], seen: &Seen) -> Verdict {
    let mut v = Verdict::default();
    let mut order: Vec<usize> = (0..history.len()).collect();
    order.sort_by_key(|&i| (history[i].sent, history[i].done));
    let line_of: HashMap<usize, usize> = order.iter().enumerate().map(|(l, &i)| (i, l)).collect();
    let around = |i: usize| -> String {
        let l = line_of[&i];
        order[l.saturating_sub(3)..(l + 4).min(order.len())]
            .iter()
            .map(|&j| {
                let mark = if j == i { ">>" } else { "  " };
                format!("    {mark} {}\n", history[j])
            })
            .collect()
    };
    // No ID twice: per tag name for segment IDs, over everything for snowflake IDs. Each ID
    // twice is counted; the first `SHOWN` of each space are shown with their history.
    const SHOWN: usize = 20;
    let mut seen_ids: HashMap<(Mode, &'static str), HashMap<u64, usize>> = HashMap::new();
    let mut twice: BTreeMap<(Mode, &'static str), usize> = BTreeMap::new();
    for (i, r) in history.iter().enumerate() {
        let space = match r.mode {
            Mode::Segment => (Mode::Segment, r.tag),
            Mode::Snowflake => (Mode::Snowflake, ""),
        };
        let ids = r.ids();
        *v.ids.entry(r.mode).or_default() += ids.len();
        if r.mode == Mode::Segment && !ids.is_empty() {
            *v.ids_by_tag.entry(r.tag).or_default() += ids.len();
        }
        let map = seen_ids.entry(space).or_default();
        for &id in ids {
            if let Some(&first) = map.get(&id) {
                let n = twice.entry(space).or_default();
                *n += 1;
                v.twice += 1;
                if *n > SHOWN {
                    continue;
                }
                let what = match r.mode {
                    Mode::Segment => format!("Segment ID {id} of tag {}", r.tag),
                    Mode::Snowflake => format!("Snowflake ID {id}"),
                };
                v.problems.push(format!(
                    "{what} answered twice:\n  first:\n{}  again:\n{}",
                    around(first),
                    around(i)
                ));
            } else {
                map.insert(id, i);
            }
        }
    }
    for ((mode, tag), n) in twice {
        if n > SHOWN {
            v.problems.push(format!(
                "{mode:?} IDs {tag} answered twice: {} more beyond the {SHOWN} shown ({n} in all)",
                n - SHOWN
            ));
        }
    }
    for mode in [Mode::Segment, Mode::Snowflake] {
        v.ids.entry(mode).or_default();
    }
    // Snowflake IDs ascending per server incarnation. (Not segment IDs: a batch larger than
    // what the buffer holds is claimed past it, so a later single ID can be lower.)
    let mut runs: BTreeMap<(Source, Mode), Vec<usize>> = BTreeMap::new();
    for (i, r) in history.iter().enumerate() {
        if matches!(r.source, Source::Server { .. })
            && r.mode == Mode::Snowflake
            && matches!(r.outcome, Outcome::Ids(_))
            && !r.ids().is_empty()
        {
            runs.entry((r.source, r.mode)).or_default().push(i);
        }
    }
    for ((source, mode), members) in &runs {
        let mut by_sent = members.clone();
        by_sent.sort_by_key(|&i| history[i].sent);
        let mut by_done = members.clone();
        by_done.sort_by_key(|&i| history[i].done);
        let (mut k, mut high, mut high_at) = (0, 0u64, None);
        for &i in &by_sent {
            while k < by_done.len() && history[by_done[k]].done < history[i].sent {
                let j = by_done[k];
                let top = history[j].ids().iter().copied().max().unwrap_or(0);
                if top >= high {
                    (high, high_at) = (top, Some(j));
                }
                k += 1;
            }
            let low = history[i].ids().iter().copied().min().unwrap_or(0);
            if let Some(j) = high_at
                && low <= high
            {
                v.problems.push(format!(
                    "{source:?} {mode:?}: ID {low} answered after {high} (not ascending):\n{}{}",
                    around(j),
                    around(i)
                ));
            }
        }
    }
    // Every answer an ID or a clear refusal.
    for (i, r) in history.iter().enumerate() {
        match &r.outcome {
            Outcome::Ids(ids) => {
                v.answers += 1;
                if ids.is_empty() {
                    v.problems
                        .push(format!("a 200 without an ID:\n{}", around(i)));
                } else if matches!(r.source, Source::Server { .. }) && ids.len() as u64 != r.count {
                    v.problems.push(format!(
                        "a 200 with {} IDs for a request of {}:\n{}",
                        ids.len(),
                        r.count,
                        around(i)
                    ));
                }
            }
            Outcome::Refused { status, code, .. } => {
                v.answers += 1;
                *v.refusals.entry(format!("{status} {code}")).or_default() += 1;
                let known = match r.mode {
                    Mode::Segment => SEGMENT_REFUSALS,
                    Mode::Snowflake => SNOWFLAKE_REFUSALS,
                };
                // A tag an operator removes is unknown until it is added again.
                let removable = r.mode == Mode::Segment && r.tag != TAGS[0];
                let ok = (*status == 503 && known.contains(&code.as_str()))
                    || (removable && *status == 404 && code == "unknown_tag");
                if !ok {
                    v.problems.push(format!(
                        "an answer that is neither an ID nor a known refusal:\n{}",
                        around(i)
                    ));
                }
            }
            Outcome::NoAnswer(_) => {
                v.no_answer += 1;
                let Source::Server { index, .. } = r.source else {
                    continue;
                };
                let excused = seen.silences.iter().any(|s| {
                    s.server == index
                        && r.sent <= s.to + Duration::from_millis(500)
                        && r.done >= s.from
                });
                if !excused {
                    v.problems.push(format!(
                        "serve {index} left a request unanswered while it ran:\n{}",
                        around(i)
                    ));
                }
            }
            Outcome::Dropped(_) => v.dropped += 1,
            Outcome::Exited {
                code,
                ids,
                wanted,
                stderr,
            } => match code {
                Some(0) if ids.len() == *wanted => {}
                Some(0) => v.problems.push(format!(
                    "`next` exited 0 with {} of {wanted} IDs:\n{}",
                    ids.len(),
                    around(i)
                )),
                Some(_) if stderr.lines().any(|l| l.starts_with("error:")) => {}
                Some(c) => v.problems.push(format!(
                    "`next` exited {c} without an error message ({stderr:?}):\n{}",
                    around(i)
                )),
                None => v.problems.push(format!(
                    "`next` neither finished nor failed within its bound:\n{}",
                    around(i)
                )),
            },
        }
    }
    check_buffers(history, seen, &mut v, &around);
    check_refusal_buffers(history, seen, &mut v, &around);
    check_workers(seen, &mut v);
    v
}

/// Every refusal of a segment request carries its tag's buffers as the refusal found them
/// (`buffered`, `issued`: see the README's error table), and each is judged by them, with no
/// sample needed:
/// - a single ID refused with 503 while `buffered` was above 0 is a problem;
/// - IDs lost: `issued` counts every ID the process handed out for the tag (from its buffers
///   and batch claims), so it can be no more than the IDs answered to requests of that process
///   and tag sent before the refusal ended, plus the whole count of those without a complete
///   answer (no answer, dropped). More is IDs taken and never answered (a failed batch that
///   took the buffer's rest, say): a problem.
///
/// The first rule leaves out a refusal within [`TAG_CHANGE_SHADOW`] after its tag was removed
/// or added (the server drops a removed tag's buffers then). The second needs no such shadow:
/// a tag's new buffers count from 0 while the answers of its old ones still count, which can
/// only hide a loss, never invent one. One problem per process and tag and rule; all are
/// counted.
fn check_refusal_buffers(
    history: &[Record],
    seen: &Seen,
    v: &mut Verdict,
    around: &dyn Fn(usize) -> String,
) {
    type Key = (usize, u32, &'static str);
    let mut requests: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, r) in history.iter().enumerate() {
        if let (Source::Server { index, incarnation }, Mode::Segment) = (r.source, r.mode) {
            requests
                .entry((index, incarnation, r.tag))
                .or_default()
                .push(i);
        }
    }
    let mut reported: std::collections::HashSet<(Key, bool)> = Default::default();
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            let Outcome::Refused {
                status,
                buffers: Some((buffered, issued)),
                ..
            } = r.outcome
            else {
                continue;
            };
            let changed = seen
                .tag_changes
                .iter()
                .any(|&(at, tag)| tag == r.tag && at <= r.done && r.sent <= at + TAG_CHANGE_SHADOW);
            v.refusals_carrying_buffers += 1;
            if status == 503 && r.count == 1 && buffered > 0 && !changed {
                v.single_refused_with_buffered += 1;
                if reported.insert((*key, true)) {
                    v.problems.push(format!(
                        "serve {}#{} refused a single ID of {} (503) while its buffers held {buffered} IDs, as the refusal itself says:\n{}",
                        key.0,
                        key.1,
                        key.2,
                        around(i)
                    ));
                }
            }
            let (mut answered, mut unknown) = (0u64, 0u64);
            for &j in list {
                let o = &history[j];
                if j == i || o.sent > r.done {
                    continue;
                }
                match &o.outcome {
                    Outcome::Ids(ids) => answered += ids.len() as u64,
                    Outcome::NoAnswer(_) | Outcome::Dropped(_) => unknown += o.count,
                    _ => {}
                }
            }
            if issued > answered + unknown {
                v.refusals_finding_ids_lost += 1;
                if reported.insert((*key, false)) {
                    v.problems.push(format!(
                        "serve {}#{} handed out {issued} IDs of {} by its own count when it refused a request ({} IDs, {status}), but answered {answered} to requests sent before then (and up to {unknown} more to requests without a complete answer): {} IDs taken and never answered (lost):\n{}",
                        key.0,
                        key.1,
                        key.2,
                        r.count,
                        issued - answered - unknown,
                        around(i)
                    ));
                }
            }
        }
    }
}

/// A single-ID request refused with 503 while its server's buffer held IDs for that tag.
///
/// Each such refusal is judged against every `/cache` sample of the same process (server and
/// incarnation) taken at most [`CACHE_SAMPLE_AGE`] before the refusal was sent (a failed batch
/// that emptied the buffer leaves the later ones empty). Of the IDs a sample showed buffered,
/// those answered since (by any request of that process and tag that ended after the sample
/// began and began before the refusal ended) were used, and a request without a complete
/// answer (no answer, dropped by the client) may have used up to its whole count; a batch
/// answered with more IDs than the last reading before it showed buffered must have been claimed
/// on its own (issue 33), so buffered IDs in its answer do not count as used (a segment loaded
/// in the 300 ms between that reading and the batch could make this wrong; not seen). What is
/// left after that was still buffered when the single ID was refused: one ID left by any sample is a
/// problem (tolerance: none beyond those unknowns; one problem is reported per burst of such
/// refusals, all are counted). A refusal of a batch never counts as use: a failed batch must
/// issue nothing and lose nothing. Unjudged: a refusal with no recent sample showing IDs, and one
/// within [`TAG_CHANGE_SHADOW`] after its tag was removed or added.
fn check_buffers(
    history: &[Record],
    seen: &Seen,
    v: &mut Verdict,
    around: &dyn Fn(usize) -> String,
) {
    type Key = (usize, u32, &'static str);
    let mut requests: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, r) in history.iter().enumerate() {
        if let (Source::Server { index, incarnation }, Mode::Segment) = (r.source, r.mode) {
            requests
                .entry((index, incarnation, r.tag))
                .or_default()
                .push(i);
        }
    }
    for list in requests.values_mut() {
        list.sort_by_key(|&i| history[i].sent);
    }
    let mut samples: HashMap<Key, Vec<&CacheSample>> = HashMap::new();
    for c in &seen.caches {
        samples
            .entry((c.server, c.incarnation, c.tag))
            .or_default()
            .push(c);
    }
    for list in samples.values_mut() {
        list.sort_by_key(|c| c.done);
    }
    let last_sample = |key: &Key, before: Duration| -> Option<&CacheSample> {
        let list = samples.get(key)?;
        let n = list.partition_point(|c| c.done <= before);
        let c = *list.get(n.checked_sub(1)?)?;
        (before - c.done <= CACHE_SAMPLE_AGE).then_some(c)
    };
    // Batches asked for more than the buffer held.
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            if r.count > 1
                && let Some(c) = last_sample(key, r.sent)
                && r.count > c.held()
            {
                v.beyond_buffer += 1;
            }
        }
    }
    // One problem per burst: refusals within CACHE_SAMPLE_AGE of a reported one are counted only.
    let mut reported: HashMap<Key, Duration> = HashMap::new();
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            let Outcome::Refused { status: 503, .. } = r.outcome else {
                continue;
            };
            if r.count != 1 {
                continue;
            }
            let changed = seen
                .tag_changes
                .iter()
                .any(|&(at, tag)| tag == r.tag && at <= r.done && r.sent <= at + TAG_CHANGE_SHADOW);
            let Some(list_of_samples) = samples.get(key) else {
                continue;
            };
            let upto = list_of_samples.partition_point(|c| c.done <= r.sent);
            let recent: Vec<&CacheSample> = list_of_samples[..upto]
                .iter()
                .rev()
                .take_while(|c| r.sent - c.done <= CACHE_SAMPLE_AGE)
                .copied()
                .filter(|c| c.held() > 0)
                .collect();
            if changed || recent.is_empty() {
                continue;
            }
            v.refusals_judged += 1;
            // The oldest reading first: a buffer emptied by a failed batch shows empty in the
            // readings after it, full in the ones before.
            for c in recent.into_iter().rev() {
                let (mut used, mut unknown, mut taken) = (0u64, 0u64, 0u32);
                let from = list.partition_point(|&j| history[j].sent + LONGEST_REQUEST < c.sent);
                for &j in &list[from..] {
                    let o = &history[j];
                    if o.sent > r.done {
                        break;
                    }
                    if j == i || o.done < c.sent {
                        continue;
                    }
                    match &o.outcome {
                        // A batch asking for more than its server buffered (by the last reading
                        // before it) must be claimed on its own: buffered IDs in its answer
                        // were taken from the single IDs, not used.
                        Outcome::Ids(_)
                            if o.count > 1
                                && last_sample(key, o.sent).is_some_and(|b| o.count > b.held()) =>
                        {
                            taken += 1;
                        }
                        Outcome::Ids(ids) => {
                            used += ids
                                .iter()
                                .filter(|&&id| c.ranges.iter().any(|&(a, b)| a <= id && id < b))
                                .count() as u64;
                        }
                        Outcome::NoAnswer(_) | Outcome::Dropped(_) => unknown += o.count,
                        _ => {}
                    }
                }
                let left = c.held().saturating_sub(used + unknown);
                if left == 0 {
                    continue;
                }
                v.refused_while_buffered += 1;
                if reported
                    .get(key)
                    .is_none_or(|&at| r.sent > at + CACHE_SAMPLE_AGE)
                {
                    reported.insert(*key, r.sent);
                    v.problems.push(format!(
                        "serve {}#{} refused a single ID of {} although its buffer held {left} of \
                         the {} IDs its /cache showed {:.3}s before ({:?}; {used} of them \
                         answered since, up to {unknown} more to requests without a complete \
                         answer{}):\n{}",
                        key.0,
                        key.1,
                        key.2,
                        c.held(),
                        (r.sent - c.done).as_secs_f64(),
                        c.ranges,
                        if taken > 0 {
                            format!(
                                "; {taken} batch(es) larger than the buffer answered meanwhile, \
                                 whose buffered IDs do not count"
                            )
                        } else {
                            String::new()
                        },
                        around(i)
                    ));
                }
                break;
            }
        }
    }
}

/// Worker ids held never exceed the servers that can hold one: each `workers list` sample may
/// show one id per process alive during it, plus one per process that ended within the fence
/// before it (a killed holder's claim lives until its session or lease expires), plus one per
/// server whose lease was disturbed within the fence (it may have taken a new id while its
/// old claim expires). A registry fault postpones expiry (a new ZooKeeper leader renews the
/// sessions it inherits; they expire one timeout later): a sample within the fence after one is
/// judged with the fence reaching back from the fault's start (claims that were still live when
/// it began may live until one fence after it healed). No sample is excused.
fn check_workers(seen: &Seen, v: &mut Verdict) {
    let identities: std::collections::HashSet<&str> =
        seen.lives.iter().map(|l| l.identity.as_str()).collect();
    v.identities = identities.len();
    let mut ever: std::collections::HashSet<u64> = Default::default();
    for s in &seen.workers {
        v.most_held = v.most_held.max(s.held.len());
        ever.extend(s.held.iter().copied());
    }
    v.worker_ids_seen = ever.len();
    if seen.fence.is_zero() {
        return;
    }
    let fence = seen.fence;
    // The most ids that could be held at once so far: with the lowest free id taken at each
    // claim, id K is held only after K+1 ids were held at once.
    let mut peak = 0usize;
    let mut reported_span = false;
    let mut workers: Vec<&WorkerSample> = seen.workers.iter().collect();
    workers.sort_by_key(|s| s.sent);
    for s in workers {
        let plain_since = s.sent.saturating_sub(fence);
        let faults: Vec<(Duration, Duration)> = seen
            .registry_faults
            .iter()
            .copied()
            .filter(|&(from, to)| from <= s.done && plain_since <= to)
            .collect();
        // Claims live at a fault's start may outlive it by a fence.
        let since = faults
            .iter()
            .map(|&(from, _)| from.saturating_sub(fence))
            .fold(plain_since, Duration::min);
        let alive = seen
            .lives
            .iter()
            .filter(|l| l.from <= s.done && l.to.is_none_or(|t| t >= s.sent))
            .count();
        let fenced = seen
            .lives
            .iter()
            .filter(|l| l.to.is_some_and(|t| t >= since && t < s.sent))
            .count();
        let mut disturbed: Vec<usize> = seen
            .disturbed
            .iter()
            .filter(|d| d.from <= s.done && since <= d.to)
            .map(|d| d.server)
            .collect();
        disturbed.sort_unstable();
        disturbed.dedup();
        let allowed = alive + fenced + disturbed.len();
        peak = peak.max(allowed);
        let highest = s.held.iter().copied().max();
        if let Some(k) = highest
            && k as usize >= peak
            && !reported_span
        {
            reported_span = true;
            v.problems.push(format!(
                "worker ids held: id {k} at {:.3}s, but never more than {peak} server process(es) \
                 were alive or within their fence at once: a new identity took an id above a \
                 free one (ids used must not grow with restarts under new identities)",
                s.sent.as_secs_f64()
            ));
        }
        v.worker_samples += 1;
        if !faults.is_empty() {
            v.worker_samples_after_registry_faults += 1;
        }
        if s.held.len() > allowed {
            v.problems.push(format!(
                "the registry listed {} worker ids held ({:?}) at {:.3}s-{:.3}s, but only {alive} \
                 server process(es) ran then, {fenced} ended within the fence ({:.1} s) before \
                 and {} had their lease disturbed: a claim outlived its holder",
                s.held.len(),
                s.held,
                s.sent.as_secs_f64(),
                s.done.as_secs_f64(),
                fence.as_secs_f64(),
                disturbed.len()
            ));
        }
    }
}

/// The rule a problem broke (its kind, for the summary's counts).
pub fn rule_of(problem: &str) -> &'static str {
    const RULES: [(&str, &str); 13] = [
        ("answered twice", "an ID twice"),
        ("taken and never answered", "IDs lost"),
        ("not ascending", "snowflake IDs not ascending"),
        ("neither an ID nor", "an unknown refusal"),
        ("a 200 with", "a 200 with the wrong count"),
        ("unanswered while it ran", "no answer while running"),
        ("refused a single ID", "refused while buffered"),
        ("worker ids held:", "worker ids above the lowest free"),
        ("worker ids held", "worker ids beyond live and fenced"),
        ("`next`", "a `next` run"),
        ("SIGTERM", "a graceful stop"),
        ("`leafctl tag`", "an operator's command"),
        ("region: serve", "an ID outside its region's share"),
    ];
    RULES
        .iter()
        .find(|(k, _)| problem.contains(k))
        .map_or("other", |(_, r)| r)
}

/// Counts per kind of fault (`actions`: false) or of action (true), for the summary line.
pub fn kinds(steps: &[Step], actions: bool) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for s in steps.iter().filter(|s| s.fault.is_action() == actions) {
        *m.entry(s.fault.kind()).or_default() += 1;
    }
    m
}
