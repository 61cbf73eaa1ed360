//! The local registry: an operator-chosen worker id (`--worker-id N`), kept safe on this
//! machine by a lock and a state file, without any server.
//!
//! One process at a time holds the exclusive lock `snowflake-{name}-{worker}.lock` in the state
//! directory. Beside it, `snowflake-{name}-{worker}.json` records an upper bound on the times this
//! worker id has issued IDs at. While a run issues IDs, that bound is a reservation a little ahead
//! of the clock, written (and synced) before any ID at those times is handed out; a clean exit
//! replaces it with the exact last time. So even after a crash, the next run knows a time at or
//! after every ID issued, and never reuses one.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use super::files::{ensure_dir, io, write_atomically};
use super::{MAX_RESERVATION_WAIT_MS, WorkerError, WorkerLease, WorkerRegistry};
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

struct Local(LocalWorkerLease, u64);

impl TimeFence for Local {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.0.extend(unix_ms)
    }
}

impl WorkerLease for Local {
    fn worker(&self) -> u64 {
        self.1
    }
    fn resume_after_ms(&self) -> Option<i64> {
        self.0.resume_after_ms()
    }
    fn check(&self) -> Result<(), WorkerError> {
        Ok(())
    }
    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        Ok(self.0.finish(last_issued_ms)?)
    }
    fn describe(&self) -> String {
        format!("local state file {}", self.0.state_path().display())
    }
}

impl WorkerRegistry for LocalRegistry {
    fn acquire(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        self.acquire_ahead(layout, clock, 0)
    }

    fn acquire_ahead(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        if self.worker > layout.max_worker() {
            return Err(WorkerError::OutOfRange {
                worker: self.worker,
                max: layout.max_worker(),
                source_of: "--worker-id".into(),
            });
        }
        let lease = LocalWorkerLease::acquire_ahead(
            &self.state_dir,
            &self.name,
            self.worker,
            self.no_wait,
            clock,
            max_lead_ms,
        )?;
        Ok(Arc::new(Local(lease, self.worker)))
    }
}

/// How far ahead of the clock a running generator reserves times, in ms. A run that crashed
/// leaves at most this much unused reservation for the next run to wait out.
pub const RESERVATION_WINDOW_MS: i64 = 1_000;

/// Failures of the local state directory and its files.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A file or directory could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The state file exists but is not what leafctl writes.
    #[error(
        "state file {path} is unreadable ({reason}); move it aside only if no IDs were issued with this worker id since it was written"
    )]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another process holds the worker id (only with `no_wait`).
    #[error(
        "worker id {worker} (name {name:?}) is in use by another leafctl process{} (lock {path})",
        holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse {
        /// The name the worker id belongs to.
        name: String,
        /// The worker id.
        worker: u64,
        /// The lock file.
        path: PathBuf,
        /// The holder's process id, as it wrote it into the lock file.
        holder: Option<u32>,
    },
    /// The process holding the worker id is stopped (SIGSTOP, Ctrl-Z): waiting for it could
    /// last for ever, so the run fails instead.
    #[error(
        "worker id {worker} (name {name:?}) is held by process {pid}, which is stopped (lock {path}); not waiting for it"
    )]
    HolderStopped {
        /// The name the worker id belongs to.
        name: String,
        /// The worker id.
        worker: u64,
        /// The lock file.
        path: PathBuf,
        /// The stopped holder's process id.
        pid: u32,
    },
    /// The local clock is behind the last time recorded for this worker id.
    #[error(
        "the clock is {behind_ms} ms behind the last time worker id {worker} issued IDs at \
         ({recorded_ms} ms, recorded in {path}); refusing to start so no ID repeats"
    )]
    ClockBehind {
        /// The worker id.
        worker: u64,
        /// How far behind the clock is.
        behind_ms: i64,
        /// The recorded bound.
        recorded_ms: i64,
        /// The state file.
        path: PathBuf,
    },
}

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

