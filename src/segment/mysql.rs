//! The allocation table on MySQL or MariaDB, through the pure-Rust `mysql` crate.

use mysql::prelude::Queryable;
use mysql::{Pool, PoolConstraints, PoolOpts, TxOpts};

use super::store::check_claim;
use super::{AllocStore, Claim, Increment, LeafAlloc, MYSQL_DDL, SegmentError, redact_url};
use crate::mysql_url::{self, scrub};

pub use crate::mysql_url::{CONNECT_TIMEOUT, IO_TIMEOUT};

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
            .map_err(|e| map_error(&target.name, e, target.password.as_deref()))?;
        Ok(MysqlStore {
            pool,
            name: target.name,
            password: target.password,
        })
    }

    fn err(&self, e: mysql::Error) -> SegmentError {
        map_error(&self.name, e, self.password.as_deref())
    }

    fn conn(&self) -> Result<mysql::PooledConn, SegmentError> {
        self.pool
            .try_get_conn(CONNECT_TIMEOUT + IO_TIMEOUT)
            .map_err(|e| self.err(e))
    }
}

/// Removes a password that a driver message might echo.
fn map_error(db: &str, e: mysql::Error, password: Option<&str>) -> SegmentError {
    let db = db.to_string();
    match e {
        mysql::Error::MySqlError(m) => {
            let detail = scrub(m.message.clone(), password);
            match m.code {
                1146 => SegmentError::MissingTable { db },
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
        mysql::Error::IoError(io) => SegmentError::Unreachable {
            db,
            detail: scrub(io.to_string(), password),
        },
        mysql::Error::DriverError(
            d @ (mysql::DriverError::ConnectTimeout
            | mysql::DriverError::CouldNotConnect(_)
            | mysql::DriverError::Timeout),
        ) => SegmentError::Unreachable {
            db,
            detail: scrub(d.to_string(), password),
        },
        mysql::Error::CodecError(c) => SegmentError::Unreachable {
            db,
            detail: scrub(c.to_string(), password),
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
        let mut conn = self.conn()?;
        for ddl in MYSQL_DDL {
            conn.query_drop(ddl).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        let mut conn = self.conn()?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .map_err(|e| self.err(e))?;
        // Lock the row and check the arithmetic before anything changes.
        let current: Option<(i64, i64)> = tx
            .exec_first(
                "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE",
                (tag,),
            )
            .map_err(|e| self.err(e))?;
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
        .map_err(|e| self.err(e))?;
        let after: Option<(String, i64, i64)> = tx
            .exec_first(
                "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?",
                (tag,),
            )
            .map_err(|e| self.err(e))?;
        let Some((_, new_max, table_step)) = after else {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        };
        let (start, end) = check_claim(tag, new_max - inc, inc)?;
        tx.commit().map_err(|e| self.err(e))?;
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
        let mut conn = self.conn()?;
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
            Err(e) => Err(self.err(e)),
        }
    }

    fn list(&self) -> Result<Vec<LeafAlloc>, SegmentError> {
        let mut conn = self.conn()?;
        let rows: Vec<Row> = conn
            .query(format!("{ROW_SQL} ORDER BY biz_tag"))
            .map_err(|e| self.err(e))?;
        Ok(rows.into_iter().map(row).collect())
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        let mut conn = self.conn()?;
        let r: Option<Row> = conn
            .exec_first(format!("{ROW_SQL} WHERE biz_tag = ?"), (tag,))
            .map_err(|e| self.err(e))?;
        Ok(r.map(row))
    }

    fn tags(&self) -> Result<Vec<String>, SegmentError> {
        let mut conn = self.conn()?;
        conn.query("SELECT biz_tag FROM leaf_alloc ORDER BY biz_tag")
            .map_err(|e| self.err(e))
    }

    fn set_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        let mut conn = self.conn()?;
        conn.exec_drop(
            "UPDATE leaf_alloc SET step = ? WHERE biz_tag = ?",
            (step, tag),
        )
        .map_err(|e| self.err(e))?;
        if conn.affected_rows() == 0 && self.get(tag)?.is_none() {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        }
        Ok(())
    }

    fn remove(&self, tag: &str) -> Result<LeafAlloc, SegmentError> {
        let mut conn = self.conn()?;
        let mut tx = conn
            .start_transaction(TxOpts::default())
            .map_err(|e| self.err(e))?;
        let r: Option<Row> = tx
            .exec_first(format!("{ROW_SQL} WHERE biz_tag = ? FOR UPDATE"), (tag,))
            .map_err(|e| self.err(e))?;
        let Some(r) = r else {
            return Err(SegmentError::UnknownTag {
                tag: tag.into(),
                db: self.name.clone(),
            });
        };
        tx.exec_drop("DELETE FROM leaf_alloc WHERE biz_tag = ?", (tag,))
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(row(r))
    }
}
