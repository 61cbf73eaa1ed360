//! A private ZooKeeper 3.8 for one test binary (or one test that injects faults into it).
//!
//! The server runs from Debian's `zookeeperd` jar with its own temp dataDir on a free loopback
//! port, or on a host of a private network ([`super::netns`]). It is started under a small shell watchdog whose stdin is a pipe held by the test process:
//! when the test binary ends, however it ends, the pipe closes and the watchdog kills the server,
//! so no java process outlives the tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::netns::Place;
use super::serve::signal;
use super::{free_port, under_watchdog, wait_until};

use zookeeper_client as zkc;

const JAR: &str = "/usr/share/java/zookeeper.jar";

/// Options for a registry or admin of `name` on `zk` as `instance` (`host:port`), with its
/// state (the forever cache) in `state` and a 4 s session timeout.
pub fn opts(zk: &ZkServer, name: &str, instance: &str, state: &Path) -> leafctl::worker::ZkOptions {
    let mut o =
        leafctl::worker::ZkOptions::new(&zk.hosts(), name, instance.parse().unwrap(), state);
    o.session_timeout = Duration::from_secs(4);
    o
}

/// One running ZooKeeper server (standalone, or a member of a [`ZkEnsemble`]).
pub struct ZkServer {
    pub port: u16,
    /// Where it runs and listens.
    pub place: Place,
    dir: tempfile::TempDir,
    /// `ZooKeeperServerMain` (standalone) or `QuorumPeerMain` (ensemble member).
    main_class: &'static str,
    heap: &'static str,
    java_pid: AtomicU32,
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

fn check_installed() {
    assert!(
        Path::new(JAR).exists(),
        "{JAR} is missing: install Debian's zookeeperd (scripts/test does)"
    );
}

impl ZkServer {
    /// The server shared by every test in this binary (started on first use).
    pub fn shared() -> &'static ZkServer {
        static SHARED: OnceLock<ZkServer> = OnceLock::new();
        SHARED.get_or_init(ZkServer::start)
    }

    /// A server of its own, for tests that stop, pause or kill it.
    pub fn start() -> ZkServer {
        Self::start_on(free_port())
    }

    /// A server on a given port (e.g. to restart on the same address).
    pub fn start_on(port: u16) -> ZkServer {
        Self::start_at(&Place::local(), port)
    }

    /// A server at `place` (its namespace and address) on `port`.
    pub fn start_at(place: &Place, port: u16) -> ZkServer {
        let server = Self::prepare(
            place,
            port,
            "",
            None,
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            "-Xmx256m",
        );
        server.launch();
        assert!(
            wait_until(Duration::from_secs(60), || server.ruok()),
            "ZooKeeper did not answer ruok on port {port} within 60 s; log: {}",
            server.log()
        );
        server
    }

    /// Writes the data directory and `zoo.cfg` (with `extra` lines and, for an ensemble
    /// member, `myid`), without starting anything.
    fn prepare(
        place: &Place,
        port: u16,
        extra: &str,
        myid: Option<u32>,
        main_class: &'static str,
        heap: &'static str,
    ) -> ZkServer {
        check_installed();
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        if let Some(id) = myid {
            std::fs::write(data.join("myid"), format!("{id}\n")).expect("myid");
        }
        let cfg = dir.path().join("zoo.cfg");
        std::fs::write(
            &cfg,
            format!(
                "tickTime=500\ndataDir={}\nclientPort={port}\nclientPortAddress={}\n\
                 admin.enableServer=false\nminSessionTimeout=1000\nmaxSessionTimeout=20000\n\
                 4lw.commands.whitelist=*\npreAllocSize=1024\n{extra}",
                data.display(),
                place.ip
            ),
        )
        .expect("zoo.cfg");
        ZkServer {
            port,
            place: place.clone(),
            dir,
            main_class,
            heap,
            java_pid: AtomicU32::new(0),
            watchdog: Mutex::new(None),
        }
    }

    /// Starts java on the prepared directory under a watchdog (again after [`ZkServer::kill`]:
    /// same data, same port).
    fn launch(&self) {
        let mut guard = self.watchdog.lock().unwrap();
        assert!(guard.is_none(), "already running");
        let d = self.dir.path().display();
        let classpath = format!("{d}:/etc/zookeeper/conf:{JAR}");
        let (child, stdin, java_pid) = under_watchdog(
            &self.place,
            &format!(
                "cd '{d}' && java {heap} -cp '{classpath}' {class} '{d}/zoo.cfg' \
                 >>'{d}/out.log' 2>&1",
                heap = self.heap,
                class = self.main_class,
            ),
            "ZooKeeper",
        );
        self.java_pid.store(java_pid, Ordering::SeqCst);
        *guard = Some((child, stdin));
    }

