//! One segment: IDs `[start, max)` handed out from a counter, framed by a seqlock.

use std::ops::Range;
use std::sync::atomic::Ordering::SeqCst;

use super::SegmentView;
use crate::segment::Claim;
use crate::sync::AtomicU64;

/// Keeps a value on its own cache lines, so the counter's writes do not slow readers of the rest.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(super) struct Padded<T>(pub(super) T);

/// One segment: IDs `[start, max)`, handed out from `value` upwards.
#[derive(Debug, Default)]
pub(super) struct Segment {
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
    pub(super) fn take(&self) -> Option<(u64, bool)> {
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
    pub(super) fn take_exact(&self, n: u64) -> Option<(Range<u64>, bool)> {
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
    pub(super) fn left(&self) -> Range<u64> {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        self.value.0.load(SeqCst).min(max)..max
    }

    /// Ends the segment for every taker: the counter jumps to `max` and the IDs it had not
    /// reached are returned, `[value, max)`. A take that raced ahead of it kept its ID (below the
    /// returned range); every take after it finds the segment used up. Called under the state
    /// lock, which no refill of this segment can pass while it is current or loaded.
    pub(super) fn close(&self) -> Range<u64> {
        let max = self.meta.0.max.load(SeqCst);
        let before = self.value.0.fetch_max(max, SeqCst);
        before.min(max)..max
    }

    /// Undoes [`Segment::close`] when nothing was taken from the closed segment meanwhile (every
    /// take since found it used up): its counter goes back to `start`.
    pub(super) fn reopen(&self, start: u64) {
        self.value.0.store(start, SeqCst);
    }

    /// IDs taken from it so far (all of them once used up).
    pub(super) fn used(&self) -> u64 {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        let start = m.start.load(SeqCst);
        self.value.0.load(SeqCst).min(max).saturating_sub(start)
    }

    pub(super) fn has_left(&self) -> bool {
        let m = &self.meta.0;
        let g = m.generation.load(SeqCst);
        g & 1 == 0 && self.value.0.load(SeqCst) < m.max.load(SeqCst)
    }

    /// Refills a segment no thread takes from (readers of a stale index are turned away by
    /// the generation).
    pub(super) fn refill(&self, claim: &Claim) {
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

    pub(super) fn view(&self) -> SegmentView {
        let m = &self.meta.0;
        let max = m.max.load(SeqCst);
        SegmentView {
            value: self.value.0.load(SeqCst).min(max),
            max,
            step: m.step.load(SeqCst),
        }
    }
}
