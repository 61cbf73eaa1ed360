//! The segment generator: a [`SegmentBuffer`] per tag asked for, loaded and refreshed in the
//! background.
//!
//! Every tag of the table is known by name (a [`TagTable`]), but only a tag that is asked for
//! gets a buffer, and a buffer left unused for [`IDLE_BUFFER_TIMEOUT`] goes again: a million
//! tags cost their names while idle, not a million buffers. Nothing runs per tag unless it
//! issues or loads: the tag list is re-read every `REFRESH_INTERVAL` (60 s) in pages (skipped when
//! the database says its fingerprint did not change), and monitoring visits only the tags that
//! moved since it last looked ([`SegmentGenerator::drain_moved`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::buffer::{RETRY_AFTER, Slow};
use super::tags::{SHARDS, TagTable};
use super::{
    AllocStore, Claim, ClaimGuard, Increment, LeafAlloc, SegmentBuffer, SegmentBufferView,
    SegmentError, TagHealth, TagPages, TagsFingerprint, validate_tag,
};
use crate::snowflake::{Clock, SystemClock};

/// How often the tag list is re-read from the table (Leaf: every minute).
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);
/// How long a caller waits for a segment that is still loading before `NotReady`.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a tag's buffer may go unused (no ID taken, no load) before it is dropped. The IDs
/// left in its segments are skipped, never issued again; the tag's next request claims anew.
pub const IDLE_BUFFER_TIMEOUT: Duration = Duration::from_secs(3600);

enum Msg {
    Load(Arc<SegmentBuffer>),
    Stop,
}

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

/// Byte equality without a call out: 8 bytes at a time, and short names by overlapping loads
/// (like the hash itself) instead of a loop over bytes.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Lengths are checked above, so every load is in bounds; a failed one only misses.
    let load8 = |s: &[u8], i: usize| s.get(i..).and_then(|s| s.first_chunk::<8>()).copied();
    let load4 = |s: &[u8], i: usize| s.get(i..).and_then(|s| s.first_chunk::<4>()).copied();
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => {
            load4(a, 0).is_some_and(|x| Some(x) == load4(b, 0))
                && load4(a, n - 4).is_some_and(|x| Some(x) == load4(b, n - 4))
        }
        _ => {
            let mut i = 0;
            while i + 8 < n {
                if load8(a, i).is_none_or(|x| Some(x) != load8(b, i)) {
                    return false;
                }
                i += 8;
            }
            load8(a, n - 8).is_some_and(|x| Some(x) == load8(b, n - 8))
        }
    }
}

/// A buffer in use, as the loader sees it when it looks for buffers gone idle.
struct Active {
    buffer: Arc<SegmentBuffer>,
    /// Its issued total when last looked at, and since when it has not moved.
    issued: u64,
    since: Instant,
}

