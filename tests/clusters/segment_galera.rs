//! Segment mode on a 3-node MariaDB Galera cluster (a private one for this test binary):
//! claims from several writers at once, certification conflicts, and a node lost and back.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use support::env::Env;
use support::galera::Galera;
use support::mariadb::PASSWORD;
use support::serve::{Answer, Server, two_loads_each};
use support::{assert_unique, parse_ids, spawn_piped, wait_until};

/// The tests share one cluster and one of them kills a node: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The issue's reproduction: six `next g -n 1` at a time, alternating between nodes 0 and 1,
/// 20 rounds. Before the fix some runs failed with Galera's certification conflict (error 1213)
/// and, worse, two runs printed the same ID. Now every run succeeds (conflicts are retried),
/// no ID repeats, and max_id moved by exactly the number of IDs printed: every run's claim
/// committed.
#[test]
fn concurrent_claims_on_two_nodes_never_repeat_and_all_commit() {
    let _one = serial();
    let env = Env::galera();
    env.ok_on(0, &["tag", "add", "g", "--step", "100"]);
    let before = env.max_id_on(0, "g");
    let mut ids = Vec::new();
    let mut failures = Vec::new();
    let mut retries = 0;
    for _round in 0..20 {
        let children: Vec<_> = (0..6)
            .map(|i| spawn_piped(&mut env.cmd_on(i % 2, &["next", "g", "-n", "1"])))
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            retries += String::from_utf8_lossy(&out.stderr)
                .matches("lost a write conflict")
                .count();
            if out.status.success() {
                ids.extend(parse_ids(&out.stdout));
            } else {
                failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
            }
        }
    }
    let printed = ids.len() as i64;
    assert_unique(&mut ids);
    let moved = env.max_id_on(0, "g") - before;
    assert_eq!(
        moved, printed,
        "max_id moved by {moved} but {printed} IDs were printed: a claim that never committed was issued"
    );
    assert!(
        failures.is_empty(),
        "{} of 120 runs failed, e.g.: {}",
        failures.len(),
        failures[0]
    );
    eprintln!(
        "120 runs: {retries} conflicts retried, {} failed",
        failures.len()
    );
    // The other nodes agree.
    for node in 1..3 {
        assert_eq!(env.max_id_on(node, "g") - before, printed);
    }
}

/// Operators change a tag's step and bump it on nodes 1 and 2 while claims run on node 0: on
/// Galera the `UPDATE`s certify against each other, and the loser gets error 1213 as a claim
/// does. Every run succeeds (tag commands are tried again as claims are; before, `set-step` and
/// `bump` gave up at the first conflict), no ID repeats, the row ends above the last bump, and
/// the step ends as the last command left it.
#[test]
fn tag_commands_on_other_nodes_during_claims_all_succeed() {
    let _one = serial();
    let env = Env::galera();
    env.ok_on(0, &["tag", "add", "s", "--step", "100"]);
    let mut ids = Vec::new();
    let mut failures = Vec::new();
    let mut retries = 0;
    for round in 0..15 {
        let mut children: Vec<_> = (0..3)
            .map(|_| env.cmd_on(0, &["next", "s", "-n", "1"]))
            .collect();
        for node in [1, 2, 1] {
            let step = (100 + round).to_string();
            children.push(env.cmd_on(node, &["tag", "set-step", "s", &step]));
        }
        let to = (1_000_000_000 + round * 1_000_000).to_string();
        children.push(env.cmd_on(2, &["tag", "bump", "s", "--to", &to]));
        let running: Vec<_> = children
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| (i < 3, spawn_piped(&mut c)))
            .collect();
        for (is_next, child) in running {
            let out = child.wait_with_output().unwrap();
            retries += String::from_utf8_lossy(&out.stderr)
                .matches("lost a write conflict")
                .count();
            if out.status.success() {
                if is_next {
                    ids.extend(parse_ids(&out.stdout));
                }
            } else {
                failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
            }
        }
    }
    eprintln!(
        "105 runs (45 next, 45 set-step, 15 bump): {retries} conflicts retried, {} failed",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of 105 runs failed, e.g.: {}",
        failures.len(),
        failures[0]
    );
    assert_eq!(ids.len(), 45);
    assert_unique(&mut ids);
    // The last bump moved the row to at least 1,014,000,000; claims went on above it.
    let max_id = env.max_id_on(0, "s");
    assert!(max_id >= 1_014_000_000, "{max_id}");
    let shown = env.ok_on(2, &["tag", "show", "s", "--output", "json"]);
    let row: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(row["step"], 114, "{row}");
}

