//! Leased, recyclable worker ids in ZooKeeper (Leaf issue #84).
//!
//! - `/snowflake/{name}/leases/{id}`: ephemeral; whoever created it holds worker id `id`.
//! - `/snowflake/{name}/workers/{id}`: persistent; `reserved_until` (ms) bounds the times of every
//!   ID ever issued with `id`.
//!
//! A holder issues only below `reserved_until` and writes a later bound (version-checked, so two
//! writers can never both succeed from the same state) before it issues past it. A new holder
//! waits until its own clock passes the previous bound. Issuing stops as soon as the client sees
//! the session disconnected, long before the session can expire and free the lease.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use zookeeper_client as zkc;

use super::zk::{NodeData, ZkOptions, ZkSession, state_name};
use super::{LEASE_WINDOW_MS, MAX_RESERVATION_WAIT_MS, WorkerError, WorkerLease, WorkerRegistry};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};

/// Leases the lowest free worker id under `/snowflake/{name}/leases`.
pub struct ZkLeaseRegistry {
    opts: ZkOptions,
}

impl ZkLeaseRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: ZkOptions) -> ZkLeaseRegistry {
        ZkLeaseRegistry { opts }
    }
}

struct LeaseState {
    /// The workers node's version our last write produced.
    version: i32,
    /// What ZooKeeper holds as `reserved_until`.
    reserved_until: i64,
    /// Set once the lease is given back.
    finished: bool,
}

/// A worker id leased through an ephemeral node.
pub struct ZkWorkerLease {
    session: Mutex<Option<ZkSession>>,
    state_flag: Arc<AtomicU8>,
    worker: u64,
    lease_path: String,
    worker_path: String,
    data: NodeData,
    clock: Arc<dyn Clock>,
    resume_after_ms: Option<i64>,
    state: Mutex<LeaseState>,
}

fn read_reserved(s: &ZkSession, path: &str) -> Result<Option<(i64, i32)>, WorkerError> {
    match s.get(path)? {
        None => Ok(None),
        Some((bytes, stat)) => {
            let d = NodeData::parse(path, &bytes)?;
            Ok(Some((d.reserved_until.unwrap_or(0), stat.version)))
        }
    }
}

impl WorkerRegistry for ZkLeaseRegistry {
    fn acquire(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let session = ZkSession::connect(&self.opts)?;
        let root = self.opts.root();
        let leases = format!("{root}/leases");
        let workers = format!("{root}/workers");
        session.mkdir(&leases)?;
        session.mkdir(&workers)?;
        let data = NodeData::new(&self.opts.identity, clock.now_ms());
        let max = layout.max_worker();

        // Lowest free id: skip the ones listed as held, try to create the rest in order.
        let held: std::collections::BTreeSet<u64> = session
            .children(&leases)?
            .iter()
            .filter_map(|c| c.parse().ok())
            .collect();
        let mut worker = None;
        for id in (0..=max).filter(|id| !held.contains(id)) {
            let path = format!("{leases}/{id}");
            if session
                .create(&path, &data.to_bytes(), zkc::CreateMode::Ephemeral)?
                .is_some()
            {
                worker = Some(id);
                break;
            }
        }
        let Some(worker) = worker else {
            return Err(WorkerError::NoFreeWorker {
                name: self.opts.name.clone(),
                count: max + 1,
            });
        };
        let lease_path = format!("{leases}/{worker}");
        let worker_path = format!("{workers}/{worker}");

        // From here on a failure must give the lease back; ZkWorkerLease's Drop does that.
        let mut lease = ZkWorkerLease {
            state_flag: session.state_flag(),
            session: Mutex::new(Some(session)),
            worker,
            lease_path,
            worker_path,
            data,
            clock: clock.clone(),
            resume_after_ms: None,
            state: Mutex::new(LeaseState {
                version: -1,
                reserved_until: 0,
                finished: false,
            }),
        };
        let (reserved, version) = {
            let guard = lease.session.lock().unwrap_or_else(|p| p.into_inner());
            let s = guard.as_ref().ok_or(WorkerError::Stopped {
                worker,
                reason: "session closed".into(),
            })?;
            match read_reserved(s, &lease.worker_path)? {
                Some(found) => found,
                None => {
                    let mut d = lease.data.clone();
                    d.reserved_until = Some(0);
                    match s.create(
                        &lease.worker_path,
                        &d.to_bytes(),
                        zkc::CreateMode::Persistent,
                    )? {
                        Some((_, stat)) => (0, stat.version),
                        None => read_reserved(s, &lease.worker_path)?.unwrap_or((0, 0)),
                    }
                }
            }
        };
        let now = clock.now_ms();
        if reserved > now {
            let behind = reserved - now;
            if behind > MAX_RESERVATION_WAIT_MS {
                return Err(WorkerError::ClockBehind {
                    worker,
                    recorded_ms: reserved,
                    behind_ms: behind,
                    source_of: format!("reserved_until of {}", lease.worker_path),
                });
            }
            tracing::info!(
                "worker id {worker}: waiting {behind} ms for the previous holder's reservation to pass"
            );
            clock.sleep_until_ms(reserved);
        }
        lease.resume_after_ms = (reserved > 0).then(|| reserved - 1);
        {
            let mut st = lease.state.lock().unwrap_or_else(|p| p.into_inner());
            st.version = version;
            st.reserved_until = reserved;
        }
        tracing::info!("leased worker id {worker} ({})", lease.lease_path);
        Ok(Arc::new(lease))
    }
}