    /// Starts the server again after [`ZkServer::kill`], on the same data and port, and waits
    /// until it answers.
    pub fn restart(&self) {
        self.launch();
        assert!(
            wait_until(Duration::from_secs(60), || self.ruok()),
            "ZooKeeper did not come back on port {}; log: {}",
            self.port,
            self.log()
        );
    }

    /// `IP:PORT` (`127.0.0.1:PORT` on the machine's loopback), the connect string.
    pub fn hosts(&self) -> String {
        self.place.hostport(self.port)
    }

    /// The server's data directory's parent (for logs).
    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Sends a four-letter command (from the server's own place) and returns the answer ("" when
    /// none).
    pub fn four_letters(&self, cmd: &str) -> String {
        let addr = self.place.addr(self.port);
        self.place.within(|| {
            let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
                return String::new();
            };
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            if s.write_all(cmd.as_bytes()).is_err() {
                return String::new();
            }
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            out
        })
    }

    /// True when the server answers `imok`.
    pub fn ruok(&self) -> bool {
        self.four_letters("ruok") == "imok"
    }

    /// `leader`, `follower` or `standalone` while serving; `None` when not (no quorum, down).
    pub fn mode(&self) -> Option<String> {
        self.four_letters("srvr")
            .lines()
            .find_map(|l| l.strip_prefix("Mode: "))
            .map(str::to_string)
    }

    /// The server's own output, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out.log")).unwrap_or_default()
    }

    /// Freezes the server (SIGSTOP): connections stay open but nothing answers.
    pub fn pause(&self) {
        signal(self.java_pid.load(Ordering::SeqCst), libc::SIGSTOP);
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        signal(self.java_pid.load(Ordering::SeqCst), libc::SIGCONT);
    }

    /// True while the process runs (not killed).
    pub fn running(&self) -> bool {
        self.watchdog.lock().unwrap().is_some()
    }

    /// Kills the server (SIGKILL) and waits for the watchdog to go.
    pub fn kill(&self) {
        let taken = self.watchdog.lock().unwrap().take();
        if let Some((mut child, stdin)) = taken {
            drop(stdin);
            let _ = child.wait();
        }
        // The port stops accepting once the process is gone.
        wait_until(Duration::from_secs(30), || !self.place.listening(self.port));
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Three ZooKeeper servers on loopback forming one ensemble (quorum: two).
pub struct ZkEnsemble {
    pub members: Vec<ZkServer>,
}

impl ZkEnsemble {
    /// Starts three members on loopback and waits until one leads and two follow.
    pub fn start() -> ZkEnsemble {
        let local = Place::local();
        ZkEnsemble::start_at(&[&local, &local, &local])
    }

    /// The same with member `i` at `places[i]` (e.g. three hosts of a private network).
    pub fn start_at(places: &[&Place; 3]) -> ZkEnsemble {
        let ports: Vec<(u16, u16, u16)> = (0..3)
            .map(|_| (free_port(), free_port(), free_port()))
            .collect();
        let servers: String = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer, elect))| {
                format!("server.{}={}:{peer}:{elect}\n", i + 1, places[i].ip)
            })
            .collect();
        let extra = format!("initLimit=10\nsyncLimit=5\n{servers}");
        let members: Vec<ZkServer> = ports
            .iter()
            .enumerate()
            .map(|(i, (client, _, _))| {
                ZkServer::prepare(
                    places[i],
                    *client,
                    &extra,
                    Some(i as u32 + 1),
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    "-Xmx192m",
                )
            })
            .collect();
        for m in &members {
            m.launch();
        }
        let ensemble = ZkEnsemble { members };
        assert!(
            ensemble.wait_for_quorum(Duration::from_secs(90)),
            "the ensemble did not form; logs:\n{}",
            ensemble.logs()
        );
        ensemble
    }

    /// Every member's `IP:PORT`, comma-separated.
    pub fn hosts(&self) -> String {
        super::comma_list(self.members.iter().map(ZkServer::hosts))
    }

    /// The index of the member that leads now, if any.
    pub fn leader(&self) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.running() && m.mode().as_deref() == Some("leader"))
    }

    /// Waits until a leader and every other running member serve.
    pub fn wait_for_quorum(&self, limit: Duration) -> bool {
        wait_until(limit, || {
            let running: Vec<&ZkServer> = self.members.iter().filter(|m| m.running()).collect();
            let modes: Vec<Option<String>> = running.iter().map(|m| m.mode()).collect();
            modes
                .iter()
                .filter(|m| m.as_deref() == Some("leader"))
                .count()
                == 1
                && modes.iter().all(|m| m.is_some())
        })
    }

    /// Every member's output, for failure messages.
    pub fn logs(&self) -> String {
        self.members
            .iter()
            .enumerate()
            .map(|(i, m)| format!("--- member {}:\n{}", i + 1, m.log()))
            .collect()
    }
}

