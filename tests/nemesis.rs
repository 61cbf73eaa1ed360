//! The nemesis (issue 28): every fault of the suite at once, drawn from a seed, against real
//! processes on a private network of namespaces (`support::netns`).
//!
//! Topology: three database hosts, each running a node of one Galera cluster and a member of
//! one registry ensemble (ZooKeeper, or etcd in the second run); three server hosts, each
//! running `leafctl serve --segment --snowflake` on a URL listing every Galera node (in its own
//! order) and the registry's hosts, with its wall clock read from a file (libfaketime) and its
//! link through this process (so it can be made lossy or slow). Clients on each server host ask
//! for segment and snowflake IDs without pause, and `leafctl next` runs beside them.
//!
//! A seeded schedule (`support::nemesis::schedule`) starts a fault every 0.5-4 s and heals it
//! 1-12 s later: SIGKILL and restart or SIGSTOP/SIGCONT of any server, Galera node or registry
//! member, a partition of any host, a lossy or slow link, a clock step forward or back, a Galera
//! node leaving and rejoining. Faults on different servers and on a server's process, link and
//! clock overlap; one fault at a time on the database side keeps both clusters' quorum.
//!
//! Afterwards the checker (`support::nemesis::check`) reads the whole history. A failure prints
//! the seed, the schedule, what was done when, and the history around each problem, with the
//! command that replays the schedule: `scripts/nemesis --registry zk --seed S --seconds N`.
//! The seed and length come from `LEAF_NEMESIS_SEED` and `LEAF_NEMESIS_SECONDS` (CI: fixed
//! seeds, 60 s). See RELIABILITY.md, "The nemesis".

mod support;

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use support::etcd::EtcdServer;
use support::faketime::ClockFile;
use support::fault::complete_ids;
use support::galera::Galera;
use support::mariadb::PASSWORD;
use support::nemesis::{
    Abilities, Fault, Mode, Outcome, Record, Rng, Silence, Slot, Source, Step, Verdict, check,
    kinds, schedule,
};
use support::netns::{Host, Net, Place};
use support::serve::{Server, http, signal};
use support::zookeeper::ZkEnsemble;
use support::{Sandbox, stderr, wait_until};

const TAG: &str = "nem";
const SEG: &str = "/api/segment/get/nem";
const SNOW: &str = "/api/snowflake/get/nem";
/// After the last fault heals, every server issues both kinds of ID again within this.
const RECOVERY_BOUND: Duration = Duration::from_secs(45);
/// A `leafctl next` run that has not ended after this is killed and reported.
const NEXT_BOUND: Duration = Duration::from_secs(40);
/// IDs per `next` run.
const NEXT_COUNT: usize = 200;

/// The registry the servers lease their worker ids from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Zk,
    Etcd,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Zk => "zk",
            Kind::Etcd => "etcd",
        }
    }
}

enum Ensemble {
    Zk(ZkEnsemble),
    Etcd(EtcdServer),
}

impl Ensemble {
    fn pause(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].pause(),
            Ensemble::Etcd(e) => e.members[i].pause(),
        }
    }

    fn resume(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].resume(),
            Ensemble::Etcd(e) => e.members[i].resume(),
        }
    }

    fn kill(&self, i: usize) {
        match self {
            Ensemble::Zk(z) => z.members[i].kill(),
            Ensemble::Etcd(_) => unreachable!("etcd members are not killed (see Abilities)"),
        }
    }

    fn restart(&self, i: usize) {
        if let Ensemble::Zk(z) = self {
            z.members[i].restart();
        }
    }
}

/// One `serve` and what restarts it.
struct Served {
    host: Host,
    sandbox: Sandbox,
    clock: ClockFile,
    args: Vec<String>,
    env: Vec<(String, String)>,
    server: Mutex<Option<Server>>,
    /// Where its clients send requests, and the incarnation answering there; None while down.
    at: Mutex<Option<(SocketAddr, u32)>>,
    incarnations: Mutex<u32>,
}

impl Served {
    fn command(&self) -> Command {
        let mut c = self.sandbox.leafctl_std();
        c.args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        self.clock.command(&c)
    }

