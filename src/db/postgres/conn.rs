//! One reading of `postgres://` URLs and one connection type for everything in leafctl that
//! talks to PostgreSQL (the segment store and the worker registry), so they agree on hosts,
//! TLS, timeouts and where the password comes from, and scrub it from messages the same way.
//!
//! The client is `tokio-postgres` on one small runtime shared by every connection of the
//! process; each statement is waited for with [`IO_TIMEOUT`], so a frozen server is an error
//! within seconds, as on MySQL, never a hang.

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::types::{ToSql, Type};

pub(crate) use crate::db::{CONNECT_TIMEOUT, IO_TIMEOUT, LOCK_WAIT_TIMEOUT_S};
use crate::text::{scrub, url_password};

/// PostgreSQL's port when a URL names none.
const DEFAULT_PORT: u16 = 5432;

/// How a connection uses TLS: libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it, plain otherwise (libpq's default); the certificate is not
    /// checked unless `sslrootcert` is given.
    Prefer,
    /// TLS or nothing; the certificate is not checked unless `sslrootcert` is given (then as
    /// `verify-ca`), as in libpq.
    Require,
    /// TLS with a certificate signed by a trusted CA, for any host name.
    VerifyCa,
    /// TLS with a certificate signed by a trusted CA, for the host name connected to.
    VerifyFull,
}

/// Connection settings read from a URL.
#[derive(Debug, Clone)]
pub(crate) struct PgTarget {
    /// The hosts of the URL, in its order.
    pub hosts: Vec<(String, u16)>,
    pub user: String,
    /// The password in use (the override, else the URL's), to send and to scrub from messages.
    pub password: Option<String>,
    pub dbname: String,
    pub ssl: SslMode,
    /// `sslrootcert`: a PEM file of CA certificates; `None` for the system's roots.
    pub root_cert: Option<PathBuf>,
    pub connect_timeout: Duration,
    pub application_name: String,
    /// Only a host that takes writes will do (`target_session_attrs=read-write`, the default
    /// with several hosts): a standby is passed over as a host that cannot serve.
    pub read_write: bool,
    /// `postgres://user@host:port[,host:port...]/db`, for messages (never with a password).
    pub name: String,
    /// The TLS configuration, made at the first connection that could make it (reading the
    /// CA file or the system's roots) and shared by every later one. A failure is not kept:
    /// a CA file being replaced fails one connection, not every one until a restart.
    tls: Arc<OnceLock<Option<rustls::ClientConfig>>>,
    /// A connection pooler in front (PgBouncer) refused the `options` startup parameter once:
    /// later connections do without it (the lock wait is then bounded by [`IO_TIMEOUT`] alone).
    pooler_refuses_options: Arc<AtomicBool>,
}

/// The URL parameters leafctl reads; any other is refused rather than silently ignored.
const KNOWN_PARAMS: &str = "host, port, user, dbname, sslmode, sslrootcert, connect_timeout, \
     application_name, target_session_attrs";

