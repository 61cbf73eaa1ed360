//! [`Env`]: a test's sandbox bound to the store or registry its `leafctl` commands reach. Six
//! test files each had a `struct Env` of their own (issue 47: `fault_mariadb`, `fault_kill`,
//! `segment_galera`, `segment_mariadb`, `segment_postgres`, `segment_failover`); what they shared
//! is here once, and what differed is a constructor each ([`Env::sqlite`], [`Env::zookeeper`],
//! [`Env::mariadb`] with its [`Tables`], [`Env::postgres`], [`Env::galera`],
//! [`Env::replicated`]) or a method of the one service that needs it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Child, Command, Output, Stdio};

use super::galera::Galera;
use super::mariadb::{self, MariaDb, Replicated};
use super::postgres::Postgres;
use super::serve::{Serve, Server};
use super::{Sandbox, parse_ids, run_ok};

/// A sandbox and what every `leafctl` command run in it is given to reach its store or registry:
/// environment variables (`LEAF_DB`, `LEAF_ZK`, ...) and leafctl's options ahead of the command
/// (`--db URL`). `D` is the service behind them, kept for the test's own SQL and checks (`()`
/// when the test needs none), with the name of the test's fresh database there and its URL (both
/// empty when there is none).
pub struct Env<D = ()> {
    pub sandbox: Sandbox,
    pub db: D,
    pub name: String,
    pub url: String,
    vars: Vec<(String, String)>,
    args: Vec<String>,
}

/// How [`Env::mariadb`] makes the tables of its fresh database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// `leafctl db init`: `leaf_alloc` and the tombstones.
    DbInit,
    /// Leaf's own `leaf_alloc`, made by plain SQL ([`mariadb::LEAF_DDL`]) as Leaf's users have
    /// it; no `leafctl db init`.
    LeafDdl,
}

impl Env {
    /// The default store (SQLite in the sandbox), nothing to reach.
    pub fn sqlite() -> Env {
        Env::bare(Sandbox::new(), (), Vec::new(), Vec::new())
    }

    /// ZooKeeper at `hosts` under `name`, with sessions of `session_ms` (short, so a killed
    /// holder's session expires within seconds).
    pub fn zookeeper(hosts: &str, name: &str, session_ms: u64) -> Env {
        let vars = vec![
            ("LEAF_ZK".to_string(), hosts.to_string()),
            ("LEAF_NAME".to_string(), name.to_string()),
            (
                "LEAF_ZK_SESSION_TIMEOUT_MS".to_string(),
                session_ms.to_string(),
            ),
        ];
        Env::bare(Sandbox::new(), (), vars, Vec::new())
    }
}

impl<D> Env<D> {
    fn bare(sandbox: Sandbox, db: D, vars: Vec<(String, String)>, args: Vec<String>) -> Env<D> {
        Env {
            sandbox,
            db,
            name: String::new(),
            url: String::new(),
            vars,
            args,
        }
    }

    /// The same settings without the service (for a test that runs every store alike).
    pub fn forget_db(self) -> Env {
        Env {
            sandbox: self.sandbox,
            db: (),
            name: self.name,
            url: self.url,
            vars: self.vars,
            args: self.args,
        }
    }

    /// The same settings and database in a new sandbox: another host's state directory beside
    /// this one's.
    pub fn another_host(&self) -> Env<D>
    where
        D: Clone,
    {
        Env {
            sandbox: Sandbox::new(),
            db: self.db.clone(),
            name: self.name.clone(),
            url: self.url.clone(),
            vars: self.vars.clone(),
            args: self.args.clone(),
        }
    }

    /// `leafctl ARGS` with the settings, as a std Command (to spawn, or to wrap for a host).
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.cmd_after(&self.args, args)
    }

    /// `leafctl BEFORE ARGS` with the environment variables (`before` in place of the options).
    fn cmd_after(&self, before: &[String], args: &[&str]) -> Command {
        let mut c = self.sandbox.leafctl_std();
        c.args(before).args(args);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// `leafctl` with the settings and no arguments yet, as an `assert_cmd` Command.
    pub fn leafctl(&self) -> assert_cmd::Command {
        let mut c = self.sandbox.leafctl();
        c.args(&self.args);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// `leafctl ARGS` run to the end: its status, stdout and stderr.
    pub fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.leafctl().args(args).output().expect("run leafctl")
    }

    /// `leafctl ARGS`, which must succeed ([`run_ok`]).
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> Output {
        run_ok(self.cmd(args))
    }

    /// The IDs `leafctl ARGS` printed (it must succeed).
    #[track_caller]
    pub fn ids(&self, args: &[&str]) -> Vec<u64> {
        parse_ids(&self.ok(args).stdout)
    }

    /// `leafctl ARGS` started with its stdout piped and its stderr dropped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// `leafctl serve ARGS` with the settings, started on loopback ([`Serve`]).
    pub fn serve(&self, args: &[&str]) -> Server {
        Serve::new(&self.sandbox)
            .before(&self.args)
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .args(args)
            .start()
    }
}