/// Buffers out of the table (dropped as idle, or their tag removed) that may still issue: a
/// thread remembers one until it sees [`Inner::version`] move, a [`SegmentHandle`] keeps one.
/// They count in the totals until only this list holds them; then their count is final.
#[derive(Default)]
struct Retired {
    buffers: Vec<Arc<SegmentBuffer>>,
    /// Issued by retired buffers that nothing else held any more.
    issued: u64,
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

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Inner {
    store: Arc<dyn AllocStore>,
    /// Refuses a claim that comes back below one this generator made before.
    guard: ClaimGuard,
    clock: Arc<dyn Clock>,
    observer: Option<LoadObserver>,
    /// Every tag, and the buffers of those asked for.
    table: TagTable,
    /// The buffers in the table, for finding idle ones and for totals.
    active: Mutex<Vec<Active>>,
    /// Buffers whose tag needs attention (failing, used up, went backwards), by [`key`].
    troubled: Mutex<HashMap<usize, Arc<SegmentBuffer>>>,
    /// Buffers that issued since [`SegmentGenerator::drain_moved`] last looked.
    moved: Mutex<Vec<Arc<SegmentBuffer>>>,
    /// To the loader thread.
    tx: Sender<Msg>,
    /// This generator's number, unique in the process (never reused), for [`RECENT`].
    id: u64,
    /// Raised when a buffer leaves the table (dropped as idle, or its tag removed), so a
    /// thread's remembered buffers are known stale.
    version: AtomicU64,
    /// Buffers that left the table, and what the ones since gone had issued (for the issued
    /// total over all tags). Taken after [`Inner::active`] when both are held.
    retired: Mutex<Retired>,
    /// Claims over all tags, and how many failed.
    claims: AtomicU64,
    claim_failures: AtomicU64,
    /// The table's fingerprint at the last full read of the tag list.
    fingerprint: Mutex<Option<TagsFingerprint>>,
    idle_timeout: Duration,
    wait: Duration,
}

static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

/// Buffers a thread remembers.
const RECENT_BUFFERS: usize = 4;

thread_local! {
    /// The buffers this thread used last, with their generator's id and version: asked for one
    /// of these tags again, `next_id(tag)` compares names instead of looking the tag up
    /// (checking the version is one plain load; the table's lookup takes a lock). A thread
    /// keeps them alive until it next calls `next_id(tag)` or ends.
    static RECENT: RefCell<Recent> = const {
        RefCell::new(Recent {
            generator: 0,
            version: 0,
            buffers: [const { None }; RECENT_BUFFERS],
            next: 0,
            last: 0,
        })
    };
}

/// A thread's memory of the buffers it used last (see [`RECENT`]).
struct Recent {
    generator: u64,
    version: u64,
    buffers: [Option<Arc<SegmentBuffer>>; RECENT_BUFFERS],
    /// Where the next buffer goes (the oldest).
    next: usize,
    /// The slot of the tag asked for last (asked for again, it is the one compared first).
    last: usize,
}

impl Recent {
    #[inline(always)]
    fn find(&mut self, tag: &str) -> Option<&Arc<SegmentBuffer>> {
        let is = |b: &Option<Arc<SegmentBuffer>>| {
            b.as_ref()
                .is_some_and(|b| same_bytes(b.tag().as_bytes(), tag.as_bytes()))
        };
        if !self.buffers.get(self.last).is_some_and(is) {
            self.last = self.find_other(tag)?;
        }
        self.buffers.get(self.last)?.as_ref()
    }

    /// The slot of `tag` other than the last one asked for.
    fn find_other(&self, tag: &str) -> Option<usize> {
        self.buffers.iter().position(|b| {
            b.as_ref()
                .is_some_and(|b| same_bytes(b.tag().as_bytes(), tag.as_bytes()))
        })
    }

    fn remember(&mut self, buffer: Arc<SegmentBuffer>) -> Option<&Arc<SegmentBuffer>> {
        let i = self.next % RECENT_BUFFERS;
        self.next = i + 1;
        self.last = i;
        let slot = self.buffers.get_mut(i)?;
        *slot = Some(buffer);
        slot.as_ref()
    }

    fn reset(&mut self, generator: u64, version: u64) {
        self.generator = generator;
        self.version = version;
        self.buffers = [const { None }; RECENT_BUFFERS];
        self.next = 0;
        self.last = 0;
    }
}

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
    fn table_buffer(&self, tag: &str) -> Option<Arc<SegmentBuffer>> {
        let (buffer, made) = self.table.buffer(tag)?;
        if made {
            self.activate(&buffer);
        }
        Some(buffer)
    }

