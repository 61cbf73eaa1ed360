//! The PostgreSQL worker registry (NotFound9's `leaf_workerid_alloc` in PostgreSQL's types, a
//! session advisory lock per row) against a real PostgreSQL 15.

use crate::support;

use std::time::{Duration, Instant};

use leafctl::db::postgres::{PostgresOptions, PostgresRegistry};
use leafctl::worker::{Registry, WorkerGenerator};
use support::postgres::Postgres;
use support::snowflake::{issue, leaf, system, zero_start};
use support::{Sandbox, parse_ids, stderr, wait_until};

/// A fresh database with both tables made by `leafctl db init`.
fn init(pg: &Postgres) -> String {
    let name = pg.fresh_db();

    support::run_ok(
        Sandbox::new()
            .leafctl()
            .args(["db", "init", "--db", &pg.url(&name)]),
    );
    let tables = pg.sql(
        Some(&name),
        "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
    );
    assert_eq!(tables, "leaf_alloc,leaf_alloc_removed,leaf_workerid_alloc");
    name
}

fn registry(url: &str, instance: &str) -> PostgresRegistry {
    PostgresRegistry::new(
        PostgresOptions::new(
            url,
            None,
            instance.parse().unwrap(),
            Some(leafctl::db::DEFAULT_REGISTRY_WAIT_TIMEOUT),
        )
        .unwrap(),
    )
}

fn list_json(sb: &Sandbox, url: &str) -> Vec<serde_json::Value> {
    let v = support::json(&sb.run(["workers", "list", "--db", url, "--output", "json"]));
    v.as_array().unwrap().clone()
}

