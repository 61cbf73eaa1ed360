//! A private etcd 3.4 (Debian's `etcd-server`) for one test binary, or a 3-member cluster, on
//! free loopback ports or on hosts of a private network ([`super::netns`]).
//!
//! Each member runs under a small shell watchdog whose stdin is a pipe held by the test process:
//! when the test binary ends, however it ends, the pipe closes and the watchdog kills the member,
//! so no etcd process outlives the tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::netns::Place;
use super::serve::signal;
use super::{free_port, under_watchdog, wait_until};

const ETCD: &str = "/usr/bin/etcd";
const ETCDCTL: &str = "/usr/bin/etcdctl";

/// One etcd process.
pub struct EtcdMember {
    pub name: String,
    /// Where it runs and listens.
    pub place: Place,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The CA that signed the member's certificate (TLS members only).
    pub ca_file: Option<PathBuf>,
    pub client_port: u16,
    pub peer_port: u16,
    dir: tempfile::TempDir,
    pid: u32,
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

/// A running etcd: one member, or a cluster.
pub struct EtcdServer {
    pub members: Vec<EtcdMember>,
}

/// Options for a registry or admin of `name` on `endpoints` as `instance` (`host:port`), with a
/// 3 s lease TTL.
pub fn opts(endpoints: &str, name: &str, instance: &str) -> leafctl::worker::EtcdOptions {
    let mut o = leafctl::worker::EtcdOptions::new(endpoints, name, instance.parse().unwrap());
    o.lease_ttl = Duration::from_secs(3);
    o
}

fn check_installed() {
    assert!(
        Path::new(ETCD).exists() && Path::new(ETCDCTL).exists(),
        "{ETCD} or {ETCDCTL} is missing: install Debian's etcd-server and etcd-client (scripts/test does)"
    );
}

impl EtcdMember {
    fn spawn(
        place: &Place,
        name: &str,
        client_port: u16,
        peer_port: u16,
        initial_cluster: &str,
        tls: Option<&Certs>,
    ) -> EtcdMember {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let (client, peer) = (place.hostport(client_port), place.hostport(peer_port));
        let mut args = vec![
            format!("--name={name}"),
            format!("--data-dir={}", data.display()),
            format!("--listen-client-urls={scheme}://{client}"),
            format!("--advertise-client-urls={scheme}://{client}"),
            format!("--listen-peer-urls=http://{peer}"),
            format!("--initial-advertise-peer-urls=http://{peer}"),
            format!("--initial-cluster={initial_cluster}"),
            "--initial-cluster-state=new".to_string(),
            "--initial-cluster-token=leafctl-test".to_string(),
            "--logger=zap".to_string(),
            "--log-level=warn".to_string(),
        ];
        if let Some(c) = tls {
            args.push(format!("--cert-file={}", c.cert.display()));
            args.push(format!("--key-file={}", c.key.display()));
        }
        let (child, stdin, pid) = under_watchdog(
            place,
            &format!(
                "cd '{d}' && {ETCD} {args} >'{d}/out.log' 2>&1",
                d = dir.path().display(),
                args = args.join(" "),
            ),
            "etcd",
        );
        EtcdMember {
            name: name.to_string(),
            place: place.clone(),
            scheme,
            ca_file: tls.map(|c| c.ca.clone()),
            client_port,
            peer_port,
            dir,
            pid,
            watchdog: Mutex::new(Some((child, stdin))),
        }
    }

    /// `http://IP:PORT` (`https://` for a TLS member).
    pub fn endpoint(&self) -> String {
        format!(
            "{}://{}",
            self.scheme,
            self.place.hostport(self.client_port)
        )
    }

    /// The member's own output, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out.log")).unwrap_or_default()
    }

