//! The local registry: an operator-chosen worker id, locked on this machine by [`crate::state`].

use std::path::PathBuf;
use std::sync::Arc;

use super::{WorkerError, WorkerLease, WorkerRegistry};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};
use crate::state::LocalWorkerLease;

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
