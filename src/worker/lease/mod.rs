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
//! Within a [`WorkerScope`] (a region's slice of the worker field) the core asks the store for the
//! scope's ids only ([`leasable`]), and refuses a claimed id outside it, so every recyclable store
//! (ZooKeeper and etcd leases, the tables, the local file) follows the one rule.
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
//!
//! The files: `store` (what a backend implements), `fenced` (the held lease with its
//! renewer thread); the core of the protocol is here.

/// The reuse rules of a table store (`leaf_workerid_alloc` on MySQL and PostgreSQL, in
/// `crate::db::table_registry`), here beside the protocol the simulation checks them with.
/// What a database store's `candidates` lists last: "insert a row for this identity" (no worker
/// id is ever `u64::MAX`, the layouts hold at most 2^22 ids). `try_claim` inserts it, checks its
/// id against the layout and takes its lock in one transaction, so a refused attempt leaves no
/// row behind.
pub(crate) const NEW_ROW: u64 = u64::MAX;

/// How long (ms) a row must have gone without a write (neither `update_time` nor
/// `max_timestamp` that recent) before a new identity may take it, unless a leafctl holder gave
/// it back (`update_time` NULL): 3 report intervals, the sign of life of NotFound9's servers,
/// which hold no lock and rewrite `max_timestamp` every 3 s (`update_time` too, in their DDL).
pub(crate) const SILENT_MS: i64 = 3 * super::REPORT_INTERVAL_MS;

/// How far (ms) ahead of our clock a free row's `max_timestamp` may lie for a new identity to
/// take it (and wait that out): one reservation window, what a killed holder leaves. A row
/// further ahead is left for later (its fence has not passed).
pub(crate) const REUSE_AHEAD_MS: i64 = super::LEASE_WINDOW_MS;

mod fenced;
pub(crate) mod keepalive;
#[cfg(test)]
mod sim;
mod store;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) use fenced::FencedLease;
pub(crate) use store::{LeaseStore, Record, Write, Written};

use super::{MAX_RESERVATION_WAIT_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease};
use crate::snowflake::{Clock, Layout, MAX_LEAD_MS, SnowflakeError, TimeFence};
use crate::worker::WorkerScope;

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

/// The worker ids a store may hand out in `layout` within `scope`. Every recyclable store leases
/// inside it.
pub(crate) fn leasable(layout: &Layout, scope: &WorkerScope) -> Result<Range<u64>, WorkerError> {
    let ids = scope.ids(layout.worker_bits())?;
    Ok(ids.start..ids.end.min(layout.max_worker().saturating_add(1)))
}

