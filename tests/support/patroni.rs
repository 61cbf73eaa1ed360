//! A private 3-node Patroni cluster of PostgreSQL 15 (Debian's `patroni`, 3.0.x, and
//! `postgresql-15`) on loopback, with the tests' etcd ([`super::etcd`]) as its DCS.
//!
//! [`PatroniCluster::start`] takes an [`EtcdServer`] that must outlive the cluster (the cluster
//! only keeps its endpoints); each cluster has a scope of its own (`leafctl-PID-N`), so several
//! clusters may share one etcd. Patroni talks to etcd through its `etcd3` section, i.e. etcd's
//! v3 gRPC gateway over HTTP (no python etcd3 module needed; it imports python3-etcd).
//!
//! Every node has a directory of its own under one temp dir (`n0`, `n1`, `n2`), owned by
//! `postgres` with mode 0700: `patroni.yml`, `patroni.log` (Patroni's and PostgreSQL's output),
//! `pgpass`, the Unix socket and `data`. PostgreSQL refuses to run as root, so Patroni runs as
//! `postgres` (`setpriv`). Patroni starts the postmaster detached (its own session, not Patroni's
//! child), so killing Patroni leaves PostgreSQL running: each Patroni runs under a watchdog
//! ([`super::under_watchdog_stopping`]) whose stop freezes and kills Patroni with its children,
//! then the postmaster named by `data/postmaster.pid` (when that process's working directory is
//! this data directory) with its children. That is [`PatroniCluster::crash`] (losing the
//! machine), what happens when the test binary ends however it ends, and what `Drop` does before
//! removing the temp dir.
//!
//! Timing is shortened (`ttl: 6`, `loop_wait: 1`, `retry_timeout: 2`): a crashed leader's key
//! expires within 6 s and its synchronous standby takes over (`synchronous_mode: true`).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::etcd::EtcdServer;
use super::netns::Place;
use super::{free_port, under_watchdog_stopping, wait_until};

const PATRONI: &str = "/usr/bin/patroni";
const BIN_DIR: &str = "/usr/lib/postgresql/15/bin";
const NODES: usize = 3;

/// One Patroni with its PostgreSQL.
pub struct PatroniNode {
    /// The member name (`n0`, `n1`, `n2`), also its `application_name` on the leader.
    pub name: String,
    pub pg_port: u16,
    pub api_port: u16,
    /// The node's directory (config, log, socket, data).
    dir: PathBuf,
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

/// The cluster: `nodes[i]` is node `i`.
pub struct PatroniCluster {
    /// The Patroni scope (the cluster's name in etcd, under `/service/`).
    pub scope: String,
    pub nodes: Vec<PatroniNode>,
    dir: tempfile::TempDir,
}

fn check_installed() {
    for p in [PATRONI, &format!("{BIN_DIR}/postgres")] {
        assert!(
            Path::new(p).exists(),
            "{p} is missing: install Debian's patroni, python3-etcd and postgresql-15"
        );
    }
}

/// `chown -R postgres:postgres path` and mode 0700.
fn give_to_postgres(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let st = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(st.success(), "chown postgres {}", path.display());
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).expect("chmod 0700");
}

/// The last `n` lines of a file (empty when it cannot be read).
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A plain HTTP/1.0 GET of `path` on 127.0.0.1:`port`: (status, body); status 0 when nothing
/// answered (the body then says why).
pub fn http_get(port: u16, path: &str) -> (u16, String) {
    let attempt = || -> std::io::Result<(u16, String)> {
        let addr = ([127, 0, 0, 1], port).into();
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
        s.set_read_timeout(Some(Duration::from_secs(3)))?;
        s.set_write_timeout(Some(Duration::from_secs(3)))?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        Ok((status, body.to_string()))
    };
    attempt().unwrap_or_else(|e| (0, e.to_string()))
}

