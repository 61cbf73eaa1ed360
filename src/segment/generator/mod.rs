//! The segment generator: a [`SegmentBuffer`] per tag asked for, loaded and refreshed in the
//! background.
//!
//! Every tag of the table is known by name (a [`TagTable`](super::tags::TagTable)), but only a tag that is asked for
//! gets a buffer, and a buffer left unused for [`IDLE_BUFFER_TIMEOUT`] goes again: a million
//! tags cost their names while idle, not a million buffers. Nothing runs per tag unless it
//! issues or loads: the tag list is re-read every `REFRESH_INTERVAL` (60 s) in pages (skipped when
//! the database says its fingerprint did not change), and monitoring visits only the tags that
//! moved since it last looked ([`SegmentGenerator::drain_moved`]).

//! The files: `inner` (the state the generator, its loader thread and its handles share),
//! `take` (the path an ID takes), `recent` (a thread's memory of the buffers it used
//! last), `builder` and `hand_back` (the graceful stop).

mod builder;
mod hand_back;
mod inner;
mod periodic;
mod recent;
mod take;
#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use builder::SegmentGeneratorBuilder;
pub use hand_back::HandBack;
pub use periodic::PeriodRouter;

use self::inner::{Inner, Msg, locked};
use self::recent::{RECENT, remember_and_take};
use self::take::{next_from, note_moved, request_preload, take};
use super::tags::SHARDS;
use super::{
    AllocStore, ClaimGuard, Increment, Issuing, LeafAlloc, SegmentBuffer, SegmentBufferView,
    SegmentError, TagHealth,
};
use crate::segment::AllocStoreExt;

/// How often the tag list is re-read from the table (Leaf: every minute).
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);
/// How long a caller waits for a segment that is still loading before `NotReady`.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a tag's buffer may go unused (no ID taken, no load) before it is dropped. The IDs
/// left in its segments are skipped, never issued again; the tag's next request claims anew.
pub const IDLE_BUFFER_TIMEOUT: Duration = Duration::from_secs(3600);

/// What a segment claim did, for monitoring ([`SegmentGeneratorBuilder::on_load`]).
#[derive(Debug, Clone, Copy)]
pub struct LoadEvent<'a> {
    /// The tag the claim was for.
    pub tag: &'a str,
    /// How long the claim took (one transaction).
    pub elapsed: Duration,
    /// How many IDs it claimed; `None` when it failed.
    pub claimed: Option<u64>,
}

