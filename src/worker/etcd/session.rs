//! A synchronous etcd v3 connection for the lease registry, and the admin view behind
//! `leafctl workers --etcd`.
//!
//! etcd speaks gRPC. The protocol types come from `etcdv3client`, which ships them pre-generated
//! (so building needs no `protoc`); the calls go through `tonic` directly, so every request has a
//! deadline, fails over to the next endpoint when one is down, and reports etcd's own message.
//! Each connection owns a small tokio runtime (one worker thread) on which the lease's
//! keep-alives run while the generator issues on the caller's threads.

use super::error::EtcdError;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcdv3client::pb;
use tonic::codec::ProstCodec;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};

use crate::worker::{DEFAULT_MAX_CLOCK_SKEW_MS, Identity, WorkerError};

/// How to reach etcd and which keys to use.
#[derive(Clone)]
pub struct EtcdOptions {
    /// Endpoints: `http://host:port`, `https://host:port`, or `host:port` (plain HTTP).
    pub endpoints: Vec<String>,
    /// Leaf's `leaf.name`: keys live under `/leafctl/{name}/`.
    pub name: String,
    /// This process's `ip:port`.
    pub identity: Identity,
    /// etcd user name, when etcd has authentication enabled.
    pub user: Option<String>,
    /// That user's password (never printed; `Debug` shows `***`).
    pub password: Option<String>,
    /// PEM file with the CA certificate(s) that signed the servers' certificates, for `https://`
    /// endpoints (without it the system's trust roots are used).
    pub ca_file: Option<PathBuf>,
    /// TTL asked for the etcd lease that holds a worker id. Issuing stops when no keep-alive
    /// was confirmed for 2/3 of it, or as soon as one keep-alive fails.
    pub lease_ttl: Duration,
    /// Deadline of one request to one endpoint.
    pub request_timeout: Duration,
    /// Largest clock difference to live peers that `workers doctor` accepts (ms).
    pub max_clock_skew_ms: i64,
}

impl std::fmt::Debug for EtcdOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdOptions")
            .field("endpoints", &self.endpoints)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_file", &self.ca_file)
            .field("lease_ttl", &self.lease_ttl)
            .field("request_timeout", &self.request_timeout)
            .field("max_clock_skew_ms", &self.max_clock_skew_ms)
            .finish()
    }
}

/// Default TTL of the etcd lease behind a worker id.
pub const DEFAULT_ETCD_LEASE_TTL: Duration = Duration::from_secs(10);

impl EtcdOptions {
    /// Options with leafctl's defaults: 10 s leases, 2 s requests, no auth, no CA file.
    /// `endpoints` is a comma-separated list.
    pub fn new(endpoints: &str, name: &str, identity: Identity) -> EtcdOptions {
        EtcdOptions {
            endpoints: endpoints
                .split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_string)
                .collect(),
            name: name.to_string(),
            identity,
            user: None,
            password: None,
            ca_file: None,
            lease_ttl: DEFAULT_ETCD_LEASE_TTL,
            request_timeout: Duration::from_secs(2),
            max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
        }
    }

    /// `/leafctl/{name}/`.
    pub fn root(&self) -> String {
        format!("/leafctl/{}/", self.name)
    }

    /// `/leafctl/{name}/leases/`: one key per held worker id, attached to its holder's lease.
    pub fn leases_prefix(&self) -> String {
        format!("{}leases/", self.root())
    }

    /// `/leafctl/{name}/workers/`: one key per worker id ever used, holding `reserved_until`.
    pub fn workers_prefix(&self) -> String {
        format!("{}workers/", self.root())
    }

    /// The endpoints as one string, for messages.
    pub fn endpoints_text(&self) -> String {
        self.endpoints.join(",")
    }
}

/// The URL of an endpoint as given: `host:port` means plain HTTP.
fn endpoint_url(raw: &str) -> Result<String, WorkerError> {
    let url = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(WorkerError::from(EtcdError::Config(format!(
            "endpoint {raw:?} is neither http:// nor https://"
        ))));
    }
    Ok(url)
}

/// The key range end that selects every key starting with `prefix`.
pub(crate) fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// gRPC method paths.
pub(crate) mod method {
    pub const RANGE: &str = "/etcdserverpb.KV/Range";
    pub const TXN: &str = "/etcdserverpb.KV/Txn";
    pub const DELETE_RANGE: &str = "/etcdserverpb.KV/DeleteRange";
    pub const LEASE_GRANT: &str = "/etcdserverpb.Lease/LeaseGrant";
    pub const LEASE_REVOKE: &str = "/etcdserverpb.Lease/LeaseRevoke";
    pub const LEASE_KEEP_ALIVE: &str = "/etcdserverpb.Lease/LeaseKeepAlive";
    pub const AUTHENTICATE: &str = "/etcdserverpb.Auth/Authenticate";
    pub const WATCH: &str = "/etcdserverpb.Watch/Watch";
}

