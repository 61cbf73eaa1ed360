//! What a generator, its loader thread and its handles share: the tag table, the buffers in
//! use and retired, the claim counters; and the loader thread itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::LoadEvent;
use super::LoadObserver;
use super::PeriodRouter;
use crate::idformat::opaque::IdKey;
use crate::segment::buffer::RETRY_AFTER;
use crate::segment::tags::TagTable;
use crate::segment::{
    AllocStore, Claim, ClaimGuard, Increment, SegmentBuffer, SegmentError, TagPages,
    TagsFingerprint, validate_tag,
};
use crate::segment::{Issuing, TagShape, check_key};
use crate::snowflake::Clock;

pub(super) enum Msg {
    Load(Arc<SegmentBuffer>),
    /// Open a periodic tag's next period ahead of its start ([`PeriodRouter::open_ahead`]).
    OpenPeriod(Arc<PeriodRouter>, u64),
    Stop,
}

/// A buffer in use, as the loader sees it when it looks for buffers gone idle.
pub(super) struct Active {
    pub(super) buffer: Arc<SegmentBuffer>,
    /// Its issued total when last looked at, and since when it has not moved.
    issued: u64,
    since: Instant,
}

/// Buffers out of the table (dropped as idle, or their tag removed) that may still issue: a
/// thread remembers one until it sees [`Inner::version`] move, a [`SegmentHandle`](super::SegmentHandle) keeps one.
/// They count in the totals until only this list holds them; then their count is final.
#[derive(Default)]
pub(super) struct Retired {
    pub(super) buffers: Vec<Arc<SegmentBuffer>>,
    /// Issued by retired buffers that nothing else held any more.
    pub(super) issued: u64,
}

impl Retired {
    /// Folds the count of each buffer nothing else holds: none can issue again.
    fn settle(&mut self) {
        let Retired { buffers, issued } = self;
        buffers.retain_mut(|b| {
            if Arc::get_mut(b).is_none() {
                return true;
            }
            *issued = issued.saturating_add(b.issued());
            false
        });
    }
}

/// A buffer as a map key: its address (unique while the buffer lives, and the map holds it).
fn key(buffer: &Arc<SegmentBuffer>) -> usize {
    Arc::as_ptr(buffer) as usize
}

pub(super) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) struct Inner {
    pub(super) store: Arc<dyn AllocStore>,
    /// Refuses a claim that comes back below one this generator made before.
    pub(super) guard: ClaimGuard,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) observer: Option<LoadObserver>,
    /// Every tag, and the buffers of those asked for.
    pub(super) table: TagTable,
    /// The buffers in the table, for finding idle ones and for totals.
    pub(super) active: Mutex<Vec<Active>>,
    /// Buffers whose tag needs attention (failing, used up, went backwards), by [`key`].
    pub(super) troubled: Mutex<HashMap<usize, Arc<SegmentBuffer>>>,
    /// Buffers that issued since [`SegmentGenerator::drain_moved`](super::SegmentGenerator::drain_moved) last looked.
    pub(super) moved: Mutex<Vec<Arc<SegmentBuffer>>>,
    /// To the loader thread.
    pub(super) tx: Sender<Msg>,
    /// This generator's number, unique in the process (never reused), for [`RECENT`](super::recent::RECENT).
    pub(super) id: u64,
    /// Raised when a buffer leaves the table (dropped as idle, or its tag removed), so a
    /// thread's remembered buffers are known stale.
    pub(super) version: AtomicU64,
    /// Buffers that left the table, and what the ones since gone had issued (for the issued
    /// total over all tags). Taken after [`Inner::active`] when both are held.
    pub(super) retired: Mutex<Retired>,
    /// Claims over all tags, and how many failed.
    pub(super) claims: AtomicU64,
    pub(super) claim_failures: AtomicU64,
    /// Requests for an ID that found none in memory and waited for a claim (or were refused
    /// while one failed): what a preload, or a period opened ahead, is there to avoid.
    pub(super) load_waits: AtomicU64,
    /// The table's fingerprint at the last full read of the tag list.
    pub(super) fingerprint: Mutex<Option<TagsFingerprint>>,
    pub(super) idle_timeout: Duration,
    pub(super) wait: Duration,
    /// The ID key of opaque tags, if this generator was given one.
    pub(super) key: Option<IdKey>,
}

pub(super) static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

impl Inner {
    /// A new buffer is in use.
    /// A refresh may have removed its tag between the buffer's making and this: such a buffer
    /// goes straight to the retired ones (the refresh found it in neither list), so it is
    /// counted once and never looked at as idle.
    fn activate(&self, buffer: &Arc<SegmentBuffer>) {
        let mut active = locked(&self.active);
        if self.table.holds(buffer) {
            active.push(Active {
                buffer: buffer.clone(),
                issued: 0,
                since: Instant::now(),
            });
        } else {
            self.retire(active, std::slice::from_ref(buffer));
        }
    }

