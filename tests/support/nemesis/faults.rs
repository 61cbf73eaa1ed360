//! What the nemesis does to a run: each [`Fault`] (on a process, a link, a clock, a database
//! node, a registry member, a region) and each user's or operator's action (batches, tag
//! commands, restarts), the [`Slot`] it occupies, and how it reads in a schedule.

use std::fmt;

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
/// clients ask for them. The first [`ADDED_AT_START`] are added before the run, the fourth by
/// the schedule (clients ask for it before it exists too). The first [`CLIENT_TAGS`] are the
/// clients' and the operator's; the last, [`BATCH_TAG`], only the long cut's batches ask for.
pub const TAGS: [&str; 5] = ["nem", "nem_a", "nem_b", "nem_c", "nem_batch"];
pub const ADDED_AT_START: usize = 3;
/// The tags the clients ask for and the operator changes: [`TAGS`] but the last.
pub const CLIENT_TAGS: usize = 4;
/// A tag that only the batches of the long cut ask for ([`long_cut`](super::long_cut)), added
/// before the run with a step of 1,000: no client drains its buffers, so a batch refused in
/// the cut is refused while they hold IDs, and what the refusal reports of them is judged.
pub const BATCH_TAG: usize = 4;

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
