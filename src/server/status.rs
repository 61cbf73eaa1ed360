//! The status page (`GET /`): what each tag and the worker lease are doing, at a glance.
//!
//! Rates and latencies come from the counters `/metrics` already keeps: once a second the
//! [`Sampler`] reads the service's own OpenMetrics text and keeps the last minute of samples, so
//! the page adds nothing to the request path. The same report is served as JSON
//! (`?format=json` or `Accept: application/json`) and drawn by [`PAGE`], one HTML file with an
//! inline script and stylesheet that fetches the JSON every few seconds.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::segment::{MAX_DYNAMIC_STEP, SegmentBufferView, SegmentGenerator};
use crate::worker::SupervisedGenerator;

/// Samples kept: one a second for a minute, plus the one the first delta starts from.
const WINDOW: usize = 61;

/// The step Leaf's design note recommends: about ten minutes of IDs at the peak rate.
const RECOMMENDED_SECONDS_OF_IDS: f64 = 600.0;

/// What one reading of the counters found.
#[derive(Debug, Default, Clone)]
struct Sample {
    at: Option<Instant>,
    requests: u64,
    /// Request latency buckets summed over routes: `(upper bound in seconds, count)`.
    buckets: Vec<(f64, u64)>,
    /// IDs issued per segment tag.
    ids: HashMap<String, u64>,
}

/// The last minute of counter readings.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    samples: Mutex<VecDeque<Sample>>,
}

/// A sample's labels: `(name, value)` pairs.
type Labels = Vec<(String, String)>;

/// One OpenMetrics sample line: the metric name, its labels and its value.
fn parse_line(line: &str) -> Option<(&str, Labels, f64)> {
    let (name, rest) = match line.find('{') {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => {
            let (name, value) = line.split_once(' ')?;
            return Some((name, Vec::new(), value.trim().parse().ok()?));
        }
    };
    let mut labels = Vec::new();
    let mut chars = rest.char_indices();
    let mut key = String::new();
    let end = loop {
        let (i, c) = chars.next()?;
        match c {
            '}' => break i,
            ',' => {}
            '=' => {
                // A quoted value with \" \\ \n escapes.
                if chars.next()?.1 != '"' {
                    return None;
                }
                let mut value = String::new();
                loop {
                    match chars.next()?.1 {
                        '"' => break,
                        '\\' => match chars.next()?.1 {
                            'n' => value.push('\n'),
                            c => value.push(c),
                        },
                        c => value.push(c),
                    }
                }
                labels.push((std::mem::take(&mut key), value));
            }
            c => key.push(c),
        }
    };
    let value = rest[end + 1..].trim().split(' ').next()?.parse().ok()?;
    Some((name, labels, value))
}

