//! A synchronous etcd v3 connection for the lease registry, and the admin view behind
//! `leafctl workers --etcd`.
//!
//! etcd speaks gRPC. The protocol types come from `etcdv3client`, which ships them pre-generated
//! (so building needs no `protoc`); the calls go through `tonic` directly, so every request has a
//! deadline, fails over to the next endpoint when one is down, and reports etcd's own message.
//! Each connection owns a small tokio runtime (one worker thread) on which the lease's
//! keep-alives run while the generator issues on the caller's threads.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use etcdv3client::pb;
use tonic::{Code, Status};

use super::conn::{Conn, method, not_connected, status_text, tls_failure};
use super::error::EtcdError;
use super::keys::prefix_end;
use super::options::EtcdOptions;
use super::txn;
use crate::worker::WorkerError;
use crate::worker::scope::{self, StoreMark};

/// One etcd connection with its runtime.
pub(crate) struct EtcdSession {
    /// `None` only while dropping.
    rt: Option<tokio::runtime::Runtime>,
    conn: Arc<Conn>,
}

impl EtcdSession {
    /// Builds the channels (connecting lazily), authenticates when a user is set, and checks
    /// that etcd answers.
    pub(crate) fn connect(opts: &EtcdOptions) -> Result<EtcdSession, WorkerError> {
        EtcdSession::connect_at(opts, Arc::new(AtomicUsize::new(0)))
    }

    /// [`EtcdSession::connect`], starting at (and moving on) the endpoint `current` points to,
    /// which other sessions may share.
    pub(crate) fn connect_at(
        opts: &EtcdOptions,
        current: Arc<AtomicUsize>,
    ) -> Result<EtcdSession, WorkerError> {
        let endpoints = opts.endpoints_text();
        if opts.endpoints.is_empty() {
            return Err(WorkerError::from(EtcdError::Config(
                "no etcd endpoint given".into(),
            )));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("leafctl-etcd")
            .enable_all()
            .build()
            .map_err(|e| {
                WorkerError::from(EtcdError::Unreachable {
                    endpoints: endpoints.clone(),
                    reason: format!("cannot start the client runtime: {e}"),
                })
            })?;
        let conn = Arc::new(Conn::open(opts, &endpoints, current, &rt)?);
        let session = EtcdSession { rt: Some(rt), conn };
        if let Some(user) = &opts.user {
            if opts.password.is_none() {
                return Err(WorkerError::from(EtcdError::Config(format!(
                    "etcd user {user:?} has no password: set LEAF_ETCD_PASSWORD"
                ))));
            }
            let c = session.conn.clone();
            session
                .block(async move { c.authenticate().await })
                .map_err(|s| session.fail("authenticate", "", s))?;
        }
        Ok(session)
    }

    fn rt(&self) -> &tokio::runtime::Runtime {
        self.rt
            .as_ref()
            .expect("the runtime is only taken when the session is dropped")
    }

    /// Runs a future on the session's runtime and waits for it. Callable from any thread,
    /// including one that drives another tokio runtime (a server's request handler): the future
    /// then runs on this session's runtime while the caller waits on a channel, since tokio
    /// forbids `block_on` there.
    pub(crate) fn block<F>(&self, fut: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.rt().block_on(fut);
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.rt().spawn(async move {
            let _ = tx.send(fut.await);
        });
        match rx.recv() {
            Ok(out) => out,
            // Only if the runtime dropped the task, which it does only when shut down, and
            // that happens only in Drop, after every caller is gone.
            Err(_) => panic!("the etcd client runtime stopped during a request"),
        }
    }

    pub(crate) fn conn(&self) -> Arc<Conn> {
        self.conn.clone()
    }

    pub(crate) fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt().spawn(fut)
    }

    /// A failed status as a [`WorkerError`].
    pub(crate) fn fail(&self, action: &'static str, key: &str, s: Status) -> WorkerError {
        let reason = status_text(&s);
        match s.code() {
            // etcd 3.4 answers a request without a token this way when auth is enabled.
            Code::InvalidArgument if reason == "user name is empty" => {
                WorkerError::from(EtcdError::Auth {
                    user: "(none)".into(),
                    reason: "etcd has authentication enabled: set etcd.user and LEAF_ETCD_PASSWORD"
                        .into(),
                })
            }
            Code::InvalidArgument if reason.contains("authentication failed") => {
                WorkerError::from(EtcdError::Auth {
                    user: self.conn.user.clone().unwrap_or_default(),
                    reason: "authentication failed: wrong user name or password".into(),
                })
            }
            Code::PermissionDenied | Code::Unauthenticated => WorkerError::from(EtcdError::Auth {
                user: self.conn.user.clone().unwrap_or_else(|| "(none)".into()),
                reason: if self.conn.user.is_none() {
                    format!(
                        "{reason} (etcd has authentication enabled: set etcd.user and LEAF_ETCD_PASSWORD)"
                    )
                } else {
                    format!("{reason} (for {action} {key})")
                },
            }),
            Code::FailedPrecondition if reason.contains("authentication is not enabled") => {
                WorkerError::from(EtcdError::Auth {
                    user: self.conn.user.clone().unwrap_or_default(),
                    reason: reason.clone(),
                })
            }
            _ if tls_failure(&s) => WorkerError::from(EtcdError::Tls {
                endpoints: self.conn.endpoints.clone(),
                reason,
            }),
            _ if not_connected(&s) => WorkerError::from(EtcdError::Unreachable {
                endpoints: self.conn.endpoints.clone(),
                reason,
            }),
            _ if self.conn.endpoints.contains("http://")
                && (reason.contains("broken pipe")
                    || reason.contains("connection reset")
                    || reason.contains("frame")) =>
            {
                WorkerError::from(EtcdError::Unreachable {
                    endpoints: self.conn.endpoints.clone(),
                    reason: format!(
                        "{reason} (if etcd serves TLS there, use an https:// endpoint)"
                    ),
                })
            }
            _ => WorkerError::from(EtcdError::Request {
                action,
                key: key.to_string(),
                reason,
            }),
        }
    }

