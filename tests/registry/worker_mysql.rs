//! The MySQL worker registry (NotFound9's `leaf_workerid_alloc`) against a real MariaDB.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use leafctl::db::mysql::{MysqlOptions, MysqlRegistry};
use leafctl::snowflake::{Clock, FakeClock, SystemClock};
use leafctl::worker::{REPORT_INTERVAL_MS, Registry, WorkerGenerator, WorkerStatus};
use support::mariadb::{MariaDb, PASSWORD};
use support::snowflake::{issue, leaf, next_block_ahead, system, time_of, zero_start};
use support::{Sandbox, parse_ids};

fn init(db: &MariaDb) -> String {
    let (name, _) = db.initialized_db(&Sandbox::new());
    let tables = db.root_sql(Some(&name), "SHOW TABLES");
    assert!(tables.contains("leaf_alloc"), "{tables}");
    assert!(tables.contains("leaf_workerid_alloc"), "{tables}");
    name
}

fn registry(db: &MariaDb, name: &str, instance: &str) -> MysqlRegistry {
    MysqlRegistry::new(MysqlOptions {
        url: db.url(name),
        password: Some(PASSWORD.into()),
        identity: instance.parse().unwrap(),
        wait_timeout: Some(leafctl::db::DEFAULT_REGISTRY_WAIT_TIMEOUT),
    })
}

