//! Segment mode against a real MariaDB (one private server for this test binary, a fresh
//! database per test): Leaf's own table, concurrent processes, generators, and bad input.

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use leafctl::db::mysql::MysqlStore;
use leafctl::db::open_store;
use leafctl::segment::{AllocStore, Increment, SegmentError, SegmentGenerator};
use leafctl::snowflake::FakeClock;
use predicates::prelude::*;
use support::env::{Env, Tables};
use support::mariadb::{LEAF_ROW, MariaDb, PASSWORD};
use support::{Sandbox, parse_ids, stderr, wait_until};

/// The contract's database: a fresh one with Leaf's table made by plain SQL (as Leaf's users
/// have it), then `leafctl db init` (which adds the tombstone table beside it).
fn fixture() -> support::segment_contract::SegmentDb {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl().args(["db", "init"]).assert().success();
    let (db, name, url) = (env.db, env.name, env.url);
    let store_url = url.clone();
    let (sql_db, max_db) = (name.clone(), name);
    support::segment_contract::SegmentDb {
        sandbox: env.sandbox,
        env: vec![("LEAF_DB", url), ("LEAF_DB_PASSWORD", PASSWORD.into())],
        store: Box::new(move || Box::new(MysqlStore::open(&store_url, Some(PASSWORD)).unwrap())),
        sql: Box::new(move |q| {
            db.root_sql(Some(&sql_db), q);
        }),
        max_id: Box::new(move |tag| db.max_id(&max_db, tag)),
    }
}

support::segment_contract::segment_store_contract!(fixture);

#[test]
fn leafs_own_table_and_readme_row_work_untouched() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.db.root_sql(Some(&env.name), LEAF_ROW);
    let out = support::run_ok(env.leafctl().args(["next", "leaf-segment-test", "-n", "5"]));
    assert_eq!(parse_ids(&out.stdout), vec![1, 2, 3, 4, 5]);
    assert_eq!(env.max_id("leaf-segment-test"), 6);

    // A Leaf-style claim with the table's step continues where the batch ended.
    let c = env
        .store()
        .claim("leaf-segment-test", Increment::TableStep)
        .unwrap();
    assert_eq!((c.start, c.end, c.table_step), (6, 2006, 2000));

    let out = env.run(["tag", "list", "--output", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["tag"], "leaf-segment-test");
    assert_eq!(v[0]["max_id"], "2006");
    assert_eq!(v[0]["step"], 2000);
    assert_eq!(v[0]["description"], "Test leaf Segment Mode Get Id");
    let t = v[0]["update_time"].as_str().unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(t).is_ok(), "{t}");

    // The schema is untouched: still exactly Leaf's columns.
    let cols = env.db.root_sql(
        Some(&env.name),
        "SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns \
         WHERE table_schema = DATABASE() AND table_name = 'leaf_alloc'",
    );
    assert_eq!(cols.trim(), "biz_tag,max_id,step,description,update_time");
}

#[test]
fn db_init_is_idempotent_and_its_printed_ddl_is_leafs_table() {
    let db = MariaDb::shared();
    let name = db.fresh_db();
    let sb = Sandbox::new();
    let url = db.url(&name);
    for _ in 0..2 {
        sb.leafctl()
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(["db", "init", "--db", &url])
            .assert()
            .success()
            .stdout(predicate::str::contains("leaf_alloc is ready"));
    }
    // --db after or before the subcommand.
    sb.leafctl()
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["--db", &url, "tag", "add", "a"])
        .assert()
        .success();
    sb.leafctl()
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["tag", "show", "a", "--db", &url])
        .assert()
        .success();

    let out = sb.run_ok(["db", "init", "--print", "--db", &url]);
    let ddl = String::from_utf8(out.stdout).unwrap();
    let other = db.fresh_db();
    db.root_sql(Some(&other), &ddl);
    let describe = |d: &str| db.root_sql(Some(d), "SHOW CREATE TABLE leaf_alloc");
    assert_eq!(describe(&name), describe(&other));
    db.root_sql(Some(&other), LEAF_ROW);
}