/// Three `serve --segment` processes, server i on node i first (`mysql://...@node_i,node_i+1,
/// node_i+2/db`), under load. Node 1 is killed: every server goes on (from its buffers, then
/// from the other nodes; server 1 fails over); node 1 is restarted (IST) and server 1 claims
/// on it again once it answers. No ID is issued twice; the timeline is printed.
#[test]
fn three_servers_survive_a_node_killed_and_use_it_again_after_its_restart() {
    let _one = serial();
    let env = Env::galera();
    env.ok_on(0, &["tag", "add", "s", "--step", "200"]);
    let cluster = env.db;
    let servers: Vec<Server> = (0..3)
        .map(|i| {
            let url = cluster.url_list(&[i, (i + 1) % 3, (i + 2) % 3], &env.name);
            let mut c = env.sandbox.leafctl_std();
            c.args(["--db", &url, "serve", "--segment"])
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .env("LEAF_LOG", "leafctl=info");
            Server::start(c)
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let loads = two_loads_each(&servers, "/api/segment/get/s", &stop);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(2));

    let killed_at = Instant::now();
    cluster.kill(1);
    let evicted_at = Instant::now();
    std::thread::sleep(Duration::from_secs(4));
    let restart_at = Instant::now();
    cluster.restart(1);
    let synced_at = Instant::now();
    // Server 1 moves back to node 1 within FAILBACK_AFTER; its claims then commit there.
    let used_again = wait_until(Duration::from_secs(30), || {
        cluster
            .status(1, "wsrep_local_commits")
            .parse::<u64>()
            .unwrap_or(0)
            > 0
    });
    let used_at = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    let per_thread: Vec<Vec<Answer>> = loads.into_iter().map(|h| h.join().unwrap()).collect();
    for s in servers {
        s.stop_cleanly();
    }

    let all: Vec<&Answer> = per_thread.iter().flatten().collect();
    let mut ids: Vec<u64> = all.iter().filter_map(|r| r.2).collect();
    let failed = all.iter().filter(|r| r.1 != 200).count();
    let during = |from: Instant, to: Instant, server: usize| {
        per_thread[2 * server..2 * server + 2]
            .iter()
            .flatten()
            .filter(|r| r.0 >= from && r.0 < to && r.1 == 200)
            .count()
    };
    let ms = |t: Instant| t.duration_since(t0).as_millis();
    eprintln!(
        "galera node loss: killed at {} ms, evicted by {} ms, restarted at {} ms, synced (IST) \
         at {} ms, claimed on again by {} ms; {} answers, {} not 200; IDs during the outage by \
         server: {:?}",
        ms(killed_at),
        ms(evicted_at),
        ms(restart_at),
        ms(synced_at),
        ms(used_at),
        all.len(),
        failed,
        (0..3)
            .map(|i| during(killed_at, restart_at, i))
            .collect::<Vec<_>>()
    );
    assert!(used_again, "node 1 was not used again after its restart");
    for i in 0..3 {
        assert!(
            during(evicted_at, restart_at, i) > 0,
            "server {i} issued nothing while node 1 was down"
        );
    }
    assert!(
        failed * 100 <= all.len(),
        "{failed} of {} requests failed",
        all.len()
    );
    assert_unique(&mut ids);
}

/// Sets `wsrep_reject_queries` back to NONE on a node when dropped, even when the test fails.
struct RejectingQueries<'a>(&'a Galera, usize);

impl RejectingQueries<'_> {
    /// Node `i` keeps its connections and its place in the cluster but answers every query
    /// with error 1047, as a node that is rejoining (or outside the primary component) does.
    fn start(cluster: &Galera, i: usize) -> RejectingQueries<'_> {
        cluster.nodes[i].root_sql(None, "SET GLOBAL wsrep_reject_queries = ALL");
        RejectingQueries(cluster, i)
    }
}

impl Drop for RejectingQueries<'_> {
    fn drop(&mut self) {
        let _ = self.0.nodes[self.1]
            .root_sql_command(None, "SET GLOBAL wsrep_reject_queries = NONE")
            .output();
    }
}

/// A URL's first node that accepts connections but refuses every query (error 1047, as a
/// rejoining node does) is passed over by what a user runs with a host list: `next`, `tag
/// list`, `tag set-step`, and `serve`'s start and its IDs. Each is answered by the next node,
/// and no ID repeats.
#[test]
fn a_first_node_that_refuses_queries_is_passed_over_by_next_tag_commands_and_serve() {
    let _one = serial();
    let env = Env::galera();
    env.ok_on(0, &["tag", "add", "r", "--step", "100"]);
    let before = parse_ids(&env.ok_on(1, &["next", "r", "-n", "3"]).stdout);
    let url = env.db.url_list(&[0, 1, 2], &env.name);
    let run = |args: &[&str]| {
        let mut c = env.sandbox.leafctl_std();
        c.arg("--db")
            .arg(&url)
            .args(args)
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .env("LEAF_LOG", "leafctl=debug");
        support::run_ok(c)
    };
    let _rejecting = RejectingQueries::start(env.db, 0);
    let refused = env.cmd_on(0, &["tag", "list"]).output().unwrap();
    assert!(
        !refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("1047"),
        "node 0 alone should refuse with 1047: {}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let mut ids = before;
    ids.extend(parse_ids(&run(&["next", "r", "-n", "250"]).stdout));
    let listed = String::from_utf8_lossy(&run(&["tag", "list"]).stdout).into_owned();
    assert!(listed.contains('r'), "tag list: {listed}");
    run(&["tag", "set-step", "r", "50"]);
    assert_eq!(
        env.db.nodes[1]
            .root_sql(
                Some(&env.name),
                "SELECT step FROM leaf_alloc WHERE biz_tag = 'r'"
            )
            .trim(),
        "50"
    );

    let mut c = env.sandbox.leafctl_std();
    c.args(["--db", &url, "serve", "--segment"])
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .env("LEAF_LOG", "leafctl=info");
    let server = Server::try_start(c).unwrap_or_else(|e| panic!("serve did not start: {e}"));
    for _ in 0..20 {
        let r = server.get("/api/segment/get/r");
        assert_eq!(r.status, 200, "{}", r.body);
        ids.push(r.body.trim().parse().unwrap());
    }
    server.stop_cleanly();
    assert_unique(&mut ids);
}
