//! MySQL and MariaDB (`mysql://`, `mariadb://`): the URL, the segment store
//! ([`MysqlStore`]) and the worker-id registry ([`MysqlRegistry`]).
//!
//! The folder's failures live here, at its root, beside its map: MySQL's failures as the
//! segment store reports them, and which of them another host of the URL's list may not share.

mod conn;
mod lease_store;
mod registry;
mod store;
pub(crate) mod url;

pub use registry::{
    MysqlError, MysqlOptions, MysqlRegistry, REGISTRY_KIND, WORKERID_DDL, init_schema,
};
pub use store::{MYSQL_DDL, MYSQL_REGION_DDL, MysqlStore};
pub(crate) use url::JDBC;

use crate::db::{IO_TIMEOUT, LOCK_WAIT_TIMEOUT_S};
use crate::segment::SegmentError;
use url::{self as mysql_url, scrub};

/// Errors that say this host cannot take the claim though another might: the connection
/// failed or timed out, or the server is read-only, shutting down, or a Galera node outside
/// the primary component.
fn host_cannot_serve(e: &mysql::Error) -> bool {
    match e {
        // 1047: WSREP has not yet prepared node for application use; 1053: server shutdown;
        // 1290/1836: read-only; 1927: connection killed; 1180: the commit failed on this
        // server, as a Galera node's does when it drops out of the primary component while
        // the claim replicates ("Not connected to Primary Component"): nothing was claimed,
        // and trying the next host can only leave a gap, never repeat an ID.
        mysql::Error::MySqlError(m) => {
            matches!(m.code, 1047 | 1053 | 1180 | 1290 | 1836 | 1927)
        }
        e => !mysql_url::is_tls_failure(e),
    }
}

/// Whether a read or write gave up after the I/O timeout (the socket's timeout reports as
/// "would block" or "timed out", directly or through the packet codec).
fn timed_out(e: &mysql::Error) -> bool {
    mysql_url::io_error(e).is_some_and(|io| {
        matches!(
            io.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )
    })
}

/// A failure to open a connection. A read that timed out here is a server that accepted the
/// connection but never greeted (frozen, or not a MySQL server at all), not a held row lock.
fn map_connect_error(db: &str, e: mysql::Error, password: Option<&str>) -> SegmentError {
    if timed_out(&e) {
        return SegmentError::Unreachable {
            db: db.to_string(),
            detail: scrub(mysql_url::describe(&e), password),
        };
    }
    map_error(db, e, password)
}

/// Removes a password that a driver message might echo.
fn map_error(db: &str, e: mysql::Error, password: Option<&str>) -> SegmentError {
    let db = db.to_string();
    if mysql_url::is_tls_failure(&e) {
        return SegmentError::TlsRefused {
            db,
            detail: scrub(mysql_url::describe(&e), password),
        };
    }
    match e {
        mysql::Error::MySqlError(m) => {
            let detail = scrub(m.message.clone(), password);
            match m.code {
                1146 => SegmentError::MissingTable { db },
                1205 => SegmentError::Busy {
                    db,
                    detail: format!(
                        "a row stayed locked by another session for over {LOCK_WAIT_TIMEOUT_S} s ({detail})"
                    ),
                },
                1045 | 1044 | 1698 => SegmentError::AccessDenied { db, detail },
                1049 => SegmentError::Database {
                    db,
                    detail: format!(
                        "{detail}; create it (CREATE DATABASE), then run `leafctl db init`"
                    ),
                },
                _ => SegmentError::Database {
                    db,
                    detail: format!("{detail} (error {})", m.code),
                },
            }
        }
        ref e if timed_out(e) => SegmentError::Busy {
            db,
            detail: format!(
                "no reply within {} s (a lock held by another session, or an overloaded server)",
                IO_TIMEOUT.as_secs()
            ),
        },
        e @ mysql::Error::IoError(_) => SegmentError::Unreachable {
            db,
            detail: scrub(mysql_url::describe(&e), password),
        },
        mysql::Error::DriverError(
            d @ (mysql::DriverError::ConnectTimeout
            | mysql::DriverError::CouldNotConnect(_)
            | mysql::DriverError::Timeout),
        ) => SegmentError::Unreachable {
            db,
            detail: scrub(d.to_string(), password),
        },
        e @ mysql::Error::CodecError(_) => SegmentError::Unreachable {
            db,
            detail: scrub(mysql_url::describe(&e), password),
        },
        other => SegmentError::Database {
            db,
            detail: scrub(other.to_string(), password),
        },
    }
}

/// The MySQL error a lost write conflict gives: `ER_LOCK_DEADLOCK`.
const ER_LOCK_DEADLOCK: u16 = 1213;

/// What to do about a TLS failure (the `detail` of [`SegmentError::TlsRefused`]), for a hint.
pub(crate) fn tls_advice(detail: &str) -> &'static str {
    if detail.contains("does not offer TLS") {
        "turn TLS on at the server (MariaDB/MySQL: ssl_cert and ssl_key), or, on a network you trust, leave tls=true and ca= out of the URL"
    } else {
        "give the CA that signed the server's certificate in the URL (?ca=FILE), and a host name that certificate carries"
    }
}
