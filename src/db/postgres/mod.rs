//! PostgreSQL (`postgres://`, `postgresql://`): the URL, connection, TLS and errors, the
//! segment store ([`PostgresStore`]) and the worker-id registry ([`PostgresRegistry`]).
//!
//! The folder's failures live here, at its root, beside its map: PostgreSQL's failures, sorted
//! by what the caller can do about them (`FailureKind`), as the connection, the segment store
//! and the registry's lease store read them.

pub(super) mod conn;
mod lease_store;
mod registry;
mod store;
pub(super) mod url;

pub use registry::{
    PostgresError, PostgresOptions, PostgresRegistry, REGISTRY_KIND, WORKERID_DDL, init_schema,
};
pub use store::{POSTGRES_DDL, POSTGRES_REGION_DDL, PostgresStore};
pub(crate) use url::JDBC;

use std::time::Duration;

use crate::db::LOCK_WAIT_TIMEOUT_S;
use crate::segment::SegmentError;
use crate::text::scrub;

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

/// What a message that is one of PgBouncer's errors gets added: see [`pooler_note`].
const POOLER_NOTE: &str = " (said by a connection pooler such as PgBouncer in front of PostgreSQL, not by PostgreSQL: check the pooler's settings and log)";

/// A note naming the pooler when `message` is one of PgBouncer's errors.
fn pooler_note(message: &str) -> Option<&'static str> {
    let lower = message.to_lowercase();
    POOLER_ERRORS
        .iter()
        .any(|p| lower.contains(p))
        .then_some(POOLER_NOTE)
}

/// What went wrong with a statement or a connection, sorted by what the caller can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// No answer within [`crate::db::IO_TIMEOUT`] (or the connect timeout): the connection is abandoned.
    TimedOut,
    /// The connection failed or broke.
    Connection,
    /// TLS failed: the certificate was refused, or the server does not offer TLS.
    Tls,
    /// The login failed before the server could answer with an error of its own: it asks for
    /// a password and none was given.
    Auth,
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
    pub(super) fn new(kind: FailureKind, detail: String) -> PgFailure {
        PgFailure {
            kind,
            detail,
            code: None,
        }
    }

    pub(super) fn timed_out(what: &str, after: Duration) -> PgFailure {
        PgFailure::new(
            FailureKind::TimedOut,
            format!(
                "no answer to the {what} within {} s (connected, but nothing answers: the server is stalled, or a connection pooler in front (PgBouncer) has no server connection free for this client: its pool is full, each held by another client, as a session pool holds one for as long as its client stays connected)",
                after.as_secs()
            ),
        )
    }

    pub(super) fn from_error(e: &tokio_postgres::Error, password: Option<&str>) -> PgFailure {
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
            return PgFailure::new(FailureKind::Auth, scrub(detail, password));
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
    pub(super) fn refused_startup_options(&self) -> bool {
        self.kind == FailureKind::Server
            && self.detail.contains("unsupported startup parameter")
            && self.detail.contains("options")
    }

    /// Whether another host of the list might do what this one could not: the connection
    /// failed, timed out or broke, the host is a standby, or the server is shutting down,
    /// starting up, or refuses writes.
    pub fn host_cannot_serve(&self) -> bool {
        match self.kind {
            // A login refused by one host may be accepted by another (its own pg_hba.conf).
            FailureKind::TimedOut
            | FailureKind::Connection
            | FailureKind::ReadOnly
            | FailureKind::Auth => true,
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

    /// A `CREATE TABLE IF NOT EXISTS` that lost a race with another session's create of the
    /// same table: IF NOT EXISTS does not guard against a concurrent create, whose loser fails
    /// on the catalog's unique index (23505), on the table's row type (42710) or on the table
    /// itself (42P07). The table is there.
    pub fn lost_a_concurrent_create(&self) -> bool {
        matches!(self.code.as_deref(), Some("23505" | "42710" | "42P07"))
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

/// A PostgreSQL failure as the segment store reports it.
fn segment_error(db: &str, f: PgFailure) -> SegmentError {
    let db = db.to_string();
    match f.kind {
        FailureKind::Tls => SegmentError::TlsRefused {
            db,
            detail: f.detail,
        },
        FailureKind::Auth => SegmentError::AccessDenied {
            db,
            detail: f.detail,
        },
        FailureKind::TimedOut | FailureKind::Connection | FailureKind::ReadOnly => {
            SegmentError::Unreachable {
                db,
                detail: f.detail,
            }
        }
        FailureKind::Server => match f.code() {
            Some("42P01") => SegmentError::MissingTable { db },
            Some("28P01" | "28000" | "42501") => SegmentError::AccessDenied {
                db,
                detail: f.to_string(),
            },
            Some("3D000") => SegmentError::Database {
                db,
                detail: format!("{f}; create it (CREATE DATABASE), then run `leafctl db init`"),
            },
            Some("55P03") => SegmentError::Busy {
                db,
                detail: format!(
                    "a row stayed locked by another session for over {} s ({f})",
                    LOCK_WAIT_TIMEOUT_S
                ),
            },
            _ if f.host_cannot_serve() => SegmentError::Unreachable {
                db,
                detail: f.to_string(),
            },
            _ => SegmentError::Database {
                db,
                detail: f.to_string(),
            },
        },
    }
}

/// What to do about a TLS failure (the `detail` of [`SegmentError::TlsRefused`]), for a hint.
pub(crate) fn tls_advice(_detail: &str) -> &'static str {
    "give the CA that signed the server's certificate in the URL (?sslrootcert=FILE), and a host name that certificate carries"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::IO_TIMEOUT;
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
