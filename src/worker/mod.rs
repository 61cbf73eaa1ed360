//! Worker ids: who may issue snowflake IDs with which worker id, and from what time on.
//!
//! Snowflake IDs are unique only if no two live generators share a worker id and no generator
//! reuses a time a predecessor on that worker id used. A [`WorkerRegistry`] hands out a
//! [`WorkerLease`] that guarantees both:
//!
//! - [`LocalRegistry`]: a worker id given by the operator, locked on this machine by a lock and
//!   state file ([`local`]).
//! - [`ZkForeverRegistry`]: Leaf's own ZooKeeper tree (`/snowflake/{name}/forever/{ip}:{port}-{seq}`),
//!   one worker id per identity for ever, with Leaf's weak dependency on ZooKeeper through a local
//!   cache file.
//! - [`ZkLeaseRegistry`]: recyclable worker ids leased through ephemeral nodes, each fenced by a
//!   `reserved_until` time kept in ZooKeeper.
//! - [`crate::db::mysql::MysqlRegistry`]: NotFound9's `leaf_workerid_alloc` table;
//!   [`crate::db::postgres::PostgresRegistry`]: the same table on PostgreSQL.
//! - [`EtcdLeaseRegistry`]: recyclable worker ids leased through etcd leases, each fenced by a
//!   `reserved_until` time kept in etcd, like the ZooKeeper lease.
//!
//! Each backend is a folder holding its kind, its own settings and its `RegistryBackend`
//! constant; [`backends`] hands them to the one list of registries, `crate::registries`, whose
//! doc is the checklist for adding one.
//!
//! The lease is also the generator's [`TimeFence`]: IDs are only issued at times the registry has
//! recorded as reserved. [`WorkerGenerator`] ties a lease and a generator together and stops
//! issuing as soon as the lease says it is no longer safe (a lost ZooKeeper session, say).

mod error;
mod etcd;
pub(crate) mod files;
mod identity;
pub(crate) mod lease;
pub mod local;
mod node;
pub(crate) mod record;
mod registry;
pub mod scope;
pub mod setting;
mod supervised;
mod zookeeper;

use std::sync::Arc;

use crate::snowflake::{
    Clock, IdBlock, Layout, MAX_LEAD_MS, SeqStart, SnowflakeError, SnowflakeGenerator, TimeFence,
};

pub use error::{StoreError, StoreFailure, WorkerError};
pub use etcd::error::EtcdError;
pub use files::StateError;
pub use identity::Identity;
pub use local::{LocalRegistry, LocalWorkerLease};
pub use record::{WorkerRecord, WorkerStatus};
pub use registry::{
    ClockReport, ImpliedBy, Registry, RegistryBackend, RegistryKind, RegistrySettings,
};
pub use scope::{StoreMark, WorkerScope};
pub use supervised::{LeaseStatus, SupervisedGenerator};
pub use zookeeper::cache;
pub use zookeeper::error::ZkError;

pub use zookeeper::forever::ZkForeverRegistry;
pub use zookeeper::lease::ZkLeaseRegistry;
pub use zookeeper::session::ZkOptions;

pub use etcd::lease::EtcdLeaseRegistry;
pub use etcd::options::{DEFAULT_ETCD_LEASE_TTL, EtcdOptions};

/// How often a running worker reports its time (Leaf: every 3 s).
pub const REPORT_INTERVAL_MS: i64 = 3_000;

/// How far ahead of the clock a ZooKeeper or database lease reserves times, in ms.
pub const LEASE_WINDOW_MS: i64 = 3_000;

/// Default largest difference (ms) between this host's clock and its live peers' at first
/// registration.
pub const DEFAULT_MAX_CLOCK_SKEW_MS: i64 = 5_000;

/// Longest wait (ms) for the clock to pass a predecessor's reservation before giving up.
pub const MAX_RESERVATION_WAIT_MS: i64 = 10_000;

/// A held worker id: the generator's [`TimeFence`], plus what the generator must know to resume.
pub trait WorkerLease: TimeFence {
    /// The worker id.
    fn worker(&self) -> u64;
    /// Every time up to and including this one may already have been used on this worker id.
    fn resume_after_ms(&self) -> Option<i64>;
    /// Fails when issuing is no longer safe (lost session, lease taken away).
    fn check(&self) -> Result<(), WorkerError>;
    /// Records the last issued time (`None`: nothing issued) and gives the worker id back.
    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError>;
    /// A short description for logs and `next -v` (`zookeeper lease 3`, ...).
    fn describe(&self) -> String;
    /// The largest lead over the clock a generator on this lease may use: its fence records
    /// times that far ahead before they are issued. Most registries record any time;
    /// forever mode only the lead it was acquired with ([`WorkerRegistry::acquire`]).
    fn max_lead_ms(&self) -> u64 {
        MAX_LEAD_MS
    }
}

