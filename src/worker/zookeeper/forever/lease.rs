//! A worker id held in forever mode: Leaf's report every 3 s, the node's timestamp raised to
//! cover a lead over the clock, and the session renewed when it is lost.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use zookeeper_client as zkc;

use crate::snowflake::{Clock, SnowflakeError, TimeFence};
use crate::worker::node::NodeData;
use crate::worker::zookeeper::cache::{CacheFile, WorkerCache};
use crate::worker::zookeeper::session::{ZkOptions, ZkSession};
use crate::worker::{LEASE_WINDOW_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease};

pub(super) struct Inner {
    pub(super) worker: u64,
    pub(super) identity: crate::worker::Identity,
    pub(super) node_path: Option<String>,
    pub(super) temp_path: String,
    pub(super) session: Mutex<Option<ZkSession>>,
    pub(super) cache_file: CacheFile,
    pub(super) cache: Mutex<WorkerCache>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) finished: Mutex<bool>,
    pub(super) opts: ZkOptions,
    /// Set when, after a lost session, another process turned out to hold this identity.
    pub(super) conflict: std::sync::atomic::AtomicBool,
    /// The lead over the clock the generator may use (0: none, Leaf's behaviour).
    pub(super) max_lead_ms: i64,
    /// The node's timestamp is never written below this (the times issued or reserved ahead of
    /// the clock, and what the node held at start); changed only under the session lock.
    pub(super) node_floor: AtomicI64,
}

/// A worker id held in forever mode.
pub struct ZkForeverLease {
    inner: Arc<Inner>,
    resume_after_ms: Option<i64>,
    stop: Mutex<Option<Sender<()>>>,
    reporter: Mutex<Option<JoinHandle<()>>>,
}

impl ZkForeverLease {
    /// The lease on `inner`, with its reporter thread (Leaf's report every 3 s).
    pub(super) fn start(inner: Arc<Inner>, resume_after_ms: Option<i64>) -> ZkForeverLease {
        let (tx, rx) = mpsc::channel::<()>();
        let reporter_inner = inner.clone();
        let reporter = std::thread::Builder::new()
            .name("leafctl-report".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) =
                    rx.recv_timeout(Duration::from_millis(REPORT_INTERVAL_MS as u64))
                {
                    reporter_inner.report();
                }
            })
            .ok();
        ZkForeverLease {
            inner,
            resume_after_ms,
            stop: Mutex::new(Some(tx)),
            reporter: Mutex::new(reporter),
        }
    }
}

impl Inner {
    /// Leaf's scheduled report: the node's timestamp (skipped if the clock went back) and the
    /// cache.
    fn report(&self) {
        let now = self.clock.now_ms();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if now < cache.timestamp {
            if now.saturating_add(self.max_lead_ms) < cache.timestamp {
                tracing::warn!("the clock is behind the last report; not reporting");
                return;
            }
            // A run resumed within its lead: the recorded time stays until the clock passes it.
        } else {
            cache.timestamp = now;
            if let Err(e) = self.cache_file.write(&cache) {
                tracing::warn!("cannot update the worker cache: {e}");
            }
        }
        drop(cache);
        self.renew_session();
        if let Err(e) = self.write_node(now, false) {
            tracing::warn!("cannot report to ZooKeeper: {e}");
        }
    }

    /// After the session expired (ZooKeeper was away too long), registers again with a new
    /// session. If another process took this identity meanwhile, issuing stops.
    fn renew_session(&self) {
        if self.node_path.is_none() {
            return; // started from the cache: ZooKeeper was never part of this run
        }
        let mut guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        if !guard.as_ref().is_some_and(ZkSession::terminated) {
            return;
        }
        let Ok(fresh) = ZkSession::connect(&self.opts) else {
            return; // still away; the next report tries again
        };
        let data = NodeData::new(&self.identity, self.clock.now_ms()).to_bytes();
        match fresh.create(&self.temp_path, &data, zkc::CreateMode::Ephemeral) {
            Ok(Some(_)) => {
                tracing::info!("registered again with ZooKeeper after the session expired");
                *guard = Some(fresh);
            }
            Ok(None) => {
                // Ours, from the expired session, until ZooKeeper gets round to removing it
                // (it may not have yet when we learn of the expiry): try again next report.
                let old = guard.as_ref().map(ZkSession::session_id);
                match fresh.get(&self.temp_path) {
                    Ok(Some((_, stat))) if Some(stat.ephemeral_owner) != old => {
                        tracing::error!(
                            "another process registered {} while our session was lost; stopping",
                            self.identity
                        );
                        self.conflict
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    Ok(_) => tracing::info!(
                        "{} still holds the expired session's node; registering again at the next report",
                        self.temp_path
                    ),
                    Err(e) => tracing::warn!("cannot register again with ZooKeeper: {e}"),
                }
            }
            Err(e) => tracing::warn!("cannot register again with ZooKeeper: {e}"),
        }
    }

    /// Writes the node's timestamp: `timestamp`, but never below the floor (times reserved
    /// ahead of the clock) unless `exact` (a clean finish: `timestamp` covers every issued time),
    /// which also lowers the floor to it. Returns the timestamp written, or `None` without a
    /// connected session (nothing written).
    fn write_node(&self, timestamp: i64, exact: bool) -> Result<Option<i64>, WorkerError> {
        let guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let (Some(s), Some(path)) = (guard.as_ref(), &self.node_path) else {
            return Ok(None);
        };
        if !s.connected() {
            return Ok(None);
        }
        let floor = self.node_floor.load(Ordering::SeqCst);
        let ts = if exact {
            timestamp
        } else {
            timestamp.max(floor)
        };
        let data = NodeData::new(&self.identity, ts).to_bytes();
        s.set(path, &data, None)?;
        if exact || ts > floor {
            self.node_floor.store(ts, Ordering::SeqCst);
        }
        Ok(Some(ts))
    }
}

impl ZkForeverLease {
    fn given_back(&self) -> Option<SnowflakeError> {
        let finished = *self
            .inner
            .finished
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        finished.then(|| SnowflakeError::FenceFailed("the worker id was given back".into()))
    }

