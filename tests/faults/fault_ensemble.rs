//! Fault suite, a 3-node ZooKeeper ensemble on loopback (RELIABILITY.md scenario 6): the leader
//! killed under `serve` load (a leased and a forever server), then a second member (no quorum),
//! then a member back (quorum again). Both servers share one name (one worker-id space): zero
//! duplicates throughout.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use support::fault::{Seen, Steady};
use support::serve::{LEASE_REFUSALS, Serve, http};
use support::snowflake::{time_of, worker_of};
use support::zookeeper::ZkEnsemble;
use support::{Sandbox, assert_unique, wait_until};

const SESSION_MS: u64 = 4_000;
const PATH: &str = "/api/snowflake/get/k";

/// The load on a server: two client threads, a request every 5 ms each (every 10th for 100
/// IDs), for at most 120 s.
const LOAD: Steady = Steady {
    pause: Duration::from_millis(5),
    limit: Duration::from_secs(120),
};

/// The longest stretch without an answered ID in a load's timeline (from its start to its end).
fn longest_gap(seen: &Seen, end: Duration) -> Duration {
    let mut last = Duration::ZERO;
    let mut gap = Duration::ZERO;
    for (t, st) in seen.timeline.iter().filter(|(_, st)| *st == 200) {
        let _ = st;
        gap = gap.max(t.saturating_sub(last));
        last = *t;
    }
    gap.max(end.saturating_sub(last))
}

/// For each worker id: every ID of `later` is at a later time than every ID of `earlier`.
fn after_on_each_worker(earlier: &[u64], later: &[u64]) {
    let mut last: BTreeMap<u64, i64> = BTreeMap::new();
    for &id in earlier {
        let e = last.entry(worker_of(id)).or_insert(i64::MIN);
        *e = (*e).max(time_of(id));
    }
    for &id in later {
        if let Some(&t) = last.get(&worker_of(id)) {
            assert!(time_of(id) > t, "worker {} reused a time", worker_of(id));
        }
    }
}

