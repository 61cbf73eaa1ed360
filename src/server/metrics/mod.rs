//! The server's Prometheus metrics, kept and encoded by `prometheus-client`.
//!
//! Counters on the request path are plain atomics behind cached handles (no allocation per
//! request); what describes the generators' state (buffers, steps, the lease, clock rollbacks) is
//! read from them at scrape time by a collector.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
#[cfg(test)]
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use super::route::Route;
use super::status::{AttentionCounts, RequestCounts, Sampler, notable_tags};
use crate::segment::{LoadEvent, SegmentBufferView, SegmentGenerator};
use crate::worker::SupervisedGenerator;

/// The statuses the server answers with, counted without a lookup.
const COMMON_STATUSES: [u16; 7] = [200, 400, 401, 404, 500, 503, 408];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IdLabels {
    mode: &'static str,
    tag: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TagLabels {
    tag: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SegmentLabels {
    tag: String,
    segment: &'static str,
}

/// Upper bounds of the latency buckets in seconds (requests and segment claims alike).
const LATENCY_BOUNDS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0,
];

/// [`LATENCY_BOUNDS`] in nanoseconds, as requests are timed.
const LATENCY_BOUNDS_NS: [u64; 16] = [
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
];

#[cfg(test)]
fn latency_buckets() -> impl Iterator<Item = f64> {
    LATENCY_BOUNDS.into_iter()
}

/// One route's request latencies: a Prometheus histogram kept in atomics (prometheus-client's
/// takes a lock per observation), encoded exactly as prometheus-client encodes its own.
#[derive(Debug, Default)]
struct Latency {
    /// Observations per bucket (not cumulative); the last is above every bound (`+Inf`).
    buckets: [AtomicU64; LATENCY_BOUNDS_NS.len() + 1],
    sum_ns: AtomicU64,
}

impl Latency {
    fn observe(&self, ns: u64) {
        let i = LATENCY_BOUNDS_NS
            .iter()
            .position(|&bound| ns <= bound)
            .unwrap_or(LATENCY_BOUNDS_NS.len());
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Sum (seconds), count and the buckets as prometheus-client's encoder takes them.
    fn snapshot(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let buckets: Vec<(f64, u64)> = LATENCY_BOUNDS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(&self.buckets)
            .map(|(bound, n)| (bound, n.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        (sum, count, buckets)
    }
}

/// Request latencies by route, registered as one histogram family.
#[derive(Debug, Default)]
struct RouteLatencies([Latency; Route::COUNT]);

/// Latencies kept in atomics, as registered (the registry owns its metrics): one histogram
/// family by route, or one unlabelled histogram (the segment claim latency).
#[derive(Debug)]
enum SharedLatency {
    /// Labelled by route (the request latency).
    ByRoute(Arc<RouteLatencies>),
    /// Unlabelled.
    One(Arc<Latency>),
}

impl TypedMetric for SharedLatency {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for SharedLatency {
    fn encode(&self, mut encoder: MetricEncoder) -> fmt::Result {
        match self {
            SharedLatency::ByRoute(latencies) => {
                for route in Route::ALL {
                    let labels = RouteLabels {
                        route: route.name(),
                    };
                    let (sum, count, buckets) = latencies.0[route.index()].snapshot();
                    encoder
                        .encode_family(&labels)?
                        .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
                }
                Ok(())
            }
            SharedLatency::One(latency) => {
                let (sum, count, buckets) = latency.snapshot();
                encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
            }
        }
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
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

    /// Takes the status page's reading of the counters (once a second; see `status.rs`).
    pub(crate) fn sample(&self) {
        let mut requests = RequestCounts::default();
        let mut per_bucket = [0u64; LATENCY_BOUNDS_NS.len() + 1];
        for route in &self.latency.0 {
            for (sum, b) in per_bucket.iter_mut().zip(&route.buckets) {
                *sum += b.load(Ordering::Relaxed);
            }
        }
        let mut cumulative = 0;
        for (bound, n) in LATENCY_BOUNDS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(per_bucket)
        {
            cumulative += n;
            requests.buckets.push((bound, cumulative));
        }
        requests.total = cumulative;
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

/// Reads the generators' state at scrape time.
#[derive(Default)]
struct StateCollector {
    segment: OnceLock<Arc<SegmentGenerator>>,
    snowflake: OnceLock<Arc<SupervisedGenerator>>,
    snowflake_issued: AtomicU64,
    sampler: Sampler,
    tag_limit: AtomicUsize,
}

impl fmt::Debug for StateCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateCollector")
    }
}

fn encode_family<L, M>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    family: &Family<L, M>,
) -> fmt::Result
where
    L: Clone + std::hash::Hash + Eq + EncodeLabelSet + fmt::Debug,
    M: EncodeMetric + prometheus_client::metrics::TypedMetric,
{
    let metric = encoder.encode_descriptor(name, help, None, family.metric_type())?;
    family.encode(metric)
}

fn encode_one(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: &impl EncodeMetric,
) -> fmt::Result {
    let m = encoder.encode_descriptor(name, help, None, metric.metric_type())?;
    metric.encode(m)
}

fn gauge(v: u64) -> ConstGauge {
    ConstGauge::new(i64::try_from(v).unwrap_or(i64::MAX))
}

impl StateCollector {
    /// The tags that get series of their own (see [`Metrics::set_tag_limit`]), with their
    /// snapshots, and how many need attention by why.
    fn reported_tags(
        &self,
        segment: &SegmentGenerator,
    ) -> (Vec<SegmentBufferView>, AttentionCounts) {
        let limit = self.tag_limit.load(Ordering::Relaxed);
        let notable = notable_tags(segment, &self.sampler);
        let attention = AttentionCounts::of(&notable);
        let views = notable
            .into_iter()
            .filter_map(|t| t.view.or_else(|| segment.view(&t.tag)))
            .take(limit)
            .collect();
        (views, attention)
    }
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let issued = Family::<IdLabels, Counter>::default();
        if self.snowflake.get().is_some() {
            issued
                .get_or_create(&IdLabels {
                    mode: "snowflake",
                    tag: String::new(),
                })
                .inc_by(self.snowflake_issued.load(Ordering::Relaxed));
        }
        let reported = self.segment.get().map(|s| self.reported_tags(s));
        if let Some((views, _)) = &reported {
            for v in views {
                issued
                    .get_or_create(&IdLabels {
                        mode: "segment",
                        tag: v.tag.clone(),
                    })
                    .inc_by(v.issued);
            }
        }
        encode_family(
            &mut encoder,
            "ids_issued",
            "IDs handed out, by mode and tag (empty for snowflake; segment tags: those with \
             series of their own, see leaf_segment_tags_reported)",
            &issued,
        )?;
        if let (Some(segment), Some((views, attention))) = (self.segment.get(), reported) {
            let totals = segment.totals();
            encode_one(
                &mut encoder,
                "segment_all_tags_ids_issued",
                "Segment IDs handed out over every tag",
                &ConstCounter::new(totals.issued),
            )?;
            encode_one(
                &mut encoder,
                "segment_all_tags_claims",
                "Segment claims over every tag (background loads and batch claims)",
                &ConstCounter::new(totals.claims),
            )?;
            encode_one(
                &mut encoder,
                "segment_all_tags_claim_failures",
                "Segment claims that failed, over every tag",
                &ConstCounter::new(totals.claim_failures),
            )?;
            encode_one(
                &mut encoder,
                "segment_tags",
                "Tags the server knows (rows of leaf_alloc)",
                &gauge(totals.tags),
            )?;
            encode_one(
                &mut encoder,
                "segment_tags_buffered",
                "Tags with buffers (asked for since start, not dropped as idle)",
                &gauge(totals.buffered),
            )?;
            let needing = Family::<StateLabels, Gauge>::default();
            for (health, n) in attention.by_health() {
                needing
                    .get_or_create(&StateLabels {
                        state: health.name(),
                    })
                    .set(i64::try_from(n).unwrap_or(i64::MAX));
            }
            encode_family(
                &mut encoder,
                "segment_tags_needing_attention",
                "Tags whose claims went backwards, whose last load failed, or used up",
                &needing,
            )?;
            encode_one(
                &mut encoder,
                "segment_tags_reported",
                "Tags with series of their own in this scrape (serve.metrics_tags caps it)",
                &gauge(views.len() as u64),
            )?;
            let loads = Family::<TagLabels, Counter>::default();
            let failures = Family::<TagLabels, Counter>::default();
            let last_load = Family::<TagLabels, Gauge<f64, AtomicU64>>::default();
            let step = Family::<TagLabels, Gauge>::default();
            let left = Family::<SegmentLabels, Gauge>::default();
            let next_ready = Family::<TagLabels, Gauge>::default();
            let loading = Family::<TagLabels, Gauge>::default();
            let range_left = Family::<TagLabels, Gauge>::default();
            let claims_left = Family::<TagLabels, Gauge>::default();
            for v in &views {
                if let Some(h) = super::status::range_headroom(v) {
                    let tag = TagLabels { tag: v.tag.clone() };
                    range_left.get_or_create(&tag).set(h.ids_left);
                    claims_left.get_or_create(&tag).set(h.claims_left);
                }
                let tag = TagLabels { tag: v.tag.clone() };
                loads.get_or_create(&tag).inc_by(v.claims);
                failures.get_or_create(&tag).inc_by(v.claim_failures);
                if let Some(us) = v.last_claim_us {
                    last_load.get_or_create(&tag).set(us as f64 / 1e6);
                }
                step.get_or_create(&tag).set(v.step);
                next_ready.get_or_create(&tag).set(i64::from(v.next_ready));
                loading.get_or_create(&tag).set(i64::from(v.loading));
                let current = v.segments[v.pos & 1];
                let other = v.segments[(v.pos + 1) & 1];
                let remaining = |s: crate::segment::SegmentView| {
                    i64::try_from(s.max.saturating_sub(s.value)).unwrap_or(i64::MAX)
                };
                left.get_or_create(&SegmentLabels {
                    tag: v.tag.clone(),
                    segment: "current",
                })
                .set(remaining(current));
                left.get_or_create(&SegmentLabels {
                    tag: v.tag.clone(),
                    segment: "next",
                })
                .set(if v.next_ready { remaining(other) } else { 0 });
            }
            encode_family(
                &mut encoder,
                "segment_loads",
                "Segment claims in the allocation table (background loads and batch claims), by tag",
                &loads,
            )?;
            encode_family(
                &mut encoder,
                "segment_load_failures",
                "Segment claims that failed, by tag",
                &failures,
            )?;
            encode_family(
                &mut encoder,
                "segment_last_load_seconds",
                "How long the tag's last segment claim took",
                &last_load,
            )?;
            encode_family(
                &mut encoder,
                "segment_step",
                "Size the next dynamic claim starts from, by tag",
                &step,
            )?;
            encode_family(
                &mut encoder,
                "segment_ids_left",
                "IDs left in the current and the loaded next segment, by tag",
                &left,
            )?;
            encode_family(
                &mut encoder,
                "segment_range_ids_left",
                "IDs left in the tag's 63-bit range (9223372036854775807 minus its max_id as of this server's last claim), by tag; divide by the rate of leaf_ids_issued_total to see when it runs out",
                &range_left,
            )?;
            encode_family(
                &mut encoder,
                "segment_range_claims_left",
                "Whole claims of the tag's step left in its range (a claim that does not fit fails), by tag",
                &claims_left,
            )?;
            encode_family(
                &mut encoder,
                "segment_next_ready",
                "1 when the next segment is loaded, by tag",
                &next_ready,
            )?;
            encode_family(
                &mut encoder,
                "segment_loading",
                "1 while a claim for the next segment is under way, by tag",
                &loading,
            )?;
            encode_one(
                &mut encoder,
                "segment_claims_went_backwards",
                "Claims refused because they came back below an earlier claim of the tag (the table lost claims)",
                &ConstCounter::new(segment.guard().refused_total()),
            )?;
        }
        if let Some(snowflake) = self.snowflake.get() {
            let (waited, refused) = snowflake.rollbacks();
            encode_one(
                &mut encoder,
                "snowflake_clock_rollbacks_waited",
                "Small backward clock steps waited out",
                &ConstCounter::new(waited),
            )?;
            encode_one(
                &mut encoder,
                "snowflake_clock_rollbacks_refused",
                "Backward clock steps refused (requests answered 503)",
                &ConstCounter::new(refused),
            )?;
            let status = snowflake.status();
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            encode_one(
                &mut encoder,
                "snowflake_layout_seconds_left",
                "Seconds until the layout's time runs out (its last representable time minus now); no ID can be issued after it",
                &ConstGauge::new(snowflake.layout().last_unix_ms().saturating_sub(now_ms) / 1000),
            )?;
            encode_one(
                &mut encoder,
                "snowflake_worker_id",
                "The worker id held, -1 when none",
                &ConstGauge::new(status.worker.map_or(-1, |w| w as i64)),
            )?;
            encode_one(
                &mut encoder,
                "snowflake_lease_held",
                "1 when a usable worker lease is held",
                &ConstGauge::new(i64::from(status.problem.is_none())),
            )?;
            encode_one(
                &mut encoder,
                "snowflake_lease_acquisitions",
                "Worker ids acquired since start (more than 1 after a lost lease)",
                &ConstCounter::new(status.acquisitions),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_in_nanoseconds_are_the_bounds_in_seconds() {
        for (s, ns) in LATENCY_BOUNDS.iter().zip(LATENCY_BOUNDS_NS) {
            assert_eq!(ns as f64 / 1e9, *s);
        }
    }

    /// The `/metrics` lines of the request latency histogram, sorted; sums to 9 digits.
    fn latency_lines(text: &str) -> Vec<String> {
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| l.contains("http_request_duration_seconds"))
            .map(|l| match l.split_once("_sum{") {
                Some((name, rest)) => {
                    let (labels, v) = rest.rsplit_once(' ').unwrap();
                    format!("{name}_sum{{{labels} {:.9}", v.parse::<f64>().unwrap())
                }
                None => l.to_string(),
            })
            .collect();
        lines.sort();
        lines
    }

    #[test]
    fn latencies_are_encoded_as_prometheus_client_encodes_its_histogram() {
        let observed_ns = [
            0,
            40_000,
            50_000,
            50_001,
            999_999,
            3_000_000,
            1_000_000_000,
            4_999_999_999,
            7_000_000_000,
        ];
        let ours = Metrics::new();
        let mut registry = Registry::with_prefix("leaf");
        let family = Family::<RouteLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(latency_buckets())) as fn() -> Histogram,
        );
        registry.register(
            "http_request_duration_seconds",
            "Time from request to response, by route",
            family.clone(),
        );
        for r in Route::ALL {
            let _ = family.get_or_create(&RouteLabels { route: r.name() });
        }
        for (i, ns) in observed_ns.into_iter().enumerate() {
            let route = if i % 3 == 0 {
                Route::Snowflake
            } else {
                Route::Segment
            };
            ours.request_ns(route, 200, ns);
            family
                .get_or_create(&RouteLabels {
                    route: route.name(),
                })
                .observe(Duration::from_nanos(ns).as_secs_f64());
        }
        let mut theirs = String::new();
        prometheus_client::encoding::text::encode(&mut theirs, &registry).unwrap();
        let want = latency_lines(&theirs);
        assert_eq!(latency_lines(&ours.encode()), want);
        assert!(
            want.contains(
                &"leaf_http_request_duration_seconds_bucket{le=\"0.00005\",route=\"segment\"} 2"
                    .to_string()
            ),
            "{want:#?}"
        );
    }
}
