//! One tag's double buffer: two segments, a lock-free hot path, and the state of the next load.
//!
//! The hot path is one atomic `fetch_add` on the current segment's counter, framed by two loads
//! of the segment's generation (a seqlock): an ID is handed out only if the segment was not
//! refilled while it was taken, so a thread that stalls on an old segment can waste an ID but
//! never repeat one. Everything else (switching, waiting for a load) happens under a mutex on
//! the slow path, once per segment.

use std::ops::Range;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{Claim, Increment, MAX_DYNAMIC_STEP, SegmentError};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, MutexGuard};

/// Leaf's `SEGMENT_DURATION`: a segment used up faster than this doubles the next step.
pub const SEGMENT_DURATION_MS: i64 = 15 * 60 * 1000;
/// A segment holds at least this many claim times' worth of IDs at its tag's rate, above
/// [`MAX_DYNAMIC_STEP`] if need be, so that the next one can arrive before it runs out when the
/// database is far away (a claim of 180 ms at 10 million IDs a second).
pub const CLAIMS_COVERED: i64 = 8;
/// The largest segment the claim-time rule may ask for (ten times [`MAX_DYNAMIC_STEP`]).
pub const MAX_COVERING_STEP: i64 = 10 * MAX_DYNAMIC_STEP;

/// Keeps a value on its own cache lines, so the counter's writes do not slow readers of the rest.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded<T>(T);

/// One segment: IDs `[start, max)`, handed out from `value` upwards.
#[derive(Debug, Default)]
struct Segment {
    /// The next ID to hand out (may run past `max` once the segment is used up).
    value: Padded<AtomicU64>,
    meta: Padded<SegmentMeta>,
}

#[derive(Debug, Default)]
struct SegmentMeta {
    /// Even: stable; odd: being refilled. Bumped twice per refill.
    generation: AtomicU64,
    start: AtomicU64,
    max: AtomicU64,
    step: AtomicU64,
    /// `start + step / 10`: taking this ID starts the preload of the other segment.
    preload_at: AtomicU64,
}

impl Segment {
    /// Takes one ID, or `None` if the segment is used up or was refilled meanwhile.
    #[inline(always)]
    fn take(&self) -> Option<(u64, bool)> {
        let m = &self.meta.0;
        let g1 = m.generation.load(SeqCst);
        let v = self.value.0.fetch_add(1, SeqCst);
        let max = m.max.load(SeqCst);
        let preload_at = m.preload_at.load(SeqCst);
        let g2 = m.generation.load(SeqCst);
        if g1 == g2 && g1 & 1 == 0 && v < max {
            Some((v, v >= preload_at))
        } else {
            None
        }
    }

    /// Takes exactly `n` IDs, `[v, v + n)`, or none: a compare-and-swap that moves the counter
    /// only when the segment holds `n` more IDs, so a batch that does not fit leaves the segment
    /// as it was for single IDs. Framed by the same generation check as [`Segment::take`] (a
    /// refill meanwhile wastes the IDs taken, never repeats them). The flag says whether the
    /// range reached the preload point.
    #[inline]
    fn take_exact(&self, n: u64) -> Option<(Range<u64>, bool)> {
        let m = &self.meta.0;
        let g1 = m.generation.load(SeqCst);
        if g1 & 1 == 1 {
            return None;
        }
        let max = m.max.load(SeqCst);
        let preload_at = m.preload_at.load(SeqCst);
        let mut v = self.value.0.load(SeqCst);
        loop {
            if v >= max || max - v < n {
                return None;
            }
            match self.value.0.compare_exchange_weak(v, v + n, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(now) => v = now,
            }
        }
        let g2 = m.generation.load(SeqCst);
        (g1 == g2).then(|| (v..v + n, v + n > preload_at))
    }

    /// IDs not yet taken, `[value, max)` (empty once used up or while being refilled).
    fn left(&self) -> Range<u64> {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        self.value.0.load(SeqCst).min(max)..max
    }

