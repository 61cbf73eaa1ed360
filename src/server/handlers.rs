//! What each route does: Leaf's get routes, `/decodeSnowflakeId`, `/cache` and `/db`, and
//! leafctl's `/healthz`, status page and JSON, and `/metrics`. (Readiness is in
//! `readiness.rs`; the answer around them, authorization and timing in `answer.rs`.)

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use hyper::{Request, Response, StatusCode};
use serde::Serialize;

use super::LeafService;
use super::answer::Step;
use super::body::Body;
use super::error::{ApiError, Buffers, issue_error, segment_error};
use super::listing::{Broke, listing};
use super::reply::{ids_answer, json, one_id, respond_with};
use super::request::{key_of, parse_count, parse_encode, query_param, status_query, wants_html};
use super::route::{Route, not_found};
use super::status::{Inputs, StatusReport, TagQuery};
use crate::idformat::compact::Encoding;
use crate::segment::{LeafAlloc, RowPages, SegmentBufferView, TagFilter, validate_tag};
use crate::snowflake::IdBlock;

/// A Unix time in ms as `/decodeSnowflakeId` shows it, in local time (as Leaf).
fn local_time(unix_ms: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(unix_ms).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S%.3f").to_string(),
        None => "?".into(),
    }
}

/// A Unix time in seconds as `/db` shows `updateTime`.
fn rfc3339_s(unix_s: i64) -> String {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// Leaf's `SegmentBufferView`, plus leafctl's load state.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheEntry {
    key: String,
    init_ok: bool,
    next_ready: bool,
    pos: usize,
    value0: String,
    max0: String,
    step0: u64,
    value1: String,
    max1: String,
    step1: u64,
    loading: bool,
    step: i64,
    min_step: i64,
    last_error: Option<String>,
}

/// The longest a snowflake request waits on the worker-id registry (its turn, and the one
/// blocking call that extends the time fence) before it is answered `503` with `Retry-After`:
/// under a second, so a client with a 1 s timeout gets an answer, not a hang (issue 28).
pub(crate) const REGISTRY_WAIT: std::time::Duration = std::time::Duration::from_millis(750);

/// The answer when the registry did not confirm the time fence within [`REGISTRY_WAIT`].
fn registry_slow() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "registry_slow",
        format!(
            "the worker id registry did not confirm this server's time fence within {} ms; \
             /readyz says why; retry",
            REGISTRY_WAIT.as_millis()
        ),
    )
}

/// Every field of the JSON, the load state and the last error included.
const CACHE_COLUMNS: [&str; 14] = [
    "key",
    "initOk",
    "nextReady",
    "pos",
    "value0",
    "max0",
    "step0",
    "value1",
    "max1",
    "step1",
    "loading",
    "step",
    "minStep",
    "lastError",
];

/// A tag's snapshot as `/cache` lists it.
fn cache_entry(v: SegmentBufferView) -> CacheEntry {
    CacheEntry {
        key: v.tag,
        init_ok: v.init_ok,
        next_ready: v.next_ready,
        pos: v.pos,
        value0: v.segments[0].value.to_string(),
        max0: v.segments[0].max.to_string(),
        step0: v.segments[0].step,
        value1: v.segments[1].value.to_string(),
        max1: v.segments[1].max.to_string(),
        step1: v.segments[1].step,
        loading: v.loading,
        step: v.step,
        min_step: v.min_step,
        last_error: v.last_error,
    }
}

impl CacheEntry {
    /// The cells of its HTML row, in [`CACHE_COLUMNS`] order.
    fn cells(&self) -> [String; 14] {
        [
            self.key.clone(),
            self.init_ok.to_string(),
            self.next_ready.to_string(),
            self.pos.to_string(),
            self.value0.clone(),
            self.max0.clone(),
            self.step0.to_string(),
            self.value1.clone(),
            self.max1.clone(),
            self.step1.to_string(),
            self.loading.to_string(),
            self.step.to_string(),
            self.min_step.to_string(),
            self.last_error.clone().unwrap_or_default(),
        ]
    }
}

/// Leaf's `LeafAlloc` row.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DbRow {
    key: String,
    max_id: String,
    step: i64,
    description: Option<String>,
    update_time: String,
}

