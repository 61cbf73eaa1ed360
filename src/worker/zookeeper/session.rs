//! A synchronous ZooKeeper session for the registries, and the admin view behind `leafctl workers`.
//!
//! The client (`zookeeper-client`) is async; each session owns a small tokio runtime (one worker
//! thread) that keeps the session alive (pings, reconnects) while the generator runs on the
//! caller's threads. Every request has a deadline, so a stalled server never blocks issuing for
//! longer than the session timeout.

use super::error::ZkError;
use crate::worker::node::NodeData;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use zookeeper_client as zkc;

use crate::worker::scope::{self, StoreMark, WorkerScope};
use crate::worker::{DEFAULT_MAX_CLOCK_SKEW_MS, Identity, WorkerError};

/// How to reach ZooKeeper and which tree to use.
#[derive(Debug, Clone)]
pub struct ZkOptions {
    /// Connect string, `host:port[,host:port...]`.
    pub hosts: String,
    /// Leaf's `leaf.name`: nodes live under `/snowflake/{name}`.
    pub name: String,
    /// This process's `ip:port`.
    pub identity: Identity,
    /// Digest credentials `user:password`; nodes leafctl creates then carry a creator-only ACL.
    pub auth: Option<String>,
    /// Session timeout asked of the server.
    pub session_timeout: Duration,
    /// Largest clock difference to live peers accepted at first registration (ms).
    pub max_clock_skew_ms: i64,
    /// The state directory (for the forever mode's cache file).
    pub state_dir: std::path::PathBuf,
    /// This deployment's region: recorded in `/leafctl/region`, and the worker ids leased and
    /// numbered by forever nodes are its slice. None: no region.
    pub scope: WorkerScope,
    /// Width of the layout's worker field (10 in Leaf's), which the region's slice divides.
    pub worker_bits: u32,
}

impl ZkOptions {
    /// Options with leafctl's defaults: 6 s sessions, 5 s skew threshold, no auth.
    pub fn new(
        hosts: &str,
        name: &str,
        identity: Identity,
        state_dir: &std::path::Path,
    ) -> ZkOptions {
        ZkOptions {
            hosts: hosts.to_string(),
            name: name.to_string(),
            identity,
            auth: None,
            session_timeout: Duration::from_secs(6),
            max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
            state_dir: state_dir.to_path_buf(),
            scope: WorkerScope::default(),
            worker_bits: 10,
        }
    }

    /// The worker id Leaf's forever node number `n` stands for: the first worker id of the
    /// region's slice plus `n` (`n` itself without a region). The caller checks it against
    /// the slice's end.
    pub fn forever_worker(&self, n: u64) -> Result<u64, WorkerError> {
        let ids = self.scope.ids(self.worker_bits)?;
        Ok(ids.start.saturating_add(n))
    }

    /// Where the region mark lives, for messages.
    fn mark_place(&self) -> String {
        format!("ZooKeeper {}{}", self.hosts, scope::ZK_PATH)
    }

    /// Reads the region mark without recording anything (`workers`).
    pub(crate) fn read_mark(&self, s: &ZkSession) -> Result<StoreMark, WorkerError> {
        let data = s.get(scope::ZK_PATH)?.map(|(d, _)| d);
        StoreMark::read(self.mark_place(), data.as_deref())
    }

    /// Checks the region mark `/leafctl/region` against this process's region, recording it
    /// on first use ([`WorkerScope::ensure_mark`]).
    pub(crate) fn check_mark(&self, s: &ZkSession) -> Result<(), WorkerError> {
        self.scope.ensure_mark(
            &self.mark_place(),
            || Ok(s.get(scope::ZK_PATH)?.map(|(data, _)| data)),
            |mark| {
                s.mkdir("/leafctl")?;
                Ok(s.create(scope::ZK_PATH, mark, zkc::CreateMode::Persistent)?
                    .is_some())
            },
        )
    }

