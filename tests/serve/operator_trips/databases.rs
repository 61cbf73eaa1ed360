//! (Part of operator_trips.) What operators tripped over on real databases and registries: a
//! PostgreSQL Unix socket and passwords from files, a `mysql://` database picking its worker
//! registry and its errors said in words, and reclaiming a free etcd id.

use crate::support;

use support::{Sandbox, stderr};

use super::stdout;

/// Items 2 and 5, on a real PostgreSQL: a Unix socket in both of libpq's URL forms; the
/// password from LEAF_DB_PASSWORD_FILE and from systemd's credential directory; a missing
/// password said as such (not as a network problem), and a wrong one's hint naming where it
/// came from.
#[test]
fn postgres_over_a_socket_and_passwords_from_files() {
    use support::postgres::{PASSWORD, Postgres};
    let pg = Postgres::shared();
    let sb = Sandbox::new();
    let db = pg.fresh_db();
    let dir = pg.dir().to_string_lossy().replace('/', "%2F");
    let socket_url = format!("postgres://leaf@{dir}:{}/{db}", pg.port);
    let out = sb.run_ok(["db", "init", "--db", &socket_url]);
    assert!(stdout(&out).contains(&socket_url), "{}", stdout(&out));
    sb.leafctl()
        .args(["tag", "add", "sock", "--db", &socket_url])
        .assert()
        .success();
    let query_url = format!(
        "postgres:///{db}?host={}&port={}&user=leaf",
        pg.dir().display(),
        pg.port
    );
    let out = sb.run(["next", "sock", "-n", "3", "--db", &query_url]);
    assert_eq!(stdout(&out), "1\n2\n3\n", "{}", stderr(&out));
    let out = sb.run(["next", "sock", "-n", "2", "--db", &socket_url]);
    assert_eq!(stdout(&out), "4\n5\n", "{}", stderr(&out));

    // leaf_pw needs its password over TCP. None given: said as such, exit 1.
    let tcp_url = pg.url_for("leaf_pw", &db);
    let out = sb.run(["tag", "list", "--db", &tcp_url]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the server asks for a password and none was given"),
        "{err}"
    );
    assert!(err.contains("LEAF_DB_PASSWORD_FILE"), "{err}");
    assert!(
        !err.contains("check that the database server is up"),
        "{err}"
    );

    // From a file (one trailing line break dropped), and from systemd's credentials.
    let file = sb.path().join("pw");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let out = support::run_ok(
        sb.leafctl()
            .env("LEAF_DB_PASSWORD_FILE", &file)
            .args(["tag", "list", "--db", &tcp_url, "--output", "ndjson"]),
    );
    assert!(stdout(&out).contains("\"sock\""));
    let creds = sb.path().join("creds");
    std::fs::create_dir(&creds).unwrap();
    std::fs::write(creds.join("leaf-db-password"), PASSWORD).unwrap();
    let out = sb
        .leafctl()
        .env("CREDENTIALS_DIRECTORY", &creds)
        .args(["next", "sock", "--db", &tcp_url])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "6\n", "{}", stderr(&out));

    // A wrong password: the hint names where it came from (the file; the URL).
    std::fs::write(&file, "wrong\n").unwrap();
    let out = sb
        .leafctl()
        .env("LEAF_DB_PASSWORD_FILE", &file)
        .args(["tag", "list", "--db", &tcp_url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "the password (given by LEAF_DB_PASSWORD_FILE)");
    let in_url = tcp_url.replace("leaf_pw@", "leaf_pw:wrong@");
    let out = sb.run(["tag", "list", "--db", &in_url]);
    let err = stderr(&out);
    assert!(err.contains("given by the URL"), "{err}");
    assert!(!err.contains("wrong"), "the password is never shown: {err}");

    // A password file that is empty, missing, or given twice at the same level: usage errors.
    std::fs::write(&file, "").unwrap();
    for (env, needle) in [
        (vec![("LEAF_DB_PASSWORD_FILE", file.clone())], "is empty"),
        (
            vec![("LEAF_DB_PASSWORD_FILE", sb.path().join("nope"))],
            "cannot read the database password file",
        ),
        (
            vec![
                ("LEAF_DB_PASSWORD_FILE", file.clone()),
                ("LEAF_DB_PASSWORD", "x".into()),
            ],
            "given twice",
        ),
    ] {
        let mut cmd = sb.leafctl();
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["tag", "list", "--db", &tcp_url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{needle}");
        support::assert_stderr_has(&out, needle);
    }
}

/// Items 6 and 7, on a real MariaDB: a `mysql://` database alone picks its worker registry as
/// a `postgres://` one does; TLS asked of a server without it, a bad URL and an unknown
/// parameter are said in words with a hint that fits.
#[test]
fn mysql_alone_picks_its_registry_and_its_errors_are_words() {
    use support::mariadb::{MariaDb, PASSWORD};
    let db = MariaDb::shared();
    let (_, url) = db.fresh_db_url();
    let sb = Sandbox::new();
    let leafctl = || {
        let mut c = sb.leafctl();
        c.env("LEAF_DB_PASSWORD", PASSWORD);
        c
    };
    support::run_ok(leafctl().args(["db", "init", "--db", &url]));
    let out = support::run_ok(leafctl().args(support::words(&format!(
        "next --snowflake --db {url} --instance 10.36.0.1:8080"
    ))));
    assert_eq!(support::parse_ids(&out.stdout).len(), 1);
    let out = leafctl()
        .args(["workers", "list", "--db", &url, "--output", "json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].to_string().contains("10.36.0.1:8080"), "{rows:?}");

    // Without any registry: the hint names the database ones too.
    let out = sb.run(["next", "--snowflake"]);
    assert_eq!(out.status.code(), Some(2));
    support::assert_stderr_has(&out, "--registry mysql|postgres");

    // TLS asked of a server without it.
    let out = leafctl()
        .args(["tag", "list", "--db", &format!("{url}?tls=true")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(!err.contains("DriverError"), "{err}");
    assert!(err.contains("does not offer TLS"), "{err}");
    assert!(err.contains("turn TLS on at the server"), "{err}");
    assert!(!err.contains("give the CA"), "{err}");

    // A bad URL and an unknown parameter: usage errors in words.
    for (bad, needle) in [
        (
            "mysql://leaf@[::1/leaf".to_string(),
            "not a URL leafctl can read",
        ),
        (
            format!("{url}?sslmode=require"),
            "leafctl reads tls (or ssl), ca (or ca_file)",
        ),
    ] {
        let out = leafctl()
            .args(["tag", "list", "--db", &bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains(needle) && !err.contains("ParseError {"),
            "{bad}: {err}"
        );
    }

    // Asking for more IDs than a tag has left says how many it has.
    leafctl()
        .args(["tag", "add", "demo", "--db", &url])
        .assert()
        .success();
    let out = leafctl()
        .args(["next", "demo", "-n", "9223372036854775807", "--db", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the tag has 9223372036854775806 IDs left"),
        "{err}"
    );
    assert!(!err.contains("has run out"), "{err}");
}

/// Item 10, on a real etcd: the dry run of reclaiming an id no lease holds says it is already
/// free, as `--yes` then does, instead of promising to revoke a lease.
#[test]
fn reclaiming_a_free_etcd_id_says_so_before_and_after() {
    use support::etcd::EtcdServer;
    let etcd = EtcdServer::shared();
    let ep = etcd.endpoints();
    let sb = Sandbox::new();
    support::run_ok(
        sb.leafctl()
            .args(["next", "--snowflake", "--etcd", &ep, "--name", "issue36"])
            .args(["--instance", "10.36.0.2:8080"]),
    );
    let reclaim = |extra: &[&str]| {
        sb.leafctl()
            .args([
                "workers", "reclaim", "0", "--etcd", &ep, "--name", "issue36",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // The run released its lease on exit; if the list still shows it live (its last report is
    // recent), --force lets the dry run through, which is what the issue saw.
    let dry = reclaim(&["--force"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let said = stdout(&dry);
    assert!(!said.contains("would revoke"), "{said}");
    assert!(said.contains("worker id 0 is already free"), "{said}");
    let done = reclaim(&["--force", "--yes"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(stdout(&done).contains("already free"), "{}", stdout(&done));

    // "For registries, ids in use of the total": `workers list` says it on stderr.
    let list = sb.run_ok(["workers", "list", "--etcd", &ep, "--name", "issue36"]);
    let err = stderr(&list);
    assert!(err.starts_with("note: "), "{err}");
    support::assert_contains_all(
        &err,
        &[
            " of 1024 worker ids in use (live or held) under ",
            ", 1 registered; the leaf layout holds 1024",
        ],
    );
    let quiet = sb.run(["-q", "workers", "list", "--etcd", &ep, "--name", "issue36"]);
    assert!(quiet.stderr.is_empty(), "{}", stderr(&quiet));
    // Nothing registered, piped: the header alone on stdout, the sentence on stderr (item 3).
    let empty = sb.run_ok(["workers", "list", "--etcd", &ep, "--name", "issue36-none"]);
    assert_eq!(
        stdout(&empty),
        "worker\tidentity\tmode\tlast report\tstatus\n"
    );
    support::assert_stderr_has(&empty, "no worker ids registered under");
}
