//! The worker-id registry's store on PostgreSQL: the fenced-lease protocol's [`LeaseStore`] on one
//! dedicated connection (see [`super::registry`] for the protocol as a whole).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::conn::{Param, PgConn};
use super::error::PgFailure;
use super::registry::{
    LOCK_CLASS, LOCK_WAIT, Marker, PostgresOptions, SHARED_SESSION_FIX, fail, fenced, held_by_me,
};
use crate::db::table_registry::{self as table, LockHolder, TableError};
use crate::snowflake::Clock;
use crate::worker::WorkerError;
use crate::worker::lease::{LeaseStore, Record, Write, Written};

/// One dedicated session: it holds the row's advisory lock for as long as it lives.
pub(crate) struct PostgresLeaseStore {
    pub(super) opts: PostgresOptions,
    pub(super) conn: LockHolder<PgConn>,
    /// The session marker taken at connect: every fenced statement checks it.
    pub(super) marker: Marker,
    pub(super) clock: Arc<dyn Clock>,
    /// What this acquisition's listing found.
    pub(super) pick: std::sync::Mutex<table::Pick>,
}

/// A held row: its id.
pub(crate) struct PostgresClaim {
    worker: u64,
}

impl PostgresLeaseStore {
    /// Runs `f` on the session; an error loses it (see [`LockHolder`]).
    fn with_conn<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&mut PgConn) -> Result<T, PgFailure>,
    ) -> Result<T, WorkerError> {
        self.conn.with(
            || fail(action, "the connection is closed"),
            |e| fail(action, e),
            f,
        )
    }
}

fn first_i64(rows: &[tokio_postgres::Row], col: usize) -> Option<Option<i64>> {
    rows.first().map(|r| r.try_get(col).ok().flatten())
}

/// "No session holds the advisory lock of the row in column `id`", in SQL (the locks read once
/// per statement, not once per row).
fn lock_free_sql() -> String {
    format!(
        "id::oid NOT IN (SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted \
         AND classid = {LOCK_CLASS} AND objsubid = 2 AND objid IS NOT NULL \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
    )
}

/// "A leafctl holder gave this row back (`update_time` NULL), or nobody wrote to it for
/// [`table::SILENT_MS`]: neither `update_time` (the server's clock) nor `max_timestamp` (`now_ms`
/// is our clock; NotFound9's servers rewrite it every 3 s) is that recent", in SQL.
fn silent_sql(now_ms: i64) -> String {
    format!(
        "(update_time IS NULL OR (update_time < now() - interval '{} milliseconds' \
         AND COALESCE(max_timestamp, 0) < {}))",
        table::SILENT_MS,
        now_ms.saturating_sub(table::SILENT_MS)
    )
}