    /// `/snowflake/{name}`.
    pub fn root(&self) -> String {
        format!("/snowflake/{}", self.name)
    }
}

/// Connection state as the registries see it.
const CONNECTED: u8 = 0;
const DISCONNECTED: u8 = 1;
const EXPIRED: u8 = 2;
const CLOSED: u8 = 3;
const AUTH_FAILED: u8 = 4;

fn state_code(s: zkc::SessionState) -> u8 {
    match s {
        zkc::SessionState::SyncConnected => CONNECTED,
        zkc::SessionState::Disconnected | zkc::SessionState::ConnectedReadOnly => DISCONNECTED,
        zkc::SessionState::Expired => EXPIRED,
        zkc::SessionState::AuthFailed => AUTH_FAILED,
        zkc::SessionState::Closed => CLOSED,
    }
}

/// Human name of a state code.
pub(crate) fn state_name(code: u8) -> &'static str {
    match code {
        CONNECTED => "connected",
        DISCONNECTED => "disconnected",
        EXPIRED => "expired",
        AUTH_FAILED => "rejected (authentication failed)",
        _ => "closed",
    }
}

/// One ZooKeeper session with its runtime.
pub(crate) struct ZkSession {
    rt: tokio::runtime::Runtime,
    client: Option<zkc::Client>,
    state: Arc<AtomicU8>,
    hosts: String,
    auth: bool,
    op_timeout: Duration,
    /// The session's id (the `ephemeralOwner` of the nodes it creates).
    session_id: i64,
    /// The session timeout the server granted.
    negotiated_timeout: Duration,
}

