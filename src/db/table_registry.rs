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

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::worker::lease::{Record, Written};
use crate::worker::record::{WorkerStatus, status_of};

use crate::config::Resolved;
use crate::worker::{
    LEASE_WINDOW_MS, REPORT_INTERVAL_MS, RegistryKind, RegistrySettings, StoreError, StoreFailure,
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

/// What a database store's `candidates` lists last: "insert a row for this identity" (no worker
/// id is ever `u64::MAX`, the layouts hold at most 2^22 ids). `try_claim` inserts it, checks its
/// id against the layout and takes its lock in one transaction, so a refused attempt leaves no
/// row behind.
pub(crate) const NEW_ROW: u64 = u64::MAX;

/// How long (ms) a row must have gone without a write (neither `update_time` nor
/// `max_timestamp` that recent) before a new identity may take it, unless a leafctl holder gave
/// it back (`update_time` NULL): 3 report intervals, the sign of life of NotFound9's servers,
/// which hold no lock and rewrite `max_timestamp` every 3 s (`update_time` too, in their DDL).
pub(crate) const SILENT_MS: i64 = 3 * REPORT_INTERVAL_MS;

/// How far (ms) ahead of our clock a free row's `max_timestamp` may lie for a new identity to
/// take it (and wait that out): one reservation window, what a killed holder leaves. A row
/// further ahead is left for later (its fence has not passed).
pub(crate) const REUSE_AHEAD_MS: i64 = LEASE_WINDOW_MS;

/// How many free rows one acquisition lists (the lowest first); past them it inserts a row.
pub(crate) const FREE_ROWS_LISTED: u64 = 16;

/// The database URL of `settings` for the registry `kind` (mysql, postgres), refused unless
/// it names the database that registry keeps its table in.
pub(crate) fn db_url(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<&Resolved<String>, WorkerError> {
    let db = &settings.db_url;
    if crate::db::db_registry(&db.value) != Some(kind) {
        let store = kind.store().unwrap_or_default();
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
pub(crate) fn reclaim_plan(db: &str, record: &WorkerRecord) -> String {
    if record.held {
        format!(
            "delete row id {id} ({who}) of leaf_workerid_alloc, so its holder stops at its next report; \
             the id is retired ({db} never hands it out again: its max_timestamp goes with the row)",
            id = record.worker,
            who = record.identity
        )
    } else {
        format!(
            "mark row id {id} ({who}) of leaf_workerid_alloc given back: the next new identity takes \
             worker id {id} (the row keeps its max_timestamp, which that holder waits out)",
            id = record.worker,
            who = record.identity
        )
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
