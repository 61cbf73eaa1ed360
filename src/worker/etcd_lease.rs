//! Leased, recyclable worker ids in etcd: the ZooKeeper lease's guarantees on the other consensus
//! store operators run.
//!
//! - `/leafctl/{name}/leases/{id}`: whoever created it holds worker id `id`. It is created in a
//!   transaction that requires it not to exist (`create_revision == 0`) and is attached to an
//!   etcd lease that a background task keeps alive; when the lease expires etcd deletes it.
//! - `/leafctl/{name}/workers/{id}`: `reserved_until` (ms) bounds the times of every ID ever
//!   issued with `id`.
//!
//! A holder issues only below `reserved_until`, and writes a later bound before it issues past
//! it, in a transaction that requires both the bound's `mod_revision` as last seen and its own
//! lease key (by `create_revision`): a holder whose lease key is gone can never move the bound
//! again. A new holder waits until its own clock passes the previous bound.
//!
//! Issuing stops as soon as one keep-alive fails (no answer within a quarter of the TTL), and in
//! any case once no keep-alive was confirmed for 2/3 of the TTL, counted from when the confirmed
//! keep-alive was *sent*: etcd restarts the TTL only on receiving it, so the lease cannot expire,
//! and the id go to someone else, before issuing has stopped.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use etcdv3client::pb;
use tonic::codec::ProstCodec;

use super::etcd::{Conn, EtcdOptions, EtcdSession, id_of, method, status_text, txn};
use super::zk::NodeData;
use super::{LEASE_WINDOW_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease, WorkerRegistry};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};

/// Leases the lowest free worker id under `/leafctl/{name}/leases/`.
///
/// Stateless between calls: [`WorkerRegistry::acquire`] opens a new connection and lease each
/// time, so a long-running server can call it again after a lease is lost.
pub struct EtcdLeaseRegistry {
    opts: EtcdOptions,
}

impl EtcdLeaseRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: EtcdOptions) -> EtcdLeaseRegistry {
        EtcdLeaseRegistry { opts }
    }

    /// The options.
    pub fn options(&self) -> &EtcdOptions {
        &self.opts
    }
}

/// Whether the etcd lease is still good, shared with the keep-alive task. Read without locks.
struct Health {
    base: Instant,
    /// When the last confirmed keep-alive (or the grant) was sent, in ms after `base`.
    confirmed_ms: AtomicU64,
    /// Issuing is allowed until `base` + this many ms (2/3 of the TTL after `confirmed_ms`).
    fence_ms: AtomicU64,
    lost: AtomicBool,
    reason: Mutex<String>,
}

impl Health {
    fn new(granted_at: Instant, ttl_s: i64) -> Health {
        let h = Health {
            base: granted_at,
            confirmed_ms: AtomicU64::new(0),
            fence_ms: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            reason: Mutex::new(String::new()),
        };
        h.confirm(granted_at, ttl_s);
        h
    }

    fn confirm(&self, sent: Instant, ttl_s: i64) {
        let at = sent.saturating_duration_since(self.base).as_millis() as u64;
        let fence = at.saturating_add((ttl_s.max(0) as u64).saturating_mul(2_000) / 3);
        self.confirmed_ms.fetch_max(at, Ordering::SeqCst);
        self.fence_ms.fetch_max(fence, Ordering::SeqCst);
    }

    fn lose(&self, why: String) {
        if !self.lost.swap(true, Ordering::SeqCst) {
            tracing::warn!("etcd lease lost: {why}");
            *self.reason.lock().unwrap_or_else(|p| p.into_inner()) = why;
        }
    }

    fn check(&self, worker: u64) -> Result<(), WorkerError> {
        if !self.lost.load(Ordering::SeqCst) {
            let now = self.base.elapsed().as_millis() as u64;
            if now < self.fence_ms.load(Ordering::SeqCst) {
                return Ok(());
            }
            let since = now.saturating_sub(self.confirmed_ms.load(Ordering::SeqCst));
            self.lose(format!("no keep-alive confirmed for {since} ms"));
        }
        Err(WorkerError::LeaseLost {
            worker,
            reason: self
                .reason
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        })
    }
}