    /// What the cache file already reserves past `unix_ms`, if it does (the one rule both
    /// extensions follow).
    fn cached_reservation(cache: &WorkerCache, unix_ms: i64) -> Option<i64> {
        (cache.issued_below_ms > unix_ms && !cache.clean).then_some(cache.issued_below_ms)
    }
}

impl TimeFence for ZkForeverLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        if let Some(e) = self.given_back() {
            return Err(e);
        }
        let mut cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
        let reserved = match Self::cached_reservation(&cache, unix_ms) {
            Some(reserved) => reserved,
            None => {
                let fence = unix_ms.saturating_add(LEASE_WINDOW_MS);
                let mut next = cache.clone();
                next.issued_below_ms = fence;
                next.clean = false;
                self.inner
                    .cache_file
                    .write(&next)
                    .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
                *cache = next;
                fence
            }
        };
        let now = self.inner.clock.now_ms();
        if self.inner.max_lead_ms == 0 && unix_ms <= now {
            // Leaf's behaviour: the node's timestamp is the last report of the clock.
            return Ok(reserved);
        }
        // With a lead the node must cover what may be issued ahead of the clock first. When
        // ZooKeeper cannot record it, times ahead of the clock wait for the clock.
        let mut covered = self.inner.node_floor.load(Ordering::SeqCst);
        if covered < reserved - 1 {
            match self.inner.write_node(reserved - 1, false) {
                Ok(Some(ts)) => covered = ts,
                Ok(None) => {}
                Err(e) => tracing::debug!("cannot record the reservation in ZooKeeper: {e}"),
            }
        }
        Ok(reserved.min(covered.max(now).saturating_add(1)))
    }

    /// Without a lead, for a time the clock has reached, inside what the cache file reserves:
    /// the answer `extend` gives, from memory. Everything else may write the file or the node.
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        if let Some(e) = self.given_back() {
            return Some(Err(e));
        }
        if self.inner.max_lead_ms != 0 || unix_ms > self.inner.clock.now_ms() {
            return None;
        }
        let cache = self.inner.cache.try_lock().ok()?;
        Self::cached_reservation(&cache, unix_ms).map(Ok)
    }
}

impl WorkerLease for ZkForeverLease {
    fn worker(&self) -> u64 {
        self.inner.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        if self
            .inner
            .conflict
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err(WorkerError::IdentityInUse {
                identity: self.inner.identity.to_string(),
                path: format!(
                    "another process created {} while our session was lost",
                    self.inner.temp_path
                ),
            });
        }
        if *self
            .inner
            .finished
            .lock()
            .unwrap_or_else(|p| p.into_inner())
        {
            return Err(WorkerError::Stopped {
                worker: self.inner.worker,
                reason: "the worker id was given back".into(),
            });
        }
        Ok(())
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        {
            let mut done = self
                .inner
                .finished
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if *done {
                return Ok(());
            }
            *done = true;
        }
        self.stop_reporter();
        let now = self.inner.clock.now_ms();
        let mut cache = self.inner.cache.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = cache.clone();
        // Nothing issued in this run: the previous bound (maybe a reservation) stays.
        if let Some(t) = last_issued_ms {
            next.issued_below_ms = t + 1;
        }
        next.clean = last_issued_ms.is_some() || next.clean;
        next.timestamp = next.timestamp.max(now).max(last_issued_ms.unwrap_or(0));
        let written = self.inner.cache_file.write(&next);
        if written.is_ok() {
            *cache = next.clone();
        }
        drop(cache);
        // The exact last time replaces any reservation ahead of it; with nothing issued, the
        // node keeps what it holds.
        if let Err(e) = self
            .inner
            .write_node(next.timestamp, last_issued_ms.is_some())
        {
            tracing::warn!("cannot report to ZooKeeper: {e}");
        }
        self.close_session();
        written
    }

    fn max_lead_ms(&self) -> u64 {
        self.inner.max_lead_ms as u64
    }

    fn describe(&self) -> String {
        match &self.inner.node_path {
            Some(p) => format!("ZooKeeper node {p}"),
            None => format!(
                "cached worker id (ZooKeeper down), {}",
                self.inner.cache_file.path().display()
            ),
        }
    }
}

impl ZkForeverLease {
    fn stop_reporter(&self) {
        self.stop.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self
            .reporter
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = h.join();
        }
    }

    fn close_session(&self) {
        let taken = self
            .inner
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut s) = taken {
            let _ = s.delete(&self.inner.temp_path, None);
            s.close();
        }
    }
}

impl Drop for ZkForeverLease {
    fn drop(&mut self) {
        *self
            .inner
            .finished
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = true;
        self.stop_reporter();
        self.close_session();
    }
}
