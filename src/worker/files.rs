//! The fsync'd file helpers both local files share: the `--worker-id` state file
//! ([`super::local`]) and the ZooKeeper forever mode's cache file ([`super::cache`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

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

/// Maps an I/O error on `path` to [`StateError::Io`].
pub(crate) fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> StateError + 'a {
    move |source| StateError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Creates the state directory (mode 0700 on Unix) if needed.
pub fn ensure_dir(dir: &Path) -> Result<(), StateError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(io("cannot create state directory", dir))
}

/// Opens (creating it if need be, never truncating it: a holder may have written its pid there)
/// the file whose lock keeps a state file to one process.
pub(crate) fn open_lock_file(path: &Path) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Writes JSON to a temporary file, syncs it and renames it over `path`, so a reader never sees
/// a half-written file, even after a crash or power loss.
pub fn write_atomically<T: Serialize>(path: &Path, value: &T) -> Result<(), StateError> {
    let tmp = path.with_extension("json.tmp");
    let body = serde_json::to_vec_pretty(value).map_err(|e| StateError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut f = File::create(&tmp).map_err(io("cannot create", &tmp))?;
    f.write_all(&body)
        .and_then(|_| f.write_all(b"\n"))
        .and_then(|_| f.sync_all())
        .map_err(io("cannot write", &tmp))?;
    fs::rename(&tmp, path).map_err(io("cannot replace", path))?;
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        // Make the rename itself durable; a failure here leaves a valid file either way.
        let _ = d.sync_all();
    }
    Ok(())
}