/// An exclusive hold on one (name, worker id) on this machine, released on drop.
///
/// It is also the generator's [`TimeFence`]: a reservation is written (and synced) to disk before
/// IDs at its times are issued. Renewal normally happens ahead of need on a background thread, so
/// the generator never waits for the disk; if that thread falls behind, `extend` writes in line.
pub struct LocalWorkerLease {
    shared: Arc<Shared>,
    resume_after_ms: Option<i64>,
    /// With a lead: the clock and the lead, to reserve the lead ahead at once.
    ahead: Option<(Arc<dyn Clock>, i64)>,
    renewer: Mutex<Option<JoinHandle<()>>>,
    _lock: File,
}

/// What the lease and its renewal thread share.
struct Shared {
    name: String,
    worker: u64,
    max_lead_ms: u64,
    state_path: PathBuf,
    /// Serialises writes of the state file.
    write: Mutex<()>,
    /// Every time below this is covered by a reservation on disk.
    durable_until: AtomicI64,
    /// The renewal the thread should write next (0: none), and whether it should stop.
    request: Mutex<(i64, bool)>,
    wake: Condvar,
}

impl Shared {
    fn write_state(&self, issued_below_ms: i64, clean: bool) -> Result<(), StateError> {
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        self.write_locked(issued_below_ms, clean)
    }

    /// Writes the state file; the caller holds `write`.
    fn write_locked(&self, issued_below_ms: i64, clean: bool) -> Result<(), StateError> {
        let state = WorkerState {
            name: self.name.clone(),
            worker_id: self.worker,
            issued_below_ms,
            clean,
            max_lead_ms: self.max_lead_ms,
        };
        write_atomically(&self.state_path, &state)
    }

    /// Writes a reservation up to `until_ms` unless one at least as far is already on disk (the
    /// background thread and `extend` may race: the file must never move back below what a
    /// fence was given). Returns what is durable.
    fn reserve(&self, until_ms: i64) -> Result<i64, StateError> {
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        let durable = self.durable_until.load(Ordering::SeqCst);
        if until_ms <= durable {
            return Ok(durable);
        }
        self.write_locked(until_ms, false)?;
        self.durable_until.store(until_ms, Ordering::SeqCst);
        Ok(until_ms)
    }

    /// The renewal thread: writes each requested reservation until told to stop. A failed write
    /// only leaves `durable_until` where it was; `extend` then writes in line and reports the error.
    fn renew_loop(&self) {
        let mut req = self.request.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if req.1 {
                return;
            }
            if req.0 > 0 {
                let target = std::mem::take(&mut req.0);
                drop(req);
                if let Err(e) = self.reserve(target) {
                    tracing::warn!("background renewal of the worker reservation failed: {e}");
                }
                req = self.request.lock().unwrap_or_else(|p| p.into_inner());
                continue;
            }
            req = self.wake.wait(req).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl std::fmt::Debug for LocalWorkerLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalWorkerLease")
            .field("name", &self.shared.name)
            .field("worker", &self.shared.worker)
            .field("state_path", &self.shared.state_path)
            .finish()
    }
}

impl LocalWorkerLease {
    /// Takes the lock for (`name`, `worker`) in `dir`, waiting for another holder to finish unless
    /// `no_wait` is set, then checks the clock against the recorded state.
    ///
    /// A run that crashed leaves a reservation up to [`RESERVATION_WINDOW_MS`] ahead; that is
    /// waited out. Any other clock behind the record is left to the generator, which waits out a
    /// step of a few ms and refuses a larger one.
    pub fn acquire(
        dir: &Path,
        name: &str,
        worker: u64,
        no_wait: bool,
        clock: &dyn Clock,
    ) -> Result<LocalWorkerLease, StateError> {
        Self::acquire_with(dir, name, worker, no_wait, clock, None)
    }