/// Reads `postgres://user[:password]@host[:port][,host[:port]...]/database[?param=value&...]`
/// (also `postgresql://`), libpq's URL form; `password` replaces one in the URL. Several hosts
/// are tried in order; with more than one, only a writable one is used unless
/// `target_session_attrs=any` says otherwise. As in libpq, a host that starts with `/` is the
/// directory of the server's Unix socket (`postgres://leaf@%2Frun%2Fpostgresql/leaf`, or
/// `postgres:///leaf?host=/run/postgresql&user=leaf`), and the `host`, `port`, `user` and
/// `dbname` parameters stand in for the URL's parts. The error is a reason, free of the
/// password.
pub(crate) fn parse(url: &str, password: Option<&str>) -> Result<PgTarget, String> {
    let scrub_url = |reason: String| match url_password(url) {
        Some(p) => scrub(reason, Some(&p)),
        None => reason,
    };
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or("expected postgres://user@host:port/database")?;
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    // `user@h1:p1,h2:p2/db`: the authority ends at the first `/` after the last `@`.
    let at = base.rfind('@').map_or(0, |i| i + 1);
    let slash = base[at..].find('/').map_or(base.len(), |i| at + i);
    let (creds, hosts, path) = (
        &base[..at.saturating_sub(1)],
        &base[at..slash],
        &base[slash..],
    );
    let (mut user, url_pass) = match creds.split_once(':') {
        Some((u, p)) => (decode(u)?, Some(decode(p)?)),
        None => (decode(creds)?, None),
    };
    let mut dbname = decode(path.strip_prefix('/').unwrap_or(path))?;
    // libpq's parameters that stand in for the URL's parts (a socket directory has no place
    // in a URL's authority but percent-encoded).
    let (mut host_param, mut port_param) = (None, None);
    for pair in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "host" => host_param = Some(decode(value)?),
            "port" => port_param = Some(decode(value)?),
            "user" => user = decode(value)?,
            "dbname" => dbname = decode(value)?,
            _ => {}
        }
    }
    if user.is_empty() {
        return Err("no user: write postgres://USER@host:port/database (or ?user=USER)".into());
    }
    if dbname.is_empty() {
        return Err("no database named: write postgres://user@host:port/DATABASE".into());
    }
    let hosts = match (hosts.trim(), host_param.as_deref()) {
        (h, None) => h.to_string(),
        ("", Some(p)) => p.to_string(),
        (_, Some(_)) => {
            return Err(scrub_url(
                "the host is given twice (in the URL and as ?host=): keep one".into(),
            ));
        }
    };
    if hosts.is_empty() {
        return Err(
            "no host: write postgres://user@host:port/database, or ?host=/path/of/the/socket/directory for a Unix socket"
                .into(),
        );
    }
    let mut list = Vec::new();
    for host in hosts.split(',') {
        let host = decode(host.trim())?;
        let (name, port) = parse_host(&host).map_err(scrub_url)?;
        list.push((name, port));
    }
    if let Some(p) = port_param {
        let port = p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("port={p}: the port must be a number from 1 to 65535"))?;
        for (_, host_port) in &mut list {
            *host_port = port;
        }
    }
    let mut ssl = SslMode::Prefer;
    let mut root_cert = None;
    let mut connect_timeout = CONNECT_TIMEOUT;
    let mut application_name = "leafctl".to_string();
    let mut read_write = list.len() > 1;
    for pair in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = decode(value)?;
        match key {
            "sslmode" => {
                ssl = match value.as_str() {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(scrub_url(format!(
                            "sslmode={other}: use disable, prefer, require, verify-ca or verify-full"
                        )));
                    }
                }
            }
            "sslrootcert" if value == "system" => root_cert = None,
            "sslrootcert" => {
                if value.is_empty() {
                    return Err(
                        "sslrootcert= needs the path of a PEM file of CA certificates".into(),
                    );
                }
                let path = PathBuf::from(&value);
                if let Err(e) = std::fs::File::open(&path) {
                    return Err(format!("cannot read sslrootcert {}: {e}", path.display()));
                }
                root_cert = Some(path);
            }
            "connect_timeout" => {
                let secs: u64 = value
                    .parse()
                    .ok()
                    .filter(|s| (1..=3600).contains(s))
                    .ok_or_else(|| {
                        format!("connect_timeout={value}: give whole seconds from 1 to 3600")
                    })?;
                connect_timeout = Duration::from_secs(secs);
            }
            "application_name" => application_name = value,
            "host" | "port" | "user" | "dbname" => {}
            "target_session_attrs" => {
                read_write = match value.as_str() {
                    "read-write" | "primary" => true,
                    "any" => false,
                    other => {
                        return Err(scrub_url(format!(
                            "target_session_attrs={other}: use read-write (a writable host) or any"
                        )));
                    }
                }
            }
            other => {
                return Err(scrub_url(format!(
                    "unknown parameter {other:?}: leafctl reads {KNOWN_PARAMS}"
                )));
            }
        }
    }
    // libpq: a root certificate given makes `prefer`/`require` check the certificate's chain.
    if root_cert.is_some() && matches!(ssl, SslMode::Prefer | SslMode::Require) {
        ssl = if ssl == SslMode::Prefer {
            SslMode::Prefer
        } else {
            SslMode::VerifyCa
        };
    }
    let names: Vec<String> = list
        .iter()
        .map(|(h, p)| {
            if is_socket_dir(h) {
                // A socket directory as the URL can carry it: percent-encoded.
                format!("{}:{p}", h.replace('%', "%25").replace('/', "%2F"))
            } else if h.contains(':') {
                format!("[{h}]:{p}")
            } else {
                format!("{h}:{p}")
            }
        })
        .collect();
    let name = format!("postgres://{user}@{}/{dbname}", names.join(","));
    Ok(PgTarget {
        hosts: list,
        password: password.map(str::to_string).or(url_pass),
        user,
        dbname,
        ssl,
        root_cert,
        connect_timeout,
        application_name,
        read_write,
        name,
        tls: Arc::default(),
        pooler_refuses_options: Arc::default(),
    })
}

