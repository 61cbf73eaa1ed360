//! Issue 46, item 2: the PostgreSQL worker registry behind a real PgBouncer with one server
//! connection, as an operator meets it: processes that exit leave no marker or worker lock on
//! the pooled server session, a refused process takes nothing, a refusal names the pool (not
//! "another registry"), `serve` gives up after a bounded number of refusals, `db init` works
//! through a session pool of one, a full pool is named, and the statement-mode hint is true.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::pgbouncer::PgBouncer;
use support::postgres::Postgres;
use support::serve::Serve;
use support::{Sandbox, parse_ids, stderr};

/// A fresh database with both tables, made directly (not through the pool).
fn fresh(pg: &Postgres) -> String {
    let name = pg.fresh_db();
    support::run_ok(
        Sandbox::new()
            .leafctl()
            .args(["db", "init", "--db", &pg.url(&name)]),
    );
    name
}

/// The leafctl advisory locks held in database `name`: (session markers, worker-id locks).
fn locks(pg: &Postgres, name: &str) -> (u32, u32) {
    let out = pg.sql(
        Some(name),
        "SELECT count(*) FILTER (WHERE objsubid = 1 AND classid::bigint >> 16 = 19527), \
         count(*) FILTER (WHERE objsubid = 2 AND classid = 1279607110) FROM pg_locks \
         WHERE locktype = 'advisory' AND granted \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    let (m, w) = out.split_once('|').expect("two columns");
    (m.parse().expect("count"), w.parse().expect("count"))
}

/// `next --snowflake` through `url` as `instance`: the output.
fn next(url: &str, instance: &str) -> std::process::Output {
    Sandbox::new()
        .leafctl()
        .args(["next", "--snowflake", "--db", url, "--instance", instance])
        .args(["-n", "5"])
        .output()
        .expect("run leafctl")
}

/// `psql` as `leaf` through the pooler, running `sql`.
fn psql_through(bouncer: &PgBouncer, name: &str, sql: &str) -> std::process::Output {
    Command::new("/usr/lib/postgresql/15/bin/psql")
        .args(["-h", "127.0.0.1", "-p", &bouncer.port.to_string()])
        .args(["-U", "leaf", "-d", name, "-X", "-A", "-t", "-c", sql])
        .output()
        .expect("run psql")
}

/// Asserts the refusal of a registry on a shared server session: exit 1, no ID, an error that
/// names the pool and not a registry that may not exist, and the fix.
fn assert_refused_for_the_pool(out: &std::process::Output, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: IDs printed: {err}");
    let error = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{what}: no error line: {err}"));
    assert!(
        error.contains("transaction or statement mode")
            && error.contains("same server session")
            && error.contains("or was killed"),
        "{what}: {err}"
    );
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("hint:") && l.contains("pool_mode = session")),
        "{what}: {err}"
    );
}

/// A transaction pool of one server connection: processes one after another each issue and
/// leave nothing behind; a second process beside a serving one is refused for the pool, takes
/// nothing, and the first goes on issuing past its lease window; SIGTERM leaves nothing behind.
#[test]
fn a_transaction_pool_of_one_leaves_no_lock_behind_and_refuses_only_a_shared_session() {
    let pg = Postgres::shared();
    let sb = Sandbox::new();
    let bouncer = PgBouncer::start(pg, "transaction", &["default_pool_size = 1"]);
    let name = fresh(pg);
    let url = bouncer.url(&name);
    let mut all = Vec::new();
    // Rows made directly: a process alone on the pool claims its own row.
    for (i, who) in ["10.46.2.1:8080", "10.46.2.2:8080", "10.46.2.3:8080"]
        .iter()
        .enumerate()
    {
        let out = next(&pg.url(&name), who);
        assert!(out.status.success(), "{}", stderr(&out));
        all.extend(parse_ids(&out.stdout));
        let out = next(&url, who);
        assert!(
            out.status.success(),
            "process {i} through the pool, after others exited: {}\npgbouncer: {}",
            stderr(&out),
            bouncer.log()
        );
        all.extend(parse_ids(&out.stdout));
        assert_eq!(locks(pg, &name), (0, 0), "left behind by process {i}");
    }

    let server = Serve::snowflake(&sb)
        .args(["--db", &url, "--instance", "10.46.2.1:8080"])
        .start();
    all.push(server.get("/api/snowflake/get/a").id());
    for _ in 0..3 {
        let out = next(&url, "10.46.2.2:8080");
        assert_refused_for_the_pool(&out, "beside a serving process");
        assert_eq!(locks(pg, &name), (1, 1), "the refused process left a lock");
    }
    // Past a lease window: the server's fenced writes still pass.
    let until = Instant::now() + Duration::from_millis(3_500);
    while Instant::now() < until {
        let r = server.get("/api/snowflake/get/a");
        assert_eq!(
            r.status,
            200,
            "the first process stopped: {}",
            server.stderr()
        );
        all.push(r.id());
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, err) = server.terminate();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(locks(pg, &name), (0, 0), "left behind by serve's SIGTERM");
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID twice");
}