    /// One claim in the table for `buffer`'s tag, counted and reported to the observer.
    fn claim(
        &self,
        buffer: &Arc<SegmentBuffer>,
        increment: Increment,
    ) -> Result<Claim, SegmentError> {
        let started = Instant::now();
        let result = self.guard.claim(&*self.store, buffer.tag(), increment);
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

    /// Keeps [`Inner::troubled`] in step with the buffer's state after a claim.
    fn update_troubled(&self, buffer: &Arc<SegmentBuffer>) {
        let bad = buffer.needs_attention() || self.guard.refuses(buffer.tag());
        let mut troubled = locked(&self.troubled);
        if bad {
            troubled.insert(key(buffer), buffer.clone());
        } else {
            troubled.remove(&key(buffer));
        }
    }

    fn load(&self, buffer: &Arc<SegmentBuffer>, retries: &mut Vec<(Instant, Arc<SegmentBuffer>)>) {
        let plan = buffer.plan_load(self.clock.now_ms());
        let mut result = self.claim(buffer, plan.increment);
        // Fewer IDs are left below 2^63-1 than the step: claim those last ones.
        if let Err(SegmentError::Exhausted { max_id, .. }) = result
            && (0..i64::MAX).contains(&max_id)
        {
            result = self.claim(buffer, Increment::Custom(i64::MAX - max_id));
        }
        // A removed or used-up tag is not retried; anything else (the database down) is.
        let retry = !matches!(
            result,
            Err(SegmentError::UnknownTag { .. } | SegmentError::Exhausted { .. })
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
    fn refresh(&self) {
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
    fn lookup(&self, tag: &str) -> Result<Arc<SegmentBuffer>, SegmentError> {
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

fn worker(inner: Arc<Inner>, rx: mpsc::Receiver<Msg>, refresh_every: Duration) {
    let mut retries: Vec<(Instant, Arc<SegmentBuffer>)> = Vec::new();
    let mut next_refresh = Instant::now() + refresh_every;
    loop {
        let wake = retries.iter().map(|r| r.0).fold(next_refresh, Instant::min);
        match rx.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(Msg::Load(b)) => inner.load(&b, &mut retries),
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

/// The hot path: an ID from the current segment, the preload asked for once 10% is used, and
/// the tag listed as moved for monitoring (once per sample).
#[inline(always)]
fn take(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Option<u64> {
    let (id, preload) = buffer.try_take()?;
    if preload {
        request_preload(buffer, inner);
    }
    if !buffer.moved() {
        note_moved(buffer, inner);
    }
    Some(id)
}

#[cold]
fn note_moved(buffer: &Arc<SegmentBuffer>, inner: &Inner) {
    if buffer.mark_moved() {
        locked(&inner.moved).push(buffer.clone());
    }
}

#[inline(always)]
fn next_from(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Result<u64, SegmentError> {
    if let Some(id) = take(buffer, inner) {
        return Ok(id);
    }
    next_slow(buffer, inner)
}

#[cold]
fn request_preload(buffer: &Arc<SegmentBuffer>, inner: &Inner) {
    if buffer.claim_preload() && inner.tx.send(Msg::Load(buffer.clone())).is_err() {
        buffer.abandon_load("the generator has been stopped");
    }
}

#[cold]
#[inline(never)]
fn next_slow(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Result<u64, SegmentError> {
    let deadline = Instant::now() + inner.wait;
    loop {
        if let Some(id) = take(buffer, inner) {
            return Ok(id);
        }
        match buffer.slow_path(deadline)? {
            Slow::Retry => {}
            Slow::StartLoad => {
                if inner.tx.send(Msg::Load(buffer.clone())).is_err() {
                    buffer.abandon_load("the generator has been stopped");
                }
            }
        }
    }
}

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

/// What [`SegmentGenerator::hand_back`] gave back to the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HandBack {
    /// Tags whose `max_id` went back down.
    pub tags: u64,
    /// IDs given back: the tags' next claims start with them.
    pub returned: u64,
    /// IDs that never went out and could not go back (another claim came after ours, the
    /// database did not answer, or the time ran out): skipped for good, never issued.
    pub wasted: u64,
    /// Why IDs could not go back, when the database failed.
    pub error: Option<String>,
}

/// Options of a [`SegmentGenerator`].
pub struct SegmentGeneratorBuilder {
    store: Arc<dyn AllocStore>,
    clock: Arc<dyn Clock>,
    observer: Option<LoadObserver>,
    wait: Duration,
    refresh: Duration,
    idle_timeout: Duration,
}

impl SegmentGeneratorBuilder {
    /// The clock the dynamic step is measured with (a fake one in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
    /// How long `next_id` waits for a loading segment (default `WAIT_TIMEOUT`).
    pub fn wait_timeout(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
    /// Calls `observer` after every claim (for metrics: count, failures, latency).
    pub fn on_load(mut self, observer: LoadObserver) -> Self {
        self.observer = Some(observer);
        self
    }
    /// How often the tag list is re-read, and idle buffers looked for (default
    /// `REFRESH_INTERVAL` (60 s)).
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh = every;
        self
    }
    /// How long a tag's buffer may go unused before it is dropped (default
    /// [`IDLE_BUFFER_TIMEOUT`]; checked every refresh interval).
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }
    /// Reads the tag list and starts the background thread.
    pub fn build(self) -> Result<SegmentGenerator, SegmentError> {
        let fingerprint = self.store.tags_fingerprint()?;
        let table = TagTable::new();
        for page in TagPages::new(&*self.store) {
            page?.iter().for_each(|t| {
                table.insert(t);
            });
        }
        let (tx, rx) = mpsc::channel();
        let inner = Arc::new(Inner {
            store: self.store,
            guard: ClaimGuard::in_memory(),
            clock: self.clock,
            observer: self.observer,
            table,
            active: Mutex::new(Vec::new()),
            troubled: Mutex::new(HashMap::new()),
            moved: Mutex::new(Vec::new()),
            tx,
            id: NEXT_GENERATOR_ID.fetch_add(1, Ordering::Relaxed),
            version: AtomicU64::new(0),
            retired: Mutex::new(Retired::default()),
            claims: AtomicU64::new(0),
            claim_failures: AtomicU64::new(0),
            fingerprint: Mutex::new(fingerprint),
            idle_timeout: self.idle_timeout,
            wait: self.wait,
        });
        let refresh = self.refresh;
        let worker_inner = inner.clone();
        let worker = std::thread::Builder::new()
            .name("leafctl-segment-loader".into())
            .spawn(move || worker(worker_inner, rx, refresh))
            .map_err(|e| SegmentError::Database {
                db: inner.store.describe(),
                detail: format!("cannot start the loader thread: {e}"),
            })?;
        Ok(SegmentGenerator {
            inner,
            worker: Mutex::new(Some(worker)),
        })
    }
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
}

impl SegmentGenerator {
    /// A builder over `store`.
    pub fn builder(store: impl Into<Arc<dyn AllocStore>>) -> SegmentGeneratorBuilder {
        SegmentGeneratorBuilder {
            store: store.into(),
            clock: Arc::new(SystemClock),
            observer: None,
            wait: WAIT_TIMEOUT,
            refresh: REFRESH_INTERVAL,
            idle_timeout: IDLE_BUFFER_TIMEOUT,
        }
    }

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
        if count == 0 || count > i64::MAX as u64 {
            return Err(SegmentError::InvalidCount(count));
        }
        let inner = &*self.inner;
        let buffer = inner.lookup(tag)?;
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
            return Err(refused);
        }
        let increment = i64::try_from(count).map_err(|_| SegmentError::InvalidCount(count))?;
        let claim = inner.claim(&buffer, Increment::Custom(increment));
        buffer.finish_batch(&claim);
        inner.update_troubled(&buffer);
        match claim {
            // A claim is above every range claimed before it, so the IDs ascend.
            Ok(claim) => Ok(std::iter::once(claim.start..claim.end).collect()),
            Err(e) if e.is_transient() => Err(SegmentError::BatchNotReady {
                tag: tag.to_string(),
                count,
                buffered: buffer.buffered(),
                cause: e.to_string(),
            }),
            Err(e) => Err(e),
        }
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
                f(match buffer {
                    Some(b) => b.view(),
                    None => SegmentBufferView::unloaded(&tag),
                });
            }
        }
    }

    /// A snapshot of one known tag (without making it a buffer); `None` for a tag the
    /// generator does not know.
    pub fn view(&self, tag: &str) -> Option<SegmentBufferView> {
        Some(match self.inner.table.get(tag)? {
            Some(b) => b.view(),
            None => SegmentBufferView::unloaded(tag),
        })
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
        let mut views: Vec<SegmentBufferView> = buffers.iter().map(|b| b.view()).collect();
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

    /// Stops issuing and gives the IDs that never went out back to the table, so that the
    /// next claim of each tag (this server restarted, or another) starts with them instead of
    /// skipping them: what a graceful stop does (Leaf throws them away on every restart).
    ///
    /// The loader is stopped first (a claim under way finishes and is counted), then each
    /// buffer is closed, so that no ID is taken from it after (a take that raced ahead keeps
    /// its ID, below what goes back), and its unused ranges go back newest first, each by one
    /// compare-and-set ([`AllocStore::hand_back`]): `max_id` moves down only while it is still
    /// where our claim left it, so a claim anybody made after ours keeps everything. Gives up
    /// at the first failure that means the database is not answering, or after `within`; what
    /// could not go back is skipped for good. Afterwards every request answers
    /// [`SegmentError::Stopped`], handles included.
    pub fn hand_back(&self, within: Duration) -> HandBack {
        self.stop_loader();
        let inner = &*self.inner;
        let buffers: Vec<Arc<SegmentBuffer>> = locked(&inner.active)
            .iter()
            .map(|a| a.buffer.clone())
            .collect();
        let deadline = Instant::now() + within;
        let mut report = HandBack::default();
        for buffer in buffers {
            let mut chain = true;
            let mut moved = false;
            for range in buffer.close_for_hand_back() {
                let len = range.end - range.start;
                if len == 0 {
                    continue;
                }
                let (Ok(from), Ok(to)) = (i64::try_from(range.end), i64::try_from(range.start))
                else {
                    report.wasted += len;
                    continue;
                };
                chain = chain && report.error.is_none() && Instant::now() < deadline;
                if chain {
                    match inner.store.hand_back(buffer.tag(), from, to) {
                        Ok(true) => {
                            report.returned += len;
                            moved = true;
                            continue;
                        }
                        // Claimed past it since: this range, and every older one, stays skipped.
                        Ok(false) => chain = false,
                        Err(e) => {
                            tracing::warn!(
                                "handing tag {:?}'s unused IDs back failed: {e}",
                                buffer.tag()
                            );
                            report.error = Some(e.to_string());
                        }
                    }
                }
                report.wasted += len;
            }
            report.tags += u64::from(moved);
        }
        report
    }
}

/// [`SegmentGenerator::try_next_id`] for a tag the thread does not remember: from the table
/// (a lock), remembered for next time.
#[cold]
fn remember_and_take(recent: &mut Recent, inner: &Inner, tag: &str) -> Option<u64> {
    let buffer = inner.table_buffer(tag)?;
    take(recent.remember(buffer)?, inner)
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
        self.buffer.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{BATCH_RETRY_AFTER, MemoryStore};

    /// A clock on which every reading is ten hours after the last: to the step rule, every
    /// tag is slow, so segments keep the table's step and the tests know their bounds.
    struct Crawling(std::sync::atomic::AtomicI64);

    impl Clock for Crawling {
        fn now_ms(&self) -> i64 {
            self.0.fetch_add(36_000_000, Ordering::Relaxed)
        }
        fn sleep_ms(&self, ms: u64) {
            std::thread::sleep(Duration::from_millis(ms));
        }
        fn sleep_until_ms(&self, _target_ms: i64) {}
    }

    /// A generator over a fresh in-memory table holding `tag` with `step`, its loader as it is,
    /// every segment of the table's step.
    fn generator(tag: &str, step: i64) -> (Arc<MemoryStore>, SegmentGenerator) {
        let store = Arc::new(MemoryStore::new());
        store.add(tag, 1, step, None, false).unwrap();
        let g = SegmentGenerator::builder(store.clone() as Arc<dyn AllocStore>)
            .wait_timeout(Duration::from_millis(300))
            .clock(Arc::new(Crawling(std::sync::atomic::AtomicI64::new(0))))
            .build()
            .unwrap();
        (store, g)
    }

    /// Waits (bounded) until the tag's next segment is loaded.
    fn until_next_ready(g: &SegmentGenerator, tag: &str) {
        let until = Instant::now() + Duration::from_secs(5);
        while !g.view(tag).is_some_and(|v| v.next_ready) {
            assert!(Instant::now() < until, "the next segment never loaded");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn flat(ranges: Vec<Range<u64>>) -> Vec<u64> {
        ranges.into_iter().flatten().collect()
    }

    /// Issue 33's first finding, on the in-memory table: a batch larger than the buffers during
    /// an outage must not cost them a single ID.
    #[test]
    fn a_batch_larger_than_the_buffers_in_an_outage_costs_them_nothing() {
        let (store, g) = generator("order", 100);
        let first: Vec<u64> = (0..30).map(|_| g.next_id("order").unwrap()).collect();
        assert_eq!(first, (1..31).collect::<Vec<_>>());
        until_next_ready(&g, "order");
        store.set_down(true);
        let claims = store.claims();
        let started = Instant::now();
        match g.next_ids("order", 500) {
            Err(SegmentError::BatchNotReady {
                count, buffered, ..
            }) => {
                assert_eq!((count, buffered), (500, 170));
            }
            other => panic!("expected BatchNotReady, got {other:?}"),
        }
        assert_eq!(store.claims(), claims + 1, "one claim was tried");
        assert_eq!(g.view("order").unwrap().issued, 30, "nothing taken");
        // Refused at once from now on: no claim, no wait.
        assert!(matches!(
            g.next_ids("order", 171),
            Err(SegmentError::BatchNotReady { .. })
        ));
        assert_eq!(store.claims(), claims + 1);
        assert!(started.elapsed() < Duration::from_secs(1));
        // A batch the buffers hold is served from them, spanning both segments.
        let batch = flat(g.next_ids("order", 100).unwrap());
        assert_eq!(batch, (31..131).collect::<Vec<_>>());
        // Single IDs keep coming until the buffers are empty, every one of them.
        let singles: Vec<u64> = (0..70).map(|_| g.next_id("order").unwrap()).collect();
        assert_eq!(singles, (131..201).collect::<Vec<_>>());
        assert!(matches!(
            g.next_id("order"),
            Err(SegmentError::NotReady { .. })
        ));
        // Back: nothing was thrown away.
        store.set_down(false);
        let until = Instant::now() + Duration::from_secs(5);
        let next = loop {
            match g.next_id("order") {
                Ok(id) => break id,
                Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("never recovered: {e}"),
            }
        };
        assert_eq!(next, 201, "the IDs after the buffered ones come next");
        let batch = flat(g.next_ids("order", 500).unwrap());
        assert_eq!(batch.len(), 500);
        assert!(batch[0] > next);
    }

    /// While batch claims fail, one batch a second asks the database again; the rest are
    /// answered at once.
    #[test]
    fn a_failing_database_is_asked_again_by_one_batch_a_second() {
        let (store, g) = generator("t", 10);
        assert_eq!((g.next_id("t").unwrap(), g.next_id("t").unwrap()), (1, 2));
        until_next_ready(&g, "t");
        store.set_down(true);
        let claims = store.claims();
        for _ in 0..5 {
            assert!(g.next_ids("t", 100).is_err());
        }
        assert_eq!(store.claims(), claims + 1);
        std::thread::sleep(BATCH_RETRY_AFTER);
        assert!(g.next_ids("t", 100).is_err());
        assert!(g.next_ids("t", 100).is_err());
        assert_eq!(store.claims(), claims + 2, "one probe after the pause");
        store.set_down(false);
        std::thread::sleep(BATCH_RETRY_AFTER);
        assert_eq!(g.next_ids("t", 100).unwrap().len(), 1);
        assert_eq!(g.next_ids("t", 100).unwrap().len(), 1, "open again");
    }

    #[test]
    fn a_batch_is_taken_from_the_buffers_only_whole() {
        let (store, g) = generator("t", 10);
        assert_eq!((g.next_id("t").unwrap(), g.next_id("t").unwrap()), (1, 2));
        until_next_ready(&g, "t");
        // 8 left in the current segment, 10 in the next: 18 fit.
        assert_eq!(
            flat(g.next_ids("t", 18).unwrap()),
            (3..21).collect::<Vec<_>>()
        );
        let v = g.view("t").unwrap();
        assert_eq!(v.segments[v.pos].value, v.segments[v.pos].max);
        until_next_ready(&g, "t");
        let before = g.view("t").unwrap();
        let big = flat(g.next_ids("t", 25).unwrap());
        assert_eq!(big.len(), 25);
        assert!(
            big[0] >= 31,
            "claimed above the buffered next segment: {big:?}"
        );
        assert_eq!(
            g.view("t").unwrap().segments,
            before.segments,
            "buffers untouched"
        );
        assert!(store.claims() >= 4);
        assert_eq!(
            g.next_id("t").unwrap(),
            21,
            "single IDs go on where they were"
        );
    }

    /// A graceful stop gives back what never went out, and a lone server's restart continues
    /// where it stopped.
    #[test]
    fn hand_back_returns_the_unused_ids_and_a_restart_continues_from_them() {
        let (store, g) = generator("t", 100);
        let ids: Vec<u64> = (0..42).map(|_| g.next_id("t").unwrap()).collect();
        until_next_ready(&g, "t");
        assert_eq!(store.get("t").unwrap().unwrap().max_id, 201);
        let h = g.hand_back(Duration::from_secs(5));
        assert_eq!(
            h,
            HandBack {
                tags: 1,
                returned: 158,
                wasted: 0,
                error: None
            }
        );
        assert_eq!(store.get("t").unwrap().unwrap().max_id, 43);
        assert!(matches!(g.next_id("t"), Err(SegmentError::Stopped { .. })));
        assert!(matches!(
            g.next_ids("t", 3),
            Err(SegmentError::Stopped { .. })
        ));
        drop(g);
        let again = SegmentGenerator::builder(store.clone() as Arc<dyn AllocStore>)
            .build()
            .unwrap();
        assert_eq!(again.next_id("t").unwrap(), ids[41] + 1);
    }

    /// With another claimant's claim after ours, only what lies above it could go back, and
    /// nothing does: the compare-and-set finds `max_id` moved.
    #[test]
    fn hand_back_leaves_a_range_someone_claimed_past() {
        let (store, g) = generator("t", 100);
        let ids: Vec<u64> = (0..20).map(|_| g.next_id("t").unwrap()).collect();
        assert_eq!(ids[19], 20);
        until_next_ready(&g, "t");
        let other = store.claim("t", Increment::TableStep).unwrap();
        assert_eq!(other.start, 201);
        let h = g.hand_back(Duration::from_secs(5));
        assert_eq!((h.tags, h.returned, h.wasted), (0, 0, 180));
        assert_eq!(store.get("t").unwrap().unwrap().max_id, 301);
    }

    #[test]
    fn hand_back_with_the_database_down_skips_and_says_why() {
        let (store, g) = generator("t", 10);
        assert_eq!((g.next_id("t").unwrap(), g.next_id("t").unwrap()), (1, 2));
        until_next_ready(&g, "t");
        store.set_down(true);
        let h = g.hand_back(Duration::from_secs(5));
        assert_eq!((h.returned, h.wasted), (0, 18));
        assert!(h.error.unwrap().contains("down"));
        store.set_down(false);
        assert_eq!(store.get("t").unwrap().unwrap().max_id, 21);
    }

    /// Threads taking single IDs and batches of every size while the loader refills and the
    /// database goes down and up: no ID twice, and every batch is whole or refused.
    #[test]
    fn singles_and_batches_of_every_size_never_repeat_an_id() {
        let (store, g) = generator("t", 50);
        let g = Arc::new(g);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let workers: Vec<_> = (0..3)
            .map(|w| {
                let (g, stop) = (g.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut ids = Vec::new();
                    let mut n = 1u64;
                    for _ in 0..4_000 {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if w == 0 {
                            if let Ok(id) = g.next_id("t") {
                                ids.push(id);
                            }
                        } else {
                            n = n * 7 % 131 + 1;
                            if let Ok(r) = g.next_ids("t", n) {
                                let got: Vec<u64> = r.into_iter().flatten().collect();
                                assert_eq!(got.len() as u64, n, "a batch is whole");
                                ids.extend(got);
                            }
                        }
                    }
                    ids
                })
            })
            .collect();
        for k in 0..10 {
            std::thread::sleep(Duration::from_millis(5));
            store.set_down(k % 2 == 0);
        }
        store.set_down(false);
        stop.store(true, Ordering::Relaxed);
        let mut all: Vec<u64> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an ID was issued twice");
        let max_id = store.get("t").unwrap().unwrap().max_id as u64;
        assert!(all.iter().all(|&id| (1..max_id).contains(&id)));
    }

    #[test]
    fn inline_equality_agrees_with_slices_at_every_length() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..base.len() {
            let a = &base[..n];
            let copy = a.to_vec(); // equal bytes elsewhere in memory
            assert!(same_bytes(a, &copy), "len {n}");
            if n > 0 {
                assert!(!same_bytes(a, &base[..n - 1]), "len {n} vs {}", n - 1);
            }
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 0x20;
                assert!(!same_bytes(a, &b), "len {n}, byte {i} differs");
            }
        }
    }
}
