//! The worker-id registry frozen (SIGSTOP) under `serve --snowflake` load, for every registry
//! that `serve` leases from: no request waits longer than a second on it. A request that needs
//! the time fence moved while the registry cannot confirm it is answered `503` with
//! `Retry-After` within [`BOUND`]; `/readyz` says why; after the thaw the server issues again by
//! itself; no ID twice (issue 28, item 4).

use crate::support;

use std::time::{Duration, Instant};

use support::etcd::EtcdServer;
use support::mariadb::{MariaDb, PASSWORD};
use support::postgres::Postgres;
use support::serve::{Server, http};
use support::zookeeper::ZkServer;
use support::{Sandbox, assert_unique, wait_until};

/// The longest any request may take while the registry is frozen (the server gives up on the
/// registry at 0.75 s; the rest is the request's own way there and back on a busy machine).
const BOUND: Duration = Duration::from_millis(1_000);
/// How long the registry stays frozen: past every registry's reservation window (3 s) and
/// I/O timeout (5 s).
const FROZEN: Duration = Duration::from_secs(8);

/// Loads a server for `FROZEN` while the registry is frozen by `freeze`, then thaws it with
/// `thaw`; checks every answer's time and kind, and that IDs come again after the thaw.
fn frozen_registry_answers_within_a_second(
    what: &str,
    server: Server,
    freeze: impl FnOnce(),
    thaw: impl FnOnce(),
) {
    let path = "/api/snowflake/get/x";
    let mut ids = server.get(path).ids();
    assert_eq!(ids.len(), 1, "{what}: issuing before the freeze");
    freeze();
    let frozen_at = Instant::now();
    let mut slowest = Duration::ZERO;
    let (mut refused, mut answered) = (0, 0);
    let mut readyz = String::new();
    // Bounded in count and time: one request at a time for FROZEN.
    while frozen_at.elapsed() < FROZEN {
        let t = Instant::now();
        let r = http(server.addr, "GET", path, &[]).expect("an answer, not a dropped connection");
        let took = t.elapsed();
        slowest = slowest.max(took);
        match r.status {
            200 => {
                answered += 1;
                ids.extend(r.ids());
            }
            503 => {
                refused += 1;
                assert_eq!(r.header("retry-after"), Some("1"), "{what}: {r:?}");
                let code = r.json()["code"].as_str().unwrap_or("").to_string();
                assert!(
                    ["registry_slow", "lease_lost", "not_ready"].contains(&code.as_str()),
                    "{what}: {r:?}"
                );
                if readyz.is_empty() {
                    let ready = server.get("/readyz");
                    if ready.status == 503 {
                        readyz = ready.body;
                    }
                }
            }
            other => panic!("{what}: answered {other}: {r:?}"),
        }
        assert!(
            took < BOUND,
            "{what}: a request took {took:?} while the registry was frozen"
        );
    }
    thaw();
    let thawed_at = Instant::now();
    let again = wait_until(Duration::from_secs(30), || {
        let r = server.get(path);
        if r.status == 200 {
            ids.extend(r.ids());
            true
        } else {
            false
        }
    });
    eprintln!(
        "{what} frozen {FROZEN:?}: {answered} IDs, {refused} refused, slowest {slowest:?}; \
         issuing again {:?} after the thaw; /readyz said: {readyz}",
        thawed_at.elapsed()
    );
    assert!(again, "{what}: never issued again after the thaw");
    assert!(
        refused > 0,
        "{what}: the fence never needed the frozen registry"
    );
    assert_unique(&mut ids);
}

fn serve(sb: &Sandbox, args: &[&str]) -> Server {
    let mut c = sb.leafctl_std();
    c.args(["serve", "--snowflake"])
        .args(args)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .env("LEAF_LOG", "leafctl=warn");
    Server::start(c)
}

#[test]
fn a_frozen_mysql_registry_is_a_503_within_a_second() {
    let db = MariaDb::start();
    let sb = Sandbox::new();
    let (_, url) = db.initialized_db(&sb);
    let server = serve(&sb, &["--registry", "mysql", "--db", &url]);
    frozen_registry_answers_within_a_second("MySQL", server, || db.pause(), || db.resume());
}

#[test]
fn a_frozen_postgres_registry_is_a_503_within_a_second() {
    let pg = Postgres::start();
    let url = pg.url(&pg.fresh_db());
    let sb = Sandbox::new();
    support::run_ok(sb.leafctl().args(["db", "init", "--db", &url]));
    let server = serve(&sb, &["--registry", "postgres", "--db", &url]);
    frozen_registry_answers_within_a_second("PostgreSQL", server, || pg.pause(), || pg.resume());
}

#[test]
fn a_frozen_etcd_is_a_503_within_a_second() {
    let etcd = EtcdServer::start();
    let sb = Sandbox::new();
    let server = serve(&sb, &["--etcd", &etcd.endpoints()]);
    let member = &etcd.members[0];
    frozen_registry_answers_within_a_second("etcd", server, || member.pause(), || member.resume());
}

#[test]
fn a_frozen_zookeeper_is_a_503_within_a_second() {
    let zk = ZkServer::start();
    let sb = Sandbox::new();
    let server = serve(&sb, &["--zk", &zk.hosts()]);
    frozen_registry_answers_within_a_second("ZooKeeper", server, || zk.pause(), || zk.resume());
}

/// Issue 46 #4: SIGTERM while the registry holding the server's worker id is frozen (the
/// ZooKeeper member of its session, the etcd member, the database): a clean stop, exit 0,
/// within the bound (the reservation recorded before the IDs went out stays, so a next holder
/// waits it out: `tests/registry/fence.rs`).
fn sigterm_while_frozen_is_a_clean_stop(
    what: &str,
    server: Server,
    freeze: impl FnOnce(),
    thaw: impl FnOnce(),
) {
    let ids = server.get("/api/snowflake/get/x").ids();
    assert_eq!(ids.len(), 1, "{what}: issuing before the freeze");
    freeze();
    let stopping = Instant::now();
    let (status, log) = server.terminate();
    let took = stopping.elapsed();
    thaw();
    assert!(status.success(), "{what}: exited with {status}: {log}");
    assert!(
        took < Duration::from_secs(15),
        "{what}: the stop took {took:?}: {log}"
    );
}

#[test]
fn sigterm_while_the_registry_is_frozen_is_a_clean_stop() {
    let zk = ZkServer::start();
    let sb = Sandbox::new();
    let server = serve(&sb, &["--zk", &zk.hosts()]);
    sigterm_while_frozen_is_a_clean_stop("ZooKeeper", server, || zk.pause(), || zk.resume());
    let etcd = EtcdServer::start();
    let server = serve(&sb, &["--etcd", &etcd.endpoints()]);
    let member = &etcd.members[0];
    sigterm_while_frozen_is_a_clean_stop("etcd", server, || member.pause(), || member.resume());
    let db = MariaDb::start();
    let (_, url) = db.initialized_db(&sb);
    let server = serve(&sb, &["--registry", "mysql", "--db", &url]);
    sigterm_while_frozen_is_a_clean_stop("MySQL", server, || db.pause(), || db.resume());
}