struct KeepAliveStream {
    tx: tokio::sync::mpsc::Sender<pb::LeaseKeepAliveRequest>,
    rx: tonic::Streaming<pb::LeaseKeepAliveResponse>,
    endpoint: usize,
}

/// Opens a keep-alive stream on the current endpoint and renews once; returns the stream and
/// the TTL etcd answered.
async fn open_keep_alive(
    conn: &Conn,
    lease: i64,
) -> Result<(KeepAliveStream, i64), (usize, tonic::Status)> {
    let (i, channel) = conn.channel();
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    // The request goes in first: the server answers (headers and all) only once it has one.
    tx.send(pb::LeaseKeepAliveRequest { id: lease })
        .await
        .map_err(|_| (i, tonic::Status::internal("keep-alive request not sent")))?;
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| (i, tonic::Status::unavailable(e.to_string())))?;
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    if let Some(t) = conn.token() {
        request.metadata_mut().insert("token", t);
    }
    let codec: ProstCodec<pb::LeaseKeepAliveRequest, pb::LeaseKeepAliveResponse> =
        ProstCodec::default();
    let mut stream = grpc
        .streaming(
            request,
            tonic::codegen::http::uri::PathAndQuery::from_static(method::LEASE_KEEP_ALIVE),
            codec,
        )
        .await
        .map_err(|s| (i, s))?
        .into_inner();
    match stream.message().await {
        Ok(Some(r)) => Ok((
            KeepAliveStream {
                tx,
                rx: stream,
                endpoint: i,
            },
            r.ttl,
        )),
        Ok(None) => Err((i, tonic::Status::unavailable("keep-alive stream closed"))),
        Err(s) => Err((i, s)),
    }
}

/// One keep-alive, on the open stream or a new one (another endpoint after a failure).
async fn keep_alive_once(
    conn: &Conn,
    lease: i64,
    slot: &mut Option<KeepAliveStream>,
) -> Result<i64, String> {
    let mut last = String::from("no endpoint answered");
    for _ in 0..4 {
        let Some(s) = slot.as_mut() else {
            match open_keep_alive(conn, lease).await {
                Ok((stream, ttl)) => {
                    *slot = Some(stream);
                    return Ok(ttl);
                }
                Err((i, status)) => {
                    last = status_text(&status);
                    if status.code() == tonic::Code::Unauthenticated {
                        let _ = conn.authenticate().await;
                    } else {
                        conn.rotate(i);
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            }
        };
        if s.tx
            .send(pb::LeaseKeepAliveRequest { id: lease })
            .await
            .is_err()
        {
            *slot = None;
            continue;
        }
        match s.rx.message().await {
            Ok(Some(r)) => return Ok(r.ttl),
            Ok(None) => last = "keep-alive stream closed".into(),
            Err(status) => last = status_text(&status),
        }
        conn.rotate(s.endpoint);
        *slot = None;
    }
    Err(last)
}

/// Renews the lease every TTL/5 until stopped; the first failure marks it lost for good.
async fn keep_alive(
    conn: Arc<Conn>,
    lease: i64,
    ttl_s: i64,
    health: Arc<Health>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let ttl = Duration::from_secs(ttl_s.max(1) as u64);
    let interval = ttl / 5;
    let deadline = ttl / 4;
    let mut slot = None;
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(interval) => {}
        }
        let sent = Instant::now();
        match tokio::time::timeout(deadline, keep_alive_once(&conn, lease, &mut slot)).await {
            Ok(Ok(t)) if t > 0 => health.confirm(sent, t),
            Ok(Ok(_)) => {
                health.lose("etcd says the lease has expired".into());
                return;
            }
            Ok(Err(e)) => {
                health.lose(format!("keep-alive failed: {e}"));
                return;
            }
            Err(_) => {
                health.lose(format!(
                    "no keep-alive answer within {} ms",
                    deadline.as_millis()
                ));
                return;
            }
        }
    }
}

struct LeaseState {
    /// The workers key's `mod_revision` as our last read or write left it (0: no key yet).
    mod_revision: i64,
    /// What etcd holds as `reserved_until`.
    reserved_until: i64,
    /// Set once the lease is given back.
    finished: bool,
    /// The latest time the generator asked to issue at (for renewing ahead of need).
    last_demand_ms: i64,
}

