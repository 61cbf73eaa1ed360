//! A sudden burst on a cold tag, with the database near and far (issue 38): for each database of
//! `BURST_URLS` (`name=URL` pairs, tables made by `db init`) and each round trip of `BURST_RTTS`
//! (ms, default `0 2 20`), a proxy on loopback delays every chunk by half the round trip each
//! way between `leafctl serve --segment` (`BURST_BIN`) and the database. It measures a claim
//! through the proxy, then sends `BURST_CONNECTIONS` keep-alive clients asking for single IDs of
//! a fresh tag (step 1000) for `BURST_SECONDS`, and prints the answers, errors, p50/p99/max and
//! the segment sizes the tag walked through (read off `/cache` every 50 ms). `scripts/bench
//! burst` starts private MariaDB and PostgreSQL servers and runs it. Bounded in time and count.

#[path = "../tests/support/proxy.rs"]
mod proxy;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use leafctl::db::{OpenMode, open_store};
use leafctl::segment::AllocStoreExt;
use leafctl::segment::Increment;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The URL with its `host:port` replaced by the proxy's.
fn through(url: &str, proxy: &proxy::Proxy) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (userinfo, rest) = rest.split_once('@').map_or(("", rest), |(u, r)| (u, r));
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let at = if userinfo.is_empty() { "" } else { "@" };
    format!("{scheme}://{userinfo}{at}{}{path}", proxy.addr())
}

fn target(url: &str) -> SocketAddr {
    let rest = url.split_once("://").expect("a URL").1;
    let rest = rest.split_once('@').map_or(rest, |(_, r)| r);
    let hostport = rest.split('/').next().expect("host");
    hostport.parse().expect("host:port as an address")
}

/// One keep-alive GET: the status, or `None` if the connection failed.
fn get(conn: &mut BufReader<TcpStream>, path: &str) -> Option<u16> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n");
    conn.get_mut().write_all(req.as_bytes()).ok()?;
    let mut line = String::new();
    conn.read_line(&mut line).ok()?;
    let status: u16 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        conn.read_line(&mut h).ok()?;
        if h == "\r\n" || h.is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; len];
    conn.read_exact(&mut body).ok()?;
    Some(status)
}

fn body(addr: SocketAddr, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: bench\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// `leafctl serve --segment` on a free port; its address.
fn serve(bin: &str, url: &str) -> (Child, SocketAddr) {
    let mut child = Command::new(bin)
        .args(["--db", url, "serve", "--segment", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start leafctl serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(rest) = line.split("listening on http://").nth(1) {
            let addr = rest.split(':').take(2).collect::<Vec<_>>().join(":");
            std::thread::spawn(move || for _ in lines {});
            return (child, addr.parse().expect("listen address"));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("leafctl serve did not start");
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn main() {
    // `cargo test --benches` runs this target without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Ok(urls) = std::env::var("BURST_URLS") else {
        eprintln!("burst: set BURST_URLS='name=URL ...' (scripts/bench burst does)");
        return;
    };
    let bin = env_or("BURST_BIN", "target/release/leafctl");
    let rtts: Vec<u64> = env_or("BURST_RTTS", "0 2 20")
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    let secs: u64 = env_or("BURST_SECONDS", "10").parse().unwrap_or(10);
    let conns: usize = env_or("BURST_CONNECTIONS", "32").parse().unwrap_or(32);
    let password = std::env::var("LEAF_DB_PASSWORD").ok();
    println!(
        "== a cold tag (step 1000) hit by {conns} keep-alive clients for {secs} s, the database behind a delaying proxy =="
    );
    println!(
        "{:<11} {:>6} {:>10} {:>9} {:>7} {:>8} {:>8} {:>8}  steps",
        "database", "rtt", "claim", "answers", "errors", "p50", "p99", "max"
    );
    for pair in urls.split_whitespace() {
        let (name, url) = pair.split_once('=').unwrap_or((pair, pair));
        for &rtt in &rtts {
            let proxy = proxy::Proxy::start(target(url));
            proxy.set_delay(Duration::from_micros(rtt * 500));
            let far = through(url, &proxy);
            let tag = format!("burst-{}-{rtt}-{}", name.to_lowercase(), std::process::id());
            let store = open_store(&far, password.as_deref(), OpenMode::Existing)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let _ = store.add(&tag, 1, 1000, None, true);
            let probe = format!("{tag}-probe");
            let _ = store.add(&probe, 1, 1000, None, true);
            let mut claims: Vec<Duration> = (0..11)
                .map(|_| {
                    let t = Instant::now();
                    store
                        .claim(&probe, Increment::Custom(1000))
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    t.elapsed()
                })
                .collect();
            claims.sort();
            drop(store);
            let (mut child, addr) = serve(&bin, &far);
            let stop = Arc::new(AtomicBool::new(false));
            let sampler = {
                let (stop, tag) = (stop.clone(), tag.clone());
                std::thread::spawn(move || {
                    let mut steps: Vec<u64> = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let cache: serde_json::Value =
                            serde_json::from_str(&body(addr, "/cache")).unwrap_or_default();
                        for e in cache.as_array().into_iter().flatten() {
                            if e["key"] != tag.as_str() {
                                continue;
                            }
                            for k in ["step0", "step1"] {
                                let step = e[k]
                                    .as_str()
                                    .and_then(|s| s.parse().ok())
                                    .or_else(|| e[k].as_u64())
                                    .unwrap_or(0);
                                if step > 0 && !steps.contains(&step) {
                                    steps.push(step);
                                }
                            }
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    steps
                })
            };
            let deadline = Instant::now() + Duration::from_secs(secs);
            let path = format!("/api/segment/get/{tag}");
            let clients: Vec<_> = (0..conns)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || {
                        let mut lat = Vec::new();
                        let mut errors = 0u64;
                        let Ok(s) = TcpStream::connect(addr) else {
                            return (lat, 1);
                        };
                        let _ = s.set_nodelay(true);
                        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                        let mut conn = BufReader::new(s);
                        while Instant::now() < deadline && lat.len() < 5_000_000 {
                            let t = Instant::now();
                            match get(&mut conn, &path) {
                                Some(200) => lat.push(t.elapsed()),
                                Some(_) => errors += 1,
                                None => {
                                    errors += 1;
                                    break;
                                }
                            }
                        }
                        (lat, errors)
                    })
                })
                .collect();
            let mut lat = Vec::new();
            let mut errors = 0;
            for c in clients {
                let (l, e) = c.join().expect("client");
                lat.extend(l);
                errors += e;
            }
            stop.store(true, Ordering::Relaxed);
            let steps = sampler.join().expect("sampler");
            // SAFETY: kill(2) on the child this bench started.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
            let _ = child.wait();
            lat.sort();
            println!(
                "{:<11} {:>4}ms {:>8.1}ms {:>9} {:>7} {:>6.2}ms {:>6.2}ms {:>6.1}ms  {}",
                name,
                rtt,
                claims[claims.len() / 2].as_secs_f64() * 1000.0,
                lat.len(),
                errors,
                pct(&lat, 0.5),
                pct(&lat, 0.99),
                pct(&lat, 1.0),
                steps
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
}
