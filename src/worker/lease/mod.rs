//! The fenced-lease protocol, written once for every store that hands out recyclable worker ids.
//!
//! A holder claims the lowest free worker id, reads the id's record (`reserved_until`: every ID
//! ever issued with the id has a time below it), waits until its clock passes that record, and
//! then issues IDs only at times the store already records: before the generator may issue at a
//! time past the record, a *fenced write* raises it, and that write succeeds only while the
//! record is still at the version this holder last saw and the claim is still held. A renewer
//! thread raises the record ahead of need while the generator is busy, so issuing rarely waits
//! for the store. A holder stops issuing as soon as its store says the claim could be granted to
//! someone else ("still held?", answered without locks or I/O). A clean exit lowers the record
//! to the exact last time issued, so the next holder waits no longer than needed.
//!
//! Why that is enough: claims on one id are granted one at a time, and every successful fenced
//! write of a holder happens while it holds its claim, so its successor (which reads the record
//! after its own claim) sees the holder's last record; the holder never issued at or past it and
//! the successor never issues below it. "Still held?" is not what keeps IDs unique; it keeps a
//! cut-off holder from issuing after its id was granted again (one issuer per id at any time).
//!
//! A backend implements only [`LeaseStore`]: listing candidates, claiming one, the fenced write,
//! the lock-free "still held?", a liveness report and giving the claim back. Everything else is
//! here and is checked by the deterministic simulation in `sim` (tests only) against one model
//! of each store, including runs with each guard of [`Guards`] removed.
//!
//! ZooKeeper's forever mode (Leaf's own tree) does not use this protocol: its worker id belongs
//! to an `ip:port` for ever and is never granted to anyone else, and it must keep issuing while
//! ZooKeeper is down (Leaf's weak dependency), so there is no claim to lose and nothing to fence
//! against; its fence is the node's timestamp and the local cache file.

pub(crate) mod keepalive;
#[cfg(test)]
mod sim;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{
    LEASE_WINDOW_MS, MAX_RESERVATION_WAIT_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease,
};
use crate::snowflake::{Clock, Layout, MAX_LEAD_MS, SnowflakeError, TimeFence};

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
    /// [`MAX_RESERVATION_WAIT_MS`]. A record further ahead than that is this clock behind.
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

    /// Worker ids worth trying, in the order to try them (ids known to be held may be left out).
    fn candidates(&self, max_worker: u64) -> Result<Vec<u64>, WorkerError>;

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

    /// The error when every candidate is held.
    fn none_free(&self, count: u64) -> WorkerError;

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

/// The protocol's guards. Production always uses [`Guards::ALL`]; the simulation removes one at
/// a time to show that each is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guards {
    /// Wait until the clock passes the predecessor's record, and resume after it.
    pub wait_for_predecessor: bool,
    /// Record a time before issuing at it.
    pub record_before_issuing: bool,
    /// Stop issuing once the store says the claim could be granted again.
    pub stop_when_not_held: bool,
    /// On release, lower the record only to the exact last time + 1.
    pub exact_release: bool,
}

impl Guards {
    /// Every guard on.
    pub const ALL: Guards = Guards {
        wait_for_predecessor: true,
        record_before_issuing: true,
        stop_when_not_held: true,
        exact_release: true,
    };
}

struct State {
    /// The record's version as our last read or write left it.
    version: i64,
    /// What the store holds as `reserved_until` (as far as we know).
    reserved_until: i64,
    /// Set once the lease is given back.
    finished: bool,
    /// The latest time the generator asked to issue at (for renewing ahead of need).
    last_demand_ms: i64,
    /// When the last report was made.
    last_report: Option<Instant>,
}

/// A held worker id under the protocol, without threads: the simulation drives it step by step,
/// [`FencedLease`] adds the renewer thread.
pub(crate) struct LeaseCore<S: LeaseStore> {
    store: S,
    claim: S::Claim,
    worker: u64,
    clock: Arc<dyn Clock>,
    lead_ms: i64,
    window_ms: i64,
    resume_after_ms: Option<i64>,
    /// The record found at the claim (what a release that issued nothing restores).
    found_ms: i64,
    guards: Guards,
    given_back: AtomicBool,
    lost: AtomicBool,
    lost_reason: Mutex<String>,
    state: Mutex<State>,
    /// Wakes the renewer thread when a reservation is running out.
    wake: Mutex<Option<SyncSender<()>>>,
}