/// Claims a worker id of `scope` from `store` and waits out its predecessor's record.
pub(crate) fn acquire<S: LeaseStore>(
    store: S,
    layout: &Layout,
    scope: &WorkerScope,
    clock: Arc<dyn Clock>,
    max_lead_ms: u64,
    guards: Guards,
) -> Result<LeaseCore<S>, WorkerError> {
    let ids = leasable(layout, scope)?;
    let mut found = None;
    for id in store.candidates(ids.clone())? {
        if let Some(claimed) = store.try_claim(id)? {
            found = Some(claimed);
            break;
        }
    }
    let Some((claim, record)) = found else {
        return Err(store.none_free(ids));
    };
    let worker = store.worker(&claim);
    // A store's bug (or a row's id it could not choose) never leaves the scope.
    if let Err(e) = scope.check_worker(layout.worker_bits(), worker, &store.describe(&claim)) {
        store.release(&claim);
        return Err(e);
    }
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

#[cfg(test)]
mod region_tests {
    use std::sync::Mutex;

    use super::*;
    use crate::region::{self, Region};
    use crate::snowflake::{FakeClock, Preset};
    use crate::worker::{IssueError, IssueOptions, WorkerGenerator};

    /// A store that records the ids it was asked about and claims `claims` (a store with a bug
    /// when that lies outside what it was given).
    struct OneId {
        claims: u64,
        asked: Mutex<Option<Range<u64>>>,
        released: AtomicBool,
    }

    impl LeaseStore for &'static OneId {
        type Claim = u64;
        fn candidates(&self, ids: Range<u64>) -> Result<Vec<u64>, WorkerError> {
            *self.asked.lock().unwrap() = Some(ids);
            Ok(vec![self.claims])
        }
        fn try_claim(&self, id: u64) -> Result<Option<(u64, Record)>, WorkerError> {
            let record = Record {
                reserved_until: 0,
                version: 0,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            };
            Ok(Some((id, record)))
        }
        fn write(&self, _: &u64, _: i64, w: &Write) -> Result<Written, WorkerError> {
            Ok(Written::Applied {
                version: w.reserved_until,
            })
        }
        fn still_held(&self, _: &u64) -> Result<(), WorkerError> {
            Ok(())
        }
        fn release(&self, _: &u64) {
            self.released.store(true, Ordering::SeqCst);
        }
        fn worker(&self, claim: &u64) -> u64 {
            *claim
        }
        fn describe(&self, claim: &u64) -> String {
            format!("test claim {claim}")
        }
        fn record_source(&self, claim: &u64) -> String {
            format!("test record {claim}")
        }
        fn none_free(&self, ids: Range<u64>) -> WorkerError {
            WorkerError::NoFreeWorker {
                path: "test".into(),
                count: ids.end - ids.start,
            }
        }
    }

    fn store(claims: u64) -> &'static OneId {
        Box::leak(Box::new(OneId {
            claims,
            asked: Mutex::new(None),
            released: AtomicBool::new(false),
        }))
    }

    /// The core asks for the region's slice only, and a claim outside it (a store's bug) is
    /// given back and refused, naming the slice; without a region the whole field is asked for.
    #[test]
    fn the_core_leases_inside_the_regions_slice_only() {
        let layout = Layout::preset(Preset::Leaf);
        let clock: Arc<dyn Clock> = Arc::new(FakeClock::new(1_700_000_000_000));
        let r3 = &WorkerScope::of(Region::new(3, 8).ok());

        let inside = store(400);
        let core = acquire(inside, &layout, r3, clock.clone(), 0, Guards::ALL).unwrap();
        assert_eq!(*inside.asked.lock().unwrap(), Some(384..512));
        assert_eq!(core.worker(), 400);

        let outside = store(5);
        let e = acquire(outside, &layout, r3, clock.clone(), 0, Guards::ALL)
            .err()
            .unwrap();
        assert!(
            matches!(
                e,
                WorkerError::Region(region::RegionError::WorkerOutsideSlice {
                    worker: 5,
                    start: 384,
                    end: 512,
                    ..
                })
            ),
            "{e}"
        );
        assert!(
            outside.released.load(Ordering::SeqCst),
            "the claim is given back"
        );

        let whole = store(1023);
        let core = acquire(
            whole,
            &layout,
            &WorkerScope::default(),
            clock,
            0,
            Guards::ALL,
        )
        .unwrap();
        assert_eq!(*whole.asked.lock().unwrap(), Some(0..1024));
        assert_eq!(core.worker(), 1023);
    }

    /// A lease's worker id outside the scope never reaches a generator, whichever registry
    /// handed it out, and the lease is given back; inside it (or without a scope) IDs are made
    /// with it.
    #[test]
    fn a_lease_outside_the_scope_never_reaches_a_generator() {
        let layout = Layout::preset(Preset::Leaf);
        let clock: Arc<dyn Clock> = Arc::new(FakeClock::new(1_700_000_000_000));
        let r3 = WorkerScope::of(Region::new(3, 8).ok());
        let whole = WorkerScope::default();
        let lease_on = |worker| -> Arc<dyn WorkerLease> {
            let lease = FencedLease::acquire(store(worker), &layout, &whole, clock.clone(), 0);
            Arc::new(lease.unwrap())
        };
        let options = IssueOptions::new(layout).clock(clock.clone());
        for worker in [383, 512, 0] {
            let e = WorkerGenerator::on_lease(lease_on(worker), &options.clone().scope(r3)).err();
            assert!(
                matches!(
                    e,
                    Some(IssueError::Worker(WorkerError::Region(
                        region::RegionError::WorkerOutsideSlice {
                            start: 384,
                            end: 512,
                            ..
                        }
                    )))
                ),
                "{worker}: {e:?}"
            );
        }
        for worker in [384, 511] {
            let g =
                WorkerGenerator::on_lease(lease_on(worker), &options.clone().scope(r3)).unwrap();
            let id = g.next_block(1).unwrap().first;
            assert_eq!(layout.decode(id).unwrap().worker, worker);
            g.finish().unwrap();
        }
        let g = WorkerGenerator::on_lease(lease_on(1023), &options).unwrap();
        g.finish().unwrap();
    }
}
