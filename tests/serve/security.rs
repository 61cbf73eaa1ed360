//! Issue 8, scenario 11: MySQL over TLS to a private MariaDB with a self-signed CA, ZooKeeper
//! digest auth against clients without the credentials, and no password or token in any output,
//! log line (`-vvv`) or error, from the CLI or `serve`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use support::mariadb::{self, MariaDb};
use support::serve::Server;
use support::zookeeper::{RawZk, ZkServer};
use support::{Sandbox, parse_ids};
use zookeeper_client as zkc;

/// The ZooKeeper credentials leafctl runs with in this binary's tests (they share one server, and
/// `/snowflake/NAME` of other credentials cannot be touched).
const ZK_AUTH: &str = "leaf:Zk-s3cret-pw";
const ZK_PASSWORD: &str = "Zk-s3cret-pw";

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn openssl(dir: &Path, args: &[&str]) {
    support::run_ok(Command::new("openssl").args(args).current_dir(dir));
}

struct Certs {
    /// The CA that signed the server's certificate.
    ca: PathBuf,
    /// A CA that did not.
    other_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

/// A CA, a server certificate it signs for the name `localhost` only (no IP address), and an
/// unrelated second CA.
fn make_certs(dir: &Path) -> Certs {
    for ca in ["ca", "other-ca"] {
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=leafctl test {ca}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ],
        );
    }
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    );
    Certs {
        ca: dir.join("ca.pem"),
        other_ca: dir.join("other-ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

#[test]
fn mysql_over_tls_connects_with_the_ca_and_refuses_a_wrong_ca_or_name() {
    let certs_dir = tempfile::tempdir().unwrap();
    let c = make_certs(certs_dir.path());
    let db = MariaDb::start_with(&[
        &format!("--ssl-ca={}", c.ca.display()),
        &format!("--ssl-cert={}", c.cert.display()),
        &format!("--ssl-key={}", c.key.display()),
    ]);
    let password = "tls-Pa55-word";
    // REQUIRE SSL: the server itself refuses this user over a plain connection, so a success
    // below proves the connection was encrypted.
    db.root_sql(
        None,
        &format!(
            "CREATE DATABASE tlsdb; CREATE USER 'tls'@'%' IDENTIFIED BY '{password}' REQUIRE SSL; \
             GRANT ALL ON tlsdb.* TO 'tls'@'%';"
        ),
    );
    let url = |host: &str, query: &str| format!("mysql://tls@{host}:{}/tlsdb{query}", db.port);
    let sb = Sandbox::new();
    let run = |url: &str, args: &[&str]| {
        sb.leafctl()
            .env("LEAF_DB", url)
            .env("LEAF_DB_PASSWORD", password)
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    };

    // The right CA and the certificate's name: everything works, store and worker registry.
    let good = url("localhost", &format!("?tls=true&ca={}", c.ca.display()));
    for args in [
        &["db", "init"][..],
        &["tag", "add", "order"],
        &["-vvv", "next", "order", "-n", "3"],
    ] {
        let out = run(&good, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains(password), "{}", text(&out));
    }
    assert_eq!(parse_ids(&run(&good, &["next", "order"]).stdout), vec![4]);
    let out = run(&good, &["workers", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // `ca=` alone implies TLS.
    let out = run(
        &url("localhost", &format!("?ca={}", c.ca.display())),
        &["tag", "list"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // Without TLS the server refuses this user.
    let out = run(&url("localhost", ""), &["tag", "list"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("refused the login"), "{}", text(&out));

    // A CA that did not sign the server's certificate, or none (the built-in roots): refused,
    // saying it is the certificate.
    for query in [
        format!("?tls=true&ca={}", c.other_ca.display()),
        "?tls=true".to_string(),
    ] {
        let out = run(&url("localhost", &query), &["tag", "list"]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{query}: {t}");
        support::assert_contains_all(&t, &["TLS to", "UnknownIssuer"]);
        assert!(t.contains("hint:") && !t.contains(password), "{t}");
    }
    // The right CA, but a host name the certificate does not carry: refused.
    let out = run(
        &url("127.0.0.1", &format!("?tls=true&ca={}", c.ca.display())),
        &["tag", "list"],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    support::assert_contains_all(&t, &["TLS to", "not valid for name"]);
    // A CA file that is not there: a usage error naming it.
    let out = run(
        &url("localhost", "?tls=true&ca=/nonexistent/ca.pem"),
        &["tag", "list"],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("/nonexistent/ca.pem"), "{t}");
}

#[test]
fn zookeeper_nodes_cannot_be_changed_or_deleted_without_the_credentials() {
    let zk = ZkServer::shared();
    let hosts = zk.hosts();
    let auth = ZK_AUTH;
    let sb = Sandbox::new();
    let leafctl = |auth: Option<&str>, args: &[&str]| {
        let mut cmd = sb.leafctl();
        cmd.args(["--zk", &hosts, "--name", "guarded"])
            .args(args)
            .timeout(Duration::from_secs(60));
        if let Some(a) = auth {
            cmd.env("LEAF_ZK_AUTH", a);
        }
        cmd.output().unwrap()
    };
    // A lease (worker 0) and a forever registration, both written with the credentials.
    let out = leafctl(Some(auth), &["-vvv", "next", "--snowflake", "-n", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains(ZK_PASSWORD), "{}", text(&out));
    let out = leafctl(
        Some(auth),
        &[
            "next",
            "--snowflake",
            "--registry",
            "forever",
            "--instance",
            "10.9.0.1:8080",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let holder = RawZk::connect(&hosts, Some(auth));
    let forever = format!("/snowflake/guarded/forever/10.9.0.1:8080-{:010}", 0);
    let nodes = [
        "/snowflake/guarded",
        "/snowflake/guarded/workers/0",
        forever.as_str(),
    ];
    let before: Vec<Vec<u8>> = nodes.iter().map(|n| holder.get(n).unwrap()).collect();

    // Neither an anonymous client nor one with the wrong password can change, delete or add
    // below leafctl's nodes.
    for client in [
        RawZk::connect(&hosts, None),
        RawZk::connect(&hosts, Some("leaf:wrong")),
        RawZk::connect(&hosts, Some(&format!("intruder:{ZK_PASSWORD}"))),
    ] {
        for node in nodes {
            assert!(
                matches!(client.set(node, b"{}"), Err(zkc::Error::NoAuth)),
                "{node} changed"
            );
        }
        for node in &nodes[1..] {
            assert!(
                matches!(client.delete(node), Err(zkc::Error::NoAuth)),
                "{node} deleted"
            );
        }
        assert!(matches!(
            client.try_create("/snowflake/guarded/workers/99", b"x"),
            Err(zkc::Error::NoAuth)
        ));
        assert!(matches!(
            client.try_create("/snowflake/guarded/leases/1", b"x"),
            Err(zkc::Error::NoAuth)
        ));
    }
    let after: Vec<Vec<u8>> = nodes.iter().map(|n| holder.get(n).unwrap()).collect();
    assert_eq!(before, after, "a node changed");

    // leafctl itself without the credentials: refused with a clear error, nothing changed; with
    // wrong ones, the password is not repeated.
    for (a, args) in [
        (None, &["workers", "reclaim", "0", "--yes", "--force"][..]),
        (Some("leaf:wrong-Pa55"), &["-vvv", "next", "--snowflake"]),
        (
            Some("leaf:wrong-Pa55"),
            &["workers", "reclaim", "10.9.0.1:8080", "--yes", "--force"],
        ),
    ] {
        let out = leafctl(a, args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {t}");
        assert!(t.contains("hint:"), "{t}");
        assert!(!t.contains("wrong-Pa55"), "{t}");
    }
    let after: Vec<Vec<u8>> = nodes.iter().map(|n| holder.get(n).unwrap()).collect();
    assert_eq!(
        before, after,
        "leafctl without the credentials changed a node"
    );
    assert!(holder.exists(&forever));

    // The shared top node stays open for other names: another team with its own credentials,
    // and Leaf without any (it writes /snowflake/NAME/forever/...), still get their namespace.
    let other = sb
        .leafctl()
        .args(support::words(&format!(
            "--zk {hosts} --name other-team next --snowflake"
        )))
        .env("LEAF_ZK_AUTH", "team2:an0ther-pw")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(0), "{}", text(&other));
    RawZk::connect(&hosts, None).leaf_register("plain-leaf", "10.9.0.2", "8080", 1);
}

/// Every secret leafctl can be given, in every place it could leak.
#[test]
fn no_secret_appears_in_output_logs_or_errors() {
    let db = MariaDb::shared();
    let name = db.fresh_db();
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let db_password = mariadb::PASSWORD; // "pw": too short to search for; see the wrong one below
    let wrong_db_password = "Wr0ng-db-Pa55";
    let token = "T0ken-s3cret-value";
    let secrets = [wrong_db_password, token, ZK_PASSWORD];
    let check = |what: &str, s: &str| {
        for secret in secrets {
            assert!(!s.contains(secret), "{what} leaked {secret:?}: {s}");
        }
    };
    let env = |cmd: &mut assert_cmd::Command, password: &str| {
        cmd.env("LEAF_DB", db.url(&name))
            .env("LEAF_DB_PASSWORD", password)
            .env("LEAF_SERVE_TOKEN", token)
            .env("LEAF_ZK_AUTH", ZK_AUTH)
            .env("LEAF_ZK", zk.hosts())
            .timeout(Duration::from_secs(60));
    };
    let mut commands: Vec<(&str, Vec<&str>)> = vec![
        ("db init", vec!["-vvv", "db", "init"]),
        ("tag add", vec!["-vvv", "tag", "add", "t"]),
        ("next", vec!["-vvv", "next", "t", "-n", "2"]),
        (
            "snowflake",
            vec!["-vvv", "next", "--snowflake", "--name", "leak"],
        ),
        ("workers", vec!["-vvv", "workers", "list", "--name", "leak"]),
        ("config show", vec!["config", "show"]),
        ("config json", vec!["--output", "json", "config", "show"]),
    ];
    for (what, args) in &commands {
        let mut cmd = sb.leafctl();
        env(&mut cmd, db_password);
        let out = cmd.args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        check(what, &text(&out));
    }
    // Failures: a wrong database password, wrong ZooKeeper credentials; -vvv and every crate's
    // trace logging (LEAF_LOG=trace).
    commands.truncate(0);
    for (what, args, log) in [
        ("wrong db password", vec!["-vvv", "tag", "list"], None),
        (
            "wrong db password, trace",
            vec!["tag", "list"],
            Some("trace"),
        ),
    ] {
        let mut cmd = sb.leafctl();
        env(&mut cmd, wrong_db_password);
        if let Some(l) = log {
            cmd.env("LEAF_LOG", l);
        }
        let out = cmd.args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{what}: {}", text(&out));
        assert!(text(&out).contains("refused the login"), "{}", text(&out));
        check(what, &text(&out));
    }
    for log in [None, Some("trace")] {
        let mut cmd = sb.leafctl();
        env(&mut cmd, db_password);
        cmd.env("LEAF_ZK_AUTH", format!("leaf:{ZK_PASSWORD}-but-wrong"));
        if let Some(l) = log {
            cmd.env("LEAF_LOG", l);
        }
        let out = cmd
            .args(["-vvv", "next", "--snowflake", "--name", "leak"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        check("wrong zk auth", &text(&out));
    }

    // serve -vvv: the token and the password in no answer and no log line.
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(
        "-vvv serve --segment --snowflake --name leak-serve",
    ))
    .env("LEAF_DB", db.url(&name))
    .env("LEAF_DB_PASSWORD", db_password)
    .env("LEAF_SERVE_TOKEN", token)
    .env("LEAF_ZK_AUTH", ZK_AUTH)
    .env("LEAF_ZK", zk.hosts());
    let s = Server::start(cmd);
    let auth = format!("Bearer {token}");
    let mut bodies = String::new();
    for path in [
        "/api/segment/get/t",
        "/api/segment/get/nope",
        "/api/snowflake/get/x",
        "/cache",
        "/db",
        "/metrics",
        "/readyz",
        "/decodeSnowflakeId?snowflakeId=abc",
    ] {
        for headers in [
            &[][..],
            &[("Authorization", "Bearer T0ken-s3cret-valuX")][..],
            &[("Authorization", auth.as_str())][..],
        ] {
            let r = s.request("GET", path, headers);
            bodies.push_str(&format!("{r:?}\n"));
        }
    }
    check("serve answers", &bodies);
    let log = s.stop_cleanly();
    check("serve log", &log);
    assert!(
        log.contains("/api/segment/get/t 200"),
        "-vvv logs requests: {log}"
    );
}
