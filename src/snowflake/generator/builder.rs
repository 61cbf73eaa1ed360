//! Setting up a [`SnowflakeGenerator`]: its clock, fence, resume point and lead.

use std::sync::Arc;

use super::{Cursor, GeneratorStats, MAX_LEAD_MS, NOTHING_ISSUED, SeqStart, SnowflakeGenerator};
use crate::region::{self, Region};
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
    region: Option<Region>,
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
        /// The region this generator issues for (default: none): its worker id must lie in the
        /// region's slice ([`Region::worker_slice`]), a guard against a registry's bug.
        region(region: Option<Region>) => region = region;
    }
    /// Checks the worker id against the layout and the region, and builds the generator.
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
        region::check_worker(
            self.region,
            self.layout.worker_bits(),
            self.worker,
            "the generator's worker id",
        )?;
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
            region: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::RegionError;
    use crate::snowflake::Preset;

    /// A worker id outside the region's slice never reaches a generator, whichever registry
    /// handed it out.
    #[test]
    fn a_worker_id_outside_the_regions_slice_is_refused() {
        let layout = Layout::preset(Preset::Leaf);
        let r3 = Region::new(3, 8).ok();
        for worker in [383, 512, 0] {
            let e = SnowflakeGenerator::builder(layout, worker)
                .region(r3)
                .build()
                .err();
            assert!(
                matches!(
                    e,
                    Some(SnowflakeError::Region(RegionError::WorkerOutsideSlice {
                        start: 384,
                        end: 512,
                        ..
                    }))
                ),
                "{worker}: {e:?}"
            );
        }
        for worker in [384, 511] {
            let g = SnowflakeGenerator::builder(layout, worker)
                .region(r3)
                .build()
                .unwrap();
            let id = g.next_id().unwrap();
            let parts = layout.decode(id).unwrap();
            assert_eq!(parts.worker, worker);
            assert_eq!(Region::of_worker(parts.worker, 10, 8).ok(), r3);
        }
        // Without a region every worker id of the layout is accepted, as before.
        assert!(SnowflakeGenerator::builder(layout, 1023).build().is_ok());
    }
}