fn label<'a>(labels: &'a [(String, String)], key: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl Sampler {
    /// Reads the counters out of `/metrics` text and keeps the sample.
    pub(crate) fn take(&self, metrics_text: &str) {
        let mut s = Sample {
            at: Some(Instant::now()),
            ..Sample::default()
        };
        let mut buckets: Vec<(f64, u64)> = Vec::new();
        for line in metrics_text.lines().filter(|l| !l.starts_with('#')) {
            let Some((name, labels, value)) = parse_line(line) else {
                continue;
            };
            match name {
                "leaf_http_requests_total" => s.requests += value as u64,
                "leaf_http_request_duration_seconds_bucket" => {
                    let le = match label(&labels, "le") {
                        Some("+Inf") => f64::INFINITY,
                        Some(v) => v.parse().unwrap_or(f64::INFINITY),
                        None => continue,
                    };
                    match buckets.iter_mut().find(|(b, _)| *b == le) {
                        Some((_, c)) => *c += value as u64,
                        None => buckets.push((le, value as u64)),
                    }
                }
                "leaf_ids_issued_total" if label(&labels, "mode") == Some("segment") => {
                    if let Some(tag) = label(&labels, "tag") {
                        s.ids.insert(tag.to_string(), value as u64);
                    }
                }
                _ => {}
            }
        }
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.buckets = buckets;
        let mut samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        samples.push_back(s);
        while samples.len() > WINDOW {
            samples.pop_front();
        }
    }

    fn window(&self) -> Vec<Sample> {
        self.samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// Per second between consecutive samples of a counter.
fn per_second(samples: &[Sample], read: impl Fn(&Sample) -> u64) -> Vec<f64> {
    samples
        .windows(2)
        .map(|w| {
            let secs = match (w[0].at, w[1].at) {
                (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
                _ => 0.0,
            };
            let delta = read(&w[1]).saturating_sub(read(&w[0])) as f64;
            if secs > 0.0 { delta / secs } else { 0.0 }
        })
        .collect()
}

/// The mean over the window.
fn mean(rates: &[f64]) -> f64 {
    if rates.is_empty() {
        0.0
    } else {
        rates.iter().sum::<f64>() / rates.len() as f64
    }
}

/// A latency quantile (ms) of the requests answered during the window, interpolated within its
/// bucket; `None` before any request.
fn quantile_ms(first: &Sample, last: &Sample, q: f64) -> Option<f64> {
    let counts: Vec<(f64, u64)> = last
        .buckets
        .iter()
        .map(|(le, c)| {
            let before = first
                .buckets
                .iter()
                .find(|(b, _)| b == le)
                .map_or(0, |(_, c)| *c);
            (*le, c.saturating_sub(before))
        })
        .collect();
    let total = counts.last()?.1;
    if total == 0 {
        return None;
    }
    let want = q * total as f64;
    let mut lower = (0.0, 0u64);
    for &(le, cumulative) in &counts {
        if cumulative as f64 >= want {
            if le.is_infinite() {
                return Some(lower.0 * 1000.0);
            }
            let span = (cumulative - lower.1) as f64;
            let frac = if span > 0.0 {
                (want - lower.1 as f64) / span
            } else {
                1.0
            };
            return Some((lower.0 + (le - lower.0) * frac) * 1000.0);
        }
        lower = (le, cumulative);
    }
    None
}

/// The status report: `GET /?format=json`.
#[derive(Debug, Serialize)]
pub struct StatusReport {
    /// leafctl's version.
    pub version: &'static str,
    /// Seconds since the server started.
    pub uptime_s: u64,
    /// Whether every enabled mode can issue now (as `/readyz`).
    pub ready: bool,
    /// What cannot issue, when not ready.
    pub readiness: Option<String>,
    /// Requests, latency and connections.
    pub server: ServerStatus,
    /// Segment mode, when enabled.
    pub segment: Option<SegmentStatus>,
    /// Snowflake mode, when enabled.
    pub snowflake: Option<SnowflakeStatus>,
}

/// The HTTP side.
#[derive(Debug, Serialize)]
pub struct ServerStatus {
    /// Requests answered per second over the last minute.
    pub requests_per_s: f64,
    /// Median latency (ms) over the last minute, once requests came.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency (ms) over the last minute.
    pub p99_ms: Option<f64>,
    /// Connections open now.
    pub open_connections: u64,
}

/// Segment mode.
#[derive(Debug, Serialize)]
pub struct SegmentStatus {
    /// The database, password removed.
    pub database: String,
    /// Every tag, busiest first.
    pub tags: Vec<TagStatus>,
}

/// One tag.
#[derive(Debug, Serialize)]
pub struct TagStatus {
    /// The tag.
    pub tag: String,
    /// `ok`, `exhausted`, `went_backwards` or `failing` (its last load failed).
    pub state: &'static str,
    /// IDs issued per second over the last minute.
    pub ids_per_s: f64,
    /// IDs per second, second by second over the last minute, oldest first.
    pub history: Vec<f64>,
    /// The busiest second of the last minute.
    pub peak_per_s: f64,
    /// The step the next dynamic claim starts from.
    pub step: i64,
    /// Why the step is what it is.
    pub step_reason: &'static str,
    /// The table's step.
    pub table_step: i64,
    /// About ten minutes of IDs at the peak rate, within the table's step and 1,000,000.
    pub recommended_step: i64,
    /// The current and the next segment: how many IDs each holds and how many are used.
    pub buffers: [BufferFill; 2],
    /// Whether the next segment is loaded.
    pub next_ready: bool,
    /// Whether a load is under way.
    pub loading: bool,
    /// Seconds until the next load at the current rate (`None` when idle).
    pub next_load_in_s: Option<f64>,
    /// How long the last claim took (ms).
    pub last_load_ms: Option<f64>,
    /// The last load failure, while it is the last outcome.
    pub last_error: Option<String>,
    /// When it happened (Unix ms).
    pub last_error_at_ms: Option<i64>,
}

/// One segment of a tag's double buffer.
#[derive(Debug, Serialize)]
pub struct BufferFill {
    /// Whether IDs come from this segment now.
    pub current: bool,
    /// IDs it holds.
    pub size: u64,
    /// IDs handed out from it.
    pub used: u64,
}

/// Snowflake mode.
#[derive(Debug, Serialize)]
pub struct SnowflakeStatus {
    /// The worker id held, if any.
    pub worker: Option<u64>,
    /// The registry and lease (`ZooKeeper lease /snowflake/...`).
    pub registry: Option<String>,
    /// `held`, or why no usable lease is held.
    pub lease: String,
    /// How far `reserved_until` is ahead of the clock (ms).
    pub reserved_ahead_ms: Option<i64>,
    /// `--max-lead` in use (ms).
    pub max_lead_ms: u64,
    /// Clock rollbacks waited out.
    pub rollbacks_waited: u64,
    /// Clock rollbacks refused.
    pub rollbacks_refused: u64,
    /// The last ID's time (Unix ms).
    pub last_id_ms: Option<i64>,
}

/// What the report is built from, besides the generators.
pub(crate) struct Inputs<'a> {
    pub started: Instant,
    pub ready: bool,
    pub readiness: Option<String>,
    pub open_connections: u64,
    pub last_loads: &'a HashMap<String, f64>,
}

fn fill(v: &SegmentBufferView, i: usize) -> BufferFill {
    let s = v.segments[i];
    let start = s.max.saturating_sub(s.step);
    let current = v.pos & 1 == i;
    let loaded = v.init_ok && (current || v.next_ready);
    BufferFill {
        current,
        size: if loaded {
            s.max.saturating_sub(start)
        } else {
            0
        },
        used: if loaded {
            s.value
                .saturating_sub(start)
                .min(s.max.saturating_sub(start))
        } else {
            0
        },
    }
}

impl Sampler {
    /// The report, from the window of samples and the generators' state now.
    pub(crate) fn report(
        &self,
        inputs: Inputs<'_>,
        segment: Option<&SegmentGenerator>,
        snowflake: Option<&SupervisedGenerator>,
    ) -> StatusReport {
        let samples = self.window();
        let empty = Sample::default();
        let first = samples.first().unwrap_or(&empty);
        let last = samples.last().unwrap_or(&empty);
        let requests = per_second(&samples, |s| s.requests);
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let segment = segment.map(|g| {
            let refusals = g.guard().refusals();
            let mut tags: Vec<TagStatus> = g
                .views()
                .into_iter()
                .map(|v| {
                    let history = per_second(&samples, |s| s.ids.get(&v.tag).copied().unwrap_or(0));
                    let rate = mean(&history);
                    let peak = history.iter().copied().fold(0.0, f64::max);
                    let buffers = [fill(&v, 0), fill(&v, 1)];
                    let cur = &buffers[v.pos & 1];
                    let other = &buffers[(v.pos + 1) & 1];
                    // The next load starts once 10% of the segment after the current one is used.
                    let to_next_load = if v.next_ready {
                        cur.size.saturating_sub(cur.used) + other.size / 10
                    } else {
                        (cur.size / 10).saturating_sub(cur.used)
                    };
                    let table_step = v.min_step.max(1);
                    let recommended = ((peak * RECOMMENDED_SECONDS_OF_IDS).ceil() as i64)
                        .clamp(table_step, MAX_DYNAMIC_STEP.max(table_step));
                    let state = if v.exhausted {
                        "exhausted"
                    } else if refusals.iter().any(|r| r.tag == v.tag) {
                        "went_backwards"
                    } else if v.last_error.is_some() {
                        "failing"
                    } else {
                        "ok"
                    };
                    TagStatus {
                        state,
                        ids_per_s: rate,
                        peak_per_s: peak,
                        history,
                        step: v.step,
                        step_reason: v.step_reason,
                        table_step: v.min_step,
                        recommended_step: recommended,
                        next_ready: v.next_ready,
                        loading: v.loading,
                        next_load_in_s: (rate > 0.0 && !v.loading)
                            .then(|| to_next_load as f64 / rate),
                        last_load_ms: inputs.last_loads.get(&v.tag).copied(),
                        last_error_at_ms: v.last_error_unix_ms,
                        last_error: v.last_error,
                        buffers,
                        tag: v.tag,
                    }
                })
                .collect();
            tags.sort_by(|a, b| b.ids_per_s.total_cmp(&a.ids_per_s).then(a.tag.cmp(&b.tag)));
            SegmentStatus {
                database: g.describe(),
                tags,
            }
        });
        let snowflake = snowflake.map(|g| {
            let st = g.status();
            let (waited, refused) = g.rollbacks();
            SnowflakeStatus {
                worker: st.worker,
                registry: st.lease,
                lease: st.problem.unwrap_or_else(|| "held".into()),
                // Before the first ID the fence holds a sentinel, not a time.
                reserved_ahead_ms: st
                    .reserved_until_ms
                    .filter(|r| (0..i64::MAX).contains(r))
                    .map(|r| r.saturating_sub(now_ms)),
                max_lead_ms: st.max_lead_ms,
                rollbacks_waited: waited,
                rollbacks_refused: refused,
                last_id_ms: st.last_issued_ms,
            }
        });
        StatusReport {
            version: env!("CARGO_PKG_VERSION"),
            uptime_s: inputs.started.elapsed().as_secs(),
            ready: inputs.ready,
            readiness: inputs.readiness,
            server: ServerStatus {
                requests_per_s: mean(&requests),
                p50_ms: quantile_ms(first, last, 0.5),
                p99_ms: quantile_ms(first, last, 0.99),
                open_connections: inputs.open_connections,
            },
            segment,
            snowflake,
        }
    }
}

/// The page: static HTML with an inline stylesheet and script (no external asset, no
/// framework). It fetches `/?format=json` every 3 s, asks once for the bearer token when the
/// server wants one (kept in this tab's sessionStorage only), and writes every value with
/// `textContent`, so a tag is never read as HTML.
pub const PAGE: &str = include_str!("status.html");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_parse_with_escaped_labels() {
        let (name, labels, value) =
            parse_line(r#"leaf_ids_issued_total{mode="segment",tag="a\"b\\c"} 42"#).unwrap();
        assert_eq!(name, "leaf_ids_issued_total");
        assert_eq!(label(&labels, "tag"), Some("a\"b\\c"));
        assert_eq!(value, 42.0);
        assert_eq!(parse_line("up 1").unwrap().2, 1.0);
        assert!(parse_line("garbage{").is_none());
    }

    #[test]
    fn rates_and_quantiles_come_from_counter_deltas() {
        let s = Sampler::default();
        let text = |n: u64, fast: u64, slow: u64| {
            format!(
                "leaf_http_requests_total{{route=\"segment\",status=\"200\"}} {n}\n\
                 leaf_http_request_duration_seconds_bucket{{le=\"0.001\",route=\"segment\"}} {fast}\n\
                 leaf_http_request_duration_seconds_bucket{{le=\"0.01\",route=\"segment\"}} {}\n\
                 leaf_http_request_duration_seconds_bucket{{le=\"+Inf\",route=\"segment\"}} {}\n\
                 leaf_ids_issued_total{{mode=\"segment\",tag=\"t\"}} {n}\n",
                fast + slow,
                fast + slow
            )
        };
        s.take(&text(0, 0, 0));
        std::thread::sleep(std::time::Duration::from_millis(100));
        s.take(&text(100, 98, 2));
        let w = s.window();
        let rates = per_second(&w, |x| x.ids.get("t").copied().unwrap_or(0));
        assert_eq!(rates.len(), 1);
        assert!(rates[0] > 500.0 && rates[0] < 1100.0, "{rates:?}");
        let p50 = quantile_ms(&w[0], &w[1], 0.5).unwrap();
        assert!(p50 > 0.0 && p50 <= 1.0, "{p50}");
        let p99 = quantile_ms(&w[0], &w[1], 0.99).unwrap();
        assert!(p99 > 1.0 && p99 <= 10.0, "{p99}");
    }
}
