//! What the database registries (MySQL, PostgreSQL) share: NotFound9's `leaf_workerid_alloc`
//! read into [`WorkerRecord`]s the same way, one dedicated connection whose lock on a row lives
//! as long as it does ([`LockHolder`]), and the rule by which rows are recycled.
//!
//! An identity (`ip:port`) that has a row takes that row, as in NotFound9's servers. A new
//! identity takes the lowest row whose holder is gone, the same way the ZooKeeper and etcd leases
//! take the lowest free id: no connection holds the row's lock (a leafctl holder's only sign of
//! life), its `update_time` is NULL (given back by a leafctl holder's release or by `workers
//! reclaim`), or else neither it nor `max_timestamp` was written within [`SILENT_MS`]
//! (NotFound9's servers hold no lock and rewrite `max_timestamp` every 3 s, and `update_time`
//! with it in their DDL, which adds `ON UPDATE CURRENT_TIMESTAMP`; their inserts set it, never
//! NULL), and its `max_timestamp` is at most [`REUSE_AHEAD_MS`] ahead of the clock. It takes the
//! row's lock without waiting, then re-keys the row to itself (`ip`, `port`, `ip_port`) by one
//! `UPDATE` that compares the `ip_port` it listed, the silence and the lock's owner; the row
//! keeps its `max_timestamp`, which the protocol waits out like any predecessor's record. Only
//! when no row is free is a row inserted, in one transaction with the check of its id against
//! the layout and the take of its lock, so a refused attempt leaves nothing behind.
//!
//! ## The lease store
//!
//! The worker-id registry's lease store on `leaf_workerid_alloc`, once for every database that
//! keeps worker ids: which rows to try and in what order, and how this identity's own row, a
//! free row and a new row are claimed ([`TableLease`]). Each database gives only its statements
//! and its kind of lock ([`RowSql`]); the rule it follows is the one above.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::resolved::Resolved;
use crate::snowflake::Clock;
use crate::worker::lease::{LeaseStore, Record, Write, Written};
use crate::worker::record::{WorkerStatus, status_of};
use crate::worker::setting::{BackendSetting, SettingDefault, SettingKind};
use crate::worker::{
    Identity, LEASE_WINDOW_MS, RegistryKind, RegistrySettings, StoreError, StoreFailure,
    WorkerError, WorkerRecord,
};

/// One row of `leaf_workerid_alloc` as `workers list` shows it. `held`: a live connection holds
/// the row's lock.
pub(crate) fn listed(
    kind: RegistryKind,
    id: u64,
    ip_port: String,
    max_timestamp: Option<i64>,
    updated_ms: Option<i64>,
    held: bool,
    now_ms: i64,
) -> WorkerRecord {
    // max_timestamp may legitimately run one window ahead (a reservation).
    let ahead = max_timestamp.is_some_and(|t| t > now_ms + LEASE_WINDOW_MS);
    let status = if ahead {
        WorkerStatus::ClockAhead
    } else {
        status_of(kind, held, updated_ms, now_ms)
    };
    WorkerRecord {
        worker: id,
        identity: ip_port,
        mode: kind,
        last_seen_ms: updated_ms,
        reserved_until_ms: max_timestamp,
        held,
        status,
        location: format!("leaf_workerid_alloc id {id}"),
    }
}

/// Where a held row's record lives, for messages.
pub(crate) fn record_source(worker: u64) -> String {
    format!("max_timestamp of leaf_workerid_alloc id {worker}")
}

// The reuse rules a table registry follows (which row a new identity may take, and when) are
// the protocol's, in `crate::worker::lease`, where the simulation checks them.
pub(crate) use crate::worker::lease::{NEW_ROW, REUSE_AHEAD_MS, SILENT_MS};

/// How many free rows one acquisition lists (the lowest first); past them it inserts a row.
pub(crate) const FREE_ROWS_LISTED: u64 = 16;

