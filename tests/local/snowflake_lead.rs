//! Property tests of the generator's lead over the clock, with a fake clock:
//! - no ID carries a time more than the lead ahead of the clock;
//! - the fence has recorded every issued time before the IDs are returned;
//! - IDs only ever increase, whatever the clock does;
//! - without a lead the generator behaves exactly as Leaf's algorithm (a model of it below).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use leafctl::snowflake::{
    Clock, FakeClock, LEAF_EPOCH_MS, Layout, MAX_TOLERATED_ROLLBACK_MS, Preset, SeqStart,
    SnowflakeError, SnowflakeGenerator, TimeFence,
};
use proptest::prelude::*;

const T0: i64 = 1_750_000_000_000;

/// A fence that reserves `step` ms past each time asked for and remembers the highest bound it
/// handed out. With `clock_bound` it records nothing ahead of the clock (answers "not yet").
struct RecordingFence {
    step: i64,
    clock_bound: Option<Arc<FakeClock>>,
    recorded: AtomicI64,
}

impl TimeFence for RecordingFence {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        if let Some(clock) = &self.clock_bound
            && unix_ms > clock.now_ms()
        {
            return Ok(clock.now_ms() + 1);
        }
        let fence = unix_ms + self.step;
        self.recorded.fetch_max(fence, Ordering::SeqCst);
        Ok(fence)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Issue(u64),
    Advance(i64),
    Back(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u64..20_000).prop_map(Op::Issue),
        3 => (0i64..15).prop_map(Op::Advance),
        1 => (0i64..10).prop_map(Op::Back),
    ]
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::preset(Preset::Leaf)),
        Just(Layout::preset(Preset::Sonyflake)),
        // Four IDs per ms: many tick changes per batch.
        Just(Layout::custom(LEAF_EPOCH_MS, 51, 10, 2, 1).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn ids_stay_within_the_lead_and_behind_the_fence(
        layout in layout(),
        lead in prop_oneof![Just(0u64), 1u64..20, Just(1_000), Just(60_000)],
        step in 1i64..3_000,
        clock_bound in any::<bool>(),
        random_start in any::<bool>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let clock = Arc::new(FakeClock::new(T0));
        let fence = Arc::new(RecordingFence {
            step,
            clock_bound: clock_bound.then(|| clock.clone()),
            recorded: AtomicI64::new(i64::MIN),
        });
        let g = SnowflakeGenerator::builder(layout, 5)
            .clock(clock.clone())
            .seq_start(if random_start { SeqStart::Random } else { SeqStart::Zero })
            .max_lead_ms(lead)
            .fence(Box::new(fence.clone()))
            .build()
            .unwrap();
        let lead = lead as i64;
        let mut highest: Option<u64> = None;
        for op in ops {
            match op {
                Op::Advance(ms) => clock.advance_ms(ms),
                Op::Back(ms) => clock.advance_ms(-ms),
                Op::Issue(n) => {
                    let before = clock.now_ms();
                    match g.next_block(n) {
                        Ok(block) => {
                            prop_assert!(block.count >= 1 && block.count <= n);
                            let p = layout.decode(block.first).unwrap();
                            let q = layout.decode(block.last()).unwrap();
                            prop_assert_eq!(p.ticks, q.ticks, "one block, one tick");
                            prop_assert_eq!(p.worker, 5);
                            let t = layout.unix_ms(p.ticks);
                            let now = clock.now_ms();
                            prop_assert!(t <= now + lead, "time {} is more than {} ms ahead of {}", t, lead, now);
                            if lead == 0 {
                                prop_assert!(t <= now, "no lead, yet {} > {}", t, now);
                            }
                            let recorded = fence.recorded.load(Ordering::SeqCst);
                            prop_assert!(t < recorded, "time {} not below the recorded fence {}", t, recorded);
                            if let Some(h) = highest {
                                prop_assert!(block.first > h, "{} after {}", block.first, h);
                            }
                            highest = Some(block.last());
                            prop_assert_eq!(g.last_issued_ms(), Some(t));
                        }
                        Err(SnowflakeError::ClockMovedBackwards { by_ms }) => {
                            // Only beyond the lead and the tolerated step, and nothing waited.
                            prop_assert!(by_ms > MAX_TOLERATED_ROLLBACK_MS);
                            prop_assert_eq!(clock.now_ms(), before);
                            let last = g.last_issued_ms().unwrap();
                            prop_assert_eq!(last - before - lead, by_ms);
                        }
                        Err(e) => prop_assert!(false, "unexpected error {e}"),
                    }
                }
            }
        }
    }

    #[test]
    fn without_a_lead_the_generator_is_leafs_algorithm(
        layout in layout(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let clock = Arc::new(FakeClock::new(T0));
        let g = SnowflakeGenerator::builder(layout, 9)
            .clock(clock.clone())
            .seq_start(SeqStart::Zero)
            .max_lead_ms(0)
            .build()
            .unwrap();
        let model_clock = Arc::new(FakeClock::new(T0));
        let mut model = Model { layout, worker: 9, clock: model_clock.clone(), last: None, next_seq: 0 };
        for op in ops {
            match op {
                Op::Advance(ms) => { clock.advance_ms(ms); model_clock.advance_ms(ms); }
                Op::Back(ms) => { clock.advance_ms(-ms); model_clock.advance_ms(-ms); }
                Op::Issue(n) => {
                    let got = g.next_block(n).map(|b| (b.first, b.count)).map_err(|e| e.to_string());
                    let want = model.block(n);
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(clock.now_ms(), model_clock.now_ms());
                }
            }
        }
    }
}

/// Leaf's algorithm as leafctl implemented it before leads existed: wait for the next tick when
/// one is used up; wait out a clock step back of up to 5 ms (sleeping twice the offset), refuse a
/// larger one.
struct Model {
    layout: Layout,
    worker: u64,
    clock: Arc<FakeClock>,
    last: Option<u64>,
    next_seq: u64,
}

impl Model {
    fn block(&mut self, max: u64) -> Result<(u64, u64), String> {
        let l = self.layout;
        let max_seq = l.max_sequence();
        loop {
            let now = self.clock.now_ms();
            let mut tick = l.ticks_at(now).map_err(|e| e.to_string())?;
            if let Some(last) = self.last {
                if tick < last {
                    let behind = l.unix_ms(last) - now;
                    if behind > 5 {
                        return Err(
                            SnowflakeError::ClockMovedBackwards { by_ms: behind }.to_string()
                        );
                    }
                    self.clock.sleep_ms(behind as u64 * 2);
                    let now = self.clock.now_ms();
                    tick = l.ticks_at(now).map_err(|e| e.to_string())?;
                    if tick < last {
                        return Err(SnowflakeError::ClockMovedBackwards {
                            by_ms: l.unix_ms(last) - now,
                        }
                        .to_string());
                    }
                }
                if tick == last && self.next_seq > max_seq {
                    self.clock.sleep_until_ms(l.unix_ms(last + 1));
                    continue;
                }
            }
            if self.last != Some(tick) {
                self.last = Some(tick);
                self.next_seq = 0;
            }
            let count = max.max(1).min(max_seq - self.next_seq + 1);
            let first = l
                .encode(tick, self.worker, self.next_seq)
                .map_err(|e| e.to_string())?;
            self.next_seq += count;
            return Ok((first, count));
        }
    }
}
