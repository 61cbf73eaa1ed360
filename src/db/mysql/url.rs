//! One reading of `mysql://` URLs for everything in leafctl that talks to MySQL (the segment
//! store and the worker registry), so they agree on TLS, timeouts and where the password comes
//! from, and scrub it from messages the same way.

use mysql::{Opts, OptsBuilder, SslOpts};

use crate::db::first_answering;
use crate::db::jdbc::Jdbc;
use crate::db::{CONNECT_TIMEOUT, IO_TIMEOUT, LOCK_WAIT_TIMEOUT_S};
pub(crate) use crate::text::scrub;
use crate::text::url_password;

/// Connection settings read from a URL.
pub(crate) struct MysqlTarget {
    /// One per host of the URL, in its order, ready to connect: password, TLS and timeouts
    /// applied, no Unix socket.
    pub hosts: Vec<OptsBuilder>,
    /// `mysql://user@host:port[,host:port...]/db`, for messages (never with a password).
    pub name: String,
    /// The password in use (the override, else the URL's), to scrub from messages.
    pub password: Option<String>,
}

impl MysqlTarget {
    /// Opens a connection to the first host that answers, trying them in the URL's order
    /// starting at `from` (wrapping around); returns the host's index with the connection, or
    /// the last host's error.
    pub fn connect_from(&self, from: usize) -> Result<(usize, mysql::Conn), mysql::Error> {
        first_answering(self.hosts.len(), from, |i| {
            mysql::Conn::new(self.hosts[i].clone())
        })
        .map_err(|last| {
            last.unwrap_or(mysql::Error::DriverError(
                mysql::DriverError::CouldNotConnect(None),
            ))
        })
    }
}

/// Reads `mysql://user[:password]@host[:port][,host[:port]...]/database[?tls=true][&ca=FILE]`
/// (also `mariadb://`); `password` replaces one in the URL. Several hosts (the host-list form
/// JDBC and libpq use) are tried in order. `tls`/`ssl` take true/false (or 1/0,
/// required/disabled); `ca` (or `ca_file`) names a PEM file of CA certificates to trust besides
/// the built-in roots, and implies `tls=true`; the `mysql` crate's own parameters (such as
/// `root_cert_path`) pass through. The error is a reason, free of the password.
pub(crate) fn parse(url: &str, password: Option<&str>) -> Result<MysqlTarget, String> {
    let (base, query) = crate::db::split_url(
        url,
        &["mysql", "mariadb"],
        "expected mysql://user@host:port/database",
    )?;
    let params = Params::read(query)?;
    let scrub_url = |reason: String| match url_password(url) {
        Some(p) => scrub(reason, Some(&p)),
        None => reason,
    };
    // `user@h1:p1,h2:p2/db`: the authority ends at the first `/` after the last `@`.
    let at = base.rfind('@').map_or(0, |i| i + 1);
    let slash = base[at..].find('/').map_or(base.len(), |i| at + i);
    let (creds, hosts, path) = (&base[..at], &base[at..slash], &base[slash..]);
    let hosts: Vec<&str> = hosts.split(',').collect();
    if hosts.len() > 1 && hosts.iter().any(|h| h.trim().is_empty()) {
        return Err("an empty host in the host list: write host:port,host:port".into());
    }
    let mut builders = Vec::with_capacity(hosts.len());
    let mut names = Vec::with_capacity(hosts.len());
    let mut first: Option<Opts> = None;
    for host in hosts {
        let mut crate_url = format!("mysql://{creds}{}{path}", host.trim());
        if !params.passthrough.is_empty() {
            crate_url.push('?');
            crate_url.push_str(&params.passthrough.join("&"));
        }
        let opts = Opts::from_url(&crate_url).map_err(|e| scrub_url(url_error(&e)))?;
        if opts.get_db_name().is_none_or(str::is_empty) {
            return Err("no database named: write mysql://user@host:port/DATABASE".into());
        }
        let host = opts.get_ip_or_hostname();
        names.push(if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{}", opts.get_tcp_port())
        } else {
            format!("{host}:{}", opts.get_tcp_port())
        });
        builders.push(host_options(&opts, password, &params));
        first.get_or_insert(opts);
    }
    let Some(opts) = first else {
        return Err("no host".into());
    };
    let password = password
        .map(str::to_string)
        .or_else(|| opts.get_pass().map(str::to_string));
    let name = format!(
        "mysql://{}@{}/{}",
        opts.get_user().unwrap_or(""),
        names.join(","),
        opts.get_db_name().unwrap_or("")
    );
    Ok(MysqlTarget {
        hosts: builders,
        name,
        password,
    })
}

