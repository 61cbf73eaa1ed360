//! The worker-id registry's store on MySQL: its statements for
//! [`TableLease`](crate::db::table_registry::TableLease), the fenced-lease protocol's store on one
//! dedicated connection, and the registry's [`acquire`](crate::worker::WorkerRegistry::acquire),
//! which builds it (see [`super::registry`] for the protocol as a whole).

use std::ops::Range;
use std::sync::Arc;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::registry::{LOCK_WAIT_S, MysqlOptions, MysqlRegistry, lock_name_sql};
use crate::db::table_registry::{
    self as table, Listed, LockHolder, NewRow, RowSql, TableLease, registered_meanwhile,
};
use crate::worker::lease::{FencedLease, Write, Written};
use crate::worker::{IssueOptions, WorkerError, WorkerLease, WorkerRegistry};

/// One dedicated connection: it holds the row's named lock for as long as it lives (the store
/// is [`TableLease`](crate::db::table_registry::TableLease) of it).
pub(crate) struct MysqlLeaseStore {
    pub(super) opts: MysqlOptions,
    pub(super) conn: LockHolder<Conn, mysql::Error>,
    /// `CONNECTION_ID()` at connect: every fenced statement must run on that server connection.
    pub(super) connection_id: u64,
}

/// A new row of this identity (`ip`, `port`, `ip_port`, `max_timestamp`); a row of it already
/// there fails on the unique `ip_port` (1062).
const INSERT_ROW: &str = "INSERT INTO leaf_workerid_alloc \
     (ip, port, ip_port, max_timestamp, create_time, update_time) \
     VALUES (?, ?, ?, ?, NOW(), NOW())";

/// "A leafctl holder gave this row back (`update_time` NULL), or nobody wrote to it for
/// [`table::SILENT_MS`]: neither `update_time` (the server's clock; NotFound9's table refreshes
/// it on every `UPDATE`) nor `max_timestamp` (`now_ms` is our clock; NotFound9's servers rewrite
/// it every 3 s) is that recent", in SQL.
fn silent_sql(now_ms: i64) -> String {
    format!(
        "(update_time IS NULL OR (UNIX_TIMESTAMP(update_time) < UNIX_TIMESTAMP() - {} \
         AND COALESCE(max_timestamp, 0) < {}))",
        table::SILENT_MS / 1000,
        now_ms.saturating_sub(table::SILENT_MS)
    )
}

impl MysqlLeaseStore {
    /// Takes row `id`'s named lock, waiting up to `wait_s`: its name when granted.
    fn lock(&self, id: u64, wait_s: i64) -> Result<(String, bool), WorkerError> {
        let locked: Option<(String, Option<i64>)> = self.conn.with("lock the worker id", |c| {
            c.exec(
                format!(
                    "SELECT n, GET_LOCK(n, ?) FROM (SELECT {} AS n) AS l",
                    lock_name_sql("?")
                ),
                (wait_s, id),
            )
            .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())
        })?;
        match locked {
            Some((lock, got)) => Ok((lock, got == Some(1))),
            None => Err(self
                .opts
                .fail("lock the worker id", "GET_LOCK returned no row")),
        }
    }

    /// Refusal of row `id` while another connection holds its named `lock`.
    fn in_use(&self, id: u64, lock: &str) -> WorkerError {
        WorkerError::IdentityInUse {
            identity: self.opts.identity.to_string(),
            path: format!(
                "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
            ),
        }
    }
}

impl RowSql for MysqlLeaseStore {
    type Lock = String;
    const COUNTER: &'static str = "AUTO_INCREMENT";
    const DB: &'static str = "MySQL";