    /// Ends the segment for every taker: the counter jumps to `max` and the IDs it had not
    /// reached are returned, `[value, max)`. A take that raced ahead of it kept its ID (below the
    /// returned range); every take after it finds the segment used up. Called under the state
    /// lock, which no refill of this segment can pass while it is current or loaded.
    fn close(&self) -> Range<u64> {
        let max = self.meta.0.max.load(SeqCst);
        let before = self.value.0.fetch_max(max, SeqCst);
        before.min(max)..max
    }

    /// Undoes [`Segment::close`] when nothing was taken from the closed segment meanwhile (every
    /// take since found it used up): its counter goes back to `start`.
    fn reopen(&self, start: u64) {
        self.value.0.store(start, SeqCst);
    }

    /// IDs taken from it so far (all of them once used up).
    fn used(&self) -> u64 {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        let start = m.start.load(SeqCst);
        self.value.0.load(SeqCst).min(max).saturating_sub(start)
    }

    fn has_left(&self) -> bool {
        let m = &self.meta.0;
        let g = m.generation.load(SeqCst);
        g & 1 == 0 && self.value.0.load(SeqCst) < m.max.load(SeqCst)
    }

    /// Refills a segment no thread takes from (readers of a stale index are turned away by
    /// the generation).
    fn refill(&self, claim: &Claim) {
        let m = &self.meta.0;
        let g = m.generation.load(SeqCst);
        m.generation.store(g + 1, SeqCst);
        // A swap, not a store: the same for the hardware, and loom then orders it against a
        // stale taker's `fetch_add` as the memory model does (with a plain store, loom 0.7
        // lets that `fetch_add` read the value from before the store, an order no real
        // execution has, and reports a duplicate that cannot happen).
        self.value.0.swap(claim.start, SeqCst);
        m.start.store(claim.start, SeqCst);
        m.max.store(claim.end, SeqCst);
        m.step.store(claim.len(), SeqCst);
        m.preload_at.store(claim.start + claim.len() / 10, SeqCst);
        m.generation.store(g + 2, SeqCst);
    }

    fn view(&self) -> SegmentView {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        SegmentView {
            value: self.value.0.load(SeqCst).min(max),
            max,
            step: m.step.load(SeqCst),
        }
    }
}

/// What the slow path found.
pub(crate) enum Slow {
    /// Try the hot path again.
    Retry,
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
    exhausted: Option<(i64, i64)>,
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

/// How the next claim is sized, decided before it is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadPlan {
    pub increment: Increment,
    update_ms: i64,
    /// When it was planned (clock ms), for the rate after the first claim.
    first_ms: i64,
    /// Leaf's step (`None`: the table's), which the next plan doubles or halves, whatever the
    /// floor made this claim.
    leaf_step: Option<i64>,
    /// The IDs taken from the segments when it was planned.
    taken: u64,
    /// Why the step is what it is, for the status page.
    reason: &'static str,
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
    /// Set while a load is queued or running, or the next segment is ready, or a failed load
    /// waits for its retry: the hot path then does not ask for another.
    next_busy: AtomicBool,
    state: Mutex<LoadState>,
    changed: Condvar,
}

/// A monitoring snapshot of one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SegmentView {
    /// The next ID it would hand out (`max` once used up).
    pub value: u64,
    /// One past its last ID.
    pub max: u64,
    /// Its size.
    pub step: u64,
}

/// A monitoring snapshot of a tag's buffer (Leaf's `/cache` view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentBufferView {
    /// The tag.
    pub tag: String,
    /// Whether a segment was ever loaded.
    pub init_ok: bool,
    /// Index (0 or 1) of the segment IDs come from.
    pub pos: usize,
    /// Both segments.
    pub segments: [SegmentView; 2],
    /// Whether the other segment is loaded and waiting.
    pub next_ready: bool,
    /// Whether a load is queued or running.
    pub loading: bool,
    /// The step the next dynamic claim would start from.
    pub step: i64,
    /// The table's step.
    pub min_step: i64,
    /// The last load failure, cleared by the next success.
    pub last_error: Option<String>,
    /// The tag is used up: no ID is left below 2^63-1 (not a failure to recover from).
    pub exhausted: bool,
    /// Why the step last became what it is (doubled, kept, halved, the table's).
    pub step_reason: &'static str,
    /// When the last failure happened (Unix ms), while it is the last outcome.
    pub last_error_unix_ms: Option<i64>,
    /// IDs handed out since the buffer was made (a batch's IDs once taken).
    pub issued: u64,
    /// Claims made for the tag (background loads and batch claims).
    pub claims: u64,
    /// Claims that failed.
    pub claim_failures: u64,
    /// How long the last claim took (µs).
    pub last_claim_us: Option<u64>,
}

