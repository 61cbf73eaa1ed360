//! What a nemesis run is made of: the registry kind and ensemble, each `serve` with what restarts
//! it and the lives it ran ([`Served`]), the events recorded as the run goes ([`Events`]), and
//! everything a fault can reach ([`World`], [`RegionWorld`]).

use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clients::{outcome_of, read_and_drop};
use crate::support::Sandbox;
use crate::support::etcd::EtcdServer;
use crate::support::faketime::ClockFile;
use crate::support::galera::Galera;
use crate::support::nemesis::{Life, Mode, Outcome, Record, Silence, Source};
use crate::support::netns::Host;
use crate::support::regions::Deployment;
use crate::support::serve::{Server, http, signal};
use crate::support::zookeeper::ZkEnsemble;
use crate::{SEG, SNOW};

/// The registry the servers lease their worker ids from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Zk,
    Etcd,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Zk => "zk",
            Kind::Etcd => "etcd",
        }
    }
}

pub enum Ensemble {
    Zk(ZkEnsemble),
    Etcd(EtcdServer),
}

impl Ensemble {
    pub fn pause(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].pause(),
            Ensemble::Etcd(e) => e.members[i].pause(),
        }
    }

    pub fn resume(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].resume(),
            Ensemble::Etcd(e) => e.members[i].resume(),
        }
    }

    pub fn kill(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].kill(),
            Ensemble::Etcd(_) => unreachable!("etcd members are not killed (see Abilities)"),
        }
    }

    pub fn restart(&self, i: usize) {
        if let Ensemble::Zk(z) = self {
            z.members[i].restart();
        }
    }
}

/// One `serve` and what restarts it.
pub struct Served {
    pub index: usize,
    /// When the run started (the history's times are since then).
    pub started: Instant,
    pub host: Host,
    pub sandbox: Sandbox,
    pub clock: ClockFile,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub server: Mutex<Option<Server>>,
    /// Where its clients send requests, and the incarnation answering there; None while down.
    pub at: Mutex<Option<(SocketAddr, u32)>>,
    pub incarnations: Mutex<u32>,
    /// `--instance`: an `ip:port` string, new at each restart under a new identity.
    pub identity: Mutex<String>,
    /// Every process it ran, start to end.
    pub lives: Mutex<Vec<Life>>,
}

/// The `n`-th identity of a run (a pod's `ip:port`; a string in the registry, never dialled).
pub fn identity(n: u32) -> String {
    format!("198.19.{}.{}:8080", n / 250, n % 250 + 1)
}

impl Served {
    pub fn command(&self) -> Command {
        let mut c = self.sandbox.leafctl_std();
        c.args(&self.args);
        c.args(["--instance", self.identity.lock().unwrap().as_str()]);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        self.clock.command(&c)
    }

