//! The thread-safe snowflake generator.

use std::sync::atomic::Ordering;
use std::sync::{Arc, TryLockError};

use super::{Clock, Layout, SnowflakeError, SystemClock};
use crate::sync::{AtomicI64, AtomicU64, Mutex, MutexGuard};

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
/// fence it calls [`TimeFence::extend`] (or, when it must not block, [`TimeFence::try_extend`]),
/// under its lock, before any ID at `t` is returned; an error there stops issuing. With a lead
/// ([`SnowflakeGeneratorBuilder::max_lead_ms`]) `t` may be ahead of the clock: the fence records
/// it like any other time.
pub trait TimeFence: Send + Sync {
    /// Makes IDs at `unix_ms` safe to issue and returns the new fence, which must be `> unix_ms`.
    ///
    /// For a time ahead of the clock a fence may also answer "not yet" by returning a value
    /// `<= unix_ms` (it cannot record times ahead just now); the generator then waits for the
    /// clock to reach `unix_ms` and asks again. For a time the clock has reached, such an answer
    /// is an error ([`SnowflakeError::FenceReached`]).
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError>;

    /// [`TimeFence::extend`] for a caller that must not block (an async server's event loop):
    /// `None` when the answer needs I/O or waiting for a lock, else what `extend` would return.
    /// A fence whose record already covers `unix_ms` answers from memory. The default is always
    /// `None`, which only sends every extension to the blocking path.
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        let _ = unix_ms;
        None
    }
}

impl<T: TimeFence + ?Sized> TimeFence for std::sync::Arc<T> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        (**self).extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        (**self).try_extend(unix_ms)
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
    rollbacks_waited: std::sync::atomic::AtomicU64,
    rollbacks_refused: std::sync::atomic::AtomicU64,
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

/// The issuing position, packed into one word so that the common case takes no lock: the tick
/// of the last issued ID in the high bits, the next sequence number to hand out in it (past the
/// maximum: the tick is used up) in the low `seq_bits + 1` bits. A later position is always a
/// larger word, and every issue moves the word forward with one compare-and-swap, so two issues
/// never get the same sequence numbers whichever path (with or without the lock) they take.
/// Layouts have 63 bits, at least one of them for the worker, so a position takes at most 63
/// bits and [`NOTHING_ISSUED`] (bit 63 set) is never one.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    seq_width: u32,
}

/// The cursor's word before the first ID (and without a resume point).
const NOTHING_ISSUED: u64 = u64::MAX;

impl Cursor {
    fn pack(self, tick: u64, next_seq: u64) -> u64 {
        (tick << self.seq_width) | next_seq
    }

