//! The status report's types: what `GET /?format=json` answers.

use serde::Serialize;

use super::notable::NotableTag;
use crate::segment::TagHealth;

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
    /// Every tag the server knows.
    pub tag_count: u64,
    /// Tags with buffers (asked for since start and not dropped as idle).
    pub buffered: u64,
    /// Tags that issued IDs in the last minute.
    pub active: u64,
    /// Tags whose last load failed, used up, and gone backwards.
    pub attention: AttentionCounts,
    /// The search the listing was narrowed by (a part of the tag, any case), if any.
    pub search: Option<String>,
    /// How the listing is sorted: `busiest` (tags that need attention, then by rate, then by
    /// name) or `name`.
    pub sort: &'static str,
    /// Tags that match the search (all of them without one).
    pub matched: u64,
    /// This page (from 1), its size, and how many pages the listing has (within
    /// [`MAX_LISTING_DEPTH`](super::MAX_LISTING_DEPTH)).
    pub page: u64,
    /// Tags per page.
    pub per_page: u64,
    /// Pages of the listing.
    pub pages: u64,
    /// The tags of this page.
    pub tags: Vec<TagStatus>,
}

/// How many tags need attention, by why.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttentionCounts {
    /// Their last load failed.
    pub failing: u64,
    /// Used up.
    pub exhausted: u64,
    /// Refused because a claim came back below an earlier one.
    pub went_backwards: u64,
}

impl AttentionCounts {
    /// How many of `tags` need attention, by the health the segment room gave each (the status
    /// page and `/metrics` count alike).
    pub(crate) fn of(tags: &[NotableTag]) -> AttentionCounts {
        let mut counts = AttentionCounts::default();
        for t in tags {
            match t.health {
                TagHealth::Failing => counts.failing += 1,
                TagHealth::Exhausted => counts.exhausted += 1,
                TagHealth::WentBackwards => counts.went_backwards += 1,
                TagHealth::Low | TagHealth::Ok | TagHealth::Idle => {}
            }
        }
        counts
    }

    /// Each count with the health it counts (whose name labels it in `/metrics`).
    pub(crate) fn by_health(self) -> [(TagHealth, u64); 3] {
        [
            (TagHealth::WentBackwards, self.went_backwards),
            (TagHealth::Failing, self.failing),
            (TagHealth::Exhausted, self.exhausted),
        ]
    }
}

/// One tag.
#[derive(Debug, Serialize)]
pub struct TagStatus {
    /// The tag.
    pub tag: String,
    /// `ok`, `low` (running out of its range: see `headroom`), `idle` (nothing loaded),
    /// `exhausted`, `went_backwards` or `failing` (its last load failed).
    pub state: &'static str,
    /// IDs issued per second over the last minute.
    pub ids_per_s: f64,
    /// IDs per second, second by second over the last minute, oldest first.
    pub history: Vec<f64>,
    /// The busiest second of the last minute.
    pub peak_per_s: f64,
    /// The step the next dynamic claim starts from (`None` until a segment was loaded).
    pub step: Option<i64>,
    /// Why the step is what it is.
    pub step_reason: &'static str,
    /// The table's step (`None` until a segment was loaded).
    pub table_step: Option<i64>,
    /// About ten minutes of IDs at the peak rate, within the table's step and 1,000,000
    /// (`None` until a segment was loaded).
    pub recommended_step: Option<i64>,
    /// IDs left in the tag's range: 9223372036854775807 minus its max_id as of this server's
    /// last claim, as a decimal string (`None` until a segment was loaded).
    pub ids_left: Option<String>,
    /// Seconds until the range runs out at the last minute's rate (`None` when idle or not
    /// loaded).
    pub runs_out_in_s: Option<f64>,
    /// `ok`, `low` (fewer than 1,000 claims of the step left), `last` (less than one step) or
    /// `exhausted`, as `leafctl tag show` says (`None` until a segment was loaded).
    pub headroom: Option<&'static str>,
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
    /// The last time the layout can hold (Unix ms): after it no ID can be issued.
    pub layout_ends_at_ms: i64,
    /// Years from now until then (365.25-day years).
    pub layout_years_left: f64,
}