impl ZkSession {
    /// Connects (failing fast when no server answers) and starts watching the session state.
    pub(crate) fn connect(opts: &ZkOptions) -> Result<ZkSession, WorkerError> {
        let unreachable = |reason: String| {
            WorkerError::from(ZkError::Unreachable {
                hosts: opts.hosts.clone(),
                reason,
            })
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("leafctl-zk")
            .enable_all()
            .build()
            .map_err(|e| unreachable(format!("cannot start the client runtime: {e}")))?;
        // A silent connection counts as lost after 2/5 of the session timeout (at least 1.5 s,
        // so a loaded server is not dropped at once); still well before the session can expire.
        let connection_timeout = (opts.session_timeout * 2 / 5)
            .max(Duration::from_millis(1_500))
            .min(opts.session_timeout);
        let mut connector = zkc::Client::connector()
            .with_session_timeout(opts.session_timeout)
            .with_connection_timeout(connection_timeout)
            .with_fail_eagerly();
        if let Some(auth) = &opts.auth {
            connector = connector.with_auth("digest", auth.as_bytes());
        }
        // Fail fast when no server accepts connections; when one does but is slow to open a
        // session (loaded, just started), keep trying for a while before giving up.
        let hosts = opts.hosts.clone();
        let deadline = opts.session_timeout + Duration::from_secs(2);
        let retry_until =
            std::time::Instant::now() + opts.session_timeout.max(Duration::from_secs(10));
        let client = rt.block_on(async move {
            loop {
                let attempt =
                    tokio::time::timeout(deadline, connector.clone().connect(&hosts)).await;
                match attempt {
                    Ok(Err(zkc::Error::NoHosts))
                        if std::time::Instant::now() < retry_until && any_listening(&hosts) =>
                    {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                    Ok(r) => return r.map_err(|e| unreachable(e.to_string())),
                    Err(_) => {
                        return Err(unreachable(format!(
                            "no session within {} ms",
                            deadline.as_millis()
                        )));
                    }
                }
            }
        })?;
        let session_id = client.session_id().0;
        let negotiated_timeout = client.session_timeout();
        let state = Arc::new(AtomicU8::new(state_code(client.state())));
        let mut watcher = client.state_watcher();
        let shared = state.clone();
        rt.spawn(async move {
            loop {
                let s = watcher.changed().await;
                shared.store(state_code(s), Ordering::SeqCst);
                if s.is_terminated() {
                    break;
                }
            }
        });
        Ok(ZkSession {
            rt,
            client: Some(client),
            state,
            hosts: opts.hosts.clone(),
            auth: opts.auth.is_some(),
            // The client itself gives a silent connection up after 2/5 of the session timeout.
            op_timeout: (opts.session_timeout * 2 / 5).max(Duration::from_millis(500)),
            session_id,
            negotiated_timeout,
        })
    }

    /// The connection state code, updated as the client notices changes.
    pub(crate) fn state(&self) -> u8 {
        self.state.load(Ordering::SeqCst)
    }

    pub(crate) fn state_flag(&self) -> Arc<AtomicU8> {
        self.state.clone()
    }

    /// True once the session can never come back (expired, closed, rejected).
    pub(crate) fn terminated(&self) -> bool {
        self.state() >= EXPIRED
    }

    pub(crate) fn connected(&self) -> bool {
        self.state() == CONNECTED
    }

    /// The session's id: the `ephemeral_owner` of the ephemeral nodes it created.
    pub(crate) fn session_id(&self) -> i64 {
        self.session_id
    }

    /// The session timeout the server granted (it may differ from the one asked for).
    pub(crate) fn negotiated_timeout(&self) -> Duration {
        self.negotiated_timeout
    }

    fn client(&self) -> Result<&zkc::Client, WorkerError> {
        self.client.as_ref().ok_or_else(|| {
            WorkerError::from(ZkError::Unreachable {
                hosts: self.hosts.clone(),
                reason: "session closed".into(),
            })
        })
    }

    fn run<T>(
        &self,
        action: &'static str,
        path: &str,
        fut: impl Future<Output = Result<T, zkc::Error>>,
    ) -> Result<Result<T, zkc::Error>, WorkerError> {
        let timeout = self.op_timeout;
        match self
            .rt
            .block_on(async move { tokio::time::timeout(timeout, fut).await })
        {
            Ok(r) => Ok(r),
            Err(_) => Err(WorkerError::from(ZkError::Request {
                action,
                path: path.to_string(),
                reason: format!("no answer within {} ms", timeout.as_millis()),
            })),
        }
    }

    fn fail(action: &'static str, path: &str, e: zkc::Error) -> WorkerError {
        match e {
            zkc::Error::NoAuth => WorkerError::from(ZkError::NotAuthorized {
                path: path.to_string(),
            }),
            other => WorkerError::from(ZkError::Request {
                action,
                path: path.to_string(),
                reason: other.to_string(),
            }),
        }
    }

    fn acls(&self) -> zkc::Acls<'static> {
        if self.auth {
            zkc::Acls::creator_all()
        } else {
            zkc::Acls::anyone_all()
        }
    }

    /// `mkdir -p` with leafctl's ACL. With credentials, a missing top-level node (`/snowflake`,
    /// shared with Leaf and with other names and their credentials) is created so that anyone
    /// may read it and create a namespace below it, but only these credentials may change or
    /// delete what is in it; everything below gets the creator-only ACL.
    pub(crate) fn mkdir(&self, path: &str) -> Result<(), WorkerError> {
        let client = self.client()?;
        if self.auth
            && let Some(top) = path
                .strip_prefix('/')
                .and_then(|p| p.split_once('/'))
                .map(|(top, _)| format!("/{top}"))
        {
            static SHARED_TOP: std::sync::LazyLock<[zkc::Acl; 2]> =
                std::sync::LazyLock::new(|| {
                    [
                        zkc::Acl::new(zkc::Permission::ALL, zkc::AuthId::new("auth", "")),
                        zkc::Acl::new(
                            zkc::Permission::READ | zkc::Permission::CREATE,
                            zkc::AuthId::anyone(),
                        ),
                    ]
                });
            let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(&*SHARED_TOP));
            match self.run("create", &top, client.create(&top, b"", &opts))? {
                Ok(_) | Err(zkc::Error::NodeExists) => {}
                Err(e) => return Err(Self::fail("create", &top, e)),
            }
        }
        let opts = zkc::CreateMode::Persistent.with_acls(self.acls());
        self.run("mkdir", path, client.mkdir(path, &opts))?
            .map_err(|e| Self::fail("mkdir", path, e))
    }

