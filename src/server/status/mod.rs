//! The status page (`GET /`): what each tag and the worker lease are doing, at a glance.
//!
//! Once a second the [`Sampler`] reads the request counters (atomics the request path bumps
//! anyway) and asks the segment generator which tags issued IDs since its last look
//! ([`SegmentGenerator::drain_moved`]), keeping a minute of figures for those tags only: its
//! work follows what moves, not how many tags there are. The report is served as JSON
//! (`?format=json` or `Accept: application/json`) one page of tags at a time, searched, sorted
//! and paged on the server ([`TagQuery`]), and drawn by [`PAGE`], one HTML file with an inline
//! script and stylesheet that fetches the JSON every few seconds.

use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::segment::{MAX_DYNAMIC_STEP, SegmentBufferView, SegmentGenerator, TagHealth};
use crate::worker::SupervisedGenerator;

/// Samples kept: one a second for a minute, plus the one the first interval starts from.
const WINDOW: usize = 61;

/// The step Leaf's design note recommends: about ten minutes of IDs at the peak rate.
const RECOMMENDED_SECONDS_OF_IDS: f64 = 600.0;

/// Tags per page of the status listing unless the request says otherwise.
pub const DEFAULT_PER_PAGE: usize = 50;
/// Most tags a page holds (with a minute of history each, under 1 MB of JSON).
pub const MAX_PER_PAGE: usize = 200;
/// How deep a listing pages: the first 10,000 tags of it. Beyond, a search narrows it; each
/// page costs a pass over the tag names and memory for this many names at most.
pub const MAX_LISTING_DEPTH: usize = 10_000;

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
    window: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    /// When each reading was taken, and the request counters then; oldest first.
    samples: VecDeque<(Instant, RequestCounts)>,
    /// Per tag that issued IDs within the window: IDs issued in each interval between
    /// readings, newest last, aligned with the window's last intervals.
    tags: HashMap<Box<str>, VecDeque<u64>>,
}

/// A tag's figures over the window.
#[derive(Debug, Default, Clone)]
struct TagRates {
    /// IDs per second in each interval, oldest first (zeros before the tag moved).
    history: Vec<f64>,
    /// IDs per second over the window.
    mean: f64,
    /// The busiest interval.
    peak: f64,
}

impl Window {
    /// Seconds each interval between readings lasted, oldest first.
    fn interval_secs(&self) -> Vec<f64> {
        self.samples
            .iter()
            .zip(self.samples.iter().skip(1))
            .map(|(a, b)| b.0.duration_since(a.0).as_secs_f64())
            .collect()
    }

    fn rates(&self, secs: &[f64], tag: &str) -> TagRates {
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

/// The tags worth showing first, in order: those that need attention (went backwards, failing,
/// used up, then by name), then those that issued IDs in the last minute, busiest first (and
/// those that did since the sampler last looked). Found without visiting the other tags; the
/// status page and `/metrics` both start from it.
pub(crate) fn notable_tags(g: &SegmentGenerator, sampler: &Sampler) -> Vec<NotableTag> {
    let mut rates: HashMap<String, f64> = sampler.busiest().into_iter().collect();
    for tag in g.moved_tags() {
        rates.entry(tag).or_insert(0.0);
    }
    let mut troubled: Vec<NotableTag> = g
        .troubled()
        .into_iter()
        .map(|view| NotableTag {
            health: g.health(&view),
            rate: rates.get(&view.tag).copied().unwrap_or(0.0),
            tag: view.tag.clone(),
            view: Some(view),
        })
        .collect();
    troubled.sort_by(|a, b| a.health.cmp(&b.health).then_with(|| a.tag.cmp(&b.tag)));
    let seen: HashSet<String> = troubled.iter().map(|t| t.tag.clone()).collect();
    let mut busy: Vec<NotableTag> = rates
        .into_iter()
        .filter(|(tag, _)| !seen.contains(tag))
        .map(|(tag, rate)| NotableTag {
            tag,
            health: TagHealth::Ok,
            rate,
            view: None,
        })
        .collect();
    busy.sort_by(|a, b| b.rate.total_cmp(&a.rate).then_with(|| a.tag.cmp(&b.tag)));
    troubled.extend(busy);
    troubled
}

/// One of [`notable_tags`].
#[derive(Debug, Clone)]
pub(crate) struct NotableTag {
    pub tag: String,
    pub health: TagHealth,
    /// IDs per second over the last minute.
    pub rate: f64,
    /// Its snapshot, when it was taken to judge it.
    pub view: Option<SegmentBufferView>,
}

/// How the status listing is chosen: `?q=...&page=...&per_page=...&sort=busiest|name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagQuery {
    /// Only tags containing this text, in any case.
    pub search: Option<String>,
    /// The page, from 1.
    pub page: usize,
    /// Tags per page, 1..=[`MAX_PER_PAGE`].
    pub per_page: usize,
    /// The order.
    pub sort: TagSort,
}

impl Default for TagQuery {
    fn default() -> Self {
        TagQuery {
            search: None,
            page: 1,
            per_page: DEFAULT_PER_PAGE,
            sort: TagSort::Busiest,
        }
    }
}

/// The order of the status listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSort {
    /// Tags that need attention first, then by IDs per second, then by name.
    Busiest,
    /// By name.
    Name,
}