pub(super) fn key(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

impl PostgresLeaseStore {
    fn pick(&self) -> std::sync::MutexGuard<'_, table::Pick> {
        self.pick.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tries row `id`'s advisory lock once.
    fn try_lock(&self, id: u64) -> Result<bool, WorkerError> {
        let got = self.with_conn("lock the worker id", |c| {
            let rows = c.query(
                &format!("SELECT pg_try_advisory_lock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )?;
            Ok(rows.first().and_then(|r| r.try_get::<_, bool>(0).ok()))
        })?;
        got.ok_or_else(|| fail("lock the worker id", "no answer row"))
    }

    fn unlock(&self, id: u64) -> Result<(), WorkerError> {
        self.with_conn("release the worker id", |c| {
            c.query(
                &format!("SELECT pg_advisory_unlock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )
            .map(|_| ())
        })
    }

    /// Row `id`'s `ip_port` and `max_timestamp`, read under its lock.
    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        self.with_conn("read leaf_workerid_alloc", |c| {
            let rows = c.query(
                "SELECT ip_port::text, COALESCE(max_timestamp, 0) FROM leaf_workerid_alloc \
                 WHERE id = $1::bigint",
                vec![key(id).into()],
            )?;
            Ok(rows.first().and_then(|r| {
                Some((
                    r.try_get::<_, String>(0).ok()?,
                    r.try_get::<_, i64>(1).ok()?,
                ))
            }))
        })
    }

    fn claimed(id: u64, reserved_until: i64) -> (PostgresClaim, Record) {
        (
            PostgresClaim { worker: id },
            Record {
                reserved_until,
                version: reserved_until,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            },
        )
    }

    fn in_use(&self, id: u64) -> WorkerError {
        WorkerError::IdentityInUse {
            identity: self.opts.identity.to_string(),
            path: format!(
                "the advisory lock of leaf_workerid_alloc id {id} is held by another PostgreSQL session"
            ),
        }
    }

    /// This identity's own row: tries its lock for a short while (a holder killed a moment ago
    /// keeps it until the server notices its session ended), then refuses. `None` when a new
    /// identity took the row meanwhile (this one then inserts a row).
    fn claim_own(&self, id: u64) -> Result<Option<(PostgresClaim, Record)>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            if self.try_lock(id)? {
                break;
            }
            let still_ours = self
                .read_row(id)?
                .is_some_and(|(owner, _)| owner == ip_port);
            if !still_ours {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                return Err(self.in_use(id));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Read under the lock: a previous holder's last write is in.
        match self.read_row(id)? {
            Some((owner, stored)) if owner == ip_port => Ok(Some(Self::claimed(id, stored))),
            // Re-owned by a new identity (or deleted) between the lookup and the lock.
            _ => {
                self.unlock(id)?;
                Ok(None)
            }
        }
    }

    /// Another identity's free row: its lock without waiting, then a compare-and-set that
    /// re-keys the row to this identity only if it still carries the `ip_port` listed and its
    /// holder is still gone (silent, fence within reach). `None`: someone else took it first.
    fn claim_free(&self, id: u64) -> Result<Option<(PostgresClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let Some(seen) = self.pick().seen.get(&id).cloned() else {
            return Ok(None);
        };
        if !self.try_lock(id)? {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let ip_port = o.identity.to_string();
        let taken = self.with_conn("take a free row of leaf_workerid_alloc", |c| {
            // ON CONFLICT cannot guard an UPDATE: a row of this identity is looked for first.
            let changed = c.execute(
                &format!(
                    "UPDATE leaf_workerid_alloc SET ip = $1::text, port = $2::text, ip_port = $3::text, \
                     update_time = now() \
                     WHERE id = $4::bigint AND ip_port = $5::text AND COALESCE(max_timestamp, 0) <= $6::bigint \
                     AND {silent} AND {held} \
                     AND NOT EXISTS (SELECT 1 FROM leaf_workerid_alloc o WHERE o.ip_port = $3::text)",
                    silent = silent_sql(now),
                    held = fenced(4, self.marker)
                ),
                vec![
                    o.identity.ip.as_str().into(),
                    o.identity.port.as_str().into(),
                    ip_port.as_str().into(),
                    key(id).into(),
                    seen.as_str().into(),
                    reach.into(),
                ],
            );
            match changed {
                Ok(n) => Ok(Some(n == 1)),
                // This identity got a row meanwhile (a second process with it): not this one.
                Err(f) if f.code() == Some("23505") => Ok(None),
                Err(f) => Err(f),
            }
        })?;
        match taken {
            Some(true) => {}
            Some(false) => {
                self.unlock(id)?;
                return Ok(None);
            }
            None => {
                return Err(WorkerError::IdentityInUse {
                    identity: ip_port,
                    path:
                        "another process with it registered a row of leaf_workerid_alloc meanwhile"
                            .into(),
                });
            }
        }
        tracing::info!("took leaf_workerid_alloc id {id}, last held by {seen}");
        match self.read_row(id)? {
            Some((_, stored)) => Ok(Some(Self::claimed(id, stored))),
            None => Err(fail(
                "read leaf_workerid_alloc",
                format!("row id {id} no longer exists"),
            )),
        }
    }

    /// A new row for this identity, in one transaction with the check of its id against the
    /// worker ids it may hand out and the take of its lock: a refusal rolls the row back.
    fn claim_new_after(
        &self,
        raised: bool,
    ) -> Result<Option<(PostgresClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let ids = self.pick().ids.clone();
        let max = ids.end.saturating_sub(1);
        let now = self.clock.now_ms();
        enum Outcome {
            Claimed(u64),
            Exists,
            Beyond,
            Below,
            LockBusy(u64),
        }
        let outcome = self.with_conn("insert into leaf_workerid_alloc", |c| {
            c.batch("BEGIN")?;
            let rows = c.query(
                "INSERT INTO leaf_workerid_alloc \
                 (ip, port, ip_port, max_timestamp, create_time, update_time) \
                 VALUES ($1::text, $2::text, $3::text, $4::bigint, now(), now()) \
                 ON CONFLICT (ip_port) DO NOTHING RETURNING id",
                vec![
                    o.identity.ip.as_str().into(),
                    o.identity.port.as_str().into(),
                    ip_port.as_str().into(),
                    now.into(),
                ],
            )?;
            let Some(id) = first_i64(&rows, 0).flatten() else {
                c.batch("ROLLBACK")?;
                return Ok(Outcome::Exists);
            };
            let id = u64::try_from(id).unwrap_or(u64::MAX);
            if id < ids.start {
                // Below the region's slice: the counter is raised to the slice and the
                // insert tried again (see `raise_counter`).
                c.batch("ROLLBACK")?;
                return Ok(Outcome::Below);
            }
            if id > max {
                c.batch("ROLLBACK")?;
                return Ok(Outcome::Beyond);
            }
            let got = c.query(
                &format!("SELECT pg_try_advisory_lock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )?;
            if got.first().and_then(|r| r.try_get::<_, bool>(0).ok()) == Some(true) {
                c.batch("COMMIT")?;
                Ok(Outcome::Claimed(id))
            } else {
                c.batch("ROLLBACK")?;
                Ok(Outcome::LockBusy(id))
            }
        })?;
        match outcome {
            Outcome::Claimed(id) => Ok(Some(Self::claimed(id, now))),
            // A second process with this identity inserted it first: its row, its lock.
            Outcome::Exists => {
                let id = self.own_row()?.ok_or_else(|| {
                    fail(
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
            Outcome::LockBusy(id) => Err(table::refused(
                "PostgreSQL",
                TableError::NewRowLocked { id },
            )),
        }
    }

    /// [`Self::claim_new`] once the counter was raised (`raised`): a second id below the
    /// slice is refused rather than raised again.
    fn claim_new(&self) -> Result<Option<(PostgresClaim, Record)>, WorkerError> {
        self.claim_new_after(false)
    }

    /// The id of this identity's row, if it has one.
    fn own_row(&self) -> Result<Option<u64>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let id = self.with_conn("read leaf_workerid_alloc", |c| {
            let rows = c.query(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = $1::text",
                vec![ip_port.as_str().into()],
            )?;
            Ok(first_i64(&rows, 0).flatten())
        })?;
        Ok(id.map(|id| u64::try_from(id).unwrap_or(u64::MAX)))
    }

    /// Raises the `id` sequence to `start` (the region's first worker id) after an insert got
    /// an id below it; a sequence already at or past it is left alone (it never goes back).
    fn raise_counter(&self, start: u64) -> Result<(), WorkerError> {
        self.with_conn("raise the id sequence of leaf_workerid_alloc", |c| {
            c.query(
                "SELECT setval(q.s, $1::bigint, false) FROM \
                 (SELECT pg_get_serial_sequence('leaf_workerid_alloc', 'id') AS s) AS q \
                 WHERE nextval(q.s) < $1::bigint",
                vec![key(start).into()],
            )
            .map(|_| ())
        })?;
        tracing::info!(
            "raised leaf_workerid_alloc's id sequence to {start}, the region's first worker id"
        );
        Ok(())
    }

    /// Deletes this identity's own row when its id is outside the worker ids it may hand out
    /// (beyond the layout, or outside the region's slice) (a row an older
    /// version inserted on a refused attempt): it could never be used, and the sequence never
    /// hands its id out again. Refused while another session holds its lock.
    fn retire_own(&self, id: u64) -> Result<(), WorkerError> {
        let deadline = Instant::now() + LOCK_WAIT;
        while !self.try_lock(id)? {
            if Instant::now() >= deadline {
                return Err(self.in_use(id));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.with_conn("delete from leaf_workerid_alloc", |c| {
            c.execute(
                "DELETE FROM leaf_workerid_alloc WHERE id = $1::bigint",
                vec![key(id).into()],
            )
        })?;
        tracing::info!(
            "deleted this identity's leaf_workerid_alloc id {id}: outside the worker ids it may hand out (the layout's, or the region's slice)"
        );
        self.unlock(id)
    }
}

impl LeaseStore for PostgresLeaseStore {
    type Claim = PostgresClaim;

    /// This identity's own row when it has one; else the lowest free rows (no session holds
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
        let free = self.with_conn("list free rows of leaf_workerid_alloc", |c| {
            let rows = c.query(
                &format!(
                    "SELECT id, ip_port::text FROM leaf_workerid_alloc \
                     WHERE id >= $3::bigint AND id <= $1::bigint AND COALESCE(max_timestamp, 0) <= $2::bigint \
                     AND {} AND {} ORDER BY id LIMIT {}",
                    silent_sql(now),
                    lock_free_sql(),
                    table::FREE_ROWS_LISTED
                ),
                vec![key(max_worker).into(), reach.into(), key(first).into()],
            )?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    let id = r.try_get::<_, i64>(0).ok()?;
                    Some((u64::try_from(id).ok()?, r.try_get::<_, String>(1).ok()?))
                })
                .collect::<Vec<_>>())
        })?;
        let mut pick = self.pick();
        let mut ids: Vec<u64> = free.iter().map(|(id, _)| *id).collect();
        pick.seen = free.into_iter().collect();
        ids.push(table::NEW_ROW);
        Ok(ids)
    }

    fn try_claim(&self, id: u64) -> Result<Option<(PostgresClaim, Record)>, WorkerError> {
        if id == table::NEW_ROW {
            return self.claim_new();
        }
        if self.pick().own == Some(id) {
            return self.claim_own(id);
        }
        self.claim_free(id)
    }

    /// The compare is on the stored value itself and on the advisory lock being this
    /// session's, in the one statement.
    fn write(
        &self,
        claim: &PostgresClaim,
        expected: i64,
        w: &Write,
    ) -> Result<Written, WorkerError> {
        let id = i64::try_from(claim.worker).unwrap_or(i64::MAX);
        let current = self.with_conn("write max_timestamp", |c| {
            let changed = c.execute(
                &format!(
                    "UPDATE leaf_workerid_alloc SET max_timestamp = $1::bigint, update_time = now() \
                     WHERE id = $2::bigint AND COALESCE(max_timestamp, 0) = $3::bigint AND {}",
                    fenced(2, self.marker)
                ),
                vec![w.reserved_until.into(), id.into(), expected.into()],
            )?;
            if changed == 1 {
                return Ok(None);
            }
            let rows = c.query(
                &format!(
                    "SELECT COALESCE(max_timestamp, 0), {}, {} FROM leaf_workerid_alloc \
                     WHERE id = $1::bigint",
                    held_by_me(1),
                    self.marker.own_session_sql()
                ),
                vec![id.into()],
            )?;
            Ok(Some(rows.first().map(|r| {
                (
                    r.try_get::<_, i64>(0).unwrap_or(0),
                    r.try_get::<_, bool>(1).unwrap_or(false),
                    r.try_get::<_, bool>(2).unwrap_or(false),
                )
            })))
        })?;
        let Some(current) = current else {
            return Ok(Written::Applied {
                version: w.reserved_until,
            });
        };
        let lost = |reason: String| {
            self.conn.lose();
            Ok(Written::NotHeld { reason })
        };
        match current {
            None => lost(format!("row id {} no longer exists", claim.worker)),
            Some((_, _, false)) => lost(format!(
                "the PostgreSQL session of the worker registry is not this process's own: the server session that ran its fenced write of leaf_workerid_alloc id {} holds another leafctl registry's session marker, or not this one's (a transaction or statement pool shares server sessions); {SHARED_SESSION_FIX}",
                claim.worker
            )),
            Some((_, false, true)) => lost(format!(
                "its advisory lock (leaf_workerid_alloc id {}) is no longer held",
                claim.worker
            )),
            Some((value, true, true)) => Ok(table::found(value, w.reserved_until)),
        }
    }

    fn still_held(&self, claim: &PostgresClaim) -> Result<(), WorkerError> {
        self.conn.still_held(claim.worker, "the PostgreSQL session")
    }

    /// `update_time` is the holder's report; a row deleted under the holder ends the claim.
    fn report(&self, claim: &PostgresClaim, _now_ms: i64) -> Result<bool, WorkerError> {
        let id = i64::try_from(claim.worker).unwrap_or(i64::MAX);
        self.with_conn("report to leaf_workerid_alloc", |c| {
            let changed = c.execute(
                "UPDATE leaf_workerid_alloc SET update_time = now() WHERE id = $1::bigint",
                vec![Param::from(id)],
            )?;
            Ok(changed == 1)
        })
    }

    fn release(&self, claim: &PostgresClaim) {
        // Give the lock back before the session goes, so `workers list` sees the row free as
        // soon as this returns.
        let id = i64::try_from(claim.worker).unwrap_or(i64::MAX);
        // `update_time` NULL says "given back by its leafctl holder": a new identity may take
        // the row at once (not only after 9 s of silence, the sign NotFound9's servers give).
        let _ = self.with_conn("release the worker id", |c| {
            c.execute(
                &format!(
                    "UPDATE leaf_workerid_alloc SET update_time = NULL WHERE id = $1::bigint AND {}",
                    fenced(1, self.marker)
                ),
                vec![id.into()],
            )?;
            c.query(
                &format!("SELECT pg_advisory_unlock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![id.into()],
            )
        });
        self.conn.lose();
    }

    fn worker(&self, claim: &PostgresClaim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &PostgresClaim) -> String {
        table::describe("PostgreSQL", claim.worker, &self.opts.identity)
    }

    fn record_source(&self, claim: &PostgresClaim) -> String {
        table::record_source(claim.worker)
    }

    fn none_free(&self, ids: std::ops::Range<u64>) -> WorkerError {
        table::none_free("PostgreSQL", self.opts.identity.to_string(), ids)
    }
}
