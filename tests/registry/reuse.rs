//! The table registry contract: NotFound9's `leaf_workerid_alloc` as a worker registry (rows by
//! `ip:port`, a lock per row, `max_timestamp` as the fence) and its ids recycled (issue 33). One
//! body a check, run on MySQL (`worker_mysql.rs`) and PostgreSQL (`worker_postgres.rs`) by
//! [`table_registry_contract!`]; a new table backend gets them all by building a [`Table`].

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use leafctl::db::TableError;
use leafctl::snowflake::{Clock, FakeClock, Layout, SystemClock};
use leafctl::worker::{IssueOptions, Registry, WorkerError, WorkerGenerator, WorkerStatus};

use crate::support::snowflake::{assert_clock_behind, issue, leaf, system, zero_start};
use crate::support::{Sandbox, assert_contains_all, assert_unique, parse_ids, stderr, wait_until};

/// One database's `leaf_workerid_alloc`: how to open its registry as an identity, and how the
/// CLI reaches it.
pub struct Table<'a> {
    /// The registry of `ip:port`.
    pub registry: &'a (dyn Fn(&str) -> Box<dyn Registry> + Sync),
    /// The CLI flags that reach the table (`--db URL`).
    pub db: Vec<String>,
    /// The CLI flags that pick the registry for `next` (`--registry mysql`), if any.
    pub pick: Vec<String>,
    /// Environment for the CLI (the password).
    pub env: Vec<(String, String)>,
    /// How many rows the table has.
    pub rows: &'a dyn Fn() -> usize,
    /// Runs a statement as an administrator (what NotFound9's servers write), returning its
    /// output.
    pub sql: &'a dyn Fn(&str) -> String,
    /// How the backend names the lock of row 1 when a second live process wants it.
    pub lock_of_row_1: String,
}

/// Generates one `#[test]` a check of the contract, each on a fresh table: `$on_fresh_table`
/// is a function of the invoking module that builds a [`Table`] and runs the check on it.
macro_rules! table_registry_contract {
    ($on_fresh_table:ident) => {
        /// The table registry contract (`tests/registry/reuse.rs`) on this backend.
        mod contract {
            use crate::reuse as c;

            #[test]
            fn ids_come_from_rows_by_ip_port_and_are_kept() {
                super::$on_fresh_table(c::ids_come_from_rows_by_ip_port_and_are_kept);
            }

            #[test]
            fn a_crashed_holder_is_waited_out_and_a_clock_behind_is_refused() {
                super::$on_fresh_table(
                    c::a_crashed_holder_is_waited_out_and_a_clock_behind_is_refused,
                );
            }

            #[test]
            fn identities_one_after_another_share_one_id() {
                super::$on_fresh_table(c::identities_one_after_another_share_one_id);
            }

            #[test]
            fn killed_holders_cost_an_id_only_while_waited_out() {
                super::$on_fresh_table(c::killed_holders_cost_an_id_only_while_waited_out);
            }

            #[test]
            fn newcomers_racing_never_share_an_id() {
                super::$on_fresh_table(c::newcomers_racing_never_share_an_id);
            }

            #[test]
            fn a_refused_attempt_leaves_no_row() {
                super::$on_fresh_table(c::a_refused_attempt_leaves_no_row);
            }

            /// Issue 33's figure: ids used after 2,000 identities, and how long they took.
            #[test]
            #[ignore = "a measurement: cargo test --release --test registry -- --ignored --nocapture many_identities"]
            fn many_identities_measured() {
                super::$on_fresh_table(c::many_identities_measured);
            }

            /// The same through the CLI, one process per identity.
            #[test]
            #[ignore = "a measurement: cargo test --release --test registry -- --ignored --nocapture many_"]
            fn many_cli_identities_measured() {
                super::$on_fresh_table(c::many_cli_identities_measured);
            }

            #[test]
            fn a_notfound9_server_keeps_its_row_while_it_writes() {
                super::$on_fresh_table(c::a_notfound9_server_keeps_its_row_while_it_writes);
            }

            #[test]
            fn an_identity_with_a_row_beyond_the_layout_takes_a_free_one() {
                super::$on_fresh_table(
                    c::an_identity_with_a_row_beyond_the_layout_takes_a_free_one,
                );
            }
        }
    };
}
pub(crate) use table_registry_contract;

