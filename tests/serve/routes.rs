//! The route contract of `leafctl serve`: Leaf's two ID routes, its decode route, `/db`,
//! `/readyz` and `/metrics` answer the same way whatever holds the segments and the worker id.
//! One body ([`routes_answer_alike`]) run on every segment store (SQLite, MariaDB, PostgreSQL)
//! and every worker-id registry (local, ZooKeeper's leases and Leaf's forever tree, etcd, the
//! MySQL and PostgreSQL tables), paired below; a new backend gets the checks by adding a
//! fixture. (`tests/local/serve_http.rs` checks everything else about the routes on SQLite:
//! content negotiation, every error body, the token, shutdown.)

use crate::support;

use support::etcd::EtcdServer;
use support::mariadb::{MariaDb, PASSWORD};
use support::postgres::Postgres;
use support::serve::{Server, entry};
use support::snowflake::worker_of;
use support::zookeeper::ZkServer;
use support::{Sandbox, assert_unique, stderr};

/// One pairing of a segment store and a worker-id registry: the flags and environment that
/// reach them.
struct Backends {
    /// Given before any command (`--db`, `--zk`, `--etcd`, `--name`).
    flags: Vec<String>,
    /// Given to `serve` (`--worker-id`, `--registry`).
    snowflake: Vec<String>,
    env: Vec<(String, String)>,
}

impl Backends {
    fn leafctl(&self, sb: &Sandbox) -> std::process::Command {
        let mut cmd = sb.leafctl_std();
        cmd.args(&self.flags).envs(self.env.iter().cloned());
        cmd
    }
}

/// Runs `leafctl ARGS` on `b`, which must succeed.
fn ok(sb: &Sandbox, b: &Backends, args: &[&str]) {
    let out = b.leafctl(sb).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
}

/// The contract: a tag added with step 100 on `b`'s database; a server with both modes.
fn routes_answer_alike(b: &Backends) {
    let sb = Sandbox::new();
    ok(&sb, b, &["db", "init"]);
    ok(&sb, b, &["tag", "add", "order", "--step", "100"]);
    let mut cmd = b.leafctl(&sb);
    cmd.args(["serve", "--segment", "--snowflake"])
        .args(&b.snowflake);
    let s = Server::start(cmd);

    // Segment: single IDs ascend; batches of every size are exactly that many, ascending,
    // crossing segments; nothing twice.
    let mut segment = Vec::new();
    for _ in 0..20 {
        segment.push(s.get("/api/segment/get/order").id());
    }
    assert!(segment.windows(2).all(|w| w[0] < w[1]), "{segment:?}");
    for n in [1usize, 7, 1000, 250] {
        let ids = s.get(&format!("/api/segment/get/order?count={n}")).ids();
        assert_eq!(ids.len(), n, "count={n}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "count={n} ascends");
        segment.extend(ids);
    }
    let issued = segment.len();
    let highest = *segment.iter().max().unwrap();
    assert_unique(&mut segment);
    s.get("/api/segment/get/nope")
        .assert_error(404, "unknown_tag");
    s.get("/api/segment/get/order?count=0")
        .assert_error(400, "bad_request");

    // Snowflake: one worker id for every ID, ascending, and the decode route agrees.
    let mut snowflake = vec![s.get("/api/snowflake/get/k").id()];
    snowflake.extend(s.get("/api/snowflake/get/k?count=1000").ids());
    snowflake.push(s.get("/api/snowflake/get/k").id());
    assert_eq!(snowflake.len(), 1002);
    assert!(snowflake.windows(2).all(|w| w[0] < w[1]), "ascending");
    let worker = worker_of(snowflake[0]);
    assert!(snowflake.iter().all(|&id| worker_of(id) == worker));
    let d = s
        .get(&format!("/decodeSnowflakeId?snowflakeId={}", snowflake[0]))
        .json();
    assert_eq!(d["workerId"], worker.to_string(), "{d}");
    assert_unique(&mut snowflake);

    // /db: the tag's row, its max_id above every ID issued; ready; the counters count.
    let db = s.get("/db").json();
    let row = entry(&db, "order");
    assert_eq!(row["step"], 100, "{row}");
    let max_id: u64 = row["maxId"].as_str().unwrap().parse().unwrap();
    assert!(max_id > highest, "{row}");
    let ready = s.get("/readyz");
    assert_eq!(ready.status, 200, "{ready:?}");
    assert_eq!(ready.json()["ready"], true);
    let metrics = s.get("/metrics").body;
    for line in [
        format!("leaf_ids_issued_total{{mode=\"segment\",tag=\"order\"}} {issued}"),
        "leaf_ids_issued_total{mode=\"snowflake\",tag=\"\"} 1002".to_string(),
    ] {
        assert!(metrics.contains(&line), "{line} in:\n{metrics}");
    }
    s.stop_cleanly();
}

/// A fresh MariaDB database: `--db` and its password.
fn mariadb() -> (String, Vec<(String, String)>) {
    let db = MariaDb::shared();
    let url = db.url(&db.fresh_db());
    (url, vec![("LEAF_DB_PASSWORD".into(), PASSWORD.into())])
}

/// A fresh PostgreSQL database's `--db`.
fn postgres() -> String {
    let pg = Postgres::shared();
    pg.url(&pg.fresh_db())
}

/// A name of the registries' trees no other test uses.
fn fresh_name(what: &str) -> String {
    format!("routes-{what}-{}", std::process::id())
}

fn strings(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).collect()
}

#[test]
fn sqlite_and_the_local_registry() {
    let sb = Sandbox::new();
    let url = format!("sqlite://{}", sb.path().join("routes.db").display());
    routes_answer_alike(&Backends {
        flags: strings(&["--db", &url]),
        snowflake: strings(&["--worker-id", "5"]),
        env: Vec::new(),
    });
}

/// MariaDB with the shared ZooKeeper's registry `registry` (`lease` or `forever`).
fn mariadb_and_zookeeper(registry: &str) {
    let (url, env) = mariadb();
    let zk = ZkServer::shared().hosts();
    let name = fresh_name(registry);
    routes_answer_alike(&Backends {
        flags: strings(&["--db", &url, "--zk", &zk, "--name", &name]),
        snowflake: strings(&["--registry", registry]),
        env,
    });
}

#[test]
fn mariadb_and_zookeeper_leases() {
    mariadb_and_zookeeper("lease");
}

#[test]
fn mariadb_and_leafs_forever_tree() {
    mariadb_and_zookeeper("forever");
}

#[test]
fn mariadb_and_the_mysql_table() {
    let (url, env) = mariadb();
    routes_answer_alike(&Backends {
        flags: strings(&["--db", &url]),
        snowflake: strings(&["--registry", "mysql"]),
        env,
    });
}

#[test]
fn postgres_and_etcd() {
    let url = postgres();
    let etcd = EtcdServer::shared().endpoints();
    let name = fresh_name("etcd");
    routes_answer_alike(&Backends {
        flags: strings(&["--db", &url, "--etcd", &etcd, "--name", &name]),
        snowflake: Vec::new(),
        env: Vec::new(),
    });
}

#[test]
fn postgres_and_the_postgres_table() {
    let url = postgres();
    routes_answer_alike(&Backends {
        flags: strings(&["--db", &url]),
        snowflake: strings(&["--registry", "postgres"]),
        env: Vec::new(),
    });
}
