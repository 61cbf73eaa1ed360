//! The sampler: once a second it reads the request counters and the tags that issued IDs since
//! its last look, keeping a minute of figures for those tags only.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use crate::segment::SegmentGenerator;

/// Samples kept: one a second for a minute, plus the one the first interval starts from.
const WINDOW: usize = 61;

/// Requests as the sampler reads them: how many were answered, and the latency buckets summed
/// over routes (`(upper bound in seconds, cumulative count)`, ascending, `+Inf` last).
#[derive(Debug, Default, Clone)]
pub(crate) struct RequestCounts {
    pub total: u64,
    pub buckets: Vec<(f64, u64)>,
}

/// The last minute of readings; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    pub(super) window: Mutex<Window>,
}

#[derive(Debug, Default)]
pub(super) struct Window {
    /// When each reading was taken, and the request counters then; oldest first.
    pub(super) samples: VecDeque<(Instant, RequestCounts)>,
    /// Per tag that issued IDs within the window: IDs issued in each interval between
    /// readings, newest last, aligned with the window's last intervals.
    pub(super) tags: HashMap<Box<str>, VecDeque<u64>>,
}

/// A tag's figures over the window.
#[derive(Debug, Default, Clone)]
pub(super) struct TagRates {
    /// IDs per second in each interval, oldest first (zeros before the tag moved).
    pub(super) history: Vec<f64>,
    /// IDs per second over the window.
    pub(super) mean: f64,
    /// The busiest interval.
    pub(super) peak: f64,
}

impl Window {
    /// Seconds each interval between readings lasted, oldest first.
    pub(super) fn interval_secs(&self) -> Vec<f64> {
        self.samples
            .iter()
            .zip(self.samples.iter().skip(1))
            .map(|(a, b)| b.0.duration_since(a.0).as_secs_f64())
            .collect()
    }

    pub(super) fn rates(&self, secs: &[f64], tag: &str) -> TagRates {
        let Some(series) = self.tags.get(tag) else {
            return TagRates {
                history: vec![0.0; secs.len()],
                ..TagRates::default()
            };
        };
        let pad = secs.len().saturating_sub(series.len());
        let history: Vec<f64> = secs
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let n = i.checked_sub(pad).and_then(|j| series.get(j)).copied();
                match n {
                    Some(n) if s > 0.0 => n as f64 / s,
                    _ => 0.0,
                }
            })
            .collect();
        let total_secs: f64 = secs.iter().sum();
        TagRates {
            mean: if total_secs > 0.0 {
                series.iter().sum::<u64>() as f64 / total_secs
            } else {
                0.0
            },
            peak: history.iter().copied().fold(0.0, f64::max),
            history,
        }
    }
}

impl Sampler {
    /// Takes one reading: the request counters, and the tags that issued IDs since the last.
    pub(crate) fn take(&self, requests: RequestCounts, segment: Option<&SegmentGenerator>) {
        let mut moved: Vec<(Box<str>, u64)> = Vec::new();
        if let Some(g) = segment {
            g.drain_moved(|tag, ids| moved.push((tag.into(), ids)));
        }
        let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        w.samples.push_back((Instant::now(), requests));
        while w.samples.len() > WINDOW {
            w.samples.pop_front();
        }
        let intervals = w.samples.len().saturating_sub(1);
        if intervals == 0 {
            return; // the first reading starts the first interval
        }
        for series in w.tags.values_mut() {
            series.push_back(0);
        }
        for (tag, ids) in moved {
            let series = w.tags.entry(tag).or_default();
            if series.is_empty() {
                series.push_back(0);
            }
            if let Some(last) = series.back_mut() {
                *last = last.saturating_add(ids);
            }
        }
        // A tag quiet for the whole window is forgotten: the window follows what moves.
        w.tags.retain(|_, series| {
            while series.len() > intervals {
                series.pop_front();
            }
            series.iter().any(|&n| n > 0)
        });
    }

    /// The tags that issued IDs within the window, busiest first, with their rates (IDs/s).
    pub(crate) fn busiest(&self) -> Vec<(String, f64)> {
        let w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        let secs = w.interval_secs();
        let mut tags: Vec<(String, f64)> = w
            .tags
            .keys()
            .map(|t| (t.to_string(), w.rates(&secs, t).mean))
            .collect();
        tags.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        tags
    }
}

/// A latency quantile (ms) of the requests answered between two readings, interpolated within
/// its bucket; `None` before any request.
pub(super) fn quantile_ms(first: &RequestCounts, last: &RequestCounts, q: f64) -> Option<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(total: u64, fast: u64) -> RequestCounts {
        RequestCounts {
            total,
            buckets: vec![(0.001, fast), (0.01, total), (f64::INFINITY, total)],
        }
    }

    #[test]
    fn rates_and_quantiles_come_from_counter_deltas() {
        let s = Sampler::default();
        s.take(counts(0, 0), None);
        std::thread::sleep(std::time::Duration::from_millis(100));
        s.take(counts(100, 98), None);
        let w = s.window.lock().unwrap();
        let (first, last) = (&w.samples[0].1, &w.samples[1].1);
        let p50 = quantile_ms(first, last, 0.5).unwrap();
        assert!(p50 > 0.0 && p50 <= 1.0, "{p50}");
        let p99 = quantile_ms(first, last, 0.99).unwrap();
        assert!(p99 > 1.0 && p99 <= 10.0, "{p99}");
    }

    #[test]
    fn a_tag_is_rated_while_it_moves_and_forgotten_after_a_quiet_window() {
        let mut w = Window::default();
        let t0 = Instant::now();
        for i in 0..3u64 {
            w.samples.push_back((
                t0 + std::time::Duration::from_secs(i),
                RequestCounts::default(),
            ));
        }
        w.tags.insert("t".into(), VecDeque::from([10, 30]));
        let secs = w.interval_secs();
        let r = w.rates(&secs, "t");
        assert_eq!(r.history, vec![10.0, 30.0]);
        assert_eq!(r.peak, 30.0);
        assert!((r.mean - 20.0).abs() < 1e-9, "{}", r.mean);
        w.tags.insert("late".into(), VecDeque::from([4]));
        assert_eq!(
            w.rates(&secs, "late").history,
            vec![0.0, 4.0],
            "padded to the window"
        );
        assert_eq!(w.rates(&secs, "none").history, vec![0.0, 0.0]);
    }
}
