//! The history a run leaves for the checker: every answer the clients saw ([`Record`]), and what
//! was sampled and done beside it ([`Seen`]: silences, `/cache` and `workers list` samples,
//! the servers' lives, tag changes).

use std::fmt;
use std::time::Duration;

/// Which mode a record is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Segment,
    Snowflake,
}

/// Who answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// Server `index` in its `incarnation`-th process (0: the first; +1 per restart).
    Server { index: usize, incarnation: u32 },
    /// The `run`-th `leafctl next` beside the servers.
    Next { run: u32 },
}

/// What came back.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A 200 with these IDs (in the order of the body).
    Ids(Vec<u64>),
    /// Not an ID: the status and the JSON body's `code` (`"not-json"` when there was none),
    /// and for a segment tag its buffers as the refusal found them (`buffered`, `issued`).
    Refused {
        status: u16,
        code: String,
        buffers: Option<(u64, u64)>,
    },
    /// No HTTP answer (refused, reset, timed out).
    NoAnswer(String),
    /// The client closed the connection mid-answer on purpose; the IDs it had read on complete
    /// lines by then.
    Dropped(Vec<u64>),
    /// A `leafctl next` that ended: its exit code (None: killed by the nemesis' bound), the
    /// IDs it printed on complete lines, and its stderr.
    Exited {
        code: Option<i32>,
        ids: Vec<u64>,
        wanted: usize,
        stderr: String,
    },
}

/// One request (or `next` run) and its outcome; times are since the start of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub source: Source,
    pub mode: Mode,
    /// The segment tag (one of [`TAGS`]) or the snowflake key.
    pub tag: &'static str,
    /// IDs asked for (1: a single-ID request, without `?count=`).
    pub count: u64,
    pub sent: Duration,
    pub done: Duration,
    pub outcome: Outcome,
}

impl Record {
    pub fn ids(&self) -> &[u64] {
        match &self.outcome {
            Outcome::Ids(ids) | Outcome::Exited { ids, .. } | Outcome::Dropped(ids) => ids,
            _ => &[],
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = match self.source {
            Source::Server { index, incarnation } => format!("serve {index}#{incarnation}"),
            Source::Next { run } => format!("next run {run}"),
        };
        let what = match &self.outcome {
            Outcome::Ids(ids) if ids.len() <= 3 => format!("{ids:?}"),
            Outcome::Ids(ids) => format!(
                "{} IDs {}..={}",
                ids.len(),
                ids.iter().min().unwrap_or(&0),
                ids.iter().max().unwrap_or(&0)
            ),
            Outcome::Refused {
                status,
                code,
                buffers: None,
            } => format!("{status} {code}"),
            Outcome::Refused {
                status,
                code,
                buffers: Some((buffered, issued)),
            } => format!("{status} {code} (buffered {buffered}, issued {issued})"),
            Outcome::NoAnswer(e) => format!("no answer ({e})"),
            Outcome::Dropped(ids) => format!("dropped by the client after {} IDs", ids.len()),
            Outcome::Exited {
                code, ids, stderr, ..
            } => format!(
                "exit {code:?}, {} IDs, stderr {:?}",
                ids.len(),
                stderr.lines().last().unwrap_or("")
            ),
        };
        let asked = if self.count > 1 {
            format!(" x{}", self.count)
        } else {
            String::new()
        };
        write!(
            f,
            "{:>8.3}s-{:>8.3}s {who:<14} {:?} {}{asked}: {what}",
            self.sent.as_secs_f64(),
            self.done.as_secs_f64(),
            self.mode,
            self.tag
        )
    }
}

/// A server's process down or frozen from `from` to `to` (the end includes its restart).
#[derive(Clone, Copy, Debug)]
pub struct Silence {
    pub server: usize,
    pub from: Duration,
    pub to: Duration,
}

/// The codes a refusal may carry, per mode: each a clear "not now" with Retry-After.
pub const SEGMENT_REFUSALS: &[&str] = &["not_ready"];
pub const SNOWFLAKE_REFUSALS: &[&str] = &[
    "not_ready",
    "lease_lost",
    "registry_slow",
    "clock_backwards",
];

/// One tag's buffer as a server's `/cache` showed it: the IDs it held, as ranges `[start, end)`
/// (the rest of the current segment, and the other segment when it was loaded).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheSample {
    pub server: usize,
    pub incarnation: u32,
    pub sent: Duration,
    pub done: Duration,
    pub tag: &'static str,
    pub ranges: Vec<(u64, u64)>,
}

impl CacheSample {
    pub fn held(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b.saturating_sub(*a)).sum()
    }
}

/// The worker ids the registry listed as held (`workers list`, `held: true`).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerSample {
    pub sent: Duration,
    pub done: Duration,
    pub held: Vec<u64>,
}

/// One `serve` process: from its start until it was killed or stopped (None: still running at
/// the end of the history).
#[derive(Clone, Debug, PartialEq)]
pub struct Life {
    pub server: usize,
    pub incarnation: u32,
    pub identity: String,
    pub from: Duration,
    pub to: Option<Duration>,
}

/// What was seen beside the answers: when servers were silent, their buffers, the registry's
/// listing, each process's life, and the operator's changes to tags.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// Server processes down or frozen (their clients may get no answer).
    pub silences: Vec<Silence>,
    /// Servers whose lease could be lost while their process ran on (paused, cut off, a bad
    /// link, a clock step), from the fault's start to its heal.
    pub disturbed: Vec<Silence>,
    /// Faults on the registry, start to heal (dead sessions may outlive their timeout).
    pub registry_faults: Vec<(Duration, Duration)>,
    pub caches: Vec<CacheSample>,
    pub workers: Vec<WorkerSample>,
    pub lives: Vec<Life>,
    /// When an operator removed or added a tag (the command's start).
    pub tag_changes: Vec<(Duration, &'static str)>,
    /// How long a dead or cut-off holder's claim may outlive it: the registry's session timeout
    /// or TTL plus slack for its expiry check (0: the worker rule is not checked).
    pub fence: Duration,
}

/// A refusal is judged against the last `/cache` sample of the same process taken at most this
/// long before it was sent.
pub const CACHE_SAMPLE_AGE: Duration = Duration::from_secs(5);
/// A tag removed or added this long before a refusal (a server refreshes its tags every 60 s
/// and drops the buffer of a removed one then) leaves the refusal unjudged.
pub const TAG_CHANGE_SHADOW: Duration = Duration::from_secs(70);
