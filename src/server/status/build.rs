//! The report built from the sampler's window, one page of tags and the generators.

use std::time::Instant;

use super::notable::notable_tags;
use super::query::{MAX_LISTING_DEPTH, TagQuery, page_of_tags};
use super::report::{
    AttentionCounts, BufferFill, SegmentStatus, ServerStatus, SnowflakeStatus, StatusReport,
    TagStatus,
};
use super::sampler::{Sampler, TagRates, quantile_ms};
use crate::segment::{MAX_DYNAMIC_STEP, SegmentBufferView, SegmentGenerator, TagHealth};
use crate::worker::SupervisedGenerator;

/// The step Leaf's design note recommends: about ten minutes of IDs at the peak rate.
const RECOMMENDED_SECONDS_OF_IDS: f64 = 600.0;

/// What the report is built from, besides the generators.
pub(crate) struct Inputs {
    pub started: Instant,
    pub ready: bool,
    pub readiness: Option<String>,
    pub open_connections: u64,
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
    /// The report: the server, one page of tags as `query` asks, and snowflake mode.
    pub(crate) fn report(
        &self,
        inputs: Inputs,
        segment: Option<&SegmentGenerator>,
        snowflake: Option<&SupervisedGenerator>,
        query: &TagQuery,
    ) -> StatusReport {
        let (requests_per_s, p50_ms, p99_ms) = {
            let w = self.window.lock().unwrap_or_else(|p| p.into_inner());
            let secs: f64 = w.interval_secs().iter().sum();
            match (w.samples.front(), w.samples.back()) {
                (Some(first), Some(last)) => (
                    if secs > 0.0 {
                        last.1.total.saturating_sub(first.1.total) as f64 / secs
                    } else {
                        0.0
                    },
                    quantile_ms(&first.1, &last.1, 0.5),
                    quantile_ms(&first.1, &last.1, 0.99),
                ),
                _ => (0.0, None, None),
            }
        };
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let segment = segment.map(|g| self.segment_status(g, query));
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
                layout_ends_at_ms: g.layout().last_unix_ms(),
                layout_years_left: layout_years_left(g.layout(), now_ms),
            }
        });
        StatusReport {
            version: env!("CARGO_PKG_VERSION"),
            uptime_s: inputs.started.elapsed().as_secs(),
            ready: inputs.ready,
            readiness: inputs.readiness,
            server: ServerStatus {
                requests_per_s,
                p50_ms,
                p99_ms,
                open_connections: inputs.open_connections,
            },
            segment,
            snowflake,
        }
    }

    fn segment_status(&self, g: &SegmentGenerator, query: &TagQuery) -> SegmentStatus {
        let notable = notable_tags(g, self);
        let attention = AttentionCounts::of(&notable);
        let active = notable.iter().filter(|t| t.rate > 0.0).count() as u64;
        let (page, matched) = page_of_tags(g, &notable, query);
        let w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        let secs = w.interval_secs();
        let tags = page
            .into_iter()
            .filter_map(|(tag, _)| {
                let view = notable
                    .iter()
                    .find(|t| t.tag == tag)
                    .and_then(|t| t.view.clone())
                    .or_else(|| g.view(&tag))?;
                let health = g.health(&view);
                Some(tag_status(view, health, w.rates(&secs, &tag)))
            })
            .collect();
        let listed = matched.min(MAX_LISTING_DEPTH as u64);
        SegmentStatus {
            database: g.describe(),
            tag_count: g.tag_count() as u64,
            buffered: g.buffered() as u64,
            active,
            attention,
            search: query.search.clone(),
            sort: query.sort.name(),
            matched,
            page: query.page as u64,
            per_page: query.per_page as u64,
            pages: listed.div_ceil(query.per_page as u64).max(1),
            tags,
        }
    }
}

/// Years (of 365.25 days) from `now_ms` until the last time `layout` can hold; negative once past.
pub(crate) fn layout_years_left(layout: &crate::snowflake::Layout, now_ms: i64) -> f64 {
    (layout.last_unix_ms() as f64 - now_ms as f64) / (365.25 * 86_400_000.0)
}

fn tag_status(v: SegmentBufferView, health: TagHealth, rates: TagRates) -> TagStatus {
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
    let recommended = ((rates.peak * RECOMMENDED_SECONDS_OF_IDS).ceil() as i64)
        .clamp(table_step, MAX_DYNAMIC_STEP.max(table_step));
    let loaded = v.init_ok;
    let headroom = v.headroom();
    TagStatus {
        state: health.name(),
        ids_per_s: rates.mean,
        peak_per_s: rates.peak,
        history: rates.history,
        step: loaded.then_some(v.step),
        step_reason: v.step_reason,
        table_step: loaded.then_some(v.min_step),
        recommended_step: loaded.then_some(recommended),
        ids_left: headroom.map(|h| h.ids_left.to_string()),
        runs_out_in_s: headroom
            .filter(|_| rates.mean > 0.0)
            .map(|h| h.ids_left as f64 / rates.mean),
        headroom: headroom.map(|h| h.status.as_str()),
        next_ready: v.next_ready,
        loading: v.loading,
        next_load_in_s: (rates.mean > 0.0 && !v.loading).then(|| to_next_load as f64 / rates.mean),
        last_load_ms: v.last_claim_us.map(|us| us as f64 / 1000.0),
        last_error_at_ms: v.last_error_unix_ms,
        last_error: v.last_error,
        buffers,
        tag: v.tag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36: a tag not loaded has no step to show (not `step 0` and `recommended_step 1`),
    /// and a loaded one says how much of its range is left and when it runs out.
    #[test]
    fn tag_status_shows_steps_once_loaded_and_the_range_left() {
        let rates = || TagRates {
            history: vec![1000.0; 3],
            mean: 1000.0,
            peak: 1000.0,
        };
        let idle = tag_status(
            SegmentBufferView::unloaded("fresh"),
            TagHealth::Idle,
            rates(),
        );
        assert_eq!(
            (idle.step, idle.table_step, idle.recommended_step),
            (None, None, None)
        );
        assert_eq!((idle.ids_left, idle.headroom), (None, None));
        let mut v = SegmentBufferView::unloaded("nearly");
        v.init_ok = true;
        v.step = 1000;
        v.min_step = 1000;
        let end = (i64::MAX - 500_000) as u64;
        v.segments[0] = crate::segment::SegmentView {
            value: end - 1000,
            max: end - 1000,
            step: 1000,
        };
        v.segments[1] = crate::segment::SegmentView {
            value: end - 1000,
            max: end,
            step: 1000,
        };
        let health = v.health(false);
        assert_eq!(
            health,
            TagHealth::Low,
            "running out reads as the tag's state"
        );
        let s = tag_status(v, health, rates());
        assert_eq!(s.state, "low");
        assert_eq!(s.step, Some(1000));
        assert_eq!(s.ids_left.as_deref(), Some("500000"));
        assert_eq!(s.headroom, Some("low"));
        assert_eq!(s.runs_out_in_s, Some(500.0));
    }
}
