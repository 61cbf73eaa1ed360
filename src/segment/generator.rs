//! The segment generator: a [`SegmentBuffer`] per tag, loaded and refreshed in the background.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::buffer::{RETRY_AFTER, Slow};
use super::{
    AllocStore, Claim, ClaimGuard, Increment, LeafAlloc, SegmentBuffer, SegmentBufferView,
    SegmentError, validate_tag,
};
use crate::snowflake::{Clock, SystemClock};

/// How often the tag list is re-read from the table (Leaf: every minute).
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(60);
/// How long a caller waits for a segment that is still loading before `NotReady`.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(3);

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

/// The tag map, read on every `next_id(tag)`. hashbrown with foldhash rather than std's SipHash
/// (a short tag hashes in a couple of ns instead of ~15), and keys compared inline rather than
/// through libc's `memcmp`, whose call costs more than comparing a short name; together they
/// were most of the cost of a lookup. Only tags that exist in the table are ever inserted, so
/// lookups of arbitrary names cannot flood it with collisions.
type TagMap = hashbrown::HashMap<TagKey, usize>;

/// The tags' buffers as published to `next_id(tag)`: a list, and the map from tag to position in
/// it, so a thread can remember the position of the tag it asked for last and, asked for the same
/// tag again, skip the map.
struct Tags {
    index: TagMap,
    list: Vec<Arc<SegmentBuffer>>,
}

impl Tags {
    /// `list` must not hold a tag twice.
    fn new(list: Vec<Arc<SegmentBuffer>>) -> Tags {
        let index = list
            .iter()
            .enumerate()
            .map(|(i, b)| (TagKey(b.tag().into()), i))
            .collect();
        Tags { index, list }
    }

    #[inline]
    fn position(&self, tag: &str) -> Option<usize> {
        self.index.get(&TagQuery(tag)).copied()
    }

    fn get(&self, tag: &str) -> Option<&Arc<SegmentBuffer>> {
        self.list.get(self.position(tag)?)
    }
}

/// A tag as the map's key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TagKey(Box<str>);

/// A tag being looked up: hashes as its [`TagKey`] does, compares inline.
struct TagQuery<'a>(&'a str);

// Both hash the bytes alone: the map holds nothing but tags, so `str`'s extra end marker (one
// more round of the hash) buys nothing.
impl std::hash::Hash for TagKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

impl std::hash::Hash for TagQuery<'_> {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

impl hashbrown::Equivalent<TagKey> for TagQuery<'_> {
    #[inline]
    fn equivalent(&self, key: &TagKey) -> bool {
        same_bytes(self.0.as_bytes(), key.0.as_bytes())
    }
}

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

struct Inner {
    store: Arc<dyn AllocStore>,
    /// Refuses a claim that comes back below one this generator made before.
    guard: ClaimGuard,
    clock: Arc<dyn Clock>,
    observer: Option<LoadObserver>,
    /// Read on every `next_id(tag)` without a lock (an atomic load); replaced as a whole, copy on
    /// write, when tags come or go, which is rare.
    buffers: ArcSwap<Tags>,
    /// Serialises those replacements so none is lost.
    buffers_write: Mutex<()>,
    /// This generator's number, unique in the process (never reused), for [`TAGS`].
    id: u64,
    /// Raised after each replacement of `buffers`, so a thread's cached map is known stale.
    version: AtomicU64,
}

static NEXT_GENERATOR_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The tags this thread last used, with their generator's id and version. Checking it takes a
    /// plain load of `version`; a load from the `ArcSwap` takes two atomic read-modify-writes,
    /// which cost more than the rest of `next_id(tag)`. A thread keeps the tags it last used
    /// (and so their buffers) alive until it next calls `next_id(tag)` or ends.
    static TAGS: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// A thread's copy of one generator's tags.
struct Cached {
    generator: u64,
    version: u64,
    tags: Arc<Tags>,
    /// The position of the tag this thread asked for last.
    last: usize,
}

impl Inner {
    /// Publishes a new tag map (under `buffers_write`).
    fn publish(&self, tags: Tags) {
        self.buffers.store(Arc::new(tags));
        self.version.fetch_add(1, Ordering::Release);
    }