    /// `(tick, next_seq)`, or `None` before the first ID.
    fn unpack(self, word: u64) -> Option<(u64, u64)> {
        (word != NOTHING_ISSUED)
            .then(|| (word >> self.seq_width, word & ((1 << self.seq_width) - 1)))
    }
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
    /// Where issuing stands (see [`Cursor`]); moved forward by compare-and-swap only.
    position: AtomicU64,
    cursor: Cursor,
    /// IDs may be issued only below this Unix ms (see [`TimeFence`]); it only grows.
    fence_ms: AtomicI64,
    /// Held by every issue that may wait, check a clock that stepped back, or move the fence;
    /// the lock-free path does none of these.
    slow: Mutex<()>,
    /// Mixed into each tick's random sequence start.
    seed: u64,
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

/// SplitMix64's finaliser: a well-spread hash of `x`, for each tick's random sequence start.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
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
        self.cursor
            .unpack(self.position.load(Ordering::Acquire))
            .map(|(tick, _)| self.layout.unix_ms(tick))
    }

    /// The time (Unix ms) IDs may be issued up to without asking the fence again: what the
    /// worker's registry has recorded as reserved. `None` without a fence.
    pub fn fence_ms(&self) -> Option<i64> {
        self.fence
            .as_ref()
            .map(|_| self.fence_ms.load(Ordering::Acquire))
    }

    fn lock_slow(&self) -> MutexGuard<'_, ()> {
        // The lock guards no data (the state is in atomics), so a poisoned lock is still safe.
        self.slow
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

    /// Reserves up to `max` IDs (at least 1) from one tick in one step; the batch path. The
    /// common case takes no lock (one compare-and-swap); waits and fence extensions take it.
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
    /// to sleep (a used-up tick, a small clock rollback), extend the fence with I/O (see
    /// [`TimeFence::try_extend`]), or wait for another caller that is doing one of these.
    /// For an async server's event loop, which then calls `next_block` on a blocking thread.
    #[inline]
    pub fn try_next_block(&self, max: u64) -> Option<Result<IdBlock, SnowflakeError>> {
        if let Some(issued) = self.issue_lock_free(max.max(1)) {
            return Some(issued);
        }
        self.issue_locked(max, false).transpose()
    }

    /// Issues a block; `Ok(None)` when `may_block` is false and issuing would block.
    fn issue(&self, max: u64, may_block: bool) -> Result<Option<IdBlock>, SnowflakeError> {
        if let Some(issued) = self.issue_lock_free(max.max(1)) {
            return issued.map(Some);
        }
        self.issue_locked(max, may_block)
    }

    /// The common case, without the lock: the clock's tick is the last issued one with sequence
    /// numbers left, or a later one, and lies below the fence. Anything else (no ID issued yet,
    /// a used-up tick, a clock behind the last issued time, the fence reached, a clock outside
    /// the layout) is `None`, for [`SnowflakeGenerator::issue_locked`] to judge.
    ///
    /// The fence only grows, so a value read here was granted and stays safe to issue below.
    /// The position is moved on by compare-and-swap from the word the decision was made on, so
    /// a concurrent issue on either path makes this one decide again.
    #[inline]
    fn issue_lock_free(&self, max: u64) -> Option<Result<IdBlock, SnowflakeError>> {
        let now_tick = self.layout.ticks_at(self.clock.now_ms()).ok()?;
        let fence = self.fence_ms.load(Ordering::Acquire);
        if self.layout.unix_ms(now_tick) >= fence {
            return None;
        }
        let max_seq = self.layout.max_sequence();
        let mut word = self.position.load(Ordering::Acquire);
        loop {
            let (last, next_seq) = self.cursor.unpack(word)?;
            let seq = if now_tick == last && next_seq <= max_seq {
                next_seq
            } else if now_tick > last {
                self.tick_start(now_tick)
            } else {
                return None;
            };
            let count = max.min(max_seq - seq + 1);
            let moved = self.cursor.pack(now_tick, seq + count);
            match self
                .position
                .compare_exchange(word, moved, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(self.block(now_tick, seq, count)),
                Err(current) => word = current,
            }
        }
    }

    /// Every other case, under the lock: waits for the next tick or out a small clock rollback,
    /// moves ahead within the lead, refuses a larger rollback and a time past the layout, and
    /// extends the fence. `Ok(None)` when `may_block` is false and one of these would block.
    fn issue_locked(&self, max: u64, may_block: bool) -> Result<Option<IdBlock>, SnowflakeError> {
        let max = max.max(1);
        let max_seq = self.layout.max_sequence();
        let lead = self.max_lead_ms;
        let _slow = if may_block {
            self.lock_slow()
        } else {
            match self.slow.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return Ok(None),
            }
        };
        loop {
            let word = self.position.load(Ordering::Acquire);
            let position = self.cursor.unpack(word);
            let mut now = self.clock.now_ms();
            let mut tick = self.layout.ticks_at(now)?;
            if let Some((last, next_seq)) = position {
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
                if tick == last && next_seq > max_seq {
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
            if tick_ms >= self.fence_ms.load(Ordering::Acquire) {
                let fence = self
                    .fence
                    .as_ref()
                    .ok_or(SnowflakeError::FenceReached { unix_ms: tick_ms })?;
                let new_fence = if may_block {
                    fence.extend(tick_ms)?
                } else {
                    match fence.try_extend(tick_ms) {
                        Some(Ok(new_fence)) if new_fence > tick_ms => new_fence,
                        // Errors and "not yet" are for the blocking path to judge and report.
                        _ => return Ok(None),
                    }
                };
                if new_fence <= tick_ms {
                    if tick_ms > now.min(self.clock.now_ms()) {
                        // The fence cannot record times ahead of the clock just now: issue this
                        // tick once the clock has reached it, without the lead.
                        self.clock.sleep_until_ms(tick_ms);
                        continue;
                    }
                    return Err(SnowflakeError::FenceReached { unix_ms: tick_ms });
                }
                self.fence_ms.fetch_max(new_fence, Ordering::AcqRel);
            }
            let seq = match position {
                Some((last, next_seq)) if last == tick => next_seq,
                _ => self.tick_start(tick),
            };
            let count = max.min(max_seq - seq + 1);
            let moved = self.cursor.pack(tick, seq + count);
            if self
                .position
                .compare_exchange(word, moved, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // An issue without the lock moved the position meanwhile: decide again.
                continue;
            }
            return self.block(tick, seq, count).map(Some);
        }
    }

    /// The IDs `seq .. seq + count` of `tick`, once the position has been moved past them.
    #[inline]
    fn block(&self, tick: u64, seq: u64, count: u64) -> Result<IdBlock, SnowflakeError> {
        Ok(IdBlock {
            first: self.layout.encode(tick, self.worker, seq)?,
            stride: self.layout.sequence_stride(),
            count,
        })
    }

    /// Where `tick`'s sequence starts: the same for every caller that computes it, so the
    /// lock-free path may compute it before its compare-and-swap decides who issues.
    #[inline]
    fn tick_start(&self, tick: u64) -> u64 {
        match self.seq_start {
            SeqStart::Zero => 0,
            SeqStart::Random => {
                // Leaf draws from [0, 100); narrow layouts keep at least half their sequence space.
                let span = 100.min(self.layout.max_sequence().div_ceil(2)).max(1);
                mix(self.seed ^ tick) % span
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
}
