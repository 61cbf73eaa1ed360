//! The options of a [`SegmentGenerator`], and its start: the tag list read, the loader started.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::inner::{Inner, NEXT_GENERATOR_ID, Retired, worker};
use super::{IDLE_BUFFER_TIMEOUT, LoadObserver, REFRESH_INTERVAL, SegmentGenerator, WAIT_TIMEOUT};
use crate::idformat::opaque::IdKey;
use crate::segment::tags::TagTable;
use crate::segment::{AllocStore, ClaimGuard, SegmentError, TagPages};
use crate::snowflake::{Clock, SystemClock};

/// Options of a [`SegmentGenerator`].
pub struct SegmentGeneratorBuilder {
    store: Arc<dyn AllocStore>,
    clock: Arc<dyn Clock>,
    observer: Option<LoadObserver>,
    wait: Duration,
    refresh: Duration,
    idle_timeout: Duration,
    key: Option<IdKey>,
}

impl SegmentGeneratorBuilder {
    setters! {
        /// The clock the dynamic step is measured with (a fake one in tests).
        clock(clock: Arc<dyn Clock>) => clock = clock;
        /// How long `next_id` waits for a loading segment (default `WAIT_TIMEOUT`).
        wait_timeout(wait: Duration) => wait = wait;
        /// Calls `observer` after every claim (for metrics: count, failures, latency).
        on_load(observer: LoadObserver) => observer = Some(observer);
        /// How often the tag list is re-read, and idle buffers looked for (default
        /// `REFRESH_INTERVAL` (60 s)).
        refresh_interval(every: Duration) => refresh = every;
        /// How long a tag's buffer may go unused before it is dropped (default
        /// [`IDLE_BUFFER_TIMEOUT`]; checked every refresh interval).
        idle_timeout(idle: Duration) => idle_timeout = idle;
        /// The ID key of opaque tags (issue 48); without it an opaque tag issues nothing.
        id_key(key: Option<IdKey>) => key = key;
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
            load_waits: AtomicU64::new(0),
            fingerprint: Mutex::new(fingerprint),
            idle_timeout: self.idle_timeout,
            wait: self.wait,
            key: self.key,
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
            key: None,
        }
    }
}
