//! The worker-id registry's store on PostgreSQL: its statements for
//! [`TableLease`](crate::db::table_registry::TableLease), the fenced-lease protocol's store on one
//! dedicated session, and the registry's [`acquire`](crate::worker::WorkerRegistry::acquire),
//! which builds it (see [`super::registry`] for the protocol as a whole).

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::PgFailure;
use super::conn::Param;
use super::registry::{
    LOCK_CLASS, LOCK_WAIT, Marker, OwnSession, PostgresOptions, PostgresRegistry,
    SHARED_SESSION_FIX, fail, fenced, held_by_me, key,
};
use crate::db::table_registry::{
    self as table, Listed, LockHolder, NewRow, RowSql, TableLease, registered_meanwhile,
};
use crate::worker::lease::{FencedLease, Write, Written};
use crate::worker::{IssueOptions, WorkerError, WorkerLease, WorkerRegistry};

/// One dedicated session: it holds the row's advisory lock for as long as it lives (the store
/// is [`TableLease`](crate::db::table_registry::TableLease) of it).
pub(crate) struct PostgresLeaseStore {
    pub(super) opts: PostgresOptions,
    pub(super) conn: LockHolder<OwnSession, PgFailure>,
    /// The session marker taken at connect: every fenced statement checks it.
    pub(super) marker: Marker,
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

/// A new row of this identity (`ip`, `port`, `ip_port`, `max_timestamp`), returning its id; none
/// when a row of it is already there.
const INSERT_ROW: &str = "INSERT INTO leaf_workerid_alloc \
     (ip, port, ip_port, max_timestamp, create_time, update_time) \
     VALUES ($1::text, $2::text, $3::text, $4::bigint, now(), now()) \
     ON CONFLICT (ip_port) DO NOTHING RETURNING id";

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

impl PostgresLeaseStore {
    /// Tries row `id`'s advisory lock once.
    fn try_lock(&self, id: u64) -> Result<bool, WorkerError> {
        let got = self.conn.with("lock the worker id", |c| {
            let rows = c.query(
                &format!("SELECT pg_try_advisory_lock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )?;
            Ok(rows.first().and_then(|r| r.try_get::<_, bool>(0).ok()))
        })?;
        got.ok_or_else(|| fail("lock the worker id", "no answer row"))
    }

    fn in_use(&self, id: u64) -> WorkerError {
        WorkerError::IdentityInUse {
            identity: self.opts.identity.to_string(),
            path: format!(
                "the advisory lock of leaf_workerid_alloc id {id} is held by another PostgreSQL session"
            ),
        }
    }
}

impl RowSql for PostgresLeaseStore {
    /// The advisory lock is known by the row's id alone.
    type Lock = ();
    const COUNTER: &'static str = "id sequence";
    const DB: &'static str = "PostgreSQL";

    fn own_row(&self) -> Result<Option<u64>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let id = self.conn.with("read leaf_workerid_alloc", |c| {
            let rows = c.query(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = $1::text",
                vec![ip_port.as_str().into()],
            )?;
            Ok(first_i64(&rows, 0).flatten())
        })?;
        Ok(id.map(|id| u64::try_from(id).unwrap_or(u64::MAX)))
    }

    /// No session holds their advisory lock ([`lock_free_sql`]).
    fn free_rows(&self, ids: &Range<u64>, now_ms: i64, reach: i64) -> Result<Listed, WorkerError> {
        let (first, max_worker) = (ids.start, ids.end.saturating_sub(1));
        self.conn.with("list free rows of leaf_workerid_alloc", |c| {
            let rows = c.query(
                &format!(
                    "SELECT id, ip_port::text FROM leaf_workerid_alloc \
                     WHERE id >= $3::bigint AND id <= $1::bigint AND COALESCE(max_timestamp, 0) <= $2::bigint \
                     AND {} AND {} ORDER BY id LIMIT {}",
                    silent_sql(now_ms),
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
        })
    }

    /// Tries the advisory lock for up to [`LOCK_WAIT`] while the row is still this identity's,
    /// then reads the row under it (a previous holder's last write is in).
    fn claim_own(&self, id: u64) -> Result<Option<((), i64)>, WorkerError> {
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
        match self.read_row(id)? {
            Some((owner, stored)) if owner == ip_port => Ok(Some(((), stored))),
            // Re-owned by a new identity (or deleted) between the lookup and the lock.
            _ => {
                self.unlock(id, &())?;
                Ok(None)
            }
        }
    }

    fn lock_now(&self, id: u64) -> Result<Option<()>, WorkerError> {
        Ok(self.try_lock(id)?.then_some(()))
    }

    fn lock_waiting(&self, id: u64) -> Result<(), WorkerError> {
        let deadline = Instant::now() + LOCK_WAIT;
        while !self.try_lock(id)? {
            if Instant::now() >= deadline {
                return Err(self.in_use(id));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    fn unlock(&self, id: u64, _lock: &()) -> Result<(), WorkerError> {
        self.conn.with("release the worker id", |c| {
            c.query(
                &format!("SELECT pg_advisory_unlock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )
            .map(|_| ())
        })
    }

    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        self.conn.with("read leaf_workerid_alloc", |c| {
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

    /// The compare includes the session marker ([`fenced`]) and no row of this identity
    /// existing.
    fn take_row(
        &self,
        id: u64,
        _lock: &(),
        seen: &str,
        now_ms: i64,
        reach: i64,
    ) -> Result<bool, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let taken = self.conn.with("take a free row of leaf_workerid_alloc", |c| {
            // ON CONFLICT cannot guard an UPDATE: a row of this identity is looked for first.
            let changed = c.execute(
                &format!(
                    "UPDATE leaf_workerid_alloc SET ip = $1::text, port = $2::text, ip_port = $3::text, \
                     update_time = now() \
                     WHERE id = $4::bigint AND ip_port = $5::text AND COALESCE(max_timestamp, 0) <= $6::bigint \
                     AND {silent} AND {held} \
                     AND NOT EXISTS (SELECT 1 FROM leaf_workerid_alloc o WHERE o.ip_port = $3::text)",
                    silent = silent_sql(now_ms),
                    held = fenced(4, self.marker)
                ),
                vec![
                    o.identity.ip.as_str().into(),
                    o.identity.port.as_str().into(),
                    ip_port.as_str().into(),
                    key(id).into(),
                    seen.into(),
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
        taken.ok_or_else(|| registered_meanwhile(&o.identity))
    }

    fn insert_row(&self, ids: &Range<u64>, now_ms: i64) -> Result<NewRow<()>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        self.conn.with("insert into leaf_workerid_alloc", |c| {
            c.batch("BEGIN")?;
            let rows = c.query(
                INSERT_ROW,
                vec![
                    o.identity.ip.as_str().into(),
                    o.identity.port.as_str().into(),
                    ip_port.as_str().into(),
                    now_ms.into(),
                ],
            )?;
            let Some(id) = first_i64(&rows, 0).flatten() else {
                c.batch("ROLLBACK")?;
                return Ok(NewRow::Exists);
            };
            let id = u64::try_from(id).unwrap_or(u64::MAX);
            if let Some(refused) = NewRow::misplaced(id, ids) {
                c.batch("ROLLBACK")?;
                return Ok(refused);
            }
            let got = c.query(
                &format!("SELECT pg_try_advisory_lock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![key(id).into()],
            )?;
            if got.first().and_then(|r| r.try_get::<_, bool>(0).ok()) == Some(true) {
                c.batch("COMMIT")?;
                Ok(NewRow::Claimed(id, ()))
            } else {
                c.batch("ROLLBACK")?;
                Ok(NewRow::LockBusy(id))
            }
        })
    }

    /// Raises the `id` sequence to `start` (the region's first worker id); a sequence already
    /// at or past it is left alone (it never goes back).
    fn raise_counter(&self, start: u64) -> Result<(), WorkerError> {
        self.conn
            .with("raise the id sequence of leaf_workerid_alloc", |c| {
                c.query(
                    "SELECT setval(q.s, $1::bigint, false) FROM \
                 (SELECT pg_get_serial_sequence('leaf_workerid_alloc', 'id') AS s) AS q \
                 WHERE nextval(q.s) < $1::bigint",
                    vec![key(start).into()],
                )
                .map(|_| ())
            })
    }

    fn delete_row(&self, id: u64) -> Result<(), WorkerError> {
        self.conn
            .with("delete from leaf_workerid_alloc", |c| {
                c.execute(
                    "DELETE FROM leaf_workerid_alloc WHERE id = $1::bigint",
                    vec![key(id).into()],
                )
            })
            .map(|_| ())
    }

    /// The compare is on the stored value itself and on the advisory lock being this
    /// session's, in the one statement.
    fn write(
        &self,
        worker: u64,
        _lock: &(),
        expected: i64,
        w: &Write,
    ) -> Result<Written, WorkerError> {
        let id = i64::try_from(worker).unwrap_or(i64::MAX);
        let current = self.conn.with("write max_timestamp", |c| {
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
            // Behind a pool the server session outlives this connection: what this process
            // holds on it goes back first (the marker with the session, see `OwnSession`).
            let _ = self.unlock(worker, &());
            self.conn.lose();
            Ok(Written::NotHeld { reason })
        };
        match current {
            None => lost(format!("row id {worker} no longer exists")),
            Some((_, _, false)) => lost(format!(
                "the PostgreSQL session of the worker registry is not this process's own: the server session that ran its fenced write of leaf_workerid_alloc id {worker} holds another process's session marker, or not this one's: a pool in transaction or statement mode gives server sessions to several clients (another process uses this one now, or was killed while using it); {SHARED_SESSION_FIX}"
            )),
            Some((_, false, true)) => lost(format!(
                "its advisory lock (leaf_workerid_alloc id {worker}) is no longer held"
            )),
            Some((value, true, true)) => Ok(table::found(value, w.reserved_until)),
        }
    }

    /// `update_time` is the holder's report; a row deleted under the holder ends the claim.
    fn report(&self, worker: u64, _lock: &()) -> Result<bool, WorkerError> {
        let id = i64::try_from(worker).unwrap_or(i64::MAX);
        self.conn.with("report to leaf_workerid_alloc", |c| {
            let changed = c.execute(
                "UPDATE leaf_workerid_alloc SET update_time = now() WHERE id = $1::bigint",
                vec![Param::from(id)],
            )?;
            Ok(changed == 1)
        })
    }

    fn release(&self, worker: u64, _lock: &()) {
        // Give the lock back before the session goes, so `workers list` sees the row free as
        // soon as this returns.
        let id = i64::try_from(worker).unwrap_or(i64::MAX);
        // `update_time` NULL says "given back by its leafctl holder": a new identity may take
        // the row at once (not only after 9 s of silence, the sign NotFound9's servers give).
        let _ = self.conn.with("release the worker id", |c| {
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

    fn still_held(&self, worker: u64) -> Result<(), WorkerError> {
        self.conn.still_held(worker, "the PostgreSQL session")
    }

    fn fail(&self, action: &'static str, reason: String) -> WorkerError {
        fail(action, reason)
    }
}

// Taking a worker id is building this store: it lives here, beside the statements it runs,
// so the registry's other file (listing, reclaiming) needs nothing of this one.
impl WorkerRegistry for PostgresRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let conn = self.opts.connect_own()?;
        let marker = conn.marker;
        let store = PostgresLeaseStore {
            conn: LockHolder::new(
                conn,
                Box::new(|action, e| {
                    fail(
                        action,
                        e.map_or("the connection is closed".into(), |e| e.to_string()),
                    )
                }),
            ),
            marker,
            opts: self.opts.clone(),
        };
        FencedLease::for_generator(
            TableLease::new(store, self.opts.identity.clone(), options.clock.clone()),
            options,
        )
    }
}
