//! Waiting for the lock another process holds, and telling a stopped holder from a busy one.

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
