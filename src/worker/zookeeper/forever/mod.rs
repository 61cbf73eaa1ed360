//! Leaf's own ZooKeeper tree ("forever" mode): one worker id per `ip:port`, never recycled.
//!
//! - `/snowflake/{name}/forever/{ip}:{port}-{seq:010}`: persistent sequential; the sequence number
//!   is the worker id; data `{"ip","port","timestamp"}` re-written every 3 s.
//! - `/snowflake/{name}/temporary/{ip}:{port}`: ephemeral while a process runs (the design's
//!   `leaf_temporary`), so a second live process with the same identity refuses to start.
//! - A local cache file ([`super::cache`]) lets a known identity start while ZooKeeper is down.
//!
//! With a lead over the clock ([`crate::worker::IssueOptions::max_lead_ms`]) the node's timestamp
//! is raised to cover every time reserved ahead of the clock before IDs at those times are issued, so Leaf's
//! own start-up check on this identity (timestamp ahead of its clock: refuse) and ours both hold
//! back until the clock has passed them. Without ZooKeeper the lead is not used.

use super::error::{ZkError, parse_node};
use crate::worker::IssueOptions;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zookeeper_client as zkc;

use super::admin::{average, live_peer_offsets};
use super::cache::{CacheFile, WorkerCache};
use super::session::{ZkOptions, ZkSession, parse_forever_child};
use crate::snowflake::{Clock, SnowflakeError, TimeFence};
use crate::worker::lease::{Record, wait_out};
use crate::worker::node::NodeData;
use crate::worker::{
    LEASE_WINDOW_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease, WorkerRegistry,
};

/// Leaf-compatible registry: reuses this identity's node or creates one.
pub struct ZkForeverRegistry {
    opts: ZkOptions,
}

impl ZkForeverRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: ZkOptions) -> ZkForeverRegistry {
        ZkForeverRegistry { opts }
    }

    /// The options it was made with.
    pub fn options(&self) -> &ZkOptions {
        &self.opts
    }
}

struct Inner {
    worker: u64,
    identity: crate::worker::Identity,
    node_path: Option<String>,
    temp_path: String,
    session: Mutex<Option<ZkSession>>,
    cache_file: CacheFile,
    cache: Mutex<WorkerCache>,
    clock: Arc<dyn Clock>,
    finished: Mutex<bool>,
    opts: ZkOptions,
    /// Set when, after a lost session, another process turned out to hold this identity.
    conflict: std::sync::atomic::AtomicBool,
    /// The lead over the clock the generator may use (0: none, Leaf's behaviour).
    max_lead_ms: i64,
    /// The node's timestamp is never written below this (the times issued or reserved ahead of
    /// the clock, and what the node held at start); changed only under the session lock.
    node_floor: AtomicI64,
}

/// A worker id held in forever mode.
pub struct ZkForeverLease {
    inner: Arc<Inner>,
    resume_after_ms: Option<i64>,
    stop: Mutex<Option<Sender<()>>>,
    reporter: Mutex<Option<JoinHandle<()>>>,
}

/// Refuses a recorded time ahead of the clock by more than the lead (Leaf's check, lead 0).
fn behind_check(
    worker: u64,
    recorded_ms: i64,
    now_ms: i64,
    max_lead_ms: i64,
    source_of: String,
) -> Result<(), WorkerError> {
    if recorded_ms > now_ms.saturating_add(max_lead_ms) {
        return Err(WorkerError::ClockBehind {
            worker,
            recorded_ms,
            behind_ms: recorded_ms - now_ms,
            source_of,
        });
    }
    Ok(())
}