impl SegmentBufferView {
    /// The view of a tag that has no buffer: nothing loaded, nothing issued.
    pub fn unloaded(tag: &str) -> SegmentBufferView {
        SegmentBufferView {
            tag: tag.to_string(),
            init_ok: false,
            pos: 0,
            segments: [SegmentView::default(); 2],
            next_ready: false,
            loading: false,
            step: 0,
            min_step: 0,
            last_error: None,
            exhausted: false,
            step_reason: "",
            last_error_unix_ms: None,
            issued: 0,
            claims: 0,
            claim_failures: 0,
            last_claim_us: None,
        }
    }

    /// Whether the tag cannot issue now: its current segment is used up, the next is not
    /// loaded, and its last load failed (a used-up tag is not counted: it never will again).
    pub fn stuck(&self) -> bool {
        let cur = self.segments[self.pos & 1];
        cur.value >= cur.max && !self.next_ready && self.last_error.is_some() && !self.exhausted
    }

    /// The tag's health, decided here for readiness, the status page and `/metrics` alike;
    /// `went_backwards` is whether the claim guard refuses the tag now
    /// ([`super::ClaimGuard::refusals`]).
    pub fn health(&self, went_backwards: bool) -> TagHealth {
        if self.exhausted {
            TagHealth::Exhausted
        } else if went_backwards {
            TagHealth::WentBackwards
        } else if self.last_error.is_some() {
            TagHealth::Failing
        } else if !self.init_ok && !self.loading {
            TagHealth::Idle
        } else {
            TagHealth::Ok
        }
    }
}

/// What a tag can do now (see [`SegmentBufferView::health`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TagHealth {
    /// A claim came back below an earlier one: refused until `leafctl tag bump`.
    WentBackwards,
    /// Its last claim failed (the database down, say); it issues from its buffers while they
    /// last.
    Failing,
    /// No ID is left below 2^63-1.
    Exhausted,
    /// Loaded, and its last claim succeeded.
    Ok,
    /// Nothing loaded: not asked for since the generator started, or its buffers went after a
    /// long idle time.
    Idle,
}