/// `LEAF_DB_REGISTRY_WAIT_TIMEOUT_S`, `db.registry_wait_timeout_s`: how long the database keeps
/// a silent registry connection and its lock, on every database that keeps worker ids.
pub const WAIT_TIMEOUT: BackendSetting = BackendSetting::new(
    "db.registry_wait_timeout_s",
    "seconds",
    "",
    SettingKind::Whole {
        min: 0,
        max: u64::MAX,
    },
)
.help_made(|| {
    let stores: Vec<&str> = crate::db::registry_databases()
        .filter_map(|(_, r)| r.backend.store)
        .collect();
    format!(
        "How long {} keep a silent registry holder's lock (6 or more)",
        stores.join("/")
    )
})
.env("LEAF_DB_REGISTRY_WAIT_TIMEOUT_S")
.default(SettingDefault::Whole(
    crate::db::DEFAULT_REGISTRY_WAIT_TIMEOUT.as_secs(),
))
.check(|v, o, s| {
    let v = v.whole()?;
    let min = crate::db::MIN_REGISTRY_WAIT_TIMEOUT.as_secs();
    let max = crate::db::MAX_REGISTRY_WAIT_TIMEOUT_S;
    (!(min..=max).contains(&v)).then(|| {
        (
            format!("registry wait_timeout {v} s (from {o}) is not in {min}..={max}"),
            format!(
                "use at least {min} s, twice the registry's 3 s report ({})",
                s.names()
            ),
        )
    })
});

/// The settings of every database's worker-id registry.
pub(crate) const SETTINGS: &[&BackendSetting] = &[&WAIT_TIMEOUT];

/// How long the database keeps a silent registry connection, as `settings` give it.
pub(crate) fn wait_timeout(settings: &RegistrySettings) -> Option<std::time::Duration> {
    let seconds = settings.values.whole(&WAIT_TIMEOUT)?.value;
    Some(std::time::Duration::from_secs(seconds))
}

/// The database URL of `settings` for the registry `kind` (mysql, postgres), refused unless
/// it names the database that registry keeps its table in.
pub(crate) fn db_url(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<&Resolved<String>, WorkerError> {
    let db = &settings.db_url;
    if crate::db::db_registry(&db.value) != Some(kind) {
        let store = crate::db::table_registry(kind)
            .and_then(|r| r.backend.store)
            .unwrap_or_default();
        return Err(WorkerError::setting(
            format!(
                "the {} registry needs a {store} database, not {} (from {})",
                kind.name(),
                crate::db::redact_url(&db.value),
                db.origin
            ),
            format!(
                "pass --db {}://user@host:port/database (password in LEAF_DB_PASSWORD)",
                kind.name()
            ),
        ));
    }
    Ok(db)
}

/// The table's own refusals, said the same way on MySQL and PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// No row can be taken and a new row's id would be beyond the layout.
    #[error(
        "no worker id of leaf_workerid_alloc is free for {identity}: ids {first}..={max} are all taken \
         (held by a live process, written within the last 9 s, or reserved more than 3 s ahead); \
         nothing was written"
    )]
    NoFreeRow {
        /// The identity asking.
        identity: String,
        /// The first worker id it may hand out (the region's slice; 0 without a region).
        first: u64,
        /// The largest worker id it may hand out (the layout's, or the region's slice's).
        max: u64,
    },
    /// `workers reclaim` found the row taken by a new holder after it was listed.
    #[error("{location} was taken by a new holder since it was listed; nothing was changed")]
    TakenMeanwhile {
        /// The row (`leaf_workerid_alloc id N`).
        location: String,
    },
    /// A new row's lock is held already: a holder of a row deleted by a forced reclaim (whose
    /// lock outlives the row) is still running.
    #[error(
        "the lock of the new leaf_workerid_alloc row id {id} is held by another connection (the holder of a row deleted with --force?); nothing was written"
    )]
    NewRowLocked {
        /// The new row's id.
        id: u64,
    },
}