    fn own_row(&self) -> Result<Option<u64>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        self.conn.with("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = ?",
                (&ip_port,),
            )
            .map(|rows: Vec<u64>| rows.into_iter().next())
        })
    }

    /// No connection holds their named lock (`IS_FREE_LOCK`).
    fn free_rows(&self, ids: &Range<u64>, now_ms: i64, reach: i64) -> Result<Listed, WorkerError> {
        let (first, max_worker) = (ids.start, ids.end.saturating_sub(1));
        self.conn
            .with("list free rows of leaf_workerid_alloc", |c| {
                c.exec(
                    format!(
                        "SELECT id, ip_port FROM leaf_workerid_alloc \
                     WHERE id >= ? AND id <= ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_FREE_LOCK({}) = 1 ORDER BY id LIMIT {}",
                        lock_name_sql("id"),
                        table::FREE_ROWS_LISTED,
                        silent = silent_sql(now_ms)
                    ),
                    (first, max_worker, reach),
                )
            })
    }

    /// Waits up to [`LOCK_WAIT_S`] for the named lock (`GET_LOCK`), then reads the row.
    fn claim_own(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        let row = if got { self.read_row(id)? } else { None };
        match row {
            Some((owner, stored)) if owner == ip_port => Ok(Some((lock, stored))),
            Some(_) | None if got => {
                // Re-owned by a new identity (or deleted) between the lookup and the lock.
                self.unlock(id, &lock)?;
                Ok(None)
            }
            _ => {
                let still_ours = self
                    .conn
                    .with("read leaf_workerid_alloc", |c| {
                        c.exec(
                            "SELECT ip_port FROM leaf_workerid_alloc WHERE id = ?",
                            (id,),
                        )
                        .map(|rows: Vec<String>| rows.into_iter().next())
                    })?
                    .is_some_and(|owner| owner == ip_port);
                if !still_ours {
                    return Ok(None);
                }
                Err(self.in_use(id, &lock))
            }
        }
    }

    fn lock_now(&self, id: u64) -> Result<Option<String>, WorkerError> {
        let (lock, got) = self.lock(id, 0)?;
        Ok(got.then_some(lock))
    }

    fn lock_waiting(&self, id: u64) -> Result<String, WorkerError> {
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        if !got {
            return Err(self.in_use(id, &lock));
        }
        Ok(lock)
    }

    fn unlock(&self, _id: u64, lock: &String) -> Result<(), WorkerError> {
        self.conn.with("release the worker id", |c| {
            c.exec_drop("DO RELEASE_LOCK(?)", (lock,))
        })
    }

    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        self.conn.with("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT ip_port, COALESCE(max_timestamp, 0) FROM leaf_workerid_alloc WHERE id = ?",
                (id,),
            )
            .map(|rows: Vec<(String, i64)>| rows.into_iter().next())
        })
    }

    /// The compare includes the named lock being this connection's.
    fn take_row(
        &self,
        id: u64,
        lock: &String,
        seen: &str,
        now_ms: i64,
        reach: i64,
    ) -> Result<bool, WorkerError> {
        let o = &self.opts;
        let taken = self.conn.with("take a free row of leaf_workerid_alloc", |c| {
            let r = c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET ip = ?, port = ?, ip_port = ?, update_time = NOW() \
                     WHERE id = ? AND ip_port = ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {conn_id}",
                    silent = silent_sql(now_ms),
                    conn_id = self.connection_id
                ),
                (
                    &o.identity.ip,
                    &o.identity.port,
                    o.identity.to_string(),
                    id,
                    seen,
                    reach,
                    lock,
                ),
            );
            match r {
                Ok(()) => Ok(Some(c.affected_rows() == 1)),
                // This identity got a row meanwhile (a second process with it): not this one.
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        match taken {
            Some(taken) => Ok(taken),
            None => {
                self.unlock(id, lock)?;
                Err(registered_meanwhile(&o.identity))
            }
        }
    }

    fn insert_row(&self, ids: &Range<u64>, now_ms: i64) -> Result<NewRow<String>, WorkerError> {
        let o = &self.opts;
        self.conn.with("insert into leaf_workerid_alloc", |c| {
            c.query_drop("START TRANSACTION")?;
            let inserted = c.exec_drop(
                INSERT_ROW,
                (
                    &o.identity.ip,
                    &o.identity.port,
                    o.identity.to_string(),
                    now_ms,
                ),
            );
            let id = match inserted {
                Ok(()) => c.last_insert_id(),
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => {
                    c.query_drop("ROLLBACK")?;
                    return Ok(NewRow::Exists);
                }
                Err(e) => return Err(e),
            };
            if let Some(refused) = NewRow::misplaced(id, ids) {
                c.query_drop("ROLLBACK")?;
                return Ok(refused);
            }
            let got: Option<(String, Option<i64>)> = c
                .exec(
                    format!(
                        "SELECT n, GET_LOCK(n, 0) FROM (SELECT {} AS n) AS l",
                        lock_name_sql("?")
                    ),
                    (id,),
                )
                .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())?;
            match got {
                Some((lock, Some(1))) => {
                    c.query_drop("COMMIT")?;
                    Ok(NewRow::Claimed(id, lock))
                }
                _ => {
                    c.query_drop("ROLLBACK")?;
                    Ok(NewRow::LockBusy(id))
                }
            }
        })
    }

    /// Raises the table's AUTO_INCREMENT to `start` (the region's first worker id). InnoDB never
    /// lowers it below the largest id + 1, and the insert that found it below `start` shows no
    /// id at or above `start` was handed out.
    fn raise_counter(&self, start: u64) -> Result<(), WorkerError> {
        self.conn
            .with("raise the AUTO_INCREMENT of leaf_workerid_alloc", |c| {
                c.query_drop(format!(
                    "ALTER TABLE leaf_workerid_alloc AUTO_INCREMENT = {start}"
                ))
            })
    }

    fn delete_row(&self, id: u64) -> Result<(), WorkerError> {
        self.conn.with("delete from leaf_workerid_alloc", |c| {
            c.exec_drop("DELETE FROM leaf_workerid_alloc WHERE id = ?", (id,))
        })
    }

    /// The compare is on the stored value itself and on the named lock being this
    /// connection's, in the one statement.
    fn write(
        &self,
        worker: u64,
        lock: &String,
        expected: i64,
        w: &Write,
    ) -> Result<Written, WorkerError> {
        let (changed, current) = self.conn.with("write max_timestamp", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET max_timestamp = ?, update_time = NOW() \
                     WHERE id = ? AND COALESCE(max_timestamp, 0) = ? \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (w.reserved_until, worker, expected, lock),
            )?;
            if c.affected_rows() == 1 {
                return Ok((true, None));
            }
            let row: Option<(i64, Option<i64>, u64)> = c
                .exec(
                    "SELECT COALESCE(max_timestamp, 0), IS_USED_LOCK(?) = CONNECTION_ID(), \
                     CONNECTION_ID() FROM leaf_workerid_alloc WHERE id = ?",
                    (lock, worker),
                )
                .map(|rows: Vec<(i64, Option<i64>, u64)>| rows.into_iter().next())?;
            Ok((false, Some(row)))
        })?;
        if changed {
            return Ok(Written::Applied {
                version: w.reserved_until,
            });
        }
        let lost = |reason: String| {
            self.conn.lose();
            Ok(Written::NotHeld { reason })
        };
        match current.flatten() {
            None => lost(format!("row id {worker} no longer exists")),
            Some((_, _, on)) if on != self.connection_id => lost(format!(
                "its statements ran on MySQL connection {on}, not on connection {} that holds its named lock {lock}: a proxy in front of MySQL (ProxySQL) multiplexes the registry's connection; connect the worker registry to MySQL directly, or through a proxy that keeps one server connection per client",
                self.connection_id
            )),
            Some((_, held, _)) if held != Some(1) => {
                lost(format!("its named lock {lock} is no longer held"))
            }
            // Matched but unchanged (the same value within the same second), or another's.
            Some((value, _, _)) => Ok(table::found(value, w.reserved_until)),
        }
    }

    /// `update_time` is the holder's report (what `workers list` shows as last seen); a row
    /// deleted under the holder ends the claim.
    fn report(&self, worker: u64, _lock: &String) -> Result<bool, WorkerError> {
        self.conn.with("report to leaf_workerid_alloc", |c| {
            c.exec_drop(
                "UPDATE leaf_workerid_alloc SET update_time = NOW() WHERE id = ?",
                (worker,),
            )?;
            if c.affected_rows() == 1 {
                return Ok(true);
            }
            let rows: Vec<u64> =
                c.exec("SELECT id FROM leaf_workerid_alloc WHERE id = ?", (worker,))?;
            Ok(!rows.is_empty())
        })
    }

    fn release(&self, worker: u64, lock: &String) {
        // Give the named lock back before the connection goes, so `workers list` sees the row
        // free as soon as this returns (closing the connection alone frees it a little later).
        // `update_time` NULL says "given back by its leafctl holder": a new identity may take
        // the row at once (not only after 9 s of silence, the sign NotFound9's servers give).
        let _ = self.conn.with("release the worker id", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET update_time = NULL \
                     WHERE id = ? AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (worker, lock),
            )?;
            c.exec_drop("DO RELEASE_LOCK(?)", (lock,))
        });
        self.conn.lose();
    }

    fn still_held(&self, worker: u64) -> Result<(), WorkerError> {
        self.conn.still_held(worker, "the MySQL connection")
    }

    fn fail(&self, action: &'static str, reason: String) -> WorkerError {
        self.opts.fail(action, reason)
    }
}

