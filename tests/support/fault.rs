//! Helpers for the fault suite (`tests/faults/`): steady load on a `leafctl serve` that keeps
//! every ID answered and every refusal, and reading what a killed process managed to print.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::netns::Place;
use super::serve::{Server, http_within};
use super::snowflake::{time_of, worker_of};

/// The IDs in what a process printed before it was killed: only lines ended by a newline count
/// (a last partial line was never handed out whole).
pub fn complete_ids(out: &[u8]) -> Vec<u64> {
    let end = out.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    super::parse_ids(&out[..end])
}

/// What a load run saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every ID answered with 200.
    pub ids: Vec<u64>,
    /// Answers per status code.
    pub statuses: BTreeMap<u16, u64>,
    /// The distinct error codes (`code` of the JSON body) of non-200 answers, with one message each.
    pub errors: BTreeMap<String, String>,
    /// Requests that got no HTTP answer at all (connection refused or cut).
    pub failed: u64,
    /// (time since the start, status) of every answer, in order per thread, merged.
    pub timeline: Vec<(Duration, u16)>,
    /// When each request without an answer gave up (time since the start).
    pub failed_at: Vec<Duration>,
    /// (time since the start when sent, how long until answered or failed) of every request.
    pub latencies: Vec<(Duration, Duration)>,
    /// (time since the start when answered, lowest ID, highest ID) of every answer with IDs.
    pub id_spans: Vec<(Duration, u64, u64)>,
}

impl Seen {
    /// Asserts that every request was answered, and every answer was IDs (200).
    pub fn all_ids(&self, what: &str) {
        assert_eq!(self.failed, 0, "{what}: requests without an answer");
        assert_eq!(
            self.statuses.keys().copied().collect::<Vec<_>>(),
            vec![200],
            "{what}: {:?}",
            self.errors
        );
    }