/// The URL's query as leafctl reads it: its own parameters (`tls`, `ca`) and the driver's.
struct Params<'a> {
    tls: bool,
    ca_file: Option<std::path::PathBuf>,
    /// The `mysql` crate's own parameters, passed on as given.
    passthrough: Vec<&'a str>,
}

impl<'a> Params<'a> {
    /// Reads `query`; a bad `tls` value or an unreadable CA file is an error.
    fn read(query: Option<&'a str>) -> Result<Params<'a>, String> {
        let mut params = Params {
            tls: false,
            ca_file: None,
            passthrough: Vec::new(),
        };
        for pair in query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|p| !p.is_empty())
        {
            match pair.split_once('=') {
                Some(("tls" | "ssl", v)) => {
                    params.tls = match v {
                        "true" | "1" | "required" => true,
                        "false" | "0" | "disabled" => false,
                        other => return Err(format!("tls={other}: use true or false")),
                    }
                }
                Some(("ca" | "ca_file", path)) => {
                    if path.is_empty() {
                        return Err("ca= needs the path of a PEM file of CA certificates".into());
                    }
                    let path = std::path::PathBuf::from(path);
                    if let Err(e) = std::fs::File::open(&path) {
                        return Err(format!("cannot read the CA file {}: {e}", path.display()));
                    }
                    params.ca_file = Some(path);
                }
                _ => params.passthrough.push(pair),
            }
        }
        Ok(params)
    }
}

/// One host's connection options: its URL's, the password given, TLS as `params` ask, and
/// leafctl's timeouts and session settings.
fn host_options(opts: &Opts, password: Option<&str>, params: &Params<'_>) -> OptsBuilder {
    let password = password
        .map(str::to_string)
        .or_else(|| opts.get_pass().map(str::to_string));
    let ssl = match (params.ca_file.clone(), opts.get_ssl_opts().cloned()) {
        (Some(ca), ssl) => Some(ssl.unwrap_or_default().with_root_cert_path(Some(ca))),
        (None, None) if params.tls => Some(SslOpts::default()),
        (None, ssl) => ssl,
    };
    OptsBuilder::from_opts(opts.clone())
        .pass(password)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .read_timeout(Some(IO_TIMEOUT))
        .write_timeout(Some(IO_TIMEOUT))
        .init(vec![
            format!("SET SESSION innodb_lock_wait_timeout = {LOCK_WAIT_TIMEOUT_S}, autocommit = 1"),
            // `tag add` reads the tombstone with a locking read inside its insert; under
            // READ COMMITTED (a server default some set) that read takes no gap lock, so
            // a first removal of the name could slip in between it and the insert.
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ".to_string(),
        ])
        .ssl_opts(ssl)
}

/// The URL parameters leafctl reads itself; the rest go to the `mysql` driver.
const OWN_PARAMS: &str = "tls (or ssl), ca (or ca_file)";

/// The `mysql` driver's URL parameters, passed through as they are.
const DRIVER_PARAMS: &str = "root_cert_path, cert_chain_path, priv_key_path, \
     danger_accept_invalid_certs, danger_skip_domain_validation, tcp_connect_timeout_ms, \
     tcp_keepalive_time_ms, tcp_keepalive_probe_interval_secs, tcp_keepalive_probe_count, \
     tcp_user_timeout_ms, compress, stmt_cache_size, max_allowed_packet, secure_auth, \
     enable_cleartext_plugin, reset_connection, check_health, server_key_path, cipher_suites";