/// A plain client, used to write trees the way Leaf (Curator) does and to inspect nodes.
pub struct RawZk {
    rt: tokio::runtime::Runtime,
    client: zkc::Client,
}

impl RawZk {
    pub fn connect(hosts: &str, auth: Option<&str>) -> RawZk {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mut c = zkc::Client::connector().with_session_timeout(Duration::from_secs(6));
        if let Some(a) = auth {
            c = c.with_auth("digest", a.as_bytes());
        }
        let client = rt.block_on(c.connect(hosts)).unwrap();
        RawZk { rt, client }
    }

    /// Leaf: `creatingParentsIfNeeded().withMode(PERSISTENT_SEQUENTIAL)` on
    /// `/snowflake/{name}/forever/{ip}:{port}-` with Jackson's `{"ip","port","timestamp"}`.
    pub fn leaf_register(&self, name: &str, ip: &str, port: &str, timestamp: i64) -> String {
        let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
        self.rt
            .block_on(
                self.client
                    .mkdir(&format!("/snowflake/{name}/forever"), &opts),
            )
            .unwrap();
        let data = format!(r#"{{"ip":"{ip}","port":"{port}","timestamp":{timestamp}}}"#);
        let seq_opts = zkc::CreateMode::PersistentSequential.with_acls(zkc::Acls::anyone_all());
        let (_, seq) = self
            .rt
            .block_on(self.client.create(
                &format!("/snowflake/{name}/forever/{ip}:{port}-"),
                data.as_bytes(),
                &seq_opts,
            ))
            .unwrap();
        format!("/snowflake/{name}/forever/{ip}:{port}-{seq}")
    }

    /// Creates a persistent node (and its parents) with `data`, as a hand-made tree would.
    pub fn create(&self, path: &str, data: &[u8]) {
        let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
        if let Some((parent, _)) = path.rsplit_once('/')
            && !parent.is_empty()
        {
            self.rt.block_on(self.client.mkdir(parent, &opts)).unwrap();
        }
        self.rt
            .block_on(self.client.create(path, data, &opts))
            .unwrap();
    }

    pub fn get(&self, path: &str) -> Result<Vec<u8>, zkc::Error> {
        self.rt.block_on(self.client.get_data(path)).map(|(d, _)| d)
    }

    /// Overwrites a node's data (any version).
    pub fn set(&self, path: &str, data: &[u8]) -> Result<(), zkc::Error> {
        self.rt
            .block_on(self.client.set_data(path, data, None))
            .map(|_| ())
    }

    /// Deletes a node (any version).
    pub fn delete(&self, path: &str) -> Result<(), zkc::Error> {
        self.rt.block_on(self.client.delete(path, None))
    }

    /// Creates one persistent node open to anyone, returning the server's refusal.
    pub fn try_create(&self, path: &str, data: &[u8]) -> Result<(), zkc::Error> {
        let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
        self.rt
            .block_on(self.client.create(path, data, &opts))
            .map(|_| ())
    }

    /// The names of a node's children; none when the node is missing.
    pub fn children(&self, path: &str) -> Vec<String> {
        match self.rt.block_on(self.client.list_children(path)) {
            Ok(children) => children,
            Err(zkc::Error::NoNode) => Vec::new(),
            Err(e) => panic!("list the children of {path}: {e}"),
        }
    }

    pub fn exists(&self, path: &str) -> bool {
        self.rt
            .block_on(self.client.check_stat(path))
            .unwrap()
            .is_some()
    }
}