    /// Starts the process (again), retrying while it refuses to start (a clock behind its last
    /// report exits with an error: that is recorded, and time heals it).
    pub fn start(&self, events: &Events) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let from = self.started.elapsed();
            match Server::try_start_at(&self.host, self.command()) {
                Ok(s) => {
                    let mut n = self.incarnations.lock().unwrap();
                    let incarnation = *n;
                    *n += 1;
                    self.lives.lock().unwrap().push(Life {
                        server: self.index,
                        incarnation,
                        identity: self.identity.lock().unwrap().clone(),
                        from,
                        to: None,
                    });
                    *self.at.lock().unwrap() = Some((s.addr, incarnation));
                    *self.server.lock().unwrap() = Some(s);
                    return;
                }
                Err(e) => {
                    let first = e.lines().find(|l| l.contains("error")).unwrap_or(&e);
                    events.note(format!("serve refused to start: {first}"));
                    assert!(
                        e.contains("error"),
                        "serve exited without an error message: {e}"
                    );
                    assert!(Instant::now() < deadline, "serve did not start: {e}");
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }

    /// True when the process answers both kinds of ID (asked from its host).
    pub fn issuing(&self) -> bool {
        let Some((addr, _)) = *self.at.lock().unwrap() else {
            return false;
        };
        self.host.within(|| {
            [SEG, SNOW]
                .iter()
                .all(|p| http(addr, "GET", p, &[]).is_ok_and(|r| r.status == 200))
        })
    }

    pub fn kill(&self) {
        *self.at.lock().unwrap() = None;
        if let Some(mut s) = self.server.lock().unwrap().take() {
            s.kill();
            self.ended();
        }
    }

    /// Records the end of the current process's life.
    pub fn ended(&self) {
        let now = self.started.elapsed();
        if let Some(l) = self.lives.lock().unwrap().last_mut()
            && l.to.is_none()
        {
            l.to = Some(now);
        }
    }

    /// SIGTERM and wait for the exit (bounded; a server that does not exit is killed); a
    /// non-zero exit is a problem. None when no process was running.
    pub fn stop_gracefully(&self) -> Option<Result<(), String>> {
        *self.at.lock().unwrap() = None;
        let server = self.server.lock().unwrap().take()?;
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.terminate()));
        self.ended();
        Some(match ended {
            Ok((status, _)) if status.success() => Ok(()),
            Ok((status, log)) => Err(format!(
                "serve {} exited with {status} on SIGTERM:\n{log}",
                self.index
            )),
            Err(_) => Err(format!(
                "serve {} did not exit within 20 s of SIGTERM (killed)",
                self.index
            )),
        })
    }

    /// One request for `count` IDs of `tag` (a client's, from the server's host); with
    /// `drop_after`, the client closes the connection after reading that many bytes of the
    /// answer (0: right after sending). None while the server is down.
    pub fn ask(&self, tag: &'static str, count: u64, drop_after: Option<u64>) -> Option<Record> {
        let (addr, incarnation) = (*self.at.lock().unwrap())?;
        let path = format!("/api/segment/get/{tag}?count={count}");
        let sent = self.started.elapsed();
        let outcome = self.host.within(|| match drop_after {
            None => outcome_of(http(addr, "GET", &path, &[])),
            // An answer short enough to be read whole before the drop is a complete answer.
            Some(n) => match read_and_drop(addr, &path, n) {
                ids if ids.len() as u64 == count => Outcome::Ids(ids),
                ids => Outcome::Dropped(ids),
            },
        });
        Some(Record {
            source: Source::Server {
                index: self.index,
                incarnation,
            },
            mode: Mode::Segment,
            tag,
            count,
            sent,
            done: self.started.elapsed(),
            outcome,
        })
    }

    pub fn signal(&self, sig: i32) {
        if let Some(s) = self.server.lock().unwrap().as_ref() {
            signal(s.pid(), sig);
        }
    }
}

/// Stops the clients and kills every `serve` when dropped: the clients share the servers (an
/// `Arc`), so a panic in the test would otherwise leave both running after the test ends.
pub struct StopAll {
    pub stop: Arc<AtomicBool>,
    pub served: Arc<Vec<Served>>,
}

impl Drop for StopAll {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for s in self.served.iter() {
            s.kill();
        }
    }
}

/// What the nemesis did, when (since the start of the run).
#[derive(Default)]
pub struct Events {
    pub started: Option<Instant>,
    pub lines: Mutex<Vec<(Duration, String)>>,
    pub silences: Mutex<Vec<Silence>>,
    /// Servers whose lease a fault could take while their process ran on.
    pub disturbed: Mutex<Vec<Silence>>,
    /// Faults on registry members, start to heal.
    pub registry_faults: Mutex<Vec<(Duration, Duration)>>,
    /// When the operator removed or added a tag.
    pub tag_changes: Mutex<Vec<(Duration, &'static str)>>,
    /// The answers to the schedule's batches.
    pub records: Mutex<Vec<Record>>,
    /// What went wrong while applying a step (beside the history's rules).
    pub problems: Mutex<Vec<String>>,
    /// Identities handed out so far.
    pub identities: std::sync::atomic::AtomicU32,
}

impl Events {
    pub fn now(&self) -> Duration {
        self.started.expect("started").elapsed()
    }

    pub fn note(&self, what: String) {
        let at = self.now();
        self.lines.lock().unwrap().push((at, what));
    }
}

/// Everything a fault can reach.
pub struct World<'a> {
    pub servers: &'a [Served],
    pub galera: &'a Galera,
    pub ensemble: &'a Ensemble,
    pub db_hosts: &'a [Host],
    pub ev: &'a Events,
    /// The operator's host (never cut off) and the database URL it uses.
    pub ops: &'a Host,
    pub url: &'a str,
}

/// Everything a fault of the multi-region run can reach.
pub struct RegionWorld<'a> {
    pub servers: &'a [Served],
    pub deployment: &'a Deployment,
    pub ev: &'a Events,
}