/// Every field of the JSON.
const DB_COLUMNS: [&str; 5] = ["key", "maxId", "step", "description", "updateTime"];

/// A row of the allocation table as `/db` lists it.
fn db_row(r: &LeafAlloc) -> DbRow {
    DbRow {
        key: r.tag.clone(),
        max_id: r.max_id.to_string(),
        step: r.step,
        description: r.description.clone(),
        update_time: rfc3339_s(r.update_time_s),
    }
}

impl DbRow {
    /// The cells of its HTML row, in [`DB_COLUMNS`] order.
    fn cells(&self) -> [String; 5] {
        [
            self.key.clone(),
            self.max_id.clone(),
            self.step.to_string(),
            self.description.clone().unwrap_or_default(),
            self.update_time.clone(),
        ]
    }
}

impl LeafService {
    /// The segment generator, or the 404 of a server started without it.
    fn segment_mode(&self) -> Result<&crate::segment::SegmentGenerator, ApiError> {
        self.segment
            .as_deref()
            .ok_or_else(|| ApiError::mode_disabled("segment"))
    }

    /// The snowflake generator, or the 404 of a server started without it.
    fn snowflake_mode(&self) -> Result<&crate::worker::SupervisedGenerator, ApiError> {
        self.snowflake
            .as_deref()
            .ok_or_else(|| ApiError::mode_disabled("snowflake"))
    }