    /// Starts the process (again), retrying while it refuses to start (a clock behind its last
    /// report exits with an error: that is recorded, and time heals it).
    fn start(&self, events: &Events) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match Server::try_start_at(&self.host, self.command()) {
                Ok(s) => {
                    let mut n = self.incarnations.lock().unwrap();
                    let incarnation = *n;
                    *n += 1;
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
    fn issuing(&self) -> bool {
        let Some((addr, _)) = *self.at.lock().unwrap() else {
            return false;
        };
        self.host.within(|| {
            [SEG, SNOW]
                .iter()
                .all(|p| http(addr, "GET", p, &[]).is_ok_and(|r| r.status == 200))
        })
    }

    fn kill(&self) {
        *self.at.lock().unwrap() = None;
        if let Some(mut s) = self.server.lock().unwrap().take() {
            s.kill();
        }
    }

    fn signal(&self, sig: i32) {
        if let Some(s) = self.server.lock().unwrap().as_ref() {
            signal(s.pid(), sig);
        }
    }
}

/// Stops the clients and kills every `serve` when dropped: the clients share the servers (an
/// `Arc`), so a panic in the test would otherwise leave both running after the test ends.
struct StopAll {
    stop: Arc<AtomicBool>,
    served: Arc<Vec<Served>>,
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
struct Events {
    started: Option<Instant>,
    lines: Mutex<Vec<(Duration, String)>>,
    silences: Mutex<Vec<Silence>>,
}

impl Events {
    fn now(&self) -> Duration {
        self.started.expect("started").elapsed()
    }

    fn note(&self, what: String) {
        let at = self.now();
        self.lines.lock().unwrap().push((at, what));
    }
}

struct Run {
    kind: Kind,
    seed: u64,
    seconds: u64,
}

impl Run {
    fn from_env(kind: Kind, seed: u64) -> Run {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
        Run {
            kind,
            seed: var("LEAF_NEMESIS_SEED").unwrap_or(seed),
            seconds: var("LEAF_NEMESIS_SECONDS").unwrap_or(60),
        }
    }

    fn replay(&self) -> String {
        format!(
            "scripts/nemesis --registry {} --seed {} --seconds {}",
            self.kind.name(),
            self.seed,
            self.seconds
        )
    }
}

/// Runs `cmd` at `place`; it must succeed.
fn ok_at(place: &Place, cmd: Command) {
    let out = place.wrap(&cmd).output().expect("run leafctl");
    assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
}

/// Everything a fault can reach.
struct World<'a> {
    servers: &'a [Served],
    galera: &'a Galera,
    ensemble: &'a Ensemble,
    db_hosts: &'a [Host],
    ev: &'a Events,
}

/// Applies `fault`, holds it, heals it; records both and any silence of a server.
fn apply(step: &Step, w: &World<'_>) {
    let World {
        servers,
        galera,
        ensemble,
        db_hosts,
        ev,
    } = *w;
    let began = ev.now();
    ev.note(format!("start {}", step.fault));
    let hold = || std::thread::sleep(step.hold);
    match step.fault {
        Fault::KillServer(i) => {
            servers[i].kill();
            hold();
            servers[i].start(ev);
        }
        Fault::PauseServer(i) => {
            servers[i].signal(libc::SIGSTOP);
            hold();
            servers[i].signal(libc::SIGCONT);
        }
        Fault::CutServer(i) => {
            servers[i].host.cut();
            hold();
            servers[i].host.heal();
        }
        Fault::LossyServer {
            server,
            loss,
            delay_ms,
        } => {
            servers[server]
                .host
                .degrade(loss, Duration::from_millis(delay_ms));
            hold();
            servers[server].host.restore();
        }
        Fault::SlowServer { server, delay_ms } => {
            servers[server]
                .host
                .degrade_inbound(0, Duration::from_millis(delay_ms));
            hold();
            servers[server].host.restore();
        }
        Fault::ClockStep { server, ms } => {
            servers[server].clock.set_ms(ms);
            hold();
            servers[server].clock.set_ms(0);
        }
        Fault::KillDb(i) => {
            galera.nodes[i].kill();
            hold();
            rejoin(galera, i, ev);
        }
        Fault::LeaveDb(i) => {
            galera.nodes[i].stop();
            hold();
            rejoin(galera, i, ev);
        }
        Fault::PauseDb(i) => {
            galera.nodes[i].pause();
            hold();
            galera.nodes[i].resume();
            wait_for_galera(galera, i);
        }
        Fault::KillRegistry(i) => {
            ensemble.kill(i);
            hold();
            ensemble.restart(i);
        }
        Fault::PauseRegistry(i) => {
            ensemble.pause(i);
            hold();
            ensemble.resume(i);
        }
        Fault::CutDbHost(i) => {
            db_hosts[i].cut();
            hold();
            db_hosts[i].heal();
            wait_for_galera(galera, i);
        }
    }
    ev.note(format!("healed {}", step.fault));
    if let Some(server) = step.fault.silences() {
        ev.silences.lock().unwrap().push(Silence {
            server,
            from: began,
            to: ev.now(),
        });
    }
}

/// Starts Galera node `i` again until it joins (a failed state transfer makes the joiner exit:
/// started again, as an operator would, up to three times).
fn rejoin(galera: &Galera, i: usize, ev: &Events) {
    if let Err(log) = galera.rejoin(i, 3) {
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "galera node {i} did not rejoin in three tries:\n{}",
            tail.join("\n")
        );
    }
    ev.note(format!("galera node {i} Synced again"));
}

/// Waits (bounded) until Galera node `i` is back in the primary component and Synced, so the
/// next fault on the database side does not take a second node from a cluster missing one.
fn wait_for_galera(galera: &Galera, i: usize) {
    let whole = wait_until(Duration::from_secs(90), || {
        galera.status(i, "wsrep_local_state_comment") == "Synced" && galera.size_seen_by(i) == 3
    });
    assert!(whole, "galera node {i} did not rejoin within 90 s");
}

/// The client loop of one server and mode: requests without pause (every 10th for 20 IDs), in
/// the server's namespace, for as long as `stop` is false (bounded in count).
fn client(
    served: Arc<Vec<Served>>,
    index: usize,
    mode: Mode,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<Record>> {
    std::thread::spawn(move || {
        served[index].host.enter();
        let path = match mode {
            Mode::Segment => SEG,
            Mode::Snowflake => SNOW,
        };
        let mut records = Vec::new();
        let mut n = 0u64;
        while !stop.load(Ordering::SeqCst) && records.len() < 400_000 {
            let Some((addr, incarnation)) = *served[index].at.lock().unwrap() else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            n += 1;
            let p = if n.is_multiple_of(10) {
                format!("{path}?count=20")
            } else {
                path.to_string()
            };
            let sent = started.elapsed();
            let outcome = match http(addr, "GET", &p, &[]) {
                Ok(r) if r.status == 200 => Outcome::Ids(support::parse_ids(r.body.as_bytes())),
                Ok(r) => Outcome::Refused {
                    status: r.status,
                    code: serde_json::from_str::<serde_json::Value>(&r.body)
                        .ok()
                        .and_then(|j| j["code"].as_str().map(str::to_string))
                        .unwrap_or_else(|| "not-json".into()),
                },
                Err(e) => Outcome::NoAnswer(e.kind().to_string()),
            };
            let done = started.elapsed();
            if matches!(outcome, Outcome::NoAnswer(_)) {
                // A server down: do not spin on refused connections.
                std::thread::sleep(Duration::from_millis(20));
            }
            records.push(Record {
                source: Source::Server { index, incarnation },
                mode,
                sent,
                done,
                outcome,
            });
        }
        records
    })
}

/// `leafctl next nem -n 200` every 1-3 s from a server host in turn, each run bounded.
fn next_runs(
    served: Arc<Vec<Served>>,
    url: String,
    seed: u64,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> JoinHandle<Vec<Record>> {
    std::thread::spawn(move || {
        let mut rng = Rng::new(seed ^ 0x6E65_7874);
        let sb = Sandbox::new();
        let mut records = Vec::new();
        let mut run = 0u32;
        while !stop.load(Ordering::SeqCst) && run < 10_000 {
            let host = &served[run as usize % served.len()].host;
            let mut c = sb.leafctl_std();
            c.env("LEAF_DB", &url)
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .args(["next", TAG, "-n", &NEXT_COUNT.to_string()]);
            let mut c = host.wrap(&c);
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let sent = started.elapsed();
            let child = c.spawn().expect("spawn leafctl next");
            let out = bounded_output(child, NEXT_BOUND);
            records.push(Record {
                source: Source::Next { run },
                mode: Mode::Segment,
                sent,
                done: started.elapsed(),
                outcome: Outcome::Exited {
                    code: out.0,
                    ids: complete_ids(&out.1),
                    wanted: NEXT_COUNT,
                    stderr: String::from_utf8_lossy(&out.2).into_owned(),
                },
            });
            run += 1;
            std::thread::sleep(Duration::from_millis(rng.range(1_000, 3_000)));
        }
        records
    })
}

/// The exit code (None: killed after `limit`), stdout and stderr of `child`.
fn bounded_output(
    mut child: std::process::Child,
    limit: Duration,
) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    use std::io::Read;
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let e = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + limit;
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        code,
        o.join().unwrap_or_default(),
        e.join().unwrap_or_default(),
    )
}

/// Runs one schedule end to end and returns the checker's verdict (after printing a summary).
fn nemesis(run: &Run) {
    let net = Net::new();
    let db_hosts = [net.host(), net.host(), net.host()];
    let server_hosts = [
        net.impaired_host(),
        net.impaired_host(),
        net.impaired_host(),
    ];
    let places: Vec<&Place> = db_hosts.iter().map(|h| &h.place).collect();
    let galera = Galera::start_at(&places);
    let ensemble = match run.kind {
        Kind::Zk => Ensemble::Zk(ZkEnsemble::start_at(&[places[0], places[1], places[2]])),
        Kind::Etcd => Ensemble::Etcd(EtcdServer::cluster_at(&places)),
    };
    let db = galera.nodes[0].fresh_db();
    let url_from = |first: usize| galera.url_list(&[first, (first + 1) % 3, (first + 2) % 3], &db);
    let setup = Sandbox::new();
    let mut c = setup.leafctl_std();
    c.env("LEAF_DB", url_from(0))
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["db", "init"]);
    ok_at(&server_hosts[0], c);
    let mut c = setup.leafctl_std();
    c.env("LEAF_DB", url_from(0))
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["tag", "add", TAG, "--step", "200"]);
    ok_at(&server_hosts[0], c);

    let (registry_flag, registry_env) = match &ensemble {
        Ensemble::Zk(z) => (
            vec!["--zk".to_string(), z.hosts()],
            ("LEAF_ZK_SESSION_TIMEOUT_MS", "4000"),
        ),
        Ensemble::Etcd(e) => (
            vec!["--etcd".to_string(), e.endpoints()],
            ("LEAF_ETCD_LEASE_TTL_MS", "3000"),
        ),
    };
    let served: Arc<Vec<Served>> = Arc::new(
        server_hosts
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let sandbox = Sandbox::new();
                let clock = ClockFile::new(sandbox.path());
                let mut args: Vec<String> = ["serve", "--segment", "--snowflake", "--name", "nem"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                args.extend(registry_flag.iter().cloned());
                Served {
                    host: host.clone(),
                    sandbox,
                    clock,
                    args,
                    env: vec![
                        ("LEAF_DB".into(), url_from(i)),
                        ("LEAF_DB_PASSWORD".into(), PASSWORD.into()),
                        (registry_env.0.into(), registry_env.1.into()),
                    ],
                    server: Mutex::new(None),
                    at: Mutex::new(None),
                    incarnations: Mutex::new(0),
                }
            })
            .collect(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_all = StopAll {
        stop: stop.clone(),
        served: served.clone(),
    };
    let mut ev = Events::default();
    let started = Instant::now();
    ev.started = Some(started);
    for s in served.iter() {
        s.start(&ev);
    }
    let steps = schedule(
        run.seed,
        run.seconds,
        Abilities {
            registry_restarts: run.kind == Kind::Zk,
        },
    );
    let plan: String = steps.iter().map(|s| format!("  {s}\n")).collect();

    let mut clients = Vec::new();
    for i in 0..served.len() {
        for mode in [Mode::Segment, Mode::Snowflake] {
            clients.push(client(served.clone(), i, mode, stop.clone(), started));
        }
    }
    clients.push(next_runs(
        served.clone(),
        url_from(1),
        run.seed,
        stop.clone(),
        started,
    ));
    // Every server issues before the first fault.
    for (i, s) in served.iter().enumerate() {
        assert!(
            wait_until(Duration::from_secs(60), || s.issuing()),
            "serve {i} did not issue within 60 s of its start"
        );
    }
    let offset = started.elapsed();

    // The schedule: each step on a thread of its own, once its slot is free.
    let slots: Vec<(Slot, Arc<Mutex<()>>)> = {
        let mut v: Vec<(Slot, Arc<Mutex<()>>)> = Vec::new();
        for s in &steps {
            if !v.iter().any(|(k, _)| *k == s.fault.slot()) {
                v.push((s.fault.slot(), Arc::new(Mutex::new(()))));
            }
        }
        v
    };
    let world = World {
        servers: &served,
        galera: &galera,
        ensemble: &ensemble,
        db_hosts: &db_hosts,
        ev: &ev,
    };
    let world = &world;
    let panicked = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for step in &steps {
            let due = offset + step.at;
            std::thread::sleep(due.saturating_sub(started.elapsed()));
            let lock = slots
                .iter()
                .find(|(k, _)| *k == step.fault.slot())
                .map(|(_, l)| l.clone())
                .expect("a slot");
            handles.push(scope.spawn(move || {
                let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
                apply(step, world);
            }));
        }
        handles
            .into_iter()
            .filter_map(|h| h.join().err())
            .map(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            })
            .collect::<Vec<String>>()
    });
    let healed = started.elapsed();
    ev.note("every fault healed".into());

    // Every server issues both kinds again within the bound.
    let mut recovery = Duration::ZERO;
    let mut problems: Vec<String> = panicked
        .iter()
        .map(|p| format!("applying a fault failed: {p}"))
        .collect();
    for (i, s) in served.iter().enumerate() {
        let ok = wait_until(RECOVERY_BOUND, || s.issuing());
        let took = started.elapsed() - healed;
        recovery = recovery.max(took);
        if !ok {
            let log = s.server.lock().unwrap().as_ref().map(Server::stderr);
            problems.push(format!(
                "serve {i} was not issuing both kinds {RECOVERY_BOUND:?} after the last heal; \
                 its log:\n{}",
                log.unwrap_or_default()
            ));
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut history: Vec<Record> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("client thread"))
        .collect();
    history.sort_by_key(|r| (r.sent, r.done));
    for (i, s) in served.iter().enumerate() {
        *s.at.lock().unwrap() = None;
        if let Some(server) = s.server.lock().unwrap().take() {
            let (status, log) = server.terminate();
            if !status.success() {
                problems.push(format!("serve {i} exited with {status} on SIGTERM:\n{log}"));
            }
        }
    }
    let silences = ev.silences.lock().unwrap().clone();
    let mut verdict: Verdict = check(&history, &silences);
    verdict.problems.extend(problems);

    let count = |m| verdict.ids.get(&m).copied().unwrap_or(0);
    let next_runs = history
        .iter()
        .filter(|r| matches!(r.source, Source::Next { .. }))
        .count();
    // Why `next` runs failed (each must have said so): the error line, with a count.
    let mut next_errors: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &history {
        if let Outcome::Exited {
            code: Some(c),
            stderr,
            ..
        } = &r.outcome
            && *c != 0
        {
            let line = stderr
                .lines()
                .find(|l| l.starts_with("error:"))
                .unwrap_or("")
                .to_string();
            *next_errors.entry(line).or_default() += 1;
        }
    }
    let summary = serde_json::json!({
        "registry": run.kind.name(),
        "seed": run.seed,
        "seconds": run.seconds,
        "faults": steps.len(),
        "kinds": kinds(&steps),
        "segment_ids": count(Mode::Segment),
        "snowflake_ids": count(Mode::Snowflake),
        "answers": verdict.answers,
        "next_runs": next_runs,
        "next_errors": next_errors,
        "refusals": verdict.refusals,
        "no_answer": verdict.no_answer,
        "recovered_ms": recovery.as_millis() as u64,
        "problems": verdict.problems.len(),
    });
    eprintln!("NEMESIS {summary}");
    if !verdict.problems.is_empty() {
        let done: String = ev
            .lines
            .lock()
            .unwrap()
            .iter()
            .map(|(t, what)| format!("  {:>7.2}s {what}\n", t.as_secs_f64()))
            .collect();
        let shown: Vec<&String> = verdict.problems.iter().take(8).collect();
        panic!(
            "the nemesis found {} problem(s) with seed {} ({} s, {} registry).\n\
             replay: {}\n\nschedule (after a {:.1} s warm-up):\n{plan}\nwhat was done:\n{done}\n\
             problems (the first eight):\n{}",
            verdict.problems.len(),
            run.seed,
            run.seconds,
            run.kind.name(),
            run.replay(),
            offset.as_secs_f64(),
            shown.iter().map(|p| format!("- {p}\n")).collect::<String>()
        );
    }
    drop(galera);
    drop(ensemble);
    drop(net);
}

