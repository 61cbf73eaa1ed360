//! Leaf's snowflake layout as the tests read IDs (the layout, the worker id and time of an ID, the
//! wall clock now), a small layout that outruns any clock, and issuing from a library generator.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use leafctl::snowflake::{Clock, LEAF_EPOCH_MS, Layout, Preset, SeqStart, SystemClock};
use leafctl::worker::{IssueOptions, WorkerError, WorkerGenerator};

/// Leaf's layout (41 bits of ms since Leaf's epoch, 10 bits of worker id, 12 of sequence), which
/// every snowflake test uses unless it says otherwise.
pub fn leaf() -> Layout {
    Layout::preset(Preset::Leaf)
}

/// The worker id of a Leaf-layout ID.
pub fn worker_of(id: u64) -> u64 {
    leaf().decode(id).unwrap().worker
}

/// The time (Unix ms) of a Leaf-layout ID.
pub fn time_of(id: u64) -> i64 {
    time_in(&leaf(), id)
}

/// The time (Unix ms) of an ID of `layout`.
pub fn time_in(layout: &Layout, id: u64) -> i64 {
    layout.unix_ms(layout.decode(id).unwrap().ticks)
}

/// The wall clock now, in Unix ms, read as the library's `SystemClock` reads it.
pub fn now_ms() -> i64 {
    SystemClock.now_ms()
}

/// The library's system clock, as generators and registries take it.
pub fn system() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// Issuing in Leaf's layout on `clock`, each tick's sequence from zero (so tests can predict IDs).
pub fn zero_start(clock: Arc<dyn Clock>) -> IssueOptions {
    IssueOptions::new(leaf())
        .seq_start(SeqStart::Zero)
        .clock(clock)
}

/// A layout with 4 IDs per ms (Leaf's epoch, 10 worker bits, 2 sequence bits), so that any
/// producer outruns the clock at once: batches are ahead of it whatever the speed of the machine.
/// The next block of 4,096 IDs from `g`: it must come after `last` (then set to the block's
/// last ID), at a time at most `lead` ms ahead of `clock`. Returns that time.
#[track_caller]
pub fn next_block_ahead(g: &WorkerGenerator, last: &mut u64, clock: &dyn Clock, lead: u64) -> i64 {
    let b = g.next_block(4096).unwrap();
    assert!(b.first > *last, "block at {} not after {last}", b.first);
    *last = b.last();
    let t = time_of(b.first);
    assert!(t <= clock.now_ms() + lead as i64, "{t} beyond the lead");
    t
}

pub fn small() -> Layout {
    Layout::custom(LEAF_EPOCH_MS, 51, 10, 2, 1).unwrap()
}

/// The time (Unix ms) of an ID of [`small`].
pub fn small_time(id: u64) -> i64 {
    time_in(&small(), id)
}

/// The command-line flags of [`small`].
pub const SMALL: [&str; 2] = ["--layout", "51,10,2"];

/// IDs from `g` over `ms` ms of the fake `clock`: `per_ms` each ms, then one ms on.
pub fn issue_over_ms(
    g: &WorkerGenerator,
    clock: &leafctl::snowflake::FakeClock,
    ms: u32,
    per_ms: u64,
) -> Vec<u64> {
    let mut ids = Vec::new();
    for _ in 0..ms {
        ids.extend(issue(g, per_ms));
        clock.advance_ms(1);
    }
    ids
}

/// `n` IDs from `g`, in as many blocks as it takes.
pub fn issue(g: &WorkerGenerator, n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    while (out.len() as u64) < n {
        out.extend(g.next_block(n - out.len() as u64).unwrap());
    }
    out
}

/// For runs of `leafctl next` that overlapped in time (each run's IDs, Leaf's layout): asserts
/// one worker id per run, no ID twice among them all, and that runs which shared a worker id did
/// so one after another, never over the same times. Returns, per worker id, the time span
/// (first, last ms) of each run that used it.
pub fn assert_runs_apart_on_each_worker(runs: &[Vec<u64>]) -> BTreeMap<u64, Vec<(i64, i64)>> {
    let mut spans: BTreeMap<u64, Vec<(i64, i64)>> = BTreeMap::new();
    for ids in runs {
        let parts: Vec<_> = ids.iter().map(|id| leaf().decode(*id).unwrap()).collect();
        let worker = parts[0].worker;
        assert!(
            parts.iter().all(|p| p.worker == worker),
            "one worker id per run"
        );
        let first = leaf().unix_ms(parts[0].ticks);
        let last = leaf().unix_ms(parts[parts.len() - 1].ticks);
        spans.entry(worker).or_default().push((first, last));
    }
    let mut all = runs.concat();
    super::assert_unique(&mut all);
    for (worker, s) in &mut spans {
        s.sort_unstable();
        for w in s.windows(2) {
            assert!(
                w[1].0 > w[0].1,
                "worker {worker}: runs {:?} and {:?} overlap in time",
                w[0],
                w[1]
            );
        }
    }
    spans
}

/// IDs issued after a holder lost its worker id and got one again (`later`) come after every
/// ID issued before (`earlier`, the first of which names the old worker id) when the worker
/// id is the same one: no time is used twice.
pub fn assert_later_on_the_same_worker(earlier: &[u64], later: &[u64]) {
    let (old_worker, new_worker) = (worker_of(earlier[0]), worker_of(later[0]));
    if new_worker == old_worker {
        let last_old = earlier.iter().map(|&i| time_of(i)).max().unwrap();
        let first_new = later.iter().map(|&i| time_of(i)).min().unwrap();
        assert!(
            first_new > last_old,
            "the new lease on worker {new_worker} reused time {first_new} <= {last_old}"
        );
    }
}

/// Asserts that a registry refused a worker id because the clock is behind its record.
pub fn assert_clock_behind<T>(r: Result<T, WorkerError>) {
    assert!(
        matches!(r, Err(WorkerError::ClockBehind { .. })),
        "{:?}",
        r.err()
    );
}