#[test]
fn preload_starts_at_ten_percent_and_the_buffer_switches() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl()
        .args(["tag", "add", "pre", "--step", "100"])
        .assert()
        .success();
    let g = SegmentGenerator::builder(Box::new(env.store()) as Box<dyn AllocStore>)
        .build()
        .unwrap();
    let h = g.handle("pre").unwrap();
    let first: Vec<u64> = (0..10).map(|_| h.next_id().unwrap()).collect();
    assert_eq!(first, (1..=10).collect::<Vec<_>>());
    let v = h.view();
    assert!(v.init_ok);
    assert!(
        !v.next_ready && !v.loading,
        "below 10%: no preload yet: {v:?}"
    );
    assert_eq!(env.max_id("pre"), 101);

    h.next_id().unwrap(); // the 11th ID: 10% used
    assert!(
        wait_until(Duration::from_secs(10), || h.view().next_ready),
        "preload did not finish: {:?}",
        h.view()
    );
    assert_eq!(env.max_id("pre"), 201, "exactly one preload");
    let pos = h.view().pos;
    let v = h.view();
    assert_eq!(v.segments[1 - pos].value, 101);
    assert_eq!(v.segments[1 - pos].max, 201);

    let rest: Vec<u64> = (0..95).map(|_| h.next_id().unwrap()).collect();
    assert_eq!(rest, (12..=106).collect::<Vec<_>>(), "switched seamlessly");
    let v = h.view();
    assert_ne!(v.pos, pos, "switched to the other segment");
    assert_eq!(v.segments[v.pos].value, 107);
    assert!(!v.next_ready);
    // The views of the generator list the tag too.
    assert!(g.views().iter().any(|v| v.tag == "pre"));
}

#[test]
fn the_step_doubles_keeps_and_halves_with_the_clock() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl()
        .args(["tag", "add", "dyn", "--step", "100"])
        .assert()
        .success();
    let clock = Arc::new(FakeClock::new(1_700_000_000_000));
    let g = SegmentGenerator::builder(Box::new(env.store()) as Box<dyn AllocStore>)
        .clock(clock.clone())
        .build()
        .unwrap();
    let h = g.handle("dyn").unwrap();
    assert_eq!(
        h.next_id().unwrap(),
        1,
        "the first claim uses the table's step"
    );
    assert_eq!(env.max_id("dyn"), 101);
    let mut last_max = 101;
    let mut claims = Vec::new();
    // Uses up the current segment (after `advance_ms` on the clock), then takes IDs until the
    // preload of the other segment starts, waits for it and records its size.
    let segment = |advance_ms: i64, claims: &mut Vec<i64>, last_max: &mut i64| {
        clock.advance_ms(advance_ms);
        let pos = h.view().pos;
        while h.view().pos == pos {
            h.next_id().unwrap();
        }
        while !(h.view().loading || h.view().next_ready) {
            h.next_id().unwrap();
        }
        assert!(wait_until(Duration::from_secs(10), || h.view().next_ready));
        let m = env.max_id("dyn");
        claims.push(m - *last_max);
        *last_max = m;
    };
    // The second claim (the first preload) still uses the table's step and starts the clock.
    // A second passes first on the generator's clock, as on the later segments: with none,
    // the IDs taken read as a rate per (at least) 1 ms, and the claim-time floor (8 real claim
    // times at that rate) outgrows the step whenever a claim takes over 0.14 ms (a busy host).
    clock.advance_ms(1_000);
    while !(h.view().loading || h.view().next_ready) {
        h.next_id().unwrap();
    }
    assert!(wait_until(Duration::from_secs(10), || h.view().next_ready));
    claims.push(env.max_id("dyn") - last_max);
    last_max = env.max_id("dyn");
    for _ in 0..4 {
        segment(1_000, &mut claims, &mut last_max); // fast: under 15 minutes per segment
    }
    segment(20 * 60_000, &mut claims, &mut last_max); // 15-30 min: keeps
    for _ in 0..4 {
        segment(31 * 60_000, &mut claims, &mut last_max); // over 30 min: halves, never below the table's step
    }
    assert_eq!(
        claims,
        vec![100, 200, 400, 800, 1600, 1600, 800, 400, 200, 100]
    );
    assert_eq!(h.view().min_step, 100);
}

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

