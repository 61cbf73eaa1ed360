//! Leaf's own ZooKeeper tree ("forever" mode): one worker id per `ip:port`, never recycled.
//!
//! - `/snowflake/{name}/forever/{ip}:{port}-{seq:010}`: persistent sequential; the sequence number
//!   is the worker id (with a region, the first worker id of its slice plus the number; a
//!   number past the slice is refused); data `{"ip","port","timestamp"}` re-written every 3 s.
//! - `/snowflake/{name}/temporary/{ip}:{port}`: ephemeral while a process runs (the design's
//!   `leaf_temporary`), so a second live process with the same identity refuses to start.
//! - A local cache file ([`super::cache`]) lets a known identity start while ZooKeeper is down.
//!
//! With a lead over the clock ([`crate::worker::IssueOptions::max_lead_ms`]) the node's timestamp
//! is raised to cover every time reserved ahead of the clock before IDs at those times are issued, so Leaf's
//! own start-up check on this identity (timestamp ahead of its clock: refuse) and ours both hold
//! back until the clock has passed them. Without ZooKeeper the lead is not used.

//!
//! The files: `register` (finding or registering this identity's node, and waiting out
//! predecessors) and `lease` (the worker id held, its reports and its fence).

mod lease;
mod register;

use crate::worker::lease::leasable;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};

pub use lease::ZkForeverLease;

use self::lease::Inner;
use self::register::check_range;
use super::cache::WorkerCache;
use super::error::ZkError;
use super::session::{ZkOptions, ZkSession};
use crate::worker::{IssueOptions, WorkerError, WorkerLease, WorkerRegistry};

/// Leaf-compatible registry: reuses this identity's node or creates one.
pub struct ZkForeverRegistry {
    opts: ZkOptions,
}

impl ZkForeverRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: ZkOptions) -> ZkForeverRegistry {
        ZkForeverRegistry { opts }
    }

    /// The options it was made with.
    pub fn options(&self) -> &ZkOptions {
        &self.opts
    }
}

impl WorkerRegistry for ZkForeverRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let (layout, clock, max_lead_ms) =
            (&options.layout, options.clock.clone(), options.max_lead_ms);
        let lead = max_lead_ms.min(i64::MAX as u64) as i64;
        let ids = leasable(layout, &self.opts.scope)?;
        let (cache_file, cached) = self.open_cache()?;
        let reg = match ZkSession::connect(&self.opts) {
            Ok(s) => self.register(s, &ids, clock.as_ref(), lead)?,
            Err(e) => match e.store::<ZkError>() {
                Some(ZkError::Unreachable { hosts, reason }) => {
                    let why = (hosts.clone(), reason.clone());
                    self.start_from_cache(&cache_file, cached.as_ref(), clock.as_ref(), lead, why)?
                }
                _ => return Err(e),
            },
        };
        let from = cache_file.path().display().to_string();
        check_range(reg.worker, layout.max_worker(), &from)?;
        // A cache written before the scope was set (ZooKeeper down) names its old worker id.
        (self.opts.scope).check_worker(layout.worker_bits(), reg.worker, &from)?;
        let (resume_after, issued_below) =
            self.wait_out_predecessors(&reg, cached.as_ref(), &cache_file, clock.as_ref(), lead)?;
        // Step 4: the cache records the worker id before any ID is issued with it.
        let cache = WorkerCache {
            name: self.opts.name.clone(),
            identity: self.opts.identity.to_string(),
            worker_id: reg.worker,
            timestamp: reg.node_ms.max(clock.now_ms()),
            issued_below_ms: issued_below,
            clean: cached
                .as_ref()
                .is_some_and(|c| c.clean && c.worker_id == reg.worker),
        };
        cache_file.write(&cache)?;
        // Step 5: the lease, with its reporter thread.
        let inner = Arc::new(Inner {
            worker: reg.worker,
            identity: self.opts.identity.clone(),
            node_path: reg.node_path,
            temp_path: self.temp_path(),
            session: Mutex::new(reg.session),
            cache_file,
            cache: Mutex::new(cache),
            clock,
            finished: Mutex::new(false),
            opts: self.opts.clone(),
            conflict: std::sync::atomic::AtomicBool::new(false),
            max_lead_ms: lead,
            node_floor: AtomicI64::new(reg.node_ms),
        });
        Ok(Arc::new(ZkForeverLease::start(inner, resume_after)))
    }
}