/// The lease itself, shared with the renewer thread.
struct LeaseCore {
    session: Mutex<Option<Arc<EtcdSession>>>,
    keepalive: Mutex<Option<KeepAliveTask>>,
    health: Arc<Health>,
    given_back: AtomicBool,
    worker: u64,
    lease_id: i64,
    lease_key: String,
    lease_create_rev: i64,
    worker_key: String,
    data: NodeData,
    clock: Arc<dyn Clock>,
    resume_after_ms: Option<i64>,
    state: Mutex<LeaseState>,
    last_report: Mutex<Instant>,
}

struct KeepAliveTask {
    stop: tokio::sync::oneshot::Sender<()>,
    handle: tokio::task::JoinHandle<()>,
}

impl KeepAliveTask {
    fn stop(self) {
        let _ = self.stop.send(());
        self.handle.abort();
    }
}

/// A worker id leased through an etcd lease. A background thread renews `reserved_until` ahead
/// of need while the generator is busy and reports this holder's clock every 3 s; a task on the
/// connection's runtime keeps the etcd lease alive.
pub struct EtcdWorkerLease {
    core: Arc<LeaseCore>,
    renewer: Mutex<Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>>,
}

/// The parts of an acquisition that must be undone if it fails half-way.
struct Granted {
    session: Arc<EtcdSession>,
    lease_id: i64,
    keepalive: Option<KeepAliveTask>,
}

impl Drop for Granted {
    fn drop(&mut self) {
        if let Some(k) = self.keepalive.take() {
            k.stop();
            if let Err(e) = self.session.revoke(self.lease_id) {
                tracing::warn!("could not revoke etcd lease {:x}: {e}", self.lease_id);
            }
        }
    }
}

fn reserved_of(key: &str, kv: Option<&pb::KeyValue>) -> Result<(i64, i64), WorkerError> {
    match kv {
        None => Ok((0, 0)),
        Some(kv) => {
            let d = NodeData::parse(key, &kv.value).map_err(|e| match e {
                WorkerError::BadNode { path, reason } => WorkerError::Etcd {
                    action: "read",
                    key: path,
                    reason,
                },
                other => other,
            })?;
            Ok((d.reserved_until.unwrap_or(0), kv.mod_revision))
        }
    }
}

impl WorkerRegistry for EtcdLeaseRegistry {
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
        let session = Arc::new(EtcdSession::connect(&self.opts)?);
        let leases = self.opts.leases_prefix();
        let workers = self.opts.workers_prefix();

        let granted_at = Instant::now();
        let (lease_id, ttl) = session.grant(self.opts.lease_ttl)?;
        let health = Arc::new(Health::new(granted_at, ttl));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let handle = session.spawn(keep_alive(
            session.conn(),
            lease_id,
            ttl,
            health.clone(),
            stopped,
        ));
        // From here on a failure revokes the lease (Granted's Drop).
        let mut granted = Granted {
            session: session.clone(),
            lease_id,
            keepalive: Some(KeepAliveTask { stop, handle }),
        };

        let data = NodeData::new(&self.opts.identity, clock.now_ms());
        let max = layout.max_worker();
        let held: BTreeSet<u64> = session
            .range_prefix(&leases, true)?
            .iter()
            .filter_map(|kv| id_of(&leases, &kv.key))
            .collect();
        let mut found = None;
        for id in (0..=max).filter(|id| !held.contains(id)) {
            let lease_key = format!("{leases}{id}");
            let worker_key = format!("{workers}{id}");
            let req = pb::TxnRequest {
                compare: vec![txn::create_revision_is(&lease_key, 0)],
                success: vec![
                    txn::put(&lease_key, data.to_bytes(), lease_id),
                    txn::get(&worker_key),
                ],
                failure: vec![txn::get(&lease_key)],
            };
            let resp = session.txn(&lease_key, req)?;
            if resp.succeeded {
                found = Some((id, txn::revision(&resp), txn::read(&resp, 1)));
                break;
            }
            // Ours after all when an earlier try of this transaction was applied but its answer
            // lost (the call is retried on failover).
            if let Some(kv) = txn::read(&resp, 0)
                && kv.lease == lease_id
            {
                found = Some((id, kv.create_revision, session.get(&worker_key)?));
                break;
            }
        }
        let Some((worker, lease_create_rev, worker_kv)) = found else {
            return Err(WorkerError::NoFreeWorker {
                path: leases,
                count: max + 1,
            });
        };
        let lease_key = format!("{leases}{worker}");
        let worker_key = format!("{workers}{worker}");
        let (reserved, mod_revision) = reserved_of(&worker_key, worker_kv.as_ref())?;

