//! `leafctl serve` in snowflake mode with worker ids leased from a real etcd 3.4: a 3-member cluster
//! losing its leader under load, and a frozen etcd whose lease runs out.

use crate::support;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use support::etcd::EtcdServer;
use support::serve::{Serve, http};
use support::snowflake::{assert_later_on_the_same_worker, worker_of};
use support::{Sandbox, assert_unique, workers_list};

#[test]
fn two_servers_on_a_cluster_losing_its_leader_under_load_never_duplicate_and_resume() {
    let cluster = EtcdServer::cluster(3);
    let sb = Sandbox::new();
    let on_cluster = Serve::snowflake(&sb)
        .env("LEAF_ETCD_LEASE_TTL_MS", "4000")
        .before(["--etcd", &cluster.endpoints(), "--name", "cluster"]);
    let (a, b) = (on_cluster.start(), on_cluster.start());
    let wa = worker_of(a.get("/api/snowflake/get/k").id());
    let wb = worker_of(b.get("/api/snowflake/get/k").id());
    assert_ne!(wa, wb, "distinct worker ids");

    let ids = Mutex::new(Vec::<u64>::new());
    let stop = AtomicBool::new(false);
    let killed_at = Mutex::new(None::<Instant>);
    let ok_after = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..4 {
            let addr = if t % 2 == 0 { a.addr } else { b.addr };
            let (ids, stop, killed_at, ok_after, refused) =
                (&ids, &stop, &killed_at, &ok_after, &refused);
            s.spawn(move || {
                let mut i = 0u64;
                // Bounded: at most 20,000 requests per thread, and the stop flag after ~11 s.
                while !stop.load(Ordering::SeqCst) && i < 20_000 {
                    i += 1;
                    let path = if i.is_multiple_of(10) {
                        "/api/snowflake/get/k?count=50"
                    } else {
                        "/api/snowflake/get/k"
                    };
                    let r = http(addr, "GET", path, &[]).expect("the server answers");
                    if r.status == 200 {
                        ids.lock().unwrap().extend(r.ids());
                        if killed_at
                            .lock()
                            .unwrap()
                            .is_some_and(|k| k.elapsed() > Duration::from_secs(3))
                        {
                            ok_after.fetch_add(1, Ordering::SeqCst);
                        }
                    } else {
                        r.assert_error(503, r.json()["code"].as_str().unwrap_or("?"));
                        refused.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            });
        }
        cluster.kill_leader_under_load(&killed_at, &stop);
    });
    let mut ids = ids.into_inner().unwrap();
    eprintln!(
        "{} IDs; {} requests refused (503) around the election; {} answered more than 3 s after the kill",
        ids.len(),
        refused.load(Ordering::SeqCst),
        ok_after.load(Ordering::SeqCst)
    );
    assert_unique(&mut ids);
    assert!(
        ok_after.load(Ordering::SeqCst) > 0,
        "service did not resume after the leader was killed; {} / {}",
        a.stderr(),
        b.stderr()
    );
    assert_eq!(a.get("/readyz").status, 200, "{}", a.stderr());
    assert_eq!(b.get("/readyz").status, 200, "{}", b.stderr());
    for s in [a, b] {
        s.stop_cleanly();
    }
}

#[test]
fn a_frozen_etcd_stops_issuing_before_the_lease_expires_and_the_server_leases_again() {
    let etcd = EtcdServer::start();
    let sb = Sandbox::new();
    let s = Serve::snowflake(&sb)
        .env("LEAF_ETCD_LEASE_TTL_MS", "3000")
        .before(["--etcd", &etcd.endpoints(), "--name", "frozen"])
        .start();
    let path = "/api/snowflake/get/k";
    let old = s.get(&format!("{path}?count=20000")).ids();

    etcd.first().pause();
    let paused = Instant::now();
    let (during, refused) = s.ids_until_refused(path, Duration::from_millis(10));
    let stopped_after = paused.elapsed();
    refused.assert_lease_refusal();
    assert_eq!(s.get("/readyz").status, 503);
    // The last keep-alive etcd saw was at most TTL/5 = 0.6 s before the pause.
    assert!(
        stopped_after < Duration::from_millis(2_400),
        "stopped only {stopped_after:?} after etcd froze"
    );
    std::thread::sleep(Duration::from_secs(4));
    etcd.first().resume();

    s.wait_until_issuing(path, Duration::from_secs(60));
    let new = s.get(&format!("{path}?count=20000")).ids();
    assert_later_on_the_same_worker(&[&old[..], &during].concat(), &new);
    assert_eq!(s.get("/readyz").status, 200);
    let mut all: Vec<u64> = old.into_iter().chain(during).chain(new).collect();
    assert_unique(&mut all);
    s.stop_cleanly();
    // SIGTERM gave the lease back.
    let v = workers_list(&sb, &["--etcd", &etcd.endpoints(), "--name", "frozen"]);
    assert!(
        v.as_array().unwrap().iter().all(|r| r["held"] == false),
        "{v}"
    );
}