    /// The buffer of a tag of the table, made on first use.
    pub(super) fn table_buffer(&self, tag: &str) -> Option<Arc<SegmentBuffer>> {
        let (buffer, made) = self.table.buffer(tag)?;
        if made {
            self.activate(&buffer);
        }
        Some(buffer)
    }

    /// One claim in the table for `buffer`'s tag, counted and reported to the observer.
    pub(super) fn claim(
        &self,
        buffer: &Arc<SegmentBuffer>,
        increment: Increment,
    ) -> Result<Claim, SegmentError> {
        let issuing = self.issuing(buffer);
        if let Ok(Issuing::Periodic(_)) = issuing {
            // Not a claim: a periodic tag's own row is never claimed from.
            return Err(SegmentError::PeriodicBase {
                tag: buffer.tag().into(),
            });
        }
        let started = Instant::now();
        let result = issuing.and_then(|_| self.guard.claim(&*self.store, buffer.tag(), increment));
        let elapsed = started.elapsed();
        buffer.record_claim(elapsed, result.is_ok());
        self.claims.fetch_add(1, Ordering::Relaxed);
        if result.is_err() {
            self.claim_failures.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(observe) = &self.observer {
            observe(&LoadEvent {
                tag: buffer.tag(),
                elapsed,
                claimed: result.as_ref().ok().map(Claim::len),
            });
        }
        result
    }

    /// How `buffer`'s tag issues its dense IDs: read from its shape before its first claim
    /// (the key and region checked), and its claims capped at an opaque width's capacity.
    pub(super) fn issuing<'b>(
        &self,
        buffer: &'b SegmentBuffer,
    ) -> Result<&'b Issuing, SegmentError> {
        if let Some(issuing) = buffer.issuing() {
            return Ok(issuing);
        }
        let tag = buffer.tag();
        let bounds = self.store.bounds();
        let issuing = match TagShape::of(&*self.store, tag)? {
            TagShape::Periodic(shape) => {
                bounds.refuse_periodic(tag)?;
                let key = match &shape.key_check {
                    Some(check) => Some(check_key(tag, check, self.key.as_ref())?.clone()),
                    None => None,
                };
                Issuing::Periodic(Arc::new(PeriodRouter::new(tag, shape, key)))
            }
            shape => {
                let issuing = Issuing::new(tag, &shape, self.key.as_ref(), &bounds)?;
                self.store.cap_tag(tag, issuing.ceiling());
                issuing
            }
        };
        Ok(buffer.set_issuing(issuing))
    }

    /// Keeps [`Inner::troubled`] in step with the buffer's state after a claim.
    pub(super) fn update_troubled(&self, buffer: &Arc<SegmentBuffer>) {
        // Listed while it may need attention (also a table whose last IDs this server claimed:
        // used up once the buffers are); `troubled()` judges each at reading time.
        // A periodic tag's own buffer never issues (its periods' buffers do).
        if let Some(Issuing::Periodic(_)) = buffer.issuing() {
            locked(&self.troubled).remove(&key(buffer));
            return;
        }
        let bad = buffer.may_need_attention()
            || self.guard.refuses(buffer.tag())
            || self.bounded(buffer.view()).table_used_up();
        let mut troubled = locked(&self.troubled);
        if bad {
            troubled.insert(key(buffer), buffer.clone());
        } else {
            troubled.remove(&key(buffer));
        }
    }

    /// `view` with the store's bounds, so its headroom counts to the region's block's end.
    pub(super) fn bounded(
        &self,
        mut view: crate::segment::SegmentBufferView,
    ) -> crate::segment::SegmentBufferView {
        view.bounds = self.store.bounds_of(&view.tag);
        view
    }

    fn load(&self, buffer: &Arc<SegmentBuffer>, retries: &mut Vec<(Instant, Arc<SegmentBuffer>)>) {
        let plan = buffer.plan_load(self.clock.now_ms());
        let mut result = self.claim(buffer, plan.increment);
        if let Err(SegmentError::PeriodicBase { .. }) = result {
            buffer.end_load_unclaimed();
            return;
        }
        // Fewer IDs are left below the ceiling (2^63-1, or the end of the region's block) than
        // the step: claim those last ones.
        if let Err(SegmentError::Exhausted {
            max_id, ceiling, ..
        }) = result
            && (0..ceiling).contains(&max_id)
        {
            result = self.claim(buffer, Increment::Custom(ceiling - max_id));
        }
        // A removed or used-up tag is not retried; anything else (the database down) is.
        let retry = !matches!(
            result,
            Err(SegmentError::UnknownTag { .. }
                | SegmentError::Exhausted { .. }
                | SegmentError::PeriodRow { .. })
        );
        let failed = buffer.finish_load(plan, result).is_some();
        self.update_troubled(buffer);
        if failed && retry && !retries.iter().any(|(_, b)| Arc::ptr_eq(b, buffer)) {
            retries.push((Instant::now() + RETRY_AFTER, buffer.clone()));
        }
    }

    /// Moves buffers leaving the table from [`Inner::active`] (held) to [`Inner::retired`] in
    /// one step, so the totals never miss or double count them.
    fn retire(&self, active: MutexGuard<'_, Vec<Active>>, leaving: &[Arc<SegmentBuffer>]) {
        locked(&self.retired)
            .buffers
            .extend(leaving.iter().cloned());
        drop(active);
    }

    /// Forgets a buffer that left the table.
    fn forget(&self, buffer: &Arc<SegmentBuffer>) {
        locked(&self.troubled).remove(&key(buffer));
        self.version.fetch_add(1, Ordering::Release);
    }

    /// Re-reads the tag list, page by page: new tags are added, removed ones dropped with
    /// their buffers. Skipped when the database's fingerprint of the list is what it was.
    pub(super) fn refresh(&self) {
        let fingerprint = match self.store.tags_fingerprint() {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("refreshing the tag list failed: {e}");
                return;
            }
        };
        if let Some(f) = fingerprint
            && *locked(&self.fingerprint) == Some(f)
            && f.count == self.table.len() as u64
        {
            return;
        }
        let epoch = self.table.begin_refresh();
        for page in TagPages::new(&*self.store) {
            match page {
                Ok(tags) => tags.iter().for_each(|t| {
                    self.table.insert(t);
                }),
                Err(e) => {
                    tracing::warn!("refreshing the tag list failed: {e}");
                    return;
                }
            }
        }
        let gone = self.table.sweep(epoch);
        if !gone.is_empty() {
            // Only the buffers found active are retired here: one made but not yet activated
            // is retired by `activate`, which finds its tag gone.
            let mut active = locked(&self.active);
            let mut leaving = Vec::new();
            active.retain(|a| {
                let stays = !gone.iter().any(|b| Arc::ptr_eq(b, &a.buffer));
                if !stays {
                    leaving.push(a.buffer.clone());
                }
                stays
            });
            self.retire(active, &leaving);
            gone.iter().for_each(|b| self.forget(b));
        }
        *locked(&self.fingerprint) = fingerprint;
    }

    /// Drops the buffers that issued nothing and loaded nothing for [`Inner::idle_timeout`].
    fn drop_idle(&self) {
        let now = Instant::now();
        let mut idle = Vec::new();
        let mut active = locked(&self.active);
        active.retain_mut(|a| {
            let issued = a.buffer.issued();
            if issued != a.issued || a.buffer.is_loading() {
                a.issued = issued;
                a.since = now;
                return true;
            }
            if now.duration_since(a.since) < self.idle_timeout {
                return true;
            }
            idle.push(a.buffer.clone());
            false
        });
        self.retire(active, &idle);
        for buffer in idle {
            // Not in the table any more only if a refresh removed its tag: forgotten then.
            if self.table.detach(&buffer) {
                self.forget(&buffer);
            }
        }
        locked(&self.retired).settle();
    }

    /// The buffer of `tag`, looked up in the database when the table does not hold it (a tag
    /// added since the last refresh is found at once; Leaf waits for the next refresh).
    pub(super) fn lookup(&self, tag: &str) -> Result<Arc<SegmentBuffer>, SegmentError> {
        if let Some(b) = self.table_buffer(tag) {
            return Ok(b);
        }
        validate_tag(tag)?;
        let unknown = || SegmentError::UnknownTag {
            tag: tag.into(),
            db: self.store.describe(),
        };
        if self.store.get(tag)?.is_none() {
            return Err(unknown());
        }
        self.table.insert(tag);
        self.table_buffer(tag).ok_or_else(unknown)
    }
}

pub(super) fn worker(inner: Arc<Inner>, rx: mpsc::Receiver<Msg>, refresh_every: Duration) {
    let mut retries: Vec<(Instant, Arc<SegmentBuffer>)> = Vec::new();
    let mut next_refresh = Instant::now() + refresh_every;
    loop {
        let wake = retries.iter().map(|r| r.0).fold(next_refresh, Instant::min);
        match rx.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(Msg::Load(b)) => inner.load(&b, &mut retries),
            Ok(Msg::OpenPeriod(router, number)) => {
                if let Some(b) = router.open_ahead(&inner, number) {
                    inner.load(&b, &mut retries);
                }
            }
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = retries.drain(..).partition(|r| r.0 <= now);
        retries = later;
        for (_, b) in due {
            // A buffer dropped meanwhile (idle, its tag removed) is not loaded again.
            if inner.table.holds(&b) && b.start_retry() {
                inner.load(&b, &mut retries);
            }
        }
        if Instant::now() >= next_refresh {
            inner.refresh();
            inner.drop_idle();
            next_refresh = Instant::now() + refresh_every;
        }
    }
}