    fn call<M, R>(
        &self,
        action: &'static str,
        key: &str,
        path: &'static str,
        req: M,
    ) -> Result<R, WorkerError>
    where
        M: prost::Message + Clone + Send + Sync + 'static,
        R: prost::Message + Default + Send + Sync + 'static,
    {
        let c = self.conn.clone();
        self.block(async move { c.unary::<M, R>(path, req).await })
            .map_err(|s| self.fail(action, key, s))
    }

    /// The keys starting with `prefix` (with values unless `keys_only`).
    pub(crate) fn range_prefix(
        &self,
        prefix: &str,
        keys_only: bool,
    ) -> Result<Vec<pb::KeyValue>, WorkerError> {
        let req = pb::RangeRequest {
            key: prefix.as_bytes().to_vec(),
            range_end: prefix_end(prefix),
            keys_only,
            ..Default::default()
        };
        let resp: pb::RangeResponse = self.call("list", prefix, method::RANGE, req)?;
        Ok(resp.kvs)
    }

    /// Reads the region mark without recording anything (`workers`).
    pub(crate) fn read_mark(&self, opts: &EtcdOptions) -> Result<StoreMark, WorkerError> {
        let data = self.get(scope::ETCD_KEY)?.map(|kv| kv.value);
        StoreMark::read(mark_place(opts), data.as_deref())
    }

    /// Checks the region mark `/leafctl/region` against `opts`' region, recording it on first
    /// use ([`crate::worker::WorkerScope::ensure_mark`]): a create-if-absent transaction.
    pub(crate) fn check_mark(&self, opts: &EtcdOptions) -> Result<(), WorkerError> {
        let key = scope::ETCD_KEY;
        opts.scope.ensure_mark(
            &mark_place(opts),
            || Ok(self.get(key)?.map(|kv| kv.value)),
            |mark| {
                let req = pb::TxnRequest {
                    compare: vec![txn::create_revision_is(key, 0)],
                    success: vec![txn::put(key, mark.to_vec(), 0)],
                    failure: vec![],
                };
                Ok(self.txn(key, req)?.succeeded)
            },
        )
    }

    /// One key, if it exists.
    pub(crate) fn get(&self, key: &str) -> Result<Option<pb::KeyValue>, WorkerError> {
        let req = pb::RangeRequest {
            key: key.as_bytes().to_vec(),
            ..Default::default()
        };
        let resp: pb::RangeResponse = self.call("read", key, method::RANGE, req)?;
        Ok(resp.kvs.into_iter().next())
    }

    /// A transaction; `key` names it in errors.
    pub(crate) fn txn(
        &self,
        key: &str,
        req: pb::TxnRequest,
    ) -> Result<pb::TxnResponse, WorkerError> {
        self.call("transaction on", key, method::TXN, req)
    }

    /// Deletes one key; true when it was there.
    pub(crate) fn delete(&self, key: &str) -> Result<bool, WorkerError> {
        let req = pb::DeleteRangeRequest {
            key: key.as_bytes().to_vec(),
            ..Default::default()
        };
        let resp: pb::DeleteRangeResponse = self.call("delete", key, method::DELETE_RANGE, req)?;
        Ok(resp.deleted > 0)
    }

    /// Grants a lease of `ttl` (whole seconds, at least 1); returns its id and the TTL etcd
    /// chose (it raises TTLs below its minimum).
    pub(crate) fn grant(&self, ttl: Duration) -> Result<(i64, i64), WorkerError> {
        let req = pb::LeaseGrantRequest {
            ttl: ttl.as_secs().max(1) as i64,
            id: 0,
        };
        let what = format!("(TTL {} s)", req.ttl);
        let resp: pb::LeaseGrantResponse =
            self.call("lease grant", &what, method::LEASE_GRANT, req)?;
        if !resp.error.is_empty() {
            return Err(WorkerError::from(EtcdError::Request {
                action: "lease grant",
                key: what,
                reason: resp.error,
            }));
        }
        Ok((resp.id, resp.ttl))
    }

    /// Revokes a lease (deleting its keys); `Ok(false)` when it was already gone.
    pub(crate) fn revoke(&self, lease: i64) -> Result<bool, WorkerError> {
        let c = self.conn.clone();
        let r: Result<pb::LeaseRevokeResponse, Status> = self.block(async move {
            c.unary(method::LEASE_REVOKE, pb::LeaseRevokeRequest { id: lease })
                .await
        });
        match r {
            Ok(_) => Ok(true),
            Err(s) if s.code() == Code::NotFound => Ok(false),
            Err(s) => Err(self.fail("lease revoke", &format!("{lease:x}"), s)),
        }
    }
}

impl Drop for EtcdSession {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Inside another runtime, waiting is not allowed.
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(Duration::from_secs(1));
            }
        }
    }
}

/// Where etcd's region mark lives, for messages.
fn mark_place(opts: &EtcdOptions) -> String {
    format!("etcd {}{}", opts.endpoints_text(), scope::ETCD_KEY)
}
