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
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use zookeeper_client as zkc;

use super::zk::{NodeData, ZkOptions, ZkSession, parse_forever_child, state_name};
use super::{LEASE_WINDOW_MS, WorkerError, WorkerLease, WorkerRegistry};
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
    /// The latest time the generator asked to issue at (for renewing ahead of need).
    last_demand_ms: i64,
}

/// A worker id leased through an ephemeral node. A background thread renews `reserved_until`
/// ahead of need while the generator is busy, so issuing rarely waits for ZooKeeper.
pub struct ZkWorkerLease {
    core: Arc<LeaseCore>,
    renewer: Mutex<Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>>,
}

/// The lease itself, shared with the renewer thread.
struct LeaseCore {
    given_back: std::sync::atomic::AtomicBool,
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
        self.acquire_ahead(layout, clock, 0)
    }

    fn acquire_ahead(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let session = ZkSession::connect(&self.opts)?;
        let root = self.opts.root();
        let leases = format!("{root}/leases");
        let workers = format!("{root}/workers");
        session.mkdir(&leases)?;
        session.mkdir(&workers)?;
        let data = NodeData::new(&self.opts.identity, clock.now_ms());
        let max = layout.max_worker();

        // Lowest free id: skip the ones listed as held, and the ones Leaf's forever nodes of the
        // same name own for ever; try to create the rest in order.
        let forever = format!("{root}/forever");
        let forever_ids = |s: &ZkSession| -> Result<std::collections::BTreeSet<u64>, WorkerError> {
            Ok(s.children(&forever)?
                .iter()
                .filter_map(|c| parse_forever_child(c).map(|(_, seq)| seq))
                .collect())
        };
        let mut held: std::collections::BTreeSet<u64> = session
            .children(&leases)?
            .iter()
            .filter_map(|c| c.parse().ok())
            .collect();
        held.extend(forever_ids(&session)?);
        let mut worker = None;
        for id in 0..=max {
            if held.contains(&id) {
                continue;
            }
            let path = format!("{leases}/{id}");
            if session
                .create(&path, &data.to_bytes(), zkc::CreateMode::Ephemeral)?
                .is_some()
            {
                // A forever node may have taken the number meanwhile: then give it up.
                let now_forever = forever_ids(&session)?;
                if now_forever.contains(&id) {
                    let _ = session.delete(&path, None);
                    held.extend(now_forever);
                    continue;
                }
                worker = Some(id);
                break;
            }
        }
        let Some(worker) = worker else {
            return Err(WorkerError::NoFreeWorker {
                path: leases.clone(),
                count: max + 1,
            });
        };
        let lease_path = format!("{leases}/{worker}");
        let worker_path = format!("{workers}/{worker}");

        // From here on a failure must give the lease back; ZkWorkerLease's Drop does that.
        let mut lease = LeaseCore {
            given_back: std::sync::atomic::AtomicBool::new(false),
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
                last_demand_ms: i64::MIN,
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
        super::wait_for_record(clock.as_ref(), worker, reserved, max_lead_ms, || {
            format!("reserved_until of {}", lease.worker_path)
        })?;
        lease.resume_after_ms = (reserved > 0).then(|| reserved - 1);
        {
            let mut st = lease.state.lock().unwrap_or_else(|p| p.into_inner());
            st.version = version;
            st.reserved_until = reserved;
        }
        tracing::info!("leased worker id {worker} ({})", lease.lease_path);
        let core = Arc::new(lease);
        let (tx, rx) = mpsc::channel::<()>();
        let renewed = core.clone();
        let renewer = std::thread::Builder::new()
            .name("leafctl-lease".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    rx.recv_timeout(Duration::from_millis((LEASE_WINDOW_MS / 3) as u64))
                {
                    renewed.renew_ahead();
                }
            })
            .ok();
        Ok(Arc::new(ZkWorkerLease {
            core,
            renewer: Mutex::new(renewer.map(|h| (tx, h))),
        }))
    }
}

impl LeaseCore {
    /// Moves `reserved_until` forward while the generator is busy and the bound is getting
    /// close, so its next extension finds the time already reserved.
    fn renew_ahead(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.now_ms();
        let busy = st.last_demand_ms >= now.saturating_sub(2 * LEASE_WINDOW_MS);
        if st.finished || !busy || self.session_check().is_err() {
            return;
        }
        if st.reserved_until - now < LEASE_WINDOW_MS * 2 / 3 {
            let to = now.saturating_add(LEASE_WINDOW_MS);
            if let Err(e) = self.write_reserved(&mut st, to) {
                tracing::warn!("cannot renew worker id {}: {e}", self.worker);
            }
        }
    }

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

impl TimeFence for LeaseCore {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.last_demand_ms = st.last_demand_ms.max(unix_ms);
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

impl WorkerLease for LeaseCore {
    fn worker(&self) -> u64 {
        self.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        // Lock-free: a renewal stuck on a silent server must not delay noticing the loss.
        self.session_check()?;
        if self.given_back.load(Ordering::SeqCst) {
            return Err(WorkerError::Stopped {
                worker: self.worker,
                reason: "the lease was given back".into(),
            });
        }
        Ok(())
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.finished {
            return Ok(());
        }
        st.finished = true;
        self.given_back.store(true, Ordering::SeqCst);
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

impl ZkWorkerLease {
    fn stop_renewer(&self) {
        let taken = self
            .renewer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((tx, handle)) = taken {
            drop(tx);
            let _ = handle.join();
        }
    }
}

impl TimeFence for ZkWorkerLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.core.extend(unix_ms)
    }
}

impl WorkerLease for ZkWorkerLease {
    fn worker(&self) -> u64 {
        self.core.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.core.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        self.core.check()
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        self.stop_renewer();
        self.core.finish(last_issued_ms)
    }

    fn describe(&self) -> String {
        self.core.describe()
    }
}

impl Drop for ZkWorkerLease {
    fn drop(&mut self) {
        // The core (and with it the lease node) goes when the renewer lets go of it.
        self.stop_renewer();
    }
}

impl Drop for LeaseCore {
    fn drop(&mut self) {
        // Without finish() the reservation stays as written: it covers everything issued.
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished = true;
        self.release();
    }
}