/// The driver's URL error in words (its own text is Rust's: `URL ParseError { ... }`), naming
/// the parameters there are when one is unknown.
fn url_error(e: &mysql::UrlError) -> String {
    match e {
        mysql::UrlError::ParseError(p) => format!(
            "not a URL leafctl can read ({p}): write mysql://user@host:port/database, an IPv6 host in brackets ([::1]:3306)"
        ),
        mysql::UrlError::UnknownParameter(p) => format!(
            "unknown parameter {p:?}: leafctl reads {OWN_PARAMS}, and passes the mysql driver's {DRIVER_PARAMS}"
        ),
        mysql::UrlError::InvalidValue(k, v) => {
            format!("parameter {k}={v}: not a value the parameter takes")
        }
        mysql::UrlError::FeatureRequired(feature, k) => {
            format!(
                "parameter {k} needs the driver's {feature} feature, which leafctl is built without"
            )
        }
        mysql::UrlError::UnsupportedScheme(s) => {
            format!("scheme {s:?}: write mysql://user@host:port/database")
        }
        other => other.to_string(),
    }
}

/// The I/O error under a driver error, directly or inside a packet codec error.
pub(super) fn io_error(e: &mysql::Error) -> Option<&std::io::Error> {
    match e {
        mysql::Error::IoError(io) => Some(io),
        mysql::Error::CodecError(c) => std::error::Error::source(c)?.downcast_ref(),
        _ => None,
    }
}

/// Whether a driver error is a TLS failure: the server's certificate refused (unknown issuer,
/// wrong name), a CA file that is not a certificate, or a server without TLS.
pub(crate) fn is_tls_failure(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::TlsError(_) => true,
        mysql::Error::DriverError(mysql::DriverError::TlsNotSupported) => true,
        // rustls's verdict on the certificate, passed up through the stream as an I/O error.
        other => io_error(other).is_some_and(|io| io.to_string().contains("certificate")),
    }
}

/// A driver error as a reason, with a read that timed out said as such (the driver reports
/// it as "Resource temporarily unavailable").
pub(crate) fn describe(e: &mysql::Error) -> String {
    match io_error(e) {
        Some(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            format!(
                "no answer within {} s (connected, but the server does not respond)",
                IO_TIMEOUT.as_secs()
            )
        }
        Some(io) => io.to_string(),
        None => match e {
            // The driver wraps these in Rust's debug style (`DriverError { ... }`).
            mysql::Error::DriverError(d @ mysql::DriverError::TlsNotSupported) => format!(
                "the server does not offer TLS, and the URL asks for it (tls=true or ca=FILE): {d}"
            ),
            mysql::Error::DriverError(d) => d.to_string(),
            mysql::Error::UrlError(u) => url_error(u),
            other => other.to_string(),
        },
    }
}

// Leaf's `jdbc:mysql://` and `jdbc:mariadb://` URLs (`config import-leaf`).
/// MySQL's JDBC URLs: Connector/J's and MariaDB Connector/J's.
pub(crate) const JDBC: Jdbc = Jdbc {
    schemes: &["mysql", "mariadb"],
    port: 3306,
    param,
};

