//! The local registry: an operator-chosen worker id (`--worker-id N`), kept safe on this
//! machine by a lock and a state file, without any server.
//!
//! One process at a time holds the exclusive lock `snowflake-{name}-{worker}.lock` in the state
//! directory. Beside it, `snowflake-{name}-{worker}.json` records an upper bound on the times this
//! worker id has issued IDs at. While a run issues IDs, that bound is a reservation a little ahead
//! of the clock, written (and synced) before any ID at those times is handed out; a clean exit
//! replaces it with the exact last time. So even after a crash, the next run knows a time at or
//! after every ID issued, and never reuses one.

use crate::worker::IssueOptions;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::files::{StateError, ensure_dir, io, write_atomically};
use super::lease::{FencedLease, LeaseStore, Record, Write, Written};
use super::{Registry, RegistryKind, RegistrySettings, WorkerError, WorkerLease, WorkerRegistry};
use crate::snowflake::{Clock, Layout, MAX_LEAD_MS, SnowflakeError, TimeFence};

/// `--worker-id N` / `snowflake.worker_id`: the id is the operator's promise, the lock and state
/// file keep this machine's runs from overlapping or reusing a time.
#[derive(Debug, Clone)]
pub struct LocalRegistry {
    /// The state directory.
    pub state_dir: PathBuf,
    /// Leaf's `leaf.name`.
    pub name: String,
    /// The worker id.
    pub worker: u64,
    /// Fail at once instead of waiting for another holder.
    pub no_wait: bool,
}

impl LocalRegistry {
    /// The local registry of a registry's settings: the worker id given, in the layout's range.
    pub fn from_settings(settings: &RegistrySettings) -> Result<LocalRegistry, WorkerError> {
        let worker = settings.worker_id.ok_or_else(|| {
            WorkerError::setting(
                "the local registry needs a worker id",
                "pass --worker-id N, set LEAF_WORKER_ID, or set snowflake.worker_id in the config file",
            )
        })?;
        let max = settings.layout.max_worker();
        if worker > max {
            return Err(WorkerError::setting(
                format!(
                    "worker id {worker} is out of range for the {} layout (0..={max})",
                    settings.layout_label
                ),
                "pick a worker id the layout can hold",
            ));
        }
        Ok(LocalRegistry {
            state_dir: settings.state_dir.clone(),
            name: settings.checked_name()?,
            worker,
            no_wait: settings.no_wait,
        })
    }
}

impl Registry for LocalRegistry {
    fn kind(&self) -> RegistryKind {
        RegistryKind::Local
    }

    fn place(&self) -> String {
        format!(
            "{}",
            self.state_dir
                .join(format!("snowflake-{}-{}.json", self.name, self.worker))
                .display()
        )
    }
}

impl WorkerRegistry for LocalRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let (layout, clock, max_lead_ms) =
            (&options.layout, options.clock.clone(), options.max_lead_ms);
        if self.worker > layout.max_worker() {
            return Err(WorkerError::OutOfRange {
                worker: self.worker,
                max: layout.max_worker(),
                source_of: "--worker-id".into(),
            });
        }
        let store = LocalStore::new(&self.state_dir, &self.name, self.worker, self.no_wait);
        Ok(Arc::new(LocalWorkerLease(FencedLease::acquire(
            store,
            layout,
            clock,
            max_lead_ms,
        )?)))
    }
}

/// How far ahead of the clock a running generator reserves times, in ms. A run that crashed
/// leaves at most this much unused reservation for the next run to wait out.
pub const RESERVATION_WINDOW_MS: i64 = 1_000;

/// What the state file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerState {
    /// The name (Leaf's `leaf.name`) the worker id belongs to.
    pub name: String,
    /// The worker id.
    pub worker_id: u64,
    /// Every ID issued with this worker id has a time strictly below this Unix ms.
    pub issued_below_ms: i64,
    /// True when the last run exited cleanly and `issued_below_ms` is exact (last time + 1),
    /// false while a run holds a reservation (or crashed holding one).
    pub clean: bool,
    /// The lead over the clock (ms) the run that wrote this could issue with: its record may be
    /// that much further ahead of its clock. Absent (0) for runs without a lead.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_lead_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The local store of the fenced-lease protocol ([`super::lease`]): the claim is an exclusive
