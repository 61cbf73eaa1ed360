//! The fsync'd file helpers both local files share: the `--worker-id` state file
//! ([`super::local`]) and the ZooKeeper forever mode's cache file ([`super::cache`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::local::StateError;

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
