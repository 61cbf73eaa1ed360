//! A private 3-node MariaDB Galera cluster on loopback or on hosts of a private network
//! ([`super::netns`]) (Debian's `galera-4` and `rsync`).
//!
//! Each node is a [`MariaDb`] with its own data directory, client port and socket, plus three
//! more free ports: group communication, incremental state transfer (IST) and snapshot state
//! transfer (SST). Node 0 bootstraps the cluster; the others join from an empty data directory
//! by rsync SST, whose daemon drops to `nobody` when run as root, so their directories are made
//! writable by it. Failure detection is shortened so a killed node is evicted in about 2.5 s.
//! A node killed with SIGKILL rejoins by IST from the position `mariadbd --wsrep-recover` finds.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::mariadb::MariaDb;
use super::netns::Place;
use super::{free_port, wait_until};

const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// The cluster: `nodes[i]` is node `i`.
pub struct Galera {
    pub nodes: Vec<MariaDb>,
}

/// Runs `chown -R nobody: path` and opens the path's parents to others (temp dirs are 0700).
fn give_to_nobody(path: &Path) {
    let st = Command::new("chown")
        .args(["-R", "nobody:"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(st.success(), "chown nobody {}", path.display());
    if let Some(parent) = path.parent() {
        let st = Command::new("chmod")
            .arg("755")
            .arg(parent)
            .status()
            .expect("chmod");
        assert!(st.success());
    }
}

impl Galera {
    /// The cluster shared by every test in this binary (started on first use).
    pub fn shared() -> &'static Galera {
        static SHARED: OnceLock<Galera> = OnceLock::new();
        SHARED.get_or_init(|| Galera::start(3))
    }

    /// Starts an `n`-node cluster on loopback and waits until every node is Synced.
    pub fn start(n: usize) -> Galera {
        let local = Place::local();
        Galera::start_at(&vec![&local; n])
    }

    /// The same with node `i` at `places[i]`.
    pub fn start_at(places: &[&Place]) -> Galera {
        assert!(
            Path::new(PROVIDER).exists(),
            "{PROVIDER} is missing: install galera-4 and rsync (scripts/test does)"
        );
        let gcomm: Vec<u16> = places.iter().map(|_| free_port()).collect();
        let address = gcomm
            .iter()
            .zip(places)
            .map(|(p, place)| place.hostport(*p))
            .collect::<Vec<_>>()
            .join(",");
        let mut nodes = Vec::new();
        for (i, g) in gcomm.iter().enumerate() {
            let (ist, sst) = (free_port(), free_port());
            let (place, ip) = (places[i], places[i].ip);
            let options = [
                "--binlog-format=ROW".to_string(),
                "--innodb-autoinc-lock-mode=2".to_string(),
                "--wsrep-on=ON".to_string(),
                format!("--wsrep-provider={PROVIDER}"),
                format!("--wsrep-cluster-address=gcomm://{address}"),
                format!("--wsrep-node-address={ip}:{g}"),
                "--wsrep-sst-method=rsync".to_string(),
                format!("--wsrep-sst-receive-address={ip}:{sst}"),
                format!(
                    "--wsrep-provider-options=base_host={ip};base_port={g};\
                     gmcast.listen_addr=tcp://{ip}:{g};ist.recv_addr={ip}:{ist};\
                     gcache.size=32M;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;\
                     evs.install_timeout=PT3S;evs.keepalive_period=PT0.5S;\
                     evs.inactive_check_period=PT0.5S;gmcast.peer_timeout=PT2S"
                ),
            ];
            let options: Vec<&str> = options.iter().map(String::as_str).collect();
            let node = if i == 0 {
                let node = MariaDb::initialised(place, &options);
                node.launch(&["--wsrep-new-cluster"]);
                node.create_user();
                node
            } else {
                let node = MariaDb::empty(place, &options);
                give_to_nobody(&node.dir().join("data"));
                node.launch(&[]);
                node
            };
            wait_synced(&node, i);
            nodes.push(node);
        }
        Galera { nodes }
    }

    /// A status variable of node `i` (empty when it does not answer).
    pub fn status(&self, i: usize, name: &str) -> String {
        status(&self.nodes[i], name)
    }

    /// The cluster size node `i` sees.
    pub fn size_seen_by(&self, i: usize) -> usize {
        self.status(i, "wsrep_cluster_size").parse().unwrap_or(0)
    }

    /// The URL of node `i` alone.
    pub fn url(&self, i: usize, db: &str) -> String {
        self.nodes[i].url(db)
    }

    /// One URL listing the nodes in `order` (`mysql://leaf@h1:p1,h2:p2/db`).
    pub fn url_list(&self, order: &[usize], db: &str) -> String {
        let hosts: Vec<String> = order
            .iter()
            .map(|&i| self.nodes[i].place.hostport(self.nodes[i].port))
            .collect();
        format!("mysql://leaf@{}/{db}", hosts.join(","))
    }

    /// Kills node `i` (SIGKILL) and waits until the others have evicted it.
    pub fn kill(&self, i: usize) {
        self.nodes[i].kill();
        let others: Vec<usize> = (0..self.nodes.len()).filter(|&j| j != i).collect();
        let want = others.len();
        let evicted = wait_until(Duration::from_secs(30), || {
            others.iter().all(|&j| self.size_seen_by(j) == want)
        });
        assert!(evicted, "node {i} was not evicted");
    }

    /// Restarts a killed node `i` at its recovered position, so it rejoins by IST, and waits
    /// until it is Synced.
    pub fn restart(&self, i: usize) {
        let position = self.nodes[i].wsrep_recover();
        self.nodes[i].launch(&[&format!("--wsrep-start-position={position}")]);
        wait_synced(&self.nodes[i], i);
    }

    /// [`Galera::restart`] as an operator does it: a joiner whose state transfer failed (the
    /// donor gave up, "Will never receive state. Need to abort") exits, and is started again,
    /// up to `tries` times. The error log of the last try if none joined.
    pub fn rejoin(&self, i: usize, tries: usize) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..tries {
            // The joiner's rsync daemon runs as `nobody`; files mariadbd (root) made since the
            // last transfer are not writable by it, and the transfer fails ("mkstemp
            // .rsync_sst_complete ... Permission denied", the donor's "error 255"). Node 0
            // never was a joiner before.
            give_to_nobody(&self.nodes[i].dir().join("data"));
            let position = self.nodes[i].wsrep_recover();
            match self.nodes[i].try_launch(&[&format!("--wsrep-start-position={position}")]) {
                Ok(()) if synced(&self.nodes[i]) => return Ok(()),
                Ok(()) => {
                    last = format!("node {i} started but never became Synced");
                    self.nodes[i].kill();
                }
                Err(log) => last = log,
            }
        }
        Err(last)
    }
}

/// A status variable of `node` (empty when it does not answer).
fn status(node: &MariaDb, name: &str) -> String {
    let out = node
        .root_sql_command(None, &format!("SHOW STATUS LIKE '{name}'"))
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .split('\t')
            .nth(1)
            .unwrap_or("")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

/// Waits (at most 120 s) until `node` is Synced and in the primary component.
fn synced(node: &MariaDb) -> bool {
    wait_until(Duration::from_secs(120), || {
        status(node, "wsrep_local_state_comment") == "Synced"
            && status(node, "wsrep_cluster_status") == "Primary"
    })
}

/// Waits until `node` (node `i`) is Synced and in the primary component.
fn wait_synced(node: &MariaDb, i: usize) {
    let synced = synced(node);
    let log = std::fs::read_to_string(node.dir().join("error.log")).unwrap_or_default();
    assert!(synced, "galera node {i} never became Synced:\n{log}");
}

impl Drop for Galera {
    fn drop(&mut self) {
        // Joiners first, so node 0 is not left waiting for a quorum that is leaving.
        while let Some(node) = self.nodes.pop() {
            drop(node);
        }
    }
}
