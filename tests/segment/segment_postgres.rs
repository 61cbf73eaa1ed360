//! Segment mode against a real PostgreSQL 15 (one private server for this test binary, a fresh
//! database per test): every tag command, concurrent processes and generators, clear and
//! bounded failures, TLS, host lists, and an asynchronous failover that loses claims.

use crate::support;

use std::time::{Duration, Instant};

use leafctl::db::postgres::PostgresStore;
use leafctl::segment::{AllocStore, SegmentError};
use support::env::Env;
use support::etcd::Certs;
use support::postgres::{PASSWORD, Postgres};
use support::{Sandbox, assert_unique, parse_ids, spawn_piped, stderr};

/// Tag commands on PostgreSQL are tried as claims are, as on MySQL: a `set-step` or a `bump` that
/// loses a serialization conflict (40001) twice runs again and succeeds unseen; one that loses
/// every try is one error naming the conflict after 10 tries, exit 1, nothing changed. A trigger
/// that raises 40001 while a sequence (which no rollback undoes) counts the tries stands in for
/// the conflicts of a PostgreSQL-wire engine, which PostgreSQL itself rarely gives a single-row
/// update.
#[test]
fn tag_commands_that_lose_a_conflict_are_retried_then_reported_once() {
    let env = Env::postgres();
    env.ok(&["tag", "add", "c", "--step", "10"]);
    let sql = |q: &str| env.db.sql(Some(&env.name), q);
    sql(
        "CREATE SEQUENCE tries; CREATE TABLE lose_until (n bigint NOT NULL); \
         INSERT INTO lose_until VALUES (0); \
         CREATE FUNCTION lose() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$ \
         BEGIN IF nextval('tries') <= (SELECT n FROM lose_until) THEN \
         RAISE EXCEPTION 'could not serialize access due to concurrent update' \
         USING ERRCODE = '40001'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER lose BEFORE UPDATE ON leaf_alloc FOR EACH ROW EXECUTE FUNCTION lose()",
    );
    let lose_next = |n: i64| {
        sql(&format!(
            "UPDATE lose_until SET n = {n}; SELECT setval('tries', 1, false)"
        ));
    };
    let step = || sql("SELECT step FROM leaf_alloc WHERE biz_tag = 'c'");

    // Two conflicts, then each command goes through: no error, the change made.
    lose_next(2);
    env.ok(&["tag", "set-step", "c", "50"]);
    assert_eq!(step(), "50");
    lose_next(2);
    env.ok(&["tag", "bump", "c", "--to", "5000"]);
    assert_eq!(env.max_id("c"), 5000);

    // Every try conflicts: one clear error after the last try, nothing changed.
    lose_next(1_000_000_000);
    for args in [
        &["tag", "set-step", "c", "70"][..],
        &["tag", "bump", "c", "--to", "9000"],
    ] {
        let started = Instant::now();
        let out = env.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        support::assert_contains_all(
            &err,
            &[
                "lost a write conflict 10 times in a row",
                "could not serialize",
                "hint:",
            ],
        );
        assert_eq!(err.matches("error:").count(), 1, "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "bounded backoff"
        );
    }
    assert_eq!(
        (step().as_str(), env.max_id("c")),
        ("50", 5000),
        "nothing changed"
    );
}

/// The contract's database: a fresh one with the table made by `leafctl db init`.
fn fixture() -> support::segment_contract::SegmentDb {
    let env = Env::postgres();
    let store_url = env.url.clone();
    let (pg, sql_db, max_db) = (env.db, env.name.clone(), env.name);
    support::segment_contract::SegmentDb {
        sandbox: env.sandbox,
        env: vec![("LEAF_DB", env.url)],
        store: Box::new(move || Box::new(PostgresStore::open(&store_url, None).unwrap())),
        sql: Box::new(move |q| {
            pg.sql(Some(&sql_db), q);
        }),
        max_id: Box::new(move |tag| pg.max_id(&max_db, tag)),
    }
}