impl ZkForeverRegistry {
    /// Waits for a crashed predecessor's ephemeral node to go. ZooKeeper removes it once the
    /// predecessor's session expires: its timeout after the last ping, checked on the server's
    /// tick (at most half a session timeout, since sessions last at least two ticks). So the
    /// wait is one and a half session timeouts and a second before a live holder is assumed.
    fn create_temporary(
        &self,
        s: &ZkSession,
        path: &str,
        data: &[u8],
    ) -> Result<zkc::Stat, WorkerError> {
        let timeout = self.opts.session_timeout.max(s.negotiated_timeout());
        let deadline = Instant::now() + timeout * 3 / 2 + Duration::from_secs(1);
        loop {
            if let Some((_, stat)) = s.create(path, data, zkc::CreateMode::Ephemeral)? {
                return Ok(stat);
            }
            if Instant::now() >= deadline {
                return Err(WorkerError::IdentityInUse {
                    identity: self.opts.identity.to_string(),
                    path: format!("its ephemeral node {path} exists"),
                });
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// What finding or registering this identity's node gave.
struct Registration {
    /// The session it was registered with (`None`: started from the cache, ZooKeeper away).
    session: Option<ZkSession>,
    worker: u64,
    /// The identity's forever node (`None` without ZooKeeper).
    node_path: Option<String>,
    /// The node's (or the cache's) timestamp: this identity issued below it.
    node_ms: i64,
    /// What an earlier lease holder of the worker id reserved (`workers/{id}`), 0 if none.
    lease_reserved_ms: i64,
}

impl ZkForeverRegistry {
    /// Step 1: the identity's cache file, locked, and what it holds (refused when it belongs
    /// to another name or identity).
    fn open_cache(&self) -> Result<(CacheFile, Option<WorkerCache>), WorkerError> {
        let o = &self.opts;
        let cache_file = CacheFile::lock(&o.state_dir, &o.name, &o.identity)?;
        let cached = cache_file.read()?;
        if let Some(c) = &cached
            && (c.name != o.name || c.identity != o.identity.to_string())
        {
            return Err(ZkError::BadNode {
                path: cache_file.path().display().to_string(),
                reason: format!("cache belongs to {} / {}", c.name, c.identity),
            }
            .into());
        }
        Ok((cache_file, cached))
    }

    /// Step 2a, without ZooKeeper: the cached worker id, if the clock is not behind its report
    /// (Leaf's weak dependency, with NotFound9's check).
    fn start_from_cache(
        &self,
        cache_file: &CacheFile,
        cached: Option<&WorkerCache>,
        clock: &dyn Clock,
        lead: i64,
        (hosts, reason): (String, String),
    ) -> Result<Registration, WorkerError> {
        let Some(c) = cached else {
            return Err(ZkError::NoCache {
                identity: self.opts.identity.to_string(),
                path: format!(
                    "{} (ZooKeeper at {hosts}: {reason})",
                    cache_file.path().display()
                ),
            }
            .into());
        };
        tracing::warn!(
            "ZooKeeper at {hosts} is unreachable ({reason}); using cached worker id {} from {}",
            c.worker_id,
            cache_file.path().display()
        );
        behind_check(
            c.worker_id,
            c.timestamp,
            clock.now_ms(),
            lead,
            format!("the cache {}", cache_file.path().display()),
        )?;
        Ok(Registration {
            session: None,
            worker: c.worker_id,
            node_path: None,
            node_ms: c.timestamp,
            lease_reserved_ms: 0,
        })
    }

    /// Step 2b, with ZooKeeper: the identity's `temporary` node (one live process per
    /// identity), then its forever node reused or registered. The temporary node goes again if
    /// anything after it fails.
    fn register(
        &self,
        s: ZkSession,
        max: u64,
        clock: &dyn Clock,
        lead: i64,
    ) -> Result<Registration, WorkerError> {
        let root = self.opts.root();
        s.mkdir(&format!("{root}/forever"))?;
        s.mkdir(&format!("{root}/temporary"))?;
        let temp_path = self.temp_path();
        let data = NodeData::new(&self.opts.identity, clock.now_ms()).to_bytes();
        let temp = self.create_temporary(&s, &temp_path, &data)?;
        let found = match self.own_node(&s)? {
            Some((seq, path)) => self.reuse(&s, seq, path, max, clock, lead),
            None => self.first_registration(&s, temp.ctime, max, clock),
        };
        match found {
            Ok((worker, path, node_ms, lease_reserved_ms)) => Ok(Registration {
                session: Some(s),
                worker,
                node_path: Some(path),
                node_ms,
                lease_reserved_ms,
            }),
            Err(e) => {
                let _ = s.delete(&temp_path, None);
                Err(e)
            }
        }
    }

    fn temp_path(&self) -> String {
        format!("{}/temporary/{}", self.opts.root(), self.opts.identity)
    }

    /// This identity's forever node with the lowest sequence number, if it has one.
    fn own_node(&self, s: &ZkSession) -> Result<Option<(u64, String)>, WorkerError> {
        let root = self.opts.root();
        let id_text = self.opts.identity.to_string();
        let mut mine: Vec<(u64, String)> = s
            .children(&format!("{root}/forever"))?
            .iter()
            .filter_map(|c| {
                let (who, seq) = parse_forever_child(c)?;
                (who == id_text).then(|| (seq, format!("{root}/forever/{c}")))
            })
            .collect();
        mine.sort();
        Ok(mine.into_iter().next())
    }

    /// Reuses the identity's node: refused when its timestamp is ahead of the clock (Leaf's
    /// check), when another claim holds the id, or when the id is out of the layout's range.
    fn reuse(
        &self,
        s: &ZkSession,
        seq: u64,
        path: String,
        max: u64,
        clock: &dyn Clock,
        lead: i64,
    ) -> Result<(u64, String, i64, i64), WorkerError> {
        let Some((bytes, _)) = s.get(&path)? else {
            return Err(ZkError::BadNode {
                path,
                reason: "it vanished while being read".into(),
            }
            .into());
        };
        let d = parse_node(&path, &bytes)?;
        behind_check(seq, d.timestamp, clock.now_ms(), lead, path.clone())?;
        let reserved = self.exclusive(s, seq, &path)?;
        check_range(seq, max, &path)?;
        tracing::info!("reusing worker id {seq} of {path}");
        Ok((seq, path, d.timestamp, reserved))
    }

    /// Registers the identity: its clock compared with the live peers' first, then a new
    /// persistent sequential node whose number is the worker id.
    fn first_registration(
        &self,
        s: &ZkSession,
        temp_created_ms: i64,
        max: u64,
        clock: &dyn Clock,
    ) -> Result<(u64, String, i64, i64), WorkerError> {
        let o = &self.opts;
        let root = o.root();
        let id_text = o.identity.to_string();
        let peers = live_peer_offsets(s, &root, temp_created_ms, Some(&id_text))?;
        if let Some(avg) = average(&peers) {
            let (before, zk_ms, after) = s.server_time(&root, || clock.now_ms())?;
            let ours = before + (after - before) / 2 - zk_ms;
            let diff = ours - avg;
            if diff.abs() > o.max_clock_skew_ms {
                return Err(WorkerError::ClockSkew {
                    diff_ms: diff,
                    peers: peers.len(),
                    max_ms: o.max_clock_skew_ms,
                });
            }
        }
        let prefix = format!("{root}/forever/{id_text}-");
        let now = clock.now_ms();
        let created = s.create(
            &prefix,
            &NodeData::new(&o.identity, now).to_bytes(),
            zkc::CreateMode::PersistentSequential,
        )?;
        let Some((path, _)) = created else {
            return Err(ZkError::BadNode {
                path: prefix,
                reason: "sequential create reported an existing node".into(),
            }
            .into());
        };
        let seq = parse_forever_child(path.rsplit('/').next().unwrap_or(""))
            .map(|(_, seq)| seq)
            .ok_or_else(|| ZkError::BadNode {
                path: path.clone(),
                reason: "no sequence number".into(),
            })?;
        check_range(seq, max, &path)?;
        // A node made by hand, or a lease, may already hold the number the sequence gave us.
        let reserved = self.exclusive(s, seq, &path)?;
        tracing::info!("registered worker id {seq} as {path}");
        Ok((seq, path, now, reserved))
    }

    /// Never share a worker id: a tree written by hand may give another identity the same
    /// number, and a lease on the same name (`leases/{id}`) may hold it. Returns what an
    /// earlier lease holder of the id reserved (`workers/{id}`).
    fn exclusive(&self, s: &ZkSession, seq: u64, path: &str) -> Result<i64, WorkerError> {
        let root = self.opts.root();
        let id_text = self.opts.identity.to_string();
        let siblings = s.children(&format!("{root}/forever"))?;
        if let Some(other) = siblings
            .iter()
            .find(|c| parse_forever_child(c).is_some_and(|(who, n)| n == seq && who != id_text))
        {
            return Err(WorkerError::WorkerIdShared {
                worker: seq,
                mine: path.to_string(),
                other: format!("another identity ({root}/forever/{other})"),
            });
        }
        let lease = format!("{root}/leases/{seq}");
        if s.get(&lease)?.is_some() {
            return Err(WorkerError::WorkerIdShared {
                worker: seq,
                mine: path.to_string(),
                other: format!("a lease on the same name ({lease})"),
            });
        }
        let workers = format!("{root}/workers/{seq}");
        Ok(match s.get(&workers)? {
            Some((bytes, _)) => parse_node(&workers, &bytes)?.reserved_until.unwrap_or(0),
            None => 0,
        })
    }

    /// Step 3: waits out what was recorded before on this worker id (an earlier lease holder's
    /// reservation, this host's cache) with the lease protocol's one wait policy; returns the
    /// time the generator resumes after and what the cache says was issued below.
    fn wait_out_predecessors(
        &self,
        reg: &Registration,
        cached: Option<&WorkerCache>,
        cache_file: &CacheFile,
        clock: &dyn Clock,
        lead: i64,
    ) -> Result<(Option<i64>, i64), WorkerError> {
        let worker = reg.worker;
        let mut resume_after = (reg.node_ms > 0).then_some(reg.node_ms);
        let recorded_before = |until_ms: i64, source: &dyn Fn() -> String| {
            let record = Record {
                reserved_until: until_ms,
                version: 0,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            };
            wait_out(
                clock,
                worker,
                &record,
                lead,
                LEASE_WINDOW_MS,
                source,
                |now| WorkerError::ClockBehind {
                    worker,
                    recorded_ms: until_ms,
                    behind_ms: until_ms - now,
                    source_of: source(),
                },
            )
        };
        if reg.lease_reserved_ms > 0 {
            recorded_before(reg.lease_reserved_ms, &|| {
                format!("reserved_until of {}/workers/{worker}", self.opts.root())
            })?;
            resume_after = Some(resume_after.unwrap_or(0).max(reg.lease_reserved_ms - 1));
        }
        let mut issued_below = 0;
        if let Some(c) = cached.filter(|c| c.worker_id == worker) {
            issued_below = c.issued_below_ms;
            recorded_before(c.issued_below_ms, &|| {
                format!("the cache {}", cache_file.path().display())
            })?;
            if c.issued_below_ms > 0 {
                resume_after = Some(resume_after.unwrap_or(0).max(c.issued_below_ms - 1));
            }
        }
        Ok((resume_after, issued_below))
    }
}

/// Refuses a worker id beyond the layout's range.
fn check_range(worker: u64, max: u64, source_of: &str) -> Result<(), WorkerError> {
    if worker > max {
        return Err(WorkerError::OutOfRange {
            worker,
            max,
            source_of: source_of.to_string(),
        });
    }
    Ok(())
}

impl WorkerRegistry for ZkForeverRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let (layout, clock, max_lead_ms) =
            (&options.layout, options.clock.clone(), options.max_lead_ms);
        let lead = max_lead_ms.min(i64::MAX as u64) as i64;
        let max = layout.max_worker();
        let (cache_file, cached) = self.open_cache()?;
        let reg = match ZkSession::connect(&self.opts) {
            Ok(s) => self.register(s, max, clock.as_ref(), lead)?,
            Err(e) => match e.store::<ZkError>() {
                Some(ZkError::Unreachable { hosts, reason }) => {
                    let why = (hosts.clone(), reason.clone());
                    self.start_from_cache(&cache_file, cached.as_ref(), clock.as_ref(), lead, why)?
                }
                _ => return Err(e),
            },
        };
        check_range(reg.worker, max, &cache_file.path().display().to_string())?;
        let (resume_after, issued_below) =
            self.wait_out_predecessors(&reg, cached.as_ref(), &cache_file, clock.as_ref(), lead)?;
        // Step 4: the cache records the worker id before any ID is issued with it.
        let cache = WorkerCache {
            name: self.opts.name.clone(),
            identity: self.opts.identity.to_string(),
            worker_id: reg.worker,
            timestamp: reg.node_ms.max(clock.now_ms()),
            issued_below_ms: issued_below,
            clean: cached
                .as_ref()
                .is_some_and(|c| c.clean && c.worker_id == reg.worker),
        };
        cache_file.write(&cache)?;
        // Step 5: the lease, with its reporter thread.
        let inner = Arc::new(Inner {
            worker: reg.worker,
            identity: self.opts.identity.clone(),
            node_path: reg.node_path,
            temp_path: self.temp_path(),
            session: Mutex::new(reg.session),
            cache_file,
            cache: Mutex::new(cache),
            clock,
            finished: Mutex::new(false),
            opts: self.opts.clone(),
            conflict: std::sync::atomic::AtomicBool::new(false),
            max_lead_ms: lead,
            node_floor: AtomicI64::new(reg.node_ms),
        });
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
        Ok(Arc::new(ZkForeverLease {
            inner,
            resume_after_ms: resume_after,
            stop: Mutex::new(Some(tx)),
            reporter: Mutex::new(reporter),
        }))
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