#[test]
fn db_init_prints_the_worker_table_for_postgres() {
    let out = support::run_ok(Sandbox::new().leafctl().args([
        "db",
        "init",
        "--print",
        "--db",
        "postgres://leaf@db/leaf",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS leaf_alloc ("),
        "{text}"
    );
    assert!(text.contains("max_id bigint NOT NULL DEFAULT 1"), "{text}");
    assert!(
        text.contains("CREATE TABLE IF NOT EXISTS leaf_workerid_alloc ("),
        "{text}"
    );
    assert!(text.contains("id bigserial PRIMARY KEY"), "{text}");
}

/// A postgres:// database and nothing else implies the PostgreSQL registry; a killed holder's
/// row is free as soon as the server sees its session end.
#[test]
fn the_cli_implies_the_registry_and_a_killed_holder_is_freed_with_its_session() {
    let pg = Postgres::shared();
    let url = pg.url(&init(pg));
    let sb = Sandbox::new();
    let out = sb.run_ok(support::words(&format!(
        "next --snowflake --db {url} --instance 10.22.0.1:8080 -n 5"
    )));
    let ids = parse_ids(&out.stdout);
    assert_eq!(ids.len(), 5);
    assert!(ids.iter().all(|&id| leaf().decode(id).unwrap().worker == 1));
    let rows = list_json(&sb, &url);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["mode"], "postgres");
    assert_eq!(rows[0]["held"], false, "the process has exited");
    assert_eq!(rows[0]["status"], "stale", "{}", rows[0]);

    // A holder that keeps running: stdout is a pipe nobody reads, so it blocks once full.
    let mut child = sb
        .leafctl_std()
        .args(support::words(&format!(
            "next --snowflake --registry postgres --db {url}"
        )))
        .args(["--instance", "10.22.0.2:8080", "-n", "100000000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // A new identity: it takes the row the first run gave back.
    let live = wait_until(Duration::from_secs(20), || {
        list_json(&sb, &url).iter().any(|r| {
            r["identity"] == "10.22.0.2:8080"
                && r["worker"] == 1
                && r["held"] == true
                && r["status"] == "live"
        })
    });
    let reclaim = || sb.run(["workers", "reclaim", "1", "--db", &url, "--yes"]);
    let refused = reclaim();
    let killed = child.kill();
    let _ = child.wait();
    assert!(
        live,
        "a running holder is listed as live: {:?}",
        list_json(&sb, &url)
    );
    killed.unwrap();
    assert!(!refused.status.success(), "reclaimed a live row");
    support::assert_stderr_has(&refused, "advisory lock");

    let started = Instant::now();
    let freed = wait_until(Duration::from_secs(20), || {
        list_json(&sb, &url)
            .iter()
            .any(|r| r["identity"] == "10.22.0.2:8080" && r["held"] == false)
    });
    assert!(freed, "{:?}", list_json(&sb, &url));
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "freed with the session"
    );
    let out = reclaim();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("reclaimed worker id 1"),
        "{out:?}"
    );
    // The row stays, with its max_timestamp (the fence), marked given back.
    let rows = list_json(&sb, &url);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["identity"], "10.22.0.2:8080");
    assert!(rows[0]["last_seen"].is_null(), "{rows:?}");
    assert!(rows[0]["reserved_until"].is_string(), "{rows:?}");
    // A new identity takes the reclaimed id at once (not 9 s after the killed holder's report).
    let out = support::run_ok(
        sb.leafctl()
            .args(["next", "--snowflake", "--db", &url])
            .args(["--instance", "10.22.0.3:8080", "-n", "3"]),
    );
    let again = parse_ids(&out.stdout);
    assert!(
        again
            .iter()
            .all(|&id| leaf().decode(id).unwrap().worker == 1),
        "{again:?}"
    );
    assert_eq!(list_json(&sb, &url).len(), 1, "no row added");
}

/// A URL listing several hosts: the registry uses the first that answers.
#[test]
fn a_host_list_connects_to_the_first_host_that_answers() {
    let pg = Postgres::shared();
    let name = init(pg);
    let dead = support::free_port();
    let reg = registry(
        &format!(
            "postgres://leaf@127.0.0.1:{dead},127.0.0.1:{}/{name}",
            pg.port
        ),
        "10.20.0.9:8080",
    );
    let g = WorkerGenerator::start(&reg, &zero_start(system())).unwrap();
    assert_eq!(issue(&g, 10).len(), 10);
    g.finish().unwrap();
    assert!(
        pg.sql(Some(&name), "SELECT ip_port FROM leaf_workerid_alloc")
            .contains("10.20.0.9:8080")
    );
    let none = registry(
        &format!(
            "postgres://leaf@127.0.0.1:{dead},127.0.0.1:{}/{name}",
            support::free_port()
        ),
        "10.20.0.9:8080",
    );
    let e = WorkerGenerator::start(&none, &zero_start(system()))
        .err()
        .expect("no host answers");
    assert!(e.to_string().contains("connect"), "{e}");
}

use crate::reuse;

/// Runs one of `reuse`'s checks on a fresh database.
fn on_fresh_table(check: fn(&reuse::Table)) {
    let pg = Postgres::shared();
    let name = init(pg);
    let url = pg.url(&name);
    let make = |instance: &str| -> Box<dyn Registry> { Box::new(registry(&url, instance)) };
    let rows = || {
        pg.sql(Some(&name), "SELECT count(*) FROM leaf_workerid_alloc")
            .trim()
            .parse()
            .unwrap_or(usize::MAX)
    };
    let sql = |q: &str| pg.sql(Some(&name), q);
    check(&reuse::Table {
        registry: &make,
        db: vec!["--db".into(), url.clone()],
        pick: Vec::new(),
        env: Vec::new(),
        rows: &rows,
        sql: &sql,
        lock_of_row_1: "the advisory lock of leaf_workerid_alloc id 1 is held by another \
                        PostgreSQL session"
            .into(),
    });
}

reuse::table_registry_contract!(on_fresh_table);

/// Issue 39, items 2 and 4: the registry through a real PgBouncer. In session mode (the
/// package's defaults, which refuse the `options` startup parameter) each registry has a server
/// session of its own and issues IDs. In transaction and statement mode with one server
/// connection, two registries share it: the second is refused at connect, naming the pool and
/// the fix, and gives its marker back, so the first goes on (its fenced writes refusing a
/// marker left on the session are `pooler.rs`'s); no ID is issued twice.
#[test]
fn the_registry_through_pgbouncer_works_in_session_mode_and_refuses_a_shared_session() {
    use support::pgbouncer::PgBouncer;

    let pg = Postgres::shared();
    let bouncer = PgBouncer::start(pg, "session", &[]);
    let name = init(pg);
    let url = bouncer.url(&name);
    let a = registry(&url, "10.39.0.1:8080");
    let b = registry(&url, "10.39.0.2:8080");
    let ga = WorkerGenerator::start(&a, &zero_start(system()))
        .unwrap_or_else(|e| panic!("session mode: {e}\npgbouncer: {}", bouncer.log()));
    let gb = WorkerGenerator::start(&b, &zero_start(system())).unwrap();
    assert_ne!(ga.worker(), gb.worker());
    let mut all = issue(&ga, 200);
    all.extend(issue(&gb, 200));
    // Past a lease window: the fenced writes (which check the session) went through.
    std::thread::sleep(Duration::from_millis(3_500));
    all.extend(issue(&ga, 200));
    all.extend(issue(&gb, 200));
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "session mode: an ID twice");
    ga.finish().unwrap();
    gb.finish().unwrap();
    drop((ga, gb, bouncer));

    // Session mode with one server connection: registries one after another get the same server
    // session, which PgBouncer's DISCARD ALL left without the last one's marker and locks.
    let bouncer = PgBouncer::start(pg, "session", &["default_pool_size = 1"]);
    let url = bouncer.url(&name);
    let mut pids = Vec::new();
    for who in ["10.39.0.1:8080", "10.39.0.3:8080", "10.39.0.1:8080"] {
        let g = WorkerGenerator::start(&registry(&url, who), &zero_start(system()))
            .unwrap_or_else(|e| panic!("{who} after another on one server session: {e}"));
        all.extend(issue(&g, 100));
        pids.push(pg.sql(
            Some(&name),
            "SELECT string_agg(pid::text, ',') FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND usename = 'leaf'",
        ));
        g.finish().unwrap();
    }
    assert!(
        pids.windows(2)
            .all(|w| w[0] == w[1] && !w[0].is_empty() && !w[0].contains(',')),
        "one server session for all: {pids:?}"
    );
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "session mode: an ID twice");
    drop(bouncer);

    for mode in ["transaction", "statement"] {
        let bouncer = PgBouncer::start(pg, mode, &["default_pool_size = 1"]);
        let name = init(pg);
        let url = bouncer.url(&name);
        // Rows made directly first: through a statement pool the insert of a new row (in a
        // transaction) is refused by PgBouncer; an identity's own row is claimed without one.
        let mut issued = Vec::new();
        for who in ["10.39.1.1:8080", "10.39.1.2:8080"] {
            let g = WorkerGenerator::start(&registry(&pg.url(&name), who), &zero_start(system()))
                .unwrap();
            issued.extend(issue(&g, 50));
            g.finish().unwrap();
        }
        let a = registry(&url, "10.39.1.1:8080");
        let b = registry(&url, "10.39.1.2:8080");
        let first = WorkerGenerator::start(&a, &zero_start(system()));
        // The command line on the same pool: exit 1, an error naming the cause and a hint the fix.
        let out = Sandbox::new()
            .leafctl()
            .args(["next", "--snowflake", "--db", &url])
            .args(["--instance", "10.39.1.3:8080", "-n", "5"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{mode}: {err}");
        assert!(out.stdout.is_empty(), "{mode}: IDs printed: {err}");
        assert!(
            err.lines().any(|l| l.starts_with("error:")
                && l.contains("is not this process's own")
                && l.contains("transaction or statement mode")),
            "{mode}: {err}"
        );
        assert!(
            err.lines()
                .any(|l| l.trim_start().starts_with("hint:") && l.contains("pool_mode = session")),
            "{mode}: {err}"
        );
        let second = WorkerGenerator::start(&b, &zero_start(system()));
        let e = match &second {
            Err(leafctl::worker::IssueError::Worker(e)) => e,
            Err(e) => panic!("{mode}: not the registry's refusal: {e}"),
            Ok(_) => panic!("{mode}: a second registry on the shared server session started"),
        };
        let (said, hint) = (e.to_string(), e.hint());
        assert!(
            said.contains("is not this process's own")
                && said.contains("transaction or statement mode"),
            "{mode}: {said}"
        );
        assert!(
            hint.contains("directly") && hint.contains("pool_mode = session"),
            "{mode}: {hint}"
        );
        // The second gave its marker back as it was refused (issue 46): the first, alone on the
        // server session again, goes on issuing past a lease window.
        let g = first.unwrap_or_else(|e| panic!("{mode}: the first registry: {e}"));
        issued.extend(issue(&g, 50));
        std::thread::sleep(Duration::from_millis(3_500));
        issued.extend(issue(&g, 50));
        g.finish()
            .unwrap_or_else(|e| panic!("{mode}: the first after the refusals: {e}"));
        let n = issued.len();
        issued.sort_unstable();
        issued.dedup();
        assert_eq!(issued.len(), n, "{mode}: an ID twice");
        drop(bouncer);
    }
}
