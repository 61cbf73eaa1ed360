//! What a registry knows about one worker id, in any registry (ZooKeeper forever or lease,
//! MySQL): the rows `leafctl workers list` prints and `workers reclaim` acts on.

use serde::Serialize;

use super::REPORT_INTERVAL_MS;

/// A worker id's mode, as `workers list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerMode {
    /// Leaf's persistent sequential node.
    Forever,
    /// A leased, recyclable id.
    Lease,
    /// A row of `leaf_workerid_alloc`.
    Mysql,
    /// A leased, recyclable id in etcd.
    Etcd,
}

impl std::fmt::Display for WorkerMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WorkerMode::Forever => "forever",
            WorkerMode::Lease => "lease",
            WorkerMode::Mysql => "mysql",
            WorkerMode::Etcd => "etcd",
        })
    }
}

/// Whether a worker id is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerStatus {
    /// Reported within 3 report intervals, or holding a lease / ephemeral node.
    Live,
    /// Not heard from recently.
    Stale,
    /// Its recorded time is ahead of our clock.
    ClockAhead,
}

impl std::fmt::Display for WorkerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WorkerStatus::Live => "live",
            WorkerStatus::Stale => "stale",
            WorkerStatus::ClockAhead => "clock-ahead",
        })
    }
}

/// One worker id as a registry knows it.
#[derive(Debug, Clone)]
pub struct WorkerRecord {
    /// The worker id.
    pub worker: u64,
    /// `ip:port` of its (last) holder.
    pub identity: String,
    /// Registry mode.
    pub mode: WorkerMode,
    /// Last reported time (the holder's clock), Unix ms.
    pub last_seen_ms: Option<i64>,
    /// Lease mode: the reservation bound.
    pub reserved_until_ms: Option<i64>,
    /// A lease or ephemeral node is held right now.
    pub held: bool,
    /// live / stale / clock-ahead.
    pub status: WorkerStatus,
    /// The node (or row) it lives in.
    pub location: String,
}

impl WorkerRecord {
    /// True when reclaiming it could let two generators share the id.
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.held
            || self
                .last_seen_ms
                .is_some_and(|t| now_ms - t <= 3 * REPORT_INTERVAL_MS)
    }
}

/// Status from the facts: clock-ahead beats live beats stale.
pub(crate) fn status_of(held: bool, last_seen: Option<i64>, now_ms: i64) -> WorkerStatus {
    match last_seen {
        Some(t) if t > now_ms => WorkerStatus::ClockAhead,
        Some(t) if now_ms - t <= 3 * REPORT_INTERVAL_MS => WorkerStatus::Live,
        _ if held => WorkerStatus::Live,
        _ => WorkerStatus::Stale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_prefers_clock_ahead() {
        assert_eq!(
            status_of(true, Some(2_000), 1_000),
            WorkerStatus::ClockAhead
        );
        assert_eq!(status_of(false, Some(1_000), 5_000), WorkerStatus::Live);
        assert_eq!(status_of(false, Some(1_000), 50_000), WorkerStatus::Stale);
        assert_eq!(status_of(true, Some(1_000), 50_000), WorkerStatus::Live);
    }
}
