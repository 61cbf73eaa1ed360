//! `leafctl serve` in snowflake mode with worker ids from a real ZooKeeper 3.8: Leaf's own tree,
//! two servers under concurrent load, an expired session replaced by itself, and SIGTERM giving
//! the lease back.

use crate::support;

use std::time::{Duration, Instant};

use support::serve::{Serve, Server, hammer};
use support::snowflake::{assert_later_on_the_same_worker, now_ms, worker_of};
use support::zookeeper::{RawZk, ZkServer};
use support::{Sandbox, assert_unique};

#[test]
fn a_forever_server_takes_the_worker_id_leaf_gave_its_identity() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    let before = now_ms() - 1_000;
    raw.leaf_register("leafsrv", "10.0.0.1", "8080", before);
    raw.leaf_register("leafsrv", "10.0.0.2", "8080", before);
    let ours = raw.leaf_register("leafsrv", "10.9.8.7", "8080", before);
    assert!(ours.ends_with("-0000000002"), "{ours}");

    let sb = Sandbox::new();
    let s = Serve::snowflake(&sb)
        .before(["--zk", &zk.hosts(), "--name", "leafsrv"])
        .args(["--registry", "forever", "--instance", "10.9.8.7:8080"])
        .start();
    let id = s.get("/api/snowflake/get/leaf").id();
    assert_eq!(worker_of(id), 2, "Leaf's sequence is the worker id");
    let d = s
        .get(&format!("/decodeSnowflakeId?snowflakeId={id}"))
        .json();
    assert_eq!(d["workerId"], "2");
    let ready = s.get("/readyz");
    assert_eq!(ready.status, 200, "{ready:?}");
    assert!(
        s.get("/metrics")
            .body
            .contains("leaf_snowflake_worker_id 2")
    );
    s.stop_cleanly();
    // The node keeps Leaf's JSON, with a fresh timestamp.
    let data = raw.get(&ours).unwrap();
    let obj: serde_json::Value = serde_json::from_slice(&data).unwrap();
    assert_eq!(obj["ip"], "10.9.8.7");
    assert_eq!(obj["port"], "8080");
    assert!(obj["timestamp"].as_i64().unwrap() > before);
}

#[test]
fn two_leased_servers_in_one_zookeeper_never_share_an_id() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let pair = Serve::snowflake(&sb).before(["--zk", &zk.hosts(), "--name", "pair"]);
    let (a, b) = (pair.start(), pair.start());
    let wa = worker_of(a.get("/api/snowflake/get/k").id());
    let wb = worker_of(b.get("/api/snowflake/get/k").id());
    assert_ne!(wa, wb, "distinct worker ids");
    let mut ids = hammer(&[a.addr, b.addr], 6, 300, "/api/snowflake/get/k");
    support::assert_n_unique(&mut ids, 6 * (270 + 30 * 100));
    let workers: std::collections::BTreeSet<u64> = ids.iter().map(|&i| worker_of(i)).collect();
    assert_eq!(workers, [wa, wb].into_iter().collect());
}

#[test]
fn an_expired_session_is_replaced_and_no_time_is_reused() {
    let zk = ZkServer::start();
    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_ZK_SESSION_TIMEOUT_MS", "2000")
        .args(support::words(&format!(
            "--zk {} --name expiry serve --snowflake",
            zk.hosts()
        )));
    let s = Server::start(cmd);
    let path = "/api/snowflake/get/k";
    let old = s.get(&format!("{path}?count=20000")).ids();

    zk.pause();
    // Issuing stops once the session is disconnected: a clear 503, never an ID it cannot vouch for.
    let (during, refused) = s.ids_until_refused(path, Duration::from_millis(20));
    refused.assert_lease_refusal();
    assert_eq!(s.get("/readyz").status, 503);
    // Past the session timeout, then ZooKeeper comes back and expires the session.
    std::thread::sleep(Duration::from_secs(4));
    zk.resume();

    s.wait_until_issuing(path, Duration::from_secs(60));
    let new = s.get(&format!("{path}?count=20000")).ids();
    assert_later_on_the_same_worker(&[&old[..], &during].concat(), &new);
    let metrics = s.get("/metrics").body;
    assert!(
        metrics.contains("leaf_snowflake_lease_acquisitions_total 2"),
        "{metrics}"
    );
    assert_eq!(s.get("/readyz").status, 200);
    let mut all: Vec<u64> = old.into_iter().chain(during).chain(new).collect();
    assert_unique(&mut all);
    s.stop_cleanly();
}

#[test]
fn sigterm_gives_the_lease_back_at_once() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let s = Serve::snowflake(&sb)
        .before(["--zk", &zk.hosts(), "--name", "release"])
        .start();
    let served = s.get("/api/snowflake/get/k?count=5000").ids();
    let worker = worker_of(served[0]);
    s.stop_cleanly();

    // Nobody holds it any more ...
    let out = sb.run_ok(support::words(&format!(
        "--zk {} --name release workers list --output json",
        zk.hosts()
    )));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in rows.as_array().unwrap() {
        assert_eq!(r["held"], false, "{r}");
    }
    // ... and the next holder gets the same id at once, after every time the server used.
    let t = Instant::now();
    let out = support::run_ok(
        sb.leafctl()
            .timeout(Duration::from_secs(60))
            .args(support::words(&format!(
                "--zk {} --name release next --snowflake -n 3",
                zk.hosts()
            ))),
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let next = support::parse_ids(&out.stdout);
    assert_eq!(worker_of(next[0]), worker);
    assert!(next[0] > *served.iter().max().unwrap());
}
