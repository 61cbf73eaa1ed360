//! What users and operators do during a run beside the faults: batch sizes drawn log-uniform,
//! clients dropping mid-batch, `leafctl tag` commands and graceful restarts (`actions`, merged
//! into the schedule by `schedule.rs`).

use std::time::Duration;

use super::*;

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
pub(super) fn actions(seed: u64, seconds: u64, faults: &[Step]) -> Vec<Step> {
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
        let tag = rng.range(1, CLIENT_TAGS as u64 - 1) as usize;
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
    // and the single IDs waiting beside it: what the buffer rule looks at), nor from the batch
    // that fills the buffers of the long cut's server up to the cut ([`long_cut`]).
    let mut taken: Vec<(Slot, u64, u64)> = faults
        .iter()
        .map(|f| {
            let from = f.at.as_millis() as u64;
            let (slot, hold) = match f.fault {
                Fault::CutServer(i) | Fault::LossyServer { server: i, .. } => {
                    (Slot::Process(i), f.hold.as_millis() as u64)
                }
                Fault::Batch {
                    server,
                    tag: BATCH_TAG,
                    outage: false,
                    ..
                } => (Slot::Process(server), 6_000),
                _ => (f.fault.slot(), f.hold.as_millis() as u64),
            };
            (slot, from, from + hold + f.fault.heal_ms())
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
