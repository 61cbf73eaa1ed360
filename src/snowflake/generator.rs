//! The thread-safe snowflake generator.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Clock, Layout, SnowflakeError, SystemClock};
use crate::sync::{Mutex, MutexGuard};

/// Largest backwards clock step (ms) the generator waits out instead of failing, as in Leaf.
pub const MAX_TOLERATED_ROLLBACK_MS: i64 = 5;

/// Largest lead over the clock (ms) a generator may be given (see
/// [`SnowflakeGeneratorBuilder::max_lead_ms`]).
pub const MAX_LEAD_MS: u64 = 60_000;

/// Where the sequence starts in each new tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeqStart {
    /// A random value in `[0, 100)` (Leaf's choice), so the low bits of IDs spread across shards
    /// even when few IDs are issued per tick.
    #[default]
    Random,
    /// Always 0: the densest packing, for layouts with few sequence bits.
    Zero,
}

impl std::str::FromStr for SeqStart {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "random" => Ok(SeqStart::Random),
            "zero" => Ok(SeqStart::Zero),
            other => Err(format!(
                "seq_start must be \"random\" or \"zero\", got {other:?}"
            )),
        }
    }
}

/// An upper bound on the time of IDs a generator may issue, held by whatever guarantees that no one
/// else issues IDs for this worker id (a lease, a state file, a database row).
///
/// The generator issues an ID at Unix time `t` only while `t < fence`. When it needs to go past the
/// fence it calls [`TimeFence::extend`], under its lock, before any ID at `t` is returned; an error
/// there stops issuing. With a lead ([`SnowflakeGeneratorBuilder::max_lead_ms`]) `t` may be ahead
/// of the clock: the fence records it like any other time.
pub trait TimeFence: Send + Sync {
    /// Makes IDs at `unix_ms` safe to issue and returns the new fence, which must be `> unix_ms`.
    ///
    /// For a time ahead of the clock a fence may also answer "not yet" by returning a value
    /// `<= unix_ms` (it cannot record times ahead just now); the generator then waits for the
    /// clock to reach `unix_ms` and asks again. For a time the clock has reached, such an answer
    /// is an error ([`SnowflakeError::FenceReached`]).
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError>;
}

impl<T: TimeFence + ?Sized> TimeFence for std::sync::Arc<T> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        (**self).extend(unix_ms)
    }
}

/// A run of IDs from one tick: `first`, `first + stride`, ... (`count` of them), all ascending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdBlock {
    /// The first ID.
    pub first: u64,
    /// The distance between consecutive IDs.
    pub stride: u64,
    /// How many IDs the block holds (at least 1).
    pub count: u64,
}

impl IdBlock {
    /// The last ID in the block.
    pub fn last(&self) -> u64 {
        self.first + (self.count - 1) * self.stride
    }
}

impl IntoIterator for IdBlock {
    type Item = u64;
    type IntoIter = std::iter::StepBy<std::ops::RangeInclusive<u64>>;
    fn into_iter(self) -> Self::IntoIter {
        (self.first..=self.last()).step_by(self.stride as usize)
    }
}

/// How often a generator met a clock that had moved back, for monitoring.
#[derive(Debug, Default)]
pub struct GeneratorStats {
    rollbacks_waited: AtomicU64,
    rollbacks_refused: AtomicU64,
}

