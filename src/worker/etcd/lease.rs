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

use super::error::EtcdError;
use crate::worker::IssueOptions;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcdv3client::pb;
use tonic::codec::ProstCodec;

use super::conn::{Conn, method, status_text};
use super::keys::id_of;
use super::options::EtcdOptions;
use super::session::EtcdSession;
use super::txn;
use crate::snowflake::Clock;
use crate::worker::lease::keepalive::KeepAliveFence;
use crate::worker::lease::{FencedLease, LeaseStore, Record, Write, Written};
use crate::worker::node::NodeData;
use crate::worker::{WorkerError, WorkerLease, WorkerRegistry};

/// Leases the lowest free worker id under `/leafctl/{name}/leases/`.
///
/// [`WorkerRegistry::acquire`] opens a new connection and lease each time, so a long-running
/// server can call it again after a lease is lost; the one thing kept between calls is which
/// endpoint answered last, where the next connection starts.
pub struct EtcdLeaseRegistry {
    opts: EtcdOptions,
    endpoint: Arc<AtomicUsize>,
}

impl EtcdLeaseRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: EtcdOptions) -> EtcdLeaseRegistry {
        EtcdLeaseRegistry {
            opts,
            endpoint: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The options.
    pub fn options(&self) -> &EtcdOptions {
        &self.opts
    }
}

/// Whether the etcd lease is still good, shared with the keep-alive task: the protocol's
/// [`KeepAliveFence`] on milliseconds since the grant was sent. Read without locks.
struct Health {
    base: Instant,
    fence: KeepAliveFence,
}

impl Health {
    fn new(granted_at: Instant, ttl_s: i64) -> Health {
        let ttl_ms = (ttl_s.max(0) as u64).saturating_mul(1_000);
        Health {
            base: granted_at,
            fence: KeepAliveFence::new(0, ttl_ms),
        }
    }

    fn since_base(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_millis() as u64
    }

    fn confirm(&self, sent: Instant, ttl_s: i64) {
        let ttl_ms = (ttl_s.max(0) as u64).saturating_mul(1_000);
        self.fence.confirm(self.since_base(sent), ttl_ms);
    }

    fn lose(&self, why: String) {
        self.fence.lose(why);
    }