/// One topology at a time: two on two cores would measure the machine, not leafctl.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// CI's schedule on ZooKeeper: 60 s of faults on a fixed seed (`scripts/nemesis` for others).
#[test]
fn nemesis_on_galera_and_a_zookeeper_ensemble() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    nemesis(&Run::from_env(Kind::Zk, 1));
}

/// The same over an etcd cluster.
#[test]
fn nemesis_on_galera_and_an_etcd_cluster() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    nemesis(&Run::from_env(Kind::Etcd, 2));
}

mod checker {
    //! The checker on made-up histories: each rule can fail.
    use super::support::nemesis::*;
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn answer(index: usize, incarnation: u32, mode: Mode, at: u64, ids: &[u64]) -> Record {
        Record {
            source: Source::Server { index, incarnation },
            mode,
            sent: ms(at),
            done: ms(at + 5),
            outcome: Outcome::Ids(ids.to_vec()),
        }
    }

    fn clean() -> Vec<Record> {
        vec![
            answer(0, 0, Mode::Segment, 0, &[1, 2]),
            answer(1, 0, Mode::Segment, 1, &[201]),
            answer(0, 0, Mode::Snowflake, 2, &[10 << 22]),
            answer(0, 0, Mode::Segment, 10, &[3]),
            answer(1, 0, Mode::Segment, 11, &[202, 203]),
            answer(0, 1, Mode::Snowflake, 20, &[11 << 22]),
        ]
    }

