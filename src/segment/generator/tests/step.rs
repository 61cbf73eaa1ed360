//! The dynamic step: Leaf's doubling and halving by how long a segment lasted on the
//! generator's clock (a fake one here, moved by the tests), bounded by the largest step, and the
//! floor of [`CLAIMS_COVERED`] claim times at the tag's rate when claims are slow (injected
//! latency), bounded by [`MAX_COVERING_STEP`].

use std::sync::Mutex;

use super::*;
use crate::segment::MAX_DYNAMIC_STEP;
use crate::segment::buffer::{CLAIMS_COVERED, MAX_COVERING_STEP};
use crate::snowflake::FakeClock;

const MINUTE_MS: i64 = 60_000;

/// One tag on a fake clock that moves only when told, its IDs taken in batches from the buffers
/// (a million IDs cost a few calls), checked to follow each other with no gap.
struct Driver {
    store: Arc<MemoryStore>,
    clock: Arc<FakeClock>,
    g: SegmentGenerator,
    /// The ID the next batch must start with.
    next: u64,
}

impl Driver {
    /// A generator over tag `t` with the table's `step`, its first ID taken.
    fn new(step: i64) -> Driver {
        let store = table(&[("t", 1, step)]);
        let clock = Arc::new(FakeClock::new(1_700_000_000_000));
        let g = builder(&store).clock(clock.clone()).build().unwrap();
        assert_eq!(g.next_id("t").unwrap(), 1);
        Driver {
            store,
            clock,
            g,
            next: 2,
        }
    }

    fn view(&self) -> SegmentBufferView {
        self.g.view("t").unwrap()
    }

    /// Takes `n` IDs from the buffers (which must hold them: a batch claimed past them would
    /// leave a gap).
    fn take(&mut self, n: u64) {
        for r in self.g.next_ids("t", n).unwrap() {
            assert_eq!(r.start, self.next, "a gap or a repeat");
            self.next = r.end;
        }
    }

    /// Moves the clock by `advance_ms`, then takes IDs until the next segment is claimed: the
    /// rest of the current segment and into the loaded one when there is one (a segment is
    /// claimed only once its predecessor is current), to its preload point. Returns the claim's
    /// size.
    fn claim_after(&mut self, advance_ms: i64) -> i64 {
        self.clock.advance_ms(advance_ms);
        let before = max_id(&self.store, "t");
        let v = self.view();
        let (cur, next) = (v.segments[v.pos], v.segments[1 - v.pos]);
        if v.next_ready {
            if cur.max > cur.value {
                self.take(cur.max - cur.value);
            }
            self.take(next.step / 10 + 1);
        } else {
            let preload_at = cur.max - cur.step + cur.step / 10;
            self.take((preload_at + 1).saturating_sub(cur.value).max(1));
        }
        wait_for("the next segment was not claimed", || {
            let v = self.view();
            v.next_ready && !v.loading
        });
        max_id(&self.store, "t") - before
    }
}

/// Segments that last under 15 minutes double the step from the third claim on (the first two
/// are the table's); the view reports the step and why.
#[test]
fn the_step_doubles_while_segments_last_under_15_minutes() {
    let mut d = Driver::new(100);
    let sizes: Vec<i64> = (0..5).map(|_| d.claim_after(MINUTE_MS)).collect();
    assert_eq!(sizes, [100, 200, 400, 800, 1600]);
    let v = d.view();
    assert_eq!((v.step, v.min_step), (1600, 100));
    assert_eq!(
        v.step_reason,
        "doubled: the last segment lasted under 15 min"
    );
}

/// 15 to 30 minutes a segment keeps the step; over 30 minutes halves it, down to the table's.
#[test]
fn the_step_is_kept_then_halved_back_to_the_tables_when_use_slows() {
    let mut d = Driver::new(100);
    for _ in 0..4 {
        d.claim_after(MINUTE_MS);
    }
    assert_eq!(d.view().step, 800);
    assert_eq!(d.claim_after(20 * MINUTE_MS), 800);
    assert_eq!(
        d.view().step_reason,
        "kept: the last segment lasted 15-30 min"
    );
    let sizes: Vec<i64> = (0..4).map(|_| d.claim_after(31 * MINUTE_MS)).collect();
    assert_eq!(sizes, [400, 200, 100, 100]);
    let v = d.view();
    assert_eq!((v.step, v.min_step), (100, 100));
    assert_eq!(v.step_reason, "kept: at the table's step, the smallest");
}