impl<'a> Env<&'a MariaDb> {
    /// A fresh database on `db` reached through `LEAF_DB` and `LEAF_DB_PASSWORD`, its tables
    /// made as `tables` says.
    pub fn mariadb(db: &'a MariaDb, tables: Tables) -> Env<&'a MariaDb> {
        let name = db.fresh_db();
        if tables == Tables::LeafDdl {
            db.root_sql(Some(&name), mariadb::LEAF_DDL);
        }
        let url = db.url(&name);
        let vars = vec![
            ("LEAF_DB".to_string(), url.clone()),
            (
                "LEAF_DB_PASSWORD".to_string(),
                mariadb::PASSWORD.to_string(),
            ),
        ];
        let env = Env {
            name,
            url,
            ..Env::bare(Sandbox::new(), db, vars, Vec::new())
        };
        if tables == Tables::DbInit {
            env.ok(&["db", "init"]);
        }
        env
    }

    /// A tag's `max_id` as the database holds it.
    pub fn max_id(&self, tag: &str) -> i64 {
        self.db.max_id(&self.name, tag)
    }

    /// Runs `sql` as root in the database: its output.
    pub fn sql(&self, sql: &str) -> String {
        self.db.root_sql(Some(&self.name), sql)
    }

    /// leafctl's MySQL store on the database, opened by the library.
    pub fn store(&self) -> leafctl::db::mysql::MysqlStore {
        leafctl::db::mysql::MysqlStore::open(&self.url, Some(mariadb::PASSWORD)).unwrap()
    }
}

impl Env<&'static Postgres> {
    /// A fresh database on the shared PostgreSQL, reached through `LEAF_DB` alone, with the
    /// table made by `leafctl db init`.
    pub fn postgres() -> Env<&'static Postgres> {
        let pg = Postgres::shared();
        let name = pg.fresh_db();
        let url = pg.url(&name);
        let vars = vec![("LEAF_DB".to_string(), url.clone())];
        let env = Env {
            name,
            url,
            ..Env::bare(Sandbox::new(), pg, vars, Vec::new())
        };
        env.ok(&["db", "init"]);
        env
    }

    /// A tag's `max_id` as the database holds it.
    pub fn max_id(&self, tag: &str) -> i64 {
        self.db.max_id(&self.name, tag)
    }
}

impl Env<&'static Galera> {
    /// A fresh database on the shared Galera cluster (made on node 0, `leafctl db init` through
    /// it): each command names the node it goes to ([`Env::cmd_on`]) as `--db URL`, with the
    /// MySQL password and leafctl's debug log. `url` is node 0's.
    pub fn galera() -> Env<&'static Galera> {
        let cluster = Galera::shared();
        let name = cluster.nodes[0].fresh_db();
        let vars = vec![
            (
                "LEAF_DB_PASSWORD".to_string(),
                mariadb::PASSWORD.to_string(),
            ),
            ("LEAF_LOG".to_string(), "leafctl=debug".to_string()),
        ];
        let env = Env {
            url: cluster.url(0, &name),
            name,
            ..Env::bare(Sandbox::new(), cluster, vars, Vec::new())
        };
        env.ok_on(0, &["db", "init"]);
        env
    }

    /// The database's URL on node `node`.
    pub fn url_on(&self, node: usize) -> String {
        self.db.url(node, &self.name)
    }

    /// `leafctl --db URL(node) ARGS`.
    pub fn cmd_on(&self, node: usize, args: &[&str]) -> Command {
        self.cmd_after(&["--db".to_string(), self.url_on(node)], args)
    }

    /// `leafctl --db URL(node) ARGS`, which must succeed.
    #[track_caller]
    pub fn ok_on(&self, node: usize, args: &[&str]) -> Output {
        run_ok(self.cmd_on(node, args))
    }

    /// The tag's `max_id` as node `node` sees it.
    pub fn max_id_on(&self, node: usize, tag: &str) -> i64 {
        self.db.nodes[node].max_id(&self.name, tag)
    }
}

impl Env<Replicated> {
    /// A primary/replica pair of its own with database `leaf`, reached as `--db URL` (the URL
    /// lists both) with the MySQL password, its table made by `leafctl db init`.
    pub fn replicated() -> Env<Replicated> {
        let pair = Replicated::start();
        pair.primary.root_sql(None, "CREATE DATABASE leaf");
        let url = pair.url("leaf");
        let vars = vec![(
            "LEAF_DB_PASSWORD".to_string(),
            mariadb::PASSWORD.to_string(),
        )];
        let args = vec!["--db".to_string(), url.clone()];
        let env = Env {
            name: "leaf".to_string(),
            url,
            ..Env::bare(Sandbox::new(), pair, vars, args)
        };
        env.ok(&["db", "init"]);
        env
    }
}
