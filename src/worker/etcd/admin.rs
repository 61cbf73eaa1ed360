//! The admin view behind `leafctl workers --etcd`: listing, reclaiming, comparing clocks.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use etcdv3client::pb;
use tonic::Status;
use tonic::codec::ProstCodec;

use super::conn::{Conn, chain, method};
use super::keys::{id_of, prefix_end};
use super::lease::EtcdLeaseRegistry;
use super::options::EtcdOptions;
use super::session::EtcdSession;
use crate::worker::node::NodeData;
use crate::worker::record::WorkerRecord;
use crate::worker::registry::average;
use crate::worker::{
    ClockReport, REPORT_INTERVAL_MS, Registry, RegistryKind, StoreMark, WorkerError,
};

/// Inspection and repair of a name's worker ids in etcd (`leafctl workers --etcd`).
pub(crate) struct EtcdAdmin {
    session: EtcdSession,
    opts: EtcdOptions,
}

impl EtcdAdmin {
    /// Connects for inspection.
    pub(crate) fn connect(opts: &EtcdOptions) -> Result<EtcdAdmin, WorkerError> {
        Ok(EtcdAdmin {
            session: EtcdSession::connect(opts)?,
            opts: opts.clone(),
        })
    }

    /// Every worker id under `/leafctl/{name}/`: held leases and recorded reservations.
    pub(crate) fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        let leases_prefix = self.opts.leases_prefix();
        let workers_prefix = self.opts.workers_prefix();
        let mut leases: BTreeMap<u64, pb::KeyValue> = BTreeMap::new();
        for kv in self.session.range_prefix(&leases_prefix, false)? {
            if let Some(id) = id_of(&leases_prefix, &kv.key) {
                leases.insert(id, kv);
            }
        }
        let mut workers: BTreeMap<u64, pb::KeyValue> = BTreeMap::new();
        for kv in self.session.range_prefix(&workers_prefix, false)? {
            if let Some(id) = id_of(&workers_prefix, &kv.key) {
                workers.insert(id, kv);
            }
        }
        let ids: BTreeSet<u64> = leases.keys().chain(workers.keys()).copied().collect();
        let mut out = Vec::new();
        for id in ids {
            let data = workers
                .get(&id)
                .and_then(|kv| NodeData::parse(&kv.value).ok())
                .unwrap_or_default();
            let lease = leases.get(&id);
            let holder = lease.and_then(|kv| NodeData::parse(&kv.value).ok());
            out.push(WorkerRecord::of_nodes(
                id,
                super::KIND,
                data,
                holder,
                lease.is_some(),
                now_ms,
                format!("{leases_prefix}{id}"),
            ));
        }
        Ok(out)
    }

    /// Frees a worker id: revokes the etcd lease that holds it (its holder's next keep-alive
    /// then fails and it stops issuing) and deletes the lease key; `reserved_until` stays, so
    /// the next holder still starts after it. Returns the keys deleted.
    pub(crate) fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let key = format!("{}{}", self.opts.leases_prefix(), record.worker);
        let mut deleted = Vec::new();
        if let Some(kv) = self.session.get(&key)? {
            if kv.lease != 0 {
                self.session.revoke(kv.lease)?;
            }
            // Revoking deletes the key; delete it anyway in case it had no lease.
            self.session.delete(&key)?;
            deleted.push(key);
        }
        Ok(deleted)
    }

    /// Compares our clock with the live holders': watches their lease keys for one report
    /// interval (holders report every 3 s) and times each report as it arrives.
    pub(crate) fn clock_report(
        &self,
        now_ms: &dyn Fn() -> i64,
    ) -> Result<ClockReport, WorkerError> {
        let prefix = self.opts.leases_prefix();
        let before = Instant::now();
        let held = self.session.range_prefix(&prefix, true)?;
        let round_trip_ms = before.elapsed().as_millis() as i64;
        let expected: BTreeSet<Vec<u8>> = held.iter().map(|kv| kv.key.clone()).collect();
        let mut offsets: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        if !expected.is_empty() {
            let conn = self.session.conn();
            let wait = Duration::from_millis((REPORT_INTERVAL_MS + 1_500) as u64);
            let events = self
                .session
                .block(async move { watch_puts(&conn, &prefix, wait, expected.len()).await })
                .map_err(|s| self.session.fail("watch", &self.opts.leases_prefix(), s))?;
            for (key, value, at) in events {
                let ours = now_ms() - at.elapsed().as_millis() as i64;
                if let Ok(d) = NodeData::parse(&value)
                    && d.timestamp > 0
                {
                    offsets.insert(key, d.timestamp - ours);
                }
            }
        }
        let peers: Vec<i64> = offsets.values().copied().collect();
        // Ours relative to theirs.
        let peer_offset = average(&peers).map(|avg| -avg);
        let max = self.opts.max_clock_skew_ms;
        Ok(ClockReport {
            store: "etcd",
            store_offset_ms: None,
            round_trip_ms,
            peers: peers.len(),
            peer_offset_ms: peer_offset,
            max_skew_ms: max,
            ok: peer_offset.is_none_or(|o| o.abs() <= max),
        })
    }
}

