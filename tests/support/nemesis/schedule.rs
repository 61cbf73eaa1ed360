//! The seeded schedules: [`Rng`] draws, from one seed, when each fault starts and how long it
//! is held ([`schedule`], [`region_schedule`]), with the users' and operators' actions beside
//! them (`actions.rs`), and [`kinds`] counts what was drawn.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

use super::*;

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
/// the schedule's and nothing queues. One cut is longer than a claim takes to give up
/// ([`long_cut`]).
pub fn schedule(seed: u64, seconds: u64, can: Abilities) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let long = long_cut(seed, seconds);
    let mut steps = long.clone();
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
        let free = busy.get(&fault.slot()).is_none_or(|&t| t <= at_ms)
            && !disturbs_long_cut(&long, fault, at_ms, hold);
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

/// How long the one long cut of a run lasts ([`long_cut`]).
pub const LONG_CUT_MS: (u64, u64) = (26_000, 32_000);

/// One cut of a server off the network for 26-32 s, longer than a claim takes to give up (the
/// store tries each database host in turn: up to 8 s for a connection on the one in use, a
/// connect timeout on each other, up to 8 s again: about 22 s at most), so that a batch's claim
/// and the background loads fail while the server holds buffered IDs: its refusals are then
/// judged by the buffers they carry. The batches are of [`BATCH_TAG`], which no client asks
/// for: one of 10-500 IDs 3-6 s before the cut, 15 s or more into the run (the servers
/// settled), fills the server's buffers; one of 10,000-100,000 at the cut's start waits for
/// its claim until the claim fails; two in the cut's last seconds, 300 ms apart, meet the
/// failures (the tag's loads failing, or the first of the two asking the database again) and
/// are refused at once. Drawn first, on a stream of its own: the other faults of a seed are
/// the ones it drew before, less those on that server's link or process from the first batch
/// to the heal ([`schedule`] skips them; `actions` keeps restarts out). None in a run too
/// short for it.
pub fn long_cut(seed: u64, seconds: u64) -> Vec<Step> {
    let mut rng = Rng::new(seed ^ 0x006C_6F6E_6763_7574);
    let hold = rng.range(LONG_CUT_MS.0, LONG_CUT_MS.1);
    let server = rng.range(0, 2) as usize;
    let warm = rng.range(3_000, 6_000);
    let early = rng.range(500, 1_500);
    let late = rng.range(2_000, 3_000);
    let sizes = [
        rng.range(10, 500),
        batch_size(&mut rng, 10_000, 100_000),
        batch_size(&mut rng, 10_000, 100_000),
        batch_size(&mut rng, 10_000, 100_000),
    ];
    let earliest = 15_000;
    let Some(latest) = (seconds * 1000)
        .checked_sub(hold + 5_000)
        .filter(|&l| l > earliest)
    else {
        return Vec::new();
    };
    let at = rng.range(earliest, latest);
    let step = |at: u64, fault: Fault, hold: u64| Step {
        at: Duration::from_millis(at),
        fault,
        hold: Duration::from_millis(hold),
    };
    let batch = |count: u64, outage: bool| Fault::Batch {
        server,
        tag: BATCH_TAG,
        count,
        outage,
    };
    vec![
        step(at - warm, batch(sizes[0], false), 0),
        step(at, Fault::CutServer(server), hold),
        step(at + early, batch(sizes[1], true), 0),
        step(at + hold - late, batch(sizes[2], true), 0),
        step(at + hold - late + 300, batch(sizes[3], true), 0),
    ]
}

/// Whether `fault`, from `at_ms` for `hold_ms` and its heal, would disturb the long cut
/// (`long`, [`long_cut`]): a fault on the cut server's link or process between the batch that
/// fills its buffers and the cut's heal (a restart there would empty the buffers the cut's
/// refusals report).
fn disturbs_long_cut(long: &[Step], fault: Fault, at_ms: u64, hold_ms: u64) -> bool {
    let cut = long.iter().find_map(|s| match s.fault {
        Fault::CutServer(server) => Some((s, server)),
        _ => None,
    });
    let (Some(first), Some((cut, server))) = (long.first(), cut) else {
        return false;
    };
    let from = first.at.as_millis() as u64;
    let to = (cut.at + cut.hold).as_millis() as u64 + cut.fault.heal_ms();
    let until = at_ms + hold_ms + fault.heal_ms();
    [Slot::Link(server), Slot::Process(server)].contains(&fault.slot())
        && from < until
        && at_ms < to
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
            rng.range(1, CLIENT_TAGS as u64 - 1) as usize
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
            let tag = rng.range(1, CLIENT_TAGS as u64 - 1) as usize;
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

/// Counts per kind of fault (`actions`: false) or of action (true), for the summary line.
pub fn kinds(steps: &[Step], actions: bool) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for s in steps.iter().filter(|s| s.fault.is_action() == actions) {
        *m.entry(s.fault.kind()).or_default() += 1;
    }
    m
}