/// The connection shared by the caller's threads and the runtime's tasks.
pub(crate) struct Conn {
    endpoints: String,
    channels: Vec<Channel>,
    /// The endpoint in use, shared by every session one registry opens: a new lease starts where
    /// the last one found an answer, not at the first endpoint (which may be the member a
    /// partition cut off, costing each new lease a request timeout before it fails over).
    current: Arc<AtomicUsize>,
    user: Option<String>,
    password: Option<String>,
    token: Mutex<Option<AsciiMetadataValue>>,
    pub(crate) request_timeout: Duration,
    /// How long a request is retried (other endpoints, a leader election) before it fails.
    retry_for: Duration,
}

/// The whole cause chain of an error, for messages: each distinct part once, without tonic's
/// bare "transport error".
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    join_parts(parts)
}

fn join_parts(parts: Vec<String>) -> String {
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        let p = p.trim().to_string();
        if p.is_empty() || p == "transport error" || out.iter().any(|o| o.contains(&p)) {
            continue;
        }
        out.retain(|o| !p.contains(o.as_str()));
        out.push(p);
    }
    out.join(": ")
}

/// What a failed status says, including the transport error behind it.
pub(crate) fn status_text(s: &Status) -> String {
    let mut parts = vec![s.message().trim_start_matches("etcdserver: ").to_string()];
    if let Some(src) = std::error::Error::source(s) {
        parts.push(chain(src));
    }
    let text = join_parts(parts);
    if text.is_empty() {
        format!("{:?}", s.code())
    } else {
        text
    }
}

/// True when the request never reached a server (nothing listening, connection refused).
fn not_connected(s: &Status) -> bool {
    let t = status_text(s).to_ascii_lowercase();
    s.code() == Code::Unavailable
        && (t.contains("connect") || t.contains("refused") || t.contains("dns"))
}

/// The TLS handshake failed (an untrusted or mismatched certificate): no retry will help.
fn tls_failure(s: &Status) -> bool {
    let t = status_text(s).to_ascii_lowercase();
    t.contains("certificate") || t.contains("handshake") || t.contains("tls")
}

/// Worth another try, maybe on another endpoint: the server is down, busy or electing a leader.
fn retryable(s: &Status) -> bool {
    !tls_failure(s)
        && matches!(
            s.code(),
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::ResourceExhausted
        )
        || (s.code() == Code::Unknown && status_text(s).contains("transport"))
}

fn invalid_token(s: &Status) -> bool {
    s.code() == Code::Unauthenticated
        || (s.code() == Code::InvalidArgument && s.message().contains("revision of auth store"))
}

impl Conn {
    /// The channel to use now.
    pub(crate) fn channel(&self) -> (usize, Channel) {
        let i = self.current.load(Ordering::SeqCst) % self.channels.len();
        (i, self.channels[i].clone())
    }

    /// Moves on from endpoint `i` (unless another caller already did).
    pub(crate) fn rotate(&self, i: usize) {
        let next = (i + 1) % self.channels.len();
        let _ = self
            .current
            .compare_exchange(i, next, Ordering::SeqCst, Ordering::SeqCst);
    }