/// Whether a host is the directory of a Unix socket (libpq: it starts with `/`).
pub(crate) fn is_socket_dir(host: &str) -> bool {
    host.starts_with('/')
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`, or a socket directory `/dir` or `/dir:port`.
fn parse_host(host: &str) -> Result<(String, u16), String> {
    if host.is_empty() {
        return Err(
            "an empty host: write postgres://user@host:port[,host:port...]/database".into(),
        );
    }
    let (name, port) = if let Some(v6) = host.strip_prefix('[') {
        let (addr, tail) = v6
            .split_once(']')
            .ok_or_else(|| format!("host {host:?}: an IPv6 address ends with ]"))?;
        (addr, tail.strip_prefix(':'))
    } else {
        match host.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host, None),
        }
    };
    let port =
        match port {
            None => DEFAULT_PORT,
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                format!("host {host:?}: the port must be a number from 1 to 65535")
            })?,
        };
    if name.is_empty() {
        return Err(format!("host {host:?} has no name"));
    }
    Ok((name.to_string(), port))
}

/// Percent-decoding of a URL part (`%40` is `@`).
fn decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("a % in the URL is not followed by two hex digits")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the URL decodes to text that is not UTF-8".into())
}

/// PgBouncer's own errors (not PostgreSQL's), as its source words them: what a pooler in front
/// says, for a message that names it.
const POOLER_ERRORS: &[&str] = &[
    "pgbouncer",
    "unsupported startup parameter",
    "no more connections allowed",
    "query_wait_timeout",
    "server login has been failing",
    "client_idle_timeout",
    "no such database",
    "not allowed in statement pooling mode",
];

/// A note naming the pooler when `message` is one of PgBouncer's errors.
fn pooler_note(message: &str) -> Option<&'static str> {
    let lower = message.to_lowercase();
    POOLER_ERRORS.iter().any(|p| lower.contains(p)).then_some(
        " (said by a connection pooler such as PgBouncer in front of PostgreSQL, not by PostgreSQL: check the pooler's settings and log)",
    )
}

/// What went wrong with a statement or a connection, sorted by what the caller can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// No answer within [`IO_TIMEOUT`] (or the connect timeout): the connection is abandoned.
    TimedOut,
    /// The connection failed or broke.
    Connection,
    /// TLS failed: the certificate was refused, or the server does not offer TLS.
    Tls,
    /// The host is a standby (read-only) and a writable one was asked for.
    ReadOnly,
    /// The server answered with an error (its SQLSTATE in `code`).
    Server,
}

/// A failure, with its detail already free of the password.
#[derive(Debug, Clone)]
pub(crate) struct PgFailure {
    pub kind: FailureKind,
    pub detail: String,
    /// The SQLSTATE of a server error.
    pub code: Option<String>,
}

impl PgFailure {
    fn new(kind: FailureKind, detail: String) -> PgFailure {
        PgFailure {
            kind,
            detail,
            code: None,
        }
    }

    fn timed_out(what: &str, after: Duration) -> PgFailure {
        PgFailure::new(
            FailureKind::TimedOut,
            format!(
                "no answer to the {what} within {} s (connected, but the server does not respond)",
                after.as_secs()
            ),
        )
    }

    fn from_error(e: &tokio_postgres::Error, password: Option<&str>) -> PgFailure {
        if let Some(db) = e.as_db_error() {
            let mut detail = db.message().to_string();
            if let Some(more) = db.detail() {
                detail.push_str(": ");
                detail.push_str(more);
            }
            if let Some(note) = pooler_note(&detail) {
                detail.push_str(note);
            }
            return PgFailure {
                kind: FailureKind::Server,
                detail: scrub(detail, password),
                code: Some(db.code().code().to_string()),
            };
        }
        // The whole chain: tokio-postgres's own text is often just "error connecting to server".
        let mut detail = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            let text = s.to_string();
            if !detail.contains(&text) {
                detail.push_str(": ");
                detail.push_str(&text);
            }
            source = s.source();
        }
        if detail.contains("password missing") {
            // tokio-postgres's words for "the server asked for a password and none was given".
            detail = format!("the server asks for a password and none was given ({detail})");
        }
        let lower = detail.to_lowercase();
        let kind = if lower.contains("certificate")
            || lower.contains("tls")
            || lower.contains("ssl")
            || lower.contains("handshake")
        {
            FailureKind::Tls
        } else {
            FailureKind::Connection
        };
        PgFailure::new(kind, scrub(detail, password))
    }

    /// Whether a connection pooler refused the `options` startup parameter (PgBouncer without
    /// `ignore_startup_parameters = options`).
    fn refused_startup_options(&self) -> bool {
        self.kind == FailureKind::Server
            && self.detail.contains("unsupported startup parameter")
            && self.detail.contains("options")
    }

    /// Whether another host of the list might do what this one could not: the connection
    /// failed, timed out or broke, the host is a standby, or the server is shutting down,
    /// starting up, or refuses writes.
    pub fn host_cannot_serve(&self) -> bool {
        match self.kind {
            FailureKind::TimedOut | FailureKind::Connection | FailureKind::ReadOnly => true,
            FailureKind::Tls => false,
            FailureKind::Server => self.code.as_deref().is_some_and(|c| {
                // 25006 read_only_sql_transaction, 57P01 admin_shutdown, 57P02 crash_shutdown,
                // 57P03 cannot_connect_now, class 08: connection exceptions.
                matches!(c, "25006" | "57P01" | "57P02" | "57P03") || c.starts_with("08")
            }),
        }
    }

    /// A lost write conflict that trying again resolves: 40001 serialization_failure (what
    /// PostgreSQL-wire distributed engines answer under contention), 40P01 deadlock_detected.
    pub fn is_conflict(&self) -> bool {
        matches!(self.code.as_deref(), Some("40001" | "40P01"))
    }

    /// The SQLSTATE, if the server answered with an error.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }
}

impl std::fmt::Display for PgFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} (SQLSTATE {code})", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

/// The runtime every PostgreSQL connection of the process runs on: one worker thread drives
/// the connections' sockets; statements are awaited by the calling thread.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("leafctl-postgres")
            .enable_all()
            .build()
            .expect("start the PostgreSQL client's runtime (a thread and an epoll instance)")
    })
}

/// Runs `fut` on the runtime and waits for it, from any thread: a plain thread blocks on it;
/// one that drives another tokio runtime (a server's handler) waits on a channel, since tokio
/// forbids `block_on` there.
fn run<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> T {
    let rt = runtime();
    if tokio::runtime::Handle::try_current().is_err() {
        return rt.block_on(fut);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    // The runtime is static and never shut down: the task always sends.
    rx.recv()
        .expect("the PostgreSQL runtime dropped a statement")
}

/// A value bound to a statement. Integers are sent as `bigint` and text as `text`; the SQL
/// casts its parameters (`$1::bigint`) so the server types them the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Param {
    Text(String),
    OptText(Option<String>),
    Int(i64),
    OptInt(Option<i64>),
}

impl Param {
    /// The type it is sent as (`text` or `bigint`), so that the server needs no describe
    /// round trip to learn it.
    fn ty(&self) -> Type {
        match self {
            Param::Text(_) | Param::OptText(_) => Type::TEXT,
            Param::Int(_) | Param::OptInt(_) => Type::INT8,
        }
    }

    fn as_sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Param::Text(t) => t,
            Param::OptText(t) => t,
            Param::Int(i) => i,
            Param::OptInt(i) => i,
        }
    }
}

impl From<&str> for Param {
    fn from(s: &str) -> Param {
        Param::Text(s.to_string())
    }
}
impl From<i64> for Param {
    fn from(i: i64) -> Param {
        Param::Int(i)
    }
}
impl From<Option<&str>> for Param {
    fn from(s: Option<&str>) -> Param {
        Param::OptText(s.map(str::to_string))
    }
}
impl From<Option<i64>> for Param {
    fn from(i: Option<i64>) -> Param {
        Param::OptInt(i)
    }
}

/// `?` placeholders (the SQL the stores share) as PostgreSQL's `$1`, `$2`, ...; a `?` inside a
/// quoted literal is left alone.
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut n, mut quoted) = (0, false);
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            c => out.push(c),
        }
    }
    out
}

/// One connection to one host of a [`PgTarget`]. A statement that times out or breaks the
/// connection ends it (a late answer can never be read as the next statement's); dropping it
/// closes the socket.
pub(crate) struct PgConn {
    client: Arc<tokio_postgres::Client>,
    /// The host of the list it is connected to.
    pub host: usize,
    task: tokio::task::AbortHandle,
    broken: AtomicBool,
    password: Option<String>,
}

impl Drop for PgConn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PgConn {
    /// Connects to host `host` of `target`, with `options` (`-c name=value ...`, PostgreSQL's
    /// startup options) besides leafctl's own. With `target.read_write`, a standby is refused
    /// as [`FailureKind::ReadOnly`].
    pub fn connect(target: &PgTarget, host: usize, options: &str) -> Result<PgConn, PgFailure> {
        let skip = target.pooler_refuses_options.load(Ordering::Relaxed);
        match Self::connect_with(target, host, options, !skip) {
            Err(f) if !skip && f.refused_startup_options() => {
                target.pooler_refuses_options.store(true, Ordering::Relaxed);
                if !options.is_empty() {
                    // A caller's own options are not optional: say what refused them and what
                    // works. (The worker registry passes none: it sets its session's settings
                    // with `set_config` and reads them back.)
                    return Err(PgFailure::new(
                        FailureKind::Server,
                        format!(
                            "{f}: a connection pooler (PgBouncer) in front of PostgreSQL refuses the startup parameter the worker registry needs ({options}); connect the registry to PostgreSQL directly"
                        ),
                    ));
                }
                Self::connect_with(target, host, options, false)
            }
            other => other,
        }
    }

    /// [`PgConn::connect`], sending the `options` startup parameter or not.
    fn connect_with(
        target: &PgTarget,
        host: usize,
        options: &str,
        send_options: bool,
    ) -> Result<PgConn, PgFailure> {
        let (name, port) = &target.hosts[host];
        // libpq: TLS is not used over a Unix socket, whatever sslmode says.
        let socket = is_socket_dir(name);
        let mut config = tokio_postgres::Config::new();
        config
            .host(name)
            .port(*port)
            .user(&target.user)
            .dbname(&target.dbname)
            .application_name(&target.application_name)
            .connect_timeout(target.connect_timeout)
            .keepalives_idle(Duration::from_secs(30))
            .ssl_mode(match target.ssl {
                _ if socket => tokio_postgres::config::SslMode::Disable,
                SslMode::Disable => tokio_postgres::config::SslMode::Disable,
                SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
                _ => tokio_postgres::config::SslMode::Require,
            });
        if send_options {
            config.options(format!("-c lock_timeout={LOCK_WAIT_TIMEOUT_S}s {options}").trim());
        }
        if let Some(p) = &target.password {
            config.password(p);
        }
        let password = target.password.clone();
        let tls = match target.tls.get() {
            _ if socket => None,
            Some(made) => made.clone(),
            None => {
                let made = tls_config(target)?;
                target.tls.get_or_init(|| made).clone()
            }
        };
        let pw = password.clone();
        let wait = target.connect_timeout + IO_TIMEOUT;
        let connected = run(async move {
            let connect = async {
                match tls {
                    None => config
                        .connect(tokio_postgres::NoTls)
                        .await
                        .map(|(c, conn)| {
                            (
                                c,
                                tokio::spawn(async move { drop(conn.await) }).abort_handle(),
                            )
                        }),
                    Some(tls) => {
                        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
                        config.connect(tls).await.map(|(c, conn)| {
                            (
                                c,
                                tokio::spawn(async move { drop(conn.await) }).abort_handle(),
                            )
                        })
                    }
                }
            };
            match tokio::time::timeout(wait, connect).await {
                Err(_) => Err(PgFailure::timed_out("connection", wait)),
                Ok(r) => r.map_err(|e| PgFailure::from_error(&e, pw.as_deref())),
            }
        })?;
        let conn = PgConn {
            client: Arc::new(connected.0),
            host,
            task: connected.1,
            broken: AtomicBool::new(false),
            password,
        };
        if target.read_write {
            let rows = conn.query("SHOW transaction_read_only", vec![])?;
            let read_only: Option<String> = rows.first().and_then(|r| r.try_get(0).ok());
            if read_only.as_deref() != Some("off") {
                return Err(PgFailure::new(
                    FailureKind::ReadOnly,
                    "the host is a standby (read-only); a writable one is needed".into(),
                ));
            }
        }
        Ok(conn)
    }

    /// Whether the connection can take another statement.
    pub fn usable(&self) -> bool {
        !self.broken.load(Ordering::Relaxed) && !self.client.is_closed()
    }

    fn call<T: Send + 'static>(
        &self,
        what: &'static str,
        fut: impl Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    ) -> Result<T, PgFailure> {
        let out = run(async move { tokio::time::timeout(IO_TIMEOUT, fut).await });
        let failure = match out {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => PgFailure::from_error(&e, self.password.as_deref()),
            Err(_) => PgFailure::timed_out(what, IO_TIMEOUT),
        };
        if failure.kind != FailureKind::Server || failure.host_cannot_serve() {
            self.broken.store(true, Ordering::Relaxed);
            self.task.abort();
        }
        Err(failure)
    }

    /// Runs a statement that returns rows, as an unnamed statement in one round trip (parse,
    /// bind, execute and sync sent together): nothing is prepared that could outlive it, so it
    /// works the same through a transaction or statement pool (PgBouncer), and a claim costs
    /// one round trip.
    pub fn query(
        &self,
        sql: &str,
        params: Vec<Param>,
    ) -> Result<Vec<tokio_postgres::Row>, PgFailure> {
        let (sql, client) = (sql.to_string(), self.client.clone());
        self.call("statement", async move {
            let typed: Vec<(&(dyn ToSql + Sync), Type)> =
                params.iter().map(|p| (p.as_sql(), p.ty())).collect();
            client.query_typed(&sql, &typed).await
        })
    }

    /// Runs a statement and returns how many rows it changed (one round trip, unnamed, as
    /// [`PgConn::query`]).
    pub fn execute(&self, sql: &str, params: Vec<Param>) -> Result<u64, PgFailure> {
        let (sql, client) = (sql.to_string(), self.client.clone());
        self.call("statement", async move {
            let typed: Vec<(&(dyn ToSql + Sync), Type)> =
                params.iter().map(|p| (p.as_sql(), p.ty())).collect();
            client.execute_typed(&sql, &typed).await
        })
    }

    /// Runs statements without parameters (DDL), in one round trip.
    pub fn batch(&self, sql: &str) -> Result<(), PgFailure> {
        let (sql, client) = (sql.to_string(), self.client.clone());
        self.call("statement", async move { client.batch_execute(&sql).await })
    }
}

/// The rustls configuration `sslmode` asks for; `None` for plain TCP.
fn tls_config(target: &PgTarget) -> Result<Option<rustls::ClientConfig>, PgFailure> {
    let tls_error = |detail: String| PgFailure::new(FailureKind::Tls, detail);
    let verify = match (target.ssl, &target.root_cert) {
        (SslMode::Disable, _) => return Ok(None),
        (SslMode::Prefer | SslMode::Require, None) => Verify::Nothing,
        (SslMode::Prefer | SslMode::Require | SslMode::VerifyCa, _) => Verify::Chain,
        (SslMode::VerifyFull, _) => Verify::Full,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(e.to_string()))?;
    let config = match verify {
        Verify::Nothing => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier {
                chain: None,
                provider,
            }))
            .with_no_client_auth(),
        Verify::Chain | Verify::Full => {
            let roots = Arc::new(roots(target.root_cert.as_ref()).map_err(tls_error)?);
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots,
                provider.clone(),
            )
            .build()
            .map_err(|e| tls_error(e.to_string()))?;
            if verify == Verify::Full {
                builder.with_webpki_verifier(webpki).with_no_client_auth()
            } else {
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(LibpqVerifier {
                        chain: Some(webpki),
                        provider,
                    }))
                    .with_no_client_auth()
            }
        }
    };
    Ok(Some(config))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    Nothing,
    Chain,
    Full,
}

/// The CA certificates to trust: `sslrootcert`'s, or the system's.
fn roots(file: Option<&PathBuf>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match file {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            for cert in certs {
                let cert = cert.map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
            if store.is_empty() {
                return Err(format!(
                    "sslrootcert {} holds no PEM certificate",
                    path.display()
                ));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err(
                    "no CA certificates found on this system: give sslrootcert=FILE".into(),
                );
            }
        }
    }
    Ok(store)
}

/// The certificate checks libpq makes short of `verify-full`: none for `sslmode=require` (and
/// `prefer`) without a root certificate (the connection is encrypted, the certificate not
/// checked), or the chain to a trusted CA without the name for `verify-ca`. The handshake's
/// signatures are checked either way.
#[derive(Debug)]
struct LibpqVerifier {
    /// `verify-ca`'s chain check; `None` checks no certificate.
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_in_libpq_form() {
        let t = parse(
            "postgresql://leaf:inurl@db1:5433,db2,[::1]:5434/leaf?sslmode=disable&connect_timeout=7",
            Some("over"),
        )
        .unwrap();
        assert_eq!(t.name, "postgres://leaf@db1:5433,db2:5432,[::1]:5434/leaf");
        assert_eq!(
            t.hosts,
            vec![
                ("db1".to_string(), 5433),
                ("db2".to_string(), 5432),
                ("::1".to_string(), 5434)
            ]
        );
        assert_eq!(t.password.as_deref(), Some("over"));
        assert_eq!(t.ssl, SslMode::Disable);
        assert_eq!(t.connect_timeout, Duration::from_secs(7));
        assert!(t.read_write, "several hosts: a writable one by default");
        let t = parse("postgres://le%40f:p%40ss@db/my%20db", None).unwrap();
        assert_eq!(
            (t.user.as_str(), t.password.as_deref(), t.dbname.as_str()),
            ("le@f", Some("p@ss"), "my db")
        );
        assert_eq!(t.ssl, SslMode::Prefer);
        assert!(!t.read_write, "one host: any");
        let t = parse("postgres://u@a,b/d?target_session_attrs=any", None).unwrap();
        assert!(!t.read_write);
        let t = parse("postgres://u@a/d?sslmode=verify-full", None).unwrap();
        assert_eq!(t.ssl, SslMode::VerifyFull);
    }

    /// Issue 36, item 5: libpq's two ways to name a Unix socket's directory.
    #[test]
    fn unix_sockets_in_libpq_form() {
        let t = parse("postgres://leaf@%2Ftmp%2Fpg:5433/leaf", None).unwrap();
        assert_eq!(t.hosts, vec![("/tmp/pg".to_string(), 5433)]);
        assert_eq!(t.name, "postgres://leaf@%2Ftmp%2Fpg:5433/leaf");
        // The name reads back as the same target.
        assert_eq!(parse(&t.name, None).unwrap().hosts, t.hosts);
        let t = parse("postgres:///leaf?host=/tmp/pg&user=leaf", None).unwrap();
        assert_eq!(t.hosts, vec![("/tmp/pg".to_string(), 5432)]);
        assert_eq!((t.user.as_str(), t.dbname.as_str()), ("leaf", "leaf"));
        let t = parse(
            "postgres://x@/d?host=%2Frun%2Fpg&port=6000&dbname=leaf&user=u",
            None,
        )
        .unwrap();
        assert_eq!(t.hosts, vec![("/run/pg".to_string(), 6000)]);
        assert_eq!((t.user.as_str(), t.dbname.as_str()), ("u", "leaf"));
        // TCP hosts are unchanged, and ?port= applies to them too.
        let t = parse("postgres://leaf@db/leaf?port=6543", None).unwrap();
        assert_eq!(t.hosts, vec![("db".to_string(), 6543)]);
        for (url, says) in [
            ("postgres:///leaf?user=leaf", "no host"),
            ("postgres:///leaf?host=/tmp/pg", "no user"),
            (
                "postgres://leaf@db/leaf?host=/tmp/pg",
                "the host is given twice",
            ),
            ("postgres://leaf@db/leaf?port=0", "port=0"),
        ] {
            let e = parse(url, None).err().unwrap();
            assert!(e.contains(says), "{url}: {e}");
        }
    }

    #[test]
    fn bad_urls_are_refused_without_the_password() {
        for (url, says) in [
            ("postgres://leaf:secret@db/", "no database"),
            ("postgres://:secret@db/leaf", "no user"),
            ("postgres://leaf:secret@db1,,db2/leaf", "empty host"),
            ("postgres://leaf:secret@db:99999/leaf", "port"),
            (
                "postgres://leaf:secret@db/leaf?sslmode=maybe",
                "sslmode=maybe",
            ),
            (
                "postgres://leaf:secret@db/leaf?sslcert=/x",
                "unknown parameter",
            ),
            (
                "postgres://leaf:secret@db/leaf?connect_timeout=0",
                "connect_timeout",
            ),
            (
                "postgres://leaf:secret@db/leaf?sslrootcert=/nonexistent.pem",
                "nonexistent",
            ),
            ("postgres://leaf:secret@[::1/leaf", "IPv6"),
            ("mysql://leaf:secret@db/leaf", "expected postgres://"),
        ] {
            let e = parse(url, None)
                .err()
                .unwrap_or_else(|| panic!("{url} parsed"));
            assert!(e.contains(says) && !e.contains("secret"), "{url}: {e}");
        }
    }

    #[test]
    fn placeholders_are_numbered_outside_literals() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE b > ? AND c LIKE ? ESCAPE '?' LIMIT ?"),
            "SELECT a FROM t WHERE b > $1 AND c LIKE $2 ESCAPE '?' LIMIT $3"
        );
    }

    #[test]
    fn failures_are_sorted_by_what_to_do() {
        let server = |code: &str| PgFailure {
            kind: FailureKind::Server,
            detail: String::new(),
            code: Some(code.into()),
        };
        assert!(server("25006").host_cannot_serve() && server("08006").host_cannot_serve());
        assert!(!server("42P01").host_cannot_serve() && !server("23505").host_cannot_serve());
        assert!(server("40001").is_conflict() && server("40P01").is_conflict());
        assert!(!server("55P03").is_conflict());
        assert!(PgFailure::timed_out("x", IO_TIMEOUT).host_cannot_serve());
        assert!(!PgFailure::new(FailureKind::Tls, String::new()).host_cannot_serve());
    }
}

/// Parser fuzzing: arbitrary URLs never panic, and a password never appears in what `parse`
/// says.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_arbitrary_urls_never_panic(url in any::<String>(), tail in "[ -~]{0,60}") {
            let _ = parse(&url, None);
            let _ = parse(&format!("postgres://{tail}"), Some("pw"));
            let _ = numbered(&url);
        }

        #[test]
        fn fuzz_the_password_is_never_in_an_error_or_name(
            user in "[a-z]{1,8}",
            password in "[A-Z][A-Za-z0-9]{7,15}",
            host in "[a-z0-9.,:\\[\\]]{0,16}",
            db in "[a-z0-9]{0,8}",
            query in "[a-z_=&%0-9?-]{0,30}",
            given in any::<bool>(),
        ) {
            let url = format!("postgres://{user}:{password}@{host}/{db}?{query}");
            let over = given.then_some(password.as_str());
            match parse(&url, over) {
                Ok(t) => prop_assert!(!t.name.contains(&password), "{}", t.name),
                Err(e) => prop_assert!(!e.contains(&password), "{:?} -> {}", url, e),
            }
        }
    }
}
