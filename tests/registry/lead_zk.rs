//! `--max-lead` with ZooKeeper registries (a private ZooKeeper 3.8): the lease's `reserved_until`
//! and the forever node's timestamp cover every time issued ahead of the clock before the IDs
//! are returned, and crashes or successors never repeat an ID.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use leafctl::snowflake::{Clock, FakeClock};
use leafctl::worker::IssueOptions;
use leafctl::worker::cache::{CacheFile, read as read_cache};
use leafctl::worker::{
    Registry, RegistryKind, WorkerGenerator, WorkerRecord, WorkerRegistry, ZkForeverRegistry,
    ZkLeaseRegistry, backends,
};
use support::snowflake::{
    SMALL, assert_clock_behind, leaf, now_ms, small, small_time, system, time_of, zero_start,
};
use support::zookeeper::{ZkServer, opts};
use support::{Sandbox, assert_unique, killed_mid_batch, parse_ids, stderr, wait_until};

/// Reads the registry as `leafctl workers list` does.
struct Inspector {
    admin: ZkLeaseRegistry,
    _dir: tempfile::TempDir,
}

impl Inspector {
    fn new(zk: &ZkServer, name: &str) -> Inspector {
        let dir = tempfile::tempdir().unwrap();
        let admin = ZkLeaseRegistry::new(opts(zk, name, "127.0.0.1:1", dir.path()));
        Inspector { admin, _dir: dir }
    }

    fn record(&self, mode: RegistryKind, worker: u64) -> WorkerRecord {
        self.admin
            .list(now_ms())
            .unwrap()
            .into_iter()
            .find(|r| r.mode == mode && r.worker == worker)
            .unwrap_or_else(|| panic!("no {mode:?} record for worker {worker}"))
    }
}

/// Issues `blocks` blocks with the clock standing still (but for 1 ms every 20 blocks), checking
/// after each that `recorded()` already covers its time and that it is within the lead.
fn issue_checked(
    g: &WorkerGenerator,
    clock: &FakeClock,
    lead: i64,
    blocks: usize,
    mut recorded: impl FnMut() -> i64,
) -> Vec<u64> {
    let mut ids = Vec::new();
    for i in 0..blocks {
        let b = g.next_block(4096).unwrap();
        let t = time_of(b.first);
        assert!(t <= clock.now_ms() + lead, "{t} beyond the lead");
        if i % 25 == 0 || i + 1 == blocks {
            let r = recorded();
            assert!(
                r > t,
                "block at {t} returned before the registry recorded it ({r})"
            );
        }
        ids.extend(b);
        if i % 20 == 19 {
            clock.advance_ms(1);
        }
    }
    ids
}

#[test]
fn a_lease_records_times_ahead_of_the_clock_before_issuing_them() {
    let zk = ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    let reg = ZkLeaseRegistry::new(opts(zk, "leadlease", "10.60.0.1:8080", state.path()));
    let clock = Arc::new(FakeClock::new(now_ms()));
    let lead = 4_000;
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let worker = g.worker();
    let zk_view = Inspector::new(zk, "leadlease");
    let ids = issue_checked(&g, &clock, lead as i64, 3_000, || {
        zk_view
            .record(backends::ZK_LEASE.kind, worker)
            .reserved_until_ms
            .unwrap()
    });
    let last = *ids.last().unwrap();
    let last_ms = time_of(last);
    assert!(last_ms > clock.now_ms() + 2_000, "the lead was used");
    g.finish().unwrap();
    drop(g);
    let r = zk_view.record(backends::ZK_LEASE.kind, worker);
    assert_eq!(r.reserved_until_ms, Some(last_ms + 1), "exact last time");

    // The next holder with the same lead continues after it at once.
    let slept = clock.slept_ms();
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    assert_eq!(g.worker(), worker);
    let next = g.next_block(1).unwrap().first;
    assert!(next > last);
    assert_eq!(clock.slept_ms(), slept, "no wait within the lead");
    g.finish().unwrap();
    drop(g);
    // Without a lead it waits for the clock to pass the record.
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone())).unwrap();
    assert!(clock.now_ms() > last_ms);
    assert!(g.next_block(1).unwrap().first > next);
    g.finish().unwrap();
}