impl Table<'_> {
    fn cmd(&self, sb: &Sandbox, args: &[&str]) -> std::process::Output {
        let mut c = sb.leafctl();
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.args(args).args(&self.db).output().unwrap()
    }

    /// `next --snowflake -n 3` as `instance`: its worker id (Leaf's layout) and IDs.
    fn next(&self, sb: &Sandbox, instance: &str) -> (u64, Vec<u64>) {
        let mut args = vec!["next", "--snowflake", "--instance", instance, "-n", "3"];
        args.extend(self.pick.iter().map(String::as_str));
        let out = self.cmd(sb, &args);
        assert!(out.status.success(), "{instance}: {}", stderr(&out));
        let ids = parse_ids(&out.stdout);
        let workers: BTreeSet<u64> = ids
            .iter()
            .map(|&id| leaf().decode(id).unwrap().worker)
            .collect();
        assert_eq!(workers.len(), 1, "{ids:?}");
        (workers.into_iter().next().unwrap_or(u64::MAX), ids)
    }

    /// A CLI holder as `instance` that keeps running, killed (SIGKILL) once it holds its row:
    /// its worker id.
    fn killed_holder(&self, sb: &Sandbox, instance: &str) -> u64 {
        let mut c = sb.leafctl_std();
        for (k, v) in &self.env {
            c.env(k, v);
        }
        // stdout is a pipe nobody reads: it blocks once full, holding its row.
        let mut child = c
            .args([
                "next",
                "--snowflake",
                "--instance",
                instance,
                "-n",
                "100000000",
            ])
            .args(&self.pick)
            .args(&self.db)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut worker = None;
        let live = wait_until(Duration::from_secs(20), || {
            let reg = (self.registry)("10.99.99.99:1");
            let rows = reg.list(SystemClock.now_ms()).unwrap();
            worker = rows
                .iter()
                .find(|r| r.identity == instance && r.held)
                .map(|r| r.worker);
            worker.is_some()
        });
        let killed = child.kill();
        let _ = child.wait();
        assert!(live, "{instance} never held a row");
        killed.unwrap();
        worker.unwrap_or(u64::MAX)
    }
}

/// Ids come from rows by `ip:port`: the first identity gets row 1, a second live process with
/// the same identity is refused in the backend's terms, an identity comes back to its own row
/// after its IDs, rows given back are not held and not live, and new identities take them, the
/// lowest first, re-keyed to their new holder.
pub fn ids_come_from_rows_by_ip_port_and_are_kept(t: &Table) {
    let a = (t.registry)("10.20.0.1:8080");
    let g = WorkerGenerator::start(&*a, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 1, "the first row's id");
    let first = issue(&g, 50);
    match a.acquire(&IssueOptions::new(leaf())) {
        Err(e @ WorkerError::IdentityInUse { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "identity 10.20.0.1:8080 is already in use by another live process ({})",
                t.lock_of_row_1
            ),
            "said in the backend's terms"
        ),
        other => panic!("expected IdentityInUse, got {:?}", other.err()),
    }
    g.finish().unwrap();
    drop(g);

    // An identity comes back to its own row, after its IDs; another one meanwhile gets a new row.
    let g = WorkerGenerator::start(&*a, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 1, "an identity keeps its row");
    let second = issue(&g, 50);
    assert!(second[0] > *first.last().unwrap());
    let b = (t.registry)("10.20.0.2:8080");
    let gb = WorkerGenerator::start(&*b, &zero_start(system())).unwrap();
    assert_eq!(gb.worker(), 2, "id 1 is held");
    let rows = a.list(SystemClock.now_ms()).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.held && r.status == WorkerStatus::Live),
        "{rows:?}"
    );
    g.finish().unwrap();
    gb.finish().unwrap();
    drop((g, gb));
    let rows = a.list(SystemClock.now_ms()).unwrap();
    assert!(
        rows.iter()
            .all(|r| !r.held && r.status == WorkerStatus::Stale && r.last_seen_ms.is_none()),
        "given back: {rows:?}"
    );

    // New identities take the rows given back, the lowest first, each after the last IDs.
    let c = (t.registry)("10.20.0.3:8080");
    let gc = WorkerGenerator::start(&*c, &zero_start(system())).unwrap();
    assert_eq!(gc.worker(), 1, "the lowest row given back");
    assert!(issue(&gc, 5)[0] > *second.last().unwrap());
    let d = (t.registry)("10.20.0.4:8080");
    let gd = WorkerGenerator::start(&*d, &zero_start(system())).unwrap();
    assert_eq!(gd.worker(), 2);
    gc.finish().unwrap();
    gd.finish().unwrap();
    let row_1 = |column: &str| {
        (t.sql)(&format!(
            "SELECT {column} FROM leaf_workerid_alloc WHERE id = 1"
        ))
        .trim()
        .to_owned()
    };
    assert_eq!(
        [row_1("ip"), row_1("port"), row_1("ip_port")],
        ["10.20.0.3", "8080", "10.20.0.3:8080"],
        "re-keyed to its new holder"
    );
    assert_eq!(
        (t.sql)(
            "SELECT COUNT(*) FROM leaf_workerid_alloc \
             WHERE id = 1 AND max_timestamp IS NOT NULL AND create_time IS NOT NULL"
        )
        .trim(),
        "1"
    );
    assert_eq!((t.rows)(), 2);
}

