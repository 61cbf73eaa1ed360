//! Latency histograms kept in atomics (prometheus-client's takes a lock per observation),
//! encoded as prometheus-client encodes its own.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

use crate::server::route::Route;
use crate::server::status::RequestCounts;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RouteLabels {
    pub(super) route: &'static str,
}

/// Upper bounds of the latency buckets in seconds (requests and segment claims alike).
pub(super) const LATENCY_BOUNDS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0,
];

/// [`LATENCY_BOUNDS`] in nanoseconds, as requests are timed.
pub(super) const LATENCY_BOUNDS_NS: [u64; 16] = [
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
pub(super) fn latency_buckets() -> impl Iterator<Item = f64> {
    LATENCY_BOUNDS.into_iter()
}

/// One route's request latencies: a Prometheus histogram kept in atomics (prometheus-client's
/// takes a lock per observation), encoded exactly as prometheus-client encodes its own.
#[derive(Debug, Default)]
pub(super) struct Latency {
    /// Observations per bucket (not cumulative); the last is above every bound (`+Inf`).
    buckets: [AtomicU64; LATENCY_BOUNDS_NS.len() + 1],
    sum_ns: AtomicU64,
}

impl Latency {
    pub(super) fn observe(&self, ns: u64) {
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
pub(super) struct RouteLatencies(pub(super) [Latency; Route::COUNT]);

/// Latencies kept in atomics, as registered (the registry owns its metrics): one histogram
/// family by route, or one unlabelled histogram (the segment claim latency).
impl RouteLatencies {
    /// Requests over every route as the status page's sampler reads them: how many, and the
    /// latency buckets cumulative.
    pub(super) fn summed(&self) -> RequestCounts {
        let mut requests = RequestCounts::default();
        let mut per_bucket = [0u64; LATENCY_BOUNDS_NS.len() + 1];
        for route in &self.0 {
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
        requests
    }
}

/// family by route, or one unlabelled histogram (the segment claim latency).
#[derive(Debug)]
pub(super) enum SharedLatency {
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
