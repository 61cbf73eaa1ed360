//! Failures to obtain, keep or inspect a worker id: the rules every registry shares
//! ([`WorkerError`]), and each backend's own error type behind one variant
//! ([`WorkerError::Store`]), each saying what to do about it.

use super::StateError;

/// A registry backend's own error (ZooKeeper's, etcd's, MySQL's): each backend keeps its
/// failures and their remedies in its own folder, and they reach callers as
/// [`WorkerError::Store`].
pub trait StoreError: std::error::Error + Send + Sync + 'static {
    /// What to do about it, in one line.
    fn hint(&self) -> &'static str;
    /// Whether what was given is wrong (a setting, an address) rather than the store: the CLI
    /// exits 2 then.
    fn is_usage(&self) -> bool {
        false
    }
    /// Whether a lease that failed its check with this may become usable again by itself (a
    /// ZooKeeper session that is only disconnected can reconnect before it expires).
    fn may_recover(&self) -> bool {
        false
    }
    /// Whether no retry can mend it, only an operator: the store is reached in a way the
    /// registry cannot be safe on (a pooled, shared session). A server gives up on it after a
    /// few attempts rather than retrying for ever.
    fn needs_operator(&self) -> bool {
        false
    }
}

/// A backend's error as [`WorkerError::Store`] carries it.
#[derive(Debug)]
pub struct StoreFailure {
    /// The backend (`ZooKeeper`, `etcd`, `MySQL`).
    pub backend: &'static str,
    error: Box<dyn StoreError>,
}

impl StoreFailure {
    /// Wraps a backend's error.
    pub fn new(backend: &'static str, error: impl StoreError) -> StoreFailure {
        StoreFailure {
            backend,
            error: Box::new(error),
        }
    }

    /// The backend's error, if it is an `E`.
    pub fn get<E: StoreError>(&self) -> Option<&E> {
        let error: &(dyn std::error::Error + 'static) = &*self.error;
        error.downcast_ref::<E>()
    }
}

impl std::fmt::Display for StoreFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for StoreFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.error)
    }
}

/// Failures to obtain, keep or inspect a worker id.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The registry's store failed (ZooKeeper, etcd, a database), said in the backend's own words.
    #[error(transparent)]
    Store(StoreFailure),
    /// A registry setting leafctl cannot use: what is missing or wrong, and what to give.
    #[error("{problem}")]
    Setting {
        /// What is wrong.
        problem: String,
        /// What to give instead.
        hint: String,
    },
    /// The local clock is behind a time recorded for this worker id.
    #[error(
        "the clock is {behind_ms} ms behind the time recorded for worker id {worker} ({recorded_ms} ms, in {source_of}); refusing to start so no ID repeats"
    )]
    ClockBehind {
        /// The worker id.
        worker: u64,
        /// The recorded time.
        recorded_ms: i64,
        /// How far behind the clock is.
        behind_ms: i64,
        /// Where the time was recorded.
        source_of: String,
    },
    /// The local clock differs too much from the live peers' clocks.
    #[error(
        "the clock differs by {diff_ms} ms from the average of {peers} live peer(s) (allowed: {max_ms} ms); refusing to register a new worker"
    )]
    ClockSkew {
        /// Our clock minus the peers' average.
        diff_ms: i64,
        /// How many peers were compared.
        peers: usize,
        /// The threshold.
        max_ms: i64,
    },
    /// A sequence number or id beyond the layout's worker field.
    #[error(
        "worker id {worker} (from {source_of}) is beyond the layout's worker range (0..={max})"
    )]
    OutOfRange {
        /// The worker id.
        worker: u64,
        /// The largest worker id the layout holds.
        max: u64,
        /// Where it came from.
        source_of: String,
    },
    /// Another live process registered the same identity.
    #[error("identity {identity} is already in use by another live process ({path})")]
    IdentityInUse {
        /// `ip:port`.
        identity: String,
        /// What shows the other holder: an ephemeral node, a lock file, a locked row.
        path: String,
    },
    /// A worker id claimed twice: two identities' forever nodes name it (ZooKeeper never gives
    /// two sequential nodes one number, so one was written by hand), or a lease on the same name
    /// holds it.
    #[error(
        "worker id {worker} of {mine} is also claimed by {other}; refusing so two processes never share it"
    )]
    WorkerIdShared {
        /// The worker id.
        worker: u64,
        /// Our node.
        mine: String,
        /// The other claim: another identity's node, or a lease.
        other: String,
    },
    /// Every worker id of the layout is leased.
    #[error("all {count} worker ids under {path} are held")]
    NoFreeWorker {
        /// Where the leases live (`/snowflake/{name}/leases`, `/leafctl/{name}/leases/`).
        path: String,
        /// How many ids the layout has.
        count: u64,
    },
    /// An `--instance` that is not `IP:PORT`.
    #[error("invalid instance {0:?}: expected IP:PORT")]
    InvalidIdentity(String),
    /// No non-loopback IPv4 address to name this host by.
    #[error("no non-loopback IPv4 address found on this host")]
    NoAddress,
    /// The lease was already given up or stopped.
    #[error("worker id {worker} is no longer held: {reason}")]
    Stopped {
        /// The worker id.
        worker: u64,
        /// Why.
        reason: String,
    },
    /// The local lock or state file failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// A region setting, a recorded region or a worker id outside the region's slice refused.
    #[error(transparent)]
    Region(#[from] crate::region::RegionError),
    /// No worker id is held right now (a lost one is being replaced).
    #[error("no worker id is held right now: {reason}")]
    NoLease {
        /// Why: the loss, or the last failed attempt to acquire one.
        reason: String,
    },
}

