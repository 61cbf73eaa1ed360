//! Fault suite, MariaDB (RELIABILITY.md scenarios 3, 4 and 8): a restart so fast that the pool's
//! connections go stale, a tag's row locked by another session for longer than the I/O timeout,
//! and a worker row of the MySQL registry taken by another host.
//!
//! The database stopped under load and restarted is `tests/serve/serve_mariadb.rs`
//! (`database_down_answers_from_buffers_then_503_then_recovers`).

use crate::support;

use std::time::{Duration, Instant};

use support::env::{Env, Tables};
use support::fault::Load;
use support::mariadb::MariaDb;
use support::snowflake::worker_of;
use support::{assert_unique, stderr, wait_until};

#[test]
fn a_restart_fast_enough_to_leave_stale_pooled_connections_is_invisible_to_clients() {
    // A server of its own (this test restarts it), stopped when the test ends.
    let own = MariaDb::start();
    let db = &own;
    let env = Env::mariadb(db, Tables::DbInit);
    env.ok(&["tag", "add", "stale", "--step", "1000"]);
    let s = env.serve(&[
        "--segment",
        "--snowflake",
        "--registry",
        "mysql",
        "--instance",
        "10.50.0.1:8080",
    ]);
    let seg = "/api/segment/get/stale";
    let snow = "/api/snowflake/get/k";
    let mut ids = Vec::new();
    // Several claims, so the pool holds connections; then a quiet moment with both segments full.
    for _ in 0..3 {
        ids.extend(s.get(&format!("{seg}?count=900")).ids());
        ids.extend(s.get(&format!("{snow}?count=100")).ids());
    }
    assert!(
        wait_until(Duration::from_secs(20), || {
            let c = s.get("/cache").json();
            c[0]["nextReady"] == true && c[0]["loading"] == false
        }),
        "{}",
        s.get("/cache").body
    );
    let max_before = env.max_id("stale");

    // Down and up again while nobody asks for a claim: every pooled connection is now dead.
    db.kill();
    db.restart();

    // Every segment request is answered, through claims on fresh connections.
    let load = Load::start(
        s.addr,
        seg,
        3,
        500,
        Duration::from_millis(1),
        Duration::from_secs(60),
    );
    let started = Instant::now();
    while env.max_id("stale") < max_before + 2_000 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let seen = load.stop();
    assert_eq!(
        seen.statuses.keys().copied().collect::<Vec<_>>(),
        vec![200],
        "every request answered after the restart: {seen:?}; {}",
        s.stderr()
    );
    assert!(
        env.max_id("stale") >= max_before + 2_000,
        "no new claims after the restart; {}",
        s.stderr()
    );
    let after: Vec<u64> = seen.ids;
    assert!(
        after.iter().any(|&id| id > max_before as u64),
        "IDs from new claims"
    );
    ids.extend(after);
    assert_eq!(s.get("/readyz").status, 200);

    // The MySQL registry's connection died with the server: snowflake stops (a clear 503), then
    // the server takes the worker row again by itself, after every time it reserved.
    let started = Instant::now();
    let mut refused = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "snowflake did not come back; {}",
            s.stderr()
        );
        let r = s.get(snow);
        if r.status == 200 {
            if refused.is_some() {
                ids.push(r.id());
                break;
            }
            ids.push(r.id());
        } else {
            r.assert_lease_refusal();
            refused.get_or_insert(r.json()["error"].as_str().unwrap().to_string());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("snowflake refused with: {refused:?}");
    ids.extend(s.get(&format!("{snow}?count=1000")).ids());
    assert_unique(&mut ids);
    s.stop_cleanly();
}

/// A mariadb client holding `SELECT ... FOR UPDATE` on a tag's row for `hold`.
struct RowLock {
    client: std::process::Child,
    started: Instant,
}

impl RowLock {
    /// Starts the client and returns once the row is locked (its session has gone on to sleep).
    fn take(env: &Env<&MariaDb>, tag: &str, hold: Duration) -> RowLock {
        let sql = format!(
            "BEGIN; SELECT max_id FROM leaf_alloc WHERE biz_tag = '{tag}' FOR UPDATE; DO SLEEP({}); COMMIT;",
            hold.as_secs_f64()
        );
        let started = Instant::now();
        let client = env
            .db
            .root_sql_command(Some(&env.name), &sql)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("run mariadb");
        let lock = RowLock { client, started };
        assert!(
            wait_until(Duration::from_secs(20), || {
                env.sql(
                    "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'DO SLEEP%'",
                )
                .trim()
                    != "0"
            }),
            "the row was not locked"
        );
        lock
    }

    /// Waits for the client to commit and end; returns how long the lock was held.
    fn release(mut self) -> Duration {
        let status = self.client.wait().expect("mariadb client");
        assert!(status.success(), "the locking session failed: {status}");
        self.started.elapsed()
    }
}