#[test]
fn bad_input_fails_with_the_right_exit_code_and_changes_nothing() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl().args(["tag", "add", "t"]).assert().success();

    let cases: &[(&[&str], i32, &str)] = &[
        (&["next", "has space"], 2, "invalid tag"),
        (&["next", ""], 2, "invalid tag"),
        (&["next", "x'; DROP TABLE leaf_alloc; --"], 2, "invalid tag"),
        (&["next", "x';DROP_TABLE_leaf_alloc;--"], 2, "unknown tag"),
        (&["tag", "add", "x\u{1}y"], 2, "invalid tag"),
        (&["tag", "add", &"a".repeat(129)], 2, "invalid tag"),
        (
            &["tag", "add", "u", "--step", "0"],
            2,
            "0 is not in 1..=2147483647",
        ),
        (
            &["tag", "add", "u", "--step", "2147483648"],
            2,
            "2147483648",
        ),
        (&["tag", "add", "u", "--start", "-1"], 2, "-1"),
        (&["tag", "set-step", "t", "0"], 2, "0 is not in"),
        (&["tag", "add", "t"], 2, "already exists"),
        (&["tag", "remove", "t"], 2, "--yes"),
        (&["tag", "remove", "nope", "--yes"], 2, "unknown tag"),
        (&["tag", "show", "nope"], 2, "unknown tag"),
        (&["tag", "set-step", "nope", "5"], 2, "unknown tag"),
        (&["next", "nope"], 2, "tag add"),
        (&["next", "t", "-n", "0"], 2, "0"),
        (&["next"], 2, "TAG"),
        (&["next", "t", "--snowflake"], 2, "cannot be used"),
    ];
    for (args, want, text) in cases {
        let out = env.leafctl().args(*args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(code(&out), *want, "{args:?}: {err}");
        assert!(err.contains(text), "{args:?}: {err}");
    }
    // Nothing was dropped, removed or claimed by any of that.
    assert_eq!(env.max_id("t"), 1);
    let tags = env.db.root_sql(
        Some(&env.name),
        "SELECT biz_tag FROM leaf_alloc ORDER BY biz_tag",
    );
    assert_eq!(tags.trim(), "t");

    // Exhausted: refused, max_id unchanged.
    env.leafctl()
        .args(["tag", "add", "big", "--start", "9223372036854775800"])
        .assert()
        .success();
    let out = env.run(["next", "big", "-n", "8"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("exhausted"));
    assert_eq!(env.max_id("big"), 9223372036854775800);
    let out = env.run(["next", "big", "-n", "7"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        parse_ids(&out.stdout).last(),
        Some(&9223372036854775806),
        "the last ID below 2^63-1"
    );
    assert_eq!(env.max_id("big"), i64::MAX);
    let out = env.run(["next", "big"]);
    assert_eq!(code(&out), 1);
    // Library: the same refusal with the table's step.
    assert!(matches!(
        env.store().claim("big", Increment::TableStep),
        Err(SegmentError::Exhausted { .. })
    ));

    // remove --yes prints the final max_id and says it is kept (Leaf's table had no
    // tombstone table: the removal made it).
    env.leafctl()
        .args(["tag", "remove", "t", "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("max_id was 1"))
        .stdout(predicate::str::contains("kept in leaf_alloc_removed"));
}

/// Issue 33: a removed tag leaves its max_id behind, and adding it again continues above every
/// ID it issued (on Leaf's own table, to which the first removal adds leaf_alloc_removed).
#[test]
fn a_removed_and_readded_tag_issues_no_id_twice() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    support::removed_and_readded_tags_issue_no_id_twice(&|args| env.run(args), &|| {
        Box::new(env.store())
    });
    // Leaf's servers read leaf_alloc alone, which the tombstones are not in.
    let rows = env
        .db
        .root_sql(Some(&env.name), "SELECT COUNT(*) FROM leaf_alloc");
    assert_eq!(rows.trim(), "1");
    let kept = env.db.root_sql(
        Some(&env.name),
        "SELECT COUNT(*) FROM leaf_alloc_removed WHERE biz_tag = 'fresh'",
    );
    assert_eq!(kept.trim(), "1");
}

/// A database made before tombstones, used by a user who may not create tables: a removal is
/// refused (nothing removed) and names `leafctl db init`; after it, the removal works.
#[test]
fn a_removal_that_cannot_record_its_tombstone_removes_nothing() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.db.root_sql(
        None,
        &format!(
            "CREATE USER IF NOT EXISTS 'limited'@'%' IDENTIFIED BY '{PASSWORD}'; \
             GRANT SELECT, INSERT, UPDATE, DELETE ON `{}`.* TO 'limited'@'%';",
            env.name
        ),
    );
    let limited = env.url.replacen("mysql://leaf@", "mysql://limited@", 1);
    let run = |url: &str, args: &[&str]| {
        env.leafctl()
            .env("LEAF_DB", url)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&limited, &["tag", "add", "kept"]).status.success());
    assert_eq!(
        parse_ids(&run(&limited, &["next", "kept", "-n", "2"]).stdout),
        vec![1, 2]
    );
    let out = run(&limited, &["tag", "remove", "kept", "--yes"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    support::assert_contains_all(&err, &["nothing was removed", "leafctl db init"]);
    assert_eq!(env.max_id("kept"), 3, "the row is still there");
    // `db init` (by a user allowed to) adds the table; then the same user removes and re-adds.
    assert!(run(&env.url, &["db", "init"]).status.success());
    assert!(
        run(&limited, &["tag", "remove", "kept", "--yes"])
            .status
            .success()
    );
    assert!(run(&limited, &["tag", "add", "kept"]).status.success());
    assert_eq!(parse_ids(&run(&limited, &["next", "kept"]).stdout), vec![3]);
}

#[test]
fn a_database_without_the_table_names_db_init() {
    let db = MariaDb::shared();
    let name = db.fresh_db();
    let sb = Sandbox::new();
    for args in [&["next", "t"][..], &["tag", "list"], &["tag", "add", "t"]] {
        let out = sb
            .leafctl()
            .env("LEAF_DB", db.url(&name))
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(code(&out), 1, "{args:?}: {err}");
        assert!(err.contains("no leaf_alloc table"), "{err}");
        assert!(err.contains("leafctl db init"), "{err}");
    }
}

#[test]
fn unreachable_servers_and_wrong_passwords_fail_fast_without_leaking_secrets() {
    let sb = Sandbox::new();
    let secret = "s3cret-Pa55";
    let dead_port = support::free_port();
    // A loopback port whose connections the kernel accepts but nobody ever answers: only the
    // read timeout can end the wait for the server's greeting.
    let black_hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = black_hole.local_addr().unwrap().port();
    for url in [
        format!("mysql://leaf@127.0.0.1:{dead_port}/leaf"),
        format!("mysql://leaf@127.0.0.1:{silent_port}/leaf"),
        format!("mysql://leaf:{secret}@127.0.0.1:{dead_port}/leaf"),
    ] {
        let t = Instant::now();
        let out = sb
            .leafctl()
            .env("LEAF_DB", &url)
            .env("LEAF_DB_PASSWORD", secret)
            .args(["next", "t"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(code(&out), 1, "{err}");
        assert!(err.contains("cannot reach"), "{err}");
        assert!(!err.contains(secret), "password leaked: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "took {:?}",
            t.elapsed()
        );
    }
    // A wrong password: refused, named, not shown.
    let db = MariaDb::shared();
    let name = db.fresh_db();
    let out = sb
        .leafctl()
        .env("LEAF_DB", db.url(&name))
        .env("LEAF_DB_PASSWORD", secret)
        .args(["tag", "list"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 1, "{err}");
    assert!(err.contains("refused the login"), "{err}");
    assert!(!err.contains(secret), "password leaked: {err}");
    // TLS is asked for with ?tls=true; this test server offers none, which is a clear error.
    let out = sb
        .leafctl()
        .env("LEAF_DB", format!("{}?tls=true", db.url(&name)))
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["tag", "list"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("secure connection"));
    let out = sb
        .leafctl()
        .env("LEAF_DB", format!("{}?tls=maybe", db.url(&name)))
        .args(["tag", "list"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    // config show redacts the password too.
    let out = sb
        .leafctl()
        .env("LEAF_DB", format!("mysql://leaf:{secret}@h/d"))
        .env("LEAF_DB_PASSWORD", secret)
        .args(["config", "show"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    // A store opened from the library reports the same classes.
    assert!(matches!(
        open_store(
            &format!("mysql://leaf@127.0.0.1:{dead_port}/leaf"),
            None,
            leafctl::db::OpenMode::Existing
        ),
        Err(SegmentError::Unreachable { .. })
    ));
}

#[test]
fn json_output_and_unique_ids_across_many_small_claims() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl()
        .args(["tag", "add", "j", "--start", "0", "--desc", "json"])
        .assert()
        .success();
    let out = env.run(["next", "j", "-n", "3", "--output", "json"]);
    let v: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v, ["0", "1", "2"]);
    let out = env.run(["tag", "show", "j", "--output", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["max_id"], "3");
    assert_eq!(v["description"], "json");
    let mut seen = HashSet::new();
    let s = env.store();
    for n in 1..50 {
        let c = s.claim("j", Increment::Custom(n)).unwrap();
        assert_eq!(c.len(), n as u64);
        for id in c.start..c.end {
            assert!(seen.insert(id));
        }
    }
}

/// A claim that loses a write conflict (error 1213) is retried, and only when every try lost is
/// the conflict reported: one error naming it, exit 1, nothing claimed. A trigger that raises
/// 1213 on every update stands in for a Galera node that keeps losing certification; one that
/// raises it only on the first two tries shows the retry succeeding unseen.
#[test]
fn write_conflicts_are_retried_then_reported_once() {
    let env = Env::mariadb(MariaDb::shared(), Tables::LeafDdl);
    env.leafctl().args(["tag", "add", "c"]).assert().success();
    env.db.root_sql(
        Some(&env.name),
        // MyISAM: the count survives the failed statement that decremented it.
        "CREATE TABLE conflicts (n INT NOT NULL) ENGINE=MyISAM; INSERT INTO conflicts VALUES (2);
         DELIMITER //
         CREATE TRIGGER lose BEFORE UPDATE ON leaf_alloc FOR EACH ROW BEGIN
           IF (SELECT n FROM conflicts) != 0 THEN
             UPDATE conflicts SET n = IF(n > 0, n - 1, n);
             SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213,
               MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction';
           END IF;
         END //",
    );
    // Two conflicts, then the claim goes through: no error, the IDs follow on.
    let out = env.run(["next", "c", "-n", "3"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(parse_ids(&out.stdout), vec![1, 2, 3]);
    assert_eq!(env.max_id("c"), 4);

    // Every try conflicts (n < 0 never counts down): one clear error after the last try.
    env.db
        .root_sql(Some(&env.name), "UPDATE conflicts SET n = -1");
    let started = Instant::now();
    let out = env.run(["next", "c"]);
    let err = stderr(&out);
    assert_eq!(code(&out), 1, "{err}");
    assert!(out.stdout.is_empty());
    support::assert_contains_all(
        &err,
        &["lost a write conflict 10 times in a row", "error 1213"],
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded backoff"
    );
    assert_eq!(env.max_id("c"), 4, "nothing claimed");
}

/// Issue 38: a claim is one round trip on a warm connection (the claim and the read of what it
/// did in one multi-statement packet; no reset, re-prepare or ping), two for a claim of the
/// table's step (its step is read first). Counted by a proxy between the store and MariaDB.
#[test]
fn a_claim_is_one_round_trip() {
    use support::proxy::Proxy;
    let db = MariaDb::shared();
    let name = db.fresh_db();
    db.root_sql(Some(&name), support::mariadb::LEAF_DDL);
    db.root_sql(
        Some(&name),
        "insert into leaf_alloc(biz_tag, max_id, step) values ('rt', 1, 100)",
    );
    let proxy = Proxy::start(format!("127.0.0.1:{}", db.port).parse().unwrap());
    let url = format!("mysql://leaf@{}/{name}", proxy.addr());
    let store = MysqlStore::open(&url, Some(PASSWORD)).unwrap();
    let (custom, table_step) = support::round_trips_per_claim(&proxy, &store, "rt");
    eprintln!("round trips per claim: {custom} (given size), {table_step} (table step)");
    assert_eq!((custom, table_step), (1.0, 2.0));
    // A tag that is not there is still said.
    assert!(matches!(
        store.claim("nope", Increment::Custom(5)),
        Err(SegmentError::UnknownTag { .. })
    ));
}
