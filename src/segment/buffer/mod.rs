//! One tag's double buffer: two segments, a lock-free hot path, and the state of the next load.
//!
//! The hot path is one atomic `fetch_add` on the current segment's counter, framed by two loads
//! of the segment's generation (a seqlock): an ID is handed out only if the segment was not
//! refilled while it was taken, so a thread that stalls on an old segment can waste an ID but
//! never repeat one. Everything else (switching, waiting for a load) happens under a mutex on
//! the slow path, once per segment.

//!
//! The files: `segment` (one segment and its seqlock), `load` (sizing and recording the
//! next claim), `batch` (the batch path), `view` (monitoring snapshots and a tag's health).

mod batch;
mod load;
mod segment;
mod view;

#[cfg(test)]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;

use std::ops::Range;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::{Duration, Instant};

pub use view::{SegmentBufferView, SegmentView, TagHealth};

use self::segment::{Padded, Segment};
use super::{MAX_DYNAMIC_STEP, SegmentError};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, MutexGuard};

/// Leaf's `SEGMENT_DURATION`: a segment used up faster than this doubles the next step.
pub const SEGMENT_DURATION_MS: i64 = 15 * 60 * 1000;
/// A segment holds at least this many claim times' worth of IDs at its tag's rate, above
/// [`MAX_DYNAMIC_STEP`] if need be, so that the next one can arrive before it runs out when the
/// database is far away (a claim of 180 ms at 10 million IDs a second).
pub const CLAIMS_COVERED: i64 = 8;
/// The largest segment the claim-time rule may ask for (ten times [`MAX_DYNAMIC_STEP`]).
pub const MAX_COVERING_STEP: i64 = 10 * MAX_DYNAMIC_STEP;

/// What the slow path found.
pub(crate) enum Slow {
    /// Try the hot path again.
    Retry,
    /// Try the hot path again: a load it waited for has ended.
    Waited,
    /// Ask the loader for the next segment, then call again.
    StartLoad,
}

#[derive(Debug, Default)]
struct LoadState {
    /// A load is queued or running.
    loading: bool,
    /// The other segment holds a fresh range.
    next_ready: bool,
    /// At least one claim has succeeded.
    initialised: bool,
    /// The step of the next dynamic claim (Leaf's `buffer.step`).
    step: i64,
    /// The table's step as last read (Leaf's `minStep`).
    min_step: i64,
    /// When the last claim after the first was planned (clock ms), 0 before (Leaf's
    /// `updateTimestamp`).
    update_ms: i64,
    /// When the first claim was planned (clock ms): the rate's start until `update_ms` is set.
    first_ms: i64,
    /// The IDs taken from the segments when the last claim was planned: the rate is what was
    /// taken since over the time since.
    taken_at_update: u64,
    /// IDs of batches claimed past the buffers (not taken from the segments, so not in the rate).
    batch_claimed: u64,
    /// Loads that failed (a waiter that sees this grow gives up).
    failures: u64,
    /// The last load failed for a reason that passes ([`SegmentError::is_transient`]); the
    /// loader retries it until one succeeds.
    load_failing: bool,
    last_error: Option<String>,
    last_failure: Option<Instant>,
    /// The last load was refused because the table went backwards: `(db, start, mark)`.
    went_backwards: Option<(String, u64, u64)>,
    /// Why the step last became what it is.
    step_reason: &'static str,
    /// Wall-clock Unix ms of the last failure, for the status page.
    last_failure_unix_ms: Option<i64>,
    /// The tag is used up (`max_id` at 2^63-1): `(max_id, increment)`. No load is started
    /// again and nothing is logged again; callers get [`SegmentError::Exhausted`].
    exhausted: Option<(i64, i64, i64)>,
    /// IDs issued from segments no longer current, and from batch claims made past the
    /// buffers: with the current segment's, the tag's issued total.
    retired: u64,
    /// Claims made for the tag (loads and batch claims), and how many failed.
    claims: u64,
    claim_failures: u64,
    /// How long the last claim took (µs).
    last_claim_us: Option<u64>,
    /// The last batch claim failed (the database down): when it ended, and why. Batches that
    /// need a claim of their own are refused until one succeeds ([`SegmentBuffer::batch_refusal`]).
    batch_failure: Option<(Instant, String)>,
    /// A batch let through to ask the failing database again is under way.
    batch_probe: bool,
    /// The segments were handed back ([`SegmentBuffer::close_for_hand_back`]): nothing is
    /// taken or loaded again.
    closed: bool,
}