support::segment_contract::segment_store_contract!(fixture);

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn db_init_is_idempotent_and_every_tag_command_works() {
    let env = Env::postgres();
    env.ok(&["db", "init"]);
    let columns = env.db.sql(
        Some(&env.name),
        "SELECT string_agg(column_name || ':' || data_type, ',' ORDER BY ordinal_position) \
         FROM information_schema.columns WHERE table_name = 'leaf_alloc'",
    );
    assert_eq!(
        columns,
        "biz_tag:character varying,max_id:bigint,step:integer,description:character varying,\
         update_time:timestamp with time zone"
    );
    env.ok(&["tag", "add", "order", "--step", "100", "--desc", "orders"]);
    let out = env.run(["tag", "add", "order"]);
    assert_eq!(out.status.code(), Some(2));
    support::assert_stderr_has(&out, "already exists");
    env.ok(&["tag", "add", "order", "--if-not-exists"]);
    assert_eq!(
        parse_ids(&env.ok(&["next", "order", "-n", "3"]).stdout),
        vec![1, 2, 3]
    );
    assert_eq!(
        text(&env.ok(&["next", "order", "-n", "2", "--output", "json"])).trim(),
        r#"["4","5"]"#
    );
    assert_eq!(
        env.max_id("order"),
        6,
        "each `next` claimed exactly what it printed"
    );
    env.ok(&["tag", "set-step", "order", "500"]);
    let show = support::json(&env.ok(&["tag", "show", "order", "--output", "json"]));
    assert_eq!(
        (&show["step"], &show["description"]),
        (&500.into(), &"orders".into())
    );
    env.ok(&["tag", "add", "other", "--start", "1000"]);
    env.ok(&["tag", "add", "ot_her"]);
    let listed = text(&env.ok(&["tag", "list", "--prefix", "ot_", "--output", "json"]));
    assert!(
        listed.contains("ot_her") && !listed.contains(r#""other""#),
        "{listed}"
    );
    let listed = text(&env.ok(&["tag", "list", "--output", "tsv"]));
    let tags: Vec<&str> = listed
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(tags, vec!["order", "ot_her", "other"], "byte order");

    // bump: up only, in one statement.
    let out = env.run(["tag", "bump", "order", "--to", "3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    env.ok(&["tag", "bump", "order", "--to", "5000"]);
    assert_eq!(parse_ids(&env.ok(&["next", "order"]).stdout), vec![5000]);

    // remove: the row it reports is the row it deleted.
    let removed = support::json(&env.ok(&["tag", "remove", "order", "--yes", "--output", "json"]));
    assert_eq!(removed["max_id"], "5001", "{removed}");
    let out = env.run(["next", "order"]);
    assert_eq!(out.status.code(), Some(2));
    support::assert_stderr_has(&out, "unknown tag \"order\"");
}

/// Issue 33: a removed tag leaves its max_id behind, and adding it again continues above every
/// ID it issued.
#[test]
fn a_removed_and_readded_tag_issues_no_id_twice() {
    let env = Env::postgres();
    support::removed_and_readded_tags_issue_no_id_twice(&|args| env.run(args), &|| {
        Box::new(PostgresStore::open(&env.url, None).unwrap())
    });
    let kept = env.db.sql(
        Some(&env.name),
        "SELECT COUNT(*) FROM leaf_alloc_removed WHERE biz_tag = 'fresh'",
    );
    assert_eq!(kept, "1");
}

/// The add's snapshot must not decide where a re-added tag starts. Another client adds the
/// name (its insert still open), claims from it, removes it and commits, all while this add's
/// statement waits on that insert: the add must start at or above the tombstone the removal
/// left (or the other client's work must be the one undone). Before the fix the add started
/// at the tombstone its snapshot held (11) while IDs up to 21 had been issued.
#[test]
fn an_add_waiting_on_another_clients_add_claim_and_remove_starts_above_them() {
    use leafctl::segment::NewTag;
    let env = Env::postgres();
    let store = PostgresStore::open(&env.url, None).unwrap();
    store.add_tag(&NewTag::new("aba", 10)).unwrap();
    store
        .claim("aba", leafctl::segment::Increment::TableStep)
        .unwrap();
    store.remove("aba").unwrap();
    let tombstone = |pg: &Postgres| -> i64 {
        pg.sql(
            Some(&env.name),
            "SELECT max_id FROM leaf_alloc_removed WHERE biz_tag = 'aba'",
        )
        .parse()
        .unwrap()
    };
    assert_eq!(tombstone(env.db), 11);
    // The other client: an add at 11, then (after a pause) a claim of 11..21, the removal
    // with its tombstone, one transaction.
    let other = env
        .db
        .sql_command(
            Some(&env.name),
            "BEGIN; \
             INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('aba', 11, 10); \
             SELECT pg_sleep(1); \
             UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = 'aba'; \
             WITH d AS (DELETE FROM leaf_alloc WHERE biz_tag = 'aba' RETURNING biz_tag, max_id) \
             INSERT INTO leaf_alloc_removed (biz_tag, max_id) SELECT biz_tag, max_id FROM d \
             ON CONFLICT (biz_tag) DO UPDATE \
             SET max_id = GREATEST(leaf_alloc_removed.max_id, EXCLUDED.max_id); \
             COMMIT;",
        )
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waiting = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let n: i64 = env
                .db
                .sql(
                    Some(&env.name),
                    &format!("SELECT count(*) FROM pg_stat_activity WHERE {what}"),
                )
                .parse()
                .unwrap();
            if n > 0 {
                return;
            }
            assert!(Instant::now() < deadline, "never seen: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    waiting("wait_event = 'PgSleep'");
    let add = std::thread::spawn({
        let url = env.url.clone();
        move || {
            PostgresStore::open(&url, None)
                .unwrap()
                .add_tag(&NewTag::new("aba", 10))
        }
    });
    // This add waits on the other client's open insert of the same name.
    waiting("wait_event_type = 'Lock' AND query NOT LIKE '%pg_sleep%'");
    let other = other.wait_with_output().unwrap();
    let added = add.join().unwrap().unwrap();
    let left = tombstone(env.db);
    assert!(
        added.start >= left,
        "the add started at {} below the tombstone {left} (the other client {}: {})",
        added.start,
        if other.status.success() {
            "committed"
        } else {
            "was rolled back"
        },
        String::from_utf8_lossy(&other.stderr)
    );
    if other.status.success() {
        assert_eq!(left, 21, "the other client's claim is in the tombstone");
    }
    let ids = parse_ids(&env.ok(&["next", "aba", "-n", "3"]).stdout);
    assert!(ids[0] >= left as u64, "{ids:?} below {left}");
}

/// A database made before tombstones (leaf_alloc alone): the first removal creates the table;
/// a user who may not create it is refused, and nothing is removed.
#[test]
fn a_database_without_the_tombstone_table() {
    let pg = Postgres::shared();
    let name = pg.fresh_db();
    pg.sql(Some(&name), leafctl::db::postgres::POSTGRES_DDL[0]);
    pg.sql(Some(&name), "ALTER TABLE leaf_alloc OWNER TO leaf");
    pg.sql(
        None,
        "DO $$ BEGIN CREATE ROLE limited LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    );
    pg.sql(
        Some(&name),
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC; \
         GRANT SELECT, INSERT, UPDATE, DELETE ON leaf_alloc TO limited",
    );
    let sb = Sandbox::new();
    let run = |url: &str, args: &[&str]| {
        sb.leafctl()
            .env("LEAF_DB", url)
            .args(args)
            .output()
            .unwrap()
    };
    let (owner, limited) = (pg.url(&name), pg.url_for("limited", &name));
    assert!(run(&limited, &["tag", "add", "a"]).status.success());
    assert_eq!(
        parse_ids(&run(&limited, &["next", "a", "-n", "2"]).stdout),
        vec![1, 2]
    );
    let out = run(&limited, &["tag", "remove", "a", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was removed") && stderr(&out).contains("leafctl db init"),
        "{}",
        stderr(&out)
    );
    assert_eq!(pg.max_id(&name, "a"), 3, "the row is still there");
    // The owner may create it: the removal does, and the re-add continues above.
    let out = run(&owner, &["tag", "remove", "a", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(run(&owner, &["tag", "add", "a"]).status.success());
    assert_eq!(parse_ids(&run(&owner, &["next", "a"]).stdout), vec![3]);
}

#[test]
fn failures_are_clear_bounded_and_never_show_the_password() {
    let env = Env::postgres();
    let secret = "s3cret-Pa55";
    let dead = support::free_port();
    // Accepted by the kernel, never answered: only the timeout ends the wait.
    let black_hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = black_hole.local_addr().unwrap().port();
    let pg = env.db;
    let cases = [
        (
            format!("postgres://leaf:{secret}@127.0.0.1:{dead}/leaf"),
            1,
            "cannot reach",
        ),
        (
            format!("postgres://leaf@127.0.0.1:{silent}/leaf"),
            1,
            "cannot reach",
        ),
        (pg.url_for("leaf_pw", &env.name), 1, "refused the login"),
        (format!("{}?sslmode=require", env.url), 1, "TLS"),
        (pg.url(&pg.fresh_db()), 1, "no leaf_alloc table"),
        (pg.url("nosuchdb"), 1, "create it"),
        (format!("{}?sslmode=maybe", env.url), 2, "sslmode=maybe"),
        (format!("{}?sslcert=/x", env.url), 2, "unknown parameter"),
    ];
    for (url, code, says) in cases {
        let t = Instant::now();
        let out = env
            .sandbox
            .leafctl()
            .env("LEAF_DB", &url)
            .env("LEAF_DB_PASSWORD", secret)
            .args(["next", "t"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{url}: {err}");
        assert!(err.contains(says), "{url}: {says:?} missing: {err}");
        assert!(!err.contains(secret), "password leaked: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(12),
            "{url}: took {:?}",
            t.elapsed()
        );
    }
    // The right password (from LEAF_DB_PASSWORD) logs in with SCRAM.
    support::run_ok(
        env.sandbox
            .leafctl()
            .env("LEAF_DB", pg.url_for("leaf_pw", &env.name))
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(["tag", "list"]),
    );
}

/// A frozen server (SIGSTOP) is an error within seconds, not a hang; once it answers again the
/// next claim continues after the last, no ID twice.
#[test]
fn a_frozen_server_is_an_error_within_seconds() {
    let pg = Postgres::start();
    let (_, url) = pg.fresh_db_url();
    let sb = Sandbox::new();
    let run = |args: &[&str]| run_on(&sb, &url, args);
    assert!(run(&["db", "init"]).status.success());
    assert!(run(&["tag", "add", "f", "--step", "10"]).status.success());
    let mut ids = parse_ids(&run(&["next", "f", "-n", "5"]).stdout);
    pg.pause();
    let t = Instant::now();
    let out = run(&["next", "f", "-n", "5"]);
    let took = t.elapsed();
    pg.resume();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("no answer") || err.contains("cannot reach"),
        "{err}"
    );
    assert!(took < Duration::from_secs(12), "took {took:?}");
    let out = run(&["next", "f", "-n", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    ids.extend(parse_ids(&out.stdout));
    support::assert_n_unique(&mut ids, 10);
}

/// `sslmode` as libpq reads it: require encrypts without checking; verify-full checks the chain
/// and the name against `sslrootcert`; a TLS-only server refuses plain connections.
#[test]
fn tls_modes_are_libpqs() {
    let certs = Certs::new();
    let pg = Postgres::start_tls(&certs);
    let name = pg.fresh_db();
    let base = pg.url(&name);
    let ca = certs.ca.display().to_string();
    let sb = Sandbox::new();
    let run = |url: String| {
        sb.leafctl()
            .env("LEAF_DB", url)
            .args(["tag", "list"])
            .output()
            .unwrap()
    };
    support::run_ok(
        sb.leafctl()
            .env("LEAF_DB", format!("{base}?sslmode=require"))
            .args(["db", "init"]),
    );
    for ok in [
        format!("{base}?sslmode=require"),
        format!("{base}?sslmode=verify-full&sslrootcert={ca}"),
        format!("{base}?sslmode=verify-ca&sslrootcert={ca}"),
        base.clone(), // prefer: TLS when offered
    ] {
        let out = run(ok.clone());
        assert!(out.status.success(), "{ok}: {}", stderr(&out));
    }
    // By name as well as by address: localhost is in the certificate too.
    let other = base.replace("127.0.0.1", "localhost");
    assert!(
        run(format!("{other}?sslmode=verify-full&sslrootcert={ca}"))
            .status
            .success()
    );
    // A certificate not from a trusted CA: the system's roots do not include the test CA.
    let out = run(format!("{base}?sslmode=verify-full"));
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "TLS");
    let out = run(format!("{base}?sslmode=disable"));
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "refused the login");
}

/// A host list skips a dead host and a standby to reach the writable one; after an
/// asynchronous failover that lost claims, the guard refuses the lost range until `tag bump`.
#[test]
fn host_lists_and_a_failover_that_loses_claims() {
    let primary = Postgres::start();
    primary.sql(None, "CREATE DATABASE leaf OWNER leaf");
    let replica = Postgres::replica_of(&primary);
    let dead = support::free_port();
    let url = format!(
        "postgres://leaf@127.0.0.1:{dead},127.0.0.1:{},127.0.0.1:{}/leaf",
        replica.port, primary.port
    );
    let sb = Sandbox::new();
    let run = |args: &[&str]| run_on(&sb, &url, args);
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "leafctl {args:?}: {}", stderr(&out));
        out
    };
    ok(&["db", "init"]);
    ok(&["tag", "add", "f", "--step", "10"]);
    let mut ids = parse_ids(&ok(&["next", "f", "-n", "5"]).stdout);
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    assert_eq!(primary.max_id("leaf", "f"), 6, "written on the primary");
    // Only a standby: refused as such with target_session_attrs=any, not written.
    let standby = format!("postgres://leaf@127.0.0.1:{}/leaf", replica.port);
    let out = sb
        .leafctl()
        .env("LEAF_DB", &standby)
        .args(["next", "f"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "read-only");

    replica.catch_up_with(&primary);
    replica.stop_replication();
    ids.extend(parse_ids(&ok(&["next", "f", "-n", "5"]).stdout));
    assert_eq!(ids.last(), Some(&10), "claimed on the primary only");
    primary.kill();
    replica.promote();

    support::segment_contract::lost_claims_are_refused_until_bumped(&run, ids);
    // The library reports the same classes.
    assert!(matches!(
        PostgresStore::open(&format!("postgres://leaf@127.0.0.1:{dead}/leaf"), None),
        Err(SegmentError::Unreachable { .. })
    ));
}

/// Issue 39: segment mode through PgBouncer as shipped (its defaults, each pool mode): `db
/// init`, tags, `next` and `serve` under load, no ID twice. Before, every command failed on the
/// `options` startup parameter, and with it allowed the registry tripped over named prepared
/// statements in transaction mode.
#[test]
fn segment_mode_works_through_pgbouncer_in_every_pool_mode() {
    use support::pgbouncer::PgBouncer;
    use support::serve::{Server, hammer};

    let pg = Postgres::shared();
    for mode in ["session", "transaction", "statement"] {
        // In the pooled modes one server connection for every client: their statements share
        // it. (In session mode a client keeps its server connection, so one would serve one
        // client: the defaults it is.)
        let extra: &[&str] = if mode == "session" {
            &[]
        } else {
            &["default_pool_size = 1"]
        };
        let bouncer = PgBouncer::start(pg, mode, extra);
        let name = pg.fresh_db();
        let sandbox = Sandbox::new();
        let url = bouncer.url(&name);
        let run = |args: &[&str]| {
            let out = sandbox
                .leafctl()
                .env("LEAF_DB", &url)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{mode}: leafctl {args:?}: {}\npgbouncer: {}",
                stderr(&out),
                bouncer.log()
            );
            out
        };
        run(&["db", "init"]);
        run(&["tag", "add", "pooled", "--step", "50"]);
        let mut ids = parse_ids(&run(&["next", "pooled", "-n", "120"]).stdout);
        assert_eq!(ids.len(), 120, "{mode}");
        let servers: Vec<Server> = (0..2)
            .map(|_| {
                let mut cmd = sandbox.leafctl_std();
                cmd.env("LEAF_DB", &url).args(["serve", "--segment"]);
                Server::start(cmd)
            })
            .collect();
        let addrs: Vec<_> = servers.iter().map(|s| s.addr).collect();
        ids.extend(hammer(&addrs, 4, 200, "/api/segment/get/pooled"));
        ids.extend(parse_ids(&run(&["next", "pooled", "-n", "30"]).stdout));
        for s in servers {
            s.stop_cleanly();
        }
        assert_eq!(ids.len(), 120 + 4 * (180 + 20 * 100) + 30, "{mode}");
        assert_unique(&mut ids);
        let max_id = pg.max_id(&name, "pooled") as u64;
        assert!(ids.iter().all(|&id| id >= 1 && id < max_id), "{mode}");
    }
}

/// Issue 38: a claim is one round trip (an unnamed `UPDATE ... RETURNING`, parsed, bound and
/// executed in one flight), a claim of the table's step too (the statement reads the step
/// itself). Counted by a proxy between the store and the server.
#[test]
fn a_claim_is_one_round_trip() {
    use support::proxy::Proxy;
    let env = Env::postgres();
    env.ok(&["tag", "add", "rt", "--step", "100"]);
    let proxy = Proxy::start(format!("127.0.0.1:{}", env.db.port).parse().unwrap());
    let url = format!("postgres://leaf@{}/{}", proxy.addr(), env.name);
    let store = PostgresStore::open(&url, None).unwrap();
    let (custom, table_step) = support::round_trips_per_claim(&proxy, &store, "rt");
    eprintln!("round trips per claim: {custom} (given size), {table_step} (table step)");
    assert_eq!((custom, table_step), (1.0, 1.0));
}

/// Eight `db init` at once on a fresh database all succeed, and so do eight `db init --region`:
/// PostgreSQL's `CREATE TABLE IF NOT EXISTS` does not guard against a concurrent create, whose
/// loser failed with exit 1 before.
#[test]
fn db_init_run_eight_times_at_once_succeeds_every_time() {
    for region in [None, Some("1")] {
        let pg = Postgres::shared();
        let url = pg.url(&pg.fresh_db());
        let sb = Sandbox::new();
        let children: Vec<_> = (0..8)
            .map(|_| {
                let mut cmd = sb.leafctl_std();
                cmd.args(["db", "init", "--db", &url]);
                if let Some(r) = region {
                    cmd.args(["--region", r, "--regions", "2"]);
                }
                spawn_piped(&mut cmd)
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{region:?}: {}", stderr(&out));
        }
        let mut list = sb.leafctl();
        list.args(["tag", "list", "--db", &url]);
        if let Some(r) = region {
            list.args(["--region", r, "--regions", "2"]);
        }
        let out = list.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

/// `leafctl ARGS` in `sb` on the database `url` (LEAF_DB), run to the end.
fn run_on(sb: &Sandbox, url: &str, args: &[&str]) -> std::process::Output {
    sb.leafctl()
        .env("LEAF_DB", url)
        .args(args)
        .output()
        .expect("run leafctl")
}
