//! Readiness (`/readyz`, and the status page's `ready`): whether every enabled mode can issue
//! now, and if not, what cannot, naming a few tags at most.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::LeafService;
use super::body::Body;
use super::reply::json;
use crate::segment::{SegmentBufferView, TagHealth};

/// The `/readyz` answer, and what the status page says of readiness.
#[derive(Serialize)]
pub(super) struct Readiness {
    /// Whether every enabled mode can issue now.
    pub(super) ready: bool,
    /// What segment mode says (`ok`, or the tags that cannot issue).
    #[serde(skip_serializing_if = "Option::is_none")]
    segment: Option<String>,
    /// What snowflake mode says (`ok (worker id N)`, or why it cannot issue).
    #[serde(skip_serializing_if = "Option::is_none")]
    snowflake: Option<String>,
    /// Every problem, when not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
    /// `not_ready`, when not ready (as the error answers' code).
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

impl LeafService {
    /// Whether every enabled mode can issue now, and what each says (`/readyz`, the status page).
    pub(super) fn readiness(&self) -> Readiness {
        let mut problems = Vec::new();
        let mut said = |mode: &str, (text, ok): (String, bool)| {
            if !ok {
                problems.push(format!("{mode}: {text}"));
            }
            text
        };
        let segment = self
            .segment
            .as_ref()
            .map(|s| said("segment", segment_readiness(s)));
        let snowflake = self
            .snowflake
            .as_ref()
            .map(|s| said("snowflake", snowflake_readiness(s)));
        let ready = problems.is_empty();
        Readiness {
            ready,
            segment,
            snowflake,
            error: (!ready).then(|| problems.join("; ")),
            code: (!ready).then_some("not_ready"),
        }
    }

    /// 200 when every enabled mode can issue now; 503 naming what cannot.
    pub(super) fn readyz(&self) -> Response<Body> {
        let body = self.readiness();
        let ready = body.ready;
        let mut r = json(
            if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            },
            &body,
        );
        if !ready {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

/// Names at most this many tags in one readiness message; the rest are counted.
const READINESS_TAGS: usize = 10;

/// The first [`READINESS_TAGS`] items joined, and how many more there are.
fn first_few(items: &[String]) -> String {
    let mut text = items[..items.len().min(READINESS_TAGS)].join("; ");
    if items.len() > READINESS_TAGS {
        text.push_str(&format!(
            "; and {} more (see the status page or /metrics)",
            items.len() - READINESS_TAGS
        ));
    }
    text
}

/// What segment mode says of itself, and whether it can issue. Only the tags that need
/// attention are visited, never every tag. A tag whose table went backwards needs an operator
/// now, whatever its buffers hold (said once, not again as a tag that cannot load).
fn segment_readiness(s: &crate::segment::SegmentGenerator) -> (String, bool) {
    let refusals = s.guard().refusals();
    let backwards = refusals.iter().map(|r| {
        format!(
            "tag {:?} went backwards: a claim came back starting at {} below the {} claimed before; move it forward with `leafctl tag bump {} --to {}`",
            r.tag,
            r.start,
            r.mark,
            crate::segment::tag_for_shell(&r.tag),
            r.mark
        )
    });
    // Each tag's health as the segment room judges it, for the status page and `/metrics` alike.
    let troubled: Vec<(SegmentBufferView, TagHealth)> = s
        .troubled()
        .into_iter()
        .map(|v| {
            let health = s.health(&v);
            (v, health)
        })
        .collect();
    let stuck: Vec<String> = troubled
        .iter()
        .filter(|(v, health)| *health == TagHealth::Failing && v.stuck())
        .map(|(v, _)| {
            format!(
                "tag {:?} has no IDs left and cannot load more ({})",
                v.tag,
                v.last_error.as_deref().unwrap_or_default()
            )
        })
        .chain(backwards)
        .collect();
    if !stuck.is_empty() {
        return (first_few(&stuck), false);
    }
    // A used-up tag is no outage of the server: said, not counted.
    let used_up: Vec<String> = troubled
        .iter()
        .filter(|(_, health)| *health == TagHealth::Exhausted)
        .map(|(v, _)| format!("{:?}", v.tag))
        .collect();
    if used_up.is_empty() {
        ("ok".to_string(), true)
    } else {
        (
            format!("ok (used up, no IDs left: {})", first_few(&used_up)),
            true,
        )
    }
}

/// What snowflake mode says of itself, and whether it can issue: its worker id, or why not
/// (no lease, the clock behind, the layout's time run out), and the layout's end within a year.
fn snowflake_readiness(s: &crate::worker::SupervisedGenerator) -> (String, bool) {
    let status = s.status();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let ends = s.layout().last_unix_ms();
    let ends_at = chrono::DateTime::from_timestamp_millis(ends).map_or_else(
        || ends.to_string(),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    // A layout whose time has run out issues nothing: not ready, said as such.
    let ran_out = (ends < now_ms).then(|| {
        format!(
            "the layout's time ran out at {ends_at}: no ID can be issued; use a layout with a later epoch or more time bits"
        )
    });
    // A clock behind the last issued time refuses every request until it catches up.
    let problem = ran_out.or(status.problem).or_else(|| {
        s.clock_behind_ms().map(|behind| {
            format!(
                "the clock is {behind} ms behind the last time worker id {} issued IDs at; issuing resumes once it passes it",
                status.worker.unwrap_or_default()
            )
        })
    });
    let days_left = (ends - now_ms) / 86_400_000;
    let worker = status.worker.unwrap_or_default();
    match problem {
        // Running out shown before it happens: within a year, the detail says when.
        None if days_left < 365 => (
            format!(
                "ok (worker id {worker}; the layout's time runs out in {days_left} days, at {ends_at})"
            ),
            true,
        ),
        None => (format!("ok (worker id {worker})"), true),
        Some(p) => (p, false),
    }
}
