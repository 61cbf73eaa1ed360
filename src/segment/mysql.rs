//! The allocation table on MySQL or MariaDB, through the pure-Rust `mysql` crate.

use mysql::prelude::Queryable;
use mysql::{Pool, PoolConstraints, PoolOpts, TxOpts};

use super::store::check_claim;
use super::{AllocStore, Claim, Increment, LeafAlloc, MYSQL_DDL, SegmentError, redact_url};
use crate::mysql_url::{self, scrub};

pub use crate::mysql_url::{CONNECT_TIMEOUT, IO_TIMEOUT, LOCK_WAIT_TIMEOUT_S};

const ROW_SQL: &str = "SELECT biz_tag, max_id, step, description, \
     CAST(UNIX_TIMESTAMP(update_time) AS SIGNED) FROM leaf_alloc";

type Row = (String, i64, i64, Option<String>, Option<i64>);

fn row(r: Row) -> LeafAlloc {
    LeafAlloc {
        tag: r.0,
        max_id: r.1,
        step: r.2,
        description: r.3,
        update_time_s: r.4.unwrap_or(0),
    }
}

/// `leaf_alloc` on a MySQL-compatible server: a small connection pool with short connect and
/// read/write timeouts, so an unreachable server fails within seconds with a clear error.
pub struct MysqlStore {
    pool: Pool,
    /// `mysql://user@host:port/db`, never with a password.
    name: String,
    password: Option<String>,
}

impl std::fmt::Debug for MysqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MysqlStore")
            .field("db", &self.name)
            .finish()
    }
}

impl MysqlStore {
    /// Connects to `mysql://user[:password]@host[:port]/database[?tls=true]`; `password`, when
    /// given, replaces one in the URL. `tls=true` (or `ssl=true`) requires TLS with the system's
    /// root certificates; the `mysql` crate's own `root_cert_path=...` etc. are passed through.
    pub fn open(url: &str, password: Option<&str>) -> Result<MysqlStore, SegmentError> {
        let invalid = |reason: String| SegmentError::InvalidUrl {
            url: redact_url(url),
            reason,
        };
        let target = mysql_url::parse(url, password).map_err(invalid)?;
        let constraints = PoolConstraints::new(1, 4).ok_or_else(|| invalid("pool".into()))?;
        let builder = target
            .builder
            .pool_opts(PoolOpts::default().with_constraints(constraints));
        let pool = Pool::new(builder)
            .map_err(|e| map_connect_error(&target.name, e, target.password.as_deref()))?;
        Ok(MysqlStore {
            pool,
            name: target.name,
            password: target.password,
        })
    }

    fn err(&self, e: mysql::Error) -> SegmentError {
        map_error(&self.name, e, self.password.as_deref())
    }

    fn conn(&self) -> Result<Checked, SegmentError> {
        let conn = self
            .pool
            .try_get_conn(CONNECT_TIMEOUT + IO_TIMEOUT)
            .map_err(|e| map_connect_error(&self.name, e, self.password.as_deref()))?;
        Ok(Checked::new(conn))
    }

    /// Maps an error of a statement on `conn`; a connection-level failure first poisons it.
    fn fail(&self, conn: &Poison, e: mysql::Error) -> SegmentError {
        if !matches!(e, mysql::Error::MySqlError(_)) {
            conn.poison();
        }
        self.err(e)
    }
}

/// A pooled connection whose socket can be shut down after a connection-level failure (a read
/// that timed out, a broken stream). The driver keeps such a connection and may hand it out
/// again; a late reply to the abandoned statement would then be read as the answer to the next
/// one. Shut down, every further use fails at once (the transaction's rollback included) and
/// the pool discards it when it comes back.
struct Checked {
    conn: mysql::PooledConn,
    poison: Poison,
}

/// The socket of a [`Checked`] connection, to shut down while the connection is borrowed.
#[derive(Clone, Copy)]
struct Poison {
    #[cfg(unix)]
    fd: std::os::unix::io::RawFd,
}

impl Poison {
    fn poison(&self) {
        #[cfg(unix)]
        // SAFETY: shutdown(2) on the descriptor of a socket the pooled connection owns and
        // keeps open; it only ends the connection, the descriptor stays valid until the
        // driver closes it.
        unsafe {
            libc::shutdown(self.fd, libc::SHUT_RDWR);
        }
    }
}