    /// What `route` does with an authorized request; `path` is the request's, without its
    /// trailing slash.
    pub(super) fn route<B>(&self, route: Route, path: &str, req: &Request<B>) -> Step {
        let query = req.uri().query();
        match route {
            Route::Segment => {
                match key_of(Route::Segment.key(path))
                    .and_then(|key| Ok((key, parse_count(query)?, parse_encode(query)?)))
                {
                    Ok((key, count, encode)) => self.segment_get(key, count, encode),
                    Err(e) => Step::Done(Err(e)),
                }
            }
            Route::Snowflake => {
                match key_of(Route::Snowflake.key(path))
                    .and_then(|_| Ok((parse_count(query)?, parse_encode(query)?)))
                {
                    Ok((count, encode)) => self.snowflake_get(count, encode),
                    Err(e) => Step::Done(Err(e)),
                }
            }
            Route::Decode => self.decode(query).into(),
            Route::Cache => self.cache(wants_html(req)).into(),
            Route::Db => {
                let html = wants_html(req);
                // The first page is read before answering (a database that does not answer is
                // an error answer, not a broken one).
                Step::blocking(move |this| this.db(html))
            }
            Route::Status => Step::Done(
                status_query(query).map(|q| json(StatusCode::OK, &self.status_report(&q))),
            ),
            Route::Metrics => Step::Done(Ok(self.metrics_text())),
            // (`/healthz` and `/readyz` are answered before authorization.)
            Route::Healthz | Route::Readyz | Route::Other => Step::Done(Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                not_found(path),
            ))),
        }
    }

    /// `/api/segment/get/{tag}[?count=N]`: one ID at once when the current segment has one,
    /// else (and for a batch) on a blocking thread.
    fn segment_get(&self, tag: Cow<'_, str>, count: Option<u64>, encode: Option<Encoding>) -> Step {
        let segment = match self.segment_mode() {
            Ok(s) => s,
            Err(e) => return Step::Done(Err(e)),
        };
        if let Err(e) = validate_tag(&tag) {
            return Step::Done(Err(segment_error(e)));
        }
        match count {
            None => {
                // The common case never blocks: an ID from the current segment.
                if let Some(id) = segment.try_next_id(&tag) {
                    return one(id, encode);
                }
                // Owned only on the paths that leave the event loop.
                let tag = tag.into_owned();
                Step::blocking(move |this| {
                    let segment = this.segment_mode()?;
                    let id = segment
                        .next_id(&tag)
                        .map_err(|e| segment_refusal(segment, &tag, e))?;
                    Ok(match encode {
                        None => one_id(id),
                        Some(_) => ids_answer(1, [id], encode),
                    })
                })
            }
            Some(n) => {
                let tag = tag.into_owned();
                Step::blocking(move |this| {
                    let segment = this.segment_mode()?;
                    let ranges: Vec<Range<u64>> = segment
                        .next_ids(&tag, n)
                        .map_err(|e| segment_refusal(segment, &tag, e))?;
                    Ok(ids_answer(n, ranges.into_iter().flatten(), encode))
                })
            }
        }
    }

    /// `/api/snowflake/get/{key}[?count=N]`: one ID at once when the tick has one, else (and for
    /// a batch) on a blocking thread.
    fn snowflake_get(&self, count: Option<u64>, encode: Option<Encoding>) -> Step {
        let snowflake = match self.snowflake_mode() {
            Ok(s) => s,
            Err(e) => return Step::Done(Err(e)),
        };
        match count {
            None => {
                // The common case never blocks; a wait for the next tick or a reservation that
                // must be extended (I/O) goes to a blocking thread.
                match snowflake.try_next_block(1) {
                    Some(Ok(block)) => {
                        self.metrics.snowflake_issued(1);
                        one(block.first, encode)
                    }
                    Some(Err(e)) => Step::Done(Err(issue_error(e))),
                    None => Step::SnowflakeInTurn(1, encode),
                }
            }
            Some(n) => Step::SnowflakeInTurn(n, encode),
        }
    }

    /// One snowflake ID when the non-blocking try could not issue one (the tick used up, a small
    /// clock rollback, or the time fence to move past what the registry has recorded, which
    /// needs I/O; inside the record the try moves it from memory). Such requests come in
    /// bursts (every request in flight when the fence is reached), and each used to take a
    /// blocking thread of its own, only to queue on the generator's lock (new threads started
    /// for a burst). Now one at a time waits on a blocking thread; the others wait here, then
    /// try again without blocking, which usually succeeds since the one before them moved the
    /// fence or the tick on.
    ///
    /// A batch (`count`) takes the same turn. Neither waits longer than [`REGISTRY_WAIT`] in
    /// all: a registry that does not confirm the time fence by then (frozen, cut off, slow) is
    /// a `503` with `Retry-After`, while the one blocking call goes on holding the turn, so a
    /// frozen registry never has more than one request's thread waiting on it. An ID that call
    /// issues after its request was answered is never sent: a gap, never a repeat.
    pub(super) async fn snowflake_in_turn(
        self: &Arc<Self>,
        count: u64,
        encode: Option<Encoding>,
    ) -> Result<Response<Body>, ApiError> {
        let deadline = tokio::time::Instant::now() + REGISTRY_WAIT;
        let turn = tokio::time::timeout_at(deadline, self.snowflake_turn.clone().lock_owned())
            .await
            .map_err(|_| registry_slow())?;
        if count == 1
            && let Some(result) = self.snowflake_mode()?.try_next_block(1)
        {
            let block = result.map_err(issue_error)?;
            self.metrics.snowflake_issued(1);
            return Ok(match encode {
                None => one_id(block.first),
                Some(_) => ids_answer(1, [block.first], encode),
            });
        }
        let this = self.clone();
        let work = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let snowflake = this.snowflake_mode()?;
            let mut blocks: Vec<IdBlock> = Vec::new();
            let mut left = count;
            while left > 0 {
                let block = snowflake.next_block(left).map_err(issue_error)?;
                left -= block.count;
                blocks.push(block);
            }
            this.metrics.snowflake_issued(count);
            Ok(match blocks.as_slice() {
                [one] if count == 1 && encode.is_none() => one_id(one.first),
                _ => ids_answer(count, blocks.into_iter().flatten(), encode),
            })
        });
        match tokio::time::timeout_at(deadline, work).await {
            Ok(done) => done.unwrap_or_else(|e| {
                Err(ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    format!("the request's worker failed: {e}"),
                ))
            }),
            Err(_) => Err(registry_slow()),
        }
    }

    /// Leaf's `/decodeSnowflakeId?snowflakeId=ID`: its time, worker and sequence, with Leaf's
    /// keys; its errors also carry Leaf's `errorMsg`.
    fn decode(&self, query: Option<&str>) -> Result<Response<Body>, ApiError> {
        let leaf = ApiError::with_leaf_error_msg;
        let raw = query_param(query, "snowflakeId")
            .map_err(leaf)?
            .ok_or_else(|| {
                leaf(ApiError::bad_request(
                    "missing query parameter snowflakeId, e.g. /decodeSnowflakeId?snowflakeId=1234",
                ))
            })?;
        let id: u64 = raw.trim().parse().map_err(|_| {
            leaf(ApiError::bad_request(format!(
                "snowflakeId {raw:?} is not a decimal ID"
            )))
        })?;
        let parts = self
            .layout
            .decode(id)
            .map_err(|e| leaf(ApiError::bad_request(e.to_string())))?;
        let ms = self.layout.unix_ms(parts.ticks);
        Ok(json(
            StatusCode::OK,
            &serde_json::json!({
                "timestamp": format!("{ms}({})", local_time(ms)),
                "workerId": parts.worker.to_string(),
                "sequenceId": parts.sequence.to_string(),
            }),
        ))
    }

    /// Leaf's `/cache`: every tag, streamed one shard of the tag table at a time (a million
    /// tags do not grow the server), in no particular order, as Leaf's own.
    fn cache(&self, html: bool) -> Result<Response<Body>, ApiError> {
        let segment = self
            .segment
            .clone()
            .ok_or_else(|| ApiError::mode_disabled("segment"))?;
        Ok(listing(html, "Segment cache", &CACHE_COLUMNS, move |out| {
            let mut written = Ok(());
            segment.for_each_view(|v| {
                if written.is_ok() {
                    let e = cache_entry(v);
                    written = out.row(&e, || e.cells());
                }
            });
            Ok(written?)
        }))
    }

    /// Leaf's `/db`: the `leaf_alloc` rows, read and streamed a page at a time (no connection or
    /// transaction is held between pages). A failure before the first page is an error
    /// answer; one after it cuts the answer off, so it never looks complete.
    fn db(&self, html: bool) -> Result<Response<Body>, ApiError> {
        let segment = self
            .segment
            .clone()
            .ok_or_else(|| ApiError::mode_disabled("segment"))?;
        let mut pages = RowPages::new(segment.store(), TagFilter::All);
        let first = pages.next().transpose().map_err(segment_error)?;
        let after = pages.cursor();
        drop(pages);
        Ok(listing(html, "leaf_alloc", &DB_COLUMNS, move |out| {
            let rest = after.map(|a| RowPages::after(segment.store(), TagFilter::All, a));
            for page in first.into_iter().map(Ok).chain(rest.into_iter().flatten()) {
                let page = page.map_err(|e| Broke::Failed(format!("/db broke off: {e}")))?;
                for r in &page {
                    let row = db_row(r);
                    out.row(&row, || row.cells())?;
                }
            }
            Ok(())
        }))
    }

    /// The status page's report, with the page of tags `query` asks for.
    fn status_report(&self, query: &TagQuery) -> StatusReport {
        let readiness = self.readiness();
        self.metrics.sampler().report(
            Inputs {
                started: self.started,
                ready: readiness.ready,
                readiness: readiness.error,
                open_connections: self
                    .open_connections
                    .load(std::sync::atomic::Ordering::Relaxed),
            },
            self.segment.as_deref(),
            self.snowflake.as_deref(),
            query,
        )
    }

    /// `/metrics`: the Prometheus text format.
    fn metrics_text(&self) -> Response<Body> {
        respond_with(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            self.metrics.encode().into_bytes(),
        )
    }
}

/// How a refused segment request is answered: [`segment_error`], with the tag's buffers as the
/// refusal found them (read only on this path: the answers that succeed pay nothing), so a
/// client or a checker can judge it: a single ID is never refused while IDs are buffered, and
/// every ID handed out was answered.
fn segment_refusal(
    segment: &crate::segment::SegmentGenerator,
    tag: &str,
    e: crate::segment::SegmentError,
) -> ApiError {
    let refused = segment_error(e);
    match segment.view(tag) {
        Some(v) => refused.with_buffers(Buffers {
            buffered: v.buffered,
            issued: v.issued,
        }),
        None => refused,
    }
}

/// One ID answered at once: its digits ([`Step::Id`]), or with `?encode=` its compact string.
#[inline]
fn one(id: u64, encode: Option<Encoding>) -> Step {
    match encode {
        None => Step::Id(id),
        Some(_) => Step::Done(Ok(ids_answer(1, [id], encode))),
    }
}