impl TagSort {
    /// As written in the query string.
    pub fn name(self) -> &'static str {
        match self {
            TagSort::Busiest => "busiest",
            TagSort::Name => "name",
        }
    }
}

impl TagQuery {
    /// Tags before this page in the listing.
    fn skip(&self) -> usize {
        self.page.saturating_sub(1).saturating_mul(self.per_page)
    }

    /// Checks the page stays within [`MAX_LISTING_DEPTH`]; the message says what to do.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_PER_PAGE).contains(&self.per_page) {
            return Err(format!(
                "per_page must be from 1 to {MAX_PER_PAGE}, not {}",
                self.per_page
            ));
        }
        if self.page == 0 {
            return Err("page counts from 1".into());
        }
        if self.skip().saturating_add(self.per_page) > MAX_LISTING_DEPTH {
            return Err(format!(
                "the status listing pages through the first {MAX_LISTING_DEPTH} tags; narrow it \
                 with a search (q=PART_OF_THE_TAG), or list every tag with `leafctl tag list`"
            ));
        }
        Ok(())
    }

    fn matches(&self, tag: &str) -> bool {
        match &self.search {
            None => true,
            Some(q) => contains_ignoring_case(tag, q),
        }
    }
}

/// Whether `hay` contains `needle`, ASCII letters compared in any case.
fn contains_ignoring_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// The smallest names a pass over every tag offers, kept in a bounded heap (memory for `keep`
/// names whatever the number of tags).
struct SmallestNames {
    keep: usize,
    heap: BinaryHeap<Box<str>>,
}

impl SmallestNames {
    /// Whether `tag` would be kept now (checked before anything costlier about it).
    fn wants(&self, tag: &str) -> bool {
        self.keep > 0
            && (self.heap.len() < self.keep || self.heap.peek().is_some_and(|top| tag < &**top))
    }

    fn offer(&mut self, tag: &str) {
        if !self.wants(tag) {
            return;
        }
        if self.heap.len() == self.keep {
            self.heap.pop();
        }
        self.heap.push(tag.into());
    }

    fn sorted(self) -> Vec<Box<str>> {
        self.heap.into_sorted_vec()
    }
}

