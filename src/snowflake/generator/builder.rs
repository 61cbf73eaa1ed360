//! Setting up a [`SnowflakeGenerator`]: its clock, fence, resume point and lead.

use std::sync::Arc;

use super::{Cursor, GeneratorStats, MAX_LEAD_MS, NOTHING_ISSUED, SeqStart, SnowflakeGenerator};
use crate::snowflake::{Clock, Layout, SnowflakeError, SystemClock, TimeFence};
use crate::sync::{AtomicI64, AtomicU64, Mutex};

/// Sets up a [`SnowflakeGenerator`].
pub struct SnowflakeGeneratorBuilder {
    layout: Layout,
    worker: u64,
    seq_start: SeqStart,
    clock: Arc<dyn Clock>,
    fence: Option<Box<dyn TimeFence>>,
    resume_after_ms: Option<i64>,
    max_lead_ms: u64,
}

impl SnowflakeGeneratorBuilder {
    setters! {
        /// The time source (default: the system clock).
        clock(clock: Arc<dyn Clock>) => clock = clock;
        /// Where each tick's sequence starts (default: random in `[0, 100)`).
        seq_start(seq_start: SeqStart) => seq_start = seq_start;
        /// Bounds issued times by a lease or reservation.
        fence(fence: Box<dyn TimeFence>) => fence = Some(fence);
        /// Treats every tick up to and including the one holding `unix_ms` as already used (by an
        /// earlier run on this worker id), so the first ID comes from a later tick.
        resume_after(unix_ms: i64) => resume_after_ms = Some(unix_ms);
        /// Lets the generator run up to `ms` milliseconds ahead of the clock (default 0: never ahead,
        /// Leaf's behaviour; at most [`MAX_LEAD_MS`]). When a tick's sequence numbers are used up, the
        /// next tick is used at once if its time is at most `ms` ahead of the clock, instead of
        /// waiting for it. Times ahead of the clock are recorded by the [`TimeFence`] before IDs at
        /// them are returned, so a successor on the worker id still starts after them.
        max_lead_ms(ms: u64) => max_lead_ms = ms;
    }
    /// Checks the worker id against the layout, and builds the generator.
    pub fn build(self) -> Result<SnowflakeGenerator, SnowflakeError> {
        if self.max_lead_ms > MAX_LEAD_MS {
            return Err(SnowflakeError::LeadOutOfRange {
                lead_ms: self.max_lead_ms,
                max_ms: MAX_LEAD_MS,
            });
        }
        let max = self.layout.max_worker();
        if self.worker > max {
            return Err(SnowflakeError::WorkerOutOfRange {
                worker: self.worker,
                max,
            });
        }
        let cursor = Cursor {
            seq_width: self.layout.seq_bits() + 1,
        };
        let position = match self.resume_after_ms {
            Some(ms) if ms >= self.layout.epoch_ms() => {
                cursor.pack(self.layout.ticks_at(ms)?, self.layout.max_sequence() + 1)
            }
            _ => NOTHING_ISSUED,
        };
        // Without a fence everything is allowed; with one, the first ID asks it.
        let fence_ms = if self.fence.is_some() {
            i64::MIN
        } else {
            i64::MAX
        };
        Ok(SnowflakeGenerator {
            layout: self.layout,
            worker: self.worker,
            seq_start: self.seq_start,
            clock: self.clock,
            fence: self.fence,
            max_lead_ms: self.max_lead_ms as i64,
            position: AtomicU64::new(position),
            cursor,
            fence_ms: AtomicI64::new(fence_ms),
            slow: Mutex::new(()),
            seed: seed(),
            stats: GeneratorStats::default(),
        })
    }
}

fn seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let local = 0u8;
    // Any non-zero value works for xorshift; mix in the stack address to differ across threads.
    (nanos ^ (&local as *const u8 as u64).rotate_left(32)) | 1
}

impl SnowflakeGenerator {
    /// Starts building a generator for `worker` under `layout`.
    pub fn builder(layout: Layout, worker: u64) -> SnowflakeGeneratorBuilder {
        SnowflakeGeneratorBuilder {
            layout,
            worker,
            seq_start: SeqStart::Random,
            clock: Arc::new(SystemClock),
            fence: None,
            resume_after_ms: None,
            max_lead_ms: 0,
        }
    }
}