impl ZkWorkerLease {
    fn write_reserved(&self, st: &mut LeaseState, reserved_until: i64) -> Result<(), WorkerError> {
        let guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let s = guard.as_ref().ok_or(WorkerError::Stopped {
            worker: self.worker,
            reason: "the lease was given back".into(),
        })?;
        let mut d = self.data.clone();
        d.timestamp = self.clock.now_ms();
        d.reserved_until = Some(reserved_until);
        let stat = s.set(&self.worker_path, &d.to_bytes(), Some(st.version))?;
        st.version = stat.version;
        st.reserved_until = reserved_until;
        Ok(())
    }

    fn session_check(&self) -> Result<(), WorkerError> {
        let code = self.state_flag.load(Ordering::SeqCst);
        if code != 0 {
            return Err(WorkerError::SessionLost {
                worker: self.worker,
                state: state_name(code).to_string(),
            });
        }
        Ok(())
    }

    fn release(&self) {
        let session = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut s) = session {
            if let Err(e) = s.delete(&self.lease_path, None) {
                tracing::warn!("could not delete {}: {e}", self.lease_path);
            }
            s.close();
        }
    }
}

impl TimeFence for ZkWorkerLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.finished {
            return Err(SnowflakeError::FenceFailed(
                "the lease was given back".into(),
            ));
        }
        self.session_check()
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        if st.reserved_until > unix_ms {
            return Ok(st.reserved_until);
        }
        let fence = unix_ms.saturating_add(LEASE_WINDOW_MS);
        self.write_reserved(&mut st, fence)
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        // The write may have raced a session loss; it succeeded, so the session was alive then.
        Ok(fence)
    }
}

impl WorkerLease for ZkWorkerLease {
    fn worker(&self) -> u64 {
        self.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        if self
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished
        {
            return Err(WorkerError::Stopped {
                worker: self.worker,
                reason: "the lease was given back".into(),
            });
        }
        self.session_check()
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.finished {
            return Ok(());
        }
        st.finished = true;
        // Lower the bound to the exact last time, so the next holder need not wait out the
        // unused part of the reservation. Never raise it here: nothing was issued above it.
        let result = match last_issued_ms {
            Some(t) if t + 1 < st.reserved_until && self.session_check().is_ok() => {
                self.write_reserved(&mut st, t + 1)
            }
            _ => Ok(()),
        };
        drop(st);
        self.release();
        result
    }

    fn describe(&self) -> String {
        format!("ZooKeeper lease {}", self.lease_path)
    }
}

impl Drop for ZkWorkerLease {
    fn drop(&mut self) {
        // Without finish() the reservation stays as written: it covers everything issued.
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished = true;
        self.release();
    }
}
