//! A private ZooKeeper 3.8 for one test binary (or one test that injects faults into it).
//!
//! The server runs from Debian's `zookeeperd` jar with its own temp dataDir on a free loopback
//! port. It is started under a small shell watchdog whose stdin is a pipe held by the test process:
//! when the test binary ends, however it ends, the pipe closes and the watchdog kills the server,
//! so no java process outlives the tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::{free_port, wait_until};

use zookeeper_client as zkc;

const JAR: &str = "/usr/share/java/zookeeper.jar";

/// One running ZooKeeper server.
pub struct ZkServer {
    pub port: u16,
    dir: tempfile::TempDir,
    java_pid: u32,
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
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
        assert!(
            Path::new(JAR).exists(),
            "{JAR} is missing: install Debian's zookeeperd (scripts/test does)"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        let cfg = dir.path().join("zoo.cfg");
        std::fs::write(
            &cfg,
            format!(
                "tickTime=500\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
                 admin.enableServer=false\nminSessionTimeout=1000\nmaxSessionTimeout=20000\n\
                 4lw.commands.whitelist=*\npreAllocSize=1024\n",
                data.display()
            ),
        )
        .expect("zoo.cfg");
        let classpath = format!("{}:/etc/zookeeper/conf:{JAR}", dir.path().display());
        // The watchdog: start java, print its pid, wait for stdin to close, then kill java.
        let script = format!(
            "cd '{d}' && java -Xmx256m -cp '{classpath}' org.apache.zookeeper.server.ZooKeeperServerMain '{cfg}' \
             >'{d}/out.log' 2>&1 </dev/null & J=$!; echo $J; cat >/dev/null; kill -CONT $J 2>/dev/null; kill -9 $J 2>/dev/null; wait $J 2>/dev/null",
            d = dir.path().display(),
            cfg = cfg.display(),
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ZooKeeper watchdog");
        let stdin = child.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("java pid");
        let java_pid: u32 = line.trim().parse().expect("java pid is a number");
        let server = ZkServer {
            port,
            dir,
            java_pid,
            watchdog: Mutex::new(Some((child, stdin))),
        };
        assert!(
            wait_until(Duration::from_secs(60), || server.ruok()),
            "ZooKeeper did not answer ruok on port {port} within 60 s; log: {}",
            server.log()
        );
        server
    }

    /// `127.0.0.1:PORT`, the connect string.
    pub fn hosts(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's data directory's parent (for logs).
    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// True when the server answers `imok`.
    pub fn ruok(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"ruok").is_err() {
            return false;
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out == "imok"
    }

    /// The server's own output, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out.log")).unwrap_or_default()
    }

    /// Freezes the server (SIGSTOP): connections stay open but nothing answers.
    pub fn pause(&self) {
        signal("STOP", self.java_pid);
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        signal("CONT", self.java_pid);
    }

    /// Kills the server (SIGKILL) and waits for the watchdog to go.
    pub fn kill(&self) {
        let taken = self.watchdog.lock().unwrap().take();
        if let Some((mut child, stdin)) = taken {
            drop(stdin);
            let _ = child.wait();
        }
        // The port stops accepting once the process is gone.
        wait_until(Duration::from_secs(30), || {
            TcpStream::connect(("127.0.0.1", self.port)).is_err()
        });
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(sig: &str, pid: u32) {
    let ok = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "kill -{sig} {pid} failed");
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

    pub fn get(&self, path: &str) -> Result<Vec<u8>, zkc::Error> {
        self.rt.block_on(self.client.get_data(path)).map(|(d, _)| d)
    }

    pub fn exists(&self, path: &str) -> bool {
        self.rt
            .block_on(self.client.check_stat(path))
            .unwrap()
            .is_some()
    }
}