    pub fn dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// True when `etcdctl endpoint health` (run at the member's place) says so.
    pub fn healthy(&self) -> bool {
        let mut args = vec!["endpoint".to_string(), "health".to_string()];
        if let Some(ca) = &self.ca_file {
            args.push(format!("--cacert={}", ca.display()));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        etcdctl_at(&self.place, &self.endpoint(), &args, None).is_ok()
    }

    /// `etcdctl endpoint status` of this member, asked at its place: (its id, its leader's id).
    fn status(&self) -> Option<(u64, u64)> {
        let out = etcdctl_at(
            &self.place,
            &self.endpoint(),
            &["endpoint", "status", "-w", "json"],
            None,
        )
        .ok()?;
        let status: serde_json::Value = serde_json::from_str(&out).ok()?;
        let entry = status.as_array()?.first()?;
        Some((
            entry["Status"]["header"]["member_id"].as_u64()?,
            entry["Status"]["leader"].as_u64()?,
        ))
    }

    /// Freezes the member (SIGSTOP): connections stay open but nothing answers.
    pub fn pause(&self) {
        signal(self.pid, libc::SIGSTOP);
    }

    /// Thaws a paused member (SIGCONT).
    pub fn resume(&self) {
        signal(self.pid, libc::SIGCONT);
    }

    /// Kills the member (SIGKILL) and waits until its port is closed.
    pub fn kill(&self) {
        let taken = self.watchdog.lock().unwrap().take();
        if let Some((mut child, stdin)) = taken {
            drop(stdin);
            let _ = child.wait();
        }
        wait_until(Duration::from_secs(30), || {
            !self.place.listening(self.client_port)
        });
    }

    /// True while the process runs.
    pub fn running(&self) -> bool {
        self.watchdog.lock().unwrap().is_some()
    }
}

impl Drop for EtcdMember {
    fn drop(&mut self) {
        self.kill();
    }
}

impl EtcdServer {
    /// The single-member server shared by every test in this binary (started on first use).
    pub fn shared() -> &'static EtcdServer {
        static SHARED: OnceLock<EtcdServer> = OnceLock::new();
        SHARED.get_or_init(EtcdServer::start)
    }

    /// A single member of its own, for tests that stop, pause or kill it.
    pub fn start() -> EtcdServer {
        EtcdServer::single(None)
    }

    /// A single member serving clients over TLS with a certificate from `certs`.
    pub fn start_tls(certs: &Certs) -> EtcdServer {
        EtcdServer::single(Some(certs))
    }

    fn single(tls: Option<&Certs>) -> EtcdServer {
        check_installed();
        // A port found free may be taken before etcd binds it (another test's outgoing
        // connection gets an ephemeral port too): then start again on fresh ports.
        for _ in 0..3 {
            let (client, peer) = (free_port(), free_port());
            let member = EtcdMember::spawn(
                &Place::local(),
                "e1",
                client,
                peer,
                &format!("e1=http://127.0.0.1:{peer}"),
                tls,
            );
            let up = wait_until(Duration::from_secs(60), || {
                member.healthy() || member.log().contains("address already in use")
            });
            if up && member.log().contains("address already in use") {
                continue;
            }
            let server = EtcdServer {
                members: vec![member],
            };
            server.wait_healthy();
            return server;
        }
        panic!("etcd found its ports taken three times in a row");
    }

    /// A cluster of `n` members on loopback.
    pub fn cluster(n: usize) -> EtcdServer {
        let local = Place::local();
        EtcdServer::cluster_at(&vec![&local; n])
    }