/// The one wait policy of every registry: waits until a generator with `lead_ms` may issue
/// after `record` (a predecessor's bound: every earlier time may have been used), or fails with
/// `behind(now)` when the record is further ahead of the clock than its writer could have put it
/// (its allowance, else [`MAX_RESERVATION_WAIT_MS`]). An exact record of a run without a lead
/// (allowance 0) is left to the generator, which waits out a step back of a few ms and refuses a
/// larger one.
pub(crate) fn wait_out(
    clock: &dyn Clock,
    worker: u64,
    record: &Record,
    lead_ms: i64,
    window_ms: i64,
    source: &dyn Fn() -> String,
    behind: impl FnOnce(i64) -> WorkerError,
) -> Result<(), WorkerError> {
    let recorded = record.reserved_until;
    let now = clock.now_ms();
    let until = recorded.saturating_sub(lead_ms);
    let wait = until.saturating_sub(now);
    if wait <= 0 {
        return Ok(());
    }
    let allowed = record
        .ahead_allowance_ms
        .unwrap_or(MAX_RESERVATION_WAIT_MS)
        .min(MAX_RESERVATION_WAIT_MS.max(window_ms));
    if wait <= allowed {
        super::announce_wait(
            worker,
            wait,
            &format!(
                "the previous holder reserved times up to {recorded}{} ({})",
                if record.writer_lead_ms > 0 {
                    " while issuing with --max-lead"
                } else {
                    ""
                },
                source()
            ),
        );
        clock.sleep_until_ms(until);
        return Ok(());
    }
    if record.ahead_allowance_ms == Some(0) {
        return Ok(());
    }
    Err(behind(now))
}

/// Claims a worker id from `store` and waits out its predecessor's record.
pub(crate) fn acquire<S: LeaseStore>(
    store: S,
    layout: &Layout,
    clock: Arc<dyn Clock>,
    max_lead_ms: u64,
    guards: Guards,
) -> Result<LeaseCore<S>, WorkerError> {
    let max = layout.max_worker();
    let mut found = None;
    for id in store.candidates(max)? {
        if let Some(claimed) = store.try_claim(id)? {
            found = Some(claimed);
            break;
        }
    }
    let Some((claim, record)) = found else {
        return Err(store.none_free(max + 1));
    };
    let worker = store.worker(&claim);
    let lead_ms = max_lead_ms.min(MAX_LEAD_MS) as i64;
    let window_ms = store.window_ms();
    // From here on a failure gives the claim back (LeaseCore's Drop).
    let mut core = LeaseCore {
        store,
        claim,
        worker,
        clock,
        lead_ms,
        window_ms,
        resume_after_ms: None,
        found_ms: record.reserved_until,
        guards,
        given_back: AtomicBool::new(false),
        lost: AtomicBool::new(false),
        lost_reason: Mutex::new(String::new()),
        state: Mutex::new(State {
            version: record.version,
            reserved_until: record.reserved_until,
            finished: false,
            last_demand_ms: i64::MIN,
            last_report: None,
        }),
        wake: Mutex::new(None),
    };
    if guards.wait_for_predecessor {
        core.wait_out(&record)?;
        core.resume_after_ms = (record.reserved_until > 0).then(|| record.reserved_until - 1);
    }
    core.check()?;
    tracing::info!("leased worker id {worker} ({})", core.describe());
    Ok(core)
}

impl<S: LeaseStore> LeaseCore<S> {
    /// Waits until a generator with this lead may issue after `record` ([`wait_out`]).
    fn wait_out(&self, record: &Record) -> Result<(), WorkerError> {
        wait_out(
            self.clock.as_ref(),
            self.worker,
            record,
            self.lead_ms,
            self.window_ms,
            &|| self.store.record_source(&self.claim),
            |now| {
                self.store
                    .clock_behind(&self.claim, record.reserved_until, now)
            },
        )
    }

    /// How far a reservation for issuing at `unix_ms` reaches: one window past it, and for a
    /// store that records the lead, at least one window past the lead over the clock.
    fn reservation_for(&self, unix_ms: i64) -> i64 {
        let base = if self.lead_ms > 0 && self.store.reserves_lead_ahead() {
            unix_ms.max(self.clock.now_ms().saturating_add(self.lead_ms))
        } else {
            unix_ms
        };
        base.saturating_add(self.window_ms)
    }

    fn lose(&self, reason: String) -> WorkerError {
        {
            // The reason is in place before the flag says lost (see `held`).
            let mut kept = self.lost_reason.lock().unwrap_or_else(|p| p.into_inner());
            if !self.lost.load(Ordering::SeqCst) {
                tracing::warn!("worker id {} lost: {reason}", self.worker);
                *kept = reason.clone();
                self.lost.store(true, Ordering::SeqCst);
            }
        }
        self.store.lost(&self.claim, reason)
    }