    #[test]
    fn a_clean_history_passes_and_is_counted() {
        let v = check(&clean(), &[]);
        assert!(v.problems.is_empty(), "{:?}", v.problems);
        assert_eq!(v.ids[&Mode::Segment], 6);
        assert_eq!(v.ids[&Mode::Snowflake], 2);
        assert_eq!(v.answers, 6);
    }

    #[test]
    fn an_id_twice_is_found_with_the_history_around_it() {
        let mut h = clean();
        h.push(answer(2, 0, Mode::Segment, 30, &[202]));
        let v = check(&h, &[]);
        assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
        assert!(v.problems[0].contains("Segment ID 202 answered twice"));
        assert!(v.problems[0].contains(">>"), "{}", v.problems[0]);
        // The same number in the other mode is not a duplicate.
        let mut h = clean();
        h.push(answer(2, 0, Mode::Snowflake, 30, &[202]));
        assert!(check(&h, &[]).problems.is_empty());
        // A `next` run counts with the servers.
        let mut h = clean();
        h.push(Record {
            source: Source::Next { run: 0 },
            mode: Mode::Segment,
            sent: ms(40),
            done: ms(50),
            outcome: Outcome::Exited {
                code: Some(0),
                ids: vec![3],
                wanted: 1,
                stderr: String::new(),
            },
        });
        assert!(check(&h, &[]).problems[0].contains("ID 3 answered twice"));
    }

