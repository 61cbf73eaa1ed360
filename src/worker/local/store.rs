//! The local store of the fenced-lease protocol: the state file (what it holds, read and
//! written) and the lock file.

use std::fs::{self, File, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::lock::{try_lock_released_here, wait_for_lock};
use crate::snowflake::MAX_LEAD_MS;
use crate::worker::WorkerError;
use crate::worker::files::{StateError, ensure_dir, io, open_lock_file, write_atomically};
use crate::worker::lease::{LeaseStore, Record, Write, Written};

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
    /// No ID issued with this worker id has a time below this Unix ms: the clock when the state
    /// file was first written (IDs never go below the clock they were issued at). `decode
    /// --guess` credits this host only for times between it and `issued_below_ms`. Absent in
    /// files of earlier versions, which then start it at their next write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_from_ms: Option<i64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The local store of the fenced-lease protocol ([`crate::worker::lease`]): the claim is an exclusive
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
    pub(super) state_path: PathBuf,
    lock: Mutex<Option<File>>,
    /// The state file's `issued_from_ms`, read with the record, kept by every write.
    issued_from_ms: Mutex<Option<i64>>,
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
            issued_from_ms: Mutex::new(None),
        }
    }

    fn take_lock(&self) -> Result<File, StateError> {
        ensure_dir(&self.dir)?;
        let lock = open_lock_file(&self.lock_path)
            .map_err(io("cannot open lock file", &self.lock_path))?;
        match try_lock_released_here(&lock, &self.lock_path) {
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
        *self
            .issued_from_ms
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = state.issued_from_ms;
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

    fn candidates(&self, _ids: std::ops::Range<u64>) -> Result<Vec<u64>, WorkerError> {
        Ok(vec![self.worker])
    }

    fn try_claim(&self, _id: u64) -> Result<Option<((), Record)>, WorkerError> {
        let lock = self.take_lock()?;
        *self.lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(lock);
        Ok(Some(((), self.read_record()?)))
    }

    fn write(&self, _claim: &(), _expected: i64, w: &Write) -> Result<Written, WorkerError> {
        // The first write of a worker id's file starts its `issued_from_ms`: the clock now, or
        // less (a reservation lies at most its window and lead ahead of the clock).
        let issued_from_ms = *self
            .issued_from_ms
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| {
                let reserved_from = w.reserved_until - RESERVATION_WINDOW_MS - w.lead_ms.max(0);
                reserved_from.min(crate::snowflake::Clock::now_ms(
                    &crate::snowflake::SystemClock,
                ))
            });
        let state = WorkerState {
            name: self.name.clone(),
            worker_id: self.worker,
            issued_below_ms: w.reserved_until,
            clean: w.exact,
            max_lead_ms: w.lead_ms.max(0) as u64,
            issued_from_ms: Some(issued_from_ms),
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

    fn none_free(&self, _ids: std::ops::Range<u64>) -> WorkerError {
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
