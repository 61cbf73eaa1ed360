//! Snowflake IDs: `time | worker | sequence` packed into 63 bits.
//!
//! [`Layout`] says where each field sits and converts between IDs and their parts,
//! [`SnowflakeGenerator`] issues IDs for one worker id, and [`Clock`] is the time source it reads,
//! behind a trait so that clock faults can be tested with [`FakeClock`].

mod clock;
mod fence;
mod generator;
mod layout;

pub use clock::{Clock, FakeClock, SystemClock};
pub use fence::TimeFence;
pub use generator::{
    GeneratorStats, IdBlock, MAX_LEAD_MS, MAX_TOLERATED_ROLLBACK_MS, SeqStart, SnowflakeGenerator,
    SnowflakeGeneratorBuilder,
};
pub use layout::{
    BAIDU_EPOCH_MS, BitWidths, DISCORD_EPOCH_MS, FieldOrder, INSTAGRAM_EPOCH_MS, IdParts,
    LEAF_EPOCH_MS, Layout, MASTODON_EPOCH_MS, Preset, SEATA_EPOCH_MS, SONYFLAKE_EPOCH_MS,
    YITTER_EPOCH_MS,
};

/// Everything that can go wrong while laying out, encoding, decoding or issuing snowflake IDs.
#[derive(Debug, thiserror::Error)]
pub enum SnowflakeError {
    /// The bit layout is not usable.
    #[error("invalid layout: {0}")]
    InvalidLayout(String),
    /// The time does not fit in the layout's time field (the layout has run out of time).
    #[error(
        "time {unix_ms} ms is past the last instant this layout can encode ({last_ms} ms); \
         IDs would overflow"
    )]
    TimeOverflow {
        /// The instant that did not fit.
        unix_ms: i64,
        /// The last representable instant.
        last_ms: i64,
    },
    /// The time is before the layout's epoch.
    #[error("time {unix_ms} ms is before the layout's epoch ({epoch_ms} ms)")]
    BeforeEpoch {
        /// The instant that did not fit.
        unix_ms: i64,
        /// The layout's epoch.
        epoch_ms: i64,
    },
    /// A worker id larger than the worker field holds.
    #[error("worker id {worker} is out of range for this layout (0..={max})")]
    WorkerOutOfRange {
        /// The worker id given.
        worker: u64,
        /// The largest worker id of the layout.
        max: u64,
    },
    /// A sequence number larger than the sequence field holds.
    #[error("sequence {sequence} is out of range for this layout (0..={max})")]
    SequenceOutOfRange {
        /// The sequence given.
        sequence: u64,
        /// The largest sequence of the layout.
        max: u64,
    },
    /// One time range is not one ID range when the worker sits above the time (Seata's layout).
    #[error(
        "this layout puts the worker above the time, so a time range is one ID range per worker"
    )]
    WorkerAboveTime,
    /// A 64-bit value with the sign bit set is never a snowflake ID.
    #[error("{0} has the sign bit set; snowflake IDs are at most 2^63-1")]
    SignBitSet(u64),
    /// The clock went back further than the generator waits out.
    #[error("the clock moved backwards by {by_ms} ms; refusing to issue IDs that could repeat")]
    ClockMovedBackwards {
        /// How far behind the last issued time the clock is.
        by_ms: i64,
    },
    /// The time fence (lease, reservation) could not be moved past the time to issue at.
    #[error("no reservation covers time {unix_ms} ms; refusing to issue IDs")]
    FenceReached {
        /// The instant the generator wanted to issue at.
        unix_ms: i64,
    },
    /// A lead over the clock larger than the generator accepts.
    #[error("a lead of {lead_ms} ms over the clock is more than the {max_ms} ms allowed")]
    LeadOutOfRange {
        /// The lead asked for.
        lead_ms: u64,
        /// The largest lead allowed.
        max_ms: u64,
    },
    /// The fence's holder failed to extend it (lost lease, unwritable state file...).
    #[error("could not extend the worker's reservation: {0}")]
    FenceFailed(String),
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const T0: i64 = LEAF_EPOCH_MS + 1_000_000;

    /// The builder of a generator of Leaf's layout for worker 3, on `clock`.
    fn leaf_on(clock: &Arc<FakeClock>) -> SnowflakeGeneratorBuilder {
        SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 3).clock(clock.clone())
    }

    fn generator(clock: &Arc<FakeClock>, seq_start: SeqStart) -> SnowflakeGenerator {
        leaf_on(clock).seq_start(seq_start).build().unwrap()
    }

    /// A fake clock at `T0` and a generator on it.
    fn at_t0(seq_start: SeqStart) -> (Arc<FakeClock>, SnowflakeGenerator) {
        let clock = Arc::new(FakeClock::new(T0));
        let g = generator(&clock, seq_start);
        (clock, g)
    }

    #[test]
    fn ids_increase_and_carry_the_worker() {
        let (_, g) = at_t0(SeqStart::Zero);
        let a = g.next_id().unwrap();
        let b = g.next_id().unwrap();
        assert_eq!(b, a + 1);
        let parts = g.layout().decode(b).unwrap();
        assert_eq!(parts.worker, 3);
        assert_eq!(parts.sequence, 1);
        assert_eq!(g.layout().unix_ms(parts.ticks), T0);
    }

    #[test]
    fn random_start_stays_below_100() {
        let (clock, g) = at_t0(SeqStart::Random);
        for _ in 0..500 {
            let p = g.layout().decode(g.next_id().unwrap()).unwrap();
            assert!(p.sequence < 100, "sequence {} starts a tick", p.sequence);
            clock.advance_ms(1);
        }
    }

    #[test]
    fn exhausted_sequence_waits_for_the_next_tick() {
        let (clock, g) = at_t0(SeqStart::Zero);
        let block = g.next_block(10_000).unwrap();
        assert_eq!(block.count, 4096, "one tick holds 4096 IDs");
        let next = g.next_id().unwrap();
        assert!(next > block.last());
        assert_eq!(clock.now_ms(), T0 + 1, "slept exactly to the next tick");
        let p = g.layout().decode(next).unwrap();
        assert_eq!((g.layout().unix_ms(p.ticks), p.sequence), (T0 + 1, 0));
    }

    #[test]
    fn small_rollback_is_waited_out() {
        let (clock, g) = at_t0(SeqStart::Zero);
        let a = g.next_id().unwrap();
        clock.set_ms(T0 - 3);
        let b = g.next_id().unwrap();
        assert!(b > a);
        assert_eq!(clock.slept_ms(), 6, "waits twice the offset");
        assert!(g.layout().unix_ms(g.layout().decode(b).unwrap().ticks) >= T0);
    }

    #[test]
    fn rollback_of_exactly_five_ms_is_waited_out() {
        let (clock, g) = at_t0(SeqStart::Zero);
        let a = g.next_id().unwrap();
        clock.set_ms(T0 - 5);
        assert!(g.next_id().unwrap() > a);
    }

    #[test]
    fn large_rollback_is_an_error_and_changes_nothing() {
        let (clock, g) = at_t0(SeqStart::Zero);
        let a = g.next_id().unwrap();
        clock.set_ms(T0 - 6);
        match g.next_id() {
            Err(SnowflakeError::ClockMovedBackwards { by_ms }) => assert_eq!(by_ms, 6),
            other => panic!("expected ClockMovedBackwards, got {other:?}"),
        }
        assert_eq!(clock.slept_ms(), 0);
        clock.set_ms(T0);
        assert_eq!(
            g.next_id().unwrap(),
            a + 1,
            "resumes in the same tick once the clock is back"
        );
    }

    #[test]
    fn capacity_overflow_is_an_error_not_a_negative_id() {
        let layout = Layout::preset(Preset::Leaf);
        let clock = Arc::new(FakeClock::new(layout.last_unix_ms()));
        let g = generator(&clock, SeqStart::Zero);
        let block = g.next_block(u64::MAX).unwrap();
        assert!(block.last() <= i64::MAX as u64);
        assert!(matches!(
            g.next_id(),
            Err(SnowflakeError::TimeOverflow { .. })
        ));
        clock.advance_ms(1);
        assert!(matches!(
            g.next_id(),
            Err(SnowflakeError::TimeOverflow { .. })
        ));
    }

    #[test]
    fn resume_after_skips_the_used_tick() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leaf_on(&clock).resume_after(T0).build().unwrap();
        let p = g.layout().decode(g.next_id().unwrap()).unwrap();
        assert_eq!(g.layout().unix_ms(p.ticks), T0 + 1);
    }

    #[test]
    fn worker_out_of_range_is_rejected() {
        let r = SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 1024).build();
        assert!(matches!(
            r,
            Err(SnowflakeError::WorkerOutOfRange {
                worker: 1024,
                max: 1023
            })
        ));
    }

    struct StepFence {
        step: i64,
        calls: std::sync::atomic::AtomicU32,
        fail_after: u32,
    }
    impl TimeFence for StepFence {
        fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
            let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n >= self.fail_after {
                return Err(SnowflakeError::FenceFailed("lease lost".into()));
            }
            Ok(unix_ms + self.step)
        }
    }

    /// Extends by `step`; answers the non-blocking call from memory below `memory_ms` only.
    struct MemoryFence {
        step: i64,
        memory_ms: i64,
        extends: std::sync::atomic::AtomicU32,
    }
    impl TimeFence for MemoryFence {
        fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
            self.extends
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(unix_ms + self.step)
        }
        fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
            (unix_ms < self.memory_ms).then_some(Ok(unix_ms + self.step))
        }
    }

    #[test]
    fn the_non_blocking_try_moves_the_fence_only_through_try_extend() {
        let clock = Arc::new(FakeClock::new(T0));
        let fence = Arc::new(MemoryFence {
            step: 10,
            memory_ms: T0 + 15,
            extends: 0.into(),
        });
        let g = leaf_on(&clock)
            .seq_start(SeqStart::Zero)
            .fence(Box::new(fence.clone()))
            .build()
            .unwrap();
        let first = g.try_next_block(1).unwrap().unwrap();
        assert_eq!(g.fence_ms(), Some(T0 + 10));
        clock.advance_ms(10);
        let second = g.try_next_block(1).unwrap().unwrap();
        assert!(second.first > first.first);
        assert_eq!(g.fence_ms(), Some(T0 + 20), "moved by try_extend");
        clock.advance_ms(10);
        assert!(
            g.try_next_block(1).is_none(),
            "past the fence's memory the try declines"
        );
        assert_eq!(fence.extends.load(std::sync::atomic::Ordering::SeqCst), 0);
        let third = g.next_block(1).unwrap();
        assert!(third.first > second.first);
        assert_eq!(fence.extends.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(g.fence_ms(), Some(T0 + 30));
    }

    #[test]
    fn the_lock_free_path_and_the_locked_one_share_one_position() {
        // Many threads, a layout with 4 IDs per tick and a clock that moves while they issue:
        // both paths run (used-up ticks go through the lock), and every ID is unique.
        let clock = Arc::new(FakeClock::new(T0));
        let layout = Layout::custom(T0 - 1000, 41, 20, 2, 1).unwrap();
        let g = Arc::new(
            SnowflakeGenerator::builder(layout, 5)
                .clock(clock.clone())
                .build()
                .unwrap(),
        );
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let (g, clock) = (g.clone(), clock.clone());
                std::thread::spawn(move || {
                    let mut ids = Vec::new();
                    for n in 0..2_000u64 {
                        let block = if n % 2 == 0 {
                            g.try_next_block(1 + n % 3)
                        } else {
                            Some(g.next_block(1 + n % 3))
                        };
                        if let Some(block) = block {
                            ids.extend(block.unwrap());
                        }
                        if n % 97 == i {
                            clock.advance_ms(1);
                        }
                    }
                    ids
                })
            })
            .collect();
        let n = join_checked(threads);
        assert!(n > 4_000, "{n} IDs");
    }

    #[test]
    fn four_threads_on_the_system_clock_never_share_an_id() {
        // Leaf's layout at full speed: ticks fill up (4,096 IDs per ms) and threads meet on
        // both paths, with the real clock deciding when a tick ends.
        let g = Arc::new(
            SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 9)
                .build()
                .unwrap(),
        );
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || {
                    let mut ids = Vec::with_capacity(50_000);
                    for n in 0..50_000u64 {
                        match g.try_next_block(1) {
                            Some(block) => ids.extend(block.unwrap()),
                            None if n % 2 == 0 => ids.extend(g.next_block(1).unwrap()),
                            None => {}
                        }
                    }
                    ids
                })
            })
            .collect();
        let n = join_checked(threads);
        assert!(n >= 100_000, "{n} IDs");
    }

    /// Joins threads that issued IDs, checks each thread's ascend and none came back twice
    /// across them, and returns how many there were.
    fn join_checked(threads: Vec<std::thread::JoinHandle<Vec<u64>>>) -> usize {
        let mut all = Vec::new();
        for t in threads {
            let ids = t.join().unwrap();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "ascending per thread");
            all.extend(ids);
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an ID was issued twice");
        n
    }

    #[test]
    fn fence_is_extended_and_its_failure_stops_issuing() {
        let clock = Arc::new(FakeClock::new(T0));
        let fence = StepFence {
            step: 10,
            calls: 0.into(),
            fail_after: 1,
        };
        let g = leaf_on(&clock).fence(Box::new(fence)).build().unwrap();
        g.next_id().unwrap();
        clock.advance_ms(9);
        g.next_id().unwrap();
        clock.advance_ms(1);
        assert!(matches!(g.next_id(), Err(SnowflakeError::FenceFailed(_))));
    }

    #[test]
    fn sonyflake_blocks_step_by_the_machine_field() {
        let clock = Arc::new(FakeClock::new(SONYFLAKE_EPOCH_MS + 50));
        let g = SnowflakeGenerator::builder(Layout::preset(Preset::Sonyflake), 9)
            .clock(clock.clone())
            .seq_start(SeqStart::Zero)
            .build()
            .unwrap();
        let ids = g.next_ids(300).unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for id in &ids {
            assert_eq!(g.layout().decode(*id).unwrap().worker, 9);
        }
        assert_eq!(
            clock.now_ms(),
            SONYFLAKE_EPOCH_MS + 60,
            "256 per 10 ms tick"
        );
    }

    #[test]
    fn try_next_block_never_blocks_and_never_extends_the_fence() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leaf_on(&clock)
            .seq_start(SeqStart::Zero)
            .fence(Box::new(StepFence {
                step: 10,
                calls: 0.into(),
                fail_after: 100,
            }))
            .build()
            .unwrap();
        // The first ID needs the fence extended: the non-blocking path declines.
        assert!(g.try_next_block(1).is_none());
        let first = g.next_block(1).unwrap();
        // Inside the fence it issues, after what next_block issued.
        let b = g.try_next_block(4095).unwrap().unwrap();
        assert_eq!(b.first, first.first + 1);
        assert_eq!(b.count, 4095);
        // The tick is used up: it would have to sleep, so it declines and sleeps nothing.
        assert!(g.try_next_block(1).is_none());
        assert_eq!(clock.slept_ms(), 0);
        // A small rollback would be waited out: declined too; a large one is an error.
        clock.advance_ms(5);
        g.next_id().unwrap();
        clock.advance_ms(-3);
        assert!(g.try_next_block(1).is_none());
        clock.advance_ms(-100);
        assert!(matches!(
            g.try_next_block(1),
            Some(Err(SnowflakeError::ClockMovedBackwards { .. }))
        ));
        assert_eq!(clock.slept_ms(), 0);
    }

    fn leading(clock: &Arc<FakeClock>, lead: u64) -> SnowflakeGenerator {
        leaf_on(clock)
            .seq_start(SeqStart::Zero)
            .max_lead_ms(lead)
            .build()
            .unwrap()
    }

    fn time_of(g: &SnowflakeGenerator, id: u64) -> i64 {
        g.layout().unix_ms(g.layout().decode(id).unwrap().ticks)
    }

    #[test]
    fn a_lead_borrows_whole_ticks_up_to_the_lead_then_waits() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leading(&clock, 5);
        let ids = g.next_ids(6 * 4096).unwrap();
        assert_eq!(
            clock.slept_ms(),
            0,
            "six ticks (now and 5 ahead) without waiting"
        );
        assert!(ids.windows(2).all(|w| w[1] > w[0]), "ascending");
        assert_eq!(time_of(&g, ids[0]), T0);
        assert_eq!(time_of(&g, *ids.last().unwrap()), T0 + 5);
        // The seventh tick is 6 ms ahead: wait until it is within the lead.
        let next = g.next_id().unwrap();
        assert_eq!(clock.now_ms(), T0 + 1);
        assert_eq!(time_of(&g, next), T0 + 6);
        assert!(next > *ids.last().unwrap());
    }

    #[test]
    fn a_lead_is_not_a_rollback_but_a_step_back_beyond_it_is() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leading(&clock, 100);
        let last = *g.next_ids(50 * 4096).unwrap().last().unwrap();
        assert_eq!(time_of(&g, last), T0 + 49);
        // The clock has not moved: the last issued time is 49 ms ahead, within the lead.
        let next = g.next_id().unwrap();
        assert!(next > last);
        assert_eq!((time_of(&g, next), clock.slept_ms()), (T0 + 50, 0));
        // 3 ms beyond the lead is waited out (twice the offset, as without a lead).
        clock.set_ms(T0 + 50 - 100 - 3);
        assert_eq!(g.next_id().unwrap(), next + 1);
        assert_eq!(clock.slept_ms(), 6);
        // 6 ms beyond the lead is a clock step back, reported as that much.
        clock.set_ms(T0 + 50 - 100 - 6);
        match g.next_id() {
            Err(SnowflakeError::ClockMovedBackwards { by_ms }) => assert_eq!(by_ms, 6),
            other => panic!("expected ClockMovedBackwards, got {other:?}"),
        }
    }

    #[test]
    fn a_resume_point_ahead_of_the_clock_is_continued_within_the_lead() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leaf_on(&clock)
            .max_lead_ms(5_000)
            .resume_after(T0 + 2_000)
            .build()
            .unwrap();
        assert_eq!(time_of(&g, g.next_id().unwrap()), T0 + 2_001);
        assert_eq!(clock.slept_ms(), 0);
        // Without a lead the same resume point is a clock behind the record, as before.
        let g = leaf_on(&clock).resume_after(T0 + 2_000).build().unwrap();
        assert!(matches!(
            g.next_id(),
            Err(SnowflakeError::ClockMovedBackwards { .. })
        ));
    }

    #[test]
    fn a_lead_above_the_limit_is_refused() {
        let r = SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 3)
            .max_lead_ms(MAX_LEAD_MS + 1)
            .build();
        assert!(matches!(
            r,
            Err(SnowflakeError::LeadOutOfRange {
                lead_ms: 60_001,
                max_ms: 60_000
            })
        ));
        assert!(
            SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 3)
                .max_lead_ms(MAX_LEAD_MS)
                .build()
                .is_ok()
        );
    }

    /// Records nothing ahead of the clock (like a registry that cannot reach its server).
    struct ClockBoundFence(Arc<FakeClock>);
    impl TimeFence for ClockBoundFence {
        fn extend(&self, _unix_ms: i64) -> Result<i64, SnowflakeError> {
            Ok(self.0.now_ms() + 1)
        }
    }

    #[test]
    fn a_fence_that_cannot_record_ahead_makes_the_lead_wait_for_the_clock() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leaf_on(&clock)
            .seq_start(SeqStart::Zero)
            .max_lead_ms(1_000)
            .fence(Box::new(ClockBoundFence(clock.clone())))
            .build()
            .unwrap();
        let ids = g.next_ids(3 * 4096).unwrap();
        for id in &ids {
            assert!(time_of(&g, *id) <= T0 + 2);
        }
        assert_eq!(
            clock.now_ms(),
            T0 + 2,
            "waited for each tick as without a lead"
        );
    }

    struct FailingFence;
    impl TimeFence for FailingFence {
        fn extend(&self, _: i64) -> Result<i64, SnowflakeError> {
            Err(SnowflakeError::FenceFailed("lease lost".into()))
        }
    }

    #[test]
    fn a_failing_fence_stops_a_leading_generator() {
        let clock = Arc::new(FakeClock::new(T0));
        let g = leaf_on(&clock)
            .max_lead_ms(1_000)
            .fence(Box::new(FailingFence))
            .build()
            .unwrap();
        assert!(matches!(g.next_id(), Err(SnowflakeError::FenceFailed(_))));
        assert_eq!(g.last_issued_ms(), None);
    }
}