#[test]
fn db_init_prints_the_worker_table_for_mysql() {
    let sb = Sandbox::new();
    let out = sb.run_ok(["db", "init", "--print", "--db", "mysql://leaf@db/leaf"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("CREATE TABLE IF NOT EXISTS `leaf_workerid_alloc`"));
    assert!(text.contains("`ip_port` varchar(127) NOT NULL"));
}

#[test]
fn the_cli_uses_the_mysql_registry() {
    let db = MariaDb::shared();
    let url = db.url(&init(db));
    let sb = Sandbox::new();
    let out = support::run_ok(
        sb.leafctl()
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(support::words(&format!(
                "next --snowflake --registry mysql --db {url} --instance 10.22.0.1:8080 -n 5"
            ))),
    );
    let ids = parse_ids(&out.stdout);
    assert_eq!(ids.len(), 5);
    for id in ids {
        assert_eq!(leaf().decode(id).unwrap().worker, 1);
    }
    let out = support::run_ok(
        sb.leafctl()
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(["workers", "list", "--db", &url, "--output", "json"]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["worker"], 1);
    assert_eq!(rows[0]["identity"], "10.22.0.1:8080");
    assert_eq!(rows[0]["mode"], "mysql");
    // The process has exited: nobody holds the row's named lock, so nobody can issue with it,
    // although it reported a moment ago.
    assert_eq!(rows[0]["held"], false);
    assert_eq!(rows[0]["status"], "stale", "{}", rows[0]);
}

/// `workers list --db URL --output json` as parsed rows.
fn list_json(sb: &Sandbox, url: &str) -> Vec<serde_json::Value> {
    let out = support::run_ok(
        sb.leafctl()
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(["workers", "list", "--db", url, "--output", "json"]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().unwrap().clone()
}

#[test]
fn a_row_is_live_exactly_while_its_named_lock_is_held() {
    let db = MariaDb::shared();
    let name = init(db);
    let reg = registry(db, &name, "10.23.0.1:8080");
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    issue(&g, 10);
    let now = SystemClock.now_ms();
    let rows = reg.list(now).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].held && rows[0].status == WorkerStatus::Live);
    assert!(rows[0].is_live(now));

    // A clean exit: free at once, though its last report is only moments old.
    g.finish().unwrap();
    drop(g);
    let now = SystemClock.now_ms();
    let rows = reg.list(now).unwrap();
    // Given back: `update_time` NULL (a new identity may take the row at once).
    assert_eq!(rows[0].last_seen_ms, None, "{:?}", rows[0]);
    assert!(!rows[0].held, "{:?}", rows[0]);
    assert_eq!(rows[0].status, WorkerStatus::Stale, "{:?}", rows[0]);
    assert!(!rows[0].is_live(now));
}

#[test]
fn a_killed_cli_holder_stops_being_live_when_its_connection_goes() {
    let db = MariaDb::shared();
    let url = db.url(&init(db));
    let sb = Sandbox::new();
    // A holder that keeps running: stdout is a pipe nobody reads, so it blocks once it is full.
    let mut child = sb
        .leafctl_std()
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["next", "--snowflake", "--registry", "mysql", "--db", &url])
        .args(["--instance", "10.24.0.1:8080", "-n", "100000000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let live = support::wait_until(Duration::from_secs(20), || {
        let rows = list_json(&sb, &url);
        rows.len() == 1 && rows[0]["held"] == true && rows[0]["status"] == "live"
    });
    let killed = child.kill();
    let _ = child.wait();
    assert!(
        live,
        "a running holder is listed as live: {:?}",
        list_json(&sb, &url)
    );
    killed.unwrap();

    // The server frees the lock when the connection closes; no report interval to wait out.
    let started = Instant::now();
    let freed = support::wait_until(Duration::from_secs(20), || {
        let rows = list_json(&sb, &url);
        rows[0]["held"] == false && rows[0]["status"] == "stale"
    });
    assert!(freed, "{:?}", list_json(&sb, &url));
    assert!(
        started.elapsed() < Duration::from_millis(3 * REPORT_INTERVAL_MS as u64),
        "freed by the lock, not by the report age ({:?})",
        started.elapsed()
    );
}

#[test]
fn max_timestamp_covers_times_issued_ahead_of_the_clock() {
    let db = MariaDb::shared();
    let name = init(db);
    let reg = registry(db, &name, "10.23.0.1:8080");
    let t = SystemClock.now_ms();
    let clock = Arc::new(FakeClock::new(t));
    let lead = 4_000u64;
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let max_timestamp = || -> i64 {
        db.root_sql(
            Some(&name),
            &format!(
                "SELECT max_timestamp FROM leaf_workerid_alloc WHERE id = {}",
                g.worker()
            ),
        )
        .trim()
        .parse()
        .unwrap()
    };
    let mut last = 0;
    // 2,000 ticks' worth with the clock standing still: the lead is used, each time recorded in
    // the row before its IDs come back.
    for i in 0..2_000 {
        let at = next_block_ahead(&g, &mut last, &*clock, lead);
        if i % 50 == 0 || i == 1_999 {
            let recorded = max_timestamp();
            assert!(
                recorded > at,
                "block at {at} returned before max_timestamp ({recorded})"
            );
        }
    }
    assert_eq!(time_of(last), t + 1_999, "ahead of the clock");
    g.finish().unwrap();
    assert_eq!(
        max_timestamp(),
        t + 2_000,
        "a clean exit records the exact last time"
    );
    drop(g);
    // Without a lead the next start waits for the clock to pass it; with one it continues.
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    assert_eq!(clock.now_ms(), t);
    assert!(g.next_block(1).unwrap().first > last);
    g.finish().unwrap();
    drop(g);
    let g = WorkerGenerator::start(&reg, &zero_start(clock.clone())).unwrap();
    assert!(clock.now_ms() >= t + 2_001);
    assert!(g.next_block(1).unwrap().first > last);
    g.finish().unwrap();
}

/// A URL listing several hosts: the registry uses the first that answers (here the second,
/// the first being a port nobody listens on), and says which when none does.
#[test]
fn a_host_list_connects_to_the_first_host_that_answers() {
    let db = MariaDb::shared();
    let name = init(db);
    let dead = support::free_port();
    let listed = |url: String| {
        MysqlRegistry::new(MysqlOptions {
            url,
            password: Some(PASSWORD.into()),
            identity: "10.20.0.9:8080".parse().unwrap(),
            wait_timeout: None,
        })
    };
    let reg = listed(format!(
        "mysql://leaf@127.0.0.1:{dead},127.0.0.1:{}/{name}",
        db.port
    ));
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    assert_eq!(issue(&g, 10).len(), 10);
    g.finish().unwrap();
    let rows = db.root_sql(
        Some(&name),
        "SELECT ip_port FROM leaf_workerid_alloc ORDER BY id",
    );
    assert!(rows.contains("10.20.0.9:8080"), "{rows}");

    let none = listed(format!(
        "mysql://leaf@127.0.0.1:{dead},127.0.0.1:{}/{name}",
        support::free_port()
    ));
    let e = WorkerGenerator::start(&none, &zero_start(system()))
        .err()
        .expect("no host answers");
    assert!(e.to_string().contains("connect"), "{e}");
}

use crate::reuse;

fn table<'a>(
    db: &MariaDb,
    name: &str,
    registry: &'a (dyn Fn(&str) -> Box<dyn Registry> + Sync),
    rows: &'a dyn Fn() -> usize,
    sql: &'a dyn Fn(&str) -> String,
) -> reuse::Table<'a> {
    reuse::Table {
        registry,
        db: vec!["--db".into(), db.url(name)],
        pick: vec!["--registry".into(), "mysql".into()],
        env: vec![("LEAF_DB_PASSWORD".into(), PASSWORD.into())],
        rows,
        sql,
        lock_of_row_1: format!(
            "the named lock leafctl_worker_1_{name} of leaf_workerid_alloc id 1 is held by \
             another MySQL connection"
        ),
    }
}