/// However fast the segments go, Leaf's step stops at [`MAX_DYNAMIC_STEP`].
#[test]
fn the_step_stops_doubling_at_the_largest_step() {
    let mut d = Driver::new(250_000);
    let sizes: Vec<i64> = (0..4).map(|_| d.claim_after(MINUTE_MS)).collect();
    assert_eq!(sizes, [250_000, 500_000, 1_000_000, 1_000_000]);
    assert_eq!(MAX_DYNAMIC_STEP, 1_000_000);
    let v = d.view();
    assert_eq!(v.step, MAX_DYNAMIC_STEP);
    assert_eq!(v.step_reason, "kept: at the largest step, 1,000,000");
}

/// A generator over tag `t` (the table's `step`) on a clock that never moves, recording how long
/// each claim took, with every call to the table taking 20 ms from its first claim on.
fn slow_table(
    step: i64,
) -> (
    Arc<MemoryStore>,
    SegmentGenerator,
    Arc<Mutex<Vec<Duration>>>,
) {
    let store = table(&[("t", 1, step)]);
    let took = Arc::new(Mutex::new(Vec::new()));
    let record = took.clone();
    let g = builder(&store)
        .clock(Arc::new(FakeClock::new(1_700_000_000_000)))
        .on_load(Arc::new(move |e: &LoadEvent<'_>| {
            record.lock().unwrap().push(e.elapsed)
        }))
        .build()
        .unwrap();
    store.set_latency(Duration::from_millis(20));
    (store, g, took)
}

/// Claims of 20 ms while 101 IDs go within a millisecond: the second segment holds 8 claim
/// times' worth at that rate (over 16,000), not the table's 1,000; Leaf's own step, which the
/// next claim doubles or halves, stays the table's.
#[test]
fn slow_claims_at_a_high_rate_get_segments_of_eight_claim_times() {
    let (store, g, took) = slow_table(1000);
    let ids: Vec<u64> = (0..101).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(
        ids,
        (1..102).collect::<Vec<_>>(),
        "101 is the preload point"
    );
    until_next_ready(&g, "t");
    let first = took.lock().unwrap()[0];
    assert!(first >= Duration::from_millis(20), "{first:?}");
    // The rule's own arithmetic, on the first claim's time as the buffer recorded it (µs).
    let claim_ms = first.as_micros() as f64 / 1000.0;
    let per_ms = 101.0; // the clock did not move: the time since is taken as 1 ms
    let want = ((per_ms * claim_ms * CLAIMS_COVERED as f64).ceil() as i64).min(MAX_COVERING_STEP);
    assert!(want >= 101 * 20 * 8, "{want}");
    assert_eq!(max_id(&store, "t"), 1001 + want);
    let v = g.view("t").unwrap();
    assert_eq!(v.segments[1 - v.pos].step, want as u64);
    assert_eq!((v.step, v.min_step), (1000, 1000));
    assert_eq!(
        v.step_reason,
        "8 claim times at the rate: the claims are slow for it"
    );
}

/// However slow the claims and high the rate, the floor stops at [`MAX_COVERING_STEP`].
#[test]
fn the_claim_time_floor_stops_at_the_largest_covering_step() {
    let (store, g, _) = slow_table(1_000_000);
    assert_eq!(g.next_id("t").unwrap(), 1);
    // 100,000 in one batch from the buffer, then the preload point, 100,001: 8 claim times
    // of 20 ms at 100,001 a ms would be 16 million.
    let batch = flat(g.next_ids("t", 99_999).unwrap());
    assert_eq!((batch[0], batch[batch.len() - 1]), (2, 100_000));
    assert_eq!(g.next_id("t").unwrap(), 100_001);
    until_next_ready(&g, "t");
    assert_eq!(MAX_COVERING_STEP, 10_000_000);
    assert_eq!(max_id(&store, "t"), 1_000_001 + MAX_COVERING_STEP);
    assert_eq!(store.claims(), 2);
    let v = g.view("t").unwrap();
    assert_eq!(v.step, 1_000_000, "Leaf's step is the table's");
}
