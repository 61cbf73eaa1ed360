//! Worker registries against a real ZooKeeper 3.8 (private per test binary; fault tests start
//! their own).

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use leafctl::snowflake::{Clock, FakeClock, LEAF_EPOCH_MS, Layout};
use leafctl::worker::IssueOptions;
use leafctl::worker::{
    Identity, IssueError, Registry, WorkerError, WorkerGenerator, WorkerRegistry, ZkError,
    ZkForeverRegistry, ZkLeaseRegistry,
};
use support::snowflake::{assert_clock_behind, issue, leaf, now_ms, system, zero_start};
use support::zookeeper::{RawZk, ZkServer, opts};
use zookeeper_client as zkc;

/// The contract's ZooKeeper: the shared server in lease mode; leases stored as ephemeral nodes
/// under `/snowflake/NAME/leases`.
fn leases() -> crate::lease::Leases {
    let zk = ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    crate::lease::Leases {
        registry: Box::new(move |name, identity| {
            Box::new(ZkLeaseRegistry::new(opts(zk, name, identity, state.path())))
        }),
        stored: Box::new(move |name| {
            RawZk::connect(&zk.hosts(), None)
                .children(&format!("/snowflake/{name}/leases"))
                .len()
        }),
        kind: leafctl::worker::backends::ZK_LEASE.kind,
    }
}

crate::lease::lease_registry_contract!(
    leases,
    reports_ignored = "drift: a ZooKeeper lease holder never reports its clock (its LeaseStore has no report), so last_seen stays at the claim's time; etcd's holder reports every 3 s"
);

#[test]
fn a_tree_written_by_leaf_is_read_and_reused() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    // Live Leaf servers report their current time.
    let t0 = now_ms();
    let p0 = raw.leaf_register("leafcompat", "10.1.0.1", "8080", t0);
    let p1 = raw.leaf_register("leafcompat", "10.1.0.2", "8080", t0);
    let p2 = raw.leaf_register("leafcompat", "10.1.0.3", "8080", t0);
    assert!(
        p0.ends_with("-0000000000") && p1.ends_with("-0000000001"),
        "{p0} {p1}"
    );
    assert!(p2.ends_with("-0000000002"));

    let state = tempfile::tempdir().unwrap();
    let reg = ZkForeverRegistry::new(opts(zk, "leafcompat", "10.1.0.2:8080", state.path()));
    let lease = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    assert_eq!(lease.worker(), 1, "the worker id Leaf gave 10.1.0.2:8080");
    assert!(
        lease.resume_after_ms().unwrap() >= t0,
        "the stored timestamp is a lower bound"
    );
    assert!(raw.exists("/snowflake/leafcompat/temporary/10.1.0.2:8080"));
    let g = WorkerGenerator::on_lease(lease, &zero_start(system())).unwrap();
    let ids = issue(&g, 10);
    for id in &ids {
        assert_eq!(leaf().decode(*id).unwrap().worker, 1);
    }
    let before_finish = now_ms();
    g.finish().unwrap();

    // The node carries Leaf's JSON, with a fresh timestamp, and the ephemeral node is gone.
    let v: serde_json::Value = serde_json::from_slice(&raw.get(&p1).unwrap()).unwrap();
    let obj = v.as_object().unwrap();
    let mut keys: Vec<_> = obj.keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["ip", "port", "timestamp"]);
    assert_eq!(obj["ip"], "10.1.0.2");
    assert_eq!(obj["port"], "8080", "Leaf writes the port as a string");
    assert!(obj["timestamp"].as_i64().unwrap() >= before_finish - 5);
    assert!(!raw.exists("/snowflake/leafcompat/temporary/10.1.0.2:8080"));

    // A new identity gets the next sequence number, in Leaf's 10-digit form.
    let state2 = tempfile::tempdir().unwrap();
    let reg = ZkForeverRegistry::new(opts(zk, "leafcompat", "10.1.0.9:9090", state2.path()));
    let lease = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    assert_eq!(lease.worker(), 3);
    lease.finish(None).unwrap();
    assert!(raw.exists("/snowflake/leafcompat/forever/10.1.0.9:9090-0000000003"));
}

