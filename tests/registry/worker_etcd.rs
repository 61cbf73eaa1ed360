//! The etcd lease registry against a real etcd 3.4 (private per test binary; fault tests start
//! their own, and one a 3-member cluster).

use crate::support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leafctl::snowflake::{Clock, FakeClock};
use leafctl::worker::IssueOptions;
use leafctl::worker::{
    EtcdError, EtcdLeaseRegistry, EtcdOptions, IssueError, Registry, SupervisedGenerator,
    WorkerError, WorkerGenerator, WorkerRegistry,
};
use support::etcd::{EtcdServer, opts};
use support::snowflake::{issue, leaf, next_block_ahead, now_ms, system, time_of, zero_start};

/// The contract's etcd: the shared server; leases stored as keys under `/leafctl/NAME/leases/`.
fn leases() -> crate::lease::Leases {
    let endpoints = EtcdServer::shared().endpoints();
    crate::lease::Leases {
        registry: Box::new(move |name, identity| {
            Box::new(EtcdLeaseRegistry::new(opts(&endpoints, name, identity)))
        }),
        stored: Box::new(|name| {
            let dump = EtcdServer::shared().dump(&format!("/leafctl/{name}/leases/"), None);
            let lines = dump.lines().count();
            assert_eq!(lines % 2, 0, "a key and a value each: {dump}");
            lines / 2
        }),
        kind: leafctl::worker::backends::ETCD.kind,
    }
}

crate::lease::lease_registry_contract!(leases);

fn reserved_until(o: &EtcdOptions, worker: u64) -> Option<i64> {
    EtcdLeaseRegistry::new(o.clone())
        .list(now_ms())
        .unwrap()
        .into_iter()
        .find(|r| r.worker == worker)
        .and_then(|r| r.reserved_until_ms)
}

fn held(o: &EtcdOptions, worker: u64) -> bool {
    EtcdLeaseRegistry::new(o.clone())
        .list(now_ms())
        .unwrap()
        .into_iter()
        .any(|r| r.worker == worker && r.held)
}

