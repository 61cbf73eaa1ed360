//! The admin view behind `leafctl workers` on ZooKeeper: listing, reclaiming, comparing clocks.

use std::collections::{BTreeMap, BTreeSet};

use super::forever::ZkForeverRegistry;
use super::lease::ZkLeaseRegistry;
use super::session::{ZkOptions, ZkSession, parse_forever_child};
use crate::worker::node::NodeData;
use crate::worker::record::{WorkerRecord, status_of};
use crate::worker::registry::average;
use crate::worker::{ClockReport, Registry, RegistryKind};
use crate::worker::{StoreMark, WorkerError, WorkerScope};

/// Inspection and repair of a name's worker ids (`leafctl workers`), for both ZooKeeper
/// registries: a name's tree holds forever nodes and leases side by side.
pub(crate) struct ZkAdmin {
    session: ZkSession,
    mark: StoreMark,
    opts: ZkOptions,
}

impl ZkAdmin {
    /// Connects for inspection.
    pub(crate) fn connect(opts: &ZkOptions) -> Result<ZkAdmin, WorkerError> {
        let session = ZkSession::connect(opts)?;
        // Forever nodes' numbers map to worker ids by the region the tree was recorded for
        // (this process's when the tree has no mark).
        let mark = opts.read_mark(&session)?;
        let mut opts = opts.clone();
        opts.scope = mark.scope_or(opts.scope);
        Ok(ZkAdmin {
            session,
            mark,
            opts: opts.clone(),
        })
    }

    /// Every worker id under `/snowflake/{name}`: forever nodes and leases, by worker id.
    pub(crate) fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        let root = self.opts.root();
        let s = &self.session;
        let mut out = Vec::new();
        let temporary: BTreeSet<String> = s
            .children(&format!("{root}/temporary"))?
            .into_iter()
            .collect();
        for child in s.children(&format!("{root}/forever"))? {
            let Some((identity, seq)) = parse_forever_child(&child) else {
                continue;
            };
            let path = format!("{root}/forever/{child}");
            let Some((data, _)) = s.get(&path)? else {
                continue;
            };
            let last_seen = NodeData::parse(&data).ok().map(|d| d.timestamp);
            let held = temporary.contains(&identity);
            out.push(WorkerRecord {
                worker: self.opts.forever_worker(seq)?,
                identity,
                mode: super::FOREVER_KIND,
                last_seen_ms: last_seen,
                reserved_until_ms: None,
                held,
                status: status_of(super::FOREVER_KIND, held, last_seen, now_ms),
                location: path,
            });
        }
        let leases: BTreeSet<u64> = s
            .children(&format!("{root}/leases"))?
            .iter()
            .filter_map(|c| c.parse().ok())
            .collect();
        let mut workers: BTreeMap<u64, String> = BTreeMap::new();
        for child in s.children(&format!("{root}/workers"))? {
            if let Ok(id) = child.parse::<u64>() {
                workers.insert(id, format!("{root}/workers/{child}"));
            }
        }
        for id in &leases {
            workers
                .entry(*id)
                .or_insert_with(|| format!("{root}/workers/{id}"));
        }
        for (id, path) in workers {
            let held = leases.contains(&id);
            let data = match s.get(&path)? {
                Some((bytes, _)) => NodeData::parse(&bytes).unwrap_or_default(),
                None => NodeData::default(),
            };
            let holder = if held {
                s.get(&format!("{root}/leases/{id}"))?
                    .and_then(|(bytes, _)| NodeData::parse(&bytes).ok())
            } else {
                None
            };
            out.push(WorkerRecord::of_nodes(
                id,
                super::LEASE_KIND,
                data,
                holder,
                held,
                now_ms,
                path,
            ));
        }
        out.sort_by_key(|r| (r.mode, r.worker));
        Ok(out)
    }

    /// Frees a worker id: deletes a lease's ephemeral node (its `reserved_until` stays) or a
    /// forever node (with its ephemeral `temporary` node). Returns what was deleted.
    pub(crate) fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let root = self.opts.root();
        let mut deleted = Vec::new();
        let paths = match record.mode {
            super::LEASE_KIND => vec![format!("{root}/leases/{}", record.worker)],
            super::FOREVER_KIND => vec![
                format!("{root}/temporary/{}", record.identity),
                record.location.clone(),
            ],
            // Another registry's record: nothing of it is in ZooKeeper.
            _ => Vec::new(),
        };
        for p in paths {
            if self.session.delete(&p, None)? {
                deleted.push(p);
            }
        }
        Ok(deleted)
    }

    /// The clock offsets of the holders live now (their clock minus ZooKeeper's when they last
    /// wrote their node: the lease's own node or its worker node, whichever is newer), however
    /// long ago that was. A holder that exited is no peer, though it wrote a moment ago; a
    /// forever node without leafctl's temporary node counts while it reported within 9 s (Leaf's
    /// own servers hold nothing else).
    fn live_holders_offsets(&self, now_ms: i64) -> Result<Vec<i64>, WorkerError> {
        let root = self.opts.root();
        let mut out = Vec::new();
        for r in self.list(now_ms)?.iter().filter(|r| r.is_live(now_ms)) {
            let mut paths = vec![r.location.clone()];
            if r.mode == super::LEASE_KIND {
                paths.push(format!("{root}/leases/{}", r.worker));
            }
            let mut newest: Option<(i64, i64)> = None;
            for path in paths {
                if let Some((data, stat)) = self.session.get(&path)?
                    && let Ok(d) = NodeData::parse(&data)
                    && d.timestamp > 0
                    && newest.is_none_or(|(mtime, _)| stat.mtime > mtime)
                {
                    newest = Some((stat.mtime, d.timestamp - stat.mtime));
                }
            }
            out.extend(newest.map(|(_, offset)| offset));
        }
        Ok(out)
    }

    /// Compares our clock with ZooKeeper's and with the live holders' reports.
    pub(crate) fn clock_report(
        &self,
        now_ms: &dyn Fn() -> i64,
    ) -> Result<ClockReport, WorkerError> {
        let root = self.opts.root();
        let (before, zk_ms, after) = self.session.server_time(&root, now_ms)?;
        let ours = before + (after - before) / 2;
        let peers = self.live_holders_offsets(ours)?;
        let zk_offset = ours - zk_ms;
        // Ours relative to ZooKeeper, minus theirs relative to ZooKeeper.
        let peer_offset = average(&peers).map(|avg| zk_offset - avg);
        let max = self.opts.max_clock_skew_ms;
        Ok(ClockReport {
            store: "ZooKeeper",
            store_offset_ms: Some(zk_offset),
            round_trip_ms: after - before,
            peers: peers.len(),
            peer_offset_ms: peer_offset,
            max_skew_ms: max,
            ok: zk_offset.abs() <= max && peer_offset.is_none_or(|o| o.abs() <= max),
        })
    }
}

