//! Fault suite, crashes (RELIABILITY.md scenarios 1 and 2): `kill -9` of `leafctl next` in the
//! middle of a long run and of `leafctl serve` under load, then a new run or server at once.
//! Every ID a killed process managed to hand out is collected and none may come again.
//!
//! One private MariaDB and one private ZooKeeper serve every test of this binary.

use crate::support;

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use support::assert_unique;
use support::env::{Env, Tables};
use support::fault::{Load, complete_ids};
use support::mariadb::MariaDb;
use support::serve::signal;
use support::snowflake::{time_of, worker_of};
use support::zookeeper::ZkServer;

/// How a run is killed: after a delay from its start (perhaps before or inside its claim), or
/// once it has printed some output.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    AfterMs(u64),
    AfterBytes(usize),
}

/// Starts `args`, kills it (SIGKILL) at `at`, and returns the IDs it printed in full.
fn kill_run(env: &Env, args: &[&str], at: KillAt) -> Vec<u64> {
    let mut child = env.spawn(args);
    let mut out = child.stdout.take().unwrap();
    let mut printed = Vec::new();
    match at {
        KillAt::AfterMs(ms) => std::thread::sleep(Duration::from_millis(ms)),
        KillAt::AfterBytes(n) => {
            let mut buf = vec![0u8; 64 * 1024];
            let deadline = Instant::now() + Duration::from_secs(60);
            while printed.len() < n && Instant::now() < deadline {
                match out.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => printed.extend_from_slice(&buf[..k]),
                }
            }
        }
    }
    signal(child.id(), libc::SIGKILL);
    let status = child.wait().unwrap();
    out.read_to_end(&mut printed).unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGKILL),
        "{args:?} ended by itself ({status}) before the kill at {at:?}"
    );
    complete_ids(&printed)
}

/// Scenario 1, segment mode: kills at several points (before, during and after the one claim
/// transaction), then checks every printed ID is unique and the next run starts above them all.
fn kill_segment_runs(env: &Env) {
    env.ok(&["tag", "add", "big", "--step", "1000"]);
    let args = ["next", "big", "-n", "10000000"];
    let mut all = Vec::new();
    let mut printed_runs = 0;
    for at in [
        KillAt::AfterMs(0),
        KillAt::AfterMs(5),
        KillAt::AfterMs(30),
        KillAt::AfterBytes(1),
        KillAt::AfterBytes(2_000_000),
    ] {
        let ids = kill_run(env, &args, at);
        // What one run printed is one claim, ascending and without gaps.
        assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{at:?}");
        if !ids.is_empty() {
            printed_runs += 1;
        }
        all.extend(ids);
    }
    assert!(printed_runs >= 2, "the kills after output saw IDs");
    let high = *all.iter().max().unwrap();
    let next = env.ids(&["next", "big", "-n", "1000"]);
    assert_eq!(next.len(), 1000);
    assert!(
        next[0] > high,
        "a killed run's whole claim is used up: {} <= {high}",
        next[0]
    );
    all.extend(next);
    assert_unique(&mut all);
}

#[test]
fn killed_segment_runs_on_sqlite_never_repeat_an_id() {
    kill_segment_runs(&Env::sqlite());
}

#[test]
fn killed_segment_runs_on_mariadb_never_repeat_an_id() {
    kill_segment_runs(&Env::mariadb(MariaDb::shared(), Tables::DbInit).forget_db());
}

/// Scenario 1, snowflake mode: kills mid-run with `registry_args`, reruns at once each time;
/// returns every ID with the run it came from.
fn kill_snowflake_runs(env: &Env, registry_args: &[&str], kills: usize) -> Vec<Vec<u64>> {
    let mut args = vec!["next", "--snowflake", "-n", "10000000"];
    args.extend(registry_args);
    let mut runs = Vec::new();
    for i in 0..kills {
        let at = KillAt::AfterBytes(200_000 * (i + 1));
        let ids = kill_run(env, &args, at);
        assert!(!ids.is_empty(), "run {i} printed nothing before the kill");
        runs.push(ids);
    }
    let mut rerun = vec!["next", "--snowflake", "-n", "20000"];
    rerun.extend(registry_args);
    runs.push(env.ids(&rerun));
    let mut all: Vec<u64> = runs.iter().flatten().copied().collect();
    assert_unique(&mut all);
    runs
}

/// For every worker id used by more than one run: each later run starts after every time an
/// earlier run with that id used.
fn assert_no_time_reused(runs: &[Vec<u64>]) {
    let mut last: BTreeMap<u64, i64> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        let worker = worker_of(run[0]);
        assert!(run.iter().all(|&id| worker_of(id) == worker));
        let (first, end) = (
            time_of(run[0]),
            run.iter().map(|&id| time_of(id)).max().unwrap(),
        );
        if let Some(&before) = last.get(&worker) {
            assert!(
                first > before,
                "run {i} on worker {worker} started at {first} <= {before}, a time used before"
            );
        }
        last.insert(
            worker,
            end.max(last.get(&worker).copied().unwrap_or(i64::MIN)),
        );
    }
}

#[test]
fn killed_snowflake_runs_with_a_local_worker_id_never_repeat_an_id() {
    let env = Env::sqlite();
    let runs = kill_snowflake_runs(&env, &["--worker-id", "3"], 3);
    assert_no_time_reused(&runs);
}

