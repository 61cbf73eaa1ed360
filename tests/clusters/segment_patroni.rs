//! Segment mode on a real high-availability PostgreSQL: a private 3-node Patroni cluster
//! (synchronous replication, the tests' etcd as its DCS) behind a libpq host list. Three
//! `serve --segment` under load; the leader is lost like a machine, a synchronous standby is
//! promoted, the old leader comes back as a replica. No ID twice, no failed answer outside the
//! promotion window (until 5 s after the new leader can commit); the timeline is printed.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::etcd::EtcdServer;
use support::patroni::PatroniCluster;
use support::serve::{Answer, Server, two_loads_each};
use support::{Sandbox, assert_unique, wait_until};

/// How long after the new leader can commit every server may still fail a request: its next
/// claim finds the old leader gone (refused at once) and connects to the next host of its list.
/// The new leader can commit once a synchronous standby streams from it (`synchronous_mode`):
/// usually at its promotion, but once in a few runs seconds later, when the other standby
/// follows it late; until then every commit, a claim's included, waits.
const AFTER_PROMOTION: Duration = Duration::from_secs(5);

#[test]
fn three_servers_ride_out_a_leader_lost_and_its_return_as_a_replica() {
    let etcd = EtcdServer::start();
    let cluster = PatroniCluster::start(&etcd);
    let ports: Vec<u16> = cluster.nodes.iter().map(|n| n.pg_port).collect();
    // Server i lists node i first: each starts on another host and finds the leader.
    let url = |i: usize| {
        let hosts: Vec<String> = (0..3)
            .map(|k| format!("127.0.0.1:{}", ports[(i + k) % 3]))
            .collect();
        format!("postgres://leaf@{}/leaf", hosts.join(","))
    };
    let sb = Sandbox::new();
    for args in [&["db", "init"][..], &["tag", "add", "s", "--step", "200"]] {
        support::run_ok(sb.leafctl().arg("--db").arg(url(0)).args(args));
    }
    let servers: Vec<Server> = (0..3)
        .map(|i| {
            let mut c = sb.leafctl_std();
            c.args(["--db", &url(i), "serve", "--segment"])
                .env("LEAF_LOG", "leafctl=info");
            Server::start(c)
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let loads = two_loads_each(&servers, "/api/segment/get/s", &stop);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(2));

    let old = cluster.leader().expect("a leader");
    let lost_at = Instant::now();
    cluster.crash(old);
    let mut new = None;
    let promoted = wait_until(Duration::from_secs(30), || {
        new = cluster.leader().filter(|&l| l != old);
        new.is_some()
    });
    let promoted_at = Instant::now();
    assert!(promoted, "no new leader\n{}", cluster.logs(40));
    // When the new leader can commit: watched while the test waits below (it may wait for
    // the old leader's return as its synchronous standby).
    let leader = new.expect("a new leader");
    let mut writable_at = None;
    let mut watch = || {
        if writable_at.is_none() && cluster.commits(leader) {
            writable_at = Some(Instant::now());
        }
        writable_at.is_some()
    };
    wait_until(Duration::from_secs(3), || {
        watch();
        false
    });
    let restart_at = Instant::now();
    cluster.start_node(old);
    let rejoined = wait_until(Duration::from_secs(60), || {
        watch();
        cluster.is_replica(old)
    });
    let rejoined_at = Instant::now();
    wait_until(Duration::from_secs(60), &mut watch);
    let writable_at = writable_at
        .unwrap_or_else(|| panic!("node {leader} never committed\n{}", cluster.logs(40)));
    // The load goes on past the window, so each server is seen answering again.
    let window_end = writable_at.max(promoted_at) + AFTER_PROMOTION;
    std::thread::sleep(
        window_end.saturating_duration_since(Instant::now()) + Duration::from_secs(1),
    );
    stop.store(true, Ordering::Relaxed);
    let per_thread: Vec<Vec<Answer>> = loads.into_iter().map(|h| h.join().unwrap()).collect();
    for s in servers {
        s.stop_cleanly();
    }
    assert!(
        rejoined,
        "the old leader did not rejoin\n{}",
        cluster.logs(40)
    );

    let all: Vec<&Answer> = per_thread.iter().flatten().collect();
    let failed: Vec<&&Answer> = all.iter().filter(|a| a.1 != 200).collect();
    let ms = |t: Instant| t.saturating_duration_since(t0).as_millis();
    // When each server answered again after the loss: its first 200 after its last failure.
    let back: Vec<u128> = (0..3)
        .map(|i| {
            let mine: Vec<&Answer> = per_thread[2 * i..2 * i + 2].iter().flatten().collect();
            let last_fail = mine
                .iter()
                .filter(|a| a.1 != 200)
                .map(|a| a.0)
                .max()
                .unwrap_or(lost_at);
            mine.iter()
                .filter(|a| a.1 == 200 && a.0 > last_fail)
                .map(|a| ms(a.0))
                .min()
                .unwrap_or(u128::MAX)
        })
        .collect();
    let first_fail = failed.iter().map(|a| a.0).min();
    let last_fail = failed.iter().map(|a| a.0).max();
    eprintln!(
        "patroni leader loss: node {old} lost at {} ms, node {} promoted by {} ms and \
         committing by {} ms, old leader restarted at {} ms and a replica again by {} ms; {} \
         answers, {} not 200 (first at {:?} ms, last at {:?} ms); each server issuing again by \
         {back:?} ms",
        ms(lost_at),
        leader,
        ms(promoted_at),
        ms(writable_at),
        ms(restart_at),
        ms(rejoined_at),
        all.len(),
        failed.len(),
        first_fail.map(ms),
        last_fail.map(ms),
    );
    assert!(
        failed.iter().all(|a| a.1 == 503),
        "every failure is a 503: {:?}",
        failed
            .iter()
            .map(|a| a.1)
            .collect::<std::collections::BTreeSet<_>>()
    );
    if let (Some(first), Some(last)) = (first_fail, last_fail) {
        assert!(first >= lost_at, "a failure before the leader was lost");
        assert!(
            last <= window_end,
            "a failure {} ms after the new leader could commit",
            last.saturating_duration_since(writable_at).as_millis()
        );
    }
    for (i, t) in back.iter().enumerate() {
        assert!(*t < u128::MAX, "server {i} never answered again");
    }
    let mut ids: Vec<u64> = all.iter().filter_map(|a| a.2).collect();
    assert!(ids.len() > 1000, "{} IDs", ids.len());
    assert_unique(&mut ids);
}
