//! Fault suite, ZooKeeper (RELIABILITY.md scenarios 5 and 8): ZooKeeper killed or frozen under
//! `serve` load in forever and lease mode, restarts from the forever cache while it is down, two
//! processes given one identity, and a hand-made tree that gives two identities one worker id.
//!
//! Also relevant and not repeated here: `tests/serve/serve_zk.rs`
//! (`an_expired_session_is_replaced_and_no_time_is_reused`: a paused ZooKeeper expires a leased
//! server's session, which leases again) and `tests/registry/worker_zk.rs` (the same for the library, and
//! the forever cache with a clock behind).

use crate::support;

use std::time::{Duration, Instant};

use support::faketime::under_faketime;
use support::fault::{Steady, after_on_each_worker};
use support::serve::{LEASE_REFUSALS, Server};
use support::snowflake::{now_ms, worker_of};
use support::zookeeper::{RawZk, ZkServer};
use support::{Sandbox, assert_unique, parse_ids, stderr, wait_until};

/// Session timeout for every test here: short, so expiries happen within seconds.
const SESSION_MS: u64 = 2_000;

/// leafctl with ZooKeeper `hosts`, name `name` and short sessions, in a sandbox (one host).
struct Host {
    sb: Sandbox,
    hosts: String,
    name: String,
}

impl Host {
    fn new(hosts: &str, name: &str) -> Host {
        Host {
            sb: Sandbox::new(),
            hosts: hosts.to_string(),
            name: name.to_string(),
        }
    }

    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = self.sb.leafctl_std();
        c.env("LEAF_ZK", &self.hosts)
            .env("LEAF_NAME", &self.name)
            .env("LEAF_ZK_SESSION_TIMEOUT_MS", SESSION_MS.to_string())
            .args(args);
        c
    }

    fn forever(&self, instance: &str) -> std::process::Command {
        self.cmd(&[
            "serve",
            "--snowflake",
            "--registry",
            "forever",
            "--instance",
            instance,
        ])
    }
}

/// The load on a server: two client threads, a request every 5 ms each (every 10th for 100
/// IDs), for at most 90 s.
const LOAD: Steady = Steady {
    pause: Duration::from_millis(5),
    limit: Duration::from_secs(90),
};

#[test]
fn forever_mode_keeps_issuing_with_zookeeper_down_and_restarts_from_its_cache_only_when_the_clock_allows()
 {
    let zk = ZkServer::start();
    let host = Host::new(&zk.hosts(), "fdown");
    let instance = "10.60.0.1:8080";
    let s = Server::start(host.forever(instance));
    let worker = worker_of(s.get("/api/snowflake/get/k").id());

    // ZooKeeper dies under load: Leaf's weak dependency, the server keeps answering.
    let l = LOAD.on(&s, "/api/snowflake/get/k");
    assert!(l.wait_for_answers(50, Duration::from_secs(30)));
    zk.kill();
    std::thread::sleep(Duration::from_millis(2 * SESSION_MS + 1_000));
    let seen = l.stop();
    seen.all_ids("with ZooKeeper down");
    let mut ids = seen.ids;
    let (status, log) = s.terminate();
    assert!(status.success(), "a clean stop with ZooKeeper down: {log}");

    // Restarted while ZooKeeper is still down: the cache gives the same worker id, after the
    // last run's times.
    let s = Server::start(host.forever(instance));
    let again = s.get("/api/snowflake/get/k?count=100").ids();
    assert_eq!(worker_of(again[0]), worker);
    after_on_each_worker(&ids, &again);
    ids.extend(&again);
    assert!(s.stderr().contains("cached worker id"), "{}", s.stderr());
    // Killed (its reservation stays in the cache) and restarted at once: waits it out.
    let before_kill = s.get("/api/snowflake/get/k?count=1000").ids();
    ids.extend(&before_kill);
    drop(s);
    let s = Server::start(host.forever(instance));
    let after_kill = s.get("/api/snowflake/get/k?count=1000").ids();
    after_on_each_worker(&ids, &after_kill);
    ids.extend(after_kill);
    drop(s);

    // A clock an hour behind the cache: refused, not started.
    let refused = Server::try_start(under_faketime(&host.forever(instance), "-1h"))
        .err()
        .expect("a clock an hour behind the cache must not start");
    support::assert_contains_all(&refused, &["behind", "zk-fdown-10_60_0_1_8080.json"]);
    assert!(refused.contains("hint:"), "{refused}");

    // ZooKeeper back: a normal start registers again, same worker id, later times.
    zk.restart();
    let s = Server::start(host.forever(instance));
    let back = s.get("/api/snowflake/get/k?count=1000").ids();
    assert_eq!(worker_of(back[0]), worker);
    after_on_each_worker(&ids, &back);
    ids.extend(back);
    let raw = RawZk::connect(&zk.hosts(), None);
    assert!(raw.exists(&format!("/snowflake/fdown/temporary/{instance}")));
    s.stop_cleanly();
    assert_unique(&mut ids);
}

