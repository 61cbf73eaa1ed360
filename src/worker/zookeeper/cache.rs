//! The forever mode's local cache file: Leaf's weak dependency on ZooKeeper, with NotFound9's fix.
//!
//! `{state_dir}/zk-{name}-{ip}_{port}.json` holds the worker id ZooKeeper gave this identity, the
//! last time reported, and (like the `--worker-id` state file in [`crate::worker::local`]) an upper bound on the times IDs were issued at,
//! written and synced before IDs at those times are handed out. When ZooKeeper is unreachable at
//! start the cached worker id is used only if the clock is not behind the recorded times. A lock
//! file beside it keeps a second process with the same identity on this host from starting.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::worker::files::{self, StateError};
use crate::worker::{Identity, WorkerError};

/// What the cache file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerCache {
    /// Leaf's `leaf.name`.
    pub name: String,
    /// `ip:port`.
    pub identity: String,
    /// The worker id ZooKeeper assigned (the node's sequence number).
    pub worker_id: u64,
    /// The last time reported to ZooKeeper (Unix ms).
    pub timestamp: i64,
    /// Every ID issued with this worker id from this host has a time below this Unix ms.
    pub issued_below_ms: i64,
    /// True when the last run exited cleanly (`issued_below_ms` is then exact).
    pub clean: bool,
}

/// The cache file and its lock, held while a generator runs.
#[derive(Debug)]
pub struct CacheFile {
    path: PathBuf,
    _lock: File,
}

fn io_err(action: &'static str, path: &Path, source: std::io::Error) -> WorkerError {
    WorkerError::State(StateError::Io {
        action,
        path: path.to_path_buf(),
        source,
    })
}

impl CacheFile {
    /// The cache file's path for (`name`, `identity`).
    pub fn path_for(dir: &Path, name: &str, identity: &Identity) -> PathBuf {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        dir.join(format!(
            "zk-{}-{}_{}.json",
            clean(name),
            clean(&identity.ip),
            clean(&identity.port)
        ))
    }

    /// Locks the cache for (`name`, `identity`); fails at once when another process holds it.
    pub fn lock(dir: &Path, name: &str, identity: &Identity) -> Result<CacheFile, WorkerError> {
        files::ensure_dir(dir)?;
        let path = Self::path_for(dir, name, identity);
        let lock_path = path.with_extension("lock");
        let lock = files::open_lock_file(&lock_path)
            .map_err(|e| io_err("cannot open lock file", &lock_path, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(WorkerError::IdentityInUse {
                    identity: identity.to_string(),
                    path: format!("lock file {} is held on this host", lock_path.display()),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io_err("cannot lock", &lock_path, e)),
        }
        Ok(CacheFile { path, _lock: lock })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the cache; `None` when there is none yet.
    pub fn read(&self) -> Result<Option<WorkerCache>, WorkerError> {
        read(&self.path)
    }

    /// Replaces the cache atomically (written, synced, renamed).
    pub fn write(&self, cache: &WorkerCache) -> Result<(), WorkerError> {
        Ok(files::write_atomically(&self.path, cache)?)
    }
}

/// Reads a cache file; `None` when there is none.
pub fn read(path: &Path) -> Result<Option<WorkerCache>, WorkerError> {
    // Bytes, not text: a file garbled into invalid UTF-8 is corrupt, not unreadable.
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("cannot read cache file", path, e)),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        WorkerError::State(StateError::Corrupt {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    })
}