/// The tags of one page of the listing, and how many tags match the search: the notable tags
/// first (when sorted by busiest), then the rest by name. The rest costs one pass over the
/// names, skipped when the notable tags fill the page and there is nothing to count.
fn page_of_tags(
    g: &SegmentGenerator,
    notable: &[NotableTag],
    query: &TagQuery,
) -> (Vec<(String, f64)>, u64) {
    let (skip, take) = (query.skip(), query.per_page);
    let notable: Vec<&NotableTag> = match query.sort {
        TagSort::Busiest => notable.iter().filter(|t| query.matches(&t.tag)).collect(),
        TagSort::Name => Vec::new(),
    };
    let mut page: Vec<(String, f64)> = notable
        .iter()
        .skip(skip)
        .take(take)
        .map(|t| (t.tag.clone(), t.rate))
        .collect();
    if page.len() == take && query.search.is_none() {
        return (page, g.tag_count() as u64);
    }
    let listed: HashSet<&str> = notable.iter().map(|t| t.tag.as_str()).collect();
    let rest_skip = skip.saturating_sub(notable.len());
    let mut rest = SmallestNames {
        keep: rest_skip + (take - page.len()),
        heap: BinaryHeap::new(),
    };
    // Every matching tag counts (the notable ones are among them); the set of notable tags is
    // consulted only for a name the heap would take.
    let mut matched = 0u64;
    g.scan_tags(|tag, _| {
        if query.matches(tag) {
            matched += 1;
            if rest.wants(tag) && !listed.contains(tag) {
                rest.offer(tag);
            }
        }
    });
    page.extend(
        rest.sorted()
            .into_iter()
            .skip(rest_skip)
            .map(|t| (t.into_string(), 0.0)),
    );
    (page, matched)
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
    /// [`MAX_LISTING_DEPTH`]).
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
                TagHealth::Ok | TagHealth::Idle => {}
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
    /// `ok`, `idle` (nothing loaded), `exhausted`, `went_backwards` or `failing` (its last
    /// load failed).
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

/// A loaded tag's room left in its 63-bit range, from the highest max_id this server claimed
/// (the end of its newest segment) and the step its next claim starts from; `None` before a
/// segment was loaded.
pub(crate) fn range_headroom(v: &SegmentBufferView) -> Option<crate::segment::Headroom> {
    if !v.init_ok {
        return None;
    }
    let max_id = v.segments.iter().map(|s| s.max).max().unwrap_or(0);
    let max_id = i64::try_from(max_id).unwrap_or(i64::MAX);
    Some(crate::segment::Headroom::of(max_id, v.step.max(v.min_step)))
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
    let headroom = range_headroom(&v);
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

/// A latency quantile (ms) of the requests answered between two readings, interpolated within
/// its bucket; `None` before any request.
fn quantile_ms(first: &RequestCounts, last: &RequestCounts, q: f64) -> Option<f64> {
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

/// The page: static HTML with an inline stylesheet and script (no external asset, no
/// framework). It fetches `/?format=json` every 3 s, asks once for the bearer token when the
/// server wants one (kept in this tab's sessionStorage only), and writes every value with
/// `textContent`, so a tag is never read as HTML.
pub const PAGE: &str = include_str!("status.html");

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(total: u64, fast: u64) -> RequestCounts {
        RequestCounts {
            total,
            buckets: vec![(0.001, fast), (0.01, total), (f64::INFINITY, total)],
        }
    }

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
        let s = tag_status(v, TagHealth::Ok, rates());
        assert_eq!(s.step, Some(1000));
        assert_eq!(s.ids_left.as_deref(), Some("500000"));
        assert_eq!(s.headroom, Some("low"));
        assert_eq!(s.runs_out_in_s, Some(500.0));
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

    #[test]
    fn searches_ignore_case_and_listings_stay_within_their_depth() {
        assert!(contains_ignoring_case("Tenant-42", "tENANT"));
        assert!(contains_ignoring_case("x", ""));
        assert!(!contains_ignoring_case("abc", "abcd"));
        let q = |page, per_page| TagQuery {
            page,
            per_page,
            ..TagQuery::default()
        };
        assert!(q(1, 50).check().is_ok());
        assert!(q(200, 50).check().is_ok());
        assert!(q(201, 50).check().unwrap_err().contains("narrow it"));
        assert!(q(0, 50).check().is_err());
        assert!(q(1, 0).check().is_err() && q(1, MAX_PER_PAGE + 1).check().is_err());
        let mut names = SmallestNames {
            keep: 3,
            heap: BinaryHeap::new(),
        };
        for t in ["d", "a", "e", "c", "b", "f"] {
            names.offer(t);
        }
        let sorted: Vec<String> = names.sorted().into_iter().map(String::from).collect();
        assert_eq!(sorted, ["a", "b", "c"]);
    }
}
