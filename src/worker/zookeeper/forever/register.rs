//! Finding or registering this identity's forever node (or starting from the cache without
//! ZooKeeper), and waiting out what earlier holders of the worker id issued.

use std::ops::Range;
use std::time::{Duration, Instant};

use zookeeper_client as zkc;

use super::ZkForeverRegistry;
use crate::snowflake::Clock;
use crate::worker::lease::{Record, wait_out};
use crate::worker::node::NodeData;
use crate::worker::registry::average;
use crate::worker::zookeeper::cache::{CacheFile, WorkerCache};
use crate::worker::zookeeper::error::{ZkError, parse_node};
use crate::worker::zookeeper::session::live_peer_offsets;
use crate::worker::zookeeper::session::{ZkSession, parse_forever_child};
use crate::worker::{LEASE_WINDOW_MS, WorkerError};

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
pub(super) struct Registration {
    /// The session it was registered with (`None`: started from the cache, ZooKeeper away).
    pub(super) session: Option<ZkSession>,
    pub(super) worker: u64,
    /// The identity's forever node (`None` without ZooKeeper).
    pub(super) node_path: Option<String>,
    /// The node's (or the cache's) timestamp: this identity issued below it.
    pub(super) node_ms: i64,
    /// What an earlier lease holder of the worker id reserved (`workers/{id}`), 0 if none.
    pub(super) lease_reserved_ms: i64,
}

impl ZkForeverRegistry {
    /// Step 1: the identity's cache file, locked, and what it holds (refused when it belongs
    /// to another name or identity).
    pub(super) fn open_cache(&self) -> Result<(CacheFile, Option<WorkerCache>), WorkerError> {
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
    pub(super) fn start_from_cache(
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
    pub(super) fn register(
        &self,
        s: ZkSession,
        ids: &Range<u64>,
        clock: &dyn Clock,
        lead: i64,
    ) -> Result<Registration, WorkerError> {
        self.opts.check_mark(&s)?;
        let root = self.opts.root();
        s.mkdir(&format!("{root}/forever"))?;
        s.mkdir(&format!("{root}/temporary"))?;
        let temp_path = self.temp_path();
        let data = NodeData::new(&self.opts.identity, clock.now_ms()).to_bytes();
        let temp = self.create_temporary(&s, &temp_path, &data)?;
        let found = match self.own_node(&s)? {
            Some((seq, path)) => self.reuse(&s, seq, path, ids, clock, lead),
            None => self.first_registration(&s, temp.ctime, ids, clock),
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

    pub(super) fn temp_path(&self) -> String {
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
        ids: &Range<u64>,
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
        let worker = self.worker_of(seq, ids, &path)?;
        behind_check(worker, d.timestamp, clock.now_ms(), lead, path.clone())?;
        let reserved = self.exclusive(s, seq, worker, &path)?;
        tracing::info!("reusing worker id {worker} of {path}");
        Ok((worker, path, d.timestamp, reserved))
    }

    /// Registers the identity: its clock compared with the live peers' first, then a new
    /// persistent sequential node whose number is the worker id.
    fn first_registration(
        &self,
        s: &ZkSession,
        temp_created_ms: i64,
        ids: &Range<u64>,
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
        let worker = self.worker_of(seq, ids, &path)?;
        // A node made by hand, or a lease, may already hold the number the sequence gave us.
        let reserved = self.exclusive(s, seq, worker, &path)?;
        tracing::info!("registered worker id {worker} as {path}");
        Ok((worker, path, now, reserved))
    }

    /// The worker id of forever node `path` numbered `seq` ([`ZkOptions::forever_worker`]),
    /// refused beyond `ids` (the region's slice, or the layout's range).
    ///
    /// [`ZkOptions::forever_worker`]: crate::worker::zookeeper::session::ZkOptions::forever_worker
    fn worker_of(&self, seq: u64, ids: &Range<u64>, path: &str) -> Result<u64, WorkerError> {
        let worker = self.opts.forever_worker(seq)?;
        self.opts.scope.refuse_beyond(worker, ids, || {
            format!(
                "forever node {path}: number {seq} past the {} worker ids of the region's slice",
                ids.end - ids.start
            )
        })?;
        check_range(worker, ids.end.saturating_sub(1), path)?;
        Ok(worker)
    }

    /// Never share a worker id: a tree written by hand may give another identity the same
    /// number, and a lease on the same name (`leases/{id}`) may hold it. Returns what an
    /// earlier lease holder of the id reserved (`workers/{id}`).
    fn exclusive(
        &self,
        s: &ZkSession,
        seq: u64,
        worker: u64,
        path: &str,
    ) -> Result<i64, WorkerError> {
        let root = self.opts.root();
        let id_text = self.opts.identity.to_string();
        let siblings = s.children(&format!("{root}/forever"))?;
        if let Some(other) = siblings
            .iter()
            .find(|c| parse_forever_child(c).is_some_and(|(who, n)| n == seq && who != id_text))
        {
            return Err(WorkerError::WorkerIdShared {
                worker,
                mine: path.to_string(),
                other: format!("another identity ({root}/forever/{other})"),
            });
        }
        let lease = format!("{root}/leases/{worker}");
        if s.get(&lease)?.is_some() {
            return Err(WorkerError::WorkerIdShared {
                worker,
                mine: path.to_string(),
                other: format!("a lease on the same name ({lease})"),
            });
        }
        let workers = format!("{root}/workers/{worker}");
        Ok(match s.get(&workers)? {
            Some((bytes, _)) => parse_node(&workers, &bytes)?.reserved_until.unwrap_or(0),
            None => 0,
        })
    }

    /// Step 3: waits out what was recorded before on this worker id (an earlier lease holder's
    /// reservation, this host's cache) with the lease protocol's one wait policy; returns the
    /// time the generator resumes after and what the cache says was issued below.
    pub(super) fn wait_out_predecessors(
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
pub(super) fn check_range(worker: u64, max: u64, source_of: &str) -> Result<(), WorkerError> {
    if worker > max {
        return Err(WorkerError::OutOfRange {
            worker,
            max,
            source_of: source_of.to_string(),
        });
    }
    Ok(())
}
