//! The connection to etcd shared by the caller's threads and the runtime's tasks: its channels,
//! the endpoint in use, authentication, deadlines, failover, and what a failed status says.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcdv3client::pb;
use tonic::codec::ProstCodec;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Status};

use super::error::EtcdError;
use super::options::{EtcdOptions, endpoint_url};
use crate::worker::WorkerError;

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
    pub(super) endpoints: String,
    channels: Vec<Channel>,
    /// The endpoint in use, shared by every session one registry opens: a new lease starts where
    /// the last one found an answer, not at the first endpoint (which may be the member a
    /// partition cut off, costing each new lease a request timeout before it fails over).
    current: Arc<AtomicUsize>,
    pub(super) user: Option<String>,
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
pub(super) fn not_connected(s: &Status) -> bool {
    let t = status_text(s).to_ascii_lowercase();
    s.code() == Code::Unavailable
        && (t.contains("connect") || t.contains("refused") || t.contains("dns"))
}

/// The TLS handshake failed (an untrusted or mismatched certificate): no retry will help.
pub(super) fn tls_failure(s: &Status) -> bool {
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

impl Conn {
    /// The channels to `opts.endpoints` (made on `rt`, connecting lazily), starting at the
    /// endpoint `current` points to.
    pub(super) fn open(
        opts: &EtcdOptions,
        endpoints: &str,
        current: Arc<AtomicUsize>,
        rt: &tokio::runtime::Runtime,
    ) -> Result<Conn, WorkerError> {
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
        Ok(Conn {
            endpoints: endpoints.to_string(),
            channels,
            current,
            user: opts.user.clone(),
            password: opts.password.clone(),
            token: Mutex::new(None),
            request_timeout: opts.request_timeout,
            retry_for: opts.request_timeout.max(Duration::from_secs(3)),
        })
    }
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
}
