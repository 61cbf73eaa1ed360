//! One connection type for everything in leafctl that talks to PostgreSQL (the segment store
//! and the worker registry), with TLS as libpq's `sslmode` asks for it (through rustls).
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

use super::url::{PgTarget, SslMode, is_socket_dir};
use super::{FailureKind, PgFailure};
use crate::db::{IO_TIMEOUT, LOCK_WAIT_TIMEOUT_S};

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
        let (name, _) = &target.hosts[host];
        // libpq: TLS is not used over a Unix socket, whatever sslmode says.
        let socket = is_socket_dir(name);
        let config = config_for(target, host, options, send_options);
        let password = target.password.clone();
        let tls = match target.tls.get() {
            _ if socket => None,
            Some(made) => made.clone(),
            None => {
                let made = tls_config(target)?;
                target.tls.get_or_init(|| made).clone()
            }
        };
        let wait = target.connect_timeout + IO_TIMEOUT;
        let connected = connect_within(config, tls, wait, password.clone())?;
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

/// The runtime every PostgreSQL connection of the process runs on: one worker thread drives
/// the connections' sockets; statements are awaited by the calling thread.
/// Connects with `config` (over TLS when `tls` is given) within `wait`, the connection's task
/// spawned on the shared runtime: the client and the handle that ends the task.
fn connect_within(
    config: tokio_postgres::Config,
    tls: Option<rustls::ClientConfig>,
    wait: Duration,
    password: Option<String>,
) -> Result<(tokio_postgres::Client, tokio::task::AbortHandle), PgFailure> {
    run(async move {
        let connect = async {
            match tls {
                None => config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map(|(c, conn)| (c, spawned(conn))),
                Some(tls) => {
                    let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
                    config
                        .connect(tls)
                        .await
                        .map(|(c, conn)| (c, spawned(conn)))
                }
            }
        };
        match tokio::time::timeout(wait, connect).await {
            Err(_) => Err(PgFailure::timed_out("connection", wait)),
            Ok(r) => r.map_err(|e| PgFailure::from_error(&e, password.as_deref())),
        }
    })
}

/// Runs a connection's task (its socket's reads and writes) on the shared runtime.
fn spawned<C>(conn: C) -> tokio::task::AbortHandle
where
    C: std::future::Future + Send + 'static,
{
    tokio::spawn(async move { drop(conn.await) }).abort_handle()
}

/// The driver's settings to connect to host `host` of `target`, with leafctl's startup options
/// (`send_options`) and `options` besides.
fn config_for(
    target: &PgTarget,
    host: usize,
    options: &str,
    send_options: bool,
) -> tokio_postgres::Config {
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
    config
}

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

/// A handshake signature checked by rustls's `verify` (TLS 1.2's or 1.3's) with the provider's
/// algorithms: libpq's modes change which certificates are trusted, never how signatures are.
type SignatureCheck = fn(
    &[u8],
    &CertificateDer<'_>,
    &DigitallySignedStruct,
    &rustls::crypto::WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, rustls::Error>;

impl LibpqVerifier {
    fn signature(
        &self,
        verify: SignatureCheck,
        (message, cert, dss): (&[u8], &CertificateDer<'_>, &DigitallySignedStruct),
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }
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
        self.signature(rustls::crypto::verify_tls12_signature, (message, cert, dss))
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.signature(rustls::crypto::verify_tls13_signature, (message, cert, dss))
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
    fn placeholders_are_numbered_outside_literals() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE b > ? AND c LIKE ? ESCAPE '?' LIMIT ?"),
            "SELECT a FROM t WHERE b > $1 AND c LIKE $2 ESCAPE '?' LIMIT $3"
        );
    }
}