/// `flock` on the lock file, the record is the state file (written, synced and renamed into
/// place). Its named properties: the lock goes only with the process, so "still held?" is always
/// yes and a write needs no compare (no one else can write while the lock is held); and the
/// state file records whether its run exited cleanly and with which lead, so a record further
/// ahead of the clock than its run could have put it is refused as the clock behind.
pub(crate) struct LocalStore {
    name: String,
    worker: u64,
    no_wait: bool,
    dir: PathBuf,
    lock_path: PathBuf,
    state_path: PathBuf,
    lock: Mutex<Option<File>>,
}

impl LocalStore {
    pub(crate) fn new(dir: &Path, name: &str, worker: u64, no_wait: bool) -> LocalStore {
        let stem = format!("snowflake-{}-{worker}", sanitize(name));
        LocalStore {
            name: name.to_string(),
            worker,
            no_wait,
            dir: dir.to_path_buf(),
            lock_path: dir.join(format!("{stem}.lock")),
            state_path: dir.join(format!("{stem}.json")),
            lock: Mutex::new(None),
        }
    }

    fn take_lock(&self) -> Result<File, StateError> {
        ensure_dir(&self.dir)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock_path)
            .map_err(io("cannot open lock file", &self.lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                wait_for_lock(
                    &lock,
                    &self.lock_path,
                    &self.name,
                    self.worker,
                    self.no_wait,
                )?;
            }
            Err(TryLockError::Error(e)) => return Err(io("cannot lock", &self.lock_path)(e)),
        }
        // Name the holder for whoever waits next (best effort: a full disk only loses the name).
        let _ = lock.set_len(0).and_then(|_| {
            let mut f = &lock;
            f.write_all(format!("{}\n", std::process::id()).as_bytes())
        });
        Ok(lock)
    }

    fn read_record(&self) -> Result<Record, StateError> {
        let Some(state) = read_state(&self.state_path)? else {
            return Ok(Record {
                reserved_until: 0,
                version: 0,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            });
        };
        if state.name != self.name || state.worker_id != self.worker {
            return Err(StateError::Corrupt {
                path: self.state_path.clone(),
                reason: format!(
                    "it belongs to name {:?} worker {}",
                    state.name, state.worker_id
                ),
            });
        }
        if state.issued_below_ms <= 0 {
            // leafctl only ever records a positive time: this was edited by hand.
            return Err(StateError::Corrupt {
                path: self.state_path.clone(),
                reason: format!(
                    "issued_below_ms {} is not a time leafctl records",
                    state.issued_below_ms
                ),
            });
        }
        // How far ahead of its clock the previous run could have put the record.
        let prev_lead = state.max_lead_ms.min(MAX_LEAD_MS) as i64;
        Ok(Record {
            reserved_until: state.issued_below_ms,
            version: 0,
            ahead_allowance_ms: Some(if state.clean {
                prev_lead
            } else {
                RESERVATION_WINDOW_MS + prev_lead
            }),
            writer_lead_ms: prev_lead,
        })
    }
}

impl LeaseStore for LocalStore {
    type Claim = ();

    fn candidates(&self, _max_worker: u64) -> Result<Vec<u64>, WorkerError> {
        Ok(vec![self.worker])
    }

    fn try_claim(&self, _id: u64) -> Result<Option<((), Record)>, WorkerError> {
        let lock = self.take_lock()?;
        *self.lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(lock);
        Ok(Some(((), self.read_record()?)))
    }

    fn write(&self, _claim: &(), _expected: i64, w: &Write) -> Result<Written, WorkerError> {
        let state = WorkerState {
            name: self.name.clone(),
            worker_id: self.worker,
            issued_below_ms: w.reserved_until,
            clean: w.exact,
            max_lead_ms: w.lead_ms.max(0) as u64,
        };
        write_atomically(&self.state_path, &state)?;
        Ok(Written::Applied { version: 0 })
    }

    fn still_held(&self, _claim: &()) -> Result<(), WorkerError> {
        Ok(())
    }