impl StoreError for TableError {
    fn hint(&self) -> &'static str {
        match self {
            TableError::NoFreeRow { .. } => {
                "retry once a holder has exited (a killed holder's row is free 9 s after its reservation ran out), \
                 or `leafctl workers list --db URL` and `leafctl workers reclaim ID --yes` a stale row, \
                 or use a layout with more worker bits"
            }
            TableError::TakenMeanwhile { .. } => {
                "the id is in use again: `leafctl workers list --db URL` shows its new holder"
            }
            TableError::NewRowLocked { .. } => {
                "stop the process that held the deleted row (`leafctl workers list --db URL` shows the live rows), then retry"
            }
        }
    }
}

/// The table's refusal `e`, as a [`WorkerError`] of `db` (MySQL, PostgreSQL).
pub(crate) fn refused(db: &'static str, e: TableError) -> WorkerError {
    WorkerError::Store(StoreFailure::new(db, e))
}

/// The error when no row can be had for `identity` (on `db`: MySQL, PostgreSQL).
pub(crate) fn none_free(db: &'static str, identity: String, ids: Range<u64>) -> WorkerError {
    refused(
        db,
        TableError::NoFreeRow {
            identity,
            first: ids.start,
            max: ids.end.saturating_sub(1),
        },
    )
}

/// What a fenced write of `max_timestamp` found when it changed no row and the row is still
/// this holder's: `value` where `asked` was to be written. Unchanged (the same value written
/// again) is applied; anything else was written by someone else, since a lost answer loses the
/// connection and a change is never this holder's own.
pub(crate) fn found(value: i64, asked: i64) -> Written {
    if value == asked {
        return Written::Applied { version: value };
    }
    Written::Changed {
        current: Record {
            reserved_until: value,
            version: value,
            ahead_allowance_ms: None,
            writer_lead_ms: 0,
        },
        own: false,
    }
}

/// A held row, for logs and `next -v` (`db`: MySQL, PostgreSQL).
pub(crate) fn describe(db: &str, worker: u64, identity: &impl std::fmt::Display) -> String {
    format!("{db} leaf_workerid_alloc id {worker} ({identity})")
}

/// What `workers reclaim` reports after marking a locked row given back (`marked` rows changed).
pub(crate) fn marked_given_back(record: &WorkerRecord, marked: u64) -> Vec<String> {
    if marked == 0 {
        return Vec::new();
    }
    vec![format!(
        "the last report (update_time) of {}; the row stays, with its max_timestamp, for the next new identity",
        record.location
    )]
}

/// What `workers reclaim --force` reports after deleting a held row (`deleted` rows).
pub(crate) fn deleted(record: &WorkerRecord, deleted: u64) -> Vec<String> {
    if deleted == 0 {
        return Vec::new();
    }
    vec![record.location.clone()]
}

/// `workers reclaim`'s refusal when a row listed free was taken since (on `db`).
pub(crate) fn taken_meanwhile(db: &'static str, record: &WorkerRecord) -> WorkerError {
    refused(
        db,
        TableError::TakenMeanwhile {
            location: record.location.clone(),
        },
    )
}

/// What one acquisition learnt from its listing, for its claims.
#[derive(Debug, Default)]
pub(crate) struct Pick {
    /// This identity's own row, if it has one in range.
    pub own: Option<u64>,
    /// The free rows listed, each with the `ip_port` it carried (what the take compares).
    pub seen: std::collections::HashMap<u64, String>,
    /// The worker ids it may hand out: the region's slice, or the layout's range.
    pub ids: std::ops::Range<u64>,
}

/// `workers reclaim`'s plan for a row of `leaf_workerid_alloc` (`db`: MySQL, PostgreSQL).
pub(crate) fn reclaim_plan(db: &str, record: &WorkerRecord) -> Option<String> {
    if record.held {
        Some(format!(
            "delete row id {id} ({who}) of leaf_workerid_alloc, so its holder stops at its next report; \
             the id is retired ({db} never hands it out again: its max_timestamp goes with the row)",
            id = record.worker,
            who = record.identity
        ))
    } else if record.last_seen_ms.is_none() {
        // Given back already (update_time NULL): marking it again changes nothing.
        None
    } else {
        Some(format!(
            "mark row id {id} ({who}) of leaf_workerid_alloc given back: the next new identity takes \
             worker id {id} (the row keeps its max_timestamp, which that holder waits out)",
            id = record.worker,
            who = record.identity
        ))
    }
}