/// How a generator on a worker id issues: its layout, where each tick's sequence starts, its
/// clock, and how far ahead of the clock its IDs may run (`--max-lead`). A registry acquires a
/// worker id for generators issuing so ([`WorkerRegistry::acquire`]).
#[derive(Clone)]
pub struct IssueOptions {
    /// The layout IDs are made in (it bounds the worker ids).
    pub layout: Layout,
    /// Where each tick's sequence starts.
    pub seq_start: SeqStart,
    /// The clock (a fake one in tests).
    pub clock: Arc<dyn Clock>,
    /// How far (ms) IDs may run ahead of the clock, at most [`MAX_LEAD_MS`]; 0 never (Leaf).
    pub max_lead_ms: u64,
    /// Unix ms of the last ID this process issued on an earlier lease, if any: a generator on
    /// a new lease (perhaps another worker id) issues only from later ticks, so one server's
    /// IDs keep ascending across the change (a clock stepped back meanwhile is then refused or
    /// waited out as on one lease, never issued from).
    pub issued_after_ms: Option<i64>,
    /// The worker ids this process may hold (its region's, resolved once): a registry leases
    /// only inside them, and a lease's worker id outside them is refused before any ID is made.
    pub scope: WorkerScope,
}

impl IssueOptions {
    /// Leaf's way on `layout`: a random sequence start, the system clock, never ahead of it.
    pub fn new(layout: Layout) -> IssueOptions {
        IssueOptions {
            layout,
            seq_start: SeqStart::Random,
            clock: Arc::new(crate::snowflake::SystemClock),
            max_lead_ms: 0,
            issued_after_ms: None,
            scope: WorkerScope::default(),
        }
    }

    setters! {
        /// The worker ids to issue with (see [`IssueOptions::scope`]).
        scope(scope: WorkerScope) => scope = scope;
        /// Where each tick's sequence starts.
        seq_start(seq_start: SeqStart) => seq_start = seq_start;
        /// The clock.
        clock(clock: Arc<dyn Clock>) => clock = clock;
        /// How far ahead of the clock IDs may run (see
        /// [`crate::snowflake::SnowflakeGeneratorBuilder::max_lead_ms`]).
        max_lead_ms(max_lead_ms: u64) => max_lead_ms = max_lead_ms;
        /// Issues only from ticks after `unix_ms` (see [`IssueOptions::issued_after_ms`]).
        issued_after(unix_ms: Option<i64>) => issued_after_ms = unix_ms;
    }
}

impl std::fmt::Debug for IssueOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssueOptions")
            .field("layout", &self.layout)
            .field("seq_start", &self.seq_start)
            .field("max_lead_ms", &self.max_lead_ms)
            .field("issued_after_ms", &self.issued_after_ms)
            .field("scope", &self.scope)
            .finish()
    }
}

/// Where worker ids come from; `next --snowflake` and `serve` choose one the same way.
pub trait WorkerRegistry: Send + Sync {
    /// Obtains a worker id in `options`' layout, waiting out predecessors' reservations on its
    /// clock. With a lead ([`IssueOptions::max_lead_ms`]) a predecessor's recorded time is waited
    /// out only down to the lead ahead of the clock, since the generator resumes after it anyway;
    /// the lease then records times ahead of the clock before they are issued.
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError>;
}

/// Says why a start waits for a recorded time to pass: at the default verbosity once the wait
/// is long enough to notice (a second or more, e.g. after a run with `--max-lead`), else in the
/// `-v` log only.
pub(crate) fn announce_wait(worker: u64, wait_ms: i64, why: &str) {
    let text = format!(
        "worker id {worker}: waiting {:.1} s for the clock to pass a recorded time: {why}; IDs at earlier times may have been issued",
        wait_ms as f64 / 1000.0
    );
    if wait_ms >= 1000 {
        tracing::warn!("{text}");
    } else {
        tracing::info!("{text}");
    }
}

struct SharedFence(Arc<dyn WorkerLease>);

impl TimeFence for SharedFence {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        self.0.extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        self.0.try_extend(unix_ms)
    }
}

/// A generator bound to a worker lease: checks the lease before each block of IDs and records
/// the last issued time when finished.
pub struct WorkerGenerator {
    lease: Arc<dyn WorkerLease>,
    generator: SnowflakeGenerator,
}

