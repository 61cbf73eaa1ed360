//! The fence contract of every worker-id registry: whatever keeps the worker id (ZooKeeper's
//! leases or Leaf's forever tree, etcd, the MySQL or PostgreSQL table, the local state
//! directory), a holder that comes back on its id never issues at a time its predecessor may
//! have used. One body a check, run on all six by [`fence_contract!`]; a new registry gets them
//! all by adding a fixture below. (What only some registries promise is in their own contracts:
//! `lease.rs` for leases, `reuse.rs` for the tables.)

use std::sync::Arc;

use leafctl::snowflake::{Clock, FakeClock, SnowflakeError};
use leafctl::worker::{IssueError, Registry, StateError, WorkerError, WorkerGenerator};

use crate::support::snowflake::{issue, issue_over_ms, now_ms, zero_start};

/// Opens the registry of an identity (`ip:port`) on one store.
pub type Open = Box<dyn Fn(&str) -> Box<dyn Registry>>;

/// One registry's store, fresh for one check.
pub struct Fixture {
    /// The registry of an identity on the store.
    pub open: Open,
    /// What it does when its worker id was last used at a time the clock has not reached.
    pub behind: Behind,
}

/// The two ways a registry keeps a successor off its predecessor's times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behind {
    /// Leases and tables hand an id from machine to machine: a recorded time ahead is another
    /// clock's (or a reservation), waited out up to a bound, refused beyond it.
    WaitsOut,
    /// The local state file and Leaf's forever node belong to one identity: a time ahead of
    /// its own record means this clock went back, and nothing is issued until it passes it.
    Refuses,
}

/// Generates module `$module` with one `#[test]` a check of the contract, each on a fresh
/// fixture made by `$fixture` (an expression read in this file's scope).
macro_rules! fence_contract {
    ($module:ident: $fixture:expr) => {
        /// The fence contract (`tests/registry/fence.rs`) on this registry.
        mod $module {
            use super::*;

            fn fixture() -> Fixture {
                $fixture
            }

            #[test]
            fn a_crashed_holder_is_waited_out_by_its_successor() {
                super::a_crashed_holder_is_waited_out_by_its_successor(&fixture());
            }

            #[test]
            fn a_clean_finish_records_its_last_time_and_a_clock_far_behind_it_is_refused() {
                super::a_clean_finish_records_its_last_time_and_a_clock_far_behind_it_is_refused(
                    &fixture(),
                );
            }
        }
    };
}

const IDENTITY: &str = "10.91.0.1:8080";

/// Whether `e` says the clock is behind a recorded time or went backwards.
fn is_clock_error(e: &IssueError) -> bool {
    matches!(
        e,
        IssueError::Worker(WorkerError::ClockBehind { .. })
            | IssueError::Worker(WorkerError::State(StateError::ClockBehind { .. }))
            | IssueError::Snowflake(SnowflakeError::ClockMovedBackwards { .. })
    )
}

/// Starts a generator as [`IDENTITY`] on `clock` and takes 10 IDs: the generator and its IDs,
/// or the error of the start or of the first IDs.
fn start_and_issue(
    f: &Fixture,
    clock: &Arc<FakeClock>,
) -> Result<(WorkerGenerator, Vec<u64>), IssueError> {
    let g = WorkerGenerator::start(&*(f.open)(IDENTITY), &zero_start(clock.clone()))?;
    let ids = g.next_block(10)?.into_iter().collect();
    Ok((g, ids))
}

/// Asserts that a start on `clock` gives no ID, with an error that says the clock is behind.
fn assert_refused(f: &Fixture, clock: &Arc<FakeClock>) {
    match start_and_issue(f, clock) {
        Ok((_, ids)) => panic!("issued {ids:?} with the clock behind the record"),
        Err(e) => assert!(is_clock_error(&e), "refused, but not for the clock: {e}"),
    }
}

/// A holder issues over 50 ms and crashes (no finish). The same identity comes back on the
/// same worker id with its clock 500 ms behind: a registry that waits out waits past every
/// time the crashed holder may have used; one that refuses issues nothing until the clock is
/// past them. Either way every ID it then issues is above all of the crashed holder's.
pub fn a_crashed_holder_is_waited_out_by_its_successor(f: &Fixture) {
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let a = WorkerGenerator::start(&*(f.open)(IDENTITY), &zero_start(clock.clone())).unwrap();
    let a_ids = issue_over_ms(&a, &clock, 50, 3);
    let a_worker = a.worker();
    drop(a);

    clock.set_ms(t - 500);
    if f.behind == Behind::Refuses {
        assert_refused(f, &clock);
        clock.set_ms(t + 50);
    }
    let (b, b_ids) = start_and_issue(f, &clock).unwrap();
    assert_eq!(b.worker(), a_worker, "the identity comes back on its id");
    assert!(
        clock.now_ms() >= t + 49,
        "the successor issued before the crashed holder's last time ({} < {})",
        clock.now_ms(),
        t + 49
    );
    let a_max = *a_ids.iter().max().unwrap();
    assert!(
        b_ids.iter().all(|id| *id > a_max),
        "the successor reused a time of the crashed holder"
    );
    b.finish().unwrap();
}