/// What reclaiming `record` does in a ZooKeeper tree, in words.
fn reclaim_plan(record: &WorkerRecord) -> String {
    match record.mode {
        super::LEASE_KIND => format!(
            "delete the lease on worker id {} ({}); its reserved_until stays, so the next holder still starts after it",
            record.worker, record.location
        ),
        _ => format!(
            "delete the forever node {} of {} (worker id {}); ZooKeeper never reuses sequence numbers, so this only tidies the tree",
            record.location, record.identity, record.worker
        ),
    }
}

/// Both ZooKeeper registries inspect the same tree, forever nodes and leases alike.
macro_rules! zookeeper_registry {
    ($registry:ty, $kind:expr) => {
        impl Registry for $registry {
            fn kind(&self) -> RegistryKind {
                $kind
            }

            fn place(&self) -> String {
                self.options().root()
            }

            fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
                ZkAdmin::connect(self.options())?.list(now_ms)
            }

            fn reclaim_plan(&self, record: &WorkerRecord) -> Option<String> {
                Some(reclaim_plan(record))
            }

            fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
                ZkAdmin::connect(self.options())?.reclaim(record)
            }

            fn clock_report(
                &self,
                now_ms: &dyn Fn() -> i64,
            ) -> Result<Option<ClockReport>, WorkerError> {
                ZkAdmin::connect(self.options())?
                    .clock_report(now_ms)
                    .map(Some)
            }

            fn mark(&self) -> Result<Option<StoreMark>, WorkerError> {
                Ok(Some(ZkAdmin::connect(self.options())?.mark))
            }

            fn foreign_issuer(
                &self,
                record: &WorkerRecord,
                scope: &WorkerScope,
                slice: &std::ops::Range<u64>,
                now_ms: i64,
            ) -> Option<(u64, String)> {
                leaf_server_outside(record, scope, slice, now_ms)
            }
        }
    };
}

/// A live forever node without leafctl's temporary node is Leaf's own (Java) server: it knows
/// no regions and issues with its node's number as the worker id, so outside the first slice
/// (region 0's, from worker id 0) or past it, it issues another scope's ids. `(the id it issues
/// with, why)`.
fn leaf_server_outside(
    rec: &WorkerRecord,
    scope: &WorkerScope,
    slice: &std::ops::Range<u64>,
    now_ms: i64,
) -> Option<(u64, String)> {
    let size = slice.end - slice.start;
    let n = rec.worker.checked_sub(slice.start)?;
    let outside = rec.mode == super::FOREVER_KIND
        && !rec.held
        && rec.is_live(now_ms)
        && (slice.start != 0 || n >= size);
    outside.then(|| {
        (
            n,
            format!(
                "{} reports on forever node {} without leafctl's temporary node: a Leaf server that knows no regions, issuing with worker id {n} (its node's number), outside {scope}'s worker ids {} to {}; run only leafctl on a region's forever tree (Leaf's own servers are safe only in region 0, below {size} nodes); a leafctl holder that exited less than 9 s ago looks the same: run doctor again to tell",
                rec.identity,
                rec.location,
                slice.start,
                slice.end - 1
            ),
        )
    })
}

zookeeper_registry!(ZkForeverRegistry, super::FOREVER_KIND);
zookeeper_registry!(ZkLeaseRegistry, super::LEASE_KIND);