    /// One claim in the table, reported to the observer.
    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        let started = Instant::now();
        let result = self.guard.claim(&*self.store, tag, increment);
        if let Some(observe) = &self.observer {
            observe(&LoadEvent {
                tag,
                elapsed: started.elapsed(),
                claimed: result.as_ref().ok().map(Claim::len),
            });
        }
        result
    }

    fn load(&self, buffer: &Arc<SegmentBuffer>, retries: &mut Vec<(Instant, Arc<SegmentBuffer>)>) {
        let plan = buffer.plan_load(self.clock.now_ms());
        let mut result = self.claim(buffer.tag(), plan.increment);
        // Fewer IDs are left below 2^63-1 than the step: claim those last ones.
        if let Err(SegmentError::Exhausted { max_id, .. }) = result
            && (0..i64::MAX).contains(&max_id)
        {
            result = self.claim(buffer.tag(), Increment::Custom(i64::MAX - max_id));
        }
        // A removed or used-up tag is not retried; anything else (the database down) is.
        let retry = !matches!(
            result,
            Err(SegmentError::UnknownTag { .. } | SegmentError::Exhausted { .. })
        );
        if buffer.finish_load(plan, result).is_some()
            && retry
            && !retries.iter().any(|(_, b)| Arc::ptr_eq(b, buffer))
        {
            retries.push((Instant::now() + RETRY_AFTER, buffer.clone()));
        }
    }

    fn refresh(&self) {
        match self.store.tags() {
            Ok(tags) => {
                let known: std::collections::HashSet<&str> =
                    tags.iter().map(String::as_str).collect();
                let _writer = self.buffers_write.lock().unwrap_or_else(|p| p.into_inner());
                let current = self.buffers.load();
                let mut list: Vec<Arc<SegmentBuffer>> = current
                    .list
                    .iter()
                    .filter(|b| known.contains(b.tag()))
                    .cloned()
                    .collect();
                let mut listed: std::collections::HashSet<String> =
                    list.iter().map(|b| b.tag().to_string()).collect();
                for t in tags {
                    if listed.insert(t.clone()) {
                        list.push(Arc::new(SegmentBuffer::new(t)));
                    }
                }
                self.publish(Tags::new(list));
            }
            Err(e) => tracing::warn!("refreshing the tag list failed: {e}"),
        }
    }

    fn lookup(&self, tag: &str) -> Result<Arc<SegmentBuffer>, SegmentError> {
        if let Some(b) = self.buffers.load().get(tag) {
            return Ok(b.clone());
        }
        // Unlike Leaf, a tag added since the last refresh is found at once.
        validate_tag(tag)?;
        if self.store.get(tag)?.is_none() {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.store.describe(),
            });
        }
        let _writer = self.buffers_write.lock().unwrap_or_else(|p| p.into_inner());
        let current = self.buffers.load();
        if let Some(b) = current.get(tag) {
            return Ok(b.clone()); // added meanwhile
        }
        let buffer = Arc::new(SegmentBuffer::new(tag));
        let mut list = current.list.clone();
        list.push(buffer.clone());
        self.publish(Tags::new(list));
        Ok(buffer)
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
            if b.start_retry() {
                inner.load(&b, &mut retries);
            }
        }
        if Instant::now() >= next_refresh {
            inner.refresh();
            next_refresh = Instant::now() + refresh_every;
        }
    }
}

#[inline(always)]
fn next_from(
    buffer: &Arc<SegmentBuffer>,
    tx: &Sender<Msg>,
    wait: Duration,
) -> Result<u64, SegmentError> {
    if let Some((id, preload)) = buffer.try_take() {
        if preload {
            request_preload(buffer, tx);
        }
        return Ok(id);
    }
    next_slow(buffer, tx, wait)
}

#[cold]
fn request_preload(buffer: &Arc<SegmentBuffer>, tx: &Sender<Msg>) {
    if buffer.claim_preload() && tx.send(Msg::Load(buffer.clone())).is_err() {
        buffer.abandon_load("the generator has been stopped");
    }
}

