//! The holder itself frozen: a `serve --snowflake` stopped (SIGSTOP, as a long GC pause or a
//! frozen VM would) past its ZooKeeper session timeout / etcd lease TTL while a second server
//! takes its worker id, then thawed and loaded beside it. The fenced-lease protocol's record
//! keeps them apart: no ID twice, and nothing the thawed server issues on the shared worker id is
//! at a time its successor may use.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::Sandbox;
use support::etcd::EtcdServer;
use support::serve::{Server, ids_until_stopped, signal};
use support::snowflake::{time_of, worker_of};
use support::zookeeper::ZkServer;

const PATH: &str = "/api/snowflake/get/p?count=50";
/// Between a load's requests.
const PAUSE: Duration = Duration::from_millis(5);

fn parts(id: u64) -> (u64, i64) {
    (worker_of(id), time_of(id))
}

/// Starts `leafctl ARGS` (with `env` set) as a server: the first time in one sandbox, every
/// later time in a second one (the frozen holder and its would-be successor).
fn holders_in_turn(env: (&'static str, &'static str), args: String) -> impl Fn() -> Server {
    let (sb_a, sb_b) = (Sandbox::new(), Sandbox::new());
    let which = std::sync::atomic::AtomicUsize::new(0);
    move || {
        let sb = if which.fetch_add(1, Ordering::SeqCst) == 0 {
            &sb_a
        } else {
            &sb_b
        };
        let mut cmd = sb.leafctl_std();
        cmd.env(env.0, env.1).args(support::words(&args));
        Server::start(cmd)
    }
}

/// The scenario for one registry: `start` launches a server on the shared name.
fn frozen_holder_never_shares_its_worker_id(ttl: Duration, start: impl Fn() -> Server) {
    let a = start();
    let before = a.get(PATH).ids();
    let (worker, _) = parts(before[0]);

    // Frozen past the TTL: its session / lease expires and the worker id is free again.
    signal(a.pid(), libc::SIGSTOP);
    std::thread::sleep(ttl * 2 + Duration::from_millis(500));
    let b = start();
    let first_b = b.get(PATH).ids();
    let (b_worker, b_start) = parts(first_b[0]);
    assert_eq!(
        b_worker, worker,
        "the second server takes the frozen one's worker id once it is free"
    );

    // Thawed while the second server is busy on the same worker id.
    let stop = Arc::new(AtomicBool::new(false));
    let limit = Duration::from_secs(20);
    let load_b = ids_until_stopped(b.addr, PATH, stop.clone(), PAUSE, limit);
    std::thread::sleep(Duration::from_millis(300));
    signal(a.pid(), libc::SIGCONT);
    let load_a = ids_until_stopped(a.addr, PATH, stop.clone(), PAUSE, limit);
    std::thread::sleep(ttl * 2 + Duration::from_secs(1));
    stop.store(true, Ordering::SeqCst);
    let from_b = load_b.join().expect("load b");
    let from_a = load_a.join().expect("load a");

    let mut all: Vec<u64> = before
        .iter()
        .chain(&first_b)
        .chain(&from_a)
        .chain(&from_b)
        .copied()
        .collect();
    assert!(from_b.len() > 100, "the successor kept issuing");
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "an ID was issued twice");
    // Whatever the thawed server issued on the shared worker id is below its successor's
    // start: it issued only inside the reservation its successor waited out.
    for &id in &from_a {
        let (w, t) = parts(id);
        if w == worker {
            assert!(
                t < b_start,
                "the thawed server issued at {t} on worker id {w}, at or after its successor's start {b_start}"
            );
        }
    }
    eprintln!(
        "frozen holder: worker id {worker}; thawed server issued {} IDs ({} on the shared id), successor {}",
        from_a.len(),
        from_a.iter().filter(|&&id| parts(id).0 == worker).count(),
        from_b.len()
    );
}

#[test]
fn a_zookeeper_lease_holder_frozen_past_its_session_timeout_never_shares_its_worker_id() {
    let zk = ZkServer::start();
    let hosts = zk.hosts();
    frozen_holder_never_shares_its_worker_id(
        Duration::from_secs(2),
        holders_in_turn(
            ("LEAF_ZK_SESSION_TIMEOUT_MS", "2000"),
            format!("--zk {hosts} --name frozen serve --snowflake"),
        ),
    );
}

#[test]
fn an_etcd_lease_holder_frozen_past_its_ttl_never_shares_its_worker_id() {
    let etcd = EtcdServer::start();
    let endpoints = etcd.endpoints();
    frozen_holder_never_shares_its_worker_id(
        Duration::from_secs(3),
        holders_in_turn(
            ("LEAF_ETCD_LEASE_TTL_MS", "3000"),
            format!("--etcd {endpoints} --name frozen serve --snowflake"),
        ),
    );
}
