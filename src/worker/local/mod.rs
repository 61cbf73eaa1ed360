//! The local registry: an operator-chosen worker id (`--worker-id N`), kept safe on this
//! machine by a lock and a state file, without any server.
//!
//! One process at a time holds the exclusive lock `snowflake-{name}-{worker}.lock` in the state
//! directory. Beside it, `snowflake-{name}-{worker}.json` records an upper bound on the times this
//! worker id has issued IDs at. While a run issues IDs, that bound is a reservation a little ahead
//! of the clock, written (and synced) before any ID at those times is handed out; a clean exit
//! replaces it with the exact last time. So even after a crash, the next run knows a time at or
//! after every ID issued, and never reuses one.

//!
//! The files: `store` (the state file and the lock as the fenced lease's store) and `lock`
//! (waiting for another holder of the lock).

mod lock;
mod store;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use store::{RESERVATION_WINDOW_MS, WorkerState, read_state};

use self::store::LocalStore;
use super::lease::FencedLease;
use super::setting::{BackendSetting, FlagScope, SettingKind};
use super::{Registry, RegistryKind, RegistrySettings, WorkerError, WorkerLease, WorkerRegistry};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};
use crate::worker::IssueOptions;

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

/// `--worker-id N`, `LEAF_WORKER_ID`, `snowflake.worker_id`: the worker id the local registry
/// holds.
pub const WORKER_ID: BackendSetting = BackendSetting::new(
    "snowflake.worker_id",
    "worker id",
    "Worker id of this process, unique among live generators (the local registry)",
    SettingKind::Whole {
        min: 0,
        max: u64::MAX,
    },
)
.env("LEAF_WORKER_ID")
.flag("worker-id", "N", FlagScope::Issuing);

/// The local registry's kind: `--registry local`.
pub const KIND: RegistryKind = RegistryKind::named("local");

/// The local registry in the list of backends (`crate::registries`): `--worker-id` picks it.
pub const BACKEND: super::RegistryBackend = super::RegistryBackend {
    kind: KIND,
    store: None,
    flag: "--worker-id",
    implied_by: Some(super::ImpliedBy {
        what: "a worker id",
        setting: &WORKER_ID,
    }),
    settings: &[&WORKER_ID],
    open: |s| Ok(Box::new(LocalRegistry::from_settings(s)?)),
};

impl LocalRegistry {
    /// The local registry of a registry's settings: the worker id given, in the layout's range.
    pub fn from_settings(settings: &RegistrySettings) -> Result<LocalRegistry, WorkerError> {
        let worker = settings.values.whole(&WORKER_ID).map(|w| w.value).ok_or_else(|| {
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
        settings
            .scope
            .check_worker(settings.layout.worker_bits(), worker, "--worker-id")?;
        settings.scope.ensure_file_mark(&settings.state_dir)?;
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
        KIND
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
        let max = options.layout.max_worker();
        if self.worker > max {
            return Err(WorkerError::OutOfRange {
                worker: self.worker,
                max,
                source_of: "--worker-id".into(),
            });
        }
        let store = LocalStore::new(&self.state_dir, &self.name, self.worker, self.no_wait);
        Ok(Arc::new(LocalWorkerLease(FencedLease::for_options(
            store, options,
        )?)))
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
            &crate::worker::WorkerScope::default(),
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