impl TagHealth {
    /// The name used in JSON and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            TagHealth::WentBackwards => "went_backwards",
            TagHealth::Failing => "failing",
            TagHealth::Exhausted => "exhausted",
            TagHealth::Ok => "ok",
            TagHealth::Idle => "idle",
        }
    }

    /// Whether an operator should look at it (it sorts first on the status page and always gets
    /// its own series in `/metrics`, within the limit).
    pub fn needs_attention(self) -> bool {
        matches!(
            self,
            TagHealth::WentBackwards | TagHealth::Failing | TagHealth::Exhausted
        )
    }
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
            next_busy: AtomicBool::new(false),
            state: Mutex::new(LoadState::default()),
            changed: Condvar::new(),
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

    /// The batch path: exactly `n` IDs from the buffers, or none taken at all. From the current
    /// segment in one compare-and-swap when it holds `n`; else, when the loaded next segment
    /// makes up the difference, the current one's rest and the next one's start (under the state
    /// lock, switching to it). The flag says whether the other segment should now be preloaded.
    /// `None` leaves both segments as they were, for single IDs: a batch larger than the buffers
    /// is claimed on its own ([`crate::segment::SegmentGenerator::next_ids`]), so a batch that
    /// fails (the database down) costs the buffers nothing.
    pub(crate) fn try_take_exact(&self, n: u64) -> Option<(Vec<Range<u64>>, bool)> {
        let idx = self.hot.0.current.load(SeqCst);
        if let Some((range, past)) = self.segments[idx].take_exact(n) {
            return Some((
                std::iter::once(range).collect(),
                past && !self.next_busy.load(SeqCst),
            ));
        }
        let mut st = self.lock();
        if !st.next_ready || st.closed {
            return None;
        }
        let cur = self.hot.0.current.load(SeqCst);
        let (current, next) = (&self.segments[cur], &self.segments[1 - cur]);
        let next_left = next.left();
        let fits = |tail: u64| {
            n.checked_sub(tail)
                .is_some_and(|rest| rest <= next_left.end - next_left.start)
        };
        let tail_guess = current.left();
        if !fits(tail_guess.end - tail_guess.start) {
            return None;
        }
        // Single IDs may take from the current segment until it is closed: the tail is what
        // the close returns. Nothing takes from it after the close, so it can be reopened.
        let tail = current.close();
        let tail_len = tail.end - tail.start;
        if tail_len >= n {
            // The current segment was switched under the fast path's feet: it holds them all.
            current.reopen(tail.start + n);
            return Some((std::iter::once(tail.start..tail.start + n).collect(), false));
        }
        if !fits(tail_len) {
            current.reopen(tail.start);
            return None;
        }
        // Nothing takes from the next segment before the switch below (takers read the current
        // index), so its start is still free; a take from a long-stale index could have wasted
        // some, and then the batch gives the tail back and goes to the table.
        let Some((head, _)) = next.take_exact(n - tail_len) else {
            current.reopen(tail.start);
            return None;
        };
        self.switch_locked(&mut st);
        let ranges = [tail, head].into_iter().filter(|r| !r.is_empty()).collect();
        Some((ranges, !self.next_busy.load(SeqCst)))
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
                return Ok(Slow::Retry);
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
        if let Some((max_id, increment)) = st.exhausted {
            return SegmentError::Exhausted {
                tag: self.tag.to_string(),
                max_id,
                increment,
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

    /// Sizes the next claim. Leaf's rule decides first: the table's step for the first two
    /// claims, then double (under 15 min since the last claim, up to [`MAX_DYNAMIC_STEP`]), keep
    /// (15-30 min) or halve (over 30 min, not below the table's step). Then what is measured
    /// sets a floor: the segment holds at least [`CLAIMS_COVERED`] claim times' worth of IDs at
    /// the tag's rate (the IDs taken from its segments since the last claim was planned, over the
    /// time since on the generator's clock, and the last claim's time), up to
    /// [`MAX_COVERING_STEP`]. On a near database the floor is below Leaf's step and changes
    /// nothing; on a far one a burst gets, from its second claim on, segments that last until
    /// the next claim is back, instead of doubling through seven segments that each run out
    /// first. A graceful stop gives back what a large segment did not use
    /// ([`crate::segment::SegmentGenerator::hand_back`]); a crash skips it, as Leaf's does.
    pub(crate) fn plan_load(&self, now_ms: i64) -> LoadPlan {
        let st = self.lock();
        let taken = self.issued_locked(&st).saturating_sub(st.batch_claimed);
        let (leaf_step, reason) = if !st.initialised || st.update_ms == 0 {
            (None, "the table's step (the first two segments)")
        } else {
            let elapsed = now_ms.saturating_sub(st.update_ms);
            let mut next = st.step;
            let reason = if elapsed < SEGMENT_DURATION_MS {
                if next.saturating_mul(2) <= MAX_DYNAMIC_STEP {
                    next *= 2;
                    "doubled: the last segment lasted under 15 min"
                } else {
                    "kept: at the largest step, 1,000,000"
                }
            } else if elapsed < 2 * SEGMENT_DURATION_MS {
                "kept: the last segment lasted 15-30 min"
            } else if next / 2 >= st.min_step {
                next /= 2;
                "halved: the last segment lasted over 30 min"
            } else {
                "kept: at the table's step, the smallest"
            };
            (Some(next.max(st.min_step).max(1)), reason)
        };
        // The floor from what is measured (nothing before the first claim).
        let covering = if st.initialised {
            let since = if st.update_ms == 0 {
                st.first_ms
            } else {
                st.update_ms
            };
            let elapsed_ms = now_ms.saturating_sub(since).max(1) as f64;
            let per_ms = taken.saturating_sub(st.taken_at_update) as f64 / elapsed_ms;
            let claim_ms = st.last_claim_us.unwrap_or(0) as f64 / 1000.0;
            ((per_ms * claim_ms * CLAIMS_COVERED as f64).ceil() as i64).min(MAX_COVERING_STEP)
        } else {
            0
        };
        let floor_wins = covering > leaf_step.unwrap_or(st.min_step.max(1));
        let (increment, reason) = match leaf_step {
            _ if floor_wins => (
                Increment::Custom(covering),
                "8 claim times at the rate: the claims are slow for it",
            ),
            Some(step) => (Increment::Custom(step), reason),
            None => (Increment::TableStep, reason),
        };
        LoadPlan {
            increment,
            update_ms: if st.initialised { now_ms } else { 0 },
            first_ms: now_ms,
            taken,
            leaf_step,
            reason,
        }
    }

    /// Records a load's outcome: on success fills the other segment and marks it ready.
    /// Returns the failure, if any (so the loader schedules a retry).
    pub(crate) fn finish_load(
        &self,
        plan: LoadPlan,
        result: Result<Claim, SegmentError>,
    ) -> Option<String> {
        let mut st = self.lock();
        let outcome = match result {
            Ok(claim) => {
                let cur = self.hot.0.current.load(SeqCst);
                self.segments[1 - cur].refill(&claim);
                st.step = plan.leaf_step.unwrap_or(claim.table_step);
                st.step_reason = plan.reason;
                st.min_step = claim.table_step;
                if !st.initialised {
                    st.first_ms = plan.first_ms;
                }
                st.update_ms = plan.update_ms;
                st.taken_at_update = plan.taken;
                st.initialised = true;
                st.next_ready = true;
                st.last_error = None;
                st.last_failure = None;
                st.went_backwards = None;
                st.load_failing = false;
                // The database answers again: batches need not wait for a probe of their own.
                st.batch_failure = None;
                None
            }
            Err(e) => {
                if let SegmentError::WentBackwards {
                    db, start, mark, ..
                } = &e
                {
                    st.went_backwards = Some((db.clone(), *start, *mark));
                }
                let msg = e.to_string();
                st.load_failing = e.is_transient();
                if let SegmentError::Exhausted {
                    max_id, increment, ..
                } = e
                {
                    // Said once: a used-up tag stays used up.
                    if st.exhausted.replace((max_id, increment)).is_none() {
                        tracing::warn!("tag {:?} is used up: {msg}", self.tag);
                    }
                } else {
                    tracing::warn!("loading a segment for tag {:?} failed: {msg}", self.tag);
                }
                st.last_error = Some(msg.clone());
                st.last_failure = Some(Instant::now());
                st.last_failure_unix_ms = Some(unix_now_ms());
                st.failures += 1;
                Some(msg)
            }
        };
        st.loading = false;
        // Ready, or failed and waiting for the loader's retry: either way the hot path must not
        // ask for another load on every ID meanwhile.
        self.next_busy.store(true, SeqCst);
        self.changed.notify_all();
        outcome
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
        st.retired.saturating_add(self.segments[cur].used())
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

    /// Why a batch of `count` that the buffers cannot cover is refused without asking the
    /// database; `None`: claim. Refused while the tag's loads are failing (the loader is
    /// retrying them) and after a batch claim failed, until one succeeds: meanwhile one batch at
    /// most every [`BATCH_RETRY_AFTER`] is let through to ask the database again, and the others
    /// are answered at once. Refused for good once the generator stopped.
    pub(crate) fn batch_refusal(&self, count: u64) -> Option<SegmentError> {
        let mut st = self.lock();
        if st.closed {
            return Some(SegmentError::Stopped {
                tag: self.tag.to_string(),
            });
        }
        let cause = if st.load_failing {
            st.last_error.clone()?
        } else {
            let probe_due = !st.batch_probe
                && st
                    .batch_failure
                    .as_ref()
                    .is_some_and(|(at, _)| at.elapsed() >= BATCH_RETRY_AFTER);
            match &st.batch_failure {
                None => return None,
                Some(_) if probe_due => {
                    st.batch_probe = true;
                    return None;
                }
                Some((_, why)) => why.clone(),
            }
        };
        Some(SegmentError::BatchNotReady {
            tag: self.tag.to_string(),
            count,
            buffered: self.buffered_locked(&st),
            cause,
        })
    }

    /// Records a batch claim made past the buffers: its IDs count as issued; a failure for a
    /// passing reason refuses the next batches ([`SegmentBuffer::batch_refusal`]).
    pub(crate) fn finish_batch(&self, result: &Result<Claim, SegmentError>) {
        let mut st = self.lock();
        st.batch_probe = false;
        match result {
            Ok(claim) => {
                st.retired = st.retired.saturating_add(claim.len());
                st.batch_claimed = st.batch_claimed.saturating_add(claim.len());
                st.batch_failure = None;
            }
            Err(e) if e.is_transient() => st.batch_failure = Some((Instant::now(), e.to_string())),
            Err(_) => {}
        }
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

    /// Whether an operator should look at the tag: its last load failed, or it is used up.
    pub(crate) fn needs_attention(&self) -> bool {
        let st = self.lock();
        st.last_error.is_some() || st.exhausted.is_some()
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
            init_ok: st.initialised,
            pos: self.hot.0.current.load(SeqCst),
            segments: [self.segments[0].view(), self.segments[1].view()],
            next_ready: st.next_ready,
            loading: st.loading,
            step: st.step,
            min_step: st.min_step,
            last_error: st.last_error.clone(),
            exhausted: st.exhausted.is_some(),
            step_reason: st.step_reason,
            last_error_unix_ms: st.last_error.as_ref().and(st.last_failure_unix_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(start: u64, end: u64, table_step: i64) -> Claim {
        Claim {
            start,
            end,
            table_step,
        }
    }

    #[test]
    fn a_segment_hands_out_its_range_once() {
        let b = SegmentBuffer::new("t");
        assert!(b.try_take().is_none(), "empty before the first load");
        assert!(matches!(
            b.slow_path(Instant::now()).unwrap(),
            Slow::StartLoad
        ));
        let plan = b.plan_load(0);
        assert!(b.finish_load(plan, Ok(claim(10, 20, 10))).is_none());
        assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
        let ids: Vec<u64> = std::iter::from_fn(|| b.try_take().map(|x| x.0)).collect();
        assert_eq!(ids, (10..20).collect::<Vec<_>>());
        let v = b.view();
        assert_eq!(v.pos, 1);
        assert_eq!(
            v.segments[1],
            SegmentView {
                value: 20,
                max: 20,
                step: 10
            }
        );
    }

    #[test]
    fn a_waiter_whose_segment_others_used_up_loads_again_instead_of_failing() {
        let b = std::sync::Arc::new(SegmentBuffer::new("t"));
        assert!(matches!(
            b.slow_path(Instant::now()).unwrap(),
            Slow::StartLoad
        ));
        let waiter = {
            let b = b.clone();
            std::thread::spawn(move || b.slow_path(Instant::now() + Duration::from_secs(5)))
        };
        std::thread::sleep(Duration::from_millis(50));
        b.finish_load(b.plan_load(0), Ok(claim(1, 3, 2)));
        // Another thread switches and takes the whole small segment.
        assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
        while b.try_take().is_some() {}
        // The waiter must not report a failure: no load failed.
        assert!(waiter.join().unwrap().is_ok());
        // A real failure does end a wait.
        let b2 = std::sync::Arc::new(SegmentBuffer::new("t"));
        assert!(matches!(
            b2.slow_path(Instant::now()).unwrap(),
            Slow::StartLoad
        ));
        let waiter = {
            let b2 = b2.clone();
            std::thread::spawn(move || b2.slow_path(Instant::now() + Duration::from_secs(5)))
        };
        std::thread::sleep(Duration::from_millis(50));
        b2.finish_load(
            b2.plan_load(0),
            Err(SegmentError::Unreachable {
                db: "db".into(),
                detail: "down".into(),
            }),
        );
        match waiter.join().unwrap() {
            Err(SegmentError::NotReady { cause, .. }) => {
                assert!(cause.unwrap().contains("cannot reach db"))
            }
            _ => panic!("expected NotReady"),
        }
    }

    /// Takes `n` IDs (switching to the loaded segment as needed).
    fn take(b: &SegmentBuffer, n: u64) {
        for _ in 0..n {
            if b.try_take().is_none() {
                assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
                b.try_take().expect("an ID after the switch");
            }
        }
    }

    #[test]
    fn the_step_follows_leafs_rules() {
        let b = SegmentBuffer::new("t");
        let p = b.plan_load(1_000);
        assert_eq!(p.increment, Increment::TableStep);
        b.finish_load(p, Ok(claim(1, 101, 100)));
        let p = b.plan_load(2_000);
        assert_eq!(
            p.increment,
            Increment::TableStep,
            "second claim sets the timestamp"
        );
        b.finish_load(p, Ok(claim(101, 201, 100)));
        let p = b.plan_load(2_000 + 60_000);
        assert_eq!(p.increment, Increment::Custom(200), "fast: doubles");
        b.finish_load(p, Ok(claim(201, 401, 100)));
        let p = b.plan_load(62_000 + 20 * 60_000);
        assert_eq!(p.increment, Increment::Custom(200), "15-30 min: keeps");
        b.finish_load(p, Ok(claim(401, 601, 100)));
        let t = 62_000 + 20 * 60_000;
        let p = b.plan_load(t + 31 * 60_000);
        assert_eq!(p.increment, Increment::Custom(100), "slow: halves");
        b.finish_load(p, Ok(claim(601, 701, 100)));
        let p = b.plan_load(t + 62 * 60_000);
        assert_eq!(
            p.increment,
            Increment::Custom(100),
            "never below the table step"
        );
    }

    #[test]
    fn the_step_stops_doubling_at_a_million() {
        let b = SegmentBuffer::new("t");
        b.finish_load(b.plan_load(0), Ok(claim(0, 600_000, 600_000)));
        b.finish_load(b.plan_load(1), Ok(claim(600_000, 1_200_000, 600_000)));
        let p = b.plan_load(2);
        assert_eq!(p.increment, Increment::Custom(600_000));
    }
    #[test]
    fn slow_claims_at_a_high_rate_get_segments_that_cover_them() {
        let b = SegmentBuffer::new("t");
        b.finish_load(b.plan_load(0), Ok(claim(1, 1_001, 1_000)));
        // A burst on a far database: the first claim took 20 ms, and 100 IDs went in 1 ms
        // (100 a ms). Leaf's second claim would be the table's 1,000, gone in 10 ms, before the
        // next claim is back; 8 claim times at the rate are 16,000.
        b.record_claim(Duration::from_millis(20), true);
        take(&b, 100);
        let p = b.plan_load(1);
        assert_eq!(p.increment, Increment::Custom(16_000));
        b.finish_load(p, Ok(claim(1_001, 17_001, 1_000)));
        assert_eq!(
            b.view().step_reason,
            "8 claim times at the rate: the claims are slow for it"
        );
        // Claims of 500 ms at 6,000 IDs a ms: 24 million, past the largest step, to the bound.
        b.record_claim(Duration::from_millis(500), true);
        take(&b, 6_000);
        let p = b.plan_load(2);
        assert_eq!(p.increment, Increment::Custom(MAX_COVERING_STEP));
        b.finish_load(p, Ok(claim(17_001, 10_017_001, 1_000)));
        // A near database (claims of 1 ms) at a slow rate: Leaf's rule alone.
        b.record_claim(Duration::from_millis(1), true);
        take(&b, 20_000);
        let p = b.plan_load(60_002);
        assert_eq!(
            p.increment,
            Increment::Custom(4_000),
            "Leaf's own step, doubled at each claim since the table's (1,000, 2,000, 4,000)"
        );
    }
}

/// Model checks of the hot path against refills and switches (`--cfg loom`; see `crate::sync`).
///
/// Two threads take IDs from one tag whose segments hold two IDs each (one segment current, the
/// next loaded, as in a running server), one by the single-ID path and one by the batch path, and
/// each plays the loader when the buffer asks for a load (every take passes the preload point),
/// so switches, refills of the other segment and takes stalled on a segment being refilled
/// interleave in every way loom explores. No ID may repeat, and every ID must come from a
/// claimed range. (Removing the generation check from `Segment::take` makes this fail.)
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
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
                Ok(Slow::Retry) => {}
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
}
