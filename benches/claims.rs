//! Claims per second against a real database (issue 26): `CLAIM_URLS` names the databases
//! (`name=URL` pairs, space-separated, tables made by `db init`); each gets the same load,
//! `CLAIM_THREADS` threads claiming `CLAIM_STEP` IDs at a time for `CLAIM_SECONDS`, every
//! claim one store call as a server's generator makes it. Prints claims/s and latency
//! percentiles. `scripts/bench claims` starts private MariaDB and PostgreSQL servers and runs it.
//! Bounded in time and in count (at most 10,000,000 claims per database).

use std::time::{Duration, Instant};

use leafctl::db::open_store;
use leafctl::segment::AllocStoreExt;
use leafctl::segment::{AllocStore, Increment};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this target without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Ok(urls) = std::env::var("CLAIM_URLS") else {
        eprintln!("claims: set CLAIM_URLS='name=URL ...' (scripts/bench claims does)");
        return;
    };
    let threads = env_or("CLAIM_THREADS", 4) as usize;
    let step = env_or("CLAIM_STEP", 1000) as i64;
    let secs = env_or("CLAIM_SECONDS", 10);
    let password = std::env::var("LEAF_DB_PASSWORD").ok();
    println!("== claims: {threads} threads, step {step}, {secs} s per database ==");
    for pair in urls.split_whitespace() {
        let (name, url) = pair.split_once('=').unwrap_or((pair, pair));
        let stores: Vec<Box<dyn AllocStore>> = (0..threads)
            .map(|_| {
                open_store(url, password.as_deref(), leafctl::db::OpenMode::Existing)
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
            })
            .collect();
        let tag = format!("bench-{}", std::process::id());
        let _ = stores[0].add(&tag, 1, step, None, true);
        let deadline = Instant::now() + Duration::from_secs(secs);
        let started = Instant::now();
        let per_thread: Vec<Vec<Duration>> = std::thread::scope(|s| {
            let handles: Vec<_> = stores
                .iter()
                .map(|store| {
                    let tag = tag.as_str();
                    s.spawn(move || {
                        let mut lat = Vec::new();
                        while Instant::now() < deadline && lat.len() < 10_000_000 / threads {
                            let t = Instant::now();
                            store
                                .claim(tag, Increment::Custom(step))
                                .unwrap_or_else(|e| panic!("claim: {e}"));
                            lat.push(t.elapsed());
                        }
                        lat
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let took = started.elapsed().as_secs_f64();
        let mut all: Vec<Duration> = per_thread.into_iter().flatten().collect();
        all.sort();
        let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{name:<12} {:>7.0} claims/s  p50 {:.2} ms  p99 {:.2} ms  max {:.1} ms  ({} claims)",
            all.len() as f64 / took,
            ms(pct(0.50)),
            ms(pct(0.99)),
            ms(*all.last().unwrap()),
            all.len()
        );
        let _ = stores[0].remove(&tag);
    }
}
