//! What a registry knows about one worker id, in any registry (ZooKeeper forever or lease,
//! MySQL): the rows `leafctl workers list` prints and `workers reclaim` acts on.

use serde::Serialize;

use super::node::NodeData;
use super::{REPORT_INTERVAL_MS, RegistryKind};

/// Whether a worker id is in use.
///
/// `live` means the same in every registry: someone can issue IDs with this worker id now.
/// Where the registry records who holds an id (a MySQL row's named lock, a lease's ephemeral
/// node) that hold decides; a forever node is also live while its holder reports (Leaf's own
/// servers hold no `temporary` node, so a report within 3 report intervals is their only sign).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerStatus {
    /// Someone can issue with it now: its lock, lease or ephemeral node is held (forever nodes:
    /// or it reported within 3 report intervals).
    Live,
    /// Nobody holds it (forever nodes: nor reported recently).
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
    /// The registry kind that holds it (forever, lease, mysql, etcd).
    pub mode: RegistryKind,
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
    /// A lease-held worker id as a registry's nodes say it: `data`, the id's own node (its
    /// reservation and last report), with `holder`, its holder's node when one is there (who
    /// holds it, and perhaps a later report); `held` is whether a holder's lease or ephemeral
    /// node exists.
    pub(crate) fn of_nodes(
        worker: u64,
        mode: RegistryKind,
        mut data: NodeData,
        holder: Option<NodeData>,
        held: bool,
        now_ms: i64,
        location: String,
    ) -> WorkerRecord {
        if let Some(h) = holder {
            data.ip = h.ip;
            data.port = h.port;
            data.timestamp = data.timestamp.max(h.timestamp);
        }
        let last_seen = (data.timestamp > 0).then_some(data.timestamp);
        WorkerRecord {
            worker,
            identity: if data.ip.is_empty() {
                "-".into()
            } else {
                format!("{}:{}", data.ip, data.port)
            },
            mode,
            last_seen_ms: last_seen,
            reserved_until_ms: data.reserved_until,
            held,
            status: status_of(mode, held, last_seen, now_ms),
            location,
        }
    }

    /// True when someone can issue with it now, so reclaiming it could let two generators share
    /// the id (see [`WorkerStatus::Live`]).
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.held || (self.mode.reports_count() && recent(self.last_seen_ms, now_ms))
    }
}

fn recent(last_seen: Option<i64>, now_ms: i64) -> bool {
    last_seen.is_some_and(|t| now_ms - t <= 3 * REPORT_INTERVAL_MS)
}

/// Status from the facts: clock-ahead beats live beats stale.
pub(crate) fn status_of(
    mode: RegistryKind,
    held: bool,
    last_seen: Option<i64>,
    now_ms: i64,
) -> WorkerStatus {
    match last_seen {
        Some(t) if t > now_ms => WorkerStatus::ClockAhead,
        _ if held => WorkerStatus::Live,
        _ if mode.reports_count() && recent(last_seen, now_ms) => WorkerStatus::Live,
        _ => WorkerStatus::Stale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::backends::{ETCD, ZK_FOREVER, ZK_LEASE};

    // Kinds as their backends declare them.
    const FOREVER: RegistryKind = ZK_FOREVER.kind;
    const LEASE: RegistryKind = ZK_LEASE.kind;
    const ETCD_KIND: RegistryKind = ETCD.kind;

    #[test]
    fn status_prefers_clock_ahead() {
        for mode in [FOREVER, LEASE, ETCD_KIND] {
            assert_eq!(
                status_of(mode, true, Some(2_000), 1_000),
                WorkerStatus::ClockAhead
            );
            assert_eq!(
                status_of(mode, true, Some(1_000), 50_000),
                WorkerStatus::Live
            );
            assert_eq!(
                status_of(mode, false, Some(1_000), 50_000),
                WorkerStatus::Stale
            );
        }
    }

    #[test]
    fn a_fresh_report_is_live_only_where_nothing_is_held() {
        assert_eq!(
            status_of(FOREVER, false, Some(1_000), 5_000),
            WorkerStatus::Live,
            "a Leaf server holds no lock: its report is the sign of life"
        );
        for mode in [LEASE, ETCD_KIND] {
            assert_eq!(
                status_of(mode, false, Some(1_000), 5_000),
                WorkerStatus::Stale,
                "{mode}: nobody holds it, so nobody can issue with it"
            );
        }
    }

    #[test]
    fn is_live_agrees_with_the_status() {
        let now = 100_000;
        for mode in [FOREVER, LEASE, ETCD_KIND] {
            for held in [false, true] {
                for last_seen in [None, Some(now - 1_000), Some(now - 60_000)] {
                    let r = WorkerRecord {
                        worker: 1,
                        identity: "10.0.0.1:8080".into(),
                        mode,
                        last_seen_ms: last_seen,
                        reserved_until_ms: None,
                        held,
                        status: status_of(mode, held, last_seen, now),
                        location: "-".into(),
                    };
                    assert_eq!(
                        r.is_live(now),
                        r.status == WorkerStatus::Live,
                        "{mode} held={held} last_seen={last_seen:?}"
                    );
                }
            }
        }
    }
}
