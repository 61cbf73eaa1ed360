//! Leased, recyclable worker ids in ZooKeeper (Leaf issue #84): the ZooKeeper store of the
//! fenced-lease protocol ([`crate::worker::lease`]).
//!
//! - `/snowflake/{name}/leases/{id}`: ephemeral; whoever created it holds worker id `id`.
//! - `/snowflake/{name}/workers/{id}`: persistent; `reserved_until` (ms) bounds the times of every
//!   ID ever issued with `id`, and `holder` names the session that wrote it.
//!
//! The fenced write is a `setData` at the node version last seen. It needs no compare on the
//! lease node: ZooKeeper applies a session's requests in order and none after the session
//! expired, and the lease node goes only with the session (or by `workers reclaim`, after which
//! the holder's next write finds a version it did not write and stops). A write whose answer was
//! lost is recognised by its `holder`. "Still held?" is the session state the client keeps: it
//! fails as soon as the client sees the session disconnected, well before it can expire.

use super::error::{ZkError, parse_node};
use crate::worker::IssueOptions;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use zookeeper_client as zkc;

use super::session::{ZkOptions, ZkSession, parse_forever_child, state_name};
use crate::snowflake::Clock;
use crate::worker::lease::{FencedLease, LeaseStore, Record, Write, Written};
use crate::worker::node::NodeData;
use crate::worker::{WorkerError, WorkerLease, WorkerRegistry};

/// Leases the lowest free worker id under `/snowflake/{name}/leases`.
pub struct ZkLeaseRegistry {
    opts: ZkOptions,
}

impl ZkLeaseRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: ZkOptions) -> ZkLeaseRegistry {
        ZkLeaseRegistry { opts }
    }

    /// The options it was made with.
    pub fn options(&self) -> &ZkOptions {
        &self.opts
    }
}

impl WorkerRegistry for ZkLeaseRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let store = ZkLeaseStore::connect(&self.opts, options.clock.clone())?;
        FencedLease::for_generator(store, options)
    }
}

/// One ZooKeeper session's view of the lease tree.
pub(crate) struct ZkLeaseStore {
    session: Mutex<Option<ZkSession>>,
    /// The connect string, for messages.
    hosts: String,
    state_flag: Arc<AtomicU8>,
    /// This session's id in hex: the `holder` of the records it writes.
    token: String,
    leases: String,
    workers: String,
    forever: String,
    /// What maps forever node numbers to worker ids (the region).
    opts: ZkOptions,
    data: NodeData,
    clock: Arc<dyn Clock>,
}

/// A held lease node.
pub(crate) struct ZkClaim {
    worker: u64,
    lease_path: String,
    worker_path: String,
}

impl ZkLeaseStore {
    fn connect(opts: &ZkOptions, clock: Arc<dyn Clock>) -> Result<ZkLeaseStore, WorkerError> {
        let session = ZkSession::connect(opts)?;
        let root = opts.root();
        let store = ZkLeaseStore {
            state_flag: session.state_flag(),
            token: format!("{:x}", session.session_id()),
            session: Mutex::new(Some(session)),
            hosts: opts.hosts.clone(),
            leases: format!("{root}/leases"),
            workers: format!("{root}/workers"),
            forever: format!("{root}/forever"),
            opts: opts.clone(),
            data: NodeData::new(&opts.identity, clock.now_ms()),
            clock,
        };
        store.with_session(|s| {
            opts.check_mark(s)?;
            s.mkdir(&store.leases)?;
            s.mkdir(&store.workers)
        })?;
        Ok(store)
    }

    fn with_session<T>(
        &self,
        f: impl FnOnce(&ZkSession) -> Result<T, WorkerError>,
    ) -> Result<T, WorkerError> {
        let guard = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let s = guard.as_ref().ok_or_else(|| {
            WorkerError::from(ZkError::Unreachable {
                hosts: self.hosts.clone(),
                reason: "the lease's session was closed (the lease was given back)".into(),
            })
        })?;
        f(s)
    }

    /// Worker ids Leaf's forever nodes of the same name own for ever.
    fn forever_ids(&self, s: &ZkSession) -> Result<std::collections::BTreeSet<u64>, WorkerError> {
        s.children(&self.forever)?
            .iter()
            .filter_map(|c| parse_forever_child(c).map(|(_, seq)| seq))
            .map(|seq| self.opts.forever_worker(seq))
            .collect()
    }