/// Put events under `prefix` for up to `wait` (or until `enough` distinct keys reported):
/// key, value and the instant each arrived.
async fn watch_puts(
    conn: &Conn,
    prefix: &str,
    wait: Duration,
    enough: usize,
) -> Result<Vec<(Vec<u8>, Vec<u8>, Instant)>, Status> {
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::WatchRequest>(1);
    let create = pb::WatchRequest {
        request_union: Some(pb::watch_request::RequestUnion::CreateRequest(
            pb::WatchCreateRequest {
                key: prefix.as_bytes().to_vec(),
                range_end: prefix_end(prefix),
                ..Default::default()
            },
        )),
    };
    tx.send(create)
        .await
        .map_err(|_| Status::internal("watch request not sent"))?;
    let (_, channel) = conn.channel();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| Status::unavailable(chain(&e)))?;
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx));
    if let Some(t) = conn.token() {
        request.metadata_mut().insert("token", t);
    }
    let codec: ProstCodec<pb::WatchRequest, pb::WatchResponse> = ProstCodec::default();
    let deadline = tokio::time::Instant::now() + wait;
    let mut stream = tokio::time::timeout_at(
        deadline,
        grpc.streaming(
            request,
            tonic::codegen::http::uri::PathAndQuery::from_static(method::WATCH),
            codec,
        ),
    )
    .await
    .map_err(|_| Status::deadline_exceeded("no answer to the watch"))??
    .into_inner();
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    while seen.len() < enough {
        match tokio::time::timeout_at(deadline, stream.message()).await {
            Err(_) | Ok(Ok(None)) => break,
            Ok(Err(s)) => return Err(s),
            Ok(Ok(Some(resp))) => {
                let at = Instant::now();
                for ev in resp.events {
                    if ev.r#type == pb::event::EventType::Put as i32
                        && let Some(kv) = ev.kv
                    {
                        seen.insert(kv.key.clone());
                        out.push((kv.key, kv.value, at));
                    }
                }
            }
        }
    }
    drop(tx);
    Ok(out)
}

impl Registry for EtcdLeaseRegistry {
    fn kind(&self) -> RegistryKind {
        super::KIND
    }

    fn place(&self) -> String {
        self.options().root()
    }

    fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        EtcdAdmin::connect(self.options())?.list(now_ms)
    }

    /// An id no lease holds is free already: reclaiming it deletes nothing.
    fn reclaim_plan(&self, record: &WorkerRecord) -> Option<String> {
        record.held.then(|| format!(
            "revoke the etcd lease holding worker id {} ({}); its holder stops issuing at its next keep-alive, and reserved_until stays, so the next holder still starts after it",
            record.worker, record.location
        ))
    }

    fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        EtcdAdmin::connect(self.options())?.reclaim(record)
    }

    /// etcd does not report its own clock: the live holders' reports are watched for one
    /// report interval and compared with ours.
    fn clock_report(&self, now_ms: &dyn Fn() -> i64) -> Result<Option<ClockReport>, WorkerError> {
        EtcdAdmin::connect(self.options())?
            .clock_report(now_ms)
            .map(Some)
    }

    fn mark(&self) -> Result<Option<StoreMark>, WorkerError> {
        let admin = EtcdAdmin::connect(self.options())?;
        Ok(Some(admin.session.read_mark(&admin.opts)?))
    }
}