#[cold]
#[inline(never)]
fn next_slow(
    buffer: &Arc<SegmentBuffer>,
    tx: &Sender<Msg>,
    wait: Duration,
) -> Result<u64, SegmentError> {
    let deadline = Instant::now() + wait;
    loop {
        if let Some((id, preload)) = buffer.try_take() {
            if preload {
                request_preload(buffer, tx);
            }
            return Ok(id);
        }
        match buffer.slow_path(deadline)? {
            Slow::Retry => {}
            Slow::StartLoad => {
                if tx.send(Msg::Load(buffer.clone())).is_err() {
                    buffer.abandon_load("the generator has been stopped");
                }
            }
        }
    }
}

/// Issues segment-mode IDs for any number of tags, for long-running users (`leafctl serve`).
///
/// Tags are read from the table at start and every [`REFRESH_INTERVAL`]; a tag added since is
/// looked up at once. One background thread claims segments (preloads, retries after failures,
/// refreshes); it stops when the generator is dropped. While the database is down, IDs keep
/// coming from the buffers; once they are used up callers get [`SegmentError::NotReady`] until
/// it is back.
pub struct SegmentGenerator {
    inner: Arc<Inner>,
    tx: Sender<Msg>,
    wait: Duration,
    worker: Option<JoinHandle<()>>,
}

/// Options of a [`SegmentGenerator`].
pub struct SegmentGeneratorBuilder {
    store: Arc<dyn AllocStore>,
    clock: Arc<dyn Clock>,
    observer: Option<LoadObserver>,
    wait: Duration,
    refresh: Duration,
}

