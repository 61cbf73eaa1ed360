//! Model checks of the hot path against refills and switches (`--cfg loom`; see `crate::sync`).
//!
//! Two threads take IDs from one tag whose segments hold two IDs each (one segment current, the
//! next loaded, as in a running server), one by the single-ID path and one by the batch path, and
//! each plays the loader when the buffer asks for a load (every take passes the preload point),
//! so switches, refills of the other segment and takes stalled on a segment being refilled
//! interleave in every way loom explores. No ID may repeat, and every ID must come from a
//! claimed range. (Removing the generation check from `Segment::take` makes this fail.)

use super::*;
use crate::segment::Claim;
use loom::sync::Arc;

const STEP: u64 = 2;

/// The table: each claim is above the last, as `leaf_alloc` guarantees.
fn load(b: &SegmentBuffer, table: &AtomicU64) {
    let start = table.fetch_add(STEP, SeqCst);
    let plan = b.plan_load(0);
    b.finish_load(
        plan,
        Ok(Claim {
            start,
            end: start + STEP,
            table_step: STEP as i64,
        }),
    );
}

/// The generator's single-ID path (`next_from` / `next_slow`), with the load done in line.
fn take_one(b: &SegmentBuffer, table: &AtomicU64) -> Option<u64> {
    for _ in 0..3 {
        if let Some((id, preload)) = b.try_take() {
            if preload && b.claim_preload() {
                load(b, table);
            }
            return Some(id);
        }
        match b.slow_path(Instant::now()) {
            Ok(Slow::Retry | Slow::Waited) => {}
            Ok(Slow::StartLoad) => load(b, table),
            // The other thread's load is under way and the deadline is now: NotReady.
            Err(_) => return None,
        }
    }
    None
}

/// The batch path (`next_ids`): exactly `n` IDs from the buffers, or (they do not hold
/// them) a claim of its own from the table.
fn take_batch(b: &SegmentBuffer, table: &AtomicU64, ids: &mut Vec<u64>) {
    if let Some((ranges, preload)) = b.try_take_exact(3) {
        if preload && b.claim_preload() {
            load(b, table);
        }
        ids.extend(ranges.into_iter().flatten());
        return;
    }
    let start = table.fetch_add(3, SeqCst);
    ids.extend(start..start + 3);
}

#[test]
fn loom_take_refill_switch_never_repeats_an_id() {
    loom::model(|| {
        // Primed as a running server's buffer is: one segment current, the next loaded.
        let b = Arc::new(SegmentBuffer::new("t"));
        let table = Arc::new(AtomicU64::new(0));
        load(&b, &table);
        assert!(matches!(b.slow_path(Instant::now()), Ok(Slow::Retry)));
        assert!(b.claim_preload());
        load(&b, &table);
        let single = {
            let (b, table) = (b.clone(), table.clone());
            loom::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..2 {
                    ids.extend(take_one(&b, &table));
                }
                ids
            })
        };
        let mut ids = Vec::new();
        take_batch(&b, &table, &mut ids);
        take_batch(&b, &table, &mut ids);
        ids.extend(single.join().unwrap());
        let claimed = table.load(SeqCst);
        assert!(!ids.is_empty(), "a thread that starts a load takes from it");
        assert!(ids.iter().all(|&id| id < claimed), "{ids:?} vs {claimed}");
        let seen = ids.clone();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was handed out twice: {seen:?}");
    });
}