#[test]
fn the_forever_node_covers_times_ahead_of_the_clock_so_leafs_check_refuses() {
    let zk = ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    let o = opts(zk, "leadforever", "10.61.0.1:8080", state.path());
    let reg = ZkForeverRegistry::new(o.clone());
    let clock = Arc::new(FakeClock::new(now_ms()));
    let lead = 4_000;
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let worker = g.worker();
    let cache_path = CacheFile::path_for(state.path(), "leadforever", &o.identity);
    let zk_view = Inspector::new(zk, "leadforever");
    let ids = issue_checked(&g, &clock, lead as i64, 3_000, || {
        let node = zk_view
            .record(backends::ZK_FOREVER.kind, worker)
            .last_seen_ms
            .unwrap();
        let cache = read_cache(&cache_path).unwrap().unwrap().issued_below_ms;
        // The node's timestamp is a time at or after every issued one (Leaf's reading).
        (node + 1).min(cache)
    });
    let last_ms = time_of(*ids.last().unwrap());
    assert!(last_ms > clock.now_ms() + 2_000, "the lead was used");
    g.finish().unwrap();
    drop(g);
    let node = zk_view.record(backends::ZK_FOREVER.kind, worker);
    assert_eq!(
        node.last_seen_ms,
        Some(last_ms),
        "exactly the last time, ahead"
    );
    let cache = read_cache(&cache_path).unwrap().unwrap();
    assert_eq!((cache.issued_below_ms, cache.clean), (last_ms + 1, true));

    // Leaf's start-up check (timestamp ahead of the clock: refuse), and ours without a lead.
    let r = reg.acquire(&IssueOptions::new(leaf()).clock(clock.clone()));
    assert_clock_behind(r);
    // With the lead: continues after the last time.
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    assert_eq!(g.worker(), worker);
    assert!(g.next_block(1).unwrap().first > *ids.last().unwrap());
    g.finish().unwrap();
    drop(g);
    // A generator may not lead further than the lease it runs on records.
    let lease = reg
        .acquire(
            &IssueOptions::new(leaf())
                .clock(clock.clone())
                .max_lead_ms(3_900),
        )
        .unwrap();
    assert!(
        WorkerGenerator::on_lease(lease, &zero_start(clock.clone()).max_lead_ms(4_000)).is_err()
    );
}

#[test]
fn forever_mode_without_zookeeper_does_not_run_ahead() {
    let zk = ZkServer::start();
    let state = tempfile::tempdir().unwrap();
    let reg = ZkForeverRegistry::new(opts(&zk, "leaddown", "10.62.0.1:8080", state.path()));
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    let first = g.next_block(10).unwrap();
    g.finish().unwrap();
    drop(g);
    zk.kill();
    // From the cache: the node cannot record times ahead, so the lead is not used.
    let clock = Arc::new(FakeClock::new(now_ms() + 10));
    let t = clock.now_ms();
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(5_000)).unwrap();
    let mut last = first.last();
    for _ in 0..4 {
        let b = g.next_block(4096).unwrap();
        assert!(b.first > last);
        last = b.last();
        assert!(time_of(b.first) <= clock.now_ms());
    }
    assert!(clock.now_ms() > t, "waited for the clock");
    g.finish().unwrap();
}

/// `leafctl next` in the small layout from ZooKeeper (`registry` mode, 2 s sessions) as `name`
/// and `instance`: `n` IDs, at most `lead` ms ahead of the clock.
fn next_ahead(
    sb: &Sandbox,
    zk: &ZkServer,
    (registry, name, instance): (&str, &str, &str),
    n: &str,
    lead: &str,
) -> std::process::Command {
    let mut cmd = sb.leafctl_std();
    cmd.args([
        "next",
        "--snowflake",
        "--zk",
        &zk.hosts(),
        "--registry",
        registry,
    ])
    .args(["--name", name, "--instance", instance])
    .args(SMALL)
    .args(["--seq-start", "zero", "-n", n, "--max-lead", lead])
    .env("LEAF_ZK_SESSION_TIMEOUT_MS", "2000");
    cmd
}