impl SegmentGeneratorBuilder {
    /// The clock the dynamic step is measured with (a fake one in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
    /// How long `next_id` waits for a loading segment (default [`WAIT_TIMEOUT`]).
    pub fn wait_timeout(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
    /// Calls `observer` after every claim (for metrics: count, failures, latency).
    pub fn on_load(mut self, observer: LoadObserver) -> Self {
        self.observer = Some(observer);
        self
    }
    /// How often the tag list is re-read (default [`REFRESH_INTERVAL`]).
    pub fn refresh_interval(mut self, every: Duration) -> Self {
        self.refresh = every;
        self
    }
    /// Reads the tag list and starts the background thread.
    pub fn build(self) -> Result<SegmentGenerator, SegmentError> {
        let tags = self.store.tags()?;
        let mut listed = std::collections::HashSet::new();
        let buffers = Tags::new(
            tags.into_iter()
                .filter(|t| listed.insert(t.clone()))
                .map(|t| Arc::new(SegmentBuffer::new(t)))
                .collect(),
        );
        let inner = Arc::new(Inner {
            store: self.store,
            guard: ClaimGuard::in_memory(),
            clock: self.clock,
            observer: self.observer,
            buffers: ArcSwap::from_pointee(buffers),
            buffers_write: Mutex::new(()),
            id: NEXT_GENERATOR_ID.fetch_add(1, Ordering::Relaxed),
            version: AtomicU64::new(0),
        });
        let (tx, rx) = mpsc::channel();
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
            tx,
            wait: self.wait,
            worker: Some(worker),
        })
    }
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
        }
    }

    /// The next ID for `tag`. Finds the tag's buffer in this thread's copy of the tag map,
    /// checked current with one atomic load (no lock, no reference count); a [`SegmentHandle`]
    /// also skips the map lookup.
    pub fn next_id(&self, tag: &str) -> Result<u64, SegmentError> {
        if let Some(id) = self.try_next_id(tag) {
            return Ok(id);
        }
        let buffer = self.inner.lookup(tag)?;
        next_from(&buffer, &self.tx, self.wait)
    }

    /// The next ID for `tag` if one can be had without waiting: a known tag whose current
    /// segment has IDs left (this thread's copy of the tag map, checked current with an atomic
    /// load, and one atomic increment; no lock, no I/O). `None` means "call
    /// [`SegmentGenerator::next_id`]", which may wait for a load or ask the database about an
    /// unknown tag; an async server does that off its event loop.
    #[inline]
    pub fn try_next_id(&self, tag: &str) -> Option<u64> {
        let inner = &self.inner;
        let version = inner.version.load(Ordering::Acquire);
        TAGS.try_with(|slot| {
            let mut slot = slot.borrow_mut();
            let fresh =
                matches!(&*slot, Some(c) if c.generator == inner.id && c.version == version);
            if !fresh {
                *slot = Some(Cached {
                    generator: inner.id,
                    version,
                    // Loaded after `version` was read, so at least that new.
                    tags: inner.buffers.load_full(),
                    last: 0,
                });
            }
            let c = slot.as_mut()?;
            let buffer = match c.tags.list.get(c.last) {
                Some(b) if same_bytes(b.tag().as_bytes(), tag.as_bytes()) => b,
                _ => {
                    let i = c.tags.position(tag)?;
                    c.last = i;
                    c.tags.list.get(i)?
                }
            };
            let (id, preload) = buffer.try_take()?;
            if preload {
                request_preload(buffer, &self.tx);
            }
            Some(id)
        })
        .ok()
        .flatten()
    }

    /// `count` IDs for `tag`, ascending, as a few ranges: taken from the current segment in one
    /// atomic step, then from the other segment if it is loaded, and the rest (if any) claimed
    /// from the table in one transaction of exactly that size. Never waits for a background
    /// load; may block on that one claim.
    pub fn next_ids(&self, tag: &str, count: u64) -> Result<Vec<Range<u64>>, SegmentError> {
        if count == 0 || count > i64::MAX as u64 {
            return Err(SegmentError::InvalidCount(count));
        }
        let buffer = self.inner.lookup(tag)?;
        let mut ranges: Vec<Range<u64>> = Vec::with_capacity(2);
        let mut left = count;
        let mut switched = false;
        while left > 0 {
            if let Some((range, preload)) = buffer.try_take_many(left) {
                if preload {
                    request_preload(&buffer, &self.tx);
                }
                left -= range.end - range.start;
                match ranges.last_mut() {
                    Some(last) if last.end == range.start => last.end = range.end,
                    _ => ranges.push(range),
                }
                continue;
            }
            if switched || !buffer.try_switch() {
                break;
            }
            switched = true;
        }
        if left > 0 {
            // Keep the buffers filling for the single-ID path meanwhile.
            request_preload(&buffer, &self.tx);
            let increment = i64::try_from(left).map_err(|_| SegmentError::InvalidCount(count))?;
            let claim = self.inner.claim(tag, Increment::Custom(increment))?;
            // A claim is above every range claimed before it, so the list stays ascending.
            ranges.push(claim.start..claim.end);
        }
        Ok(ranges)
    }

    /// Every row of the table (Leaf's `/db` page).
    pub fn rows(&self) -> Result<Vec<LeafAlloc>, SegmentError> {
        self.inner.store.list()
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
            tx: self.tx.clone(),
            wait: self.wait,
        })
    }

    /// The tags currently known, sorted.
    pub fn tags(&self) -> Vec<String> {
        let mut t: Vec<String> = self
            .inner
            .buffers
            .load()
            .list
            .iter()
            .map(|b| b.tag().to_string())
            .collect();
        t.sort();
        t
    }

    /// A monitoring snapshot of every tag's buffer, sorted by tag.
    pub fn views(&self) -> Vec<SegmentBufferView> {
        let mut v: Vec<SegmentBufferView> = self
            .inner
            .buffers
            .load()
            .list
            .iter()
            .map(|b| b.view())
            .collect();
        v.sort_by(|a, b| a.tag.cmp(&b.tag));
        v
    }

    /// Re-reads the tag list now (it also happens every refresh interval).
    pub fn refresh(&self) {
        self.inner.refresh();
    }
}

impl Drop for SegmentGenerator {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// One tag of a [`SegmentGenerator`]: `next_id` is an atomic increment, no lock or syscall.
/// Keeps working from its buffers after the generator is dropped, until they are used up.
#[derive(Clone)]
pub struct SegmentHandle {
    buffer: Arc<SegmentBuffer>,
    tx: Sender<Msg>,
    wait: Duration,
}

impl SegmentHandle {
    /// The next ID.
    #[inline]
    pub fn next_id(&self) -> Result<u64, SegmentError> {
        next_from(&self.buffer, &self.tx, self.wait)
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
    use super::same_bytes;

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
