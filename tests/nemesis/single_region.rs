//! The single-region run end to end ([`nemesis`]): three database hosts running Galera and a
//! registry ensemble, three servers on impaired links, the schedule applied, then the checker's
//! verdict and the summary line.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::clients::{cache_sampler, client, next_runs, workers_sampler};
use crate::ending::{AfterHeal, after_heal, problems_by_rule, seen_by, shown, stop_all_gracefully};
use crate::faults::{apply, run_schedule};
use crate::support;
use crate::support::etcd::EtcdServer;
use crate::support::faketime::ClockFile;
use crate::support::galera::Galera;
use crate::support::mariadb::PASSWORD;
use crate::support::nemesis::{
    ADDED_AT_START, Abilities, BATCH_TAG, CacheSample, Mode, Outcome, Seen, Source, TAGS, Verdict,
    WORKER_IDS, check, kinds, schedule,
};
use crate::support::netns::{Net, Place};
use crate::support::zookeeper::ZkEnsemble;
use crate::support::{Sandbox, wait_until};
use crate::world::{Ensemble, Events, Kind, Served, StopAll, World, identity};
use crate::{LAYOUT, PROBE_TAG};

pub struct Run {
    pub kind: Kind,
    pub seed: u64,
    pub seconds: u64,
}

impl Run {
    pub fn from_env(kind: Kind, seed: u64) -> Run {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
        Run {
            kind,
            seed: var("LEAF_NEMESIS_SEED").unwrap_or(seed),
            seconds: var("LEAF_NEMESIS_SECONDS").unwrap_or(60),
        }
    }