        super::wait_for_record(clock.as_ref(), worker, reserved, max_lead_ms, || {
            format!("reserved_until of {worker_key}")
        })?;
        health.check(worker)?;
        tracing::info!(
            "leased worker id {worker} ({lease_key}, etcd lease {lease_id:x}, TTL {ttl} s)"
        );

        let core = Arc::new(LeaseCore {
            session: Mutex::new(Some(session)),
            keepalive: Mutex::new(granted.keepalive.take()),
            health,
            given_back: AtomicBool::new(false),
            worker,
            lease_id,
            lease_key,
            lease_create_rev,
            worker_key,
            data,
            clock,
            resume_after_ms: (reserved > 0).then(|| reserved - 1),
            state: Mutex::new(LeaseState {
                mod_revision,
                reserved_until: reserved,
                finished: false,
                last_demand_ms: i64::MIN,
            }),
            last_report: Mutex::new(Instant::now()),
        });
        drop(granted);
        let (tx, rx) = mpsc::channel::<()>();
        let renewed = core.clone();
        let renewer = std::thread::Builder::new()
            .name("leafctl-etcd-lease".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    rx.recv_timeout(Duration::from_millis((LEASE_WINDOW_MS / 3) as u64))
                {
                    renewed.renew_ahead();
                    renewed.report_if_due();
                }
            })
            .ok();
        Ok(Arc::new(EtcdWorkerLease {
            core,
            renewer: Mutex::new(renewer.map(|h| (tx, h))),
        }))
    }
}

impl LeaseCore {
    fn session(&self) -> Result<Arc<EtcdSession>, WorkerError> {
        self.session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or(WorkerError::Stopped {
                worker: self.worker,
                reason: "the lease was given back".into(),
            })
    }

    fn lost(&self, why: &str) -> WorkerError {
        self.health.lose(why.to_string());
        WorkerError::LeaseLost {
            worker: self.worker,
            reason: why.to_string(),
        }
    }

    /// Moves `reserved_until` forward while the generator is busy and the bound is getting
    /// close, so its next extension finds the time already reserved.
    fn renew_ahead(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.now_ms();
        let busy = st.last_demand_ms >= now.saturating_sub(2 * LEASE_WINDOW_MS);
        if st.finished || !busy || self.health.check(self.worker).is_err() {
            return;
        }
        if st.reserved_until - now < LEASE_WINDOW_MS * 2 / 3 {
            let to = now.saturating_add(LEASE_WINDOW_MS);
            if let Err(e) = self.write_reserved(&mut st, to) {
                tracing::warn!("cannot renew worker id {}: {e}", self.worker);
            }
        }
    }

    /// Re-writes the lease key with this holder's clock every report interval (what
    /// `workers list` shows as the last report and `workers doctor` compares), and notices a
    /// lease key deleted under us.
    fn report_if_due(&self) {
        {
            let mut last = self.last_report.lock().unwrap_or_else(|p| p.into_inner());
            if last.elapsed() < Duration::from_millis(REPORT_INTERVAL_MS as u64) {
                return;
            }
            *last = Instant::now();
        }
        if self.given_back.load(Ordering::SeqCst) || self.health.check(self.worker).is_err() {
            return;
        }
        let Ok(session) = self.session() else { return };
        let mut d = self.data.clone();
        d.timestamp = self.clock.now_ms();
        let req = pb::TxnRequest {
            compare: vec![txn::create_revision_is(
                &self.lease_key,
                self.lease_create_rev,
            )],
            success: vec![txn::put(&self.lease_key, d.to_bytes(), self.lease_id)],
            failure: vec![],
        };
        match session.txn(&self.lease_key, req) {
            Ok(r) if r.succeeded => {}
            Ok(_) => {
                let _ = self.lost("its lease key was deleted (reclaimed, or the lease expired)");
            }
            Err(e) => tracing::warn!("cannot report worker id {}: {e}", self.worker),
        }
    }