    /// A cluster with member `i` at `places[i]` (e.g. hosts of a private network).
    pub fn cluster_at(places: &[&Place]) -> EtcdServer {
        check_installed();
        let ports: Vec<(u16, u16)> = places.iter().map(|_| (free_port(), free_port())).collect();
        let initial = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("e{}=http://{}", i + 1, places[i].hostport(*peer)))
            .collect::<Vec<_>>()
            .join(",");
        let members = ports
            .iter()
            .enumerate()
            .map(|(i, (client, peer))| {
                EtcdMember::spawn(
                    places[i],
                    &format!("e{}", i + 1),
                    *client,
                    *peer,
                    &initial,
                    None,
                )
            })
            .collect();
        let server = EtcdServer { members };
        server.wait_healthy();
        server
    }

    fn wait_healthy(&self) {
        for m in &self.members {
            assert!(
                wait_until(Duration::from_secs(60), || m.healthy()),
                "etcd member {} did not become healthy on port {} within 60 s; log: {}",
                m.name,
                m.client_port,
                m.log()
            );
        }
    }

    /// All client endpoints, comma-separated.
    pub fn endpoints(&self) -> String {
        super::comma_list(self.members.iter().map(EtcdMember::endpoint))
    }

    /// The first member.
    pub fn first(&self) -> &EtcdMember {
        &self.members[0]
    }

    /// The member that is leader now (each running member asked at its own place).
    /// The election under load: after 3 s of it, kills the leader (noting when in `killed_at`),
    /// and after 8 s more sets `stop`.
    pub fn kill_leader_under_load(
        &self,
        killed_at: &std::sync::Mutex<Option<std::time::Instant>>,
        stop: &std::sync::atomic::AtomicBool,
    ) {
        std::thread::sleep(Duration::from_secs(3));
        let leader = self.leader().expect("a leader");
        eprintln!("killing leader {}", leader.name);
        leader.kill();
        *killed_at.lock().unwrap() = Some(std::time::Instant::now());
        std::thread::sleep(Duration::from_secs(8));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn leader(&self) -> Option<&EtcdMember> {
        self.members
            .iter()
            .filter(|m| m.running())
            .find(|m| m.status().is_some_and(|(id, leader)| id == leader))
    }

    /// Makes member `i` the leader (`etcdctl move-leader`, asked of the leader now) and waits
    /// until it leads.
    pub fn move_leader(&self, i: usize) {
        let target = &self.members[i];
        let (id, _) = target.status().expect("the member answers");
        let ok = wait_until(Duration::from_secs(30), || {
            let Some(leader) = self.leader() else {
                return false;
            };
            if leader.name == target.name {
                return true;
            }
            let _ = etcdctl_at(
                &leader.place,
                &leader.endpoint(),
                &["move-leader", &format!("{id:x}")],
                None,
            );
            self.leader().is_some_and(|l| l.name == target.name)
        });
        assert!(ok, "member {} did not become the leader", target.name);
    }

    /// Creates `root` with `password`, grants it the root role and enables authentication.
    pub fn enable_auth(&self, password: &str) {
        let (ep, at) = (self.endpoints(), &self.first().place);
        etcdctl_at(at, &ep, &["user", "add", &format!("root:{password}")], None).expect("user add");
        etcdctl_at(at, &ep, &["auth", "enable"], None).expect("auth enable");
    }

    /// `etcdctl get --prefix` as `key=value` lines (with `root:password` when auth is on).
    pub fn dump(&self, prefix: &str, auth: Option<&str>) -> String {
        etcdctl_at(
            &self.first().place,
            &self.endpoints(),
            &["get", "--prefix", prefix],
            auth,
        )
        .unwrap_or_default()
    }
}

/// A test CA and a server certificate for 127.0.0.1 signed by it (made with `openssl`).
pub struct Certs {
    pub dir: tempfile::TempDir,
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    pub fn new() -> Certs {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        let run = |args: &[&str]| {
            super::run_ok(
                Command::new("openssl")
                    .args(args)
                    .current_dir(d)
                    .stdin(Stdio::null()),
            );
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=leafctl test CA",
        ]);
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]);
        std::fs::write(
            d.join("ext.cnf"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .expect("ext.cnf");
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ]);
        Certs {
            ca: d.join("ca.crt"),
            cert: d.join("server.crt"),
            key: d.join("server.key"),
            dir,
        }
    }
}

/// Runs etcdctl (API v3) against `endpoints`; its stdout, or its stderr as the error.
pub fn etcdctl(endpoints: &str, args: &[&str], auth: Option<&str>) -> Result<String, String> {
    etcdctl_at(&Place::local(), endpoints, args, auth)
}

/// The same, run at `place` (in its network namespace).
pub fn etcdctl_at(
    place: &Place,
    endpoints: &str,
    args: &[&str],
    auth: Option<&str>,
) -> Result<String, String> {
    let mut cmd = place.command(ETCDCTL);
    cmd.env("ETCDCTL_API", "3")
        .arg(format!("--endpoints={endpoints}"))
        .arg("--dial-timeout=2s")
        .arg("--command-timeout=5s");
    if let Some(a) = auth {
        cmd.arg(format!("--user={a}"));
    }
    let out = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