// Taking a worker id is building this store: it lives here, beside the statements it runs,
// so the registry's other file (listing, reclaiming) needs nothing of this one.
impl WorkerRegistry for MysqlRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let mut conn = self.opts.connect()?;
        // One statement reads the server connection's id and takes a named lock on it: a
        // proxy that multiplexes (ProxySQL) pins the connection that ran a GET_LOCK to this
        // client from then on, so the id read is the one every later statement must run on.
        // (ProxySQL answers the exact text `SELECT CONNECTION_ID()` itself, with its own id.)
        let rows: Vec<(u64, Option<i64>)> = conn
            .query(
                "SELECT CONNECTION_ID(), GET_LOCK(CONCAT('leafctl_connection_', CONNECTION_ID()), 0)",
            )
            .map_err(|e| self.opts.fail("read CONNECTION_ID()", e))?;
        let (connection_id, pinned) = rows
            .into_iter()
            .next()
            .ok_or_else(|| self.opts.fail("read CONNECTION_ID()", "no answer row"))?;
        if pinned != Some(1) {
            return Err(self.opts.fail(
                "read CONNECTION_ID()",
                format!(
                    "the named lock leafctl_connection_{connection_id} is held by another connection: a proxy in front of MySQL runs this registry's statements on a connection it does not keep for it; connect the worker registry to MySQL directly"
                ),
            ));
        }
        let store = MysqlLeaseStore {
            conn: LockHolder::new(conn, {
                let o = self.opts.clone();
                Box::new(move |action, e| match e {
                    Some(e) => o.db_fail(action, &e),
                    None => o.fail(action, "the connection is closed"),
                })
            }),
            connection_id,
            opts: self.opts.clone(),
        };
        FencedLease::for_generator(
            TableLease::new(store, self.opts.identity.clone(), options.clock.clone()),
            options,
        )
    }
}