/// A holder finishes cleanly. Its successor on the same id with the clock 500 ms behind its
/// last time: a registry that waits out waits for that exact time (not a whole reservation);
/// one that refuses issues nothing. An hour behind, every registry refuses (rather than wait
/// an hour or issue at used times). Every ID issued is above all of the first holder's.
pub fn a_clean_finish_records_its_last_time_and_a_clock_far_behind_it_is_refused(f: &Fixture) {
    let t = now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let a = WorkerGenerator::start(&*(f.open)(IDENTITY), &zero_start(clock.clone())).unwrap();
    let mut a_ids = issue(&a, 100);
    clock.advance_ms(20);
    a_ids.extend(issue(&a, 10));
    a.finish().unwrap();
    let a_last = a.generator().last_issued_ms().unwrap();
    let a_worker = a.worker();
    drop(a);
    let a_max = *a_ids.iter().max().unwrap();

    clock.set_ms(a_last - 500);
    match f.behind {
        Behind::WaitsOut => {
            let (b, b_ids) = start_and_issue(f, &clock).unwrap();
            assert_eq!(b.worker(), a_worker, "the identity comes back on its id");
            assert_eq!(
                clock.now_ms(),
                a_last + 1,
                "the successor waits for the exact last time, no longer"
            );
            assert!(b_ids.iter().all(|id| *id > a_max), "a time was used twice");
            b.finish().unwrap();
        }
        Behind::Refuses => assert_refused(f, &clock),
    }

    clock.set_ms(a_last - 3_600_000);
    assert_refused(f, &clock);
}

/// A registry on the shared ZooKeeper under a fresh name, made by `make` from its options.
fn on_zookeeper(
    what: &str,
    make: fn(leafctl::worker::ZkOptions) -> Box<dyn Registry>,
    behind: Behind,
) -> Fixture {
    let zk = crate::support::zookeeper::ZkServer::shared();
    let state = tempfile::tempdir().unwrap();
    let name = fresh_name(what);
    Fixture {
        open: Box::new(move |identity| {
            make(crate::support::zookeeper::opts(
                zk,
                &name,
                identity,
                state.path(),
            ))
        }),
        behind,
    }
}

/// etcd's leases (`/leafctl/{name}/leases/`) on the shared etcd under a fresh name.
fn on_etcd() -> Fixture {
    let endpoints = crate::support::etcd::EtcdServer::shared().endpoints();
    let name = fresh_name("etcd");
    Fixture {
        open: Box::new(move |identity| {
            let options = crate::support::etcd::opts(&endpoints, &name, identity);
            Box::new(leafctl::worker::EtcdLeaseRegistry::new(options))
        }),
        behind: Behind::WaitsOut,
    }
}

/// MySQL's `leaf_workerid_alloc` in a fresh database on the shared MariaDB.
fn on_mariadb() -> Fixture {
    use crate::support::mariadb::{MariaDb, PASSWORD};
    use leafctl::db::mysql::{MysqlOptions, MysqlRegistry};
    let db = MariaDb::shared();
    let url = db.url(&db.fresh_db());
    db_init(&url, Some(PASSWORD));
    Fixture {
        open: Box::new(move |identity| {
            Box::new(MysqlRegistry::new(MysqlOptions {
                url: url.clone(),
                password: Some(PASSWORD.into()),
                identity: identity.parse().unwrap(),
                wait_timeout: Some(leafctl::db::DEFAULT_REGISTRY_WAIT_TIMEOUT),
            }))
        }),
        behind: Behind::WaitsOut,
    }
}

/// PostgreSQL's `leaf_workerid_alloc` in a fresh database on the shared server.
fn on_postgres() -> Fixture {
    use leafctl::db::postgres::{PostgresOptions, PostgresRegistry};
    let pg = crate::support::postgres::Postgres::shared();
    let url = pg.url(&pg.fresh_db());
    db_init(&url, None);
    Fixture {
        open: Box::new(move |identity| {
            let wait = Some(leafctl::db::DEFAULT_REGISTRY_WAIT_TIMEOUT);
            let options = PostgresOptions::new(&url, None, identity.parse().unwrap(), wait);
            Box::new(PostgresRegistry::new(options.unwrap()))
        }),
        behind: Behind::WaitsOut,
    }
}

/// The local registry: the operator's `--worker-id` (7) and a fresh state directory (the
/// identity is the machine's; the id is the one given).
fn on_local_state() -> Fixture {
    let state = tempfile::tempdir().unwrap();
    Fixture {
        open: Box::new(move |_identity| {
            Box::new(leafctl::worker::LocalRegistry {
                state_dir: state.path().to_path_buf(),
                name: "fence".into(),
                worker: 7,
                no_wait: false,
            })
        }),
        behind: Behind::Refuses,
    }
}

fence_contract!(zk_lease: on_zookeeper(
    "lease",
    |o| Box::new(leafctl::worker::ZkLeaseRegistry::new(o)),
    Behind::WaitsOut
));
fence_contract!(zk_forever: on_zookeeper(
    "forever",
    |o| Box::new(leafctl::worker::ZkForeverRegistry::new(o)),
    Behind::Refuses
));
fence_contract!(etcd: on_etcd());
fence_contract!(mysql: on_mariadb());
fence_contract!(postgres: on_postgres());
fence_contract!(local: on_local_state());

/// A name no other test uses: `{what}-{pid}-{n}`.
fn fresh_name(what: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "fence-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// `leafctl db init` on `url`: the worker table the database registries keep.
fn db_init(url: &str, password: Option<&str>) {
    let sb = crate::support::Sandbox::new();
    let mut cmd = sb.leafctl();
    cmd.args(["db", "init", "--db", url]);
    if let Some(p) = password {
        cmd.env("LEAF_DB_PASSWORD", p);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "db init: {}",
        crate::support::stderr(&out)
    );
}