/// Runs SQL with psql (`-X -A -t -v ON_ERROR_STOP=1`) on the connection `target` (a URL or a
/// `key=value` string): its trimmed output, or its stderr.
pub fn psql(target: &str, sql: &str) -> Result<String, String> {
    let mut cmd = Command::new(format!("{BIN_DIR}/psql"));
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    let out = cmd
        .args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            target,
            "-c",
            sql,
        ])
        .env("PGCONNECT_TIMEOUT", "3")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("run psql: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

impl PatroniNode {
    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("patroni.log")
    }

    /// The node's directory (config, log, socket, data).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts Patroni on this node's config (and data directory, if there is one).
    fn spawn(&self) {
        let mut guard = self.watchdog.lock().unwrap();
        assert!(guard.is_none(), "patroni {} is already running", self.name);
        let d = self.dir.display();
        // `exec` all the way down: the watchdog's $J is Patroni itself.
        let command = format!(
            "cd '{d}' && exec setpriv --reuid=postgres --regid=postgres --init-groups -- \
             env HOME='{d}' {PATRONI} '{d}/patroni.yml' >>'{d}/patroni.log' 2>&1"
        );
        // Freeze Patroni so it forks nothing more, kill it and its children; then the
        // postmaster (detached by Patroni) and its children, frozen first likewise.
        let stop = format!(
            "kill -STOP $J 2>/dev/null; kill -9 $J $(pgrep -P $J) 2>/dev/null; \
             P=$(head -n1 '{data}/postmaster.pid' 2>/dev/null); \
             if [ -n \"$P\" ] && [ \"$(readlink /proc/$P/cwd 2>/dev/null)\" = '{data}' ]; then \
             kill -STOP $P; kill -9 $P $(pgrep -P $P) 2>/dev/null; fi",
            data = self.data_dir().display()
        );
        let (child, stdin, _pid) =
            under_watchdog_stopping(&Place::local(), &command, &stop, "patroni");
        *guard = Some((child, stdin));
    }

    /// Kills Patroni and its PostgreSQL (SIGKILL) and waits until the port is closed.
    fn kill(&self) {
        let taken = self.watchdog.lock().unwrap().take();
        if let Some((mut child, stdin)) = taken {
            drop(stdin);
            let _ = child.wait();
        }
        wait_until(Duration::from_secs(30), || {
            !Place::local().listening(self.pg_port)
        });
    }

    fn running(&self) -> bool {
        self.watchdog.lock().unwrap().is_some()
    }
}