impl WorkerGenerator {
    /// Acquires a worker id from `registry` for `options` and builds a generator on it (a lead
    /// of at most [`MAX_LEAD_MS`]).
    pub fn start(
        registry: &dyn WorkerRegistry,
        options: &IssueOptions,
    ) -> Result<WorkerGenerator, IssueError> {
        if options.max_lead_ms > MAX_LEAD_MS {
            return Err(SnowflakeError::LeadOutOfRange {
                lead_ms: options.max_lead_ms,
                max_ms: MAX_LEAD_MS,
            }
            .into());
        }
        let lease = registry.acquire(options)?;
        Self::on_lease(lease, options)
    }

    /// Builds a generator on a lease already held, acquired for the same lead (with a smaller
    /// one a resumed run may find its start ahead of the clock and refuse it). A lead beyond
    /// [`WorkerLease::max_lead_ms`] is refused, and the lease given back.
    pub fn on_lease(
        lease: Arc<dyn WorkerLease>,
        options: &IssueOptions,
    ) -> Result<WorkerGenerator, IssueError> {
        let supported = lease.max_lead_ms().min(MAX_LEAD_MS);
        if options.max_lead_ms > supported {
            let _ = lease.finish(None);
            return Err(SnowflakeError::LeadOutOfRange {
                lead_ms: options.max_lead_ms,
                max_ms: supported,
            }
            .into());
        }
        // A registry's bug never reaches a generator: its worker id must lie in the scope.
        let in_scope = options.scope.check_worker(
            options.layout.worker_bits(),
            lease.worker(),
            "the generator's worker id",
        );
        if let Err(e) = in_scope {
            let _ = lease.finish(None);
            return Err(e.into());
        }
        let mut builder = SnowflakeGenerator::builder(options.layout, lease.worker())
            .clock(options.clock.clone())
            .seq_start(options.seq_start)
            .max_lead_ms(options.max_lead_ms)
            .fence(Box::new(SharedFence(lease.clone())));
        if let Some(t) = lease.resume_after_ms().max(options.issued_after_ms) {
            builder = builder.resume_after(t);
        }
        let generator = match builder.build() {
            Ok(g) => g,
            Err(e) => {
                let _ = lease.finish(None);
                return Err(e.into());
            }
        };
        Ok(WorkerGenerator { lease, generator })
    }

    /// The worker id.
    pub fn worker(&self) -> u64 {
        self.generator.worker()
    }

    /// The generator (for its layout and last issued time).
    pub fn generator(&self) -> &SnowflakeGenerator {
        &self.generator
    }

    /// The lease.
    pub fn lease(&self) -> &Arc<dyn WorkerLease> {
        &self.lease
    }

    /// Issues up to `max` IDs from one tick, after checking the lease still holds.
    pub fn next_block(&self, max: u64) -> Result<IdBlock, IssueError> {
        self.lease.check()?;
        Ok(self.generator.next_block(max)?)
    }

    /// Like [`WorkerGenerator::next_block`] but never blocks (see
    /// [`SnowflakeGenerator::try_next_block`]): `None` means "call `next_block` where blocking is
    /// fine".
    #[inline]
    pub fn try_next_block(&self, max: u64) -> Option<Result<IdBlock, IssueError>> {
        if let Err(e) = self.lease.check() {
            return Some(Err(e.into()));
        }
        self.generator
            .try_next_block(max)
            .map(|r| r.map_err(IssueError::from))
    }

    /// Records the last issued time and gives the worker id back.
    pub fn finish(&self) -> Result<(), WorkerError> {
        self.lease.finish(self.generator.last_issued_ms())
    }
}

/// Either kind of failure while issuing with a worker lease: the registry's or the generator's.
/// The inner error is also its `source()`, so callers can find it in an error chain.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    /// The registry failed.
    #[error("{0}")]
    Worker(#[source] WorkerError),
    /// The generator failed.
    #[error("{0}")]
    Snowflake(#[source] SnowflakeError),
}

impl From<WorkerError> for IssueError {
    fn from(e: WorkerError) -> Self {
        IssueError::Worker(e)
    }
}

impl From<SnowflakeError> for IssueError {
    fn from(e: SnowflakeError) -> Self {
        IssueError::Snowflake(e)
    }
}

/// This area's registry backends, as the one list of registries (`crate::registries`) takes
/// them; each is declared in its own folder.
pub mod backends {
    pub use super::etcd::BACKEND as ETCD;
    pub use super::local::BACKEND as LOCAL;
    pub use super::zookeeper::{FOREVER as ZK_FOREVER, LEASE as ZK_LEASE};
}