    /// Creates a node; `Ok(None)` when it already exists. Returns the created path.
    pub(crate) fn create(
        &self,
        path: &str,
        data: &[u8],
        mode: zkc::CreateMode,
    ) -> Result<Option<(String, zkc::Stat)>, WorkerError> {
        let client = self.client()?;
        let opts = mode.with_acls(self.acls());
        match self.run("create", path, client.create(path, data, &opts))? {
            Ok((stat, seq)) => {
                let created = if seq.into_i64() >= 0 {
                    format!("{path}{seq}")
                } else {
                    path.to_string()
                };
                Ok(Some((created, stat)))
            }
            Err(zkc::Error::NodeExists) => Ok(None),
            Err(e) => Err(Self::fail("create", path, e)),
        }
    }

    /// Reads a node; `Ok(None)` when it does not exist.
    pub(crate) fn get(&self, path: &str) -> Result<Option<(Vec<u8>, zkc::Stat)>, WorkerError> {
        let client = self.client()?;
        match self.run("read", path, client.get_data(path))? {
            Ok(v) => Ok(Some(v)),
            Err(zkc::Error::NoNode) => Ok(None),
            Err(e) => Err(Self::fail("read", path, e)),
        }
    }

    /// Writes a node's data, optionally only at `version`.
    pub(crate) fn set(
        &self,
        path: &str,
        data: &[u8],
        version: Option<i32>,
    ) -> Result<zkc::Stat, WorkerError> {
        let client = self.client()?;
        self.run("write", path, client.set_data(path, data, version))?
            .map_err(|e| Self::fail("write", path, e))
    }

    /// Writes a node's data only at `version`; `Ok(None)` when it is at another version.
    pub(crate) fn set_if(
        &self,
        path: &str,
        data: &[u8],
        version: i32,
    ) -> Result<Option<zkc::Stat>, WorkerError> {
        let client = self.client()?;
        match self.run("write", path, client.set_data(path, data, Some(version)))? {
            Ok(stat) => Ok(Some(stat)),
            Err(zkc::Error::BadVersion) => Ok(None),
            Err(e) => Err(Self::fail("write", path, e)),
        }
    }

    /// Deletes a node; `Ok(false)` when it was not there.
    pub(crate) fn delete(&self, path: &str, version: Option<i32>) -> Result<bool, WorkerError> {
        let client = self.client()?;
        match self.run("delete", path, client.delete(path, version))? {
            Ok(()) => Ok(true),
            Err(zkc::Error::NoNode) => Ok(false),
            Err(e) => Err(Self::fail("delete", path, e)),
        }
    }

    /// Lists children; empty when the node does not exist.
    pub(crate) fn children(&self, path: &str) -> Result<Vec<String>, WorkerError> {
        let client = self.client()?;
        match self.run("list", path, client.list_children(path))? {
            Ok(v) => Ok(v),
            Err(zkc::Error::NoNode) => Ok(Vec::new()),
            Err(e) => Err(Self::fail("list", path, e)),
        }
    }

    /// ZooKeeper's own clock: creates and deletes a scratch node and returns its ctime, with the
    /// local times before and after the round trip.
    pub(crate) fn server_time(
        &self,
        root: &str,
        now_ms: impl Fn() -> i64,
    ) -> Result<(i64, i64, i64), WorkerError> {
        self.mkdir(root)?;
        let before = now_ms();
        let created = self.create(
            &format!("{root}/clock-"),
            b"",
            zkc::CreateMode::EphemeralSequential,
        )?;
        let after = now_ms();
        let Some((path, stat)) = created else {
            return Err(WorkerError::from(ZkError::Request {
                action: "create",
                path: format!("{root}/clock-"),
                reason: "sequential node already exists".into(),
            }));
        };
        let _ = self.delete(&path, None);
        Ok((before, stat.ctime, after))
    }

