//! The server's Prometheus metrics, kept and encoded by `prometheus-client`.
//!
//! Counters on the request path are plain atomics behind cached handles (no allocation per
//! request); what describes the generators' state (buffers, steps, the lease, clock rollbacks) is
//! read from them at scrape time by a collector.
//!
//! The files: `latency` (latency histograms kept in atomics) and `collector` (the
//! generators' state read at scrape time).

mod collector;
mod latency;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use self::collector::StateCollector;
use self::latency::{Latency, RouteLatencies, SharedLatency};
use super::route::Route;
use super::status::Sampler;
use crate::segment::{LoadEvent, SegmentGenerator};
use crate::worker::SupervisedGenerator;

/// The statuses the server answers with, counted without a lookup.
const COMMON_STATUSES: [u16; 7] = [200, 400, 401, 404, 500, 503, 408];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    status: u16,
}

/// Tags with their own series in `/metrics` unless set otherwise ([`Metrics::set_tag_limit`]):
/// with about ten lines each, a scrape stays far under 1 MB however many tags there are.
pub const DEFAULT_METRICS_TAGS: usize = 100;

/// Everything `/metrics` reports, and the status page's sampler that reads the same counters.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    /// Handles into `requests` for the usual statuses, by route: no hashing or lock per request.
    common: [[OnceLock<Counter>; COMMON_STATUSES.len()]; Route::COUNT],
    latency: Arc<RouteLatencies>,
    /// Segment claim latencies over every tag.
    load_latency: Arc<Latency>,
    sources: Arc<StateCollector>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    /// Registers every metric; the generators, once attached, are read at each scrape.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("leaf");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route and status",
            requests.clone(),
        );
        let latency = Arc::new(RouteLatencies::default());
        registry.register(
            "http_request_duration_seconds",
            "Time from request to response, by route",
            SharedLatency::ByRoute(latency.clone()),
        );
        let load_latency = Arc::new(Latency::default());
        registry.register(
            "segment_load_duration_seconds",
            "Time one segment claim took (background loads and batch claims), over every tag",
            SharedLatency::One(load_latency.clone()),
        );
        let sources = Arc::new(StateCollector {
            tag_limit: AtomicUsize::new(DEFAULT_METRICS_TAGS),
            ..StateCollector::default()
        });
        registry.register_collector(Box::new(sources.clone()));
        Metrics {
            registry,
            requests,
            latency,
            common: Default::default(),
            load_latency,
            sources,
        }
    }

    /// The generators whose state `/metrics` reports (once; later calls change nothing).
    pub fn attach(
        &self,
        segment: Option<Arc<SegmentGenerator>>,
        snowflake: Option<Arc<SupervisedGenerator>>,
    ) {
        if let Some(s) = segment {
            let _ = self.sources.segment.set(s);
        }
        if let Some(s) = snowflake {
            let _ = self.sources.snowflake.set(s);
        }
    }

    /// How many tags get series of their own (by tag) in `/metrics`: those that need attention
    /// (went backwards, failing, used up) first, then the busiest of the last minute. Every tag
    /// is in the totals whatever the limit; `0` leaves only the totals. Tag labels are what
    /// makes a scrape grow (label cardinality): a million tags with ten series each would be
    /// hundreds of MB per scrape, more than Prometheus takes.
    pub fn set_tag_limit(&self, tags: usize) {
        self.sources.tag_limit.store(tags, Ordering::Relaxed);
    }

    /// Counts one answered request.
    pub fn request(&self, route: Route, status: u16, elapsed: Duration) {
        self.request_ns(
            route,
            status,
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        );
    }

    /// Counts one answered request that took `elapsed_ns` nanoseconds.
    pub(crate) fn request_ns(&self, route: Route, status: u16, elapsed_ns: u64) {
        let labels = || RequestLabels {
            route: route.name(),
            status,
        };
        match COMMON_STATUSES.iter().position(|&s| s == status) {
            Some(i) => self.common[route.index()][i]
                .get_or_init(|| self.requests.get_or_create(&labels()).clone())
                .inc(),
            None => self.requests.get_or_create(&labels()).inc(),
        };
        self.latency.0[route.index()].observe(elapsed_ns);
    }

    /// Counts snowflake IDs issued. (Segment IDs are counted by the generator itself, off the
    /// segments' own counters.)
    pub fn snowflake_issued(&self, n: u64) {
        self.sources
            .snowflake_issued
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Records one segment claim (the segment generator's load observer).
    pub fn segment_load(&self, event: &LoadEvent<'_>) {
        self.load_latency
            .observe(u64::try_from(event.elapsed.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Takes the status page's reading of the counters (once a second; see `status`).
    pub(crate) fn sample(&self) {
        let requests = self.latency.summed();
        self.sources
            .sampler
            .take(requests, self.sources.segment.get().map(|g| &**g));
    }

    /// The status page's sampler.
    pub(crate) fn sampler(&self) -> &Sampler {
        &self.sources.sampler
    }

    /// The Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(8 * 1024);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