#[test]
fn a_second_live_process_with_the_same_identity_is_refused() {
    let zk = ZkServer::shared();
    let a_state = tempfile::tempdir().unwrap();
    let b_state = tempfile::tempdir().unwrap();
    let mut o = opts(zk, "twice", "10.2.0.1:8080", a_state.path());
    o.session_timeout = Duration::from_secs(2);
    let a = ZkForeverRegistry::new(o.clone())
        .acquire(&IssueOptions::new(leaf()))
        .unwrap();
    // Another host (another state dir) claiming the same identity.
    o.state_dir = b_state.path().to_path_buf();
    let b = ZkForeverRegistry::new(o.clone()).acquire(&IssueOptions::new(leaf()));
    match b {
        Err(e @ WorkerError::IdentityInUse { .. }) => {
            assert!(
                e.to_string().contains("(its ephemeral node /snowflake/"),
                "{e}"
            )
        }
        other => panic!("expected IdentityInUse, got {:?}", other.err()),
    }
    // The same host: refused at once by the cache lock.
    o.state_dir = a_state.path().to_path_buf();
    let c = ZkForeverRegistry::new(o.clone()).acquire(&IssueOptions::new(leaf()));
    match c {
        Err(e @ WorkerError::IdentityInUse { .. }) => assert!(
            e.to_string().contains("(lock file ")
                && e.to_string().contains(" is held on this host)"),
            "{e}"
        ),
        other => panic!("expected IdentityInUse, got {:?}", other.err()),
    }
    let worker = a.worker();
    a.finish(None).unwrap();
    drop(a);
    o.state_dir = b_state.path().to_path_buf();
    let d = ZkForeverRegistry::new(o)
        .acquire(&IssueOptions::new(leaf()))
        .unwrap();
    assert_eq!(d.worker(), worker, "the identity keeps its worker id");
}

#[test]
fn a_sequence_beyond_the_layout_is_an_error() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    for i in 0..3 {
        raw.leaf_register("narrow", &format!("10.3.0.{i}"), "8080", now_ms());
    }
    // One worker bit: ids 0 and 1 only.
    let narrow = Layout::custom(LEAF_EPOCH_MS, 41, 1, 21, 1).unwrap();
    let state = tempfile::tempdir().unwrap();
    let r = ZkForeverRegistry::new(opts(zk, "narrow", "10.3.0.2:8080", state.path()))
        .acquire(&IssueOptions::new(narrow));
    assert!(
        matches!(
            r,
            Err(WorkerError::OutOfRange {
                worker: 2,
                max: 1,
                ..
            })
        ),
        "{:?}",
        r.err()
    );
    let ok = ZkForeverRegistry::new(opts(zk, "narrow", "10.3.0.1:8080", state.path()))
        .acquire(&IssueOptions::new(narrow))
        .unwrap();
    assert_eq!(ok.worker(), 1);
}

#[test]
fn a_stored_timestamp_ahead_of_the_clock_is_refused() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    raw.leaf_register("ahead", "10.4.0.1", "8080", now_ms() + 3_600_000);
    let state = tempfile::tempdir().unwrap();
    let r = ZkForeverRegistry::new(opts(zk, "ahead", "10.4.0.1:8080", state.path()))
        .acquire(&IssueOptions::new(leaf()));
    assert!(
        matches!(r, Err(WorkerError::ClockBehind { worker: 0, .. })),
        "{:?}",
        r.err()
    );
    // With a fake clock: register at T, finish, come back with the clock 10 s behind T.
    let clock = Arc::new(FakeClock::new(now_ms()));
    let t = clock.now_ms();
    let reg = ZkForeverRegistry::new(opts(zk, "ahead2", "10.4.0.2:8080", state.path()));
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone())).unwrap();
    issue(&g, 5);
    g.finish().unwrap();
    drop(g);
    clock.set_ms(t - 10_000);
    let r = reg.acquire(&IssueOptions::new(leaf()).clock(clock.clone()));
    assert_clock_behind(r);
}

#[test]
fn first_registration_refuses_a_clock_far_from_live_peers() {
    let zk = ZkServer::shared();
    let raw = RawZk::connect(&zk.hosts(), None);
    // Two live peers whose clocks read about 60 s later than ours.
    raw.leaf_register("skew", "10.5.0.1", "8080", now_ms() + 60_000);
    raw.leaf_register("skew", "10.5.0.2", "8080", now_ms() + 60_000);
    let state = tempfile::tempdir().unwrap();
    let o = opts(zk, "skew", "10.5.0.9:8080", state.path());
    let r = ZkForeverRegistry::new(o.clone()).acquire(&IssueOptions::new(leaf()));
    assert!(
        matches!(r, Err(WorkerError::ClockSkew { peers: 2, .. })),
        "{:?}",
        r.err()
    );
    assert!(
        !raw.exists("/snowflake/skew/temporary/10.5.0.9:8080"),
        "a refused start leaves nothing behind"
    );
    let mut lenient = o;
    lenient.max_clock_skew_ms = 120_000;
    let ok = ZkForeverRegistry::new(lenient)
        .acquire(&IssueOptions::new(leaf()))
        .unwrap();
    assert_eq!(ok.worker(), 2);
}