    fn read_record(s: &ZkSession, path: &str) -> Result<Option<(NodeData, i32)>, WorkerError> {
        match s.get(path)? {
            None => Ok(None),
            Some((bytes, stat)) => Ok(Some((parse_node(path, &bytes)?, stat.version))),
        }
    }
}

fn record_of(d: &NodeData, version: i32) -> Record {
    Record {
        reserved_until: d.reserved_until.unwrap_or(0),
        version: version as i64,
        ahead_allowance_ms: None,
        writer_lead_ms: 0,
    }
}

impl LeaseStore for ZkLeaseStore {
    type Claim = ZkClaim;

    fn candidates(&self, ids: std::ops::Range<u64>) -> Result<Vec<u64>, WorkerError> {
        self.with_session(|s| {
            // Skip the ids listed as held, and the ones Leaf's forever nodes own.
            let mut held: std::collections::BTreeSet<u64> = s
                .children(&self.leases)?
                .iter()
                .filter_map(|c| c.parse().ok())
                .collect();
            held.extend(self.forever_ids(s)?);
            Ok(ids.filter(|id| !held.contains(id)).collect())
        })
    }

    fn try_claim(&self, id: u64) -> Result<Option<(ZkClaim, Record)>, WorkerError> {
        self.with_session(|s| {
            let lease_path = format!("{}/{id}", self.leases);
            if s.create(
                &lease_path,
                &self.data.to_bytes(),
                zkc::CreateMode::Ephemeral,
            )?
            .is_none()
            {
                return Ok(None);
            }
            // A forever node may have taken the number meanwhile: then give it up.
            if self.forever_ids(s)?.contains(&id) {
                let _ = s.delete(&lease_path, None);
                return Ok(None);
            }
            let worker_path = format!("{}/{id}", self.workers);
            let record = match Self::read_record(s, &worker_path) {
                Ok(Some((d, version))) => record_of(&d, version),
                Ok(None) => {
                    let mut d = self.data.clone();
                    d.reserved_until = Some(0);
                    match s.create(&worker_path, &d.to_bytes(), zkc::CreateMode::Persistent)? {
                        Some((_, stat)) => record_of(&d, stat.version),
                        None => match Self::read_record(s, &worker_path)? {
                            Some((d, version)) => record_of(&d, version),
                            None => record_of(&d, 0),
                        },
                    }
                }
                Err(e) => {
                    let _ = s.delete(&lease_path, None);
                    return Err(e);
                }
            };
            Ok(Some((
                ZkClaim {
                    worker: id,
                    lease_path,
                    worker_path,
                },
                record,
            )))
        })
    }

    fn write(&self, claim: &ZkClaim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        self.with_session(|s| {
            let mut d = self.data.clone();
            d.timestamp = self.clock.now_ms();
            d.reserved_until = Some(w.reserved_until);
            d.holder = Some(self.token.clone());
            let version = i32::try_from(expected).unwrap_or(-1);
            if let Some(stat) = s.set_if(&claim.worker_path, &d.to_bytes(), version)? {
                return Ok(Written::Applied {
                    version: stat.version as i64,
                });
            }
            match Self::read_record(s, &claim.worker_path)? {
                None => Ok(Written::NotHeld {
                    reason: format!("{} was deleted", claim.worker_path),
                }),
                Some((current, version)) => Ok(Written::Changed {
                    own: current.holder.as_deref() == Some(self.token.as_str()),
                    current: record_of(&current, version),
                }),
            }
        })
    }

    fn still_held(&self, claim: &ZkClaim) -> Result<(), WorkerError> {
        let code = self.state_flag.load(Ordering::SeqCst);
        if code != 0 {
            return Err(WorkerError::from(ZkError::SessionLost {
                worker: claim.worker,
                state: state_name(code).to_string(),
            }));
        }
        Ok(())
    }

    fn release(&self, claim: &ZkClaim) {
        let session = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut s) = session {
            if let Err(e) = s.delete(&claim.lease_path, None) {
                tracing::warn!("could not delete {}: {e}", claim.lease_path);
            }
            s.close();
        }
    }

    fn worker(&self, claim: &ZkClaim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &ZkClaim) -> String {
        format!("ZooKeeper lease {}", claim.lease_path)
    }

    fn record_source(&self, claim: &ZkClaim) -> String {
        format!("reserved_until of {}", claim.worker_path)
    }

    fn none_free(&self, ids: std::ops::Range<u64>) -> WorkerError {
        WorkerError::NoFreeWorker {
            path: self.leases.clone(),
            count: ids.end - ids.start,
        }
    }
}