impl GeneratorStats {
    /// Small steps back that were waited out.
    pub fn rollbacks_waited(&self) -> u64 {
        self.rollbacks_waited.load(Ordering::Relaxed)
    }
    /// Steps back that were refused with [`SnowflakeError::ClockMovedBackwards`].
    pub fn rollbacks_refused(&self) -> u64 {
        self.rollbacks_refused.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
struct State {
    /// The tick of the last issued ID, if any.
    last_tick: Option<u64>,
    /// Next sequence number to hand out in `last_tick`; past the maximum means the tick is used up.
    next_seq: u64,
    /// IDs may be issued only below this Unix ms (see [`TimeFence`]).
    fence_ms: i64,
    rng: u64,
}

/// Issues unique, strictly increasing IDs for one worker id.
///
/// By default (Leaf's behaviour) at most one tick's sequence numbers are issued per tick of the
/// clock: a batch larger than that waits for the clock. With a lead of `L` ms
/// ([`SnowflakeGeneratorBuilder::max_lead_ms`]) a used-up tick is followed at once by the next
/// one as long as its time is at most `L` ms ahead of the clock, so IDs carry times up to `L` ms
/// in the future; every such time still passes the [`TimeFence`] first.
///
/// ```
/// use leafctl::snowflake::{Layout, Preset, SnowflakeGenerator};
/// let generator = SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 7).build().unwrap();
/// let a = generator.next_id().unwrap();
/// let b = generator.next_id().unwrap();
/// assert!(b > a);
/// assert_eq!(generator.layout().decode(b).unwrap().worker, 7);
/// ```
pub struct SnowflakeGenerator {
    layout: Layout,
    worker: u64,
    seq_start: SeqStart,
    clock: Arc<dyn Clock>,
    fence: Option<Box<dyn TimeFence>>,
    max_lead_ms: i64,
    state: Mutex<State>,
    stats: GeneratorStats,
}

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
    /// The time source (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
    /// Where each tick's sequence starts (default: random in `[0, 100)`).
    pub fn seq_start(mut self, seq_start: SeqStart) -> Self {
        self.seq_start = seq_start;
        self
    }
    /// Bounds issued times by a lease or reservation.
    pub fn fence(mut self, fence: Box<dyn TimeFence>) -> Self {
        self.fence = Some(fence);
        self
    }
    /// Treats every tick up to and including the one holding `unix_ms` as already used (by an
    /// earlier run on this worker id), so the first ID comes from a later tick.
    pub fn resume_after(mut self, unix_ms: i64) -> Self {
        self.resume_after_ms = Some(unix_ms);
        self
    }
    /// Lets the generator run up to `ms` milliseconds ahead of the clock (default 0: never ahead,
    /// Leaf's behaviour; at most [`MAX_LEAD_MS`]). When a tick's sequence numbers are used up, the
    /// next tick is used at once if its time is at most `ms` ahead of the clock, instead of
    /// waiting for it. Times ahead of the clock are recorded by the [`TimeFence`] before IDs at
    /// them are returned, so a successor on the worker id still starts after them.
    pub fn max_lead_ms(mut self, ms: u64) -> Self {
        self.max_lead_ms = ms;
        self
    }
    /// Checks the worker id against the layout and builds the generator.
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
        let (last_tick, next_seq) = match self.resume_after_ms {
            Some(ms) if ms >= self.layout.epoch_ms() => (
                Some(self.layout.ticks_at(ms)?),
                self.layout.max_sequence() + 1,
            ),
            _ => (None, 0),
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
            state: Mutex::new(State {
                last_tick,
                next_seq,
                fence_ms,
                rng: seed(),
            }),
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

fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
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

    /// The layout IDs are encoded with.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The worker id encoded in every ID.
    pub fn worker(&self) -> u64 {
        self.worker
    }

    /// Clock rollbacks met so far.
    pub fn stats(&self) -> &GeneratorStats {
        &self.stats
    }

    /// How far (ms) IDs may run ahead of the clock (0: never).
    pub fn max_lead_ms(&self) -> u64 {
        self.max_lead_ms as u64
    }

    /// Unix ms of the tick of the last issued ID (or of the resume point), if any. With a lead it
    /// may be ahead of the clock.
    pub fn last_issued_ms(&self) -> Option<i64> {
        self.lock_state().last_tick.map(|t| self.layout.unix_ms(t))
    }

    /// The time (Unix ms) IDs may be issued up to without asking the fence again: what the
    /// worker's registry has recorded as reserved. `None` without a fence.
    pub fn fence_ms(&self) -> Option<i64> {
        self.fence.as_ref().map(|_| self.lock_state().fence_ms)
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent: every update is a plain
        // store after all checks passed. So a poisoned lock is still safe to use.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Issues one ID.
    pub fn next_id(&self) -> Result<u64, SnowflakeError> {
        Ok(self.next_block(1)?.first)
    }

    /// Issues `n` IDs, ascending.
    pub fn next_ids(&self, n: usize) -> Result<Vec<u64>, SnowflakeError> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let block = self.next_block((n - out.len()) as u64)?;
            out.extend(block);
        }
        Ok(out)
    }

    /// Reserves up to `max` IDs (at least 1) from one tick under one lock; the batch path.
    ///
    /// When the tick's sequence is used up it waits (sleeping) for the next tick, or, with a lead,
    /// moves to the next tick at once while that tick is at most the lead ahead of the clock. A
    /// clock that fell behind the last issued time by at most the lead plus
    /// [`MAX_TOLERATED_ROLLBACK_MS`] is waited out; a larger step back is an error, and so is a
    /// time past the layout's capacity.
    pub fn next_block(&self, max: u64) -> Result<IdBlock, SnowflakeError> {
        // With `may_block` the issuer never gives up, so `None` cannot happen.
        self.issue(max, true)?.ok_or(SnowflakeError::FenceReached {
            unix_ms: self.clock.now_ms(),
        })
    }

    /// Like [`SnowflakeGenerator::next_block`], but never blocks: `None` when issuing would have
    /// to sleep (a used-up tick, a small clock rollback) or extend the fence (which may do I/O).
    /// For an async server's event loop, which then calls `next_block` on a blocking thread.
    #[inline]
    pub fn try_next_block(&self, max: u64) -> Option<Result<IdBlock, SnowflakeError>> {
        self.issue(max, false).transpose()
    }

    /// Issues a block; `Ok(None)` when `may_block` is false and issuing would block.
    fn issue(&self, max: u64, may_block: bool) -> Result<Option<IdBlock>, SnowflakeError> {
        let max = max.max(1);
        let max_seq = self.layout.max_sequence();
        let lead = self.max_lead_ms;
        let mut st = self.lock_state();
        loop {
            let mut now = self.clock.now_ms();
            let mut tick = self.layout.ticks_at(now)?;
            if let Some(last) = st.last_tick {
                if tick < last {
                    // The last issued tick is ahead of the clock. Within the lead that is the
                    // lead at work (it is measured from the last issued time, not the clock);
                    // beyond it the clock stepped back.
                    let beyond = self.layout.unix_ms(last) - now - lead;
                    if beyond > 0 {
                        if beyond > MAX_TOLERATED_ROLLBACK_MS {
                            self.stats.rollbacks_refused.fetch_add(1, Ordering::Relaxed);
                            return Err(SnowflakeError::ClockMovedBackwards { by_ms: beyond });
                        }
                        if !may_block {
                            return Ok(None);
                        }
                        self.stats.rollbacks_waited.fetch_add(1, Ordering::Relaxed);
                        self.clock.sleep_ms((beyond as u64) * 2);
                        now = self.clock.now_ms();
                        tick = self.layout.ticks_at(now)?;
                        let beyond = self.layout.unix_ms(last) - now - lead;
                        if tick < last && beyond > 0 {
                            self.stats.rollbacks_refused.fetch_add(1, Ordering::Relaxed);
                            return Err(SnowflakeError::ClockMovedBackwards { by_ms: beyond });
                        }
                    }
                    tick = tick.max(last);
                }
                if tick == last && st.next_seq > max_seq {
                    // This tick is used up: take the next one if it is within the lead, else
                    // wait until it is.
                    let next_tick_ms = self.layout.unix_ms(last + 1);
                    if last + 1 > self.layout.max_ticks() {
                        return Err(SnowflakeError::TimeOverflow {
                            unix_ms: next_tick_ms,
                            last_ms: self.layout.last_unix_ms(),
                        });
                    }
                    if next_tick_ms.saturating_sub(lead) > now {
                        if !may_block {
                            return Ok(None);
                        }
                        self.clock.sleep_until_ms(next_tick_ms.saturating_sub(lead));
                        continue;
                    }
                    tick = last + 1;
                }
            }
            let tick_ms = self.layout.unix_ms(tick);
            if tick_ms >= st.fence_ms {
                if !may_block && self.fence.is_some() {
                    return Ok(None);
                }
                let fence = self
                    .fence
                    .as_ref()
                    .ok_or(SnowflakeError::FenceReached { unix_ms: tick_ms })?;
                let new_fence = fence.extend(tick_ms)?;
                if new_fence <= tick_ms {
                    if tick_ms > now.min(self.clock.now_ms()) {
                        // The fence cannot record times ahead of the clock just now: issue this
                        // tick once the clock has reached it, without the lead.
                        self.clock.sleep_until_ms(tick_ms);
                        continue;
                    }
                    return Err(SnowflakeError::FenceReached { unix_ms: tick_ms });
                }
                st.fence_ms = new_fence;
            }
            if st.last_tick != Some(tick) {
                st.last_tick = Some(tick);
                st.next_seq = self.tick_start(&mut st.rng);
            }
            let count = max.min(max_seq - st.next_seq + 1);
            let first = self.layout.encode(tick, self.worker, st.next_seq)?;
            st.next_seq += count;
            return Ok(Some(IdBlock {
                first,
                stride: self.layout.sequence_stride(),
                count,
            }));
        }
    }

    fn tick_start(&self, rng: &mut u64) -> u64 {
        match self.seq_start {
            SeqStart::Zero => 0,
            SeqStart::Random => {
                // Leaf draws from [0, 100); narrow layouts keep at least half their sequence space.
                let span = 100.min(self.layout.max_sequence().div_ceil(2)).max(1);
                xorshift(rng) % span
            }
        }
    }
}

/// Model checks of the fence being extended under the generator's lock (`--cfg loom`; see
/// `crate::sync`).
///
/// Two threads issue IDs from a layout with four sequence numbers per 1 ms tick (so they cross
/// ticks and wait for the next one) under a fence that grants one tick at a time, while a third
/// revokes the fence, as a lost lease does. Every ID must be unique and ascending per thread,
/// lie below what the fence had granted when it was returned, and nothing may be issued past
/// what was granted before the revocation.
#[cfg(all(test, loom))]
mod loom_tests {
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
}