#[test]
fn forever_mode_keeps_issuing_through_a_zookeeper_paused_past_the_session_timeout() {
    let zk = ZkServer::start();
    let host = Host::new(&zk.hosts(), "fpause");
    let instance = "10.60.1.1:8080";
    let s = Server::start(host.forever(instance));
    let l = LOAD.on(&s, "/api/snowflake/get/k");
    assert!(l.wait_for_answers(50, Duration::from_secs(30)));
    zk.pause();
    std::thread::sleep(Duration::from_millis(2 * SESSION_MS + 1_000));
    let resumed_at = now_ms();
    zk.resume();
    // Registered again (the session expired while frozen), and reporting its clock.
    let raw = RawZk::connect(&zk.hosts(), None);
    let temp = format!("/snowflake/fpause/temporary/{instance}");
    let node = format!("/snowflake/fpause/forever/{instance}-0000000000");
    assert!(
        wait_until(Duration::from_secs(30), || {
            raw.exists(&temp)
                && raw.get(&node).is_ok_and(|d| {
                    serde_json::from_slice::<serde_json::Value>(&d)
                        .is_ok_and(|v| v["timestamp"].as_i64().unwrap_or(0) > resumed_at)
                })
        }),
        "not registered again; {}",
        s.stderr()
    );
    let seen = l.stop();
    seen.all_ids("through the pause");
    let mut ids = seen.ids;
    assert_eq!(s.get("/readyz").status, 200);
    s.stop_cleanly();
    assert_unique(&mut ids);
}

#[test]
fn a_leased_server_stops_before_its_session_can_expire_and_resumes_without_reusing_a_time() {
    let zk = ZkServer::start();
    let host = Host::new(&zk.hosts(), "lfault");
    // A longer session here: the client gives a silent server up after 1.5 s, well before 3 s.
    const SESSION_MS: u64 = 3_000;
    let mut cmd = host.cmd(&["serve", "--snowflake"]);
    cmd.env("LEAF_ZK_SESSION_TIMEOUT_MS", SESSION_MS.to_string());
    let s = Server::start(cmd);
    let mut ids = Vec::new();

    for fault in ["kill", "pause"] {
        let l = LOAD.on(&s, "/api/snowflake/get/k");
        assert!(l.wait_for_answers(50, Duration::from_secs(30)));
        let at = l.elapsed();
        if fault == "kill" {
            zk.kill();
        } else {
            zk.pause();
        }
        // Past the session timeout: the session may expire now (a frozen server expires it on
        // waking; a killed one restarts with it).
        std::thread::sleep(Duration::from_millis(2 * SESSION_MS));
        let recover_at = l.elapsed();
        if fault == "kill" {
            zk.restart();
        } else {
            zk.resume();
        }
        // It answers again by itself.
        let back = wait_until(Duration::from_secs(60), || {
            support::serve::http(s.addr, "GET", "/api/snowflake/get/k", &[])
                .is_ok_and(|r| r.status == 200)
        });
        assert!(back, "{fault}: no IDs again; {}", s.stderr());
        assert!(l.wait_for_answers(50, Duration::from_secs(30)));
        let seen = l.stop();
        // Issuing stopped before the session could expire: refused within the session
        // timeout, and no ID from then until ZooKeeper was back.
        let limit = at + Duration::from_millis(SESSION_MS);
        let first_refusal = seen
            .timeline
            .iter()
            .find(|(_, st)| *st != 200)
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("{fault}: never refused: {seen:?}"));
        assert!(
            first_refusal < limit,
            "{fault}: first refusal at {first_refusal:?}, after the session timeout ({limit:?})"
        );
        let late: Vec<_> = seen
            .timeline
            .iter()
            .filter(|(t, st)| *st == 200 && *t >= limit && *t < recover_at)
            .collect();
        assert!(
            late.is_empty(),
            "{fault}: IDs answered after the session could expire: {late:?}"
        );
        assert!(
            seen.errors.contains_key("lease_lost")
                && seen
                    .errors
                    .keys()
                    .all(|c| LEASE_REFUSALS.contains(&c.as_str())),
            "{fault}: {:?}",
            seen.errors
        );
        eprintln!("{fault}: {:?}", seen.errors);
        ids.push(seen.ids);
    }
    // Each fault's IDs come after the previous fault's, on every worker id.
    for pair in ids.windows(2) {
        after_on_each_worker(&pair[0], &pair[1]);
    }
    let mut all: Vec<u64> = ids.into_iter().flatten().collect();
    assert_unique(&mut all);
    assert_eq!(s.get("/readyz").status, 200);
    s.stop_cleanly();
}