impl Checked {
    fn new(conn: mysql::PooledConn) -> Checked {
        #[cfg(unix)]
        let poison = Poison {
            fd: std::os::unix::io::AsRawFd::as_raw_fd(&*conn),
        };
        #[cfg(not(unix))]
        let poison = Poison {};
        Checked { conn, poison }
    }
}

/// Whether a read or write gave up after the I/O timeout (the socket's timeout reports as
/// "would block" or "timed out", directly or through the packet codec).
fn timed_out(e: &mysql::Error) -> bool {
    let io = match e {
        mysql::Error::IoError(io) => Some(io),
        // The codec's error is not re-exported by name; its source is the I/O error.
        mysql::Error::CodecError(c) => {
            std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
        }
        _ => None,
    };
    io.is_some_and(|io| {
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

impl AllocStore for MysqlStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn init_schema(&self) -> Result<(), SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        for ddl in MYSQL_DDL {
            conn.query_drop(ddl).map_err(|e| self.fail(&poison, e))?;
        }
        Ok(())
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .map_err(|e| self.fail(&poison, e))?;
        // Lock the row and check the arithmetic before anything changes.
        let current: Option<(i64, i64)> = tx
            .exec_first(
                "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE",
                (tag,),
            )
            .map_err(|e| self.fail(&poison, e))?;
        let Some((max_id, step)) = current else {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        };
        let inc = match increment {
            Increment::TableStep => step,
            Increment::Custom(n) => n,
        };
        check_claim(tag, max_id, inc)?;
        // Leaf's claim: UPDATE then SELECT in the same transaction.
        tx.exec_drop(
            "UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?",
            (inc, tag),
        )
        .map_err(|e| self.fail(&poison, e))?;
        let after: Option<(String, i64, i64)> = tx
            .exec_first(
                "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?",
                (tag,),
            )
            .map_err(|e| self.fail(&poison, e))?;
        let Some((_, new_max, table_step)) = after else {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        };
        let (start, end) = check_claim(tag, new_max - inc, inc)?;
        tx.commit().map_err(|e| self.fail(&poison, e))?;
        Ok(Claim {
            start,
            end,
            table_step,
        })
    }

    fn add(
        &self,
        tag: &str,
        start: i64,
        step: i64,
        description: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        match conn.exec_drop(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?)",
            (tag, start, step, description),
        ) {
            Ok(()) => Ok(true),
            Err(mysql::Error::MySqlError(m)) if m.code == 1062 => {
                if if_not_exists {
                    Ok(false)
                } else {
                    Err(SegmentError::TagExists {
                        tag: tag.into(),
                        db: self.name.clone(),
                    })
                }
            }
            Err(e) => Err(self.fail(&poison, e)),
        }
    }

    fn list(&self) -> Result<Vec<LeafAlloc>, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        let rows: Vec<Row> = conn
            .query(format!("{ROW_SQL} ORDER BY biz_tag"))
            .map_err(|e| self.fail(&poison, e))?;
        Ok(rows.into_iter().map(row).collect())
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        let r: Option<Row> = conn
            .exec_first(format!("{ROW_SQL} WHERE biz_tag = ?"), (tag,))
            .map_err(|e| self.fail(&poison, e))?;
        Ok(r.map(row))
    }

    fn tags(&self) -> Result<Vec<String>, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        conn.query("SELECT biz_tag FROM leaf_alloc ORDER BY biz_tag")
            .map_err(|e| self.fail(&poison, e))
    }

    fn set_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        conn.exec_drop(
            "UPDATE leaf_alloc SET step = ? WHERE biz_tag = ?",
            (step, tag),
        )
        .map_err(|e| self.fail(&poison, e))?;
        if conn.affected_rows() == 0 && self.get(tag)?.is_none() {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        }
        Ok(())
    }

    fn remove(&self, tag: &str) -> Result<LeafAlloc, SegmentError> {
        let Checked { mut conn, poison } = self.conn()?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .map_err(|e| self.fail(&poison, e))?;
        let r: Option<Row> = tx
            .exec_first(format!("{ROW_SQL} WHERE biz_tag = ? FOR UPDATE"), (tag,))
            .map_err(|e| self.fail(&poison, e))?;
        let Some(r) = r else {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        };
        tx.exec_drop("DELETE FROM leaf_alloc WHERE biz_tag = ?", (tag,))
            .map_err(|e| self.fail(&poison, e))?;
        tx.commit().map_err(|e| self.fail(&poison, e))?;
        Ok(row(r))
    }
}