    /// Closes the session (deleting its ephemeral nodes at once) and waits briefly for it.
    pub(crate) fn close(&mut self) {
        if let Some(client) = self.client.take() {
            let mut watcher = client.state_watcher();
            drop(client);
            let _ = self.rt.block_on(async move {
                tokio::time::timeout(Duration::from_secs(3), async {
                    loop {
                        if watcher.changed().await.is_terminated() {
                            break;
                        }
                    }
                })
                .await
            });
        }
    }
}

impl Drop for ZkSession {
    fn drop(&mut self) {
        self.close();
    }
}

/// True when at least one host of the connect string accepts a TCP connection within 1 s.
fn any_listening(hosts: &str) -> bool {
    use std::net::{TcpStream, ToSocketAddrs};
    let list = hosts.split('/').next().unwrap_or(hosts);
    list.split(',').any(|h| {
        let h = h.trim().trim_start_matches("tcp://");
        let with_port = if h.contains(':') {
            h.to_string()
        } else {
            format!("{h}:2181")
        };
        with_port.to_socket_addrs().is_ok_and(|mut addrs| {
            addrs.any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok())
        })
    })
}

/// Splits Leaf's `{ip}:{port}-{seq}` child name.
pub(crate) fn parse_forever_child(child: &str) -> Option<(String, u64)> {
    let (identity, seq) = child.rsplit_once('-')?;
    if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((identity.to_string(), seq.parse().ok()?))
}

/// Clock offsets (reported time minus ZooKeeper's time of the write, ms) of peers whose nodes
/// ZooKeeper saw written in the 10 s before `zk_now_ms` (forever nodes and leases), except
/// `skip_identity`. Comparing each report with the server's own timestamp of the same write
/// removes the age of the report from the comparison.
pub(crate) fn live_peer_offsets(
    s: &ZkSession,
    root: &str,
    zk_now_ms: i64,
    skip_identity: Option<&str>,
) -> Result<Vec<i64>, WorkerError> {
    const RECENT_MS: i64 = 10_000;
    let mut out = Vec::new();
    let mut consider = |path: String, identity: Option<String>| -> Result<(), WorkerError> {
        if identity.is_some() && identity.as_deref() == skip_identity {
            return Ok(());
        }
        if let Some((data, stat)) = s.get(&path)?
            && zk_now_ms - stat.mtime <= RECENT_MS
            && let Ok(d) = NodeData::parse(&data)
            && d.timestamp > 0
        {
            out.push(d.timestamp - stat.mtime);
        }
        Ok(())
    };
    for child in s.children(&format!("{root}/forever"))? {
        if let Some((identity, _)) = parse_forever_child(&child) {
            consider(format!("{root}/forever/{child}"), Some(identity))?;
        }
    }
    for child in s.children(&format!("{root}/workers"))? {
        consider(format!("{root}/workers/{child}"), None)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::node::NodeData;

    #[test]
    fn leaf_child_names_parse() {
        assert_eq!(
            parse_forever_child("10.0.0.1:8080-0000000007"),
            Some(("10.0.0.1:8080".to_string(), 7))
        );
        assert_eq!(parse_forever_child("10.0.0.1:8080"), None);
        assert_eq!(parse_forever_child("10.0.0.1:8080-x1"), None);
    }

    #[test]
    fn leaf_json_round_trips() {
        let raw = br#"{"ip":"10.0.0.1","port":"8080","timestamp":1700000000000}"#;
        let d = NodeData::parse(raw).unwrap();
        assert_eq!(d.timestamp, 1_700_000_000_000);
        assert_eq!(d.port, "8080");
        assert_eq!(d.to_bytes(), raw.to_vec());
    }
}