/// The one connection that holds a row's lock: the lock lives exactly as long as the
/// connection, so the first failed statement loses both, for good (the lock may be gone, and an
/// answer to an abandoned statement may follow).
pub(crate) struct LockHolder<C, E> {
    conn: Mutex<Option<C>>,
    /// Cleared with the connection; read by "still held?" without the mutex, which a write
    /// holds for as long as its SQL takes (seconds, against a frozen server).
    usable: AtomicBool,
    /// The registry's error for an action whose statement failed with `E`, or (`None`) that
    /// found the connection closed.
    fail: Failure<E>,
}

/// How a [`LockHolder`]'s failures read: the action, and the statement's error (`None`: the
/// connection is closed).
pub(crate) type Failure<E> = Box<dyn Fn(&'static str, Option<E>) -> WorkerError + Send + Sync>;

impl<C, E> LockHolder<C, E> {
    /// Holds `conn`; `fail` says what went wrong ([`LockHolder::with`]).
    pub fn new(conn: C, fail: Failure<E>) -> LockHolder<C, E> {
        LockHolder {
            conn: Mutex::new(Some(conn)),
            usable: AtomicBool::new(true),
            fail,
        }
    }

    /// The connection, and with it the lock, is gone: never used again.
    pub fn lose(&self) {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        *guard = None;
        self.usable.store(false, Ordering::Release);
    }

    /// Whether the connection is still there (lock-free).
    pub fn usable(&self) -> bool {
        self.usable.load(Ordering::Acquire)
    }

    /// Fails, lock-free, when the connection holding `worker` is gone (`connection`: "the
    /// MySQL connection", ...): `/readyz` and every request ask, and must not wait for a write.
    pub fn still_held(&self, worker: u64, connection: &str) -> Result<(), WorkerError> {
        if !self.usable() {
            return Err(WorkerError::Stopped {
                worker,
                reason: format!("{connection} holding it failed or was closed"),
            });
        }
        Ok(())
    }

    /// Runs `f` (the statements of `action`) on the connection; an error loses it, and reads
    /// as the holder's `fail` says.
    pub fn with<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&mut C) -> Result<T, E>,
    ) -> Result<T, WorkerError> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let Some(conn) = guard.as_mut() else {
            return Err((self.fail)(action, None));
        };
        match f(conn) {
            Ok(v) => Ok(v),
            Err(e) => {
                *guard = None;
                self.usable.store(false, Ordering::Release);
                Err((self.fail)(action, Some(e)))
            }
        }
    }
}

impl<C, E> Drop for LockHolder<C, E> {
    fn drop(&mut self) {
        self.lose();
    }
}

// The lease store: which rows to try, and how each is claimed.

/// How the insert of a new row ended ([`RowSql::insert_row`]); only `Claimed` committed.
pub(crate) enum NewRow<L> {
    /// Inserted as row `id`, its lock taken, committed.
    Claimed(u64, L),
    /// This identity has a row already (a second process with it inserted it first).
    Exists,
    /// Its id is past the worker ids it may hand out.
    Beyond,
    /// Its id is below them (below the region's slice): the counter is raised to the slice
    /// and the insert tried again ([`RowSql::raise_counter`]).
    Below,
    /// Someone else held the new row's lock.
    LockBusy(u64),
}

impl<L> NewRow<L> {
    /// `Below` or `Beyond` when the inserted `id` lies outside `ids`, the worker ids it may hand
    /// out: the insert is then rolled back.
    pub fn misplaced(id: u64, ids: &Range<u64>) -> Option<NewRow<L>> {
        if id < ids.start {
            Some(NewRow::Below)
        } else if id > ids.end.saturating_sub(1) {
            Some(NewRow::Beyond)
        } else {
            None
        }
    }
}

