//! The lease registry contract: worker ids leased for a bounded time with a recorded
//! reservation (`reserved_until`), so a successor never reuses a time. One body a check, run
//! on ZooKeeper's lease mode (`worker_zk.rs`) and on etcd (`worker_etcd.rs`) by
//! [`lease_registry_contract!`]; a new lease backend gets them all by building a [`Leases`].

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use leafctl::snowflake::{Clock, FakeClock};
use leafctl::worker::{
    IssueOptions, Registry, RegistryKind, WorkerGenerator, WorkerLease, WorkerRecord,
};

use crate::support::snowflake::{
    assert_clock_behind, issue, issue_over_ms, leaf, now_ms, zero_start,
};
use crate::support::wait_until;

/// Opens the registry of `name` (a worker-id space) as identity `ip:port`.
pub type OpenRegistry = Box<dyn Fn(&str, &str) -> Box<dyn Registry>>;

/// One lease backend on its server.
pub struct Leases {
    /// The registry of a name as an identity.
    pub registry: OpenRegistry,
    /// How many leases the server stores for `name` (its own keys or nodes, read directly).
    pub stored: Box<dyn Fn(&str) -> usize>,
    /// The kind its records name.
    pub kind: RegistryKind,
}

impl Leases {
    fn record(&self, name: &str, worker: u64) -> Option<WorkerRecord> {
        (self.registry)(name, "10.99.99.99:1")
            .list(now_ms())
            .unwrap()
            .into_iter()
            .find(|r| r.worker == worker)
    }

    fn reserved_until(&self, name: &str, worker: u64) -> Option<i64> {
        self.record(name, worker).and_then(|r| r.reserved_until_ms)
    }

    fn held(&self, name: &str, worker: u64) -> bool {
        self.record(name, worker).is_some_and(|r| r.held)
    }
}

