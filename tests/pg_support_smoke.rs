//! The private PostgreSQL of tests/support/postgres.rs does what the tests rely on: SQL over its
//! socket, trust and password roles over TCP, a freeze that answers nothing, a crash that keeps
//! the data, TLS only when asked for TLS, and an asynchronous replica that can be promoted.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::etcd::Certs;
use support::postgres::{PASSWORD, Postgres};

const PSQL: &str = "/usr/lib/postgresql/15/bin/psql";

/// psql over TCP to `pg` with `conninfo` added (e.g. `user=leaf_pw`), a 2 s connect timeout,
/// never prompting, `password` as PGPASSWORD; runs `SELECT 1`, bounded to 20 s in all.
fn tcp(pg: &Postgres, conninfo: &str, password: Option<&str>) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.args(["20", PSQL, "-X", "-A", "-t", "-w", "-c", "SELECT 1", "-d"])
        .arg(format!(
            "host=127.0.0.1 port={} dbname=postgres user=leaf connect_timeout=2 {conninfo}",
            pg.port
        ))
        .env_remove("PGPASSWORD")
        .stdin(Stdio::null());
    if let Some(pw) = password {
        cmd.env("PGPASSWORD", pw);
    }
    cmd.output().expect("run psql")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_connects(pg: &Postgres, conninfo: &str, password: Option<&str>) {
    let out = tcp(pg, conninfo, password);
    assert!(out.status.success(), "{conninfo}: {}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

/// Fails to connect; returns what psql said.
fn refused(pg: &Postgres, conninfo: &str, password: Option<&str>) -> String {
    let out = tcp(pg, conninfo, password);
    assert!(
        !out.status.success(),
        "{conninfo} connected: {}",
        text(&out)
    );
    text(&out)
}

#[test]
fn sql_urls_and_passwords() {
    let started = Instant::now();
    let pg = Postgres::shared();
    eprintln!("shared server up in {:?}", started.elapsed());
    let db = pg.fresh_db();
    assert_eq!(db, "leaf_1");
    assert_eq!(
        pg.url(&db),
        format!("postgres://leaf@127.0.0.1:{}/leaf_1", pg.port)
    );
    assert_eq!(
        pg.url_for("leaf_pw", &db),
        format!("postgres://leaf_pw@127.0.0.1:{}/leaf_1", pg.port)
    );
    assert_eq!(
        pg.sql(
            Some(&db),
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"
        ),
        "leaf"
    );
    pg.sql(
        Some(&db),
        "CREATE TABLE leaf_alloc (biz_tag varchar(128) PRIMARY KEY, max_id bigint NOT NULL, \
         step int NOT NULL); INSERT INTO leaf_alloc VALUES ('a', 1, 100), ('b', 7, 10)",
    );
    assert_eq!(
        pg.sql(
            Some(&db),
            "SELECT biz_tag, max_id FROM leaf_alloc ORDER BY 1"
        ),
        "a|1\nb|7"
    );
    assert_eq!(pg.max_id(&db, "b"), 7);
    let failed = pg
        .sql_command(Some(&db), "SELECT nope")
        .output()
        .expect("psql");
    assert!(!failed.status.success());

    assert_connects(pg, "", None); // leaf: trusted
    assert!(refused(pg, "user=leaf_pw", None).contains("no password supplied"));
    let wrong = refused(pg, "user=leaf_pw", Some("wrong"));
    assert!(wrong.contains("password authentication failed"), "{wrong}");
    assert_connects(pg, "user=leaf_pw", Some(PASSWORD));
}

#[test]
fn a_paused_server_answers_nothing() {
    let pg = Postgres::start();
    // A session opened before the pause.
    let mut session = Command::new(PSQL)
        .args(["-X", "-A", "-t", "-d"])
        .arg(format!(
            "host=127.0.0.1 port={} dbname=postgres user=leaf",
            pg.port
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("psql session");
    let mut input = session.stdin.take().expect("stdin");
    let output = BufReader::new(session.stdout.take().expect("stdout"));
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in output.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut ask = |q: &str| writeln!(input, "SELECT '{q}';").expect("write to psql");
    ask("before");
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(10)).as_deref(),
        Ok("before")
    );

    pg.pause();
    let frozen = refused(&pg, "", None);
    assert!(frozen.contains("timeout"), "{frozen}");
    ask("during");
    assert!(
        lines.recv_timeout(Duration::from_secs(2)).is_err(),
        "the open session answered"
    );

    pg.resume();
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(10)).as_deref(),
        Ok("during")
    );
    assert_connects(&pg, "", None);
    drop(input);
    let _ = session.wait();
}

#[test]
fn a_killed_server_restarts_with_its_data() {
    let started = Instant::now();
    let pg = Postgres::start();
    eprintln!("own server up in {:?}", started.elapsed());
    let db = pg.fresh_db();
    pg.sql(
        Some(&db),
        "CREATE TABLE t (v int); INSERT INTO t VALUES (42)",
    );

    pg.kill();
    assert!(!pg.is_running());
    assert!(refused(&pg, "", None).contains("Connection refused"));
    let restarted = Instant::now();
    pg.restart();
    eprintln!("restart after kill took {:?}", restarted.elapsed());
    assert!(pg.is_running());
    assert_eq!(pg.sql(Some(&db), "SELECT v FROM t"), "42");

    pg.sql(Some(&db), "INSERT INTO t VALUES (43)");
    pg.stop();
    assert!(refused(&pg, "", None).contains("Connection refused"));
    pg.restart();
    assert_eq!(pg.sql(Some(&db), "SELECT sum(v) FROM t"), "85");
    let dir = pg.dir().to_path_buf();
    drop(pg);
    assert!(!dir.exists(), "the temp dir outlived the server");
}

#[test]
fn tls_only_when_asked() {
    let certs = Certs::new();
    let pg = Postgres::start_tls(&certs);
    let plain = refused(&pg, "sslmode=disable", None);
    assert!(plain.contains("no encryption"), "{plain}");
    assert_connects(&pg, "sslmode=require", None);
    assert_connects(
        &pg,
        &format!("sslmode=verify-full sslrootcert={}", certs.ca.display()),
        None,
    );
    assert_connects(&pg, "sslmode=require user=leaf_pw", Some(PASSWORD));
}

#[test]
fn a_promoted_replica_has_what_it_replayed() {
    let primary = Postgres::start();
    let db = primary.fresh_db();
    primary.sql(
        Some(&db),
        "CREATE TABLE t (v int); INSERT INTO t VALUES (1)",
    );
    let started = Instant::now();
    let replica = Postgres::replica_of(&primary);
    eprintln!("replica up in {:?}", started.elapsed());
    primary.sql(Some(&db), "INSERT INTO t VALUES (2)");
    replica.catch_up_with(&primary);
    assert_eq!(
        replica.sql(
            Some(&db),
            "SELECT string_agg(v::text, ',' ORDER BY v) FROM t"
        ),
        "1,2"
    );
    let read_only = replica
        .sql_command(Some(&db), "INSERT INTO t VALUES (3)")
        .output()
        .expect("psql");
    assert!(!read_only.status.success(), "a replica took a write");

    primary.kill();
    replica.promote();
    replica.sql(Some(&db), "INSERT INTO t VALUES (3)");
    assert_eq!(replica.sql(Some(&db), "SELECT count(*) FROM t"), "3");
    assert_eq!(replica.fresh_db(), "leaf_2");
    assert_connects(&replica, "", None);
}