impl PatroniCluster {
    /// Starts a 3-node cluster using `etcd` (which must outlive it) as its DCS, waits (90 s at
    /// most) for a leader and two streaming replicas, then creates the role `leaf` (LOGIN
    /// SUPERUSER) and the database `leaf` it owns.
    pub fn start(etcd: &EtcdServer) -> PatroniCluster {
        check_installed();
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let scope = format!(
            "leafctl-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let dir = tempfile::Builder::new()
            .prefix("leafctl-patroni-")
            .tempdir()
            .expect("temp dir");
        let root = dir.path().canonicalize().expect("temp dir path");
        let hosts: Vec<String> = etcd
            .members
            .iter()
            .map(|m| m.place.hostport(m.client_port))
            .collect();
        let mut nodes = Vec::new();
        for i in 0..NODES {
            let node = PatroniNode {
                name: format!("n{i}"),
                pg_port: free_port(),
                api_port: free_port(),
                dir: root.join(format!("n{i}")),
                watchdog: Mutex::new(None),
            };
            std::fs::create_dir(&node.dir).expect("node dir");
            let config = config(&scope, &node, &hosts, etcd.first().scheme);
            std::fs::write(
                node.dir.join("patroni.yml"),
                serde_json::to_string_pretty(&config).unwrap(),
            )
            .expect("patroni.yml");
            nodes.push(node);
        }
        give_to_postgres(&root);
        let cluster = PatroniCluster { scope, nodes, dir };
        for node in &cluster.nodes {
            node.spawn();
        }
        if !cluster.wait_settled(Duration::from_secs(90)) {
            panic!(
                "patroni cluster {} did not settle (a leader, two streaming replicas) within \
                 90 s\n{}",
                cluster.scope,
                cluster.logs(60)
            );
        }
        let leader = cluster.leader().expect("a leader");
        cluster.sql(leader, "postgres", "CREATE ROLE leaf LOGIN SUPERUSER");
        cluster.sql(leader, "postgres", "CREATE DATABASE leaf OWNER leaf");
        // libpq tries no further host once one refuses the role or database (a replica that has
        // not replayed them yet), so the URL works only when every node has them.
        let replayed = wait_until(Duration::from_secs(30), || {
            (0..NODES).all(|i| {
                psql(&cluster.node_url(i, "leaf"), "SELECT current_user").is_ok_and(|u| u == "leaf")
            })
        });
        assert!(
            replayed,
            "the replicas did not replay role and database leaf\n{}",
            cluster.logs(40)
        );
        cluster
    }

    /// The last `n` lines of every node's Patroni log, for failure messages.
    pub fn logs(&self, n: usize) -> String {
        self.nodes
            .iter()
            .map(|node| {
                format!(
                    "--- {} ({}) ---\n{}\n",
                    node.name,
                    node.log_path().display(),
                    tail(&node.log_path(), n)
                )
            })
            .collect()
    }

    /// The temp dir holding the nodes' directories.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `postgres://leaf@127.0.0.1:P0,127.0.0.1:P1,127.0.0.1:P2/{db}?target_session_attrs=read-write`:
    /// libpq tries the hosts in order and keeps the one that accepts writes (the leader).
    pub fn url(&self, db: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.pg_port))
            .collect();
        format!(
            "postgres://leaf@{}/{db}?target_session_attrs=read-write",
            hosts.join(",")
        )
    }

    /// `postgres://leaf@127.0.0.1:P{i}/{db}`: node `i` alone, whatever its role.
    pub fn node_url(&self, i: usize, db: &str) -> String {
        format!("postgres://leaf@127.0.0.1:{}/{db}", self.nodes[i].pg_port)
    }

    /// `GET path` on node `i`'s REST API: (status, body); status 0 when it does not answer.
    pub fn api(&self, i: usize, path: &str) -> (u16, String) {
        http_get(self.nodes[i].api_port, path)
    }

    /// A JSON document from node `i`'s REST API, whatever the status (None if unreadable).
    pub fn api_json(&self, i: usize, path: &str) -> Option<serde_json::Value> {
        let (status, body) = self.api(i, path);
        if status == 0 {
            return None;
        }
        serde_json::from_str(&body).ok()
    }

    /// The node whose REST API says it is the primary (`GET /primary` answers 200).
    pub fn leader(&self) -> Option<usize> {
        (0..self.nodes.len()).find(|&i| self.api(i, "/primary").0 == 200)
    }

    /// True when node `i` runs as a replica (`GET /replica` answers 200).
    pub fn is_replica(&self, i: usize) -> bool {
        self.api(i, "/replica").0 == 200
    }

    /// SQL as `postgres` over node `i`'s Unix socket: the output, or psql's error.
    pub fn try_sql(&self, i: usize, db: &str, sql: &str) -> Result<String, String> {
        let node = &self.nodes[i];
        psql(
            &format!(
                "host={} port={} user=postgres dbname={db}",
                node.dir.display(),
                node.pg_port
            ),
            sql,
        )
    }

    /// Whether node `i` is a primary that can commit now: out of recovery, and with
    /// `synchronous_mode` a synchronous standby streaming from it (else every commit waits
    /// for one, and so does every claim).
    pub fn commits(&self, i: usize) -> bool {
        self.try_sql(
            i,
            "postgres",
            "SELECT NOT pg_is_in_recovery() AND (current_setting('synchronous_standby_names') = '' \
             OR EXISTS (SELECT 1 FROM pg_stat_replication \
             WHERE sync_state IN ('sync', 'quorum') AND state = 'streaming'))",
        )
        .is_ok_and(|t| t == "t")
    }

    /// The same, panicking when it fails.
    pub fn sql(&self, i: usize, db: &str, sql: &str) -> String {
        self.try_sql(i, db, sql)
            .unwrap_or_else(|e| panic!("SQL on node {i} failed: {sql}\n{e}"))
    }

    /// True when there is one leader, the other nodes are running replicas in the cluster's
    /// view (one of them its synchronous standby), and the leader streams WAL to both.
    pub fn settled(&self) -> bool {
        let Some(l) = self.leader() else {
            return false;
        };
        let others: Vec<usize> = (0..self.nodes.len()).filter(|&j| j != l).collect();
        // The cluster as the leader sees it in etcd.
        let Some(cluster) = self.api_json(l, "/cluster") else {
            return false;
        };
        let members = cluster["members"].as_array().cloned().unwrap_or_default();
        let member = |name: &str| members.iter().find(|m| m["name"] == name).cloned();
        let leader_ok = member(&self.nodes[l].name).is_some_and(|m| m["role"] == "leader");
        let mut sync = 0;
        let replicas_ok = others.iter().all(|&j| {
            member(&self.nodes[j].name).is_some_and(|m| {
                sync += usize::from(m["role"] == "sync_standby");
                m["state"] == "running" && (m["role"] == "sync_standby" || m["role"] == "replica")
            })
        });
        if !(leader_ok && replicas_ok && sync == 1) {
            return false;
        }
        // pg_stat_replication on the leader, as its REST API reports it.
        let Some(status) = self.api_json(l, "/patroni") else {
            return false;
        };
        let replication = status["replication"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let streaming = |name: &str| {
            replication
                .iter()
                .any(|r| r["application_name"] == name && r["state"] == "streaming")
        };
        others
            .iter()
            .all(|&j| streaming(&self.nodes[j].name) && self.is_replica(j))
    }

    /// Waits until [`PatroniCluster::settled`] (at most `timeout`).
    pub fn wait_settled(&self, timeout: Duration) -> bool {
        wait_until(timeout, || self.settled())
    }

    /// Loses node `i` like a machine: SIGKILL to Patroni and to its PostgreSQL (postmaster and
    /// backends); waits until its port is closed.
    pub fn crash(&self, i: usize) {
        self.nodes[i].kill();
    }

    /// Starts Patroni again on node `i`'s data directory (after [`PatroniCluster::crash`]); it
    /// rejoins as a replica (pg_rewind if its timeline diverged). Does not wait.
    pub fn start_node(&self, i: usize) {
        self.nodes[i].spawn();
    }

    /// True while node `i`'s Patroni runs (not crashed).
    pub fn running(&self, i: usize) -> bool {
        self.nodes[i].running()
    }
}