#[test]
fn zookeeper_down_at_start_uses_the_cache_only_when_safe() {
    let zk = ZkServer::start();
    let state = tempfile::tempdir().unwrap();
    let o = opts(&zk, "weak", "10.6.0.1:8080", state.path());
    let reg = ZkForeverRegistry::new(o.clone());
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    let first = issue(&g, 100);
    let worker = g.worker();
    g.finish().unwrap();
    drop(g);
    zk.kill();

    // Down, with a usable cache: same worker id, IDs after the previous run's.
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), worker);
    let second = issue(&g, 100);
    assert!(second[0] > *first.last().unwrap());
    g.finish().unwrap();
    drop(g);

    // Down, with the clock behind the cached timestamp: refused.
    let behind = Arc::new(FakeClock::new(now_ms() - 60_000));
    let r = reg.acquire(&IssueOptions::new(leaf()).clock(behind));
    assert_clock_behind(r);

    // Down, without a cache: refused.
    let empty = tempfile::tempdir().unwrap();
    let r = ZkForeverRegistry::new(opts(&zk, "weak", "10.6.0.1:8080", empty.path()))
        .acquire(&IssueOptions::new(leaf()));
    assert!(
        matches!(
            r.as_ref().err().and_then(WorkerError::store::<ZkError>),
            Some(ZkError::NoCache { .. })
        ),
        "{:?}",
        r.err()
    );

    // The lease mode has no cache: it fails fast with a clear error.
    let started = Instant::now();
    let r = ZkLeaseRegistry::new(o).acquire(&IssueOptions::new(leaf()));
    assert!(
        matches!(
            r.as_ref().err().and_then(WorkerError::store::<ZkError>),
            Some(ZkError::Unreachable { .. })
        ),
        "{:?}",
        r.err()
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn a_paused_zookeeper_stops_issuing_before_the_session_can_expire() {
    let zk = ZkServer::start();
    let state = tempfile::tempdir().unwrap();
    let mut o = opts(&zk, "paused", "10.9.0.1:8080", state.path());
    o.session_timeout = Duration::from_secs(6);
    let reg = ZkLeaseRegistry::new(o);
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    issue(&g, 1_000);
    zk.pause();
    let paused_at = Instant::now();
    let mut issued_after_pause = 0u64;
    let err = loop {
        match g.next_block(10) {
            Ok(b) => issued_after_pause += b.count,
            Err(e) => break e,
        }
        assert!(
            paused_at.elapsed() < Duration::from_secs(30),
            "still issuing 30 s after ZooKeeper froze"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let stopped_after = paused_at.elapsed();
    // It stays stopped while ZooKeeper is frozen: no more IDs from this lease. (After the resume a
    // session that has not expired may reconnect and keep its lease, which is safe.)
    assert!(g.next_block(1).is_err());
    zk.resume();
    assert!(
        matches!(
            err,
            IssueError::Worker(ref e)
                if matches!(e.store::<ZkError>(), Some(ZkError::SessionLost { .. }))
        ) || matches!(err, IssueError::Snowflake(_)),
        "{err}"
    );
    // The server could expire the session 6 s after it last heard from us; we stopped earlier.
    assert!(
        stopped_after < Duration::from_secs(6),
        "stopped only after {stopped_after:?}"
    );
    eprintln!("stopped {stopped_after:?} after the pause, {issued_after_pause} IDs in between");
}

#[test]
fn digest_auth_protects_the_nodes() {
    let zk = ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    let mut o = opts(zk, "secured", "10.10.0.1:8080", state.path());
    o.auth = Some("leaf:s3cret".into());
    let lease = ZkLeaseRegistry::new(o.clone())
        .acquire(&IssueOptions::new(leaf()))
        .unwrap();
    assert_eq!(lease.worker(), 0);

    // Without credentials, or with the wrong ones, the nodes cannot be read.
    let anon = RawZk::connect(&zk.hosts(), None);
    assert!(matches!(
        anon.get("/snowflake/secured/workers/0"),
        Err(zkc::Error::NoAuth)
    ));
    let wrong = RawZk::connect(&zk.hosts(), Some("leaf:wrong"));
    assert!(matches!(
        wrong.get("/snowflake/secured/workers/0"),
        Err(zkc::Error::NoAuth)
    ));
    let mut no_auth = o.clone();
    no_auth.auth = None;
    let r = ZkLeaseRegistry::new(no_auth.clone()).acquire(&IssueOptions::new(leaf()));
    assert!(
        matches!(
            r.as_ref().err().and_then(WorkerError::store::<ZkError>),
            Some(ZkError::NotAuthorized { .. })
        ),
        "{:?}",
        r.err()
    );
    let listed = ZkLeaseRegistry::new(no_auth).list(now_ms());
    assert!(matches!(
        listed
            .as_ref()
            .err()
            .and_then(WorkerError::store::<ZkError>),
        Some(ZkError::NotAuthorized { .. })
    ));

    // With them, everything works.
    let right = RawZk::connect(&zk.hosts(), Some("leaf:s3cret"));
    assert!(right.get("/snowflake/secured/workers/0").is_ok());
    let records = ZkLeaseRegistry::new(o.clone()).list(now_ms()).unwrap();
    assert_eq!(records.len(), 1);
    assert!(records[0].held);
    lease.finish(None).unwrap();
}

#[test]
fn identity_defaults_to_a_non_loopback_ipv4() {
    match Identity::local(8080) {
        Ok(i) => {
            assert_eq!(i.port, "8080");
            let ip: std::net::Ipv4Addr = i.ip.parse().unwrap();
            assert!(!ip.is_loopback());
        }
        Err(e) => assert!(matches!(e, WorkerError::NoAddress)),
    }
}

#[test]
fn a_forever_try_extension_answers_from_the_cache_file_only() {
    let zk = ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    let reg = ZkForeverRegistry::new(opts(zk, "tryext", "10.13.0.1:8080", state.path()));
    let t = now_ms() + 10;
    let clock = Arc::new(FakeClock::new(t));
    let lease = reg
        .acquire(&IssueOptions::new(leaf()).clock(clock.clone()))
        .unwrap();
    let fenced = lease.extend(t).unwrap();
    assert!(fenced > t, "{fenced} covers {t}");
    // The same answer from memory while the cache file covers the time and the clock reached it.
    // (The 3 s report holds the cache for a moment, when the try declines: ask again.)
    let tried = (0..1000)
        .find_map(|_| {
            lease.try_extend(t).or_else(|| {
                std::thread::sleep(Duration::from_millis(1));
                None
            })
        })
        .unwrap();
    assert_eq!(tried.unwrap(), fenced);
    assert!(
        lease.try_extend(t + 1).is_none(),
        "a time ahead of the clock is for extend"
    );
    clock.set_ms(fenced);
    assert!(
        lease.try_extend(fenced).is_none(),
        "past the cache file's reservation only extend may write it"
    );
    lease.finish(Some(t)).unwrap();
    assert!(matches!(lease.try_extend(t), Some(Err(_))));
}

#[test]
fn forever_mode_keeps_issuing_through_a_zookeeper_outage_and_registers_again() {
    let zk = ZkServer::start();
    let state = tempfile::tempdir().unwrap();
    let mut o = opts(&zk, "outage", "10.12.0.1:8080", state.path());
    o.session_timeout = Duration::from_secs(2);
    let reg = ZkForeverRegistry::new(o);
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    let mut ids = issue(&g, 100);
    zk.pause();
    // Leaf's weak dependency: a frozen ZooKeeper does not stop the forever mode.
    let paused = Instant::now();
    while paused.elapsed() < Duration::from_secs(5) {
        ids.extend(issue(&g, 100));
        std::thread::sleep(Duration::from_millis(20));
    }
    zk.resume();
    // Once ZooKeeper is back, the process is registered again (same or new session).
    let raw = RawZk::connect(&zk.hosts(), None);
    assert!(
        support::wait_until(Duration::from_secs(30), || raw
            .exists("/snowflake/outage/temporary/10.12.0.1:8080")),
        "the ephemeral node did not come back"
    );
    ids.extend(issue(&g, 100));
    g.finish().unwrap();
    let n = ids.len();
    support::assert_unique(&mut ids);
    assert_eq!(ids.len(), n);
}
