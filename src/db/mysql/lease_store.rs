//! The worker-id registry's store on MySQL: the fenced-lease protocol's [`LeaseStore`] on one
//! dedicated connection (see [`super::registry`] for the protocol as a whole).

use std::sync::Arc;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::registry::{LOCK_WAIT_S, MysqlOptions};
use crate::db::table_registry::{self as table, LockHolder, TableError};
use crate::snowflake::Clock;
use crate::worker::WorkerError;
use crate::worker::lease::{LeaseStore, Record, Write, Written};

/// One dedicated connection: it holds the row's named lock for as long as it lives.
pub(crate) struct MysqlLeaseStore {
    pub(super) opts: MysqlOptions,
    pub(super) conn: LockHolder<Conn>,
    /// `CONNECTION_ID()` at connect: every fenced statement must run on that server connection.
    pub(super) connection_id: u64,
    pub(super) clock: Arc<dyn Clock>,
    /// What this acquisition's listing found.
    pub(super) pick: std::sync::Mutex<table::Pick>,
}

/// A held row: its id and the name of its lock.
pub(crate) struct MysqlClaim {
    worker: u64,
    lock: String,
}

impl MysqlLeaseStore {
    /// Runs `f` on the connection; an error loses it (see [`LockHolder`]).
    fn with_conn<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T, WorkerError> {
        self.conn.with(
            || self.opts.fail(action, "the connection is closed"),
            |e| self.opts.db_fail(action, &e),
            f,
        )
    }
}

