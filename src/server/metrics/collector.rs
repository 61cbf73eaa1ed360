//! Reads the generators' state at scrape time.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};

use crate::segment::{SegmentBufferView, SegmentGenerator};
use crate::server::status::{AttentionCounts, Sampler, notable_tags};
use crate::worker::SupervisedGenerator;

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
    pub(super) segment: &'static str,
}

/// Reads the generators' state at scrape time.
#[derive(Default)]
pub(super) struct StateCollector {
    pub(super) segment: OnceLock<Arc<SegmentGenerator>>,
    pub(super) snowflake: OnceLock<Arc<SupervisedGenerator>>,
    pub(super) snowflake_issued: AtomicU64,
    pub(super) sampler: Sampler,
    pub(super) tag_limit: AtomicUsize,
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
    /// The tags that get series of their own (see [`Metrics::set_tag_limit`](super::Metrics::set_tag_limit)), with their
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
            encode_segment(&mut encoder, segment, &views, &attention)?;
        }
        if let Some(snowflake) = self.snowflake.get() {
            encode_snowflake(&mut encoder, snowflake)?;
        }
        Ok(())
    }
}

/// The segment generator's series: totals, the tags that need attention, and each reported
/// tag's buffers and headroom.
fn encode_segment(
    encoder: &mut DescriptorEncoder,
    segment: &SegmentGenerator,
    views: &[SegmentBufferView],
    attention: &AttentionCounts,
) -> fmt::Result {
    encode_segment_totals(encoder, segment, attention)?;
    encode_one(
        encoder,
        "segment_tags_reported",
        "Tags with series of their own in this scrape (serve.metrics_tags caps it)",
        &gauge(views.len() as u64),
    )?;
    PerTag::of(views).encode(encoder)?;
    encode_one(
        encoder,
        "segment_claims_went_backwards",
        "Claims refused because they came back below an earlier claim of the tag (the table lost claims)",
        &ConstCounter::new(segment.guard().refused_total()),
    )
}

/// The series over every tag: IDs, claims and failures, tags known and buffered, and the tags
/// needing attention by why.
fn encode_segment_totals(
    encoder: &mut DescriptorEncoder,
    segment: &SegmentGenerator,
    attention: &AttentionCounts,
) -> fmt::Result {
    let totals = segment.totals();
    encode_one(
        encoder,
        "segment_all_tags_ids_issued",
        "Segment IDs handed out over every tag",
        &ConstCounter::new(totals.issued),
    )?;
    encode_one(
        encoder,
        "segment_all_tags_claims",
        "Segment claims over every tag (background loads and batch claims)",
        &ConstCounter::new(totals.claims),
    )?;
    encode_one(
        encoder,
        "segment_all_tags_claim_failures",
        "Segment claims that failed, over every tag",
        &ConstCounter::new(totals.claim_failures),
    )?;
    encode_one(
        encoder,
        "segment_all_tags_load_waits",
        "Requests for one segment ID that found none in memory and waited for a claim",
        &ConstCounter::new(totals.load_waits),
    )?;
    encode_one(
        encoder,
        "segment_tags",
        "Tags the server knows (rows of leaf_alloc)",
        &gauge(totals.tags),
    )?;
    encode_one(
        encoder,
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
        encoder,
        "segment_tags_needing_attention",
        "Tags whose claims went backwards, whose last load failed, or used up",
        &needing,
    )
}

/// The series of each reported tag, filled from its view, in the order they are encoded.
#[derive(Default)]
struct PerTag {
    loads: Family<TagLabels, Counter>,
    failures: Family<TagLabels, Counter>,
    last_load: Family<TagLabels, Gauge<f64, AtomicU64>>,
    step: Family<TagLabels, Gauge>,
    left: Family<SegmentLabels, Gauge>,
    range_left: Family<TagLabels, Gauge>,
    claims_left: Family<TagLabels, Gauge>,
    next_ready: Family<TagLabels, Gauge>,
    loading: Family<TagLabels, Gauge>,
}