/// Free rows as [`RowSql::free_rows`] lists them: each id with the `ip_port` it carried.
pub(crate) type Listed = Vec<(u64, String)>;

/// What a database does its own way for [`TableLease`]: its statements, on the one connection
/// (MySQL) or session (PostgreSQL) that holds a row's lock for as long as it lives.
pub(crate) trait RowSql: Send + Sync + 'static {
    /// What a held row's lock is known by besides the row's id (MySQL: the named lock's name).
    type Lock: Send + Sync;
    /// The database, in messages (`MySQL`).
    const DB: &'static str;
    /// The table's id counter, in messages (`AUTO_INCREMENT`).
    const COUNTER: &'static str;

    /// The id of this identity's row, if it has one.
    fn own_row(&self) -> Result<Option<u64>, WorkerError>;
    /// The lowest free rows in `ids`, each with its `ip_port`: no one holds their lock, silent
    /// for [`SILENT_MS`] or given back, `max_timestamp` at most `reach`.
    fn free_rows(&self, ids: &Range<u64>, now_ms: i64, reach: i64) -> Result<Listed, WorkerError>;
    /// This identity's own row `id`: its lock (waiting briefly for it: a holder killed a moment
    /// ago keeps it until the server notices), with the row's `max_timestamp` read under it.
    /// `None` when a new identity took the row meanwhile; an error when another holds it.
    fn claim_own(&self, id: u64) -> Result<Option<(Self::Lock, i64)>, WorkerError>;
    /// Row `id`'s lock without waiting; `None` when someone holds it.
    fn lock_now(&self, id: u64) -> Result<Option<Self::Lock>, WorkerError>;
    /// Row `id`'s lock, waiting a little; refused ([`WorkerError::IdentityInUse`]) while
    /// another connection holds it.
    fn lock_waiting(&self, id: u64) -> Result<Self::Lock, WorkerError>;
    /// Gives row `id`'s lock back.
    fn unlock(&self, id: u64, lock: &Self::Lock) -> Result<(), WorkerError>;
    /// Row `id`'s `ip_port` and `max_timestamp`.
    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError>;
    /// Re-keys free row `id` (locked by `lock`) to this identity in one compare-and-set: only
    /// if it still carries `seen`, is still silent and its fence at most `reach`. False when it
    /// changed no row; [`WorkerError::IdentityInUse`] when a row of this identity appeared
    /// meanwhile ([`registered_meanwhile`]).
    fn take_row(
        &self,
        id: u64,
        lock: &Self::Lock,
        seen: &str,
        now_ms: i64,
        reach: i64,
    ) -> Result<bool, WorkerError>;
    /// Inserts a row for this identity with `max_timestamp` `now_ms`, in one transaction with
    /// the check of its id against `ids` ([`NewRow::misplaced`]) and the take of its lock.
    fn insert_row(&self, ids: &Range<u64>, now_ms: i64) -> Result<NewRow<Self::Lock>, WorkerError>;
    /// Raises the table's id counter ([`RowSql::COUNTER`]) to `start` after an insert got an id
    /// below it.
    fn raise_counter(&self, start: u64) -> Result<(), WorkerError>;
    /// Deletes row `id`.
    fn delete_row(&self, id: u64) -> Result<(), WorkerError>;

    /// [`LeaseStore::write`] on held row `worker`.
    fn write(
        &self,
        worker: u64,
        lock: &Self::Lock,
        expected: i64,
        w: &Write,
    ) -> Result<Written, WorkerError>;
    /// [`LeaseStore::report`] of held row `worker`.
    fn report(&self, worker: u64, lock: &Self::Lock) -> Result<bool, WorkerError>;
    /// [`LeaseStore::release`] of held row `worker`.
    fn release(&self, worker: u64, lock: &Self::Lock);
    /// [`LeaseStore::still_held`] for held row `worker`: whether the connection holding its
    /// lock is still there ([`LockHolder::still_held`]).
    fn still_held(&self, worker: u64) -> Result<(), WorkerError>;
    /// The registry's error for `action` failing with `reason`.
    fn fail(&self, action: &'static str, reason: String) -> WorkerError;
}