/// The named lock of row `id` in SQL, from a placeholder or a column.
pub(super) fn lock_name_sql(id: &str) -> String {
    format!("LEFT(CONCAT('leafctl_worker_', {id}, '_', DATABASE()), 64)")
}

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
    fn pick(&self) -> std::sync::MutexGuard<'_, table::Pick> {
        self.pick.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes row `id`'s named lock, waiting up to `wait_s`: its name when granted.
    fn lock(&self, id: u64, wait_s: i64) -> Result<(String, bool), WorkerError> {
        let locked: Option<(String, Option<i64>)> = self.with_conn("lock the worker id", |c| {
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

    fn unlock(&self, lock: &str) -> Result<(), WorkerError> {
        self.with_conn("release the worker id", |c| {
            c.exec_drop("DO RELEASE_LOCK(?)", (lock,))
        })
    }

    /// Row `id`'s `ip_port` and `max_timestamp`, read under its lock.
    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        self.with_conn("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT ip_port, COALESCE(max_timestamp, 0) FROM leaf_workerid_alloc WHERE id = ?",
                (id,),
            )
            .map(|rows: Vec<(String, i64)>| rows.into_iter().next())
        })
    }

    fn claimed(id: u64, lock: String, reserved_until: i64) -> (MysqlClaim, Record) {
        (
            MysqlClaim { worker: id, lock },
            Record {
                reserved_until,
                version: reserved_until,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            },
        )
    }

    /// This identity's own row: waits briefly for its lock (a holder killed a moment ago keeps
    /// it until the server notices its connection closed), then refuses. `None` when a new
    /// identity took the row meanwhile (this one then inserts a row).
    fn claim_own(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        let row = if got { self.read_row(id)? } else { None };
        match row {
            Some((owner, stored)) if owner == ip_port => Ok(Some(Self::claimed(id, lock, stored))),
            Some(_) | None if got => {
                // Re-owned by a new identity (or deleted) between the lookup and the lock.
                self.unlock(&lock)?;
                Ok(None)
            }
            _ => {
                let still_ours = self
                    .with_conn("read leaf_workerid_alloc", |c| {
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
                Err(WorkerError::IdentityInUse {
                    identity: ip_port,
                    path: format!(
                        "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                    ),
                })
            }
        }
    }

    /// Another identity's free row: its lock without waiting, then a compare-and-set that
    /// re-keys the row to this identity only if it still carries the `ip_port` listed and its
    /// holder is still gone (silent, fence within reach). `None`: someone else took it first.
    fn claim_free(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let Some(seen) = self.pick().seen.get(&id).cloned() else {
            return Ok(None);
        };
        let (lock, got) = self.lock(id, 0)?;
        if !got {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let taken = self.with_conn("take a free row of leaf_workerid_alloc", |c| {
            let r = c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET ip = ?, port = ?, ip_port = ?, update_time = NOW() \
                     WHERE id = ? AND ip_port = ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {conn_id}",
                    silent = silent_sql(now),
                    conn_id = self.connection_id
                ),
                (
                    &o.identity.ip,
                    &o.identity.port,
                    o.identity.to_string(),
                    id,
                    &seen,
                    reach,
                    &lock,
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
            Some(true) => {}
            Some(false) => {
                self.unlock(&lock)?;
                return Ok(None);
            }
            None => {
                self.unlock(&lock)?;
                return Err(WorkerError::IdentityInUse {
                    identity: o.identity.to_string(),
                    path:
                        "another process with it registered a row of leaf_workerid_alloc meanwhile"
                            .into(),
                });
            }
        }
        tracing::info!("took leaf_workerid_alloc id {id}, last held by {seen}");
        match self.read_row(id)? {
            Some((_, stored)) => Ok(Some(Self::claimed(id, lock, stored))),
            None => Err(o.fail(
                "read leaf_workerid_alloc",
                format!("row id {id} no longer exists"),
            )),
        }
    }

    /// A new row for this identity, in one transaction with the check of its id against the
    /// worker ids it may hand out and the take of its lock: a refusal rolls the row back.
    fn claim_new_after(&self, raised: bool) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let ids = self.pick().ids.clone();
        let max = ids.end.saturating_sub(1);
        let now = self.clock.now_ms();
        enum Outcome {
            Claimed(u64, String),
            Exists,
            Beyond,
            Below,
            LockBusy(u64),
        }
        let outcome = self.with_conn("insert into leaf_workerid_alloc", |c| {
            c.query_drop("START TRANSACTION")?;
            let inserted = c.exec_drop(
                "INSERT INTO leaf_workerid_alloc \
                 (ip, port, ip_port, max_timestamp, create_time, update_time) \
                 VALUES (?, ?, ?, ?, NOW(), NOW())",
                (&o.identity.ip, &o.identity.port, &ip_port, now),
            );
            let id = match inserted {
                Ok(()) => c.last_insert_id(),
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => {
                    c.query_drop("ROLLBACK")?;
                    return Ok(Outcome::Exists);
                }
                Err(e) => return Err(e),
            };
            if id < ids.start {
                // Below the region's slice: the counter is raised to the slice and the
                // insert tried again (see `raise_counter`).
                c.query_drop("ROLLBACK")?;
                return Ok(Outcome::Below);
            }
            if id > max {
                c.query_drop("ROLLBACK")?;
                return Ok(Outcome::Beyond);
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
                    Ok(Outcome::Claimed(id, lock))
                }
                _ => {
                    c.query_drop("ROLLBACK")?;
                    Ok(Outcome::LockBusy(id))
                }
            }
        })?;
        match outcome {
            Outcome::Claimed(id, lock) => Ok(Some(Self::claimed(id, lock, now))),
            // A second process with this identity inserted it first: its row, its lock.
            Outcome::Exists => {
                let id = self.own_row()?.ok_or_else(|| {
                    o.fail(
                        "read leaf_workerid_alloc",
                        "the row of this identity vanished",
                    )
                })?;
                self.claim_own(id)
            }
            Outcome::Beyond => Err(self.none_free(ids)),
            Outcome::Below if raised => Err(self.none_free(ids)),
            Outcome::Below => {
                self.raise_counter(ids.start)?;
                self.claim_new_after(true)
            }
            Outcome::LockBusy(id) => Err(table::refused("MySQL", TableError::NewRowLocked { id })),
        }
    }

    /// [`Self::claim_new`] once the counter was raised (`raised`): a second id below the
    /// slice is refused rather than raised again.
    fn claim_new(&self) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        self.claim_new_after(false)
    }

    /// The id of this identity's row, if it has one.
    fn own_row(&self) -> Result<Option<u64>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        self.with_conn("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = ?",
                (&ip_port,),
            )
            .map(|rows: Vec<u64>| rows.into_iter().next())
        })
    }

    /// Raises the table's AUTO_INCREMENT to `start` (the region's first worker id) after an
    /// insert got an id below it. InnoDB never lowers it below the largest id + 1, and the
    /// insert that found it below `start` shows no id at or above `start` was handed out.
    fn raise_counter(&self, start: u64) -> Result<(), WorkerError> {
        self.with_conn("raise the AUTO_INCREMENT of leaf_workerid_alloc", |c| {
            c.query_drop(format!(
                "ALTER TABLE leaf_workerid_alloc AUTO_INCREMENT = {start}"
            ))
        })?;
        tracing::info!(
            "raised leaf_workerid_alloc's AUTO_INCREMENT to {start}, the region's first worker id"
        );
        Ok(())
    }

    /// Deletes this identity's own row when its id is outside the worker ids it may hand out
    /// (beyond the layout, or outside the region's slice) (a row an older
    /// version inserted on a refused attempt): it could never be used, and AUTO_INCREMENT
    /// never hands its id out again. Refused while another connection holds its lock.
    fn retire_own(&self, id: u64) -> Result<(), WorkerError> {
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        if !got {
            return Err(WorkerError::IdentityInUse {
                identity: self.opts.identity.to_string(),
                path: format!(
                    "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                ),
            });
        }
        self.with_conn("delete from leaf_workerid_alloc", |c| {
            c.exec_drop("DELETE FROM leaf_workerid_alloc WHERE id = ?", (id,))
        })?;
        tracing::info!(
            "deleted this identity's leaf_workerid_alloc id {id}: outside the worker ids it may hand out (the layout's, or the region's slice)"
        );
        self.unlock(&lock)
    }
}

impl LeaseStore for MysqlLeaseStore {
    type Claim = MysqlClaim;