impl PerTag {
    /// The families of `views`' tags.
    fn of(views: &[SegmentBufferView]) -> PerTag {
        let f = PerTag::default();
        for v in views {
            let tag = TagLabels { tag: v.tag.clone() };
            if let Some(h) = v.headroom() {
                f.range_left.get_or_create(&tag).set(h.ids_left);
                f.claims_left.get_or_create(&tag).set(h.claims_left);
            }
            f.loads.get_or_create(&tag).inc_by(v.claims);
            f.failures.get_or_create(&tag).inc_by(v.claim_failures);
            if let Some(us) = v.last_claim_us {
                f.last_load.get_or_create(&tag).set(us as f64 / 1e6);
            }
            f.step.get_or_create(&tag).set(v.step);
            f.next_ready
                .get_or_create(&tag)
                .set(i64::from(v.next_ready));
            f.loading.get_or_create(&tag).set(i64::from(v.loading));
            let remaining = |s: crate::segment::SegmentView| {
                i64::try_from(s.max.saturating_sub(s.value)).unwrap_or(i64::MAX)
            };
            let (current, other) = (v.segments[v.pos & 1], v.segments[(v.pos + 1) & 1]);
            let labels = |segment| SegmentLabels {
                tag: v.tag.clone(),
                segment,
            };
            f.left
                .get_or_create(&labels("current"))
                .set(remaining(current));
            f.left.get_or_create(&labels("next")).set(if v.next_ready {
                remaining(other)
            } else {
                0
            });
        }
        f
    }

    fn encode(&self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        let counters: [(&str, &str, &Family<TagLabels, Counter>); 2] = [
            (
                "segment_loads",
                "Segment claims in the allocation table (background loads and batch claims), by tag",
                &self.loads,
            ),
            (
                "segment_load_failures",
                "Segment claims that failed, by tag",
                &self.failures,
            ),
        ];
        for (name, help, family) in counters {
            encode_family(encoder, name, help, family)?;
        }
        encode_family(
            encoder,
            "segment_last_load_seconds",
            "How long the tag's last segment claim took",
            &self.last_load,
        )?;
        encode_family(
            encoder,
            "segment_step",
            "Size the next dynamic claim starts from, by tag",
            &self.step,
        )?;
        encode_family(
            encoder,
            "segment_ids_left",
            "IDs left in the current and the loaded next segment, by tag",
            &self.left,
        )?;
        let gauges: [(&str, &str, &Family<TagLabels, Gauge>); 4] = [
            (
                "segment_range_ids_left",
                "IDs left in the tag's 63-bit range (9223372036854775807 minus its max_id as of this server's last claim), by tag; divide by the rate of leaf_ids_issued_total to see when it runs out",
                &self.range_left,
            ),
            (
                "segment_range_claims_left",
                "Whole claims of the tag's step left in its range (a claim that does not fit fails), by tag",
                &self.claims_left,
            ),
            (
                "segment_next_ready",
                "1 when the next segment is loaded, by tag",
                &self.next_ready,
            ),
            (
                "segment_loading",
                "1 while a claim for the next segment is under way, by tag",
                &self.loading,
            ),
        ];
        for (name, help, family) in gauges {
            encode_family(encoder, name, help, family)?;
        }
        Ok(())
    }
}

/// The snowflake generator's series: clock rollbacks, the layout's time left, the worker lease.
fn encode_snowflake(
    encoder: &mut DescriptorEncoder,
    snowflake: &SupervisedGenerator,
) -> fmt::Result {
    let (waited, refused) = snowflake.rollbacks();
    encode_one(
        encoder,
        "snowflake_clock_rollbacks_waited",
        "Small backward clock steps waited out",
        &ConstCounter::new(waited),
    )?;
    encode_one(
        encoder,
        "snowflake_clock_rollbacks_refused",
        "Backward clock steps refused (requests answered 503)",
        &ConstCounter::new(refused),
    )?;
    let status = snowflake.status();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    encode_one(
        encoder,
        "snowflake_layout_seconds_left",
        "Seconds until the layout's time runs out (its last representable time minus now); no ID can be issued after it",
        &ConstGauge::new(snowflake.layout().last_unix_ms().saturating_sub(now_ms) / 1000),
    )?;
    encode_one(
        encoder,
        "snowflake_worker_id",
        "The worker id held, -1 when none",
        &ConstGauge::new(status.worker.map_or(-1, |w| w as i64)),
    )?;
    encode_one(
        encoder,
        "snowflake_lease_held",
        "1 when a usable worker lease is held",
        &ConstGauge::new(i64::from(status.problem.is_none())),
    )?;
    encode_one(
        encoder,
        "snowflake_lease_acquisitions",
        "Worker ids acquired since start (more than 1 after a lost lease)",
        &ConstCounter::new(status.acquisitions),
    )?;
    Ok(())
}