    pub fn replay(&self) -> String {
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
    support::run_ok(place.wrap(&cmd));
}

/// Runs one schedule end to end and returns the checker's verdict (after printing a summary).
pub fn nemesis(run: &Run) {
    let net = Net::new();
    let db_hosts = [net.host(), net.host(), net.host()];
    let server_hosts = [
        net.impaired_host(),
        net.impaired_host(),
        net.impaired_host(),
    ];
    // The operator's host: tag commands and registry listings, never cut off.
    let ops = net.host();
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
    for tag in TAGS[..ADDED_AT_START]
        .iter()
        .chain([&PROBE_TAG, &TAGS[BATCH_TAG]])
    {
        let mut c = setup.leafctl_std();
        c.env("LEAF_DB", url_from(0))
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args([
                "tag",
                "add",
                tag,
                "--step",
                match *tag {
                    t if t == TAGS[0] => "200",
                    t if t == TAGS[BATCH_TAG] => "1000",
                    _ => "100",
                },
            ]);
        ok_at(&server_hosts[0], c);
    }

    // The fence: the session timeout or lease TTL, plus slack for the registry's expiry check.
    let (registry_flag, registry_env, fence) = match &ensemble {
        Ensemble::Zk(z) => (
            vec!["--zk".to_string(), z.hosts()],
            ("LEAF_ZK_SESSION_TIMEOUT_MS", "4000"),
            Duration::from_secs(4 + 3),
        ),
        Ensemble::Etcd(e) => (
            vec!["--etcd".to_string(), e.endpoints()],
            ("LEAF_ETCD_LEASE_TTL_MS", "3000"),
            Duration::from_secs(3 + 3),
        ),
    };
    let started = Instant::now();
    let served: Arc<Vec<Served>> = Arc::new(
        server_hosts
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let sandbox = Sandbox::new();
                let clock = ClockFile::new(sandbox.path());
                let mut args: Vec<String> = [
                    "serve",
                    "--segment",
                    "--snowflake",
                    "--name",
                    "nem",
                    "--layout",
                    LAYOUT,
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                args.extend(registry_flag.iter().cloned());
                Served {
                    index: i,
                    started,
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
                    identity: Mutex::new(identity(i as u32)),
                    lives: Mutex::new(Vec::new()),
                }
            })
            .collect(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_all = StopAll {
        stop: stop.clone(),
        served: served.clone(),
    };
    let ev = Events {
        started: Some(started),
        identities: (served.len() as u32).into(),
        ..Default::default()
    };
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
    let caches: Vec<_> = (0..served.len())
        .map(|i| cache_sampler(served.clone(), i, stop.clone(), started))
        .collect();
    let workers = workers_sampler(ops.clone(), registry_flag.clone(), stop.clone(), started);
    let ops_url = url_from(2);
    // Every server issues before the first fault.
    for (i, s) in served.iter().enumerate() {
        assert!(
            wait_until(Duration::from_secs(60), || s.issuing()),
            "serve {i} did not issue within 60 s of its start"
        );
    }
    let offset = started.elapsed();

    let world = World {
        servers: &served,
        galera: &galera,
        ensemble: &ensemble,
        db_hosts: &db_hosts,
        ev: &ev,
        ops: &ops,
        url: &ops_url,
    };
    let world = &world;
    // The schedule: each step on a thread of its own, once its slot is free.
    let panicked = run_schedule(&steps, started, offset, |step| apply(step, world));
    let AfterHeal {
        mut problems,
        recovery,
        history,
    } = after_heal(&served, &panicked, &ev, started, &stop, clients);
    let caches: Vec<CacheSample> = caches
        .into_iter()
        .flat_map(|c| c.join().expect("cache sampler"))
        .collect();
    let workers = workers.join().expect("workers sampler");
    stop_all_gracefully(&served, &mut problems);
    // `seen_by` reads the tag changes too (one lock at a time: a guard held in this struct
    // expression while `seen_by` takes the same lock would never be released).
    let seen = Seen {
        caches,
        workers,
        fence,
        ..seen_by(&ev, &served)
    };
    let mut verdict: Verdict = check(&history, &seen);
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
    let by_rule = problems_by_rule(&verdict.problems);
    // Segment batches refused, by answer: the refusals the checker judges by their buffers.
    let mut batches_refused: std::collections::BTreeMap<String, usize> = Default::default();
    for r in history
        .iter()
        .filter(|r| r.mode == Mode::Segment && r.count > 1)
    {
        if let Outcome::Refused { status, code, .. } = &r.outcome {
            *batches_refused
                .entry(format!("{status} {code}"))
                .or_default() += 1;
        }
    }
    let summary = serde_json::json!({
        "registry": run.kind.name(),
        "seed": run.seed,
        "seconds": run.seconds,
        "faults": steps.iter().filter(|s| !s.fault.is_action()).count(),
        "kinds": kinds(&steps, false),
        "actions": steps.iter().filter(|s| s.fault.is_action()).count(),
        "action_kinds": kinds(&steps, true),
        "segment_ids": count(Mode::Segment),
        "segment_ids_by_tag": verdict.ids_by_tag,
        "snowflake_ids": count(Mode::Snowflake),
        "ids_twice": verdict.twice,
        "answers": verdict.answers,
        "next_runs": next_runs,
        "next_errors": next_errors,
        "refusals": verdict.refusals,
        "no_answer": verdict.no_answer,
        "dropped_by_client": verdict.dropped,
        "batches_beyond_buffer": verdict.beyond_buffer,
        "batches_refused": batches_refused,
        "single_refusals_judged": verdict.refusals_judged,
        "single_refusals_while_buffered": verdict.refused_while_buffered,
        "refusals_carrying_buffers": verdict.refusals_carrying_buffers,
        "single_refused_with_buffered": verdict.single_refused_with_buffered,
        "refusals_finding_ids_lost": verdict.refusals_finding_ids_lost,
        "ids_left_buffers": verdict.ids_left_buffers,
        "ids_left_buffers_unanswered": verdict.ids_left_buffers_unanswered,
        "cache_samples": seen.caches.len(),
        "worker_samples": verdict.worker_samples,
        "worker_samples_after_registry_faults": verdict.worker_samples_after_registry_faults,
        "identities": verdict.identities,
        "worker_ids": WORKER_IDS,
        "most_worker_ids_held": verdict.most_held,
        "worker_ids_seen_held": verdict.worker_ids_seen,
        "recovered_ms": recovery.as_millis() as u64,
        "problems": verdict.problems.len(),
        "problems_by_rule": by_rule,
    });
    eprintln!("NEMESIS {summary}");
    let done: String = ev
        .lines
        .lock()
        .unwrap()
        .iter()
        .map(|(t, what)| format!("  {:>7.2}s {what}\n", t.as_secs_f64()))
        .collect();
    // What was done, for a run that passed too (`scripts/nemesis --show`).
    if std::env::var_os("LEAF_NEMESIS_SHOW").is_some() {
        eprintln!(
            "schedule (after a {:.1} s warm-up):\n{plan}\nwhat was done:\n{done}",
            offset.as_secs_f64()
        );
    }
    if !verdict.problems.is_empty() {
        panic!(
            "the nemesis found {} problem(s) with seed {} ({} s, {} registry).\n\
             replay: {}\n\nschedule (after a {:.1} s warm-up):\n{plan}\nwhat was done:\n{done}\n\
             problems by rule: {by_rule:?}\nproblems (the first of each rule, then the next ones):\n{}",
            verdict.problems.len(),
            run.seed,
            run.seconds,
            run.kind.name(),
            run.replay(),
            offset.as_secs_f64(),
            shown(&verdict.problems, &by_rule)
        );
    }
    drop(galera);
    drop(ensemble);
    drop(net);
}