/// What every take reads: which segment is current, and whether the tag moved since the
/// status sampler last looked (see [`SegmentBuffer::take_moved`]).
#[derive(Debug, Default)]
struct Hot {
    current: AtomicUsize,
    /// Set by the first take after the sampler cleared it: the sampler then visits only the tags
    /// that moved, never every tag.
    moved: AtomicBool,
}

/// A tag's two segments and the bookkeeping of loading them.
#[derive(Debug)]
pub struct SegmentBuffer {
    tag: Box<str>,
    segments: [Segment; 2],
    hot: Padded<Hot>,
    /// The issued total the status sampler last read (it rates the difference).
    sampled: AtomicU64,
    /// IDs a periodic tag issued from its periods' buffers through this, its own buffer
    /// ([`SegmentBuffer::count_routed`]): counted here, so monitoring sees the tag as one.
    routed: AtomicU64,
    /// Set while a load is queued or running, or the next segment is ready, or a failed load
    /// waits for its retry: the hot path then does not ask for another.
    next_busy: AtomicBool,
    state: Mutex<LoadState>,
    changed: Condvar,
    /// How the tag's dense IDs are issued (its shape), set before its first claim
    /// ([`SegmentBuffer::set_issuing`]); unset reads as plain.
    issuing: std::sync::OnceLock<crate::segment::Issuing>,
}

fn unix_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// After a failed load, callers do not start another for this long (the loader retries).
pub(crate) const RETRY_AFTER: Duration = Duration::from_millis(500);
/// After a batch's own claim failed for a passing reason, further batches that need a claim are
/// refused at once, and one at most this often asks the database again: an outage costs one
/// batch a second a claim's wait, and every other batch none.
pub const BATCH_RETRY_AFTER: Duration = Duration::from_secs(1);

impl SegmentBuffer {
    /// An empty buffer for `tag`; the first `next_id` loads its first segment.
    pub fn new(tag: impl Into<Box<str>>) -> SegmentBuffer {
        SegmentBuffer {
            tag: tag.into(),
            segments: Default::default(),
            hot: Padded(Hot::default()),
            sampled: AtomicU64::new(0),
            routed: AtomicU64::new(0),
            next_busy: AtomicBool::new(false),
            state: Mutex::new(LoadState::default()),
            changed: Condvar::new(),
            issuing: std::sync::OnceLock::new(),
        }
    }

    /// How the tag's dense IDs are issued, if known yet (it is before the first claim).
    pub(crate) fn issuing(&self) -> Option<&crate::segment::Issuing> {
        self.issuing.get()
    }

    /// Sets how the tag's dense IDs are issued (the first setting stays).
    pub(crate) fn set_issuing(&self, issuing: crate::segment::Issuing) -> &crate::segment::Issuing {
        self.issuing.get_or_init(|| issuing)
    }

    /// The ID issued for dense ID `dense`: itself for a plain tag, its permutation for an opaque
    /// one. Claims of an opaque tag stop at its capacity, so every dense ID it holds has one.
    #[inline]
    pub(crate) fn issue(&self, dense: u64) -> Result<u64, SegmentError> {
        match self.issuing.get() {
            None => Ok(dense),
            Some(issuing) => issuing.id(&self.tag, dense),
        }
    }

    /// The tag this buffer issues for.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    fn lock(&self) -> MutexGuard<'_, LoadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The hot path: an ID and whether the other segment should now be preloaded; `None` sends
    /// the caller to [`SegmentBuffer::slow_path`].
    #[inline(always)]
    pub(crate) fn try_take(&self) -> Option<(u64, bool)> {
        let idx = self.hot.0.current.load(SeqCst);
        self.segments[idx]
            .take()
            .map(|(id, past)| (id, past && !self.next_busy.load(SeqCst)))
    }

    /// Under the state lock: true when the current segment has IDs left, after switching to the
    /// other one if it is loaded.
    fn switch_locked(&self, st: &mut LoadState) -> bool {
        let cur = self.hot.0.current.load(SeqCst);
        if self.segments[cur].has_left() {
            return true;
        }
        if !st.next_ready {
            return false;
        }
        // The used-up segment's IDs count as issued from now on.
        st.retired += self.segments[cur].used();
        self.hot.0.current.store(1 - cur, SeqCst);
        st.next_ready = false;
        self.next_busy.store(st.loading, SeqCst);
        self.changed.notify_all();
        true
    }

