//! The load beside the faults: each server's clients asking for IDs without pause, `leafctl
//! next` runs, and the samplers of each server's `/cache` and of the registry's `workers list`;
//! each request recorded as the history's [`Record`]s.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support;
use crate::support::Sandbox;
use crate::support::fault::complete_ids;
use crate::support::mariadb::PASSWORD;
use crate::support::nemesis::{
    CLIENT_TAGS, CacheSample, Mode, Outcome, Record, Rng, Source, TAGS, WorkerSample,
};
use crate::support::netns::Host;
use crate::support::serve::http;
use crate::world::Served;
use crate::{CACHE_EVERY, NEXT_BOUND, NEXT_COUNT, SNOW, TAG, WORKERS_EVERY};

/// An HTTP result as the history records it.
pub fn outcome_of(answer: std::io::Result<support::serve::Response>) -> Outcome {
    match answer {
        Ok(r) if r.status == 200 => Outcome::Ids(support::parse_ids(r.body.as_bytes())),
        Ok(r) => {
            let body = serde_json::from_str::<serde_json::Value>(&r.body).ok();
            let field = |k: &str| body.as_ref().and_then(|j| j[k].as_u64());
            Outcome::Refused {
                status: r.status,
                code: body
                    .as_ref()
                    .and_then(|j| j["code"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "not-json".into()),
                buffers: field("buffered").zip(field("issued")),
            }
        }
        Err(e) => Outcome::NoAnswer(e.kind().to_string()),
    }
}

/// Sends `GET path`, reads at most `limit` bytes of the answer (bounded in time), closes the
/// connection, and returns the IDs on the complete lines of the body read by then.
pub fn read_and_drop(addr: SocketAddr, path: &str, limit: u64) -> Vec<u64> {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return Vec::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).is_err() || limit == 0 {
        return Vec::new();
    }
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut body_from = None;
    while Instant::now() < deadline {
        let Ok(n) = s.read(&mut buf) else { break };
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if body_from.is_none() {
            body_from = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4);
        }
        if body_from.is_some_and(|b| (raw.len() - b) as u64 >= limit) {
            break;
        }
    }
    drop(s);
    let Some(b) = body_from else {
        return Vec::new();
    };
    // Only a 200's body holds IDs.
    if !raw.starts_with(b"HTTP/1.1 200") {
        return Vec::new();
    }
    let body = &raw[b..raw.len().min(b + limit as usize)];
    let complete = body.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
    support::parse_ids(&body[..complete])
}