    /// The claim is usable: not found lost, and the store says it is held.
    fn held(&self) -> Result<(), WorkerError> {
        if self.lost.load(Ordering::SeqCst) {
            let reason = self
                .lost_reason
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            return Err(self.store.lost(&self.claim, reason));
        }
        if self.guards.stop_when_not_held {
            self.store.still_held(&self.claim)?;
        }
        Ok(())
    }

    /// A fenced write of `reserved_until`; adopts this holder's own write whose answer was lost.
    fn write_locked(&self, st: &mut State, write: Write) -> Result<(), WorkerError> {
        for _ in 0..2 {
            match self.store.write(&self.claim, st.version, &write)? {
                Written::Applied { version } => {
                    st.version = version;
                    st.reserved_until = write.reserved_until;
                    return Ok(());
                }
                Written::NotHeld { reason } => return Err(self.lose(reason)),
                Written::Changed { current, own: true } => {
                    // Our own earlier write, applied although its answer was lost: adopt it and
                    // write again from there.
                    st.version = current.version;
                    st.reserved_until = st.reserved_until.max(current.reserved_until);
                }
                Written::Changed {
                    current,
                    own: false,
                } => {
                    return Err(self.lose(format!(
                        "another holder wrote its record ({} now holds {})",
                        self.store.record_source(&self.claim),
                        current.reserved_until
                    )));
                }
            }
        }
        Err(self.lose(format!(
            "{} changed under us twice",
            self.store.record_source(&self.claim)
        )))
    }

    fn write_reservation(&self, st: &mut State, to: i64) -> Result<(), WorkerError> {
        let write = Write {
            reserved_until: to,
            exact: false,
            lead_ms: self.lead_ms,
        };
        self.write_locked(st, write)
    }

    /// Raises the record ahead of need while the generator is busy and the reservation is
    /// running out, so its next extension finds the time already recorded. The renewer thread
    /// (or the simulation) calls it.
    pub(crate) fn renew_ahead(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.clock.now_ms();
        let busy = st.last_demand_ms >= now.saturating_sub(2 * self.window_ms);
        if st.finished || !busy || self.held().is_err() {
            return;
        }
        let at = now.max(st.last_demand_ms);
        if st.reserved_until - at < self.window_ms * 2 / 3 {
            let to = self.reservation_for(at);
            if let Err(e) = self.write_reservation(&mut st, to) {
                tracing::warn!("cannot renew worker id {}: {e}", self.worker);
            }
        }
    }

    /// Reports this holder's clock every [`REPORT_INTERVAL_MS`] (called by the renewer).
    pub(crate) fn report_if_due(&self) {
        {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if st.finished
                || st
                    .last_report
                    .is_some_and(|t| t.elapsed() < Duration::from_millis(REPORT_INTERVAL_MS as u64))
            {
                return;
            }
            st.last_report = Some(Instant::now());
        }
        if self.held().is_err() {
            return;
        }
        match self.store.report(&self.claim, self.clock.now_ms()) {
            Ok(true) => {}
            Ok(false) => {
                let _ = self.lose("its claim was deleted (reclaimed, or it expired)".into());
            }
            Err(e) => tracing::warn!("cannot report worker id {}: {e}", self.worker),
        }
    }

    /// Gives the worker id back after recording the exact last issued time.
    pub(crate) fn finish_core(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.finished {
            return Ok(());
        }
        st.finished = true;
        self.given_back.store(true, Ordering::SeqCst);
        // Lower the record to the exact last time (or back to what was found when nothing was
        // issued), so the next holder need not wait out the unused reservation. Never raise it
        // here: nothing was issued above it.
        let bound = if self.guards.exact_release {
            last_issued_ms
                .map(|t| t.saturating_add(1))
                .or((self.found_ms > 0).then_some(self.found_ms))
        } else {
            last_issued_ms
        };
        let result = match bound {
            Some(b) if b <= st.reserved_until && self.held().is_ok() => {
                let write = Write {
                    reserved_until: b,
                    exact: true,
                    lead_ms: self.lead_ms,
                };
                self.write_locked(&mut st, write)
            }
            _ => Ok(()),
        };
        drop(st);
        self.store.release(&self.claim);
        result
    }

    /// The store.
    pub(crate) fn store(&self) -> &S {
        &self.store
    }
}

