//! A worker generator that outlives its lease, for long-running servers.
//!
//! When the registry takes the worker id away (a ZooKeeper session that expired, a lease given
//! back, a conflict), [`SupervisedGenerator`] stops issuing at once, acquires a worker id again
//! through the same registry (perhaps another id) and resumes by itself. The registry's own rules
//! keep the new lease safe: a new holder of an id waits until its clock passes every time a
//! predecessor reserved, so no time reserved on the old lease is ever reused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;

use super::{IssueError, IssueOptions, WorkerError, WorkerGenerator, WorkerRegistry};
use crate::snowflake::{Clock, IdBlock, Layout, MAX_TOLERATED_ROLLBACK_MS, SnowflakeError};

/// How often the keeper checks the lease while nothing asks it to.
const CHECK_EVERY: Duration = Duration::from_millis(100);
/// Longest pause between two attempts to acquire a worker id.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How many acquisitions in a row refused for a reason no retry mends
/// ([`WorkerError::needs_operator`]) the keeper makes before it gives up.
pub const GIVE_UP_AFTER: u32 = 5;
/// How long [`SupervisedGenerator::finish`] waits for a keeper busy acquiring.
const STOP_WAIT: Duration = Duration::from_secs(3);

/// What the keeper reports about the lease, for `/readyz` and metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseStatus {
    /// The worker id held now, if any.
    pub worker: Option<u64>,
    /// The lease's description (`ZooKeeper lease /snowflake/...`), if one is held.
    pub lease: Option<String>,
    /// Why there is no usable lease (the last loss or failed acquisition), if so.
    pub problem: Option<String>,
    /// How many leases were acquired so far (1 after a clean start).
    pub acquisitions: u64,
    /// The lead IDs may run ahead of the clock (`--max-lead`).
    pub max_lead_ms: u64,
    /// Unix ms of the last issued ID's time, if any.
    pub last_issued_ms: Option<i64>,
    /// Unix ms up to which the registry has recorded times as reserved, if a generator is held.
    pub reserved_until_ms: Option<i64>,
}

#[derive(Default)]
struct KeeperState {
    stopping: bool,
    stopped: bool,
    problem: Option<String>,
    gave_up: Option<GaveUp>,
}

/// Why the keeper stopped acquiring: [`GIVE_UP_AFTER`] acquisitions in a row were refused for
/// a reason no retry mends. A server stops then, with this as its error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("gave up acquiring a worker id after {attempts} refusals in a row: {reason}")]
pub struct GaveUp {
    /// How many acquisitions were refused.
    pub attempts: u32,
    /// The last refusal.
    pub reason: String,
    /// What to do about it.
    pub hint: String,
}

struct Shared {
    registry: Box<dyn WorkerRegistry>,
    options: IssueOptions,
    current: ArcSwapOption<WorkerGenerator>,
    state: Mutex<KeeperState>,
    wake: Condvar,
    acquisitions: AtomicU64,
    /// The generator whose lease was lost, until a new one is acquired: the new one issues
    /// only after its last ID's time. (Kept only until then: it holds the old lease's
    /// connection or session.)
    last_retired: Mutex<Option<Arc<WorkerGenerator>>>,
    /// Rollback counts of generators already replaced.
    retired_waited: AtomicU64,
    retired_refused: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, KeeperState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `timeout` for a wake-up; false once stopping.
    fn pause(&self, timeout: Duration) -> bool {
        let st = self.lock();
        if st.stopping {
            return false;
        }
        let (st, _) = self
            .wake
            .wait_timeout(st, timeout)
            .unwrap_or_else(|p| p.into_inner());
        !st.stopping
    }