/// Runs one of `reuse`'s checks on a fresh database.
fn on_fresh_table(check: fn(&reuse::Table)) {
    let db = MariaDb::shared();
    let name = init(db);
    let make = |instance: &str| -> Box<dyn Registry> { Box::new(registry(db, &name, instance)) };
    let rows = || {
        db.root_sql(Some(&name), "SELECT COUNT(*) FROM leaf_workerid_alloc")
            .trim()
            .parse()
            .unwrap_or(usize::MAX)
    };
    let sql = |q: &str| db.root_sql(Some(&name), q);
    check(&table(db, &name, &make, &rows, &sql));
}

reuse::table_registry_contract!(on_fresh_table);

/// Issue 45 #6: `workers doctor` runs on a database registry (the region section sends
/// operators there): it compares no clocks (the table keeps none) and checks the live ids
/// against the region's slice. And `workers reclaim` of a row given back already says the same
/// with and without --yes: nothing to do.
#[test]
fn doctor_checks_a_database_registry_and_reclaim_agrees_with_its_dry_run() {
    let db = MariaDb::shared();
    let name = init(db);
    let url = db.url(&name);
    let sb = Sandbox::new();
    let leafctl = |args: &str| support::mariadb::leafctl_with_password(&sb, args);
    let reg = registry(db, &name, "10.23.9.1:8080");
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    issue(&g, 3);

    let out = leafctl(&format!("workers doctor --db {url} --output json"));
    assert!(out.status.success(), "{}", support::stderr(&out));
    let v = support::json(&out);
    assert_eq!(v["registry"], "mysql", "{v}");
    assert_eq!(v["clocks_compared"], false, "{v}");
    assert_eq!(v["ok"], true, "{v}");
    // Without a region, doctor says it checked nothing beyond the clocks it could not compare.
    let out = leafctl(&format!("workers doctor --db {url}"));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("no region is set, so nothing else was checked"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Worker id 1 is live and lies outside region 1 of 2's slice: the check finds it.
    let out = leafctl(&format!("workers doctor --db {url} --region 1 --regions 2"));
    assert_eq!(out.status.code(), Some(1), "{}", support::stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("live worker id 1"), "{said}");
    assert!(said.contains("not compared"), "{said}");

    // Given back on a clean exit: free already, and the dry run says what --yes does.
    g.finish().unwrap();
    drop(g);
    for args in ["workers reclaim 1", "workers reclaim 1 --yes"] {
        let out = leafctl(&format!("{args} --db {url}"));
        assert!(out.status.success(), "{args}: {}", support::stderr(&out));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("worker id 1 is already free"),
            "{args}: {said}"
        );
        assert!(!said.contains("would"), "{args}: {said}");
    }
}

/// Issue 45 #2 on the registry path: `next --snowflake` with a region, refused after the
/// database's region was checked, records nothing; the same command done right records it.
#[test]
fn a_refused_snowflake_run_records_no_region_in_the_registry_database() {
    let db = MariaDb::shared();
    let url = db.url(&init(db));
    let sb = Sandbox::new();
    let leafctl =
        |args: &str| support::mariadb::leafctl_with_password(&sb, &format!("--db {url} {args}"));
    let shown = || {
        let out = leafctl("region show --output json");
        assert!(out.status.success(), "{}", support::stderr(&out));
        support::json(&out)["region"].clone()
    };
    // A layout whose 1 worker bit holds no slice for region 3 of 4: refused once the
    // registry's database was checked.
    let next = "--regions 4 --region 3 next --snowflake --registry mysql \
                --instance 10.23.8.1:8080 -n 2";
    let refused = leafctl(&format!("{next} --layout 60,1,2"));
    assert!(!refused.status.success(), "{}", support::stderr(&refused));
    assert!(refused.stdout.is_empty());
    assert_eq!(
        shown(),
        serde_json::Value::Null,
        "a refused run recorded the region"
    );
    let done = leafctl(next);
    assert!(done.status.success(), "{}", support::stderr(&done));
    assert_eq!(parse_ids(&done.stdout).len(), 2);
    assert_eq!(shown(), 3);
}