/// [`WorkerError::IdentityInUse`] when another process with this identity registered a row
/// while this one took a free row.
pub(crate) fn registered_meanwhile(identity: &Identity) -> WorkerError {
    WorkerError::IdentityInUse {
        identity: identity.to_string(),
        path: "another process with it registered a row of leaf_workerid_alloc meanwhile".into(),
    }
}

/// The lease store on `leaf_workerid_alloc` of the database `rows` speaks for, with what every
/// database's store keeps alike.
pub(crate) struct TableLease<R> {
    rows: R,
    /// The identity (`ip:port`) rows are claimed for.
    identity: Identity,
    /// Our clock (what `max_timestamp` is compared with).
    clock: Arc<dyn Clock>,
    /// What this acquisition's listing found.
    pick: Mutex<Pick>,
}

/// A held row: its id and its lock.
pub(crate) struct RowClaim<L> {
    worker: u64,
    lock: L,
}

/// What a claim attempt gives: the held row with its record, `None` when someone else has it.
type Claimed<R> = Result<Option<(RowClaim<<R as RowSql>::Lock>, Record)>, WorkerError>;

impl<R: RowSql> TableLease<R> {
    /// The store on `rows` for `identity`, its clock `clock`.
    pub fn new(rows: R, identity: Identity, clock: Arc<dyn Clock>) -> TableLease<R> {
        TableLease {
            rows,
            identity,
            clock,
            pick: Mutex::default(),
        }
    }

    fn pick(&self) -> MutexGuard<'_, Pick> {
        self.pick.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claimed(id: u64, lock: R::Lock, reserved_until: i64) -> (RowClaim<R::Lock>, Record) {
        (
            RowClaim { worker: id, lock },
            Record {
                reserved_until,
                version: reserved_until,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            },
        )
    }

    /// This identity's own row ([`RowSql::claim_own`]).
    fn claim_own(&self, id: u64) -> Claimed<R> {
        Ok(self
            .rows
            .claim_own(id)?
            .map(|(lock, stored)| Self::claimed(id, lock, stored)))
    }

    /// Another identity's free row: its lock without waiting, then a compare-and-set that
    /// re-keys the row to this identity only if it still carries the `ip_port` listed and its
    /// holder is still gone (silent, fence within reach). `None`: someone else took it first.
    fn claim_free(&self, id: u64) -> Claimed<R> {
        let r = &self.rows;
        let Some(seen) = self.pick().seen.get(&id).cloned() else {
            return Ok(None);
        };
        let Some(lock) = r.lock_now(id)? else {
            return Ok(None);
        };
        let now = self.clock.now_ms();
        let reach = now.saturating_add(REUSE_AHEAD_MS);
        if !r.take_row(id, &lock, &seen, now, reach)? {
            r.unlock(id, &lock)?;
            return Ok(None);
        }
        tracing::info!("took leaf_workerid_alloc id {id}, last held by {seen}");
        match r.read_row(id)? {
            Some((_, stored)) => Ok(Some(Self::claimed(id, lock, stored))),
            None => Err(r.fail(
                "read leaf_workerid_alloc",
                format!("row id {id} no longer exists"),
            )),
        }
    }