/// Connector/J's TLS parameters as `tls=true`; nothing else carries over.
fn param(key: &str, value: &str, kept: &mut Vec<String>) {
    let on = value.eq_ignore_ascii_case("true");
    match key {
        "useSSL" | "requireSSL" if on => kept.push("tls=true".into()),
        "sslMode" | "sslmode"
            if !value.eq_ignore_ascii_case("disabled")
                && !value.eq_ignore_ascii_case("preferred") =>
        {
            kept.push("tls=true".into())
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_the_password_override() {
        let t = parse(
            "mysql://leaf:inurl@db.example:3307/leaf?tls=false",
            Some("override"),
        )
        .unwrap();
        assert_eq!(t.name, "mysql://leaf@db.example:3307/leaf");
        assert_eq!(t.password.as_deref(), Some("override"));
        let t = parse("mariadb://leaf:p@ss@db/leaf", None).unwrap();
        assert_eq!(t.password.as_deref(), Some("p@ss"));
    }

    /// Issue 36, item 6: URL errors in words, never Rust's debug text, and an unknown
    /// parameter names the ones there are (as PostgreSQL's does).
    #[test]
    fn url_errors_are_words() {
        let e = parse("mysql://leaf@[::1/leaf", None).err().unwrap();
        assert!(!e.contains("ParseError {"), "{e}");
        assert!(
            e.contains("not a URL leafctl can read") && e.contains("[::1]:3306"),
            "{e}"
        );
        let e = parse("mysql://leaf@db/leaf?sslmode=require", None)
            .err()
            .unwrap();
        assert!(e.contains("unknown parameter \"sslmode\""), "{e}");
        assert!(
            e.contains("tls (or ssl)") && e.contains("root_cert_path"),
            "{e}"
        );
        let tls = describe(&mysql::Error::DriverError(
            mysql::DriverError::TlsNotSupported,
        ));
        assert!(!tls.contains("DriverError"), "{tls}");
        assert!(tls.contains("does not offer TLS"), "{tls}");
        let other = describe(&mysql::Error::DriverError(
            mysql::DriverError::CouldNotConnect(None),
        ));
        assert!(!other.contains("DriverError {"), "{other}");
    }

    #[test]
    fn host_lists_parse_in_order_with_one_name() {
        let t = parse(
            "mysql://leaf:pw@db1:3307,db2,[::1]:3309/leaf?tls=false",
            None,
        )
        .unwrap();
        assert_eq!(t.name, "mysql://leaf@db1:3307,db2:3306,[::1]:3309/leaf");
        let ports: Vec<u16> = t
            .hosts
            .iter()
            .map(|b| mysql::Opts::from(b.clone()).get_tcp_port())
            .collect();
        assert_eq!(ports, vec![3307, 3306, 3309]);
        assert_eq!(t.password.as_deref(), Some("pw"));
        let e = parse("mysql://leaf:secret@db1,,db2/leaf", None)
            .err()
            .unwrap();
        assert!(e.contains("empty host") && !e.contains("secret"), "{e}");
        assert!(parse("mysql://leaf@db1,db2/", None).is_err());
    }

    #[test]
    fn a_ca_file_turns_tls_on_and_must_be_readable() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, "not checked until connecting").unwrap();
        let t = parse(&format!("mysql://leaf@db/leaf?ca={}", ca.display()), None).unwrap();
        let opts = mysql::Opts::from(t.hosts[0].clone());
        let ssl = opts.get_ssl_opts().expect("TLS on");
        assert_eq!(ssl.root_cert_path(), Some(ca.as_path()));
        let e = parse(
            "mysql://leaf:secret@db/leaf?tls=true&ca=/nonexistent/ca.pem",
            None,
        )
        .err()
        .unwrap();
        assert!(
            e.contains("/nonexistent/ca.pem") && !e.contains("secret"),
            "{e}"
        );
        assert!(parse("mysql://leaf@db/leaf?ca=", None).is_err());
    }

    #[test]
    fn bad_urls_are_refused_without_the_password() {
        assert!(parse("postgres://x/y", None).is_err());
        assert!(
            parse("mysql://leaf@db:3306/", None)
                .err()
                .unwrap()
                .contains("no database")
        );
        let e = parse("mysql://leaf:secret@db/leaf?tls=maybe", None)
            .err()
            .unwrap();
        assert!(e.contains("tls=maybe") && !e.contains("secret"), "{e}");
    }
}