impl Drop for RowLock {
    fn drop(&mut self) {
        if let Ok(None) = self.client.try_wait() {
            let _ = self.client.kill();
            let _ = self.client.wait();
        }
    }
}

#[test]
fn a_row_locked_longer_than_the_io_timeout_is_waited_out_from_the_buffer() {
    let db = MariaDb::shared();
    let env = Env::mariadb(db, Tables::DbInit);
    env.ok(&["tag", "add", "locked", "--step", "1000"]);
    let s = env.serve(&["--segment"]);
    let path = "/api/segment/get/locked";
    let mut ids = vec![s.get(path).id()];
    let max_before = env.max_id("locked");
    let hold = Duration::from_secs(12);
    let locker = RowLock::take(&env, "locked", hold);
    std::thread::sleep(Duration::from_millis(300));

    // About 50 requests a second: the first segment (1,000 IDs) outlasts the lock; its preload
    // (at 10%) meets the lock, gives up after the lock wait timeout, and retries.
    let load = Load::start(
        s.addr,
        path,
        2,
        5,
        Duration::from_millis(40),
        Duration::from_secs(60),
    );
    // A CLI claim meanwhile fails within seconds with a clear error.
    let started = Instant::now();
    let out = env.cmd(&["next", "locked", "-n", "5"]).output().unwrap();
    let cli_took = started.elapsed();
    let cli_err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{cli_err}");
    support::assert_contains_all(&cli_err, &["locked by another session", "hint:"]);
    assert!(cli_took < Duration::from_secs(8), "{cli_took:?}");
    // The server says why its next segment is late.
    assert!(
        wait_until(Duration::from_secs(10), || {
            s.get("/cache").json()[0]["lastError"]
                .as_str()
                .is_some_and(|e| e.contains("locked by another session"))
        }),
        "{}",
        s.get("/cache").body
    );
    assert_eq!(
        env.max_id("locked"),
        max_before,
        "nothing claimed under the lock"
    );

    let lock_took = locker.release();
    assert!(lock_took >= hold, "the lock was held {lock_took:?}");
    // Once the lock goes, the claim completes by itself.
    let claimed = wait_until(Duration::from_secs(20), || {
        s.get("/cache").json()[0]["nextReady"] == true
    });
    let seen = load.stop();
    let cache = s.get("/cache").body;
    assert!(
        claimed,
        "no claim after the lock went: {cache}; {}",
        s.stderr()
    );
    assert_eq!(
        seen.statuses.keys().copied().collect::<Vec<_>>(),
        vec![200],
        "answered from the buffer throughout: {seen:?}"
    );
    ids.extend(seen.ids);
    // The claims that follow are sound: run through several more segments.
    for _ in 0..10 {
        ids.extend(s.get(&format!("{path}?count=1000")).ids());
    }
    ids.extend(env.ids(&["next", "locked", "-n", "5"]));
    let max_id = env.max_id("locked") as u64;
    assert!(
        ids.iter().all(|&id| id < max_id),
        "every ID below max_id {max_id}"
    );
    assert_unique(&mut ids);
}

#[test]
fn a_database_frozen_in_the_middle_of_a_claim_never_leaves_a_confused_connection() {
    // A server of its own (this test restarts it), stopped when the test ends.
    let own = MariaDb::start();
    let db = &own;
    let env = Env::mariadb(db, Tables::DbInit);
    env.ok(&["tag", "add", "frozen", "--step", "1000"]);
    let s = env.serve(&["--segment"]);
    let path = "/api/segment/get/frozen";
    let mut ids = s.get(&format!("{path}?count=10")).ids();
    // A claim that waits on a row lock, then the server freezes under it: the claim's read times
    // out (no reply within the I/O timeout). When the server thaws, the late reply to the
    // abandoned statement must never be read as the answer to a later one.
    let locker = RowLock::take(&env, "frozen", Duration::from_secs(2));
    let addr = s.addr;
    let batch = std::thread::spawn(move || {
        support::serve::http(addr, "GET", &format!("{path}?count=50000"), &[]).unwrap()
    });
    std::thread::sleep(Duration::from_millis(1_000));
    db.pause();
    std::thread::sleep(Duration::from_millis(6_500));
    db.resume();
    let r = batch.join().unwrap();
    if r.status == 200 {
        ids.extend(r.ids());
    } else {
        r.assert_error(503, "not_ready");
        let msg = r.json()["error"].as_str().unwrap().to_string();
        assert!(msg.contains("did not answer in time"), "{msg}");
    }
    locker.release();
    // The database is back: every later claim succeeds and is sound (the exact count, below
    // max_id), on a fresh connection rather than the one that lost track of its replies.
    for i in 0..20 {
        let r = s.get(&format!("{path}?count=3000"));
        assert_eq!(r.status, 200, "claim {i} after the thaw: {}", r.body);
        let got = r.ids();
        assert_eq!(got.len(), 3000);
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        ids.extend(got);
    }
    ids.extend(env.ids(&["next", "frozen", "-n", "5"]));
    let max_id = env.max_id("frozen") as u64;
    assert!(
        ids.iter().all(|&id| id < max_id),
        "every ID below max_id {max_id}"
    );
    assert_unique(&mut ids);
}