#[test]
fn a_paused_etcd_stops_issuing_before_the_lease_can_expire_and_the_next_holder_waits() {
    let etcd = EtcdServer::start();
    let o = opts(&etcd.endpoints(), "paused", "10.9.0.1:8080");
    let ttl = o.lease_ttl;
    let reg = EtcdLeaseRegistry::new(o.clone());
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    let mut first = issue(&g, 1_000);
    // Let a few keep-alives go through first.
    std::thread::sleep(ttl);
    first.extend(issue(&g, 1_000));
    etcd.first().pause();
    let paused_at = Instant::now();
    // When the last IDs came back: a call may also block on a fence write to the frozen etcd
    // (up to its request timeouts) and then fail, issuing nothing meanwhile.
    let mut last_issued = Duration::ZERO;
    let err = loop {
        match g.next_block(10) {
            Ok(b) => {
                first.extend(b);
                last_issued = paused_at.elapsed();
            }
            Err(e) => break e,
        }
        assert!(
            paused_at.elapsed() < Duration::from_secs(30),
            "still issuing 30 s after etcd froze"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let stopped_after = paused_at.elapsed();
    assert!(
        matches!(
            err,
            IssueError::Worker(ref e)
                if matches!(e.store::<EtcdError>(), Some(EtcdError::LeaseLost { .. }))
        ) || matches!(err, IssueError::Snowflake(_)),
        "{err}"
    );
    // The last keep-alive etcd got was sent at most TTL/5 before the pause, so the lease can
    // expire TTL - TTL/5 after it at the earliest; the last IDs came well before.
    assert!(
        last_issued < ttl - ttl / 5,
        "issued IDs {last_issued:?} after etcd froze"
    );
    eprintln!(
        "issued the last IDs {last_issued:?} after etcd froze, refused {stopped_after:?} after \
         (TTL {ttl:?})"
    );
    assert!(g.next_block(1).is_err(), "it stays stopped");

    // Keep etcd frozen past the TTL: when it thaws it expires the lease and frees the id.
    std::thread::sleep((ttl + Duration::from_secs(1)).saturating_sub(paused_at.elapsed()));
    etcd.first().resume();
    assert!(
        support::wait_until(Duration::from_secs(15), || !held(&o, 0)),
        "the expired lease still holds worker id 0"
    );
    // Another process takes the id: it starts after everything the first holder issued.
    let sb = support::Sandbox::new();
    let out = support::run_ok(
        sb.leafctl()
            .args(support::words(&format!(
                "next --snowflake --etcd {} --name paused",
                etcd.endpoints()
            )))
            .args(["--instance", "10.9.0.2:8080", "-n", "1000"]),
    );
    let second = support::parse_ids(&out.stdout);
    assert_eq!(second.len(), 1_000);
    assert!(
        second
            .iter()
            .all(|id| leaf().decode(*id).unwrap().worker == g.worker()),
        "the same worker id is reused"
    );
    let first_max = *first.iter().max().unwrap();
    assert!(second.iter().all(|id| *id > first_max));
    let mut all: Vec<u64> = first.into_iter().chain(second).collect();
    support::assert_unique(&mut all);
    // The stopped holder's clean-up must not disturb anything.
    assert!(g.finish().is_ok() || g.lease().check().is_err());
}

#[test]
fn etcd_down_is_a_clear_error_fast_and_a_killed_etcd_stops_issuing() {
    // Nothing listens here.
    let port = support::free_port();
    let reg = EtcdLeaseRegistry::new(opts(&format!("127.0.0.1:{port}"), "down", "10.12.0.1:8080"));
    let t0 = Instant::now();
    let r = reg.acquire(&IssueOptions::new(leaf()));
    let took = t0.elapsed();
    match r.as_ref().err().and_then(WorkerError::store::<EtcdError>) {
        Some(EtcdError::Unreachable { endpoints, reason }) => {
            assert!(endpoints.contains(&port.to_string()), "{endpoints}");
            assert!(!reason.is_empty());
        }
        _ => panic!("{:?}", r.err()),
    }
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // A holder whose etcd dies stops issuing within the keep-alive deadline.
    let etcd = EtcdServer::start();
    let o = opts(&etcd.endpoints(), "killed", "10.12.0.2:8080");
    let ttl = o.lease_ttl;
    let g = WorkerGenerator::start(&EtcdLeaseRegistry::new(o), &zero_start(system())).unwrap();
    issue(&g, 100);
    etcd.first().kill();
    let killed = Instant::now();
    while g.lease().check().is_ok() {
        assert!(
            killed.elapsed() < ttl,
            "still issuing a TTL after etcd died"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let e = g.next_block(1).unwrap_err();
    assert!(e.to_string().contains("etcd lease"), "{e}");
    eprintln!("stopped {:?} after etcd died: {e}", killed.elapsed());
    let t0 = Instant::now();
    let _ = g.finish();
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn reclaiming_a_live_lease_stops_its_holder_and_the_registry_can_lease_again() {
    let etcd = EtcdServer::shared();
    let o = opts(&etcd.endpoints(), "reclaim", "10.13.0.1:8080");
    let reg = EtcdLeaseRegistry::new(o.clone());
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    let before = issue(&g, 100);
    let admin = EtcdLeaseRegistry::new(o.clone());
    let records = admin.list(now_ms()).unwrap();
    assert_eq!(records.len(), 1);
    let rec = records[0].clone();
    assert!(rec.held && rec.is_live(now_ms()));
    assert_eq!(rec.location, "/leafctl/reclaim/leases/0");
    let deleted = admin.reclaim(&rec).unwrap();
    assert_eq!(deleted, vec!["/leafctl/reclaim/leases/0".to_string()]);
    // The holder's next keep-alive finds its lease revoked (TTL/5 later at most).
    assert!(
        support::wait_until(Duration::from_secs(5), || g.lease().check().is_err()),
        "the holder kept issuing after its lease was revoked"
    );
    let after = admin.list(now_ms()).unwrap();
    assert!(!after[0].held, "{after:?}");
    assert!(after[0].reserved_until_ms.is_some(), "reserved_until stays");
    // Reclaiming a free id deletes nothing.
    assert!(admin.reclaim(&after[0]).unwrap().is_empty());

    // The same registry object leases again (what a long-running server does) and starts
    // after everything the first lease issued.
    let h = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    assert_eq!(h.worker(), 0);
    let again = issue(&h, 100);
    assert!(again[0] > *before.iter().max().unwrap());
    h.finish().unwrap();
    let _ = g.finish();
}

#[test]
fn authentication_wrong_password_refused_and_never_shown() {
    let etcd = EtcdServer::start();
    etcd.enable_auth("R00t-pw");
    let mut good = opts(&etcd.endpoints(), "auth", "10.14.0.1:8080");
    good.user = Some("root".into());
    good.password = Some("R00t-pw".into());
    let lease = EtcdLeaseRegistry::new(good.clone())
        .acquire(&IssueOptions::new(leaf()))
        .unwrap();
    assert_eq!(lease.worker(), 0);
    let records = EtcdLeaseRegistry::new(good.clone()).list(now_ms()).unwrap();
    assert!(records[0].held);

    // Acquiring with `o` fails, as an authentication error: that error.
    let auth_error = |o: &EtcdOptions| {
        let e = EtcdLeaseRegistry::new(o.clone())
            .acquire(&IssueOptions::new(leaf()))
            .err()
            .expect("acquire refused");
        assert!(
            matches!(e.store::<EtcdError>(), Some(EtcdError::Auth { .. })),
            "{e:?}"
        );
        e
    };
    let mut wrong = good.clone();
    wrong.password = Some("not-the-Pw-42".into());
    let e = auth_error(&wrong);
    let text = format!("{e} {e:?}");
    assert!(
        text.contains("root") && !text.contains("not-the-Pw-42"),
        "{text}"
    );
    assert!(
        EtcdLeaseRegistry::new(wrong.clone())
            .list(now_ms())
            .is_err()
    );

    let mut anonymous = good.clone();
    anonymous.user = None;
    anonymous.password = None;
    let e = auth_error(&anonymous);
    assert!(e.to_string().contains("LEAF_ETCD_PASSWORD"), "{e}");
    lease.finish(None).unwrap();
}

#[test]
fn a_cluster_losing_its_leader_under_load_never_duplicates_and_recovers() {
    let cluster = EtcdServer::cluster(3);
    let endpoints = cluster.endpoints();
    let all_ids = Mutex::new(Vec::<u64>::new());
    let stop = AtomicBool::new(false);
    let killed_at = Mutex::new(None::<Instant>);
    let ok_after_kill = AtomicU64::new(0);
    let failures = AtomicU64::new(0);
    let reacquired = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|s| {
        // Short runs, like `leafctl next`: lease, issue, finish.
        for t in 0..2 {
            let (endpoints, all_ids, stop, killed_at, ok_after_kill, failures) = (
                &endpoints,
                &all_ids,
                &stop,
                &killed_at,
                &ok_after_kill,
                &failures,
            );
            s.spawn(move || {
                let reg = EtcdLeaseRegistry::new(opts(
                    endpoints,
                    "cluster",
                    &format!("10.15.0.{t}:8080"),
                ));
                while !stop.load(Ordering::SeqCst) {
                    let begun = Instant::now();
                    let run = || -> Result<Vec<u64>, IssueError> {
                        let g = WorkerGenerator::start(&reg, &zero_start(system()))?;
                        let mut ids = Vec::new();
                        for _ in 0..20 {
                            ids.extend(g.next_block(50)?);
                        }
                        g.finish()?;
                        Ok(ids)
                    };
                    match run() {
                        Ok(ids) => {
                            all_ids.lock().unwrap().extend(ids);
                            if killed_at.lock().unwrap().is_some_and(|k| begun > k) {
                                ok_after_kill.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        Err(e) => {
                            failures.fetch_add(1, Ordering::SeqCst);
                            eprintln!("run failed (allowed during the election): {e}");
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            });
        }
        // A long-running holder, like `serve`: on a lost lease it leases again.
        let (endpoints, all_ids, stop, reacquired) = (&endpoints, &all_ids, &stop, &reacquired);
        s.spawn(move || {
            let reg = EtcdLeaseRegistry::new(opts(endpoints, "cluster", "10.15.1.1:8080"));
            let mut g: Option<WorkerGenerator> = None;
            while !stop.load(Ordering::SeqCst) {
                if g.is_none() {
                    match WorkerGenerator::start(&reg, &zero_start(system())) {
                        Ok(n) => {
                            reacquired.fetch_add(1, Ordering::SeqCst);
                            g = Some(n);
                        }
                        Err(e) => {
                            eprintln!("serve-like lease failed: {e}");
                            std::thread::sleep(Duration::from_millis(200));
                            continue;
                        }
                    }
                }
                if let Some(cur) = &g {
                    match cur.next_block(20) {
                        Ok(b) => all_ids.lock().unwrap().extend(b),
                        Err(e) => {
                            eprintln!("serve-like holder lost its lease: {e}");
                            let _ = cur.finish();
                            g = None;
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            if let Some(cur) = g {
                cur.finish().unwrap();
            }
        });

        cluster.kill_leader_under_load(&killed_at, stop);
    });
    let mut ids = all_ids.into_inner().unwrap();
    eprintln!(
        "{} IDs in {:?}; {} failed runs; {} runs begun after the kill succeeded; serve-like leased {} time(s)",
        ids.len(),
        started.elapsed(),
        failures.load(Ordering::SeqCst),
        ok_after_kill.load(Ordering::SeqCst),
        reacquired.load(Ordering::SeqCst)
    );
    assert!(ids.len() > 1_000);
    support::assert_unique(&mut ids);
    assert!(
        ok_after_kill.load(Ordering::SeqCst) > 0,
        "no run succeeded after the leader was killed"
    );
    assert!(
        cluster.leader().is_some(),
        "the cluster elected a new leader"
    );
}

#[test]
fn a_supervised_generator_replaces_a_reclaimed_etcd_lease_by_itself() {
    let etcd = EtcdServer::shared();
    let o = opts(&etcd.endpoints(), "supervised", "10.16.0.1:8080");
    let g = SupervisedGenerator::start(
        Box::new(EtcdLeaseRegistry::new(o.clone())),
        zero_start(system()),
    )
    .unwrap();
    let mut ids: Vec<u64> = g.next_block(100).unwrap().into_iter().collect();
    assert_eq!(g.status().acquisitions, 1);
    // Someone frees the worker id under the running server.
    let admin = EtcdLeaseRegistry::new(o.clone());
    let rec = admin.list(now_ms()).unwrap().remove(0);
    admin.reclaim(&rec).unwrap();
    // It stops issuing on the lost lease and, by itself, leases again and resumes.
    let t0 = Instant::now();
    while g.status().acquisitions < 2 || g.next_block(1).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", g.status());
        if let Ok(b) = g.next_block(10) {
            ids.extend(b);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for _ in 0..100 {
        if let Ok(b) = g.next_block(10) {
            ids.extend(b);
        }
    }
    let status = g.status();
    assert!(
        status
            .lease
            .unwrap()
            .starts_with("etcd lease /leafctl/supervised/leases/")
    );
    support::assert_unique(&mut ids);
    g.finish().unwrap();
    assert!(!held(&o, 0) && !held(&o, 1));
}

#[test]
fn leasing_and_issuing_from_inside_another_tokio_runtime() {
    // A server's request handler runs on its own tokio runtime; the lease's synchronous etcd
    // calls must work there too (tokio forbids a nested block_on).
    let etcd = EtcdServer::shared();
    let o = opts(&etcd.endpoints(), "nested", "10.17.0.1:8080");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let reg = EtcdLeaseRegistry::new(o.clone());
    let ids = rt.block_on(async move {
        let g = WorkerGenerator::start(&reg, &zero_start(clock.clone())).unwrap();
        let mut ids = Vec::new();
        for _ in 0..3 {
            // Past the reservation: the next block must write a new one first.
            clock.advance_ms(10_000);
            ids.extend(g.next_block(5).unwrap());
            tokio::task::yield_now().await;
        }
        g.finish().unwrap();
        drop(g);
        ids
    });
    assert_eq!(ids.len(), 15);
    assert!(reserved_until(&o, 0).unwrap() >= t + 30_000);
    assert!(!held(&o, 0));
}

#[test]
fn a_lease_records_times_ahead_of_the_clock_before_issuing_them() {
    let etcd = EtcdServer::shared();
    let o = opts(&etcd.endpoints(), "lead", "10.9.1.1:8080");
    let reg = EtcdLeaseRegistry::new(o.clone());
    let admin = EtcdLeaseRegistry::new(o.clone());
    let recorded = |worker: u64| {
        admin
            .list(now_ms())
            .unwrap()
            .into_iter()
            .find(|r| r.worker == worker)
            .and_then(|r| r.reserved_until_ms)
            .unwrap()
    };
    let clock = Arc::new(FakeClock::new(now_ms()));
    let lead = 4_000u64;
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let worker = g.worker();
    let mut last = 0;
    // 3,000 ticks' worth with the clock standing still but for 1 ms per 20 blocks.
    for i in 0..3_000 {
        let at = next_block_ahead(&g, &mut last, &*clock, lead);
        if i % 50 == 0 || i == 2_999 {
            let r = recorded(worker);
            assert!(r > at, "block at {at} returned before reserved_until ({r})");
        }
        if i % 20 == 19 {
            clock.advance_ms(1);
        }
    }
    assert!(time_of(last) > clock.now_ms() + 2_000, "the lead was used");
    g.finish().unwrap();
    drop(g);
    assert_eq!(recorded(worker), time_of(last) + 1, "exact last time");
    // The next holder with the same lead continues at once; without one it waits for the clock.
    let slept = clock.slept_ms();
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    assert_eq!(g.worker(), worker);
    let next = g.next_block(1).unwrap().first;
    assert!(next > last);
    assert_eq!(clock.slept_ms(), slept);
    g.finish().unwrap();
    drop(g);
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone())).unwrap();
    assert!(clock.now_ms() > time_of(last));
    assert!(g.next_block(1).unwrap().first > next);
    g.finish().unwrap();
}