    #[test]
    fn ids_going_down_within_one_incarnation_are_found_but_not_across_a_restart() {
        let mut h = clean();
        h.push(answer(0, 1, Mode::Snowflake, 30, &[(11 << 22) - 1]));
        let v = check(&h, &[]);
        assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
        assert!(v.problems[0].contains("not ascending"));
        // Overlapping requests may be answered in either order.
        let mut h = clean();
        h.push(Record {
            sent: ms(19),
            done: ms(40),
            ..answer(0, 1, Mode::Snowflake, 19, &[(11 << 22) - 5])
        });
        assert!(check(&h, &[]).problems.is_empty());
        // A new incarnation starts its own sequence (its uniqueness is checked above).
        let mut h = clean();
        h.push(answer(0, 2, Mode::Snowflake, 30, &[9 << 22]));
        assert!(check(&h, &[]).problems.is_empty());
        // Segment IDs may go down: a batch past the buffer is claimed above it.
        let mut h = clean();
        h.push(answer(0, 0, Mode::Segment, 30, &[0]));
        assert!(check(&h, &[]).problems.is_empty());
    }

    #[test]
    fn unknown_refusals_and_silence_while_running_are_found() {
        let refused = |mode, status, code: &str| Record {
            outcome: Outcome::Refused {
                status,
                code: code.into(),
            },
            ..answer(0, 0, mode, 30, &[])
        };
        for (mode, status, code, ok) in [
            (Mode::Segment, 503, "not_ready", true),
            (Mode::Snowflake, 503, "lease_lost", true),
            (Mode::Snowflake, 503, "clock_backwards", true),
            (Mode::Segment, 503, "lease_lost", false),
            (Mode::Segment, 500, "internal", false),
            (Mode::Snowflake, 503, "not-json", false),
        ] {
            let mut h = clean();
            h.push(refused(mode, status, code));
            let v = check(&h, &[]);
            assert_eq!(v.problems.is_empty(), ok, "{code}: {:?}", v.problems);
        }
        let mut h = clean();
        h.push(Record {
            outcome: Outcome::NoAnswer("refused".into()),
            ..answer(0, 0, Mode::Segment, 30, &[])
        });
        assert_eq!(check(&h, &[]).problems.len(), 1);
        let down = Silence {
            server: 0,
            from: ms(25),
            to: ms(28),
        };
        assert!(check(&h, &[down]).problems.is_empty());
        let other = Silence { server: 1, ..down };
        assert_eq!(check(&h, &[other]).problems.len(), 1);
    }