    /// This identity's own row when it has one; else the lowest free rows (no connection holds
    /// their lock, silent for 9 s or given back, `max_timestamp` within a window of our clock),
    /// then a new row ([`table::NEW_ROW`]).
    fn candidates(&self, ids: std::ops::Range<u64>) -> Result<Vec<u64>, WorkerError> {
        self.pick().ids = ids.clone();
        let (first, max_worker) = (ids.start, ids.end.saturating_sub(1));
        match self.own_row()? {
            Some(id) if ids.contains(&id) => {
                self.pick().own = Some(id);
                return Ok(vec![id, table::NEW_ROW]);
            }
            Some(id) => self.retire_own(id)?,
            None => {}
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let free: Vec<(u64, String)> =
            self.with_conn("list free rows of leaf_workerid_alloc", |c| {
                c.exec(
                    format!(
                        "SELECT id, ip_port FROM leaf_workerid_alloc \
                     WHERE id >= ? AND id <= ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_FREE_LOCK({}) = 1 ORDER BY id LIMIT {}",
                        lock_name_sql("id"),
                        table::FREE_ROWS_LISTED,
                        silent = silent_sql(now)
                    ),
                    (first, max_worker, reach),
                )
            })?;
        let mut pick = self.pick();
        let mut ids: Vec<u64> = free.iter().map(|(id, _)| *id).collect();
        pick.seen = free.into_iter().collect();
        ids.push(table::NEW_ROW);
        Ok(ids)
    }

    fn try_claim(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        if id == table::NEW_ROW {
            return self.claim_new();
        }
        if self.pick().own == Some(id) {
            return self.claim_own(id);
        }
        self.claim_free(id)
    }

    /// The compare is on the stored value itself and on the named lock being this
    /// connection's, in the one statement.
    fn write(&self, claim: &MysqlClaim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        let (changed, current) = self.with_conn("write max_timestamp", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET max_timestamp = ?, update_time = NOW() \
                     WHERE id = ? AND COALESCE(max_timestamp, 0) = ? \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (w.reserved_until, claim.worker, expected, &claim.lock),
            )?;
            if c.affected_rows() == 1 {
                return Ok((true, None));
            }
            let row: Option<(i64, Option<i64>, u64)> = c
                .exec(
                    "SELECT COALESCE(max_timestamp, 0), IS_USED_LOCK(?) = CONNECTION_ID(), \
                     CONNECTION_ID() FROM leaf_workerid_alloc WHERE id = ?",
                    (&claim.lock, claim.worker),
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
            None => lost(format!("row id {} no longer exists", claim.worker)),
            Some((_, _, on)) if on != self.connection_id => lost(format!(
                "its statements ran on MySQL connection {on}, not on connection {} that holds its named lock {}: a proxy in front of MySQL (ProxySQL) multiplexes the registry's connection; connect the worker registry to MySQL directly, or through a proxy that keeps one server connection per client",
                self.connection_id, claim.lock
            )),
            Some((_, held, _)) if held != Some(1) => {
                lost(format!("its named lock {} is no longer held", claim.lock))
            }
            // Matched but unchanged (the same value within the same second), or another's.
            Some((value, _, _)) => Ok(table::found(value, w.reserved_until)),
        }
    }

    fn still_held(&self, claim: &MysqlClaim) -> Result<(), WorkerError> {
        self.conn.still_held(claim.worker, "the MySQL connection")
    }

    /// `update_time` is the holder's report (what `workers list` shows as last seen); a row
    /// deleted under the holder ends the claim.
    fn report(&self, claim: &MysqlClaim, _now_ms: i64) -> Result<bool, WorkerError> {
        self.with_conn("report to leaf_workerid_alloc", |c| {
            c.exec_drop(
                "UPDATE leaf_workerid_alloc SET update_time = NOW() WHERE id = ?",
                (claim.worker,),
            )?;
            if c.affected_rows() == 1 {
                return Ok(true);
            }
            let rows: Vec<u64> = c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE id = ?",
                (claim.worker,),
            )?;
            Ok(!rows.is_empty())
        })
    }

    fn release(&self, claim: &MysqlClaim) {
        // Give the named lock back before the connection goes, so `workers list` sees the row
        // free as soon as this returns (closing the connection alone frees it a little later).
        // `update_time` NULL says "given back by its leafctl holder": a new identity may take
        // the row at once (not only after 9 s of silence, the sign NotFound9's servers give).
        let _ = self.with_conn("release the worker id", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET update_time = NULL \
                     WHERE id = ? AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (claim.worker, &claim.lock),
            )?;
            c.exec_drop("DO RELEASE_LOCK(?)", (&claim.lock,))
        });
        self.conn.lose();
    }

    fn worker(&self, claim: &MysqlClaim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &MysqlClaim) -> String {
        table::describe("MySQL", claim.worker, &self.opts.identity)
    }

    fn record_source(&self, claim: &MysqlClaim) -> String {
        table::record_source(claim.worker)
    }

    fn none_free(&self, ids: std::ops::Range<u64>) -> WorkerError {
        table::none_free("MySQL", self.opts.identity.to_string(), ids)
    }
}