    fn write_reserved(&self, st: &mut LeaseState, reserved_until: i64) -> Result<(), WorkerError> {
        let session = self.session()?;
        let mut d = self.data.clone();
        d.timestamp = self.clock.now_ms();
        d.reserved_until = Some(reserved_until);
        let value = d.to_bytes();
        for _ in 0..2 {
            let req = pb::TxnRequest {
                compare: vec![
                    txn::mod_revision_is(&self.worker_key, st.mod_revision),
                    txn::create_revision_is(&self.lease_key, self.lease_create_rev),
                ],
                success: vec![txn::put(&self.worker_key, value.clone(), 0)],
                failure: vec![txn::get(&self.worker_key), txn::get(&self.lease_key)],
            };
            let resp = session.txn(&self.worker_key, req)?;
            if resp.succeeded {
                st.mod_revision = txn::revision(&resp);
                st.reserved_until = reserved_until;
                return Ok(());
            }
            let ours =
                txn::read(&resp, 1).is_some_and(|kv| kv.create_revision == self.lease_create_rev);
            if !ours {
                return Err(
                    self.lost("its lease key was deleted (reclaimed, or the lease expired)")
                );
            }
            // Only the lease key's holder writes the bound, so the change is our own earlier
            // write, applied although its answer was lost: adopt it and write again.
            let (stored, rev) = reserved_of(&self.worker_key, txn::read(&resp, 0).as_ref())?;
            st.mod_revision = rev;
            st.reserved_until = stored;
        }
        Err(WorkerError::Etcd {
            action: "write",
            key: self.worker_key.clone(),
            reason: "the reservation changed under us twice".into(),
        })
    }

    fn release(&self) {
        if let Some(k) = self
            .keepalive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            k.stop();
        }
        let session = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(s) = session {
            // Revoking deletes the lease key at once; without it the key stays until the TTL.
            if let Err(e) = s.revoke(self.lease_id) {
                tracing::warn!(
                    "could not revoke the etcd lease of {} (it expires by itself): {e}",
                    self.lease_key
                );
            }
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
        self.health
            .check(self.worker)
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        if st.reserved_until > unix_ms {
            return Ok(st.reserved_until);
        }
        let fence = unix_ms.saturating_add(LEASE_WINDOW_MS);
        self.write_reserved(&mut st, fence)
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
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
        // Lock-free: a write stuck on a silent server must not delay noticing the loss.
        self.health.check(self.worker)?;
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
            Some(t) if t + 1 < st.reserved_until && self.health.check(self.worker).is_ok() => {
                self.write_reserved(&mut st, t + 1)
            }
            _ => Ok(()),
        };
        drop(st);
        self.release();
        result
    }

    fn describe(&self) -> String {
        format!("etcd lease {}", self.lease_key)
    }
}

impl EtcdWorkerLease {
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

    /// The etcd lease's id (hex in `etcdctl lease list`).
    pub fn etcd_lease_id(&self) -> i64 {
        self.core.lease_id
    }
}

impl TimeFence for EtcdWorkerLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.core.extend(unix_ms)
    }
}

impl WorkerLease for EtcdWorkerLease {
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

impl Drop for EtcdWorkerLease {
    fn drop(&mut self) {
        // The core (and with it the lease) goes when the renewer lets go of it.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fence_is_two_thirds_of_the_ttl_after_the_confirmed_send() {
        let t0 = Instant::now();
        let h = Health::new(t0, 9);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 6_000);
        h.confirm(t0 + Duration::from_millis(1_000), 9);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 7_000);
        // An older confirmation never moves the fence back.
        h.confirm(t0, 9);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 7_000);
        assert!(h.check(1).is_ok());
    }

    #[test]
    fn a_lost_lease_stays_lost_with_its_first_reason() {
        let h = Health::new(Instant::now(), 10);
        h.lose("first".into());
        h.lose("second".into());
        h.confirm(Instant::now(), 10);
        match h.check(4) {
            Err(WorkerError::LeaseLost { worker: 4, reason }) => assert_eq!(reason, "first"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_fence_in_the_past_fails_the_check() {
        let h = Health::new(Instant::now() - Duration::from_secs(10), 3);
        assert!(matches!(h.check(2), Err(WorkerError::LeaseLost { .. })));
    }
}