    fn release(&self, _claim: &()) {
        self.lock.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    fn worker(&self, _claim: &()) -> u64 {
        self.worker
    }

    fn describe(&self, _claim: &()) -> String {
        format!("local state file {}", self.state_path.display())
    }

    fn record_source(&self, _claim: &()) -> String {
        self.state_path.display().to_string()
    }

    fn clock_behind(&self, _claim: &(), recorded_ms: i64, now_ms: i64) -> WorkerError {
        StateError::ClockBehind {
            worker: self.worker,
            behind_ms: recorded_ms - now_ms,
            recorded_ms,
            path: self.state_path.clone(),
        }
        .into()
    }

    fn none_free(&self, _count: u64) -> WorkerError {
        StateError::InUse {
            name: self.name.clone(),
            worker: self.worker,
            path: self.lock_path.clone(),
            holder: None,
        }
        .into()
    }

    fn window_ms(&self) -> i64 {
        RESERVATION_WINDOW_MS
    }

    fn reserves_lead_ahead(&self) -> bool {
        true
    }
}

/// An exclusive hold on one (name, worker id) on this machine, released on drop: a lock file and
/// a state file under the fenced-lease protocol (see `LocalStore`).
///
/// It is also the generator's [`TimeFence`]: a reservation is written (and synced) to disk before
/// IDs at its times are issued. Renewal normally happens ahead of need on a background thread, so
/// the generator never waits for the disk; if that thread falls behind, `extend` writes in line.
pub struct LocalWorkerLease(FencedLease<LocalStore>);

impl std::fmt::Debug for LocalWorkerLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalWorkerLease")
            .field("worker", &self.0.worker())
            .field("state_path", &self.state_path())
            .finish()
    }
}

impl LocalWorkerLease {
    /// Takes the lock for (`name`, `worker`) in `dir`, waiting for another holder to finish unless
    /// `no_wait` is set, then checks the clock against the recorded state, for a generator that
    /// may run up to `max_lead_ms` ahead of the clock (0: never).
    ///
    /// A run that crashed leaves a reservation up to [`RESERVATION_WINDOW_MS`] ahead; that is
    /// waited out. Any other clock behind the record is left to the generator, which waits out a
    /// step of a few ms and refuses a larger one. The record is waited out only until it is within `max_lead_ms` of the clock (the generator
    /// resumes after it within its lead). A record further ahead than the run that wrote it could
    /// have put it (its reservation window plus its own lead, recorded in the file) is the clock
    /// behind: refused, as is a wait longer than [`crate::worker::MAX_RESERVATION_WAIT_MS`].
    ///
    /// While issuing, a reservation reaches the lead plus [`RESERVATION_WINDOW_MS`] past the
    /// clock, so a batch running ahead syncs the file rarely; a crash leaves no more than that to
    /// wait out.
    pub fn acquire(
        dir: &Path,
        name: &str,
        worker: u64,
        no_wait: bool,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<LocalWorkerLease, WorkerError> {
        // The layout only bounds the candidates, and this store has one.
        let layout = Layout::preset(crate::snowflake::Preset::Leaf);
        let store = LocalStore::new(dir, name, worker, no_wait);
        Ok(LocalWorkerLease(FencedLease::acquire(
            store,
            &layout,
            clock,
            max_lead_ms,
        )?))
    }

    /// The time the generator must resume after (every earlier time may have been used).
    pub fn resume_after_ms(&self) -> Option<i64> {
        self.0.resume_after_ms()
    }

    /// The state file's path.
    pub fn state_path(&self) -> &Path {
        &self.0.core().store().state_path
    }

    /// Records the exact last issued time after a clean run (`None`: nothing was issued, the
    /// previous bound stays). Call it once no more IDs will be issued under this lease.
    pub fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        self.0.finish(last_issued_ms)
    }
}

impl TimeFence for LocalWorkerLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.0.extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        self.0.try_extend(unix_ms)
    }
}