impl<S: LeaseStore> LeaseCore<S> {
    /// The extension's answer when the recorded reservation already covers `unix_ms` (or the
    /// lease is unusable), from memory; `None` when a fenced write must raise the record first.
    /// Both [`TimeFence`] calls start here, so the rule is written once.
    fn extend_from_memory(
        &self,
        st: &mut State,
        unix_ms: i64,
    ) -> Option<Result<i64, SnowflakeError>> {
        st.last_demand_ms = st.last_demand_ms.max(unix_ms);
        if st.finished {
            return Some(Err(SnowflakeError::FenceFailed(
                "the lease was given back".into(),
            )));
        }
        if let Err(e) = self.held() {
            return Some(Err(SnowflakeError::FenceFailed(e.to_string())));
        }
        if st.reserved_until <= unix_ms {
            return None;
        }
        // Come back a third of a window early, so the renewal happens ahead of need.
        let early = st.reserved_until - self.window_ms / 3;
        if early > unix_ms {
            return Some(Ok(early));
        }
        if let Some(w) = self.wake.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = w.try_send(());
        }
        Some(Ok(st.reserved_until))
    }
}

impl<S: LeaseStore> TimeFence for LeaseCore<S> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(answer) = self.extend_from_memory(&mut st, unix_ms) {
            return answer;
        }
        let to = self.reservation_for(unix_ms);
        if self.guards.record_before_issuing {
            self.write_reservation(&mut st, to)
                .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        } else {
            st.reserved_until = to;
        }
        Ok(to)
    }

    /// Answers from memory inside the reservation; `None` when the record must be raised first
    /// (a store write) or the renewer holds the state while it writes.
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        let mut st = match self.state.try_lock() {
            Ok(st) => st,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        self.extend_from_memory(&mut st, unix_ms)
    }
}

impl<S: LeaseStore> WorkerLease for LeaseCore<S> {
    fn worker(&self) -> u64 {
        self.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        self.held()?;
        if self.given_back.load(Ordering::SeqCst) {
            return Err(WorkerError::Stopped {
                worker: self.worker,
                reason: "the lease was given back".into(),
            });
        }
        Ok(())
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        self.finish_core(last_issued_ms)
    }

    fn describe(&self) -> String {
        self.store.describe(&self.claim)
    }
}

impl<S: LeaseStore> Drop for LeaseCore<S> {
    fn drop(&mut self) {
        // Without finish() the record stays as written: it covers everything issued.
        let was_finished = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            std::mem::replace(&mut st.finished, true)
        };
        if !was_finished {
            self.store.release(&self.claim);
        }
    }
}

/// A held worker id: the protocol plus its renewer thread, which raises the record ahead of
/// need and reports this holder's clock.
pub(crate) struct FencedLease<S: LeaseStore> {
    core: Arc<LeaseCore<S>>,
    renewer: Mutex<Option<(SyncSender<()>, JoinHandle<()>)>>,
}

impl<S: LeaseStore> FencedLease<S> {
    /// Claims a worker id from `store` (see [`acquire`]) and starts the renewer.
    pub(crate) fn acquire(
        store: S,
        layout: &Layout,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<FencedLease<S>, WorkerError> {
        let core = Arc::new(acquire(store, layout, clock, max_lead_ms, Guards::ALL)?);
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let tick = Duration::from_millis((core.window_ms / 3).max(1) as u64);
        let renewed = core.clone();
        let renewer = std::thread::Builder::new()
            .name("leafctl-lease".into())
            .spawn(move || {
                loop {
                    match rx.recv_timeout(tick) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                    renewed.renew_ahead();
                    renewed.report_if_due();
                }
            });
        let renewer = match renewer {
            Ok(handle) => {
                *core.wake.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx.clone());
                Some((tx, handle))
            }
            // Without the thread every reservation is written in line by `extend`.
            Err(e) => {
                tracing::debug!("no lease renewer thread: {e}");
                None
            }
        };
        Ok(FencedLease {
            core,
            renewer: Mutex::new(renewer),
        })
    }

    /// The protocol state (for the store's extra accessors).
    pub(crate) fn core(&self) -> &LeaseCore<S> {
        &self.core
    }

    fn stop_renewer(&self) {
        let taken = self
            .renewer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((tx, handle)) = taken {
            self.core
                .wake
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            drop(tx);
            let _ = handle.join();
        }
    }
}

impl<S: LeaseStore> TimeFence for FencedLease<S> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.core.extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        self.core.try_extend(unix_ms)
    }
}

impl<S: LeaseStore> WorkerLease for FencedLease<S> {
    fn worker(&self) -> u64 {
        self.core.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.core.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        self.core.check()
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        // The renewer first: no renewal may land after the release's exact record.
        self.stop_renewer();
        self.core.finish_core(last_issued_ms)
    }

    fn describe(&self) -> String {
        self.core.describe()
    }
}

impl<S: LeaseStore> Drop for FencedLease<S> {
    fn drop(&mut self) {
        // The core (and with it the claim) goes when the renewer lets go of it.
        self.stop_renewer();
    }
}