/// A holder that crashed (no release) leaves its reservation in `max_timestamp`: its
/// successor on a clock 500 ms behind waits it out and issues after it; a clock an hour behind
/// is refused.
pub fn a_crashed_holder_is_waited_out_and_a_clock_behind_is_refused(t: &Table) {
    let reg = (t.registry)("10.21.0.1:8080");
    let now = SystemClock.now_ms();
    let clock = Arc::new(FakeClock::new(now));
    let a = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    let a_ids = issue(&a, 100);
    drop(a); // a crash: max_timestamp keeps the reservation

    clock.set_ms(now - 500);
    let b = WorkerGenerator::start(&*reg, &zero_start(clock.clone())).unwrap();
    assert!(clock.now_ms() > now, "waited for the reservation");
    let b_ids = issue(&b, 100);
    assert!(b_ids[0] > *a_ids.iter().max().unwrap());
    b.finish().unwrap();
    drop(b);

    clock.set_ms(now - 3_600_000);
    assert_clock_behind(reg.acquire(&IssueOptions::new(leaf()).clock(clock.clone())));
}

/// Many identities one after another (a new `ip:port` each), each exiting cleanly or dropping
/// its lease without the exact release: one id between them all, every ID distinct.
pub fn identities_one_after_another_share_one_id(t: &Table) {
    let mut ids = Vec::new();
    let mut workers = BTreeSet::new();
    for n in 0..30 {
        let reg = (t.registry)(&format!("10.40.0.{}:1", n + 1));
        let g = WorkerGenerator::start(&*reg, &zero_start(system())).unwrap();
        workers.insert(g.worker());
        ids.extend(issue(&g, 20));
        if n % 10 == 9 {
            // Dropped without finish(): max_timestamp keeps the reservation (up to 3 s ahead),
            // which the next holder waits out.
            drop(g);
        } else {
            g.finish().unwrap();
        }
    }
    assert_eq!(
        workers,
        BTreeSet::from([1]),
        "one identity live at a time: one id"
    );
    assert_eq!((t.rows)(), 1, "no row but the one in use");
    assert_unique(&mut ids);
}