#[test]
fn kill_9_in_a_borrowed_batch_with_a_zookeeper_lease_never_repeats() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let next =
        |n: &str, lead: &str| next_ahead(&sb, zk, ("lease", "leadkill", "10.63.0.1:8080"), n, lead);
    let started = now_ms();
    let cmd = next("1000000000", "20000");
    let killed = killed_mid_batch(cmd, 20_000);
    let killed_max = *killed.iter().max().unwrap();
    let worker = small().decode(killed_max).unwrap().worker;
    let max_ms = small_time(killed_max);
    assert!(
        max_ms >= started + 4_000,
        "the batch ran ahead of the clock"
    );
    let zk_view = Inspector::new(zk, "leadkill");
    let reserved = zk_view
        .record(backends::ZK_LEASE.kind, worker)
        .reserved_until_ms
        .unwrap();
    assert!(
        reserved > max_ms,
        "reserved_until {reserved} must cover the last ID printed ({max_ms})"
    );
    let run = |lead: &str| {
        let out = support::run_ok(next("1000", lead));
        parse_ids(&out.stdout)
    };
    // At once: the dead session still holds the lease, so another worker id is used.
    let mut all = killed.clone();
    all.extend(run("20000"));
    // Once the dead session is gone, its worker id again: after the killed run's reservation.
    assert!(
        wait_until(Duration::from_secs(20), || {
            !zk_view.record(backends::ZK_LEASE.kind, worker).held
        }),
        "the killed run's session did not expire"
    );
    for lead in ["20000", "0"] {
        let ids = run(lead);
        assert_eq!(small().decode(ids[0]).unwrap().worker, worker);
        assert!(
            ids[0] > killed_max,
            "lead {lead}: repeated the killed run's time"
        );
        all.extend(ids);
    }
    assert_unique(&mut all);
}

#[test]
fn forever_with_a_lead_then_a_second_process_right_after_waits_or_refuses() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let next = |n: &str, lead: &str| {
        next_ahead(
            &sb,
            zk,
            ("forever", "leadsecond", "10.64.0.1:8080"),
            n,
            lead,
        )
    };
    // A second process: exit 1 with nothing printed, or IDs after everything before.
    let second = |after: u64| {
        let out = next("1000", "0").output().unwrap();
        if out.status.success() {
            let ids = parse_ids(&out.stdout);
            assert!(ids[0] > after, "the second process repeated a time");
            ids
        } else {
            assert_eq!(out.status.code(), Some(1));
            assert!(out.stdout.is_empty());
            let err = stderr(&out);
            assert!(
                err.contains("behind") || err.contains("already running"),
                "{err}"
            );
            Vec::new()
        }
    };

    // A clean run 5 s ahead of the clock.
    let out = support::run_ok(next("20000", "20000"));
    let first = parse_ids(&out.stdout);
    let first_max = *first.last().unwrap();
    let worker = small().decode(first_max).unwrap().worker;
    let zk_view = Inspector::new(zk, "leadsecond");
    let node = zk_view.record(backends::ZK_FOREVER.kind, worker);
    assert!(node.last_seen_ms.unwrap() >= small_time(first_max));
    assert!(
        node.last_seen_ms.unwrap() > now_ms(),
        "Leaf's start-up check on this identity refuses until the clock passes it"
    );
    let mut all = first.clone();
    all.extend(second(first_max));

    // A run killed in the middle of a batch ahead of the clock.
    let cmd = next("1000000000", "20000");
    let killed = killed_mid_batch(cmd, 20_000);
    let killed_max = *killed.iter().max().unwrap();
    let node = zk_view.record(backends::ZK_FOREVER.kind, worker);
    assert!(
        node.last_seen_ms.unwrap() >= small_time(killed_max),
        "the node's timestamp covers the last ID printed"
    );
    all.extend(killed.iter().copied());
    all.extend(second(killed_max));
    // The same lead continues after it.
    let out = support::run_ok(next("1000", "20000"));
    let ids = parse_ids(&out.stdout);
    assert!(ids[0] > killed_max);
    all.extend(ids);
    assert_unique(&mut all);
}