#[test]
fn a_worker_row_claimed_by_another_host_is_refused_rather_than_shared() {
    let db = MariaDb::shared();
    let a = Env::mariadb(db, Tables::DbInit);
    // Host B: its own sandbox (state directory), the same database.
    let b = a.another_host();
    let registry =
        |identity: &'static str| vec!["--snowflake", "--registry", "mysql", "--instance", identity];
    let s = a.serve(&registry("10.50.1.1:8080"));
    let path = "/api/snowflake/get/k";
    let mut ids = s.get(&format!("{path}?count=1000")).ids();
    let worker = worker_of(ids[0]);

    // B is misconfigured with A's identity: refused, by next and by serve.
    let refuse = |args: Vec<&str>, what: &str| {
        let out = b.cmd(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}");
        assert!(
            err.contains("already in use by another live process")
                && err.contains(&format!(
                    "of leaf_workerid_alloc id {worker} is held by another MySQL connection"
                )),
            "{what}: {err}"
        );
        assert!(err.contains("hint:"), "{what}: {err}");
        // One error, not the refusal followed by a second one about the id (issue 18 #20).
        assert_eq!(err.matches("error:").count(), 1, "{what}: {err}");
        assert!(!err.contains("no longer held"), "{what}: {err}");
    };
    let mut next = vec!["next", "-n", "5"];
    next.extend(registry("10.50.1.1:8080"));
    refuse(next, "next with A's identity");
    let mut serve = vec!["serve", "--listen", "127.0.0.1:0"];
    serve.extend(registry("10.50.1.1:8080"));
    refuse(serve, "serve with A's identity");

    // Someone rewrites A's row to B's identity while A runs: B finds the row, but not the lock.
    a.sql(&format!(
        "UPDATE leaf_workerid_alloc SET ip_port = '10.50.1.2:8080' WHERE id = {worker}"
    ));
    let mut next = vec!["next", "-n", "5"];
    next.extend(registry("10.50.1.2:8080"));
    refuse(next.clone(), "next with the rewritten row");
    ids.extend(s.get(&format!("{path}?count=1000")).ids());

    // The row deleted under A (a reclaim by hand): A stops issuing on that id, takes a new row
    // by itself and goes on with another worker id.
    a.sql(&format!(
        "DELETE FROM leaf_workerid_alloc WHERE id = {worker}"
    ));
    let started = Instant::now();
    let mut refused = 0;
    let new_worker = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no new worker row; {}",
            s.stderr()
        );
        let r = s.get(path);
        if r.status == 200 {
            let id = r.id();
            ids.push(id);
            if worker_of(id) != worker {
                break worker_of(id);
            }
        } else {
            r.assert_lease_refusal();
            refused += 1;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("worker {worker} -> {new_worker} after {refused} refusals");
    ids.extend(s.get(&format!("{path}?count=1000")).ids());
    s.stop_cleanly();

    // Once A is gone, B (whose identity no row holds now) gets its own row; all IDs distinct.
    ids.extend(b.ids(&next));
    assert_unique(&mut ids);
}

/// MariaDB frozen (SIGSTOP) under `serve --snowflake --registry mysql`: the worker lease's renewal
/// hangs in its SQL write, but `/readyz` and the lease check never wait for it (issue 16: it
/// took 5 s, the I/O timeout, because the check took the mutex the renewal held).
#[test]
fn readyz_answers_at_once_while_the_mysql_registry_is_frozen() {
    let own = MariaDb::start();
    let env = Env::mariadb(&own, Tables::DbInit);
    let s = env.serve(&[
        "--snowflake",
        "--registry",
        "mysql",
        "--instance",
        "10.50.3.1:8080",
    ]);
    assert_eq!(s.get("/readyz").status, 200);
    own.pause();
    let frozen = Instant::now();
    let mut slowest = Duration::ZERO;
    // Past a 3 s report (whose write then hangs) and into the 5 s I/O timeout.
    while frozen.elapsed() < Duration::from_secs(9) {
        let asked = Instant::now();
        let r = s.get("/readyz");
        assert!(r.status == 200 || r.status == 503, "{r:?}");
        slowest = slowest.max(asked.elapsed());
        std::thread::sleep(Duration::from_millis(250));
    }
    own.resume();
    assert!(
        slowest < Duration::from_secs(2),
        "/readyz took {slowest:?} while MariaDB was frozen"
    );
}