    /// [`LocalWorkerLease::acquire`] for a generator that may run up to `max_lead_ms` ahead of
    /// the clock.
    ///
    /// The record is waited out only until it is within `max_lead_ms` of the clock (the generator
    /// resumes after it within its lead). A record further ahead than the run that wrote it could
    /// have put it (its reservation window plus its own lead, recorded in the file) is the clock
    /// behind: refused, as is a wait longer than [`crate::worker::MAX_RESERVATION_WAIT_MS`].
    ///
    /// While issuing, a reservation reaches the lead plus [`RESERVATION_WINDOW_MS`] past the
    /// clock (read on `clock`), so a batch running ahead syncs the file rarely; a crash leaves no
    /// more than that to wait out.
    pub fn acquire_ahead(
        dir: &Path,
        name: &str,
        worker: u64,
        no_wait: bool,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<LocalWorkerLease, StateError> {
        let ahead = (max_lead_ms > 0).then(|| (clock.clone(), max_lead_ms.min(MAX_LEAD_MS)));
        Self::acquire_with(dir, name, worker, no_wait, clock.as_ref(), ahead)
    }

    fn acquire_with(
        dir: &Path,
        name: &str,
        worker: u64,
        no_wait: bool,
        clock: &dyn Clock,
        ahead: Option<(Arc<dyn Clock>, u64)>,
    ) -> Result<LocalWorkerLease, StateError> {
        let max_lead_ms = ahead.as_ref().map_or(0, |a| a.1);
        ensure_dir(dir)?;
        let stem = format!("snowflake-{}-{worker}", sanitize(name));
        let lock_path = dir.join(format!("{stem}.lock"));
        let state_path = dir.join(format!("{stem}.json"));
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io("cannot open lock file", &lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                wait_for_lock(&lock, &lock_path, name, worker, no_wait)?;
            }
            Err(TryLockError::Error(e)) => return Err(io("cannot lock", &lock_path)(e)),
        }
        // Name the holder for whoever waits next (best effort: a full disk only loses the name).
        let _ = lock.set_len(0).and_then(|_| {
            let mut f = &lock;
            f.write_all(format!("{}\n", std::process::id()).as_bytes())
        });

        let resume_after_ms = match read_state(&state_path)? {
            None => None,
            Some(state) => {
                if state.name != name || state.worker_id != worker {
                    return Err(StateError::Corrupt {
                        path: state_path,
                        reason: format!(
                            "it belongs to name {:?} worker {}",
                            state.name, state.worker_id
                        ),
                    });
                }
                if state.issued_below_ms <= 0 {
                    // leafctl only ever records a positive time: this was edited by hand.
                    return Err(StateError::Corrupt {
                        path: state_path,
                        reason: format!(
                            "issued_below_ms {} is not a time leafctl records",
                            state.issued_below_ms
                        ),
                    });
                }
                let now = clock.now_ms();
                let behind = state.issued_below_ms - now;
                let lead = max_lead_ms.min(MAX_LEAD_MS) as i64;
                let prev_lead = state.max_lead_ms.min(MAX_LEAD_MS) as i64;
                // What this run must wait for: the record down to its own lead.
                let until = state.issued_below_ms - lead;
                let wait = until - now;
                // How far ahead of its clock the previous run could have put the record.
                let allowed = if state.clean {
                    prev_lead
                } else {
                    RESERVATION_WINDOW_MS + prev_lead
                }
                .min(RESERVATION_WINDOW_MS.max(MAX_RESERVATION_WAIT_MS));
                if wait > 0 {
                    if wait <= allowed {
                        super::announce_wait(
                            worker,
                            wait,
                            &format!(
                                "the last run recorded a time {behind} ms ahead of the clock{} ({})",
                                if prev_lead > 0 {
                                    " with --max-lead"
                                } else {
                                    ""
                                },
                                state_path.display()
                            ),
                        );
                        clock.sleep_until_ms(until);
                    } else if !state.clean || prev_lead > 0 {
                        return Err(StateError::ClockBehind {
                            worker,
                            behind_ms: behind,
                            recorded_ms: state.issued_below_ms,
                            path: state_path,
                        });
                    }
                    // Else (a clean record of a run without a lead) the generator judges: a step
                    // back of a few ms is waited out, a larger one refused.
                }
                Some(state.issued_below_ms - 1)
            }
        };
        Ok(LocalWorkerLease {
            shared: Arc::new(Shared {
                name: name.to_string(),
                worker,
                max_lead_ms: max_lead_ms.min(MAX_LEAD_MS),
                state_path,
                write: Mutex::new(()),
                durable_until: AtomicI64::new(i64::MIN),
                request: Mutex::new((0, false)),
                wake: Condvar::new(),
            }),
            resume_after_ms,
            renewer: Mutex::new(None),
            ahead: ahead.map(|(clock, lead)| (clock, lead as i64)),
            _lock: lock,
        })
    }