    pub(crate) fn token(&self) -> Option<AsciiMetadataValue> {
        self.token.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    async fn attempt<M, R>(&self, channel: Channel, path: &'static str, req: M) -> Result<R, Status>
    where
        M: prost::Message + Send + Sync + 'static,
        R: prost::Message + Default + Send + Sync + 'static,
    {
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready()
            .await
            .map_err(|e| Status::unavailable(chain(&e)))?;
        let mut request = tonic::Request::new(req);
        request.set_timeout(self.request_timeout);
        if let Some(t) = self.token() {
            request.metadata_mut().insert("token", t);
        }
        let codec: ProstCodec<M, R> = ProstCodec::default();
        grpc.unary(
            request,
            tonic::codegen::http::uri::PathAndQuery::from_static(path),
            codec,
        )
        .await
        .map(|r| r.into_inner())
    }

    /// One unary call with deadlines, failover and token refresh. Fails at once when no endpoint
    /// accepts a connection; retries other endpoints (and a cluster electing a leader) for a
    /// while otherwise. A retried write may have been applied once already: callers make their
    /// writes conditional and read back when a condition fails.
    pub(crate) async fn unary<M, R>(&self, path: &'static str, req: M) -> Result<R, Status>
    where
        M: prost::Message + Clone + Send + Sync + 'static,
        R: prost::Message + Default + Send + Sync + 'static,
    {
        let start = Instant::now();
        let n = self.channels.len();
        let mut refused = 0;
        let mut tried = 0;
        let mut reauthed = false;
        loop {
            let (i, channel) = self.channel();
            let status = match tokio::time::timeout(
                self.request_timeout,
                self.attempt::<M, R>(channel, path, req.clone()),
            )
            .await
            {
                Ok(Ok(r)) => return Ok(r),
                Ok(Err(s)) => s,
                Err(_) => Status::deadline_exceeded(format!(
                    "no answer within {} ms",
                    self.request_timeout.as_millis()
                )),
            };
            if invalid_token(&status) && self.user.is_some() && !reauthed {
                reauthed = true;
                self.authenticate().await?;
                continue;
            }
            if !retryable(&status) {
                return Err(status);
            }
            tracing::debug!("etcd {path} on endpoint {i}: {}", status_text(&status));
            self.rotate(i);
            tried += 1;
            if not_connected(&status) {
                refused += 1;
                if refused >= n {
                    return Err(status);
                }
            } else {
                refused = 0;
            }
            if start.elapsed() >= self.retry_for {
                return Err(status);
            }
            if tried % n == 0 {
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
        }
    }

    /// Gets a token for the configured user (etcd's simple or JWT token).
    pub(crate) async fn authenticate(&self) -> Result<(), Status> {
        let (Some(user), Some(password)) = (&self.user, &self.password) else {
            return Ok(());
        };
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let req = pb::AuthenticateRequest {
            name: user.clone(),
            password: password.clone(),
        };
        let start = Instant::now();
        let n = self.channels.len();
        let mut refused = 0;
        let resp: pb::AuthenticateResponse = loop {
            let (i, channel) = self.channel();
            let status = match tokio::time::timeout(
                self.request_timeout,
                self.attempt::<_, pb::AuthenticateResponse>(
                    channel,
                    method::AUTHENTICATE,
                    req.clone(),
                ),
            )
            .await
            {
                Ok(Ok(r)) => break r,
                Ok(Err(s)) => s,
                Err(_) => Status::deadline_exceeded(format!(
                    "no answer within {} ms",
                    self.request_timeout.as_millis()
                )),
            };
            if status.code() == Code::FailedPrecondition
                && status.message().contains("authentication is not enabled")
            {
                tracing::warn!(
                    "etcd at {} has authentication disabled; the etcd user {user:?} is not used",
                    self.endpoints
                );
                return Ok(());
            }
            if !retryable(&status) {
                return Err(status);
            }
            self.rotate(i);
            refused = if not_connected(&status) {
                refused + 1
            } else {
                0
            };
            if refused >= n || start.elapsed() >= self.retry_for {
                return Err(status);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let token = AsciiMetadataValue::try_from(resp.token.as_str())
            .map_err(|_| Status::internal("etcd returned a token that is not ASCII"))?;
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = Some(token);
        Ok(())
    }
}

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
        let tls = match &opts.ca_file {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    WorkerError::from(EtcdError::Config(format!(
                        "cannot read the CA file {}: {e}",
                        path.display()
                    )))
                })?;
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
            }
            None => ClientTlsConfig::new().with_native_roots(),
        };
        let mut channels = Vec::new();
        {
            let _guard = rt.enter();
            for raw in &opts.endpoints {
                let url = endpoint_url(raw)?;
                let bad = |e: tonic::transport::Error| {
                    WorkerError::from(EtcdError::Config(format!(
                        "endpoint {raw:?}: {}",
                        chain(&e)
                    )))
                };
                let mut ep = Endpoint::from_shared(url.clone())
                    .map_err(bad)?
                    .connect_timeout(opts.request_timeout)
                    .tcp_nodelay(true)
                    .http2_keep_alive_interval(Duration::from_secs(5))
                    .keep_alive_timeout(opts.request_timeout)
                    .keep_alive_while_idle(true);
                if url.starts_with("https://") {
                    ep = ep.tls_config(tls.clone()).map_err(bad)?;
                }
                channels.push(ep.connect_lazy());
            }
        }
        let conn = Arc::new(Conn {
            endpoints: endpoints.clone(),
            channels,
            current,
            user: opts.user.clone(),
            password: opts.password.clone(),
            token: Mutex::new(None),
            request_timeout: opts.request_timeout,
            retry_for: opts.request_timeout.max(Duration::from_secs(3)),
        });
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

/// Builders for transaction parts.
pub(crate) mod txn {
    use etcdv3client::pb;
    use pb::compare::{CompareResult, CompareTarget, TargetUnion};

    fn compare(key: &str, target: CompareTarget, value: TargetUnion) -> pb::Compare {
        pb::Compare {
            result: CompareResult::Equal as i32,
            target: target as i32,
            key: key.as_bytes().to_vec(),
            range_end: Vec::new(),
            target_union: Some(value),
        }
    }

    /// `create_revision(key) == rev` (0: the key does not exist).
    pub fn create_revision_is(key: &str, rev: i64) -> pb::Compare {
        compare(key, CompareTarget::Create, TargetUnion::CreateRevision(rev))
    }

    /// `mod_revision(key) == rev` (0: the key does not exist).
    pub fn mod_revision_is(key: &str, rev: i64) -> pb::Compare {
        compare(key, CompareTarget::Mod, TargetUnion::ModRevision(rev))
    }

    /// Put `value` at `key`, attached to `lease` (0: none).
    pub fn put(key: &str, value: Vec<u8>, lease: i64) -> pb::RequestOp {
        pb::RequestOp {
            request: Some(pb::request_op::Request::RequestPut(pb::PutRequest {
                key: key.as_bytes().to_vec(),
                value,
                lease,
                ..Default::default()
            })),
        }
    }

    /// Read `key`.
    pub fn get(key: &str) -> pb::RequestOp {
        pb::RequestOp {
            request: Some(pb::request_op::Request::RequestRange(pb::RangeRequest {
                key: key.as_bytes().to_vec(),
                ..Default::default()
            })),
        }
    }

    /// The key-values read by the `n`th operation of a transaction's answer.
    pub fn read(resp: &pb::TxnResponse, n: usize) -> Option<pb::KeyValue> {
        match resp.responses.get(n)?.response.as_ref()? {
            pb::response_op::Response::ResponseRange(r) => r.kvs.first().cloned(),
            _ => None,
        }
    }

    /// The revision a transaction was applied at.
    pub fn revision(resp: &pb::TxnResponse) -> i64 {
        resp.header.map(|h| h.revision).unwrap_or(0)
    }
}

/// The worker id a key under `prefix` names.
pub(crate) fn id_of(prefix: &str, key: &[u8]) -> Option<u64> {
    std::str::from_utf8(key)
        .ok()?
        .strip_prefix(prefix)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_chains_read_once() {
        assert_eq!(
            join_parts(vec![
                "tcp connect error".into(),
                "transport error".into(),
                "tcp connect error".into(),
                "Connection refused (os error 111)".into(),
            ]),
            "tcp connect error: Connection refused (os error 111)"
        );
        assert_eq!(
            join_parts(vec![
                "tcp connect error".into(),
                "tcp connect error: Connection refused".into(),
            ]),
            "tcp connect error: Connection refused"
        );
    }

    #[test]
    fn prefix_end_is_the_next_key() {
        assert_eq!(prefix_end("/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end("a\u{7f}"), b"a\x80".to_vec());
    }

    #[test]
    fn ids_come_from_keys_under_the_prefix() {
        assert_eq!(
            id_of("/leafctl/x/leases/", b"/leafctl/x/leases/17"),
            Some(17)
        );
        assert_eq!(id_of("/leafctl/x/leases/", b"/leafctl/x/leases/a"), None);
        assert_eq!(id_of("/leafctl/x/leases/", b"/leafctl/y/leases/1"), None);
    }

    #[test]
    fn endpoints_default_to_http_and_refuse_other_schemes() {
        assert_eq!(
            endpoint_url("127.0.0.1:2379").unwrap(),
            "http://127.0.0.1:2379"
        );
        assert_eq!(endpoint_url("https://e:2379").unwrap(), "https://e:2379");
        assert!(matches!(
            endpoint_url("unix:///tmp/etcd.sock")
                .unwrap_err()
                .store::<EtcdError>(),
            Some(EtcdError::Config(_))
        ));
    }

    #[test]
    fn the_password_never_shows_in_debug_output() {
        let mut o = EtcdOptions::new("a:1, b:2", "n", "10.0.0.1:80".parse().unwrap());
        o.password = Some("s3cret-pw".into());
        assert_eq!(o.endpoints, vec!["a:1".to_string(), "b:2".to_string()]);
        let shown = format!("{o:?}");
        assert!(
            !shown.contains("s3cret-pw") && shown.contains("***"),
            "{shown}"
        );
    }
}