/// Holders killed (SIGKILL: the row's last report is fresh) keep their id away from new
/// identities only until 9 s of silence have passed, counted from the end of their reservation
/// (unless reclaimed): the ids used never
/// exceed those live at once plus those waiting out their holder.
pub fn killed_holders_cost_an_id_only_while_waited_out(t: &Table) {
    let sb = Sandbox::new();
    let mut ids = Vec::new();
    let killed_at = Instant::now();
    assert_eq!(t.killed_holder(&sb, "10.41.0.1:1"), 1);
    // Row 1 is waited out: new identities, one after another, share the next id.
    for n in 2..5 {
        let (worker, got) = t.next(&sb, &format!("10.41.0.{n}:1"));
        assert_eq!(worker, 2, "row 1's holder went silent only just now");
        ids.extend(got);
    }
    // Past 9 s of silence (no write, and max_timestamp, up to 3 s ahead when it was killed,
    // 9 s behind the clock), row 1 is the lowest free row again.
    let silent = Duration::from_millis(9_000 + 3_000 + 1_500);
    if let Some(left) = silent.checked_sub(killed_at.elapsed()) {
        std::thread::sleep(left);
    }
    let (worker, got) = t.next(&sb, "10.41.0.9:1");
    assert_eq!(worker, 1, "row 1 is free once its holder is silent for 9 s");
    ids.extend(got);
    assert_eq!((t.rows)(), 2, "one live at once, plus one waited out");

    // A killed holder's row reclaimed: the next new identity takes it at once.
    assert_eq!(t.killed_holder(&sb, "10.41.1.1:1"), 1);
    let (worker, got) = t.next(&sb, "10.41.1.2:1");
    assert_eq!(worker, 2, "row 1 is waited out");
    ids.extend(got);
    let plan = t.cmd(&sb, &["workers", "reclaim", "1"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let said = String::from_utf8_lossy(&plan.stdout);
    assert_contains_all(
        &said,
        &[
            "mark row id 1 (10.41.1.1:1) of leaf_workerid_alloc given back",
            "--yes",
        ],
    );
    let out = t.cmd(&sb, &["workers", "reclaim", "1", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "reclaimed worker id 1: deleted the last report (update_time) of leaf_workerid_alloc id 1; \
             the row stays, with its max_timestamp, for the next new identity"
        ),
        "{said}"
    );
    let (worker, got) = t.next(&sb, "10.41.1.3:1");
    assert_eq!(worker, 1, "the reclaimed id is reused");
    ids.extend(got);
    assert_eq!((t.rows)(), 2);
    assert_unique(&mut ids);
}

/// Newcomers racing for the rows given back: each id goes to one of them, the losers take the
/// next free row, and once there are as many rows as newcomers no row is added.
pub fn newcomers_racing_never_share_an_id(t: &Table) {
    const RACERS: usize = 4;
    let mut ids = Vec::new();
    let registry = t.registry;
    for round in 0..5 {
        let barrier = Arc::new(Barrier::new(RACERS));
        let results: Vec<(u64, Vec<u64>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..RACERS)
                .map(|i| {
                    let barrier = barrier.clone();
                    s.spawn(move || {
                        let reg = registry(&format!("10.42.{round}.{}:1", i + 1));
                        barrier.wait();
                        let g = WorkerGenerator::start(&*reg, &zero_start(system())).unwrap();
                        let got = issue(&g, 50);
                        // Everyone holds its id until all have one.
                        barrier.wait();
                        let worker = g.worker();
                        g.finish().unwrap();
                        (worker, got)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let workers: BTreeSet<u64> = results.iter().map(|(w, _)| *w).collect();
        assert_eq!(workers.len(), RACERS, "round {round}: {results:?}");
        assert!(
            workers.iter().all(|&w| (1..=RACERS as u64).contains(&w)),
            "round {round}: {workers:?}"
        );
        ids.extend(results.into_iter().flat_map(|(_, got)| got));
    }
    assert_eq!((t.rows)(), RACERS, "as many rows as were live at once");
    assert_unique(&mut ids);
}

/// With one usable id held, a new identity is refused without leaving a row (nor does a second
/// process with the holder's identity); once the holder exits, the new identity takes its id.
pub fn a_refused_attempt_leaves_no_row(t: &Table) {
    // One worker bit: ids 0 and 1; the table's ids start at 1.
    let layout = Layout::custom(leafctl::snowflake::LEAF_EPOCH_MS, 50, 1, 12, 1).unwrap();
    let options = IssueOptions::new(layout).clock(system());
    let a = (t.registry)("10.43.0.1:1");
    let ga = WorkerGenerator::start(&*a, &options).unwrap();
    assert_eq!(ga.worker(), 1);
    let b = (t.registry)("10.43.0.2:1");
    for _ in 0..2 {
        let e = match b.acquire(&options) {
            Ok(l) => panic!("got worker id {} beside a live holder", l.worker()),
            Err(e) => e,
        };
        assert!(e.store::<TableError>().is_some(), "{e}");
        let text = e.to_string();
        assert_contains_all(
            &text,
            &[
                "no worker id of leaf_workerid_alloc is free for 10.43.0.2:1",
                "ids 0..=1",
                "nothing was written",
            ],
        );
        assert!(
            e.hint().contains("leafctl workers reclaim ID --yes"),
            "{}",
            e.hint()
        );
        assert_eq!((t.rows)(), 1, "a refused attempt leaves no row");
        // The holder's own identity elsewhere: refused, nothing written.
        assert!(a.acquire(&options).is_err());
        assert_eq!((t.rows)(), 1);
    }
    // The CLI says the same: exit 1, an error and a hint, no row.
    let sb = Sandbox::new();
    let mut args = vec![
        "next",
        "--snowflake",
        "--layout",
        "50,1,12",
        "--instance",
        "10.43.0.3:1",
    ];
    args.extend(t.pick.iter().map(String::as_str));
    let out = t.cmd(&sb, &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_contains_all(
        &err,
        &[
            "error: no worker id of leaf_workerid_alloc is free for 10.43.0.3:1",
            "hint: retry once a holder has exited",
        ],
    );
    assert_eq!((t.rows)(), 1);

    ga.finish().unwrap();
    let gb = WorkerGenerator::start(&*b, &options).unwrap();
    assert_eq!(gb.worker(), 1, "the id given back");
    gb.finish().unwrap();
    assert_eq!((t.rows)(), 1);
}

/// The measurement of issue 33: `LEAF_IDENTITIES` (2,000) identities one after another, each
/// starting, issuing one ID and exiting cleanly. Prints the worker ids used and how long it
/// took (speed is reported, not asserted); asserts the one id and the one row.
pub fn many_identities_measured(t: &Table) {
    let n: u32 = std::env::var("LEAF_IDENTITIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let started = Instant::now();
    let mut workers = BTreeSet::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let reg = (t.registry)(&format!(
            "10.{}.{}.{}:1",
            50 + i / 65_536,
            (i / 256) % 256,
            i % 256
        ));
        let g = WorkerGenerator::start(&*reg, &zero_start(system())).unwrap();
        workers.insert(g.worker());
        ids.extend(issue(&g, 1));
        g.finish().unwrap();
    }
    let took = started.elapsed();
    let rows = (t.rows)();
    eprintln!(
        "{n} identities one after another: worker ids used {workers:?}, {rows} row(s), {:.1} s ({:.2} ms per identity)",
        took.as_secs_f64(),
        took.as_secs_f64() * 1_000.0 / f64::from(n.max(1))
    );
    assert_eq!(workers, BTreeSet::from([1]));
    assert_eq!(rows, 1);
    assert_unique(&mut ids);
}

/// The same measurement through the CLI, as the issue ran it: `LEAF_IDENTITIES` (2,000) runs of
/// `leafctl next --snowflake -n 1 --instance 10.N.N.N:1`, one after another, each exiting
/// cleanly. Prints the worker ids used and how long the runs took (not asserted).
pub fn many_cli_identities_measured(t: &Table) {
    let n: u32 = std::env::var("LEAF_IDENTITIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let sb = Sandbox::new();
    let started = Instant::now();
    let mut workers = BTreeSet::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let instance = format!("10.{}.{}.{}:1", 60 + i / 65_536, (i / 256) % 256, i % 256);
        let mut args = vec!["next", "--snowflake", "--instance", &instance, "-n", "1"];
        args.extend(t.pick.iter().map(String::as_str));
        let out = t.cmd(&sb, &args);
        assert!(out.status.success(), "{instance}: {}", stderr(&out));
        let got = parse_ids(&out.stdout);
        workers.extend(got.iter().map(|&id| leaf().decode(id).unwrap().worker));
        ids.extend(got);
    }
    let took = started.elapsed();
    let rows = (t.rows)();
    eprintln!(
        "{n} CLI runs with new identities: worker ids used {workers:?}, {rows} row(s), {:.1} s ({:.1} ms per run)",
        took.as_secs_f64(),
        took.as_secs_f64() * 1_000.0 / f64::from(n.max(1))
    );
    assert_eq!(workers, BTreeSet::from([1]));
    assert_eq!(rows, 1);
    assert_unique(&mut ids);
}

/// A NotFound9 server sharing the table (no lock; it inserts its row with `update_time` set and
/// then rewrites only `max_timestamp`, every 3 s; a table made by `leafctl db init` has no
/// `ON UPDATE` on `update_time`): its row is not taken while it writes, even once `update_time`
/// is old, and is taken once it has been silent for 9 s.
pub fn a_notfound9_server_keeps_its_row_while_it_writes(t: &Table) {
    let now = || SystemClock.now_ms();
    (t.sql)(&format!(
        "INSERT INTO leaf_workerid_alloc (ip, port, ip_port, max_timestamp, create_time, update_time) \
         VALUES ('10.44.0.1', '8080', '10.44.0.1:8080', {}, NOW(), NOW())",
        now()
    ));
    let started = Instant::now();
    // Its updates, every second for 11 s: update_time is then 11 s old.
    while started.elapsed() < Duration::from_secs(11) {
        (t.sql)(&format!(
            "UPDATE leaf_workerid_alloc SET max_timestamp = {} WHERE ip_port = '10.44.0.1:8080'",
            now()
        ));
        std::thread::sleep(Duration::from_millis(1_000));
    }
    let reg = (t.registry)("10.44.0.2:1");
    let g = WorkerGenerator::start(&*reg, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 2, "a live NotFound9 server's row is not taken");
    g.finish().unwrap();
    // It stops: after 9 s of silence its row is the lowest free one.
    let stopped = Instant::now();
    std::thread::sleep(Duration::from_millis(9_000 + 1_500).saturating_sub(stopped.elapsed()));
    let reg = (t.registry)("10.44.0.3:1");
    let g = WorkerGenerator::start(&*reg, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 1, "a silent NotFound9 row is taken");
    g.finish().unwrap();
    let owner = (t.sql)("SELECT ip_port FROM leaf_workerid_alloc WHERE id = 1");
    assert_eq!(owner.trim(), "10.44.0.3:1", "re-keyed to its new holder");
}

/// An identity whose row lies beyond the layout's ids (an earlier version inserted one on each
/// refused attempt) starts again: that row is deleted and the identity takes a free row.
pub fn an_identity_with_a_row_beyond_the_layout_takes_a_free_one(t: &Table) {
    let a = (t.registry)("10.45.0.1:1");
    let g = WorkerGenerator::start(&*a, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 1);
    g.finish().unwrap();
    (t.sql)(&format!(
        "INSERT INTO leaf_workerid_alloc (id, ip, port, ip_port, max_timestamp, create_time, update_time) \
         VALUES (5000, '10.45.0.2', '1', '10.45.0.2:1', {}, NOW(), NOW())",
        SystemClock.now_ms()
    ));
    let b = (t.registry)("10.45.0.2:1");
    let g = WorkerGenerator::start(&*b, &zero_start(system())).unwrap();
    assert_eq!(g.worker(), 1, "the free row, not id 5000 (beyond 0..=1023)");
    g.finish().unwrap();
    let left = (t.sql)("SELECT COUNT(*) FROM leaf_workerid_alloc WHERE id = 5000");
    assert_eq!(left.trim(), "0", "the row beyond the layout is gone");
    assert_eq!((t.rows)(), 1);
}