    fn check(&self, worker: u64) -> Result<(), WorkerError> {
        self.fence
            .check(self.since_base(Instant::now()))
            .map_err(|reason| WorkerError::from(EtcdError::LeaseLost { worker, reason }))
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

impl WorkerRegistry for EtcdLeaseRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let store =
            EtcdLeaseStore::grant(&self.opts, self.endpoint.clone(), options.clock.clone())?;
        let lease = FencedLease::for_options(store, options)?;
        let store = lease.core().store();
        tracing::info!(
            "worker id {} is held by etcd lease {:x} (TTL {} s)",
            lease.worker(),
            store.lease_id,
            store.ttl_s
        );
        Ok(Arc::new(lease))
    }
}

/// One etcd lease (granted and kept alive) and the keys it may claim.
pub(crate) struct EtcdLeaseStore {
    session: Mutex<Option<Arc<EtcdSession>>>,
    /// The endpoints, for messages.
    endpoints: String,
    keepalive: Mutex<Option<KeepAliveTask>>,
    health: Arc<Health>,
    lease_id: i64,
    ttl_s: i64,
    /// The lease id in hex: the `holder` of the records it writes.
    token: String,
    leases: String,
    workers: String,
    data: NodeData,
    clock: Arc<dyn Clock>,
}

/// A held lease key.
pub(crate) struct EtcdClaim {
    worker: u64,
    lease_key: String,
    /// The lease key's `create_revision`: a key re-created by someone else has another.
    lease_create_rev: i64,
    worker_key: String,
}

fn parse_node(key: &str, kv: &pb::KeyValue) -> Result<NodeData, WorkerError> {
    NodeData::parse(&kv.value).map_err(|reason| {
        EtcdError::Request {
            action: "read",
            key: key.to_string(),
            reason,
        }
        .into()
    })
}

fn record_of(key: &str, kv: Option<&pb::KeyValue>) -> Result<Record, WorkerError> {
    let (reserved_until, version) = match kv {
        None => (0, 0),
        Some(kv) => (
            parse_node(key, kv)?.reserved_until.unwrap_or(0),
            kv.mod_revision,
        ),
    };
    Ok(Record {
        reserved_until,
        version,
        ahead_allowance_ms: None,
        writer_lead_ms: 0,
    })
}

impl EtcdLeaseStore {
    /// Connects, grants an etcd lease and starts keeping it alive.
    fn grant(
        opts: &EtcdOptions,
        endpoint: Arc<AtomicUsize>,
        clock: Arc<dyn Clock>,
    ) -> Result<EtcdLeaseStore, WorkerError> {
        let session = Arc::new(EtcdSession::connect_at(opts, endpoint)?);
        session.check_mark(opts)?;
        let granted_at = Instant::now();
        let (lease_id, ttl_s) = session.grant(opts.lease_ttl)?;
        let health = Arc::new(Health::new(granted_at, ttl_s));
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let handle = session.spawn(keep_alive(
            session.conn(),
            lease_id,
            ttl_s,
            health.clone(),
            stopped,
        ));
        // From here on a failure revokes the lease (the store's Drop).
        Ok(EtcdLeaseStore {
            session: Mutex::new(Some(session)),
            endpoints: opts.endpoints_text(),
            keepalive: Mutex::new(Some(KeepAliveTask { stop, handle })),
            health,
            lease_id,
            ttl_s,
            token: format!("{lease_id:x}"),
            leases: opts.leases_prefix(),
            workers: opts.workers_prefix(),
            data: NodeData::new(&opts.identity, clock.now_ms()),
            clock,
        })
    }

    fn session(&self) -> Result<Arc<EtcdSession>, WorkerError> {
        self.session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| {
                WorkerError::from(EtcdError::Unreachable {
                    endpoints: self.endpoints.clone(),
                    reason: "the lease's connection was closed (the lease was given back)".into(),
                })
            })
    }

    fn revoke(&self) {
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
                    "could not revoke etcd lease {:x} (it expires by itself): {e}",
                    self.lease_id
                );
            }
        }
    }
}

impl Drop for EtcdLeaseStore {
    fn drop(&mut self) {
        self.revoke();
    }
}

impl LeaseStore for EtcdLeaseStore {
    type Claim = EtcdClaim;

    fn candidates(&self, ids: std::ops::Range<u64>) -> Result<Vec<u64>, WorkerError> {
        let held: BTreeSet<u64> = self
            .session()?
            .range_prefix(&self.leases, true)?
            .iter()
            .filter_map(|kv| id_of(&self.leases, &kv.key))
            .collect();
        Ok(ids.filter(|id| !held.contains(id)).collect())
    }

    fn try_claim(&self, id: u64) -> Result<Option<(EtcdClaim, Record)>, WorkerError> {
        let session = self.session()?;
        let lease_key = format!("{}{id}", self.leases);
        let worker_key = format!("{}{id}", self.workers);
        // The claim and the read of the record in one transaction.
        let req = pb::TxnRequest {
            compare: vec![txn::create_revision_is(&lease_key, 0)],
            success: vec![
                txn::put(&lease_key, self.data.to_bytes(), self.lease_id),
                txn::get(&worker_key),
            ],
            failure: vec![txn::get(&lease_key)],
        };
        let resp = session.txn(&lease_key, req)?;
        let (create_rev, worker_kv) = if resp.succeeded {
            (txn::revision(&resp), txn::read(&resp, 1))
        } else {
            match txn::read(&resp, 0) {
                // Ours after all: an earlier try of this transaction was applied but its answer
                // lost (the call is retried on failover).
                Some(kv) if kv.lease == self.lease_id => {
                    (kv.create_revision, session.get(&worker_key)?)
                }
                _ => return Ok(None),
            }
        };
        let record = record_of(&worker_key, worker_kv.as_ref())?;
        Ok(Some((
            EtcdClaim {
                worker: id,
                lease_key,
                lease_create_rev: create_rev,
                worker_key,
            },
            record,
        )))
    }

