//! One reading of `postgres://` URLs (libpq's form) for everything in leafctl that talks to
//! PostgreSQL, so the segment store and the worker registry agree on hosts, TLS, where the
//! password comes from, and scrub it from messages the same way.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::db::CONNECT_TIMEOUT;
use crate::db::jdbc::Jdbc;
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
    pub(super) tls: Arc<OnceLock<Option<rustls::ClientConfig>>>,
    /// A connection pooler in front (PgBouncer) refused the `options` startup parameter once:
    /// later connections do without it (the lock wait is then bounded by [`crate::db::IO_TIMEOUT`] alone).
    pub(super) pooler_refuses_options: Arc<AtomicBool>,
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
    let (base, query) = crate::db::split_url(
        url,
        &["postgres", "postgresql"],
        "expected postgres://user@host:port/database",
    )?;
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
    let list = host_list(hosts, host_param.as_deref(), port_param, &scrub_url)?;
    let ConnectOptions {
        ssl,
        root_cert,
        connect_timeout,
        application_name,
        read_write,
    } = connect_options(query, list.len(), &scrub_url)?;
    let name = target_name(&user, &list, &dbname);
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

/// The URL's hosts (or `?host=`, never both), each `name:port` decoded and parsed, with
/// `?port=` over every host's own.
fn host_list(
    hosts: &str,
    host_param: Option<&str>,
    port_param: Option<String>,
    scrub_url: &dyn Fn(String) -> String,
) -> Result<Vec<(String, u16)>, String> {
    let hosts = match (hosts.trim(), host_param) {
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
    Ok(list)
}

/// The connection options of a URL's query (everything but the parameters that stand in for
/// its parts): TLS, the CA file, the connect timeout, the application name, and whether only a
/// writable host will do (by default with more than one of `hosts`).
struct ConnectOptions {
    ssl: SslMode,
    root_cert: Option<PathBuf>,
    connect_timeout: Duration,
    application_name: String,
    read_write: bool,
}

/// Reads [`ConnectOptions`] from `query`; an unknown parameter or value is refused, its text
/// passed through `scrub_url` (which hides the URL's password).
fn connect_options(
    query: Option<&str>,
    hosts: usize,
    scrub_url: &dyn Fn(String) -> String,
) -> Result<ConnectOptions, String> {
    let mut o = ConnectOptions {
        ssl: SslMode::Prefer,
        root_cert: None,
        connect_timeout: CONNECT_TIMEOUT,
        application_name: "leafctl".to_string(),
        read_write: hosts > 1,
    };
    for pair in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        o.set(key, decode(value)?, scrub_url)?;
    }
    // libpq: a root certificate given makes `prefer`/`require` check the certificate's chain.
    if o.root_cert.is_some() && o.ssl == SslMode::Require {
        o.ssl = SslMode::VerifyCa;
    }
    Ok(o)
}

impl ConnectOptions {
    /// Sets the option `key` of the query to `value`; an unknown key or value is refused.
    fn set(
        &mut self,
        key: &str,
        value: String,
        scrub_url: &dyn Fn(String) -> String,
    ) -> Result<(), String> {
        match key {
            "sslmode" => self.ssl = ssl_mode(&value).map_err(scrub_url)?,
            "sslrootcert" if value == "system" => self.root_cert = None,
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
                self.root_cert = Some(path);
            }
            "connect_timeout" => {
                let secs: u64 = value
                    .parse()
                    .ok()
                    .filter(|s| (1..=3600).contains(s))
                    .ok_or_else(|| {
                        format!("connect_timeout={value}: give whole seconds from 1 to 3600")
                    })?;
                self.connect_timeout = Duration::from_secs(secs);
            }
            "application_name" => self.application_name = value,
            "host" | "port" | "user" | "dbname" => {}
            "target_session_attrs" => {
                self.read_write = match value.as_str() {
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
        Ok(())
    }
}

/// libpq's `sslmode` value (`allow` read as `prefer`).
fn ssl_mode(value: &str) -> Result<SslMode, String> {
    Ok(match value {
        "disable" => SslMode::Disable,
        "allow" | "prefer" => SslMode::Prefer,
        "require" => SslMode::Require,
        "verify-ca" => SslMode::VerifyCa,
        "verify-full" => SslMode::VerifyFull,
        other => {
            return Err(format!(
                "sslmode={other}: use disable, prefer, require, verify-ca or verify-full"
            ));
        }
    })
}

/// The name a target is shown by: its URL without the password, hosts as the URL can carry them.
fn target_name(user: &str, list: &[(String, u16)], dbname: &str) -> String {
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
    format!("postgres://{user}@{}/{dbname}", names.join(","))
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

// Leaf's `jdbc:postgresql://` URLs (pgjdbc's, `config import-leaf`).
/// pgjdbc's URLs.
pub(crate) const JDBC: Jdbc = Jdbc {
    schemes: &["postgresql"],
    port: 5432,
    param,
};

/// pgjdbc's TLS and host-choice parameters in libpq's words; nothing else carries over.
fn param(key: &str, value: &str, kept: &mut Vec<String>) {
    match key {
        // pgjdbc: ssl=true alone checks the certificate and the host name.
        "ssl" if value.eq_ignore_ascii_case("true") => kept.push("sslmode=verify-full".into()),
        "sslmode" => {
            kept.retain(|k| !k.starts_with("sslmode="));
            kept.push(format!("sslmode={value}"));
        }
        "sslrootcert" => kept.push(format!("sslrootcert={value}")),
        "targetServerType" => kept.push(
            if value.eq_ignore_ascii_case("any") {
                "target_session_attrs=any"
            } else {
                "target_session_attrs=read-write"
            }
            .into(),
        ),
        _ => {}
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
}