    /// How far a reservation made for issuing at `unix_ms` reaches: one window past it, and
    /// with a lead at least one window past the lead over the clock.
    fn reservation_for(&self, unix_ms: i64) -> i64 {
        let base = match &self.ahead {
            Some((clock, lead)) => unix_ms.max(clock.now_ms().saturating_add(*lead)),
            None => unix_ms,
        };
        base.saturating_add(RESERVATION_WINDOW_MS)
    }

    /// The time the generator must resume after (every earlier time may have been used).
    pub fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    /// The state file's path.
    pub fn state_path(&self) -> &Path {
        &self.shared.state_path
    }

    /// Records the exact last issued time after a clean run (`None`: nothing was issued, the
    /// previous bound stays). Call it once no more IDs will be issued under this lease.
    pub fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), StateError> {
        self.stop_renewer();
        let Some(bound) = last_issued_ms
            .map(|t| t + 1)
            .or(self.resume_after_ms.map(|t| t + 1))
        else {
            return Ok(());
        };
        self.shared.write_state(bound, true)
    }

    /// Asks the renewal thread (started on first use) to reserve up to `until_ms`.
    fn request_renewal(&self, until_ms: i64) {
        let mut renewer = self.renewer.lock().unwrap_or_else(|p| p.into_inner());
        {
            let mut req = self
                .shared
                .request
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if req.1 {
                return; // finished: no more renewals
            }
            req.0 = req.0.max(until_ms);
        }
        if renewer.is_none() {
            let shared = self.shared.clone();
            match std::thread::Builder::new()
                .name("leafctl-reserve".into())
                .spawn(move || shared.renew_loop())
            {
                Ok(handle) => *renewer = Some(handle),
                // Without the thread every renewal is written in line by `extend`.
                Err(e) => tracing::debug!("no background renewal thread: {e}"),
            }
        }
        self.shared.wake.notify_one();
    }

    fn stop_renewer(&self) {
        {
            let mut req = self
                .shared
                .request
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            req.1 = true;
        }
        self.shared.wake.notify_one();
        let handle = self
            .renewer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl Drop for LocalWorkerLease {
    fn drop(&mut self) {
        self.stop_renewer();
    }
}

impl TimeFence for LocalWorkerLease {
    /// Returns a fence never beyond what is durably reserved. Past the middle of the reservation
    /// a renewal is requested in the background; only when the reservation has run out is it
    /// written in line.
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        const HALF: i64 = RESERVATION_WINDOW_MS / 2;
        let durable = self.shared.durable_until.load(Ordering::SeqCst);
        if durable > unix_ms.saturating_add(HALF) {
            return Ok(durable - HALF);
        }
        if durable > unix_ms {
            self.request_renewal(self.reservation_for(unix_ms));
            return Ok(durable);
        }
        let durable = self
            .shared
            .reserve(self.reservation_for(unix_ms))
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        Ok(durable - HALF)
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
        let clock = FakeClock::new(10_000);
        let _a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock);
        assert!(matches!(b, Err(StateError::InUse { worker: 7, .. })));
        assert!(LocalWorkerLease::acquire(dir.path(), "leaf", 8, true, &clock).is_ok());
    }

    #[test]
    fn clean_finish_records_the_exact_time() {
        let dir = tempfile::tempdir().unwrap();
        let clock = FakeClock::new(10_000);
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
            assert_eq!(a.resume_after_ms(), None);
            let fence = a.extend(10_000).unwrap();
            assert!(fence > 10_000 && fence <= 10_000 + RESERVATION_WINDOW_MS);
            a.finish(Some(10_002)).unwrap();
        }
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
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
        let clock = FakeClock::new(10_000);
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
            a.extend(10_000).unwrap();
            // Dropped without finish(): a crash.
        }
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
        assert_eq!(clock.now_ms(), 10_000 + RESERVATION_WINDOW_MS);
        assert_eq!(
            b.resume_after_ms(),
            Some(10_000 + RESERVATION_WINDOW_MS - 1)
        );
    }

    #[test]
    fn clock_far_behind_a_reservation_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let clock = FakeClock::new(10_000);
        {
            let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
            a.extend(10_000).unwrap();
        }
        clock.set_ms(5_000);
        let b = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock);
        assert!(matches!(b, Err(StateError::ClockBehind { .. })), "{b:?}");
    }

    #[test]
    fn fences_never_pass_the_durable_reservation() {
        let dir = tempfile::tempdir().unwrap();
        let clock = FakeClock::new(10_000);
        let a = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
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
        a.finish(Some(t)).unwrap();
        let on_disk = read_state(a.state_path()).unwrap().unwrap();
        assert_eq!((on_disk.issued_below_ms, on_disk.clean), (t + 1, true));
    }

    #[test]
    fn corrupt_state_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("snowflake-leaf-7.json"), "{not json").unwrap();
        let clock = FakeClock::new(10_000);
        let r = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock);
        assert!(matches!(r, Err(StateError::Corrupt { .. })), "{r:?}");
    }

    #[test]
    fn a_leading_runs_crash_is_waited_out_down_to_the_next_runs_lead() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a =
                LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
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
        let b = LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
            .unwrap();
        assert_eq!(clock.now_ms(), recorded - 5_000);
        assert_eq!(b.resume_after_ms(), Some(recorded - 1));
        drop(b);
        // Without a lead: the whole record is waited out (it is the previous run's lead).
        clock.set_ms(10_000);
        let c = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
        assert_eq!(clock.now_ms(), recorded);
        assert_eq!(c.resume_after_ms(), Some(recorded - 1));
    }

    #[test]
    fn a_clean_record_ahead_of_the_clock_is_continued_within_the_lead() {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(FakeClock::new(10_000));
        {
            let a =
                LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
                    .unwrap();
            a.extend(12_000).unwrap();
            a.finish(Some(12_345)).unwrap();
        }
        let on_disk = read_state(&dir.path().join("snowflake-leaf-7.json"))
            .unwrap()
            .unwrap();
        assert_eq!((on_disk.issued_below_ms, on_disk.clean), (12_346, true));
        let b = LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 5_000)
            .unwrap();
        assert_eq!(b.resume_after_ms(), Some(12_345));
        assert_eq!(
            clock.slept_ms(),
            0,
            "no wait: the generator continues within its lead"
        );
        drop(b);
        let c = LocalWorkerLease::acquire(dir.path(), "leaf", 7, true, &clock).unwrap();
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
            let a =
                LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 2_000)
                    .unwrap();
            a.extend(12_000).unwrap();
        }
        // The clock went back 5 s: the record is 8 s ahead, the previous run allowed 3 s.
        clock.set_ms(5_000);
        let r = LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 2_000);
        assert!(
            matches!(
                r,
                Err(StateError::ClockBehind {
                    behind_ms: 8_000,
                    ..
                })
            ),
            "{r:?}"
        );
        assert_eq!(clock.slept_ms(), 0);
        // A lead that covers it continues at once (the IDs stay within this run's lead).
        let b = LocalWorkerLease::acquire_ahead(dir.path(), "leaf", 7, true, clock.clone(), 10_000)
            .unwrap();
        assert_eq!(
            b.resume_after_ms(),
            Some(12_000 + RESERVATION_WINDOW_MS - 1)
        );
    }
}