/// Generates one `#[test]` a check of the contract: `$fixture()` is a function of the invoking
/// module that returns its [`Leases`]. `reports_ignored = "why"` marks the one check a backend
/// is known to fail (reported, never weakened).
macro_rules! lease_registry_contract {
    ($fixture:ident) => {
        $crate::lease::lease_registry_contract!(@with $fixture, []);
    };
    ($fixture:ident, reports_ignored = $why:literal) => {
        $crate::lease::lease_registry_contract!(@with $fixture, [#[ignore = $why]]);
    };
    (@with $fixture:ident, [$($report:tt)*]) => {
        /// The lease registry contract (`tests/registry/lease.rs`) on this backend.
        mod contract {
            use crate::lease as c;

            #[test]
            fn leases_are_the_lowest_free_ids_and_distinct() {
                c::leases_are_the_lowest_free_ids_and_distinct(&super::$fixture());
            }

            #[test]
            fn lease_handoff_never_reuses_a_timestamp() {
                c::lease_handoff_never_reuses_a_timestamp(&super::$fixture());
            }

            #[test]
            fn a_busy_lease_is_renewed_ahead_of_need() {
                c::a_busy_lease_is_renewed_ahead_of_need(&super::$fixture());
            }

            #[test]
            $($report)*
            fn a_lease_holder_reports_its_clock_into_its_record() {
                c::a_lease_holder_reports_its_clock_into_its_record(&super::$fixture());
            }
        }
    };
}
pub(crate) use lease_registry_contract;

/// Leases take the lowest free ids, a released id is reused first, sixteen at once are all
/// different; the server stores exactly the leases held, the registry lists each as held, and
/// none is left once all are finished.
pub fn leases_are_the_lowest_free_ids_and_distinct(f: &Leases) {
    let reg = (f.registry)("lowest", "10.7.0.1:8080");
    let a = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    let b = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    let c = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    assert_eq!((a.worker(), b.worker(), c.worker()), (0, 1, 2));
    b.finish(None).unwrap();
    let d = reg.acquire(&IssueOptions::new(leaf())).unwrap();
    assert_eq!(d.worker(), 1, "a released id is reused first");
    // 16 threads at once: all different.
    let leases: Vec<Arc<dyn WorkerLease>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..16)
            .map(|_| s.spawn(|| reg.acquire(&IssueOptions::new(leaf())).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ids: BTreeSet<u64> = leases.iter().map(|l| l.worker()).collect();
    assert_eq!(ids.len(), 16, "{ids:?}");
    assert!(!ids.iter().any(|w| [0, 1, 2].contains(w)));
    assert_eq!((f.stored)("lowest"), 19, "one stored lease a holder");
    let held: BTreeSet<u64> = reg
        .list(now_ms())
        .unwrap()
        .into_iter()
        .filter(|r| r.held)
        .map(|r| r.worker)
        .collect();
    let mut all = ids.clone();
    all.extend([0, 1, 2]);
    assert_eq!(held, all, "the registry lists every lease as held");
    for l in leases.iter().chain([&a, &c, &d]) {
        l.finish(None).unwrap();
    }
    assert_eq!((f.stored)("lowest"), 0, "finished leases are gone");
    assert!(
        reg.list(now_ms()).unwrap().iter().all(|r| !r.held),
        "nothing held after finishing"
    );
}

/// A holder that crashes leaves its reservation: the next holder of its id, on a clock 1 s
/// behind, waits past it; a clean finish records the exact bound, so the one after waits only
/// for that; a clock an hour behind is refused and gives the id back.
pub fn lease_handoff_never_reuses_a_timestamp(f: &Leases) {
    let reg = (f.registry)("handoff", "10.8.0.1:8080");
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));

    // A issues over 50 ms and "crashes" (no finish): its reservation stays on the server.
    let a = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    let a_ids = issue_over_ms(&a, &clock, 50, 3);
    let a_worker = a.worker();
    drop(a);
    assert!(f.reserved_until("handoff", a_worker).unwrap() >= t + 49);

    // B gets the same id with its clock 1 s behind A's: it must wait past A's reservation.
    clock.set_ms(t - 1_000);
    let b = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    assert_eq!(b.worker(), a_worker);
    assert!(clock.now_ms() >= t + 49, "B waited for A's reservation");
    let b_ids = issue(&b, 100);
    let a_max = *a_ids.iter().max().unwrap();
    assert!(b_ids.iter().all(|id| *id > a_max), "B reused A's time");
    b.finish().unwrap();
    let b_last = b.generator().last_issued_ms().unwrap();
    drop(b);
    assert_eq!(
        f.reserved_until("handoff", a_worker),
        Some(b_last + 1),
        "a clean finish records the exact bound"
    );

    // C after a clean finish: waits only for B's exact last time, not the whole window.
    clock.set_ms(b_last - 500);
    let c = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    assert_eq!(c.worker(), a_worker);
    assert_eq!(clock.now_ms(), b_last + 1);
    let c_ids = issue(&c, 10);
    assert!(c_ids[0] > *b_ids.iter().max().unwrap());
    c.finish().unwrap();

    // Far behind the reservation: refused rather than waiting for long, and the id is free again.
    clock.set_ms(b_last - 3_600_000);
    let r = reg.acquire(&IssueOptions::new(leaf()).clock(clock.clone()));
    assert_clock_behind(r);
    assert!(
        !f.held("handoff", a_worker),
        "a refused start gives the id back"
    );
}

/// A busy holder's reservation is renewed before it is reached; a clean finish records the
/// exact bound and gives the lease up.
pub fn a_busy_lease_is_renewed_ahead_of_need(f: &Leases) {
    let reg = (f.registry)("renew", "10.11.0.1:8080");
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let g = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    issue(&g, 10);
    let first = f.reserved_until("renew", 0).unwrap();
    assert!(first > t, "reserved before issuing");
    // Still busy half-way through the window: the renewer moves the bound before it is reached.
    clock.advance_ms(1_500);
    issue(&g, 10);
    assert!(
        wait_until(Duration::from_secs(20), || f
            .reserved_until("renew", 0)
            .unwrap()
            > first),
        "reserved_until was not renewed ahead of need"
    );
    assert!(f.reserved_until("renew", 0).unwrap() >= t + 1_500 + 3_000);
    g.finish().unwrap();
    let last = g.generator().last_issued_ms().unwrap();
    assert_eq!(
        f.reserved_until("renew", 0),
        Some(last + 1),
        "a clean finish records the exact bound"
    );
    assert!(!f.held("renew", 0), "finish gives the lease up");
}

/// A holder reports its clock into its record every few seconds (what `workers list` shows as
/// `last_seen` and `workers doctor` compares with), under its identity and the backend's kind.
pub fn a_lease_holder_reports_its_clock_into_its_record(f: &Leases) {
    let reg = (f.registry)("report", "10.12.0.1:8080");
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let g = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    issue(&g, 10);
    clock.advance_ms(60_000);
    assert!(
        wait_until(Duration::from_secs(10), || {
            f.record("report", 0).and_then(|r| r.last_seen_ms) >= Some(t + 60_000)
        }),
        "no report: {:?}",
        f.record("report", 0)
    );
    let rec = f.record("report", 0).unwrap();
    assert_eq!(rec.identity, "10.12.0.1:8080");
    assert_eq!(rec.mode, f.kind);
    assert!(rec.held && rec.is_live(t + 60_000), "{rec:?}");
    clock.advance_ms(-60_000);
    g.finish().unwrap();
    assert!(!f.held("report", 0), "finish gives the lease up");
}
