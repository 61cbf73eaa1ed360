//! The nemesis (issue 28): a seeded schedule of overlapping faults, the history of every answer
//! the clients saw, and the checker that reads that history afterwards. The topology and the
//! hands that apply the faults are in `tests/nemesis.rs`; everything here is pure, so the
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
}

/// What must not overlap: one process fault and one link fault and one clock fault per server
/// at a time, and one fault on the database side at a time (so Galera and the registry keep
/// their quorum of two: the nemesis looks for duplicates, not for a cluster that cannot form).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    Process(usize),
    Link(usize),
    Clock(usize),
    DbSide,
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
        }
    }

    pub fn slot(&self) -> Slot {
        match *self {
            Fault::KillServer(i) | Fault::PauseServer(i) => Slot::Process(i),
            Fault::CutServer(i)
            | Fault::LossyServer { server: i, .. }
            | Fault::SlowServer { server: i, .. } => Slot::Link(i),
            Fault::ClockStep { server, .. } => Slot::Clock(server),
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
            _ => 500,
        }
    }

    /// The server whose process is down or frozen during this fault (its clients may get no
    /// answer then).
    pub fn silences(&self) -> Option<usize> {
        match *self {
            Fault::KillServer(i) | Fault::PauseServer(i) => Some(i),
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
    steps
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
    /// Not an ID: the status and the JSON body's `code` (`"not-json"` when there was none).
    Refused { status: u16, code: String },
    /// No HTTP answer (refused, reset, timed out).
    NoAnswer(String),
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
    pub sent: Duration,
    pub done: Duration,
    pub outcome: Outcome,
}

impl Record {
    pub fn ids(&self) -> &[u64] {
        match &self.outcome {
            Outcome::Ids(ids) | Outcome::Exited { ids, .. } => ids,
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
            Outcome::Refused { status, code } => format!("{status} {code}"),
            Outcome::NoAnswer(e) => format!("no answer ({e})"),
            Outcome::Exited {
                code, ids, stderr, ..
            } => format!(
                "exit {code:?}, {} IDs, stderr {:?}",
                ids.len(),
                stderr.lines().last().unwrap_or("")
            ),
        };
        write!(
            f,
            "{:>8.3}s-{:>8.3}s {who:<14} {:?}: {what}",
            self.sent.as_secs_f64(),
            self.done.as_secs_f64(),
            self.mode
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

/// What the checker found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub problems: Vec<String>,
    pub ids: BTreeMap<Mode, usize>,
    pub answers: usize,
    pub refusals: BTreeMap<String, usize>,
    pub no_answer: usize,
}

/// Reads the whole history: no ID twice per mode (segment: the one tag; snowflake: one ID is
/// one worker id, time and sequence), each server incarnation's snowflake IDs ascending (an answer given
/// before a request was sent holds only lower IDs than that request's), every answer an ID or a
/// refusal with a known code, no answer only while that server was down or frozen, every `next`
/// run its count of IDs or a non-zero exit with a message.
pub fn check(history: &[Record], silences: &[Silence]) -> Verdict {
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
    // No ID twice.
    for mode in [Mode::Segment, Mode::Snowflake] {
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut count = 0;
        for (i, r) in history.iter().enumerate().filter(|(_, r)| r.mode == mode) {
            for &id in r.ids() {
                count += 1;
                if let Some(&first) = seen.get(&id) {
                    v.problems.push(format!(
                        "{mode:?} ID {id} answered twice:\n  first:\n{}  again:\n{}",
                        around(first),
                        around(i)
                    ));
                } else {
                    seen.insert(id, i);
                }
            }
        }
        v.ids.insert(mode, count);
    }
    // Snowflake IDs ascending per server incarnation. (Not segment IDs: a batch larger than
    // what the buffer holds is claimed past it, so a later single ID can be lower.)
    let mut runs: BTreeMap<(Source, Mode), Vec<usize>> = BTreeMap::new();
    for (i, r) in history.iter().enumerate() {
        if matches!(r.source, Source::Server { .. })
            && r.mode == Mode::Snowflake
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
                }
            }
            Outcome::Refused { status, code } => {
                v.answers += 1;
                *v.refusals.entry(format!("{status} {code}")).or_default() += 1;
                let known = match r.mode {
                    Mode::Segment => SEGMENT_REFUSALS,
                    Mode::Snowflake => SNOWFLAKE_REFUSALS,
                };
                if *status != 503 || !known.contains(&code.as_str()) {
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
                let excused = silences.iter().any(|s| {
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
    v
}

/// Counts per fault kind, for the summary line.
pub fn kinds(steps: &[Step]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for s in steps {
        *m.entry(s.fault.kind()).or_default() += 1;
    }
    m
}
