use prometheus_client::metrics::histogram::Histogram;

use super::latency::{LATENCY_BOUNDS, LATENCY_BOUNDS_NS, RouteLabels, latency_buckets};
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