    /// Marks a preload as started, unless one is already under way (or the next segment is
    /// ready). True means the caller must hand this buffer to the loader.
    pub(crate) fn claim_preload(&self) -> bool {
        if self.next_busy.swap(true, SeqCst) {
            return false;
        }
        let mut st = self.lock();
        if st.loading || st.next_ready || st.exhausted.is_some() || st.closed {
            return false;
        }
        st.loading = true;
        true
    }

    /// Called when the current segment gave nothing: switches to the next segment if ready,
    /// waits (bounded) for a running load, or says a load must be started.
    pub(crate) fn slow_path(&self, deadline: Instant) -> Result<Slow, SegmentError> {
        let mut st = self.lock();
        let mut waited_since: Option<u64> = None;
        loop {
            if st.closed {
                return Err(SegmentError::Stopped {
                    tag: self.tag.to_string(),
                });
            }
            if self.switch_locked(&mut st) {
                return Ok(match waited_since {
                    Some(_) => Slow::Waited,
                    None => Slow::Retry,
                });
            }
            // Only a failure ends the wait early; a success that other threads already used up
            // just means another load is due.
            let failed_meanwhile = waited_since.is_some_and(|n| st.failures > n);
            if !st.loading {
                let recent_failure = st.last_failure.is_some_and(|t| t.elapsed() < RETRY_AFTER);
                if failed_meanwhile || recent_failure || st.exhausted.is_some() {
                    return Err(self.not_ready(&st));
                }
                st.loading = true;
                self.next_busy.store(true, SeqCst);
                return Ok(Slow::StartLoad);
            }
            waited_since.get_or_insert(st.failures);
            let now = Instant::now();
            if now >= deadline {
                return Err(self.not_ready(&st));
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn not_ready(&self, st: &LoadState) -> SegmentError {
        if let Some((max_id, increment, ceiling)) = st.exhausted {
            return SegmentError::Exhausted {
                tag: self.tag.to_string(),
                max_id,
                increment,
                ceiling,
            };
        }
        if let Some((db, start, mark)) = &st.went_backwards {
            return SegmentError::WentBackwards {
                tag: self.tag.to_string(),
                db: db.clone(),
                start: *start,
                mark: *mark,
            };
        }
        SegmentError::NotReady {
            tag: self.tag.to_string(),
            cause: st.last_error.clone(),
        }
    }

    /// Gives up a load that could not be queued (the generator is gone).
    pub(crate) fn abandon_load(&self, why: &str) {
        let mut st = self.lock();
        st.loading = false;
        st.failures += 1;
        st.last_error = Some(why.to_string());
        st.last_failure = Some(Instant::now());
        st.last_failure_unix_ms = Some(unix_now_ms());
        self.next_busy.store(st.next_ready, SeqCst);
        self.changed.notify_all();
    }

    /// Ends a load that claimed nothing and failed nothing: a periodic tag's own buffer, found
    /// to be one by its first load. Callers waiting for it are woken (they then ask the tag's
    /// periods), and the tag is not marked as failing.
    pub(crate) fn end_load_unclaimed(&self) {
        let mut st = self.lock();
        st.loading = false;
        // Wakes the waiters of `slow_path`, which count failures to see that a load has ended.
        st.failures += 1;
        self.next_busy.store(st.next_ready, SeqCst);
        self.changed.notify_all();
    }

    /// Whether a retry after a failed load is still wanted; marks it as loading if so.
    pub(crate) fn start_retry(&self) -> bool {
        let mut st = self.lock();
        if st.loading || st.next_ready || st.closed {
            return false;
        }
        st.loading = true;
        self.next_busy.store(true, SeqCst);
        true
    }

    /// IDs handed out since the buffer was made: those of segments used up before, of batch
    /// claims, and of the current segment so far. Read off the segments' own counters, so
    /// counting costs the hot path nothing.
    pub fn issued(&self) -> u64 {
        let st = self.lock();
        self.issued_locked(&st)
    }

    fn issued_locked(&self, st: &LoadState) -> u64 {
        let cur = self.hot.0.current.load(SeqCst);
        st.retired
            .saturating_add(self.segments[cur].used())
            .saturating_add(self.routed.load(Relaxed))
    }

    /// Counts `n` IDs a periodic tag issued from its periods' buffers as this buffer's.
    pub(crate) fn count_routed(&self, n: u64) {
        self.routed.fetch_add(n, Relaxed);
    }

    /// IDs the buffers hold now: the current segment's rest and the loaded next one.
    pub fn buffered(&self) -> u64 {
        let st = self.lock();
        self.buffered_locked(&st)
    }

    fn buffered_locked(&self, st: &LoadState) -> u64 {
        let cur = self.hot.0.current.load(SeqCst);
        let len = |r: Range<u64>| r.end - r.start;
        let next = if st.next_ready {
            len(self.segments[1 - cur].left())
        } else {
            0
        };
        len(self.segments[cur].left()).saturating_add(next)
    }

    /// Ends issuing from this buffer for good and returns the IDs it never handed out, newest
    /// first: the whole loaded next segment, then the current one's rest (each possibly empty).
    /// A take that raced ahead of it kept its ID, below the returned ranges; every take, batch
    /// and load after it is refused ([`SegmentError::Stopped`]). For handing the ranges back to
    /// the table when a server stops ([`crate::segment::SegmentGenerator::hand_back`]).
    pub(crate) fn close_for_hand_back(&self) -> Vec<Range<u64>> {
        let mut st = self.lock();
        st.closed = true;
        let cur = self.hot.0.current.load(SeqCst);
        let mut unused = Vec::with_capacity(2);
        if st.next_ready {
            unused.push(self.segments[1 - cur].close());
            st.next_ready = false;
        }
        unused.push(self.segments[cur].close());
        self.next_busy.store(true, SeqCst);
        self.changed.notify_all();
        unused
    }

    /// Records how a claim for this tag went (loads and batch claims).
    pub(crate) fn record_claim(&self, elapsed: Duration, ok: bool) {
        let mut st = self.lock();
        st.claims += 1;
        if !ok {
            st.claim_failures += 1;
        }
        st.last_claim_us = Some(u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX));
    }

    /// Whether the tag moved since [`SegmentBuffer::take_moved`] last cleared the flag; the
    /// caller of a take that sees `false` calls [`SegmentBuffer::mark_moved`].
    #[inline(always)]
    pub(crate) fn moved(&self) -> bool {
        self.hot.0.moved.load(Relaxed)
    }

    /// Sets the moved flag; true when it was clear (the caller then lists the buffer as moved).
    pub(crate) fn mark_moved(&self) -> bool {
        !self.hot.0.moved.swap(true, SeqCst)
    }

    /// Clears the moved flag and returns the IDs issued since the last call (the sampler's
    /// per-second rate). Cleared first, so a take that races with it marks the tag again.
    pub fn take_moved(&self) -> u64 {
        self.hot.0.moved.store(false, SeqCst);
        let total = self.issued();
        total.saturating_sub(self.sampled.swap(total, SeqCst))
    }

    /// Whether the tag needs attention now or will once its buffers are used: a failing load,
    /// or a table with nothing left to claim (its last IDs may still be buffered). The
    /// generator keeps such a tag in its short list, so the moment single IDs use up the
    /// buffers, what `/readyz`, `/metrics` and the status page say is already right.
    pub(crate) fn may_need_attention(&self) -> bool {
        let st = self.lock();
        st.last_error.is_some() || st.exhausted.is_some()
    }

    /// IDs the buffers hold once a load under way has ended (waiting until `deadline` at most):
    /// an answer that says how many IDs are left counts a claim in flight once, in the buffers.
    pub(crate) fn buffered_after_load(&self, deadline: Instant) -> u64 {
        let mut st = self.lock();
        while st.loading {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        self.buffered_locked(&st)
    }

    /// Whether a load is queued or running now.
    pub(crate) fn is_loading(&self) -> bool {
        self.lock().loading
    }

    /// A snapshot for monitoring.
    pub fn view(&self) -> SegmentBufferView {
        let st = self.lock();
        SegmentBufferView {
            tag: self.tag.to_string(),
            issued: self.issued_locked(&st),
            claims: st.claims,
            claim_failures: st.claim_failures,
            last_claim_us: st.last_claim_us,
            bounds: crate::segment::Bounds::UNBOUNDED,
            init_ok: st.initialised,
            pos: self.hot.0.current.load(SeqCst),
            segments: [self.segments[0].view(), self.segments[1].view()],
            next_ready: st.next_ready,
            loading: st.loading,
            step: st.step,
            min_step: st.min_step,
            last_error: st.last_error.clone(),
            exhausted: st.exhausted.is_some() && self.buffered_locked(&st) == 0,
            buffered: self.buffered_locked(&st),
            step_reason: st.step_reason,
            last_error_unix_ms: st.last_error.as_ref().and(st.last_failure_unix_ms),
        }
    }
}