/// Called after every claim the generator makes (background loads and batch claims).
pub type LoadObserver = Arc<dyn Fn(&LoadEvent<'_>) + Send + Sync>;

/// Issues segment-mode IDs for any number of tags, for long-running users (`leafctl serve`).
///
/// Tags are read from the table at start and every `REFRESH_INTERVAL` (60 s); a tag added since is
/// looked up at once. One background thread claims segments (preloads, retries after failures,
/// refreshes); it stops when the generator is dropped. While the database is down, IDs keep
/// coming from the buffers; once they are used up callers get [`SegmentError::NotReady`] until
/// it is back.
pub struct SegmentGenerator {
    inner: Arc<Inner>,
    /// The loader thread, until it is stopped ([`SegmentGenerator::hand_back`], or drop).
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// Totals over every tag, for monitoring ([`SegmentGenerator::totals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentTotals {
    /// Tags in the table.
    pub tags: u64,
    /// Tags with a buffer (asked for, not dropped as idle).
    pub buffered: u64,
    /// IDs issued over all tags since start.
    pub issued: u64,
    /// Claims made over all tags, and how many failed.
    pub claims: u64,
    /// Claims that failed.
    pub claim_failures: u64,
    /// Requests for one ID that found none in memory and waited for a claim (or were refused
    /// while it failed).
    pub load_waits: u64,
}

impl SegmentGenerator {
    /// The next ID for `tag`. A tag this thread used lately is found by comparing names (one
    /// atomic load checks that memory is current; no lock, no reference count); a
    /// [`SegmentHandle`] also skips that.
    pub fn next_id(&self, tag: &str) -> Result<u64, SegmentError> {
        if let Some(id) = self.try_next_id(tag) {
            return Ok(id);
        }
        let buffer = self.inner.lookup(tag)?;
        next_from(&buffer, &self.inner)
    }

    /// The next ID for `tag` if one can be had without waiting: a known tag whose current
    /// segment has IDs left (no I/O; a lock only the first time this thread asks for the tag
    /// lately). `None` means "call [`SegmentGenerator::next_id`]", which may wait for a load
    /// or ask the database about an unknown tag; an async server does that off its event loop.
    #[inline]
    pub fn try_next_id(&self, tag: &str) -> Option<u64> {
        let inner = &*self.inner;
        let version = inner.version.load(Ordering::Acquire);
        RECENT
            .try_with(|slot| {
                let mut recent = slot.borrow_mut();
                if recent.generator != inner.id || recent.version != version {
                    recent.reset(inner.id, version);
                }
                if let Some(buffer) = recent.find(tag) {
                    return take(buffer, inner);
                }
                remember_and_take(&mut recent, inner, tag)
            })
            .ok()
            .flatten()
    }

    /// `count` IDs for `tag`, ascending, as one or two ranges: from the buffers when they hold
    /// `count` (the current segment in one compare-and-swap, or its rest and the loaded next
    /// one), else claimed from the table in one transaction of exactly that size, leaving the
    /// buffers to single IDs. Never waits for a background load. A batch that needs a claim is
    /// refused at once ([`SegmentError::BatchNotReady`]) while the tag's loads are failing or
    /// its last batch claim failed (one batch a [`crate::segment::BATCH_RETRY_AFTER`] asks
    /// again); otherwise it waits at most for that one claim (the store's own timeouts). A
    /// failed batch takes nothing from the buffers.
    pub fn next_ids(&self, tag: &str, count: u64) -> Result<Vec<Range<u64>>, SegmentError> {
        let buffer = self.inner.lookup(tag)?;
        if let Some(Issuing::Periodic(router)) = buffer.issuing() {
            return self.periodic_ids(&buffer, router, count);
        }
        let dense = match self.next_dense_ids(&buffer, count) {
            Ok(dense) => dense,
            // The first request of a periodic tag finds out here that it is one.
            Err(e) => match buffer.issuing() {
                Some(Issuing::Periodic(router)) => {
                    return self.periodic_ids(&buffer, router, count);
                }
                _ => return Err(e),
            },
        };
        match buffer.issuing() {
            None | Some(Issuing::Plain) => Ok(dense),
            // An opaque tag's IDs are not consecutive: each is a range of its own.
            Some(shaped) => runs(dense.into_iter().flatten().map(|d| shaped.id(tag, d))),
        }
    }

    /// A batch of a periodic tag: `count` sequences of the period now, composed into IDs and
    /// counted as its own buffer's (`buffer`).
    fn periodic_ids(
        &self,
        buffer: &Arc<SegmentBuffer>,
        router: &Arc<PeriodRouter>,
        count: u64,
    ) -> Result<Vec<Range<u64>>, SegmentError> {
        let period = router.batch_period(&self.inner)?;
        let dense = self.next_dense_ids(period.buffer(), count)?;
        let ids = runs(dense.into_iter().flatten().map(|d| period.id(d)))?;
        take::routed(buffer, &self.inner, count);
        Ok(ids)
    }

    /// [`SegmentGenerator::next_ids`] as dense IDs.
    fn next_dense_ids(
        &self,
        buffer: &Arc<SegmentBuffer>,
        count: u64,
    ) -> Result<Vec<Range<u64>>, SegmentError> {
        let tag = buffer.tag();
        if count == 0 || count > i64::MAX as u64 {
            return Err(SegmentError::InvalidCount(count));
        }
        let inner = &*self.inner;
        let buffer = buffer.clone();
        if !buffer.moved() {
            note_moved(&buffer, inner);
        }
        if let Some((ranges, preload)) = buffer.try_take_exact(count) {
            if preload {
                request_preload(&buffer, inner);
            }
            return Ok(ranges);
        }
        // Keep the buffers filling for the single-ID path meanwhile.
        request_preload(&buffer, inner);
        if let Some(refused) = buffer.batch_refusal(count) {
            // As for a single ID (`take::next_slow`): the answer and the troubled list agree.
            inner.update_troubled(&buffer);
            return Err(refused);
        }
        let increment = i64::try_from(count).map_err(|_| SegmentError::InvalidCount(count))?;
        let claim = inner.claim(&buffer, Increment::Custom(increment));
        buffer.finish_batch(&claim);
        if let Ok(c) = &claim {
            let bounds = inner.store.bounds_of(tag);
            let end = i64::try_from(c.end).unwrap_or(i64::MAX);
            if bounds.ids_left(end) == 0 {
                buffer.note_table_used_up(end, bounds.ceiling);
            }
        }
        inner.update_troubled(&buffer);
        match claim {
            // A claim is above every range claimed before it, so the IDs ascend.
            Ok(claim) => Ok(std::iter::once(claim.start..claim.end).collect()),
            Err(SegmentError::Exhausted {
                max_id, ceiling, ..
            }) => self.batch_at_the_end(&buffer, count, max_id, ceiling),
            Err(e) if e.is_transient() => Err(SegmentError::BatchNotReady {
                tag: tag.to_string(),
                count,
                buffered: buffer.buffered(),
                cause: e.to_string(),
            }),
            Err(e) => Err(e),
        }
    }

    /// A batch the table alone cannot cover (its range ends first): the buffers' IDs and the
    /// table's last ones together, ascending, or [`SegmentError::TooFew`] naming how many are
    /// left when even both fall short. The table's rest is claimed first and the difference
    /// taken from the buffers; when single IDs took those meanwhile, the rest goes back to the
    /// table (one compare-and-set, as a graceful stop does) and the batch is refused with what
    /// is left then.
    fn batch_at_the_end(
        &self,
        buffer: &Arc<SegmentBuffer>,
        count: u64,
        max_id: i64,
        ceiling: i64,
    ) -> Result<Vec<Range<u64>>, SegmentError> {
        let inner = &*self.inner;
        // What is left is read again when refusing: the loader may have moved the table's last
        // IDs into the buffers since the claim failed, and they count once.
        let too_few = || {
            let buffered = buffer.buffered_after_load(Instant::now() + inner.wait);
            SegmentError::TooFew {
                tag: buffer.tag().to_string(),
                count,
                left: buffered.saturating_add(self.table_left(buffer.tag())),
            }
        };
        let table_left = u64::try_from(ceiling.saturating_sub(max_id)).unwrap_or(0);
        if buffer.buffered().saturating_add(table_left) < count {
            return Err(too_few());
        }
        let rest = match i64::try_from(table_left) {
            Ok(0) | Err(_) => None,
            Ok(n) => match inner.claim(buffer, Increment::Custom(n)) {
                Ok(claim) => Some(claim),
                // Another claimant took the table's rest meanwhile.
                Err(SegmentError::Exhausted { .. }) => return Err(too_few()),
                Err(e) => return Err(e),
            },
        };
        let from_table = rest.map_or(0, |c| c.len());
        let wanted = count.saturating_sub(from_table);
        let taken = if wanted == 0 {
            Some((Vec::new(), false))
        } else {
            buffer.try_take_exact(wanted)
        };
        match (taken, rest) {
            (Some((mut ranges, _)), rest) => {
                if let Some(claim) = rest {
                    buffer.finish_batch(&Ok(claim));
                    ranges.push(claim.start..claim.end);
                }
                Ok(ranges)
            }
            (None, Some(claim)) => {
                let (from, to) = (claim.end as i64, claim.start as i64);
                if let Err(e) = inner.store.hand_back(buffer.tag(), from, to) {
                    tracing::warn!(
                        "handing tag {:?}'s last {} IDs back failed (skipped, never issued): {e}",
                        buffer.tag(),
                        claim.len()
                    );
                }
                Err(too_few())
            }
            (None, None) => Err(too_few()),
        }
    }

    /// IDs the table has left for `tag` inside the store's bounds (0 when it cannot be read).
    fn table_left(&self, tag: &str) -> u64 {
        let store = &*self.inner.store;
        let max_id = store.get(tag).ok().flatten().map_or(i64::MAX, |r| r.max_id);
        u64::try_from(store.bounds_of(tag).ids_left(max_id)).unwrap_or(0)
    }

    /// Every row of the table, in memory at once (Leaf's `/db` page on a small table; a long
    /// table is read page by page with [`crate::segment::RowPages`] over
    /// [`SegmentGenerator::store`]).
    pub fn rows(&self) -> Result<Vec<LeafAlloc>, SegmentError> {
        self.inner.store.list()
    }

    /// The table the generator claims from.
    pub fn store(&self) -> &dyn AllocStore {
        &*self.inner.store
    }

    /// The guard against a table that went backwards: its refusals, for readiness and metrics.
    pub fn guard(&self) -> &ClaimGuard {
        &self.inner.guard
    }

    /// The database, password removed.
    pub fn describe(&self) -> String {
        self.inner.store.describe()
    }

    /// A handle on one tag whose `next_id` takes no lock at all.
    pub fn handle(&self, tag: &str) -> Result<SegmentHandle, SegmentError> {
        Ok(SegmentHandle {
            buffer: self.inner.lookup(tag)?,
            inner: self.inner.clone(),
        })
    }

    /// How many tags the generator knows (every row of the table at the last refresh, and
    /// those found since).
    pub fn tag_count(&self) -> usize {
        self.inner.table.len()
    }

    /// The tags currently known, sorted, in memory at once (for small tables and tests; see
    /// [`SegmentGenerator::scan_tags`]).
    pub fn tags(&self) -> Vec<String> {
        let mut t = Vec::with_capacity(self.tag_count());
        self.scan_tags(|tag, _| t.push(tag.to_string()));
        t.sort();
        t
    }

    /// Calls `f` with every known tag and whether it has a buffer, one shard of the table at a
    /// time under that shard's lock. `f` must be quick and must not call the generator (it
    /// would wait for that lock): copy out what you need.
    pub fn scan_tags(&self, mut f: impl FnMut(&str, bool)) {
        self.inner.table.for_each(&mut f);
    }

    /// A monitoring snapshot of every tag's buffer, sorted by tag, in memory at once (for small
    /// tables and tests; [`SegmentGenerator::for_each_view`] streams).
    pub fn views(&self) -> Vec<SegmentBufferView> {
        let mut v = Vec::with_capacity(self.tag_count());
        self.for_each_view(|view| v.push(view));
        v.sort_by(|a, b| a.tag.cmp(&b.tag));
        v
    }

    /// Calls `f` with a snapshot of every tag (a tag without a buffer as
    /// [`SegmentBufferView::unloaded`]), in no particular order. One shard of the table at a
    /// time is copied out under its lock; `f` runs without it, so it may take its time.
    pub fn for_each_view(&self, mut f: impl FnMut(SegmentBufferView)) {
        for shard in 0..SHARDS {
            for (tag, buffer) in self.inner.table.shard_snapshot(shard) {
                f(self.inner.bounded(match buffer {
                    Some(b) => b.view(),
                    None => SegmentBufferView::unloaded(&tag),
                }));
            }
        }
    }

    /// A snapshot of one known tag (without making it a buffer); `None` for a tag the
    /// generator does not know.
    pub fn view(&self, tag: &str) -> Option<SegmentBufferView> {
        Some(self.inner.bounded(match self.inner.table.get(tag)? {
            Some(b) => b.view(),
            None => SegmentBufferView::unloaded(tag),
        }))
    }

    /// What a tag can do now (see [`SegmentBufferView::health`]).
    pub fn health(&self, view: &SegmentBufferView) -> TagHealth {
        view.health(self.inner.guard.refuses(&view.tag))
    }

    /// Snapshots of the tags that need attention (failing, used up, went backwards): found
    /// without visiting the others.
    pub fn troubled(&self) -> Vec<SegmentBufferView> {
        let buffers: Vec<Arc<SegmentBuffer>> =
            locked(&self.inner.troubled).values().cloned().collect();
        let mut views: Vec<SegmentBufferView> = buffers
            .iter()
            .map(|b| self.inner.bounded(b.view()))
            .collect();
        // A refused claim leaves a buffer without a load error when it was a batch claim.
        views.retain(|v| self.health(v).needs_attention());
        views.sort_by(|a, b| a.tag.cmp(&b.tag));
        views
    }

    /// Calls `f(tag, ids)` for every tag that issued IDs since the last call, with how many:
    /// a monitor calling this once a second gets per-second rates while visiting only the
    /// tags that moved (each take that finds the tag unmarked lists it once).
    pub fn drain_moved(&self, mut f: impl FnMut(&str, u64)) {
        let moved = std::mem::take(&mut *locked(&self.inner.moved));
        for buffer in moved {
            let ids = buffer.take_moved();
            f(buffer.tag(), ids);
        }
    }

    /// The tags that issued IDs since [`SegmentGenerator::drain_moved`] last looked.
    pub fn moved_tags(&self) -> Vec<String> {
        locked(&self.inner.moved)
            .iter()
            .map(|b| b.tag().to_string())
            .collect()
    }

    /// How many tags have buffers (asked for since start, not dropped as idle).
    pub fn buffered(&self) -> usize {
        locked(&self.inner.active).len()
    }

    /// Totals over every tag: visits the buffers in use (not every tag).
    pub fn totals(&self) -> SegmentTotals {
        let inner = &*self.inner;
        // Both lists at one moment (a buffer moves between them under both locks); the
        // retired ones held here cannot settle, so none is counted twice or missed.
        let active = locked(&inner.active);
        let buffered = active.len() as u64;
        let mut buffers: Vec<Arc<SegmentBuffer>> =
            active.iter().map(|a| a.buffer.clone()).collect();
        let retired = locked(&inner.retired);
        buffers.extend(retired.buffers.iter().cloned());
        let settled = retired.issued;
        drop((retired, active));
        let issued = buffers.iter().map(|b| b.issued()).sum::<u64>();
        SegmentTotals {
            tags: inner.table.len() as u64,
            buffered,
            issued: issued.saturating_add(settled),
            claims: inner.claims.load(Ordering::Relaxed),
            claim_failures: inner.claim_failures.load(Ordering::Relaxed),
            load_waits: inner.load_waits.load(Ordering::Relaxed),
        }
    }

    /// Re-reads the tag list now (it also happens every refresh interval).
    pub fn refresh(&self) {
        self.inner.refresh();
    }

    /// Stops the loader thread and waits for the claim it is making, if any.
    fn stop_loader(&self) {
        let _ = self.inner.tx.send(Msg::Stop);
        if let Some(w) = locked(&self.worker).take() {
            let _ = w.join();
        }
    }
}

impl Drop for SegmentGenerator {
    fn drop(&mut self) {
        self.stop_loader();
    }
}

/// One tag of a [`SegmentGenerator`]: `next_id` is an atomic increment, no lock or syscall.
/// Keeps working from its buffers after the generator is dropped, until they are used up.
#[derive(Clone)]
pub struct SegmentHandle {
    buffer: Arc<SegmentBuffer>,
    inner: Arc<Inner>,
}

impl SegmentHandle {
    /// The next ID.
    #[inline]
    pub fn next_id(&self) -> Result<u64, SegmentError> {
        next_from(&self.buffer, &self.inner)
    }

    /// The tag.
    pub fn tag(&self) -> &str {
        self.buffer.tag()
    }

    /// A monitoring snapshot of the tag's buffer.
    pub fn view(&self) -> SegmentBufferView {
        self.inner.bounded(self.buffer.view())
    }
}

/// IDs as ranges of consecutive ones, in the order given (a failed ID fails the whole).
fn runs(
    ids: impl Iterator<Item = Result<u64, SegmentError>>,
) -> Result<Vec<Range<u64>>, SegmentError> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for id in ids {
        let id = id?;
        match out.last_mut() {
            Some(last) if last.end == id => last.end += 1,
            _ => out.push(id..id + 1),
        }
    }
    Ok(out)
}