    /// A new row for this identity, in one transaction with the check of its id against the
    /// worker ids it may hand out and the take of its lock: a refusal rolls the row back.
    /// `raised`: the counter was raised once already, so a second id below the slice is
    /// refused rather than raised again.
    fn claim_new(&self, raised: bool) -> Claimed<R> {
        let r = &self.rows;
        let ids = self.pick().ids.clone();
        let now = self.clock.now_ms();
        match r.insert_row(&ids, now)? {
            NewRow::Claimed(id, lock) => Ok(Some(Self::claimed(id, lock, now))),
            // A second process with this identity inserted it first: its row, its lock.
            NewRow::Exists => {
                let id = r.own_row()?.ok_or_else(|| {
                    r.fail(
                        "read leaf_workerid_alloc",
                        "the row of this identity vanished".into(),
                    )
                })?;
                self.claim_own(id)
            }
            NewRow::Beyond => Err(self.none_free(ids)),
            NewRow::Below if raised => Err(self.none_free(ids)),
            NewRow::Below => {
                r.raise_counter(ids.start)?;
                tracing::info!(
                    "raised leaf_workerid_alloc's {} to {}, the region's first worker id",
                    R::COUNTER,
                    ids.start
                );
                self.claim_new(true)
            }
            NewRow::LockBusy(id) => Err(refused(R::DB, TableError::NewRowLocked { id })),
        }
    }

    /// Deletes this identity's own row when its id is outside the worker ids it may hand out
    /// (beyond the layout, or outside the region's slice) (a row an older version inserted on a
    /// refused attempt): it could never be used, and the table's counter never hands its id out
    /// again. Refused while another connection holds its lock.
    fn retire_own(&self, id: u64) -> Result<(), WorkerError> {
        let r = &self.rows;
        let lock = r.lock_waiting(id)?;
        r.delete_row(id)?;
        tracing::info!(
            "deleted this identity's leaf_workerid_alloc id {id}: outside the worker ids it may hand out (the layout's, or the region's slice)"
        );
        r.unlock(id, &lock)
    }
}

impl<R: RowSql> LeaseStore for TableLease<R> {
    type Claim = RowClaim<R::Lock>;

    /// This identity's own row when it has one; else the lowest free rows (no connection holds
    /// their lock, silent for 9 s or given back, `max_timestamp` within a window of our clock),
    /// then a new row ([`NEW_ROW`]).
    fn candidates(&self, ids: Range<u64>) -> Result<Vec<u64>, WorkerError> {
        self.pick().ids = ids.clone();
        match self.rows.own_row()? {
            Some(id) if ids.contains(&id) => {
                self.pick().own = Some(id);
                return Ok(vec![id, NEW_ROW]);
            }
            Some(id) => self.retire_own(id)?,
            None => {}
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(REUSE_AHEAD_MS);
        let free = self.rows.free_rows(&ids, now, reach)?;
        let mut pick = self.pick();
        let mut ids: Vec<u64> = free.iter().map(|(id, _)| *id).collect();
        pick.seen = free.into_iter().collect();
        ids.push(NEW_ROW);
        Ok(ids)
    }

    fn try_claim(&self, id: u64) -> Result<Option<(Self::Claim, Record)>, WorkerError> {
        if id == NEW_ROW {
            return self.claim_new(false);
        }
        if self.pick().own == Some(id) {
            return self.claim_own(id);
        }
        self.claim_free(id)
    }

    fn write(&self, claim: &Self::Claim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        self.rows.write(claim.worker, &claim.lock, expected, w)
    }

    fn still_held(&self, claim: &Self::Claim) -> Result<(), WorkerError> {
        self.rows.still_held(claim.worker)
    }

    fn report(&self, claim: &Self::Claim, _now_ms: i64) -> Result<bool, WorkerError> {
        self.rows.report(claim.worker, &claim.lock)
    }

    fn release(&self, claim: &Self::Claim) {
        self.rows.release(claim.worker, &claim.lock)
    }

    fn worker(&self, claim: &Self::Claim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &Self::Claim) -> String {
        describe(R::DB, claim.worker, &self.identity)
    }

    fn record_source(&self, claim: &Self::Claim) -> String {
        record_source(claim.worker)
    }

    fn none_free(&self, ids: Range<u64>) -> WorkerError {
        none_free(R::DB, self.identity.to_string(), ids)
    }
}
