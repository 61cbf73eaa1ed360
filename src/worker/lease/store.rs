//! What a backend implements for the fenced-lease protocol: its records, the fenced write and
//! the claim.

use std::ops::Range;

use crate::worker::{LEASE_WINDOW_MS, WorkerError};

/// A worker id's record as a store holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    /// Every ID ever issued with the id has a time below this Unix ms (0: none recorded).
    pub reserved_until: i64,
    /// What the next fenced write compares against (a node version, a mod revision, the stored
    /// value itself).
    pub version: i64,
    /// How far ahead of its writer's clock the record can lie, when the store knows (the local
    /// state file records whether its run exited cleanly and with which lead); `None`: up to
    /// [`MAX_RESERVATION_WAIT_MS`](crate::worker::MAX_RESERVATION_WAIT_MS). A record further ahead than that is this clock behind.
    pub ahead_allowance_ms: Option<i64>,
    /// The lead over the clock its writer issued with, when the store records it.
    pub writer_lead_ms: i64,
}

/// What a fenced write asks the store to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Write {
    /// The new `reserved_until`.
    pub reserved_until: i64,
    /// True for the release on a clean exit: the value is the exact last time + 1.
    pub exact: bool,
    /// The lead over the clock (ms) the writer issues with.
    pub lead_ms: i64,
}

/// The answer to a fenced write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Written {
    /// Recorded; the record's new version.
    Applied { version: i64 },
    /// The record is no longer at the expected version. `own` is the store's judgement that the
    /// change is this holder's own earlier write, applied although its answer was lost.
    Changed { current: Record, own: bool },
    /// The claim is gone: the write was not applied and never will be.
    NotHeld { reason: String },
}

/// All a backend implements: where claims and records live, and how to write one fenced.
pub(crate) trait LeaseStore: Send + Sync + 'static {
    /// What identifies a held claim (paths, keys, revisions).
    type Claim: Send + Sync;

    /// Worker ids of `ids` worth trying, in the order to try them (ids known to be held may be
    /// left out). `ids` is the region's slice of the layout's worker ids (all of them without a
    /// region), chosen by the protocol's core.
    fn candidates(&self, ids: Range<u64>) -> Result<Vec<u64>, WorkerError>;

    /// Claims `id` if no one holds it, and then reads its record (after the claim, so that no
    /// write of a previous holder can land after the read). `None`: someone holds it.
    fn try_claim(&self, id: u64) -> Result<Option<(Self::Claim, Record)>, WorkerError>;

    /// Records `write` only if the record is still at `expected` and the claim is still held.
    /// An error means the answer is unknown: the write may have been applied.
    fn write(
        &self,
        claim: &Self::Claim,
        expected: i64,
        write: &Write,
    ) -> Result<Written, WorkerError>;

    /// Fails as soon as the claim could be granted to someone else. Never locks, never waits.
    fn still_held(&self, claim: &Self::Claim) -> Result<(), WorkerError>;

    /// Reports this holder's clock (what `workers list` shows). `Ok(false)`: the claim is gone.
    fn report(&self, claim: &Self::Claim, now_ms: i64) -> Result<bool, WorkerError> {
        let _ = (claim, now_ms);
        Ok(true)
    }

    /// Gives the claim back (best effort; a claim not given back expires or goes with the
    /// process).
    fn release(&self, claim: &Self::Claim);

    /// The worker id of a claim.
    fn worker(&self, claim: &Self::Claim) -> u64;

    /// A short description for logs (`ZooKeeper lease /snowflake/x/leases/3`).
    fn describe(&self, claim: &Self::Claim) -> String;

    /// Where the record lives, for messages (`reserved_until of /snowflake/x/workers/3`).
    fn record_source(&self, claim: &Self::Claim) -> String;

    /// The error for a claim found lost by the protocol itself (a foreign write, a claim gone).
    fn lost(&self, claim: &Self::Claim, reason: String) -> WorkerError {
        WorkerError::Stopped {
            worker: self.worker(claim),
            reason,
        }
    }

    /// The error for a record further ahead of the clock than it can be.
    fn clock_behind(&self, claim: &Self::Claim, recorded_ms: i64, now_ms: i64) -> WorkerError {
        WorkerError::ClockBehind {
            worker: self.worker(claim),
            recorded_ms,
            behind_ms: recorded_ms - now_ms,
            source_of: self.record_source(claim),
        }
    }

    /// The error when every candidate of `ids` is held.
    fn none_free(&self, ids: Range<u64>) -> WorkerError;

    /// How far past the time asked for a reservation reaches (ms).
    fn window_ms(&self) -> i64 {
        LEASE_WINDOW_MS
    }

    /// Whether a reservation covers the whole lead over the clock at once. Only a store that
    /// records the lead with the reservation (the local state file) can let its successor tell
    /// such a record from a clock behind; the others reserve one window past the time asked for,
    /// so a successor without the lead waits no more than that.
    fn reserves_lead_ahead(&self) -> bool {
        false
    }
}
