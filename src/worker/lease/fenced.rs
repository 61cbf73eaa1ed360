//! A held worker id: the protocol's core plus the renewer thread.

use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Guards, LeaseCore, LeaseStore, acquire};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};
use crate::worker::{IssueOptions, WorkerError, WorkerLease, WorkerScope};

/// A held worker id: the protocol plus its renewer thread, which raises the record ahead of
/// need and reports this holder's clock.
pub(crate) struct FencedLease<S: LeaseStore> {
    core: Arc<LeaseCore<S>>,
    renewer: Mutex<Option<(SyncSender<()>, JoinHandle<()>)>>,
}

impl<S: LeaseStore> FencedLease<S> {
    /// A registry's lease on `store` for the generator `options` describes (see
    /// [`FencedLease::acquire`]).
    pub(crate) fn for_generator(
        store: S,
        options: &IssueOptions,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        Ok(Arc::new(FencedLease::for_options(store, options)?))
    }

    /// [`FencedLease::acquire`] with what `options` give: the layout, scope, clock and lead
    /// of the generator the lease is for.
    pub(crate) fn for_options(
        store: S,
        options: &IssueOptions,
    ) -> Result<FencedLease<S>, WorkerError> {
        FencedLease::acquire(
            store,
            &options.layout,
            &options.scope,
            options.clock.clone(),
            options.max_lead_ms,
        )
    }

    /// Claims a worker id from `store` (see [`acquire`]) and starts the renewer.
    pub(crate) fn acquire(
        store: S,
        layout: &Layout,
        scope: &WorkerScope,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<FencedLease<S>, WorkerError> {
        let core = Arc::new(acquire(
            store,
            layout,
            scope,
            clock,
            max_lead_ms,
            Guards::ALL,
        )?);
        let (tx, rx) = mpsc::sync_channel::<()>(1);
        let tick = Duration::from_millis((core.window_ms / 3).max(1) as u64);
        let renewed = core.clone();
        let renewer = std::thread::Builder::new()
            .name("leafctl-lease".into())
            .spawn(move || {
                loop {
                    match rx.recv_timeout(tick) {
                        Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                    renewed.renew_ahead();
                    renewed.report_if_due();
                }
            });
        let renewer = match renewer {
            Ok(handle) => {
                *core.wake.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx.clone());
                Some((tx, handle))
            }
            // Without the thread every reservation is written in line by `extend`.
            Err(e) => {
                tracing::debug!("no lease renewer thread: {e}");
                None
            }
        };
        Ok(FencedLease {
            core,
            renewer: Mutex::new(renewer),
        })
    }

    /// The protocol state (for the store's extra accessors).
    pub(crate) fn core(&self) -> &LeaseCore<S> {
        &self.core
    }

    fn stop_renewer(&self) {
        let taken = self
            .renewer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((tx, handle)) = taken {
            self.core
                .wake
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            drop(tx);
            let _ = handle.join();
        }
    }
}

impl<S: LeaseStore> TimeFence for FencedLease<S> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.core.extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        self.core.try_extend(unix_ms)
    }
}

impl<S: LeaseStore> WorkerLease for FencedLease<S> {
    fn worker(&self) -> u64 {
        self.core.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.core.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        self.core.check()
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        // The renewer first: no renewal may land after the release's exact record.
        self.stop_renewer();
        self.core.finish_core(last_issued_ms)
    }

    fn describe(&self) -> String {
        self.core.describe()
    }
}

impl<S: LeaseStore> Drop for FencedLease<S> {
    fn drop(&mut self) {
        // The core (and with it the claim) goes when the renewer lets go of it.
        self.stop_renewer();
    }
}
