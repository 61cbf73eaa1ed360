//! The worker-id registry's lease store on `leaf_workerid_alloc`, once for every database that
//! keeps worker ids: which rows to try and in what order, and how this identity's own row, a
//! free row and a new row are claimed ([`TableLease`]). Each database gives only its statements
//! and its kind of lock ([`RowSql`]); see [`super::table_registry`] for the protocol as a whole.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use super::table_registry::{self as table, Pick, TableError};
use crate::snowflake::Clock;
use crate::worker::lease::{LeaseStore, Record, Write, Written};
use crate::worker::{Identity, WorkerError};

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
    /// for [`table::SILENT_MS`] or given back, `max_timestamp` at most `reach`.
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
    /// lock is still there ([`super::table_registry::LockHolder::still_held`]).
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
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
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
            NewRow::LockBusy(id) => Err(table::refused(R::DB, TableError::NewRowLocked { id })),
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
    /// then a new row ([`table::NEW_ROW`]).
    fn candidates(&self, ids: Range<u64>) -> Result<Vec<u64>, WorkerError> {
        self.pick().ids = ids.clone();
        match self.rows.own_row()? {
            Some(id) if ids.contains(&id) => {
                self.pick().own = Some(id);
                return Ok(vec![id, table::NEW_ROW]);
            }
            Some(id) => self.retire_own(id)?,
            None => {}
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let free = self.rows.free_rows(&ids, now, reach)?;
        let mut pick = self.pick();
        let mut ids: Vec<u64> = free.iter().map(|(id, _)| *id).collect();
        pick.seen = free.into_iter().collect();
        ids.push(table::NEW_ROW);
        Ok(ids)
    }

    fn try_claim(&self, id: u64) -> Result<Option<(Self::Claim, Record)>, WorkerError> {
        if id == table::NEW_ROW {
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
        table::describe(R::DB, claim.worker, &self.identity)
    }

    fn record_source(&self, claim: &Self::Claim) -> String {
        table::record_source(claim.worker)
    }

    fn none_free(&self, ids: Range<u64>) -> WorkerError {
        table::none_free(R::DB, self.identity.to_string(), ids)
    }
}