    /// A generator on a new lease, issuing only after the last ID of the one it replaces
    /// (read now, not when that one was retired: a request that held it may have issued
    /// since). The registry keeps IDs unique across processes; this keeps this process's IDs
    /// ascending when the new lease is another worker id and the clock went back meanwhile.
    fn acquire(&self) -> Result<WorkerGenerator, IssueError> {
        let after = self
            .last_retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|g| g.generator().last_issued_ms());
        let options = self.options.clone().issued_after(after);
        WorkerGenerator::start(self.registry.as_ref(), &options)
    }

    /// Takes a generator out of service: keeps its counts, records its last time and gives the
    /// worker id back (best effort: a lost session cannot be written to).
    fn retire(&self, generator: &WorkerGenerator) {
        let stats = generator.generator().stats();
        self.retired_waited
            .fetch_add(stats.rollbacks_waited(), Ordering::Relaxed);
        self.retired_refused
            .fetch_add(stats.rollbacks_refused(), Ordering::Relaxed);
        if let Err(e) = generator.finish() {
            tracing::debug!("giving back worker id {}: {e}", generator.worker());
        }
    }

    fn keep(&self) {
        let mut tries = Retries::new();
        while self.pause(CHECK_EVERY) {
            let go_on = match self.current.load_full() {
                Some(g) => {
                    self.watch(g);
                    true
                }
                None => match self.acquire() {
                    Ok(g) => {
                        tries = Retries::new();
                        self.put_in_service(g)
                    }
                    Err(e) => self.refused(&e, &mut tries),
                },
            };
            if !go_on {
                break;
            }
        }
        let mut st = self.lock();
        st.stopped = true;
        self.wake.notify_all();
    }

    /// Checks the lease of `g`, the generator in service: once lost, takes it out of service
    /// (a disconnected session that may come back before it expires is left alone).
    fn watch(&self, g: Arc<WorkerGenerator>) {
        match g.lease().check() {
            Ok(()) => {}
            Err(e) if e.may_recover() => {}
            Err(e) => {
                tracing::warn!(
                    "worker id {} lost: {e}; stopped issuing, acquiring a worker id again",
                    g.worker()
                );
                self.current.store(None);
                self.lock().problem = Some(e.to_string());
                self.retire(&g);
                *self.last_retired.lock().unwrap_or_else(|p| p.into_inner()) = Some(g);
            }
        }
    }

    /// Puts a newly acquired generator in service; false (and it is given back) once stopping.
    fn put_in_service(&self, g: WorkerGenerator) -> bool {
        // The new generator starts after the old one's last ID and carries that point on (its
        // own last issued time) if it is lost in turn. The old one goes when this returns,
        // after the state lock.
        let _old = self
            .last_retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let mut st = self.lock();
        if st.stopping {
            drop(st);
            self.retire(&g);
            return false;
        }
        tracing::warn!(
            "acquired worker id {} ({}); issuing again",
            g.worker(),
            g.lease().describe()
        );
        st.problem = None;
        self.acquisitions.fetch_add(1, Ordering::Relaxed);
        self.current.store(Some(Arc::new(g)));
        true
    }

    /// An acquisition refused with `e`: noted, then a pause that grows with each refusal;
    /// false once stopping, or once [`GIVE_UP_AFTER`] refusals in a row no retry mends.
    fn refused(&self, e: &IssueError, tries: &mut Retries) -> bool {
        tracing::warn!("cannot acquire a worker id yet: {e}");
        let mended_only_by_hand = match e {
            IssueError::Worker(w) if w.needs_operator() => Some(w.hint()),
            _ => None,
        };
        tries.refused = if mended_only_by_hand.is_some() {
            tries.refused + 1
        } else {
            0
        };
        let mut st = self.lock();
        st.problem = Some(e.to_string());
        if tries.refused >= GIVE_UP_AFTER {
            st.gave_up = Some(GaveUp {
                attempts: tries.refused,
                reason: e.to_string(),
                hint: mended_only_by_hand.unwrap_or_default(),
            });
            return false;
        }
        drop(st);
        if !self.pause(tries.backoff) {
            return false;
        }
        tries.backoff = (tries.backoff * 2).min(MAX_BACKOFF);
        true
    }
}

/// The keeper's attempts to acquire since it last held a worker id.
struct Retries {
    /// The pause before the next attempt.
    backoff: Duration,
    /// Acquisitions refused in a row for a reason no retry mends.
    refused: u32,
}

impl Retries {
    fn new() -> Retries {
        Retries {
            backoff: Duration::from_millis(200),
            refused: 0,
        }
    }
}

/// A [`WorkerGenerator`] whose lease is watched by a background thread and replaced when lost.
///
/// While no lease is held, [`SupervisedGenerator::next_block`] fails with
/// [`WorkerError::NoLease`] (a server answers 503) instead of waiting.
pub struct SupervisedGenerator {
    shared: Arc<Shared>,
    keeper: Mutex<Option<JoinHandle<()>>>,
}