/// The client loop of one server and mode: requests without pause (every 10th for 20 IDs), in
/// the server's namespace, for as long as `stop` is false (bounded in count). Segment clients
/// ask for the main tag three times in four and for the extra tags (which an operator removes,
/// re-adds, bumps and re-steps) in turn otherwise.
pub fn client(
    served: Arc<Vec<Served>>,
    index: usize,
    mode: Mode,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<Record>> {
    std::thread::spawn(move || {
        served[index].host.enter();
        let mut records = Vec::new();
        let mut n = 0u64;
        while !stop.load(Ordering::SeqCst) && records.len() < 400_000 {
            let Some((addr, incarnation)) = *served[index].at.lock().unwrap() else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            n += 1;
            let tag = match mode {
                Mode::Segment if n % 4 == 3 => TAGS[1 + (n / 4) as usize % (CLIENT_TAGS - 1)],
                _ => TAG,
            };
            let path = match mode {
                Mode::Segment => format!("/api/segment/get/{tag}"),
                Mode::Snowflake => SNOW.to_string(),
            };
            let count = if n.is_multiple_of(10) { 20 } else { 1 };
            let p = if count > 1 {
                format!("{path}?count={count}")
            } else {
                path
            };
            let sent = started.elapsed();
            let outcome = outcome_of(http(addr, "GET", &p, &[]));
            let done = started.elapsed();
            if matches!(outcome, Outcome::NoAnswer(_)) {
                // A server down: do not spin on refused connections.
                std::thread::sleep(Duration::from_millis(20));
            }
            records.push(Record {
                source: Source::Server { index, incarnation },
                mode,
                tag,
                count,
                sent,
                done,
                outcome,
            });
        }
        records
    })
}

/// `leafctl next nem -n 200` every 1-3 s from a server host in turn, each run bounded.
pub fn next_runs(
    served: Arc<Vec<Served>>,
    url: String,
    seed: u64,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<Record>> {
    std::thread::spawn(move || {
        let mut rng = Rng::new(seed ^ 0x6E65_7874);
        let sb = Sandbox::new();
        let mut records = Vec::new();
        let mut run = 0u32;
        while !stop.load(Ordering::SeqCst) && run < 10_000 {
            let host = &served[run as usize % served.len()].host;
            let mut c = sb.leafctl_std();
            c.env("LEAF_DB", &url)
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .args(["next", TAG, "-n", &NEXT_COUNT.to_string()]);
            let mut c = host.wrap(&c);
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let sent = started.elapsed();
            let child = c.spawn().expect("spawn leafctl next");
            let out = bounded_output(child, NEXT_BOUND);
            records.push(Record {
                source: Source::Next { run },
                mode: Mode::Segment,
                tag: TAG,
                count: NEXT_COUNT as u64,
                sent,
                done: started.elapsed(),
                outcome: Outcome::Exited {
                    code: out.0,
                    ids: complete_ids(&out.1),
                    wanted: NEXT_COUNT,
                    stderr: String::from_utf8_lossy(&out.2).into_owned(),
                },
            });
            run += 1;
            std::thread::sleep(Duration::from_millis(rng.range(1_000, 3_000)));
        }
        records
    })
}

/// Reads server `index`'s `/cache` every `CACHE_EVERY` from its host (bounded in count): what
/// each of the run's tags held, for the buffer rule.
pub fn cache_sampler(
    served: Arc<Vec<Served>>,
    index: usize,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<CacheSample>> {
    std::thread::spawn(move || {
        served[index].host.enter();
        let mut samples = Vec::new();
        let mut rounds = 0u32;
        while !stop.load(Ordering::SeqCst) && rounds < 100_000 {
            rounds += 1;
            std::thread::sleep(CACHE_EVERY);
            let Some((addr, incarnation)) = *served[index].at.lock().unwrap() else {
                continue;
            };
            let sent = started.elapsed();
            let Ok(r) = http(addr, "GET", "/cache", &[("Accept", "application/json")]) else {
                continue;
            };
            let done = started.elapsed();
            let Ok(serde_json::Value::Array(rows)) = serde_json::from_str(&r.body) else {
                continue;
            };
            for row in rows {
                let Some(tag) = TAGS.iter().find(|t| row["key"] == **t) else {
                    continue;
                };
                let num = |k: &str| match &row[k] {
                    serde_json::Value::String(s) => s.parse::<u64>().unwrap_or(0),
                    v => v.as_u64().unwrap_or(0),
                };
                let pos = num("pos") as usize & 1;
                let mut ranges = Vec::new();
                let (v, m) = (num(&format!("value{pos}")), num(&format!("max{pos}")));
                if v < m {
                    ranges.push((v, m));
                }
                if row["nextReady"] == true {
                    let o = 1 - pos;
                    let (v, m) = (num(&format!("value{o}")), num(&format!("max{o}")));
                    if v < m {
                        ranges.push((v, m));
                    }
                }
                samples.push(CacheSample {
                    server: index,
                    incarnation,
                    sent,
                    done,
                    tag,
                    ranges,
                });
            }
        }
        samples
    })
}

/// Reads the registry's `workers list --output json` every `WORKERS_EVERY` from the operator's
/// host (each run bounded; a failed read is skipped): the worker ids held, for the worker rule.
pub fn workers_sampler(
    ops: Host,
    registry: Vec<String>,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<WorkerSample>> {
    std::thread::spawn(move || {
        let sb = Sandbox::new();
        let mut samples = Vec::new();
        let mut rounds = 0u32;
        while !stop.load(Ordering::SeqCst) && rounds < 10_000 {
            rounds += 1;
            std::thread::sleep(WORKERS_EVERY);
            let mut c = sb.leafctl_std();
            c.args(&registry)
                .args(["--name", "nem", "workers", "list", "--output", "json"]);
            let mut c = ops.wrap(&c);
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let sent = started.elapsed();
            let (code, out, _) = bounded_output(c.spawn().expect("workers list"), NEXT_BOUND / 4);
            let done = started.elapsed();
            let Ok(serde_json::Value::Array(rows)) = serde_json::from_slice(&out) else {
                continue;
            };
            if code != Some(0) {
                continue;
            }
            let held = rows
                .iter()
                .filter(|r| r["held"] == true)
                .filter_map(|r| r["worker"].as_u64())
                .collect();
            samples.push(WorkerSample { sent, done, held });
        }
        samples
    })
}

/// The exit code (None: killed after `limit`), stdout and stderr of `child`.
pub fn bounded_output(
    mut child: std::process::Child,
    limit: Duration,
) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    use std::io::Read;
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let e = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + limit;
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        code,
        o.join().unwrap_or_default(),
        e.join().unwrap_or_default(),
    )
}