    fn write(&self, claim: &EtcdClaim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        let session = self.session()?;
        let mut d = self.data.clone();
        d.timestamp = self.clock.now_ms();
        d.reserved_until = Some(w.reserved_until);
        d.holder = Some(self.token.clone());
        // The compare holds the record's revision *and* this holder's own lease key: a holder
        // whose key is gone can never move the record again.
        let req = pb::TxnRequest {
            compare: vec![
                txn::mod_revision_is(&claim.worker_key, expected),
                txn::create_revision_is(&claim.lease_key, claim.lease_create_rev),
            ],
            success: vec![txn::put(&claim.worker_key, d.to_bytes(), 0)],
            failure: vec![txn::get(&claim.worker_key), txn::get(&claim.lease_key)],
        };
        let resp = session.txn(&claim.worker_key, req)?;
        if resp.succeeded {
            return Ok(Written::Applied {
                version: txn::revision(&resp),
            });
        }
        let ours =
            txn::read(&resp, 1).is_some_and(|kv| kv.create_revision == claim.lease_create_rev);
        if !ours {
            return Ok(Written::NotHeld {
                reason: "its lease key was deleted (reclaimed, or the lease expired)".into(),
            });
        }
        let current = txn::read(&resp, 0);
        let own = match &current {
            Some(kv) => {
                parse_node(&claim.worker_key, kv)?.holder.as_deref() == Some(self.token.as_str())
            }
            None => false,
        };
        Ok(Written::Changed {
            current: record_of(&claim.worker_key, current.as_ref())?,
            own,
        })
    }

    fn still_held(&self, claim: &EtcdClaim) -> Result<(), WorkerError> {
        // Lock-free: a write stuck on a silent server must not delay noticing the loss.
        self.health.check(claim.worker)
    }

    fn report(&self, claim: &EtcdClaim, now_ms: i64) -> Result<bool, WorkerError> {
        // Re-writes the lease key with this holder's clock (what `workers list` shows as the
        // last report and `workers doctor` compares).
        let mut d = self.data.clone();
        d.timestamp = now_ms;
        let req = pb::TxnRequest {
            compare: vec![txn::create_revision_is(
                &claim.lease_key,
                claim.lease_create_rev,
            )],
            success: vec![txn::put(&claim.lease_key, d.to_bytes(), self.lease_id)],
            failure: vec![],
        };
        Ok(self.session()?.txn(&claim.lease_key, req)?.succeeded)
    }

    fn release(&self, _claim: &EtcdClaim) {
        self.revoke();
    }

    fn worker(&self, claim: &EtcdClaim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &EtcdClaim) -> String {
        format!("etcd lease {}", claim.lease_key)
    }

    fn record_source(&self, claim: &EtcdClaim) -> String {
        format!("reserved_until of {}", claim.worker_key)
    }

    fn lost(&self, claim: &EtcdClaim, reason: String) -> WorkerError {
        self.health.lose(reason.clone());
        WorkerError::from(EtcdError::LeaseLost {
            worker: claim.worker,
            reason,
        })
    }

    fn none_free(&self, ids: std::ops::Range<u64>) -> WorkerError {
        WorkerError::NoFreeWorker {
            path: self.leases.clone(),
            count: ids.end - ids.start,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_in_the_past_fails_the_check() {
        let h = Health::new(Instant::now() - Duration::from_secs(10), 3);
        assert!(matches!(
            h.check(2).unwrap_err().store::<EtcdError>(),
            Some(EtcdError::LeaseLost { .. })
        ));
        let fresh = Health::new(Instant::now(), 30);
        assert!(fresh.check(2).is_ok());
    }
}
