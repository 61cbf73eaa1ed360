//! The multi-region run end to end ([`nemesis_regions`]): regions on nets of their own joined by
//! a WAN, two servers in each, the region schedule applied, then the checker's verdict with the
//! region rules and the summary line.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::PROBE_TAG;
use crate::clients::client;
use crate::ending::{AfterHeal, after_heal, problems_by_rule, seen_by, shown, stop_all_gracefully};
use crate::faults::{apply_regional, run_schedule};
use crate::support::faketime::ClockFile;
use crate::support::mariadb::PASSWORD;
use crate::support::nemesis::{
    Mode, Source, TAGS, Verdict, check, check_regions, kinds, region_schedule,
};
use crate::support::regions::{Deployment, WAN_DELAY};
use crate::support::{Sandbox, wait_until};
use crate::world::{Events, RegionWorld, Served, StopAll, identity};

/// A multi-region run (issue 37): how many regions, the seed and the length
/// (`LEAF_NEMESIS_REGIONS`, `LEAF_NEMESIS_SEED`, `LEAF_NEMESIS_SECONDS`).
pub struct RegionRun {
    pub regions: u32,
    pub seed: u64,
    pub seconds: u64,
}

impl RegionRun {
    pub fn from_env(seed: u64) -> RegionRun {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
        RegionRun {
            regions: var("LEAF_NEMESIS_REGIONS").map_or(2, |n| n as u32),
            seed: var("LEAF_NEMESIS_SEED").unwrap_or(seed),
            seconds: var("LEAF_NEMESIS_SECONDS").unwrap_or(60),
        }
    }

    pub fn replay(&self) -> String {
        format!(
            "scripts/nemesis --registry regions --regions {} --seed {} --seconds {}",
            self.regions, self.seed, self.seconds
        )
    }
}

/// A fault's text as the multi-region run reads it: each region has one database (MariaDB or
/// PostgreSQL) and one registry, numbered by region.
fn regional(text: &str) -> String {
    text.replace("galera node", "database of region")
        .replace("registry member", "registry of region")
}