    /// How many answers had this status.
    pub fn count(&self, status: u16) -> u64 {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    /// When the last ID (a 200) in `[from, to)` was answered, if any.
    pub fn last_ok_in(&self, from: Duration, to: Duration) -> Option<Duration> {
        self.timeline
            .iter()
            .filter(|(t, st)| *st == 200 && *t >= from && *t < to)
            .map(|(t, _)| *t)
            .next_back()
    }

    /// When the first ID (a 200) at or after `t` was answered, if any.
    pub fn first_ok_after(&self, t: Duration) -> Option<Duration> {
        self.timeline
            .iter()
            .find(|(at, st)| *st == 200 && *at >= t)
            .map(|(at, _)| *at)
    }

    /// The longest stretch without an answered ID within `[from, to]`.
    pub fn longest_gap(&self, from: Duration, to: Duration) -> Duration {
        let mut last = from;
        let mut gap = Duration::ZERO;
        for (t, _) in self
            .timeline
            .iter()
            .filter(|(t, st)| *st == 200 && *t >= from && *t <= to)
        {
            gap = gap.max(t.saturating_sub(last));
            last = *t;
        }
        gap.max(to.saturating_sub(last))
    }

    /// Requests sent within `[from, to)`: how many, how many got no ID (another status or no
    /// answer), and the 50th and 99th percentiles and maximum of their latency.
    pub fn requests_in(&self, from: Duration, to: Duration) -> Requests {
        let mut lat: Vec<Duration> = self
            .latencies
            .iter()
            .filter(|(sent, _)| *sent >= from && *sent < to)
            .map(|(_, took)| *took)
            .collect();
        lat.sort();
        let answered_ok = self
            .timeline
            .iter()
            .filter(|(t, st)| *st == 200 && *t >= from && *t < to)
            .count();
        let pct = |p: usize| {
            lat.get((lat.len() * p / 100).min(lat.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        Requests {
            sent: lat.len(),
            failed: lat.len().saturating_sub(answered_ok),
            p50: pct(50),
            p99: pct(99),
            max: lat.last().copied().unwrap_or_default(),
        }
    }

    fn merge(&mut self, other: Seen) {
        self.ids.extend(other.ids);
        for (k, v) in other.statuses {
            *self.statuses.entry(k).or_default() += v;
        }
        for (k, v) in other.errors {
            self.errors.entry(k).or_insert(v);
        }
        self.failed += other.failed;
        self.timeline.extend(other.timeline);
        self.failed_at.extend(other.failed_at);
        self.latencies.extend(other.latencies);
        self.id_spans.extend(other.id_spans);
    }
}

/// Requests within a stretch of a load run (see [`Seen::requests_in`]).
#[derive(Debug, Clone, Copy)]
pub struct Requests {
    pub sent: usize,
    /// Requests sent in the stretch that were not answered with an ID within it (approximate
    /// at its edges).
    pub failed: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// Steady load on one server from a few threads until stopped: single IDs and batches of
/// `batch`, one request at a time per thread with a short pause, bounded by `limit`.
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Seen>>,
    started: Instant,
    /// Set to true by any thread that saw an answer (for waiting until the load is flowing).
    progress: Arc<Mutex<u64>>,
    /// When the latest ID was answered, in ns since the start, plus one (0: none yet).
    last_ok: Arc<AtomicU64>,
    /// The same for the latest answer that was not an ID.
    last_refused: Arc<AtomicU64>,
}

impl Load {
    /// Starts `threads` threads sending `path` (every 10th request with `?count=batch`) to
    /// `addr`, pausing `pause` between requests, for at most `limit`.
    pub fn start(
        addr: SocketAddr,
        path: &str,
        threads: usize,
        batch: u64,
        pause: Duration,
        limit: Duration,
    ) -> Load {
        Load::start_at(&Place::local(), addr, path, threads, batch, pause, limit)
    }

    /// The same from clients at `place` (threads in its network namespace).
    pub fn start_at(
        place: &Place,
        addr: SocketAddr,
        path: &str,
        threads: usize,
        batch: u64,
        pause: Duration,
        limit: Duration,
    ) -> Load {
        Load::start_bounded_at(place, addr, path, threads, batch, pause, limit, u64::MAX)
    }

    /// [`Load::start_at`] with each thread also bounded in count: at most `max_requests`
    /// requests per thread.
    #[allow(clippy::too_many_arguments)]
    pub fn start_bounded_at(
        place: &Place,
        addr: SocketAddr,
        path: &str,
        threads: usize,
        batch: u64,
        pause: Duration,
        limit: Duration,
        max_requests: u64,
    ) -> Load {
        let patient = Duration::from_secs(30);
        Load::spawn(
            place,
            addr,
            path,
            (threads, batch, pause),
            (limit, max_requests),
            patient,
        )
    }

    /// [`Load::start_at`] with clients that give up on an answer after `read_timeout` (and on
    /// a connect after 5 s): cut off for longer than both, every thread sees an error, where a
    /// patient client whose request was on its way at the cut would wait for TCP to resend it.
    pub fn start_impatient_at(
        place: &Place,
        addr: SocketAddr,
        path: &str,
        (threads, batch, pause): (usize, u64, Duration),
        limit: Duration,
        read_timeout: Duration,
    ) -> Load {
        Load::spawn(
            place,
            addr,
            path,
            (threads, batch, pause),
            (limit, u64::MAX),
            read_timeout,
        )
    }

    fn spawn(
        place: &Place,
        addr: SocketAddr,
        path: &str,
        (threads, batch, pause): (usize, u64, Duration),
        (limit, max_requests): (Duration, u64),
        read_timeout: Duration,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Mutex::new(0));
        let last_ok = Arc::new(AtomicU64::new(0));
        let last_refused = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let threads = (0..threads)
            .map(|_| {
                let (stop, progress, path) = (stop.clone(), progress.clone(), path.to_string());
                let (last_ok, last_refused) = (last_ok.clone(), last_refused.clone());
                let place = place.clone();
                std::thread::spawn(move || {
                    place.enter();
                    let mut seen = Seen::default();
                    let mut i = 0u64;
                    while !stop.load(Ordering::SeqCst)
                        && started.elapsed() < limit
                        && i < max_requests
                    {
                        i += 1;
                        let p = if i.is_multiple_of(10) {
                            format!("{path}?count={batch}")
                        } else {
                            path.clone()
                        };
                        let sent = started.elapsed();
                        let answer = http_within(addr, "GET", &p, &[], read_timeout);
                        seen.latencies.push((sent, started.elapsed() - sent));
                        match answer {
                            Ok(r) => {
                                // One reading of the time for the timeline and the atomics, in
                                // ns: a test that waits until 4 s after the last refusal and
                                // then checks the timeline's last 4 s must see the same instant
                                // (with ms, a refusal up to 1 ms later than its atomic said could
                                // fall inside the checked span).
                                let at = started.elapsed();
                                let at_ns = u64::try_from(at.as_nanos()).unwrap_or(u64::MAX - 1);
                                *seen.statuses.entry(r.status).or_default() += 1;
                                seen.timeline.push((at, r.status));
                                if r.status == 200 {
                                    let ids = r.ids();
                                    if let (Some(lo), Some(hi)) =
                                        (ids.iter().min(), ids.iter().max())
                                    {
                                        seen.id_spans.push((at, *lo, *hi));
                                    }
                                    seen.ids.extend(ids);
                                    last_ok.fetch_max(at_ns + 1, Ordering::SeqCst);
                                } else {
                                    last_refused.fetch_max(at_ns + 1, Ordering::SeqCst);
                                    let (code, msg) =
                                        serde_json::from_str::<serde_json::Value>(&r.body)
                                            .map(|j| {
                                                (
                                                    j["code"].as_str().unwrap_or("?").to_string(),
                                                    j["error"].as_str().unwrap_or("").to_string(),
                                                )
                                            })
                                            .unwrap_or_else(|_| {
                                                ("not-json".into(), r.body.clone())
                                            });
                                    seen.errors.entry(code).or_insert(msg);
                                }
                                *progress.lock().unwrap() += 1;
                            }
                            Err(_) => {
                                seen.failed += 1;
                                seen.failed_at.push(started.elapsed());
                            }
                        }
                        std::thread::sleep(pause);
                    }
                    seen
                })
            })
            .collect();
        Load {
            stop,
            threads,
            started,
            progress,
            last_ok,
            last_refused,
        }
    }

    /// When the latest ID was answered (time since the start), if any was.
    pub fn last_ok(&self) -> Option<Duration> {
        match self.last_ok.load(Ordering::SeqCst) {
            0 => None,
            ns => Some(Duration::from_nanos(ns - 1)),
        }
    }

    /// Waits (bounded) until an ID is answered at or after `t` (time since the start).
    pub fn wait_for_ok_after(&self, t: Duration, limit: Duration) -> bool {
        super::wait_until(limit, || self.last_ok().is_some_and(|l| l >= t))
    }

    /// When the latest answer that was not an ID came (time since the start), if any did.
    pub fn last_refused(&self) -> Option<Duration> {
        match self.last_refused.load(Ordering::SeqCst) {
            0 => None,
            ns => Some(Duration::from_nanos(ns - 1)),
        }
    }

    /// Waits (bounded) until an answer other than IDs comes at or after `t`.
    pub fn wait_for_refusal_after(&self, t: Duration, limit: Duration) -> bool {
        super::wait_until(limit, || self.last_refused().is_some_and(|r| r >= t))
    }

    /// How many answers the threads have had so far.
    pub fn answers(&self) -> u64 {
        *self.progress.lock().unwrap()
    }

    /// Waits (bounded) until at least `n` more answers arrived than now.
    pub fn wait_for_answers(&self, n: u64, limit: Duration) -> bool {
        let target = self.answers() + n;
        super::wait_until(limit, || self.answers() >= target)
    }

    /// Time since the load started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops the threads and returns everything they saw (timeline sorted by time).
    pub fn stop(self) -> Seen {
        self.stop.store(true, Ordering::SeqCst);
        let mut all = Seen::default();
        for t in self.threads {
            all.merge(t.join().expect("load thread"));
        }
        all.timeline.sort();
        all.failed_at.sort();
        all.latencies.sort();
        all.id_spans.sort();
        all
    }
}

/// The load the fault and partition tests put on a server while its database, registry or link
/// fails: two client threads, each sending a request, then the next after `pause`, every 10th
/// for 100 IDs, for at most `limit` ([`Load::start_at`]). `partition_links`,
/// `partition_registry`, `fault_zk` and `fault_ensemble` each had it as a `fn load` of their own
/// (issue 47); they differed in the pause and the bound, which are its fields: a file names its
/// own as a constant and starts it with [`Steady::on`] or [`Steady::from`].
#[derive(Clone, Copy, Debug)]
pub struct Steady {
    pub pause: Duration,
    pub limit: Duration,
}

impl Steady {
    /// The load on `server`, from clients in the server's own place (its namespace, or
    /// loopback).
    pub fn on(self, server: &Server, path: &str) -> Load {
        self.from(server.place(), server.addr, path)
    }

    /// The load on `addr`, from clients at `place` (a host other than the server's).
    pub fn from(self, place: &Place, addr: SocketAddr, path: &str) -> Load {
        Load::start_at(place, addr, path, 2, 100, self.pause, self.limit)
    }
}

/// For each worker id: every ID of `later` is at a later time than every ID of `earlier` (a
/// worker id that changed hands, or came back, never reused a time).
pub fn after_on_each_worker(earlier: &[u64], later: &[u64]) {
    let mut last: BTreeMap<u64, i64> = BTreeMap::new();
    for &id in earlier {
        let e = last.entry(worker_of(id)).or_insert(i64::MIN);
        *e = (*e).max(time_of(id));
    }
    for &id in later {
        if let Some(&t) = last.get(&worker_of(id)) {
            assert!(
                time_of(id) > t,
                "worker {} reused time {} (<= {t})",
                worker_of(id),
                time_of(id)
            );
        }
    }
}

/// Two processes never issued at the same millisecond on the same worker id (whoever held it
/// when; a worker id may change hands several times, so no order is assumed).
pub fn no_time_shared_on_a_worker(a: &[u64], b: &[u64]) {
    let used: std::collections::HashSet<(u64, i64)> =
        a.iter().map(|&id| (worker_of(id), time_of(id))).collect();
    for &id in b {
        assert!(
            !used.contains(&(worker_of(id), time_of(id))),
            "worker {} used at {} by both",
            worker_of(id),
            time_of(id)
        );
    }
}