impl SupervisedGenerator {
    /// Acquires the first worker id (failing as [`WorkerGenerator::start`] does, so a server that
    /// cannot get one does not start) and starts the keeper thread. Every lease acquired later
    /// issues as `options` says (the same lead).
    pub fn start(
        registry: Box<dyn WorkerRegistry>,
        options: IssueOptions,
    ) -> Result<SupervisedGenerator, IssueError> {
        let shared = Arc::new(Shared {
            registry,
            options,
            current: ArcSwapOption::empty(),
            state: Mutex::new(KeeperState::default()),
            wake: Condvar::new(),
            acquisitions: AtomicU64::new(0),
            last_retired: Mutex::new(None),
            retired_waited: AtomicU64::new(0),
            retired_refused: AtomicU64::new(0),
        });
        let first = shared.acquire()?;
        shared.acquisitions.store(1, Ordering::Relaxed);
        shared.current.store(Some(Arc::new(first)));
        let keeper_shared = shared.clone();
        let keeper = std::thread::Builder::new()
            .name("leafctl-lease-keeper".into())
            .spawn(move || keeper_shared.keep())
            .map_err(|e| WorkerError::NoLease {
                reason: format!("cannot start the lease keeper thread: {e}"),
            });
        let keeper = match keeper {
            Ok(k) => k,
            Err(e) => {
                if let Some(g) = shared.current.swap(None) {
                    shared.retire(&g);
                }
                return Err(e.into());
            }
        };
        Ok(SupervisedGenerator {
            shared,
            keeper: Mutex::new(Some(keeper)),
        })
    }

    /// The layout IDs are encoded with.
    pub fn layout(&self) -> &Layout {
        &self.shared.options.layout
    }

    /// Issues up to `max` IDs from one tick with the current lease, or fails at once when no
    /// lease is usable (the keeper is then acquiring one).
    pub fn next_block(&self, max: u64) -> Result<IdBlock, IssueError> {
        self.issue(|g| Some(g.next_block(max)))
            .unwrap_or_else(|| Err(self.no_lease()))
    }

    /// Like [`SupervisedGenerator::next_block`] but never blocks: `None` when issuing would
    /// sleep or extend the lease's reservation (I/O), so an event loop can hand it to a blocking
    /// thread instead.
    #[inline]
    pub fn try_next_block(&self, max: u64) -> Option<Result<IdBlock, IssueError>> {
        self.issue(|g| g.try_next_block(max))
    }

    fn issue(
        &self,
        f: impl FnOnce(&WorkerGenerator) -> Option<Result<IdBlock, IssueError>>,
    ) -> Option<Result<IdBlock, IssueError>> {
        let current = self.shared.current.load();
        let Some(generator) = current.as_ref() else {
            return Some(Err(self.no_lease()));
        };
        let result = f(generator);
        if matches!(
            result,
            Some(Err(IssueError::Worker(_)))
                | Some(Err(IssueError::Snowflake(SnowflakeError::FenceFailed(_))))
        ) {
            // The lease may be gone: have the keeper look now rather than at its next round.
            self.shared.wake.notify_all();
        }
        result
    }

    fn no_lease(&self) -> IssueError {
        let reason = self
            .shared
            .lock()
            .problem
            .clone()
            .unwrap_or_else(|| "the worker id is being replaced".into());
        IssueError::Worker(WorkerError::NoLease { reason })
    }

    /// Why the keeper gave up acquiring a worker id, once it has: a server stops then.
    pub fn gave_up(&self) -> Option<GaveUp> {
        self.shared.lock().gave_up.clone()
    }

    /// The lease as the keeper sees it now.
    pub fn status(&self) -> LeaseStatus {
        let current = self.shared.current.load_full();
        let usable = current.as_ref().filter(|g| g.lease().check().is_ok());
        let problem = match (&current, usable) {
            (_, Some(_)) => None,
            (Some(g), None) => g.lease().check().err().map(|e| e.to_string()),
            (None, None) => Some(
                self.shared
                    .lock()
                    .problem
                    .clone()
                    .unwrap_or_else(|| "no worker id held".into()),
            ),
        };
        LeaseStatus {
            worker: current.as_ref().map(|g| g.worker()),
            lease: current.as_ref().map(|g| g.lease().describe()),
            problem,
            acquisitions: self.shared.acquisitions.load(Ordering::Relaxed),
            max_lead_ms: current.as_ref().map_or(0, |g| g.generator().max_lead_ms()),
            last_issued_ms: current
                .as_ref()
                .and_then(|g| g.generator().last_issued_ms()),
            reserved_until_ms: current.as_ref().and_then(|g| g.generator().fence_ms()),
        }
    }