/// The multi-region nemesis: `run.regions` regions (`support::regions`: each its own MariaDB or
/// PostgreSQL, ZooKeeper or etcd, and two `serve --region r --regions N` on impaired links,
/// with clocks of their own), a 50 ms WAN between them, and a seeded schedule of region
/// partitions beside the faults of one server or of a region's database or registry, batches
/// on every tag, restarts, and an operator who removes, re-adds, bumps and re-steps tags in each
/// region and re-runs `region add` (`support::nemesis::region_schedule`). The checker reads every answer of every
/// region: no ID twice (segment IDs per tag, snowflake IDs over every server of every region),
/// the rest of its rules that need no sample of one registry, and the region rules
/// (`check_regions`): each ID inside its region's worker slice or segment block.
pub fn nemesis_regions(run: &RegionRun) {
    let deployment = Deployment::start_with(run.regions, true, true);
    deployment.add_tags(&[&TAGS[..], &[PROBE_TAG]].concat());
    deployment.wan_delay(WAN_DELAY);
    let started = Instant::now();
    let mut region_of = Vec::new();
    let mut all = Vec::new();
    for site in &deployment.sites {
        for host in &site.serve_hosts {
            let i = all.len();
            region_of.push(site.index);
            let sandbox = Sandbox::new();
            let clock = ClockFile::new(sandbox.path());
            let mut args: Vec<String> = ["serve", "--segment", "--snowflake", "--name", "nem"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend(site.registry.args());
            args.extend(site.region_args().iter().cloned());
            all.push(Served {
                index: i,
                started,
                host: host.clone(),
                sandbox,
                clock,
                args,
                env: vec![
                    ("LEAF_DB".into(), site.db_url.clone()),
                    ("LEAF_DB_PASSWORD".into(), PASSWORD.into()),
                    ("LEAF_ZK_SESSION_TIMEOUT_MS".into(), "4000".into()),
                    ("LEAF_ETCD_LEASE_TTL_MS".into(), "3000".into()),
                ],
                server: Mutex::new(None),
                at: Mutex::new(None),
                incarnations: Mutex::new(0),
                identity: Mutex::new(identity(i as u32)),
                lives: Mutex::new(Vec::new()),
            });
        }
    }
    let served = Arc::new(all);
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
    let steps = region_schedule(run.seed, run.seconds, served.len(), run.regions as usize);
    let plan: String = steps
        .iter()
        .map(|s| regional(&format!("  {s}\n")))
        .collect();
    let mut clients = Vec::new();
    for i in 0..served.len() {
        for mode in [Mode::Segment, Mode::Snowflake] {
            clients.push(client(served.clone(), i, mode, stop.clone(), started));
        }
    }
    for (i, s) in served.iter().enumerate() {
        assert!(
            wait_until(Duration::from_secs(60), || s.issuing()),
            "serve {i} did not issue within 60 s of its start"
        );
    }
    let offset = started.elapsed();
    let world = RegionWorld {
        servers: &served,
        deployment: &deployment,
        ev: &ev,
    };
    let world = &world;
    // The schedule: each step on a thread of its own, once its slot is free.
    let panicked = run_schedule(&steps, started, offset, |step| apply_regional(step, world));
    let AfterHeal {
        mut problems,
        recovery,
        history,
    } = after_heal(&served, &panicked, &ev, started, &stop, clients);
    stop_all_gracefully(&served, &mut problems);
    // No `/cache` or `workers list` samples here (each region has a registry of its own): the
    // buffer and worker rules are the single-region nemesis'; a fence of 0 leaves the latter out.
    let seen = seen_by(&ev, &served);
    let mut verdict: Verdict = check(&history, &seen);
    verdict.problems.extend(problems);
    verdict
        .problems
        .extend(check_regions(&history, &region_of, run.regions));
    let count = |m| verdict.ids.get(&m).copied().unwrap_or(0);
    let by_rule = problems_by_rule(&verdict.problems);
    let mut per_region: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &history {
        if let Source::Server { index, .. } = r.source {
            let mode = match r.mode {
                Mode::Segment => "segment",
                Mode::Snowflake => "snowflake",
            };
            *per_region
                .entry(format!("region {} {mode}", region_of[index]))
                .or_default() += r.ids().len();
        }
    }
    let summary = serde_json::json!({
        "registry": "regions",
        "regions": run.regions,
        "seed": run.seed,
        "seconds": run.seconds,
        "faults": steps.iter().filter(|s| !s.fault.is_action()).count(),
        // A region's database is one MariaDB or PostgreSQL, not a Galera node.
        "kinds": kinds(&steps, false)
            .into_iter()
            .map(|(k, n)| (k.replace("galera node", "region database"), n))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "actions": steps.iter().filter(|s| s.fault.is_action()).count(),
        "action_kinds": kinds(&steps, true),
        "segment_ids": count(Mode::Segment),
        "snowflake_ids": count(Mode::Snowflake),
        "ids_by_region": per_region,
        "ids_twice": verdict.twice,
        "answers": verdict.answers,
        "next_runs": 0,
        "refusals": verdict.refusals,
        "no_answer": verdict.no_answer,
        "identities": verdict.identities,
        "single_refusals_judged": verdict.refusals_judged,
        "worker_samples": 0,
        "recovered_ms": recovery.as_millis() as u64,
        "problems": verdict.problems.len(),
        "problems_by_rule": by_rule,
    });
    eprintln!("NEMESIS {summary}");
    if !verdict.problems.is_empty() {
        let done: String = ev
            .lines
            .lock()
            .unwrap()
            .iter()
            .map(|(t, what)| regional(&format!("  {:>7.2}s {what}\n", t.as_secs_f64())))
            .collect();
        panic!(
            "the multi-region nemesis found {} problem(s) with seed {} ({} s, {} regions).\n\
             replay: {}\n\nschedule (after a {:.1} s warm-up):\n{plan}\nwhat was done:\n{done}\n\
             problems by rule: {by_rule:?}\nproblems (the first of each rule, then the next ones):\n{}",
            verdict.problems.len(),
            run.seed,
            run.seconds,
            run.regions,
            run.replay(),
            offset.as_secs_f64(),
            shown(&verdict.problems, &by_rule)
        );
    }
    drop(deployment);
}