impl Drop for PatroniCluster {
    fn drop(&mut self) {
        // Kill everything first; the temp dir goes afterwards (TempDir's own drop).
        for node in &self.nodes {
            node.kill();
        }
    }
}

/// Node `node`'s Patroni configuration (JSON, which is YAML too).
fn config(
    scope: &str,
    node: &PatroniNode,
    etcd_hosts: &[String],
    scheme: &str,
) -> serde_json::Value {
    let d = node.dir.display().to_string();
    serde_json::json!({
        "scope": scope,
        "namespace": "/service/",
        "name": node.name,
        "log": { "level": "INFO" },
        "restapi": {
            "listen": format!("127.0.0.1:{}", node.api_port),
            "connect_address": format!("127.0.0.1:{}", node.api_port),
        },
        "etcd3": { "hosts": etcd_hosts, "protocol": scheme },
        "bootstrap": {
            "dcs": {
                "ttl": 6,
                "loop_wait": 1,
                "retry_timeout": 2,
                "maximum_lag_on_failover": 1_073_741_824u64,
                "synchronous_mode": true,
                "postgresql": {
                    "use_pg_rewind": true,
                    "use_slots": true,
                    "parameters": {
                        "wal_level": "replica",
                        "hot_standby": "on",
                        "wal_log_hints": "on",
                        "max_wal_senders": 10,
                        "max_replication_slots": 10,
                        "fsync": "off",
                        "shared_buffers": "16MB",
                        "max_connections": 100,
                    },
                },
            },
            "initdb": [ { "encoding": "UTF8" }, { "locale": "C" } ],
        },
        "postgresql": {
            "listen": format!("127.0.0.1:{}", node.pg_port),
            "connect_address": format!("127.0.0.1:{}", node.pg_port),
            "data_dir": format!("{d}/data"),
            "bin_dir": BIN_DIR,
            "pgpass": format!("{d}/pgpass"),
            "authentication": {
                "superuser": { "username": "postgres", "password": "postgres-pw" },
                "replication": { "username": "replicator", "password": "replicator-pw" },
            },
            "parameters": { "unix_socket_directories": d },
            "pg_hba": [
                "local all all trust",
                "host replication all 127.0.0.1/32 trust",
                "host all all 127.0.0.1/32 trust",
            ],
        },
        "watchdog": { "mode": "off" },
        "tags": {
            "nofailover": false,
            "noloadbalance": false,
            "clonefrom": false,
            "nosync": false,
        },
    })
}