    /// How far (ms) the clock is behind the last time the current generator issued IDs at, beyond
    /// its lead, when that is more than a step the generator waits out: nothing can be issued
    /// until the clock catches up. `None` when the clock is fine (or no generator is held).
    pub fn clock_behind_ms(&self) -> Option<i64> {
        let current = self.shared.current.load();
        let generator = current.as_ref()?.generator();
        let last = generator.last_issued_ms()?;
        let lead = generator.max_lead_ms().min(i64::MAX as u64) as i64;
        let behind = last - self.shared.options.clock.now_ms() - lead;
        (behind > MAX_TOLERATED_ROLLBACK_MS).then_some(behind)
    }

    /// Clock rollbacks waited out and refused, over every lease so far.
    pub fn rollbacks(&self) -> (u64, u64) {
        let mut waited = self.shared.retired_waited.load(Ordering::Relaxed);
        let mut refused = self.shared.retired_refused.load(Ordering::Relaxed);
        if let Some(g) = self.shared.current.load().as_ref() {
            waited += g.generator().stats().rollbacks_waited();
            refused += g.generator().stats().rollbacks_refused();
        }
        (waited, refused)
    }

    fn stop_keeper(&self) {
        let Some(handle) = self.keeper.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        let deadline = Instant::now() + STOP_WAIT;
        let mut st = self.shared.lock();
        st.stopping = true;
        self.shared.wake.notify_all();
        while !st.stopped {
            let now = Instant::now();
            if now >= deadline {
                // Busy acquiring (waiting out a predecessor's reservation, say): leave it; it
                // gives back whatever it gets once it sees `stopping`.
                tracing::warn!("the lease keeper is still acquiring a worker id; not waiting");
                return;
            }
            st = self
                .shared
                .wake
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(st);
        let _ = handle.join();
    }

    /// Stops the keeper, records the last issued time and gives the worker id back.
    pub fn finish(&self) -> Result<(), WorkerError> {
        self.stop_keeper();
        match self.shared.current.swap(None) {
            Some(g) => g.finish(),
            None => Ok(()),
        }
    }
}

impl Drop for SupervisedGenerator {
    fn drop(&mut self) {
        self.stop_keeper();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::{FakeClock, SeqStart, TimeFence};
    use std::sync::atomic::AtomicBool;

    /// Leases worker 0, then 1, ...; worker 0's lease is taken away when `lost` is set.
    struct Scripted {
        next_worker: AtomicU64,
        lost: Arc<AtomicBool>,
    }

    struct ScriptedLease {
        worker: u64,
        lost: Arc<AtomicBool>,
    }

    impl TimeFence for ScriptedLease {
        fn extend(&self, _unix_ms: i64) -> Result<i64, SnowflakeError> {
            Ok(i64::MAX)
        }
        fn try_extend(&self, _unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
            Some(Ok(i64::MAX))
        }
    }

    impl super::super::WorkerLease for ScriptedLease {
        fn worker(&self) -> u64 {
            self.worker
        }
        fn resume_after_ms(&self) -> Option<i64> {
            None
        }
        fn check(&self) -> Result<(), WorkerError> {
            if self.worker == 0 && self.lost.load(Ordering::SeqCst) {
                return Err(WorkerError::NoLease {
                    reason: "taken away".into(),
                });
            }
            Ok(())
        }
        fn finish(&self, _last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
            Ok(())
        }
        fn describe(&self) -> String {
            format!("scripted lease {}", self.worker)
        }
    }

    impl WorkerRegistry for Scripted {
        fn acquire(
            &self,
            _options: &IssueOptions,
        ) -> Result<Arc<dyn super::super::WorkerLease>, WorkerError> {
            Ok(Arc::new(ScriptedLease {
                worker: self.next_worker.fetch_add(1, Ordering::SeqCst),
                lost: self.lost.clone(),
            }))
        }
    }

    /// Found by the nemesis (tests/nemesis/main.rs, etcd, seed 101): a server whose clock was
    /// stepped back 3 s lost its lease, leased another worker id and issued IDs 0.5 s below
    /// the ones it had answered a moment before (unique, as the worker id differs, but one
    /// server's IDs went backwards). The new lease now issues only after the old one's last
    /// ID: with the clock behind it refuses, as on one lease, and resumes once time passes.
    #[test]
    fn a_new_lease_never_issues_below_the_ids_of_the_one_it_replaced() {
        let t = 1_700_000_000_000;
        let clock = Arc::new(FakeClock::new(t));
        let lost = Arc::new(AtomicBool::new(false));
        let registry = Scripted {
            next_worker: AtomicU64::new(0),
            lost: lost.clone(),
        };
        let options = IssueOptions::new(Layout::preset(crate::snowflake::Preset::Leaf))
            .clock(clock.clone())
            .seq_start(SeqStart::Zero);
        let g = SupervisedGenerator::start(Box::new(registry), options).unwrap();
        let before: Vec<u64> = g.next_block(10).unwrap().into_iter().collect();
        let high = *before.iter().max().unwrap();
        // The clock steps back 3 s, then the lease is taken away.
        clock.set_ms(t - 3_000);
        lost.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while g.status().acquisitions < 2 {
            assert!(Instant::now() < deadline, "no new lease: {:?}", g.status());
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(g.status().worker, Some(1));
        match g.next_block(1) {
            Err(IssueError::Snowflake(SnowflakeError::ClockMovedBackwards { by_ms })) => {
                assert!(by_ms >= 3_000, "{by_ms}")
            }
            other => panic!("expected a refusal while the clock is behind, got {other:?}"),
        }
        // Once the clock passes the old lease's last ID, the new one issues above it.
        clock.set_ms(t + 1);
        let after: Vec<u64> = g.next_block(10).unwrap().into_iter().collect();
        assert!(after.iter().all(|&id| id > high), "{after:?} after {high}");
        g.finish().unwrap();
    }

    /// Worker 0, then a refusal no retry mends (`refusal`) for every later acquisition.
    struct RefusesAfterFirst {
        lost: Arc<AtomicBool>,
        attempts: AtomicU64,
        refusal: fn() -> WorkerError,
    }

    impl WorkerRegistry for RefusesAfterFirst {
        fn acquire(
            &self,
            _options: &IssueOptions,
        ) -> Result<Arc<dyn super::super::WorkerLease>, WorkerError> {
            if self.attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                return Ok(Arc::new(ScriptedLease {
                    worker: 0,
                    lost: self.lost.clone(),
                }));
            }
            Err((self.refusal)())
        }
    }

    fn keeper_after_loss(refusal: fn() -> WorkerError) -> (SupervisedGenerator, Arc<AtomicBool>) {
        let lost = Arc::new(AtomicBool::new(false));
        let registry = RefusesAfterFirst {
            lost: lost.clone(),
            attempts: AtomicU64::new(0),
            refusal,
        };
        let options = IssueOptions::new(Layout::preset(crate::snowflake::Preset::Leaf));
        let g = SupervisedGenerator::start(Box::new(registry), options).unwrap();
        lost.store(true, Ordering::SeqCst);
        (g, lost)
    }

    /// Issue 46: a keeper refused for a reason no retry mends (a pooled session shared, a
    /// setting) gives up after [`GIVE_UP_AFTER`] attempts in a row, saying why; one refused for
    /// a reason that may pass (no free worker id) keeps trying.
    #[test]
    fn the_keeper_gives_up_only_on_refusals_no_retry_mends() {
        let (g, _lost) = keeper_after_loss(|| WorkerError::Setting {
            problem: "the session is shared".into(),
            hint: "connect directly".into(),
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        let gave_up = loop {
            if let Some(gave_up) = g.gave_up() {
                break gave_up;
            }
            assert!(Instant::now() < deadline, "never gave up: {:?}", g.status());
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(gave_up.attempts, GIVE_UP_AFTER);
        assert!(
            gave_up.to_string().contains("the session is shared"),
            "{gave_up}"
        );
        assert_eq!(gave_up.hint, "connect directly");
        assert!(g.next_block(1).is_err());
        g.finish().unwrap();

        let (g, _lost) = keeper_after_loss(|| WorkerError::NoFreeWorker {
            path: "/x".into(),
            count: 1,
        });
        // Past GIVE_UP_AFTER attempts (0, then pauses of 200 ms, 400 ms, 800 ms, 1.6 s).
        std::thread::sleep(Duration::from_millis(4_500));
        assert_eq!(g.gave_up(), None);
        g.finish().unwrap();
    }
}