/// A killed process's locks stay on the pooled server session (the pooler does not reset it):
/// the next process is refused, in words that say so; a `serve` whose session another
/// process's marker lands on gives up after a bounded number of attempts, taking no marker of
/// its own with each, and exits 1 naming the pool.
#[test]
fn a_killed_holder_is_named_and_a_refused_serve_gives_up_without_leaking() {
    let pg = Postgres::shared();
    let sb = Sandbox::new();
    let bouncer = PgBouncer::start(pg, "transaction", &["default_pool_size = 1"]);
    let name = fresh(pg);
    let url = bouncer.url(&name);
    let out = next(&pg.url(&name), "10.46.3.1:8080");
    assert!(out.status.success(), "{}", stderr(&out));

    let mut server = Serve::snowflake(&sb)
        .args(["--db", &url, "--instance", "10.46.3.1:8080"])
        .start();
    assert_eq!(server.get("/api/snowflake/get/a").status, 200);
    // A marker of another process on the one server session, as a killed holder leaves it.
    let planted = psql_through(
        &bouncer,
        &name,
        "SELECT pg_advisory_lock((19527::bigint << 48) | 4242)",
    );
    assert!(planted.status.success(), "{}", stderr(&planted));
    let started = Instant::now();
    let status = server.wait_exit(Duration::from_secs(60));
    let err = server.stderr();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("error:")
            && l.contains("gave up")
            && l.contains("transaction or statement mode")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(
        locks(pg, &name),
        (1, 0),
        "only the planted marker stays: {err}"
    );
    let out = next(&url, "10.46.3.2:8080");
    assert_refused_for_the_pool(&out, "after a killed holder");
    assert_eq!(locks(pg, &name), (1, 0));
}

/// Statement mode: a new identity needs a transaction the pool refuses; the refusal and its hint
/// name the pool. Session mode with one server connection: `db init` works through it, and a
/// command that finds the pool full says so.
#[test]
fn statement_and_session_pools_of_one_are_named_as_such() {
    let pg = Postgres::shared();
    let sb = Sandbox::new();
    let bouncer = PgBouncer::start(pg, "statement", &["default_pool_size = 1"]);
    let name = fresh(pg);
    let out = next(&bouncer.url(&name), "10.46.4.1:8080");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("statement pooling mode") && err.contains("connection pooler"),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("hint:") && l.contains("pool_mode = session")),
        "{err}"
    );
    assert_eq!(locks(pg, &name), (0, 0));
    drop(bouncer);

    let bouncer = PgBouncer::start(pg, "session", &["default_pool_size = 1"]);
    let name = pg.fresh_db();
    let url = bouncer.url(&name);
    let out = Sandbox::new()
        .leafctl()
        .args(["db", "init", "--db", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "db init: {}", stderr(&out));
    let tables = pg.sql(
        Some(&name),
        "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
    );
    assert_eq!(tables, "leaf_alloc,leaf_alloc_removed,leaf_workerid_alloc");
    let server = Serve::snowflake(&sb)
        .args(["--db", &url, "--instance", "10.46.4.2:8080"])
        .start();
    let out = next(&url, "10.46.4.3:8080");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("pool") && err.contains("full"), "{err}");
    let (status, e) = server.terminate();
    assert_eq!(status.code(), Some(0), "{e}");
    let out = next(&url, "10.46.4.3:8080");
    assert!(out.status.success(), "after the server: {}", stderr(&out));
}
