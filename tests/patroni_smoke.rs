//! The Patroni test cluster itself ([`support::patroni`]): a leader lost like a machine is
//! replaced by its synchronous standby with the committed row, the multi-host URL finds the new
//! leader, and the old leader rejoins as a replica with what was written meanwhile.

mod support;

use std::time::{Duration, Instant};

use support::etcd::EtcdServer;
use support::patroni::{PatroniCluster, psql};
use support::wait_until;

#[test]
fn a_crashed_leader_fails_over_and_rejoins_as_a_replica() {
    let etcd = EtcdServer::start();
    let started = Instant::now();
    let cluster = PatroniCluster::start(&etcd);
    eprintln!("cluster {} up in {:.1?}", cluster.scope, started.elapsed());

    let old = cluster.leader().expect("a leader");
    cluster.sql(old, "leaf", "CREATE TABLE t (id int PRIMARY KEY, v text)");
    // Through the multi-host URL, as the role leaf: it lands on the leader.
    psql(&cluster.url("leaf"), "INSERT INTO t VALUES (1, 'before')").expect("insert via url");
    assert!(
        cluster.wait_settled(Duration::from_secs(30)),
        "not settled before the crash\n{}",
        cluster.logs(40)
    );

    let crashed = Instant::now();
    cluster.crash(old);
    let mut new = None;
    let promoted = wait_until(Duration::from_secs(30), || {
        new = cluster.leader().filter(|&l| l != old);
        new.is_some()
    });
    assert!(promoted, "no new leader within 30 s\n{}", cluster.logs(40));
    let new = new.unwrap();
    eprintln!(
        "node {old} crashed; node {new} leads after {:.1?}",
        crashed.elapsed()
    );

    assert_eq!(
        cluster.sql(new, "leaf", "SELECT v FROM t WHERE id = 1"),
        "before"
    );
    // The URL skips the dead node and any replica.
    let wrote = wait_until(Duration::from_secs(30), || {
        psql(&cluster.url("leaf"), "INSERT INTO t VALUES (2, 'after')").is_ok()
    });
    assert!(
        wrote,
        "no write through the URL after the failover\n{}",
        cluster.logs(40)
    );
    assert_eq!(
        cluster.sql(new, "leaf", "SELECT v FROM t WHERE id = 2"),
        "after"
    );
    eprintln!(
        "written on the new leader {:.1?} after the crash",
        crashed.elapsed()
    );

    let restarted = Instant::now();
    cluster.start_node(old);
    let rejoined = wait_until(Duration::from_secs(60), || {
        cluster.is_replica(old)
            && cluster
                .try_sql(old, "leaf", "SELECT v FROM t WHERE id = 2")
                .is_ok_and(|v| v == "after")
    });
    assert!(
        rejoined,
        "node {old} did not rejoin as a replica with the new row within 60 s\n{}",
        cluster.logs(60)
    );
    eprintln!(
        "node {old} rejoined as a replica in {:.1?}",
        restarted.elapsed()
    );
    assert_eq!(cluster.leader(), Some(new));
    assert!(
        cluster.wait_settled(Duration::from_secs(60)),
        "not settled after the rejoin\n{}",
        cluster.logs(40)
    );
    eprintln!(
        "settled again {:.1?} after the restart",
        restarted.elapsed()
    );
}