impl WorkerError {
    /// A setting leafctl cannot use.
    pub fn setting(problem: impl Into<String>, hint: impl Into<String>) -> WorkerError {
        WorkerError::Setting {
            problem: problem.into(),
            hint: hint.into(),
        }
    }

    /// The backend's own error, if this is a store's failure of type `E`.
    pub fn store<E: StoreError>(&self) -> Option<&E> {
        match self {
            WorkerError::Store(f) => f.get::<E>(),
            _ => None,
        }
    }

    /// Whether a lease that failed its check with this error may become usable again by itself.
    pub fn may_recover(&self) -> bool {
        matches!(self, WorkerError::Store(f) if f.error.may_recover())
    }

    /// Whether no retry can mend it: a setting is wrong, or the store is reached in a way the
    /// registry cannot be safe on ([`StoreError::needs_operator`]).
    pub fn needs_operator(&self) -> bool {
        self.is_usage() || matches!(self, WorkerError::Store(f) if f.error.needs_operator())
    }

    /// Whether what was given is wrong (a usage error, exit 2) rather than the world.
    pub fn is_usage(&self) -> bool {
        match self {
            WorkerError::Store(f) => f.error.is_usage(),
            WorkerError::Setting { .. }
            | WorkerError::Region(_)
            | WorkerError::InvalidIdentity(_)
            | WorkerError::NoAddress => true,
            _ => false,
        }
    }

    /// What to do about it, in one line.
    pub fn hint(&self) -> String {
        let hint = match self {
            WorkerError::Store(f) => f.error.hint(),
            WorkerError::Setting { hint, .. } => return hint.clone(),
            WorkerError::Region(e) => return e.hint(),
            WorkerError::ClockBehind { .. } => CLOCK_BEHIND_HINT,
            WorkerError::ClockSkew { .. } => {
                "fix NTP on this host (`leafctl workers doctor` compares clocks), or raise zk.max_clock_skew_ms"
            }
            WorkerError::OutOfRange { .. } => {
                "use a layout with more worker bits, another --name, or reclaim unused worker ids"
            }
            WorkerError::IdentityInUse { .. } => {
                "stop the other process, or give this one another --instance IP:PORT"
            }
            WorkerError::WorkerIdShared { .. } => {
                "a node made by hand: remove the wrong one (`leafctl workers reclaim IP:PORT --yes`); a lease: wait for it to go, or use another --name; or give this process another --instance"
            }
            WorkerError::NoFreeWorker { .. } => {
                "wait for a holder to finish, or `leafctl workers list` and reclaim stale leases"
            }
            WorkerError::InvalidIdentity(_) => "give the instance as IP:PORT",
            WorkerError::NoAddress => "pass --instance IP:PORT",
            WorkerError::Stopped { .. } => "start a new run",
            WorkerError::NoLease { .. } => {
                "retry shortly; a new worker id is acquired once the registry answers"
            }
            WorkerError::State(e) => e.hint(),
        };
        hint.into()
    }
}

/// What to do about a clock behind a recorded time, whichever store recorded it.
const CLOCK_BEHIND_HINT: &str = "check NTP on this host; start again once the clock passes the recorded time (a run with --max-lead may have recorded it ahead of the clock: the same --max-lead continues after it)";

impl StateError {
    /// What to do about it, in one line.
    pub fn hint(&self) -> &'static str {
        match self {
            StateError::InUse { .. } => "drop --no-wait to wait for it, or use another worker id",
            StateError::HolderStopped { .. } => {
                "resume the stopped process (kill -CONT PID, or `fg` in its shell) or end it; its lock goes when it exits"
            }
            StateError::ClockBehind { .. } => CLOCK_BEHIND_HINT,
            StateError::Corrupt { .. } => {
                "inspect the file; if unsure, use another worker id instead of deleting it"
            }
            StateError::Io { .. } => {
                "check the state directory's permissions, or point --state-dir elsewhere"
            }
        }
    }
}