impl WorkerLease for LocalWorkerLease {
    fn worker(&self) -> u64 {
        self.0.worker()
    }
    fn resume_after_ms(&self) -> Option<i64> {
        self.0.resume_after_ms()
    }
    fn check(&self) -> Result<(), WorkerError> {
        self.0.check()
    }
    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        self.0.finish(last_issued_ms)
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// Waits for the lock another process holds (or fails at once with `no_wait`). A holder that is
/// stopped (SIGSTOP, Ctrl-Z) is an error rather than a wait that could last for ever; it is
/// checked again every 200 ms while waiting.
fn wait_for_lock(
    lock: &File,
    lock_path: &Path,
    name: &str,
    worker: u64,
    no_wait: bool,
) -> Result<(), StateError> {
    let mut announced = false;
    loop {
        let holder = lock_holder(lock_path);
        if let Some(pid) = holder.filter(|&p| process_stopped(p)) {
            return Err(StateError::HolderStopped {
                name: name.to_string(),
                worker,
                path: lock_path.to_path_buf(),
                pid,
            });
        }
        if no_wait {
            return Err(StateError::InUse {
                name: name.to_string(),
                worker,
                path: lock_path.to_path_buf(),
                holder,
            });
        }
        if !announced {
            announced = true;
            tracing::warn!(
                "worker id {worker} is in use by another leafctl process{}; waiting for it to finish ({}; --no-wait fails instead)",
                holder.map(|p| format!(" (pid {p})")).unwrap_or_default(),
                lock_path.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(io("cannot lock", lock_path)(e)),
        }
    }
}

/// The process id the holder of a lock file wrote into it, if readable.
fn lock_holder(lock_path: &Path) -> Option<u32> {
    fs::read_to_string(lock_path).ok()?.trim().parse().ok()
}

/// Whether process `pid` exists and is stopped (by a signal or a tracer). Linux only.
fn process_stopped(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        // /proc/PID/stat: "pid (comm) S ..."; comm may hold spaces and parentheses.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "T" || state == "t")
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

/// Reads a state file; `None` when there is none yet.
pub fn read_state(path: &Path) -> Result<Option<WorkerState>, StateError> {
    // Bytes, not text: a file garbled into invalid UTF-8 is corrupt, not unreadable.
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("cannot read state file", path)(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| StateError::Corrupt {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Keeps a name usable as part of a file name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::FakeClock;

    #[test]
    fn second_holder_is_refused_with_no_wait() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        let _a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0);
        assert!(matches!(
            b,
            Err(WorkerError::State(StateError::InUse { worker: 7, .. }))
        ));
        assert!(LocalWorkerLease::acquire(dir.path(), "leaf", 8, true, clock.clone(), 0).is_ok());
    }

    #[test]
    fn clean_finish_records_the_exact_time() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a =
                LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
            assert_eq!(a.resume_after_ms(), None);
            let fence = a.extend(10_000).unwrap();
            assert!(fence > 10_000 && fence <= 10_000 + RESERVATION_WINDOW_MS);
            a.finish(Some(10_002)).unwrap();
        }
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        assert_eq!(b.resume_after_ms(), Some(10_002));
        assert_eq!(
            clock.slept_ms(),
            0,
            "a clean record is never waited on here"
        );
    }

    #[test]
    fn crashed_reservation_is_waited_out() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a =
                LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
            a.extend(10_000).unwrap();
            // Dropped without finish(): a crash.
        }
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        assert_eq!(clock.now_ms(), 10_000 + RESERVATION_WINDOW_MS);
        assert_eq!(
            b.resume_after_ms(),
            Some(10_000 + RESERVATION_WINDOW_MS - 1)
        );
    }

    #[test]
    fn clock_far_behind_a_reservation_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a =
                LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
            a.extend(10_000).unwrap();
        }
        clock.set_ms(5_000);
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0);
        assert!(
            matches!(b, Err(WorkerError::State(StateError::ClockBehind { .. }))),
            "{b:?}"
        );
    }

    #[test]
    fn a_try_extension_answers_inside_the_record_and_never_writes() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        assert!(
            a.try_extend(10_000).is_none(),
            "nothing recorded yet: the record must be written first"
        );
        let fence = a.extend(10_000).unwrap();
        let on_disk = read_state(a.state_path()).unwrap().unwrap();
        assert_eq!(fence, on_disk.issued_below_ms);
        // Inside what the state file records, the answer comes from memory and matches
        // extend's: early in the window, so the renewer is not woken and writes nothing. Its
        // rounds hold the state for a moment, and a try meeting one declines: ask again.
        let tried = (0..1000)
            .find_map(|_| {
                a.try_extend(10_001).or_else(|| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    None
                })
            })
            .unwrap()
            .unwrap();
        assert!(tried > 10_001 && tried < fence, "{tried} vs {on_disk:?}");
        assert_eq!(a.extend(10_001).unwrap(), tried);
        assert_eq!(read_state(a.state_path()).unwrap().unwrap(), on_disk);
        // From the record on, only the blocking extension may write.
        assert!(a.try_extend(fence).is_none());
        a.finish(Some(fence)).unwrap();
        assert!(
            matches!(
                a.try_extend(fence),
                Some(Err(SnowflakeError::FenceFailed(_)))
            ),
            "a lease given back answers with the same error as extend"
        );
    }

    #[test]
    fn fences_never_pass_the_durable_reservation() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        let mut t = 10_000;
        for _ in 0..50 {
            let fence = a.extend(t).unwrap();
            assert!(fence > t, "the fence covers the time asked for");
            let on_disk = read_state(a.state_path()).unwrap().unwrap();
            assert!(!on_disk.clean);
            assert!(
                on_disk.issued_below_ms >= fence,
                "fence {fence} beyond the disk's {on_disk:?}"
            );
            t = fence;
        }
        // The last time issued is below the last fence.
        a.finish(Some(t - 1)).unwrap();
        let on_disk = read_state(a.state_path()).unwrap().unwrap();
        assert_eq!((on_disk.issued_below_ms, on_disk.clean), (t, true));
    }

    #[test]
    fn corrupt_state_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("snowflake-leaf-7.json"), "{not json").unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        let r = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0);
        assert!(
            matches!(r, Err(WorkerError::State(StateError::Corrupt { .. }))),
            "{r:?}"
        );
    }

    #[test]
    fn a_leading_runs_crash_is_waited_out_down_to_the_next_runs_lead() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
                .unwrap();
            // Issuing 4 s ahead of the clock: the reservation covers it before IDs go out.
            let fence = a.extend(14_000).unwrap();
            assert!(fence > 14_000);
            let on_disk = read_state(a.state_path()).unwrap().unwrap();
            assert!(on_disk.issued_below_ms >= fence && on_disk.max_lead_ms == 5_000);
            // Crash: no finish().
        }
        // Reserved at once: the lead past the clock, plus the window.
        let recorded = 10_000 + 5_000 + RESERVATION_WINDOW_MS;
        // The same lead: the record is within it after at most the reservation window.
        let b =
            LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 5_000).unwrap();
        assert_eq!(clock.now_ms(), recorded - 5_000);
        assert_eq!(b.resume_after_ms(), Some(recorded - 1));
        drop(b);
        // Without a lead: the whole record is waited out (it is the previous run's lead).
        clock.set_ms(10_000);
        let c = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        assert_eq!(clock.now_ms(), recorded);
        assert_eq!(c.resume_after_ms(), Some(recorded - 1));
    }

    #[test]
    fn a_clean_record_ahead_of_the_clock_is_continued_within_the_lead() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
                .unwrap();
            a.extend(12_000).unwrap();
            a.finish(Some(12_345)).unwrap();
        }
        let on_disk = read_state(&dir.path().join("snowflake-leaf-7.json"))
            .unwrap()
            .unwrap();
        assert_eq!((on_disk.issued_below_ms, on_disk.clean), (12_346, true));
        let b =
            LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 5_000).unwrap();
        assert_eq!(b.resume_after_ms(), Some(12_345));
        assert_eq!(
            clock.slept_ms(),
            0,
            "no wait: the generator continues within its lead"
        );
        drop(b);
        let c = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 0).unwrap();
        assert_eq!(c.resume_after_ms(), Some(12_345));
        assert_eq!(
            clock.now_ms(),
            12_346,
            "without a lead: waits until the record passes"
        );
    }

    #[test]
    fn a_record_further_ahead_than_its_run_could_put_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 2_000)
                .unwrap();
            a.extend(12_000).unwrap();
        }
        // The clock went back 5 s: the record is 8 s ahead, the previous run allowed 3 s.
        clock.set_ms(5_000);
        let r = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 2_000);
        assert!(
            matches!(
                r,
                Err(WorkerError::State(StateError::ClockBehind {
                    behind_ms: 8_000,
                    ..
                }))
            ),
            "{r:?}"
        );
        assert_eq!(clock.slept_ms(), 0);
        // A lead that covers it continues at once (the IDs stay within this run's lead).
        let b =
            LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, clock.clone(), 10_000).unwrap();
        assert_eq!(
            b.resume_after_ms(),
            Some(12_000 + RESERVATION_WINDOW_MS - 1)
        );
    }
}
