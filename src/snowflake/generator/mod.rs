//! The thread-safe snowflake generator.
//!
//! `builder` sets one up; the fence it issues under is [`super::TimeFence`].

mod builder;
#[cfg(all(test, loom))]
mod loom_tests;

use std::sync::Arc;
use std::sync::TryLockError;
use std::sync::atomic::Ordering;

pub use builder::SnowflakeGeneratorBuilder;

use super::{Clock, Layout, SnowflakeError, TimeFence};
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

/// SplitMix64's finaliser: a well-spread hash of `x`, for each tick's random sequence start.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What the slow path decided for the tick it was asked about.
enum Decided {
    /// Issue at this tick (with the clock read at this time, ms).
    Go(i64, u64),
    /// It would sleep or wait on the registry, and the caller may not block.
    WouldBlock,
    /// It waited for the clock: read the position and decide again.
    Again,
}

impl SnowflakeGenerator {
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
            let now = self.clock.now_ms();
            let (now, tick) = match self.next_tick(position, now, may_block)? {
                Decided::Go(now, tick) => (now, tick),
                Decided::WouldBlock => return Ok(None),
                Decided::Again => continue,
            };
            match self.fence_tick(tick, now, may_block)? {
                Decided::Go(..) => {}
                Decided::WouldBlock => return Ok(None),
                Decided::Again => continue,
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

    /// The tick to issue at after `position` (the last tick and its next sequence) at `now`:
    /// the clock's, the last one within the lead, or the next one once this is used up;
    /// waits out a small rollback, refuses a larger one and a time past the layout.
    fn next_tick(
        &self,
        position: Option<(u64, u64)>,
        mut now: i64,
        may_block: bool,
    ) -> Result<Decided, SnowflakeError> {
        let lead = self.max_lead_ms;
        let mut tick = self.layout.ticks_at(now)?;
        let Some((last, next_seq)) = position else {
            return Ok(Decided::Go(now, tick));
        };
        if tick < last {
            // The last issued tick is ahead of the clock. Within the lead that is the lead at
            // work (it is measured from the last issued time, not the clock); beyond it the
            // clock stepped back.
            let beyond = self.layout.unix_ms(last) - now - lead;
            if beyond > 0 {
                if beyond > MAX_TOLERATED_ROLLBACK_MS {
                    self.stats.rollbacks_refused.fetch_add(1, Ordering::Relaxed);
                    return Err(SnowflakeError::ClockMovedBackwards { by_ms: beyond });
                }
                if !may_block {
                    return Ok(Decided::WouldBlock);
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
        if tick == last && next_seq > self.layout.max_sequence() {
            // This tick is used up: take the next one if it is within the lead, else wait
            // until it is.
            let next_tick_ms = self.layout.unix_ms(last + 1);
            if last + 1 > self.layout.max_ticks() {
                return Err(SnowflakeError::TimeOverflow {
                    unix_ms: next_tick_ms,
                    last_ms: self.layout.last_unix_ms(),
                });
            }
            if next_tick_ms.saturating_sub(lead) > now {
                if !may_block {
                    return Ok(Decided::WouldBlock);
                }
                self.clock.sleep_until_ms(next_tick_ms.saturating_sub(lead));
                return Ok(Decided::Again);
            }
            tick = last + 1;
        }
        Ok(Decided::Go(now, tick))
    }

    /// Extends the fence past `tick` when it reaches it (the registry records the time before
    /// any ID of it goes out); `Again` once the clock had to catch up with a tick the fence
    /// could not yet record ahead of it.
    fn fence_tick(&self, tick: u64, now: i64, may_block: bool) -> Result<Decided, SnowflakeError> {
        let tick_ms = self.layout.unix_ms(tick);
        if tick_ms < self.fence_ms.load(Ordering::Acquire) {
            return Ok(Decided::Go(now, tick));
        }
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
                _ => return Ok(Decided::WouldBlock),
            }
        };
        if new_fence <= tick_ms {
            if tick_ms > now.min(self.clock.now_ms()) {
                // The fence cannot record times ahead of the clock just now: issue this tick
                // once the clock has reached it, without the lead.
                self.clock.sleep_until_ms(tick_ms);
                return Ok(Decided::Again);
            }
            return Err(SnowflakeError::FenceReached { unix_ms: tick_ms });
        }
        self.fence_ms.fetch_max(new_fence, Ordering::AcqRel);
        Ok(Decided::Go(now, tick))
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
