//! Model checks of the fence being extended under the generator's lock (`--cfg loom`; see
//! `crate::sync`).
//!
//! Two threads issue IDs from a layout with four sequence numbers per 1 ms tick (so they cross
//! ticks and wait for the next one) under a fence that grants one tick at a time, while a third
//! revokes the fence, as a lost lease does. Every ID must be unique and ascending per thread,
//! lie below what the fence had granted when it was returned, and nothing may be issued past
//! what was granted before the revocation.

use super::*;
use loom::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::SeqCst;

/// A clock whose sleeps move it, so waiting for the next tick ends.
struct ModelClock(AtomicI64);

impl Clock for ModelClock {
    fn now_ms(&self) -> i64 {
        self.0.load(SeqCst)
    }
    fn sleep_ms(&self, ms: u64) {
        self.0.fetch_add(ms as i64, SeqCst);
    }
    fn sleep_until_ms(&self, target_ms: i64) {
        self.0.fetch_max(target_ms, SeqCst);
    }
}

/// Grants one tick per extension until revoked.
struct ModelFence(Mutex<(i64, bool)>);

impl ModelFence {
    fn granted(&self) -> i64 {
        self.0.lock().unwrap().0
    }
    fn revoke(&self) -> i64 {
        let mut g = self.0.lock().unwrap();
        g.1 = true;
        g.0
    }
}

impl TimeFence for ModelFence {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        let mut g = self.0.lock().unwrap();
        if g.1 {
            return Err(SnowflakeError::FenceFailed("revoked".into()));
        }
        g.0 = g.0.max(unix_ms + 1);
        Ok(unix_ms + 1)
    }
}

/// Issues `rounds` blocks of up to `n`, checking each against the fence as it returns.
fn issue(g: &SnowflakeGenerator, fence: &ModelFence, rounds: usize, n: u64) -> Vec<u64> {
    let mut ids = Vec::new();
    for _ in 0..rounds {
        let Ok(block) = g.next_block(n) else { break };
        let ms = g
            .layout()
            .unix_ms(g.layout().decode(block.first).unwrap().ticks);
        assert!(ms < fence.granted(), "issued at {ms} past the fence");
        ids.extend(block);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    ids
}

/// The lock-free path (`try_next_block`, and the first attempt of `next_block`) races the
/// locked one (a used-up tick, waited out) while the clock moves on: every ID is unique,
/// each thread's IDs ascend, and no ID lies in a tick at or before the resume point.
#[test]
fn loom_lock_free_and_locked_issues_never_share_an_id() {
    loom::model(|| {
        let layout = Layout::custom(0, 59, 2, 2, 1).unwrap();
        let clock = Arc::new(ModelClock(AtomicI64::new(10)));
        let g = loom::sync::Arc::new(
            SnowflakeGenerator::builder(layout, 1)
                .clock(clock.clone())
                .seq_start(SeqStart::Zero)
                .resume_after(9)
                .build()
                .unwrap(),
        );
        let trying = {
            let g = g.clone();
            loom::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..2 {
                    if let Some(block) = g.try_next_block(2) {
                        ids.extend(block.unwrap());
                    }
                }
                ids
            })
        };
        let ticker = {
            let clock = clock.clone();
            loom::thread::spawn(move || clock.sleep_ms(1))
        };
        let mut ids = Vec::new();
        for _ in 0..2 {
            ids.extend(g.next_block(3).unwrap());
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        let tried = trying.join().unwrap();
        assert!(tried.windows(2).all(|w| w[0] < w[1]), "{tried:?}");
        ticker.join().unwrap();
        ids.extend(tried);
        for &id in &ids {
            let tick = layout.decode(id).unwrap().ticks;
            assert!(
                tick > 9,
                "ID {id} in tick {tick}, at or before the resume point"
            );
        }
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}

#[test]
fn loom_fence_extended_under_the_lock_bounds_every_id() {
    loom::model(|| {
        let layout = Layout::custom(0, 59, 2, 2, 1).unwrap();
        let fence = Arc::new(ModelFence(Mutex::new((i64::MIN, false))));
        let g = loom::sync::Arc::new(
            SnowflakeGenerator::builder(layout, 1)
                .clock(Arc::new(ModelClock(AtomicI64::new(10))))
                .seq_start(SeqStart::Zero)
                .fence(Box::new(fence.clone()))
                .build()
                .unwrap(),
        );
        let other = {
            let (g, fence) = (g.clone(), fence.clone());
            loom::thread::spawn(move || issue(&g, &fence, 2, 3))
        };
        let revoker = {
            let fence = fence.clone();
            loom::thread::spawn(move || fence.revoke())
        };
        let mut ids = issue(&g, &fence, 2, 2);
        ids.extend(other.join().unwrap());
        let granted_before_revocation = revoker.join().unwrap();
        for &id in &ids {
            let ms = layout.unix_ms(layout.decode(id).unwrap().ticks);
            assert!(
                ms < granted_before_revocation,
                "{ms} issued after the revocation"
            );
        }
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}