#[test]
fn killed_snowflake_runs_with_a_zookeeper_lease_never_repeat_an_id() {
    let env = Env::zookeeper(&ZkServer::shared().hosts(), "killlease", 2_000);
    // A rerun at once finds the killed run's lease still held (its session has not expired).
    let runs = kill_snowflake_runs(&env, &[], 2);
    let workers: Vec<u64> = runs.iter().map(|r| worker_of(r[0])).collect();
    assert_eq!(workers[0], 0, "{workers:?}");
    eprintln!("workers of the runs: {workers:?}");
    assert_no_time_reused(&runs);
    // Once the sessions expire, worker 0 is free again: the new holder starts after every time
    // the killed one reserved.
    std::thread::sleep(Duration::from_secs(4));
    let later = env.ids(&["next", "--snowflake", "-n", "1000"]);
    assert_eq!(worker_of(later[0]), 0);
    let mut all: Vec<Vec<u64>> = runs;
    all.push(later);
    assert_no_time_reused(&all);
    let mut flat: Vec<u64> = all.into_iter().flatten().collect();
    assert_unique(&mut flat);
}

#[test]
fn killed_snowflake_runs_in_forever_mode_never_repeat_an_id() {
    let env = Env::zookeeper(&ZkServer::shared().hosts(), "killforever", 2_000);
    let runs = kill_snowflake_runs(
        &env,
        &["--registry", "forever", "--instance", "10.40.0.1:8080"],
        2,
    );
    // One identity, one worker id for ever.
    assert!(
        runs.iter()
            .all(|r| worker_of(r[0]) == worker_of(runs[0][0]))
    );
    assert_no_time_reused(&runs);
}

/// Scenario 2: `serve` killed (SIGKILL) under load from a few threads, restarted at once, loaded
/// again; `rounds` times. Returns the IDs answered by each server.
fn kill_serve_under_load(
    env: &Env,
    serve_args: &[&str],
    path: &str,
    rounds: usize,
) -> Vec<Vec<u64>> {
    let mut answered = Vec::new();
    let mut server = env.serve(serve_args);
    for round in 0..=rounds {
        let load = Load::start(
            server.addr,
            path,
            3,
            50,
            Duration::from_millis(2),
            Duration::from_secs(60),
        );
        assert!(
            load.wait_for_answers(150, Duration::from_secs(30)),
            "no answers; {}",
            server.stderr()
        );
        if round == rounds {
            let seen = load.stop();
            assert_eq!(
                seen.statuses.keys().copied().collect::<Vec<_>>(),
                vec![200],
                "{seen:?}"
            );
            answered.push(seen.ids);
            server.stop_cleanly();
            break;
        }
        server.kill();
        let seen = load.stop();
        assert!(
            seen.statuses.keys().all(|&s| s == 200),
            "only IDs before the kill: {:?}",
            seen.errors
        );
        answered.push(seen.ids);
        let t = Instant::now();
        server = env.serve(serve_args);
        eprintln!("round {round}: restarted in {:?}", t.elapsed());
    }
    let mut all: Vec<u64> = answered.iter().flatten().copied().collect();
    assert_unique(&mut all);
    answered
}

#[test]
fn killed_segment_servers_on_sqlite_and_mariadb_never_repeat_an_id() {
    for env in [
        Env::sqlite(),
        Env::mariadb(MariaDb::shared(), Tables::DbInit).forget_db(),
    ] {
        env.ok(&["tag", "add", "served", "--step", "500"]);
        let runs = kill_serve_under_load(&env, &["--segment"], "/api/segment/get/served", 2);
        for (i, pair) in runs.windows(2).enumerate() {
            let high = pair[0].iter().max().unwrap();
            assert!(
                pair[1].iter().min().unwrap() > high,
                "server {} answered below what server {i} had claimed",
                i + 1
            );
        }
    }
}

/// Every run (the first server and each restart) issued on one worker ID, and no time of it
/// twice.
fn assert_one_worker_and_no_time_reused(runs: &[Vec<u64>]) {
    let workers: Vec<u64> = runs.iter().map(|r| worker_of(r[0])).collect();
    assert!(
        workers.iter().all(|w| *w == workers[0]),
        "the runs' workers: {workers:?}"
    );
    assert_no_time_reused(runs);
}

#[test]
fn killed_snowflake_servers_with_local_and_mysql_worker_ids_never_repeat_an_id() {
    let local = Env::sqlite();
    let runs = kill_serve_under_load(
        &local,
        &["--snowflake", "--worker-id", "5"],
        "/api/snowflake/get/k",
        2,
    );
    assert_no_time_reused(&runs);

    let mysql = Env::mariadb(MariaDb::shared(), Tables::DbInit).forget_db();
    let args = support::words("--snowflake --registry mysql --instance 10.40.1.1:8080");
    let runs = kill_serve_under_load(&mysql, &args, "/api/snowflake/get/k", 2);
    // The row of this identity, and its lock, come back at once to the restarted server.
    assert_one_worker_and_no_time_reused(&runs);
}

#[test]
fn killed_snowflake_servers_with_zookeeper_leases_and_forever_nodes_never_repeat_an_id() {
    let lease = Env::zookeeper(&ZkServer::shared().hosts(), "servelease", 2_000);
    let runs = kill_serve_under_load(&lease, &["--snowflake"], "/api/snowflake/get/k", 2);
    // A restart leases a free id while the killed server's session lives on, or the same id
    // once it expired: either way after every time reserved on it.
    let workers: Vec<u64> = runs.iter().map(|r| worker_of(r[0])).collect();
    eprintln!("workers of the servers: {workers:?}");
    assert_no_time_reused(&runs);

    let forever = Env::zookeeper(&ZkServer::shared().hosts(), "serveforever", 2_000);
    let args = support::words("--snowflake --registry forever --instance 10.40.2.1:8080");
    let runs = kill_serve_under_load(&forever, &args, "/api/snowflake/get/k", 2);
    assert_one_worker_and_no_time_reused(&runs);
}