#[test]
fn an_ensemble_losing_its_leader_then_its_quorum_never_duplicates_and_recovers() {
    let ens = ZkEnsemble::start();
    let hosts = ens.hosts();
    let sb = Sandbox::new();
    // Leaf's forever node first (worker 0), then a lease on the same name (which skips it).
    let on_ens = Serve::snowflake(&sb)
        .env("LEAF_ZK", &hosts)
        .env("LEAF_NAME", "ens")
        .env("LEAF_ZK_SESSION_TIMEOUT_MS", SESSION_MS.to_string());
    let forever = on_ens
        .clone()
        .args(["--registry", "forever", "--instance", "10.70.0.1:8080"])
        .start();
    let lease = on_ens.start();
    let mut lease_ids: Vec<Vec<u64>> = Vec::new();
    let mut forever_ids: Vec<u64> = Vec::new();

    // 1. The leader dies under load: the survivors elect another; the leased server is back
    //    within a session timeout (same session), the forever server never stops.
    let (ll, lf) = (LOAD.on(&lease, PATH), LOAD.on(&forever, PATH));
    assert!(ll.wait_for_answers(50, Duration::from_secs(30)));
    assert!(lf.wait_for_answers(50, Duration::from_secs(30)));
    let leader = ens.leader().expect("a leader");
    let killed_at = ll.elapsed();
    ens.members[leader].kill();
    assert!(
        ens.wait_for_quorum(Duration::from_secs(60)),
        "no new leader: {}",
        ens.logs()
    );
    let elected = ll.elapsed() - killed_at;
    assert!(
        wait_until(Duration::from_secs(30), || http(
            lease.addr,
            "GET",
            PATH,
            &[]
        )
        .is_ok_and(|r| r.status == 200)),
        "the leased server did not resume; {}",
        lease.stderr()
    );
    assert!(ll.wait_for_answers(50, Duration::from_secs(30)));
    let end = ll.elapsed();
    let (seen_l, seen_f) = (ll.stop(), lf.stop());
    let gap = longest_gap(&seen_l, end);
    eprintln!(
        "leader {leader} killed: new leader after {elected:?}; the leased server's longest gap {gap:?}, refusals {:?}",
        seen_l.errors
    );
    assert!(
        gap < Duration::from_millis(SESSION_MS + 3_000),
        "the leased server stopped for {gap:?}"
    );
    assert!(
        seen_l
            .errors
            .keys()
            .all(|c| LEASE_REFUSALS.contains(&c.as_str())),
        "{:?}",
        seen_l.errors
    );
    assert_eq!(
        seen_f.statuses.keys().copied().collect::<Vec<_>>(),
        vec![200],
        "forever mode never stops: {:?}",
        seen_f.errors
    );
    lease_ids.push(seen_l.ids);
    forever_ids.extend(seen_f.ids);

    // 2. A second member dies: no quorum. The leased server stops within a session timeout (its
    //    session cannot be vouched for); the forever server goes on.
    let (ll, lf) = (LOAD.on(&lease, PATH), LOAD.on(&forever, PATH));
    assert!(ll.wait_for_answers(50, Duration::from_secs(30)));
    let second = (0..3)
        .find(|&i| i != leader && ens.members[i].running())
        .unwrap();
    let lost_at = ll.elapsed();
    ens.members[second].kill();
    std::thread::sleep(Duration::from_millis(2 * SESSION_MS));
    assert_eq!(lease.get("/readyz").status, 503);
    let back_at = ll.elapsed();

    // 3. A member returns: quorum again; the leased server resumes by itself.
    ens.members[leader].restart();
    assert!(
        ens.wait_for_quorum(Duration::from_secs(60)),
        "no quorum again: {}",
        ens.logs()
    );
    assert!(
        wait_until(Duration::from_secs(60), || http(
            lease.addr,
            "GET",
            PATH,
            &[]
        )
        .is_ok_and(|r| r.status == 200)),
        "the leased server did not resume after the quorum came back; {}",
        lease.stderr()
    );
    assert!(ll.wait_for_answers(50, Duration::from_secs(30)));
    let (seen_l, seen_f) = (ll.stop(), lf.stop());
    let limit = lost_at + Duration::from_millis(SESSION_MS);
    let first_refusal = seen_l
        .timeline
        .iter()
        .find(|(t, st)| *t >= lost_at && *st != 200)
        .map(|(t, _)| *t)
        .expect("the leased server never refused without a quorum");
    assert!(
        first_refusal < limit,
        "refused only at {first_refusal:?} (quorum lost at {lost_at:?})"
    );
    let late: Vec<_> = seen_l
        .timeline
        .iter()
        .filter(|(t, st)| *st == 200 && *t >= limit && *t < back_at)
        .collect();
    assert!(late.is_empty(), "IDs without a quorum: {late:?}");
    assert_eq!(
        seen_f.statuses.keys().copied().collect::<Vec<_>>(),
        vec![200],
        "forever mode never stops: {:?}",
        seen_f.errors
    );
    eprintln!(
        "quorum lost: leased server refused after {:?}: {:?}",
        first_refusal - lost_at,
        seen_l.errors
    );
    lease_ids.push(seen_l.ids);
    forever_ids.extend(seen_f.ids);

    after_on_each_worker(&lease_ids[0], &lease_ids[1]);
    let mut all: Vec<u64> = lease_ids.into_iter().flatten().collect();
    let lease_workers: std::collections::BTreeSet<u64> =
        all.iter().map(|&i| worker_of(i)).collect();
    all.extend(&forever_ids);
    assert_unique(&mut all);
    eprintln!("lease worker ids used: {lease_workers:?}");
    let started = Instant::now();
    for s in [lease, forever] {
        s.stop_cleanly();
    }
    assert!(started.elapsed() < Duration::from_secs(30));
}
