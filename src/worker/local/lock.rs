//! Waiting for the lock another process holds, telling a stopped holder from a busy one, and a
//! lock this process released from one another holds.

use std::fs::{self, File, TryLockError};
use std::path::Path;

use crate::worker::files::{StateError, io};

/// Waits for the lock another process holds (or fails at once with `no_wait`). A holder that is
/// stopped (SIGSTOP, Ctrl-Z) is an error rather than a wait that could last for ever; it is
/// checked again every 200 ms while waiting.
pub(super) fn wait_for_lock(
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

/// Takes the lock; when this very process is its recorded holder (it released it a moment ago)
/// and it is still taken, tries again for up to [`RELEASED_HERE_GRACE`]. A lock (`flock`)
/// belongs to the open file, which a child process being started by another thread shares until
/// it runs its program: for that moment the released lock stays taken, and a run of this process
/// that takes it again at once (a restart in a library user, `--no-wait`) would be refused as if
/// another process held it.
pub(super) fn try_lock_released_here(lock: &File, lock_path: &Path) -> Result<(), TryLockError> {
    let deadline = std::time::Instant::now() + RELEASED_HERE_GRACE;
    loop {
        match lock.try_lock() {
            Err(TryLockError::WouldBlock)
                if std::time::Instant::now() < deadline
                    && lock_holder(lock_path) == Some(std::process::id()) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// How long a lock this process released may stay taken by a child starting meanwhile.
const RELEASED_HERE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

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