    #[test]
    fn next_runs_must_end_with_their_ids_or_an_error_message() {
        let run = |code, ids: Vec<u64>, stderr: &str| Record {
            source: Source::Next { run: 1 },
            mode: Mode::Segment,
            sent: ms(60),
            done: ms(70),
            outcome: Outcome::Exited {
                code,
                ids,
                wanted: 2,
                stderr: stderr.into(),
            },
        };
        for (r, ok) in [
            (run(Some(0), vec![500, 501], ""), true),
            (run(Some(0), vec![500], ""), false),
            (
                run(Some(3), vec![500], "error: the database did not answer\n"),
                true,
            ),
            (run(Some(3), vec![], "thread panicked"), false),
            (run(None, vec![], ""), false),
        ] {
            let mut h = clean();
            h.push(r);
            assert_eq!(check(&h, &[]).problems.is_empty(), ok);
        }
    }

    #[test]
    fn one_seed_one_schedule_and_every_fault_is_drawn() {
        let can = Abilities {
            registry_restarts: true,
        };
        assert_eq!(schedule(7, 60, can), schedule(7, 60, can));
        assert_ne!(schedule(7, 60, can), schedule(8, 60, can));
        let s = schedule(1, 60, can);
        assert!(s.len() >= 10, "{} faults in 60 s", s.len());
        assert!(s.iter().all(|x| x.at < Duration::from_secs(60)));
        // Overlap: some fault starts before an earlier one heals.
        assert!(s.windows(2).any(|w| w[1].at < w[0].at + w[0].hold));
        let all: std::collections::BTreeSet<&str> = (0..20)
            .flat_map(|seed| schedule(seed, 60, can))
            .map(|x| x.fault.kind())
            .collect();
        assert_eq!(all.len(), 13, "{all:?}");
        let etcd = Abilities {
            registry_restarts: false,
        };
        assert!(
            (0..20)
                .flat_map(|seed| schedule(seed, 60, etcd))
                .all(|x| x.fault.kind() != "kill registry member")
        );
    }
}