#[test]
fn two_forever_servers_given_one_identity_never_both_run() {
    let zk = ZkServer::shared();
    let a = Host::new(&zk.hosts(), "twins");
    let instance = "10.61.0.1:8080";
    let first = Server::start(a.forever(instance));
    let mut ids = first.get("/api/snowflake/get/k?count=1000").ids();
    let worker = worker_of(ids[0]);

    // The same host (same state directory): refused at once.
    let t = Instant::now();
    let err = Server::try_start(a.forever(instance))
        .err()
        .expect("a second process with the same identity on this host");
    assert!(t.elapsed() < Duration::from_secs(10));
    support::assert_contains_all(
        &err,
        &["already in use by another live process", "lock file"],
    );
    // Another host given the same identity: refused once the ephemeral node outlives a session.
    let b = Host::new(&zk.hosts(), "twins");
    let err = Server::try_start(b.forever(instance))
        .err()
        .expect("a second process with the same identity on another host");
    support::assert_contains_all(
        &err,
        &[
            "already in use by another live process",
            "/snowflake/twins/temporary/10.61.0.1:8080",
        ],
    );
    let out = b
        .cmd(&[
            "next",
            "--snowflake",
            "--registry",
            "forever",
            "--instance",
            instance,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    ids.extend(first.get("/api/snowflake/get/k?count=1000").ids());

    // The first one killed: the other host takes the identity once its session expired, with
    // the same worker id, after every time the first one used.
    drop(first);
    let second = Server::start(b.forever(instance));
    let later = second.get("/api/snowflake/get/k?count=1000").ids();
    assert_eq!(worker_of(later[0]), worker);
    after_on_each_worker(&ids, &later);
    ids.extend(later);
    second.stop_cleanly();
    assert_unique(&mut ids);
}

#[test]
fn a_hand_made_tree_giving_two_identities_one_worker_id_is_refused() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    let data = |ip: &str| {
        format!(
            r#"{{"ip":"{ip}","port":"8080","timestamp":{}}}"#,
            now_ms() - 1_000
        )
        .into_bytes()
    };
    // Two identities on worker 7, and a third node on the number the sequence gives next but one.
    raw.create(
        "/snowflake/crafted/forever/10.62.0.1:8080-0000000007",
        &data("10.62.0.1"),
    );
    raw.create(
        "/snowflake/crafted/forever/10.62.0.2:8080-0000000007",
        &data("10.62.0.2"),
    );
    raw.create(
        "/snowflake/crafted/forever/10.62.0.9:8080-0000000004",
        &data("10.62.0.9"),
    );
    let host = Host::new(&zk.hosts(), "crafted");
    let next = |instance: &str| {
        host.cmd(&[
            "next",
            "--snowflake",
            "--registry",
            "forever",
            "--instance",
            instance,
        ])
        .output()
        .unwrap()
    };
    for instance in ["10.62.0.1:8080", "10.62.0.2:8080"] {
        let out = next(instance);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{instance}: {err}");
        assert!(out.stdout.is_empty());
        assert!(
            err.contains("worker id 7") && err.contains("also claimed by another identity"),
            "{instance}: {err}"
        );
        support::assert_contains_all(&err, &["hint:", "workers reclaim"]);
        let refused = Server::try_start(host.forever(instance))
            .err()
            .expect("serve refuses too");
        assert!(refused.contains("also claimed"), "{refused}");
    }
    // A new identity gets the next sequence number (3) and works; the one after gets 4, which
    // the hand-made node already names: refused.
    let out = next("10.62.0.3:8080");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(worker_of(parse_ids(&out.stdout)[0]), 3);
    let out = next("10.62.0.4:8080");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    support::assert_contains_all(&err, &["worker id 4", "10.62.0.9:8080-0000000004"]);
}

#[test]
fn leases_and_forever_nodes_on_one_name_never_share_a_worker_id() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    // A Leaf server registered under this name (worker 0 for ever) ...
    raw.leaf_register("mixed", "10.63.0.1", "8080", now_ms() - 1_000);
    let host = Host::new(&zk.hosts(), "mixed");
    // ... so leafctl's leases start at 1 (before: 0, the same worker id as Leaf's server).
    let leased = Server::start(host.cmd(&["serve", "--snowflake"]));
    let mut ids = leased.get("/api/snowflake/get/k?count=1000").ids();
    assert_eq!(worker_of(ids[0]), 1);

    // A new forever identity gets sequence number 1, which the live lease holds: refused.
    let forever = |instance: &str| {
        host.cmd(&[
            "next",
            "--snowflake",
            "--registry",
            "forever",
            "--instance",
            instance,
            "-n",
            "1000",
        ])
        .output()
        .unwrap()
    };
    let out = forever("10.63.0.2:8080");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    support::assert_contains_all(&err, &["worker id 1", "a lease on the same name"]);
    ids.extend(leased.get("/api/snowflake/get/k?count=1000").ids());
    leased.stop_cleanly();

    // The lease given back, the forever identity takes worker 1, after every time the lease
    // reserved; the next lease skips 0 and 1.
    let out = forever("10.63.0.2:8080");
    assert!(out.status.success(), "{}", stderr(&out));
    let later = parse_ids(&out.stdout);
    assert_eq!(worker_of(later[0]), 1);
    after_on_each_worker(&ids, &later);
    ids.extend(later);
    let out = support::run_ok(host.cmd(&["next", "--snowflake", "-n", "10"]));
    let leased = parse_ids(&out.stdout);
    assert_eq!(worker_of(leased[0]), 2);
    ids.extend(leased);
    assert_unique(&mut ids);
}
