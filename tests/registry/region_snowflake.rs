//! Regions in snowflake mode, on real registries: each region's processes lease worker ids only
//! inside its slice of the worker field, so two regions with separate registries never issue
//! one ID twice; the region is recorded in ZooKeeper, etcd and the state directory on first use
//! and a process of another region (or of none) is refused; Leaf's forever tree maps node numbers
//! into the slice and refuses one past it; `decode --regions` reads an ID's region.

use crate::support;

use std::collections::HashSet;

use support::etcd::EtcdServer;
use support::mariadb::{MariaDb, PASSWORD};
use support::postgres::Postgres;
use support::zookeeper::{RawZk, ZkServer};
use support::{Sandbox, parse_ids, stderr};

/// IDs each process issues.
const PER_PROCESS: usize = 3000;

/// Leaf's layout: the worker field is bits 12..22.
fn worker_of(id: u64) -> u64 {
    (id >> 12) & 1023
}

/// `next --snowflake --count PER_PROCESS` as region `r` of 2 with `registry` args, in `sb`.
fn next_in(sb: &Sandbox, r: u32, registry: &[String], instance: &str) -> std::process::Command {
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["--region", &r.to_string(), "--regions", "2"])
        .args(["next", "--snowflake", "--instance", instance])
        .args(["--count", &PER_PROCESS.to_string()])
        .args(registry);
    cmd
}

/// Two regions, each on its own registry (`registries[r]`), each running two processes at once:
/// every process's worker id lies in its region's slice and no ID repeats among all of them.
fn two_regions_never_collide(registries: [Vec<String>; 2]) {
    let sandboxes = [
        Sandbox::new(),
        Sandbox::new(),
        Sandbox::new(),
        Sandbox::new(),
    ];
    let mut cmds = Vec::new();
    for (i, sb) in sandboxes.iter().enumerate() {
        let r = (i / 2) as u32;
        let instance = format!("10.9.{r}.{}:8080", i % 2 + 1);
        cmds.push(next_in(sb, r, &registries[r as usize], &instance));
    }
    let runs = support::run_concurrently(cmds, PER_PROCESS);
    let mut all = HashSet::new();
    let mut workers = Vec::new();
    for (i, ids) in runs.iter().enumerate() {
        let region = (i / 2) as u64;
        let slice = region * 512..(region + 1) * 512;
        let w: HashSet<u64> = ids.iter().map(|&id| worker_of(id)).collect();
        assert_eq!(w.len(), 1, "process {i} used one worker id: {w:?}");
        let w = *w.iter().next().unwrap();
        assert!(
            slice.contains(&w),
            "process {i} of region {region}: worker {w}"
        );
        workers.push(w);
        for &id in ids {
            assert!(all.insert(id), "ID {id} issued twice (process {i})");
        }
    }
    // A region's two processes may hold one worker id one after the other (the first gave it
    // back before the second claimed it: the fence keeps their IDs apart); the regions never
    // share one.
    for w in &workers[..2] {
        assert!(
            !workers[2..].contains(w),
            "both regions used worker id {w}: {workers:?}"
        );
    }
    assert_eq!(all.len(), 4 * PER_PROCESS);
}

fn zk_args(zk: &ZkServer, extra: &[&str]) -> Vec<String> {
    let mut v = vec!["--zk".to_string(), zk.hosts()];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// A refused start: exit 2, both regions (or "no region") and the store named.
fn assert_refused(out: &std::process::Output, want: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for w in want {
        assert!(err.contains(w), "{w:?} not in: {err}");
    }
    assert!(out.stdout.is_empty(), "nothing issued");
}

#[test]
fn zookeeper_leases_and_forever_nodes_stay_in_their_regions_and_the_mark_refuses_others() {
    let zks = [ZkServer::start(), ZkServer::start()];
    two_regions_never_collide([zk_args(&zks[0], &[]), zk_args(&zks[1], &[])]);
    // Leaf's forever tree, in a name of its own on the same servers.
    two_regions_never_collide([
        zk_args(&zks[0], &["--registry", "forever", "--name", "fv"]),
        zk_args(&zks[1], &["--registry", "forever", "--name", "fv"]),
    ]);
    // The mark: written on first use as R/N.
    for (r, zk) in zks.iter().enumerate() {
        let raw = RawZk::connect(&zk.hosts(), None);
        let mark = raw.get("/leafctl/region").unwrap();
        assert_eq!(String::from_utf8_lossy(&mark), format!("{r}/2"));
    }
    // A process of region 0 pointed at region 1's ZooKeeper, and one given no region: refused.
    let sb = Sandbox::new();
    let r1 = zks[1].hosts();
    for (args, want) in [
        (
            vec!["--region", "0", "--regions", "2"],
            vec!["region 1 of 2", "region 0 of 2", "/leafctl/region"],
        ),
        (
            vec![],
            vec!["region 1 of 2", "given no region", "/leafctl/region"],
        ),
    ] {
        for registry in ["lease", "forever"] {
            let out = sb
                .leafctl()
                .args(&args)
                .args(["next", "--snowflake", "--zk", &r1, "--registry", registry])
                .args(["--instance", "10.9.9.9:8080"])
                .output()
                .unwrap();
            assert_refused(&out, &want);
        }
    }
}

/// A forever node whose number lies past the region's slice is refused, naming the slice; the
/// nodes below it map to the slice's first worker ids.
#[test]
fn a_forever_node_past_the_regions_slice_is_refused() {
    let zk = ZkServer::start();
    let raw = RawZk::connect(&zk.hosts(), None);
    // Region 1 of 8 owns worker ids 128..256: 128 numbers. Leaf's own servers registered 130
    // identities before this one.
    for i in 0..130 {
        raw.leaf_register("big", "10.7.0.1", &(9000 + i).to_string(), 0);
    }
    let sb = Sandbox::new();
    let run = |instance: &str| {
        sb.leafctl()
            .args(["--region", "1", "--regions", "8"])
            .args(["next", "--snowflake", "--zk", &zk.hosts(), "--name", "big"])
            .args(["--registry", "forever", "--instance", instance])
            .output()
            .unwrap()
    };
    let out = run("10.7.0.2:8080");
    assert_refused(
        &out,
        &["worker id 258", "number 130", "region 1 of 8", "128 to 255"],
    );
    // Leaf's 4th identity (number 3) is worker id 128 + 3 in region 1.
    let out = run("10.7.0.1:9003");
    assert!(out.status.success(), "{}", stderr(&out));
    let ids = parse_ids(&out.stdout);
    assert_eq!(ids.iter().map(|&i| worker_of(i)).collect::<Vec<_>>(), [131]);
}

#[test]
fn etcd_leases_stay_in_their_regions_and_the_mark_refuses_others() {
    let servers = [EtcdServer::start(), EtcdServer::start()];
    let args = |s: &EtcdServer| vec!["--etcd".to_string(), s.endpoints()];
    two_regions_never_collide([args(&servers[0]), args(&servers[1])]);
    let dump = servers[0].dump("/leafctl/region", None);
    assert!(dump.contains("0/2"), "{dump}");
    let sb = Sandbox::new();
    let out = sb
        .leafctl()
        .args(["--region", "1", "--regions", "2", "next", "--snowflake"])
        .args(["--etcd", &servers[0].endpoints()])
        .output()
        .unwrap();
    assert_refused(
        &out,
        &["region 0 of 2", "region 1 of 2", "etcd", "/leafctl/region"],
    );
}

#[test]
fn mysql_tables_lease_only_inside_their_regions_slice() {
    let db = MariaDb::shared();
    let urls = [0, 1].map(|_| {
        let (_, url) = db.fresh_db_url();
        support::run_ok(
            Sandbox::new()
                .leafctl()
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .args(["db", "init", "--db", &url]),
        );
        vec!["--registry".to_string(), "mysql".into(), "--db".into(), url]
    });
    two_regions_never_collide(urls);
}

#[test]
fn postgres_tables_lease_only_inside_their_regions_slice() {
    let pg = Postgres::shared();
    let urls = [0, 1].map(|_| {
        let (_, url) = pg.fresh_db_url();
        support::run_ok(Sandbox::new().leafctl().args(["db", "init", "--db", &url]));
        vec![
            "--registry".to_string(),
            "postgres".into(),
            "--db".into(),
            url,
        ]
    });
    two_regions_never_collide(urls);
}

#[test]
fn local_worker_ids_are_checked_against_the_slice_and_the_state_dir_keeps_the_region() {
    let sb = [Sandbox::new(), Sandbox::new()];
    let next = |sb: &Sandbox, r: &str, worker: &str| {
        sb.leafctl()
            .args(["--region", r, "--regions", "2"])
            .args(["next", "--snowflake", "--worker-id", worker])
            .args(["--count", &PER_PROCESS.to_string()])
            .output()
            .unwrap()
    };
    // Region 0 owns 0..512, region 1 owns 512..1024: worker 7 of region 0, 519 of region 1.
    let a = next(&sb[0], "0", "7");
    let b = next(&sb[1], "1", "519");
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        stderr(&a),
        stderr(&b)
    );
    let mut ids = parse_ids(&a.stdout);
    ids.extend(parse_ids(&b.stdout));
    assert_eq!(ids.len(), 2 * PER_PROCESS);
    support::assert_unique(&mut ids);
    assert_eq!(
        std::fs::read_to_string(sb[1].state_dir().join("region")).unwrap(),
        "1/2\n"
    );
    // Region 1's host given a worker id of region 0's slice: refused, naming the slice.
    let out = next(&sb[1], "1", "7");
    assert_refused(&out, &["worker id 7", "region 1 of 2", "512 to 1023"]);
    // Region 0's settings on region 1's state directory: refused, naming both.
    let out = next(&sb[1], "0", "7");
    assert_refused(&out, &["region 1 of 2", "region 0 of 2", "state directory"]);
    // No region on it: refused too.
    let out = sb[1]
        .leafctl()
        .args(["next", "--snowflake", "--worker-id", "519"])
        .output()
        .unwrap();
    assert_refused(&out, &["region 1 of 2", "given no region"]);
}

#[test]
fn decode_shows_the_region_of_a_snowflake_id() {
    let sb = Sandbox::new();
    // Worker 389 is region 3 of 8 (384..512) and region 0 of 2.
    let id = (1_000_000u64 << 22) | (389 << 12) | 5;
    for (n, want) in [("8", 3), ("2", 0), ("4", 1)] {
        let out = sb.run([
            "decode",
            "--regions",
            n,
            &id.to_string(),
            "--output",
            "json",
        ]);
        let rows = support::json(&out);
        assert_eq!(rows[0]["worker"], 389);
        assert_eq!(rows[0]["region"], want, "{n} regions: {rows}");
    }
    let out = sb.run(support::words(&format!(
        "decode --regions 8 {id} --output tsv"
    )));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.lines().next().unwrap().ends_with("\tregion"), "{text}");
    assert!(text.lines().nth(1).unwrap().ends_with("\t3"), "{text}");
    // Without --regions nothing changes: no region column.
    let out = sb.run(["decode", &id.to_string(), "--output", "json"]);
    assert!(support::json(&out)[0].get("region").is_none());
    // A bad count is refused.
    let out = sb.run(["decode", "--regions", "9", &id.to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // --around with a region: every worker of the slice, in SQL.
    let out = sb
        .leafctl()
        .args(support::words(&format!(
            "decode --around {id} --region 3 --regions 8"
        )))
        .args(["--output", "json"])
        .output()
        .unwrap();
    let a = support::json(&out);
    assert_eq!(
        (a["first_worker"].as_u64(), a["last_worker"].as_u64()),
        (Some(384), Some(511))
    );
    assert_eq!(a["id_region"], 3);
    let (lo, hi): (u64, u64) = (
        a["min_id"].as_str().unwrap().parse().unwrap(),
        a["max_id"].as_str().unwrap().parse().unwrap(),
    );
    assert!(lo <= id && id <= hi);
    assert_eq!(worker_of(lo), 384);
    assert_eq!(worker_of(hi), 511);
    assert!(
        a["sql"]
            .as_str()
            .unwrap()
            .ends_with("(id >> 12) & 1023 BETWEEN 384 AND 511"),
        "{a}"
    );
}

/// `workers list --regions N` shows each worker id's region; `workers doctor` reports a live
/// worker id outside the region's slice (a process started without the region) and a mark of
/// another region, failing as it does for a clock problem.
#[test]
fn workers_show_regions_and_doctor_reports_ids_outside_the_slice_and_a_foreign_mark() {
    let zk = ZkServer::start();
    let sb = Sandbox::new();
    let hosts = zk.hosts();
    // A server started without a region holds worker id 0 ...
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(&format!(
        "--zk {hosts} serve --snowflake --instance 10.8.0.1:8080"
    )));
    let server = support::serve::Server::start(cmd);
    assert_eq!(worker_of(server.get("/api/snowflake/get/k").id()), 0);
    // ... when region 1 of 2 starts using the same ZooKeeper (worker id 512).
    let out = support::run_ok(
        sb.leafctl()
            .args(support::words(&format!(
                "--region 1 --regions 2 next --snowflake --zk {hosts}"
            )))
            .args(["--instance", "10.8.0.2:8080"]),
    );
    assert_eq!(worker_of(parse_ids(&out.stdout)[0]), 512);

    let list = sb.run(support::words(&format!(
        "workers list --zk {hosts} --regions 2 --output json"
    )));
    let rows = support::json(&list);
    let regions: Vec<(u64, u64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["worker"].as_u64().unwrap(), r["region"].as_u64().unwrap()))
        .collect();
    assert!(
        regions.contains(&(0, 0)) && regions.contains(&(512, 1)),
        "{rows}"
    );

    let doctor = |region: &[&str]| {
        sb.leafctl()
            .args(region)
            .args(["workers", "doctor", "--zk", &hosts, "--output", "json"])
            .output()
            .unwrap()
    };
    // Region 1's view: the live worker id 0 is outside its slice.
    let out = doctor(&["--region", "1", "--regions", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outside_slice"], serde_json::json!([0]), "{report}");
    assert_eq!(report["region_mark"], "1/2");
    assert_eq!(report["ok"], false);
    assert!(
        stderr(&out).contains("live worker id 0"),
        "{}",
        stderr(&out)
    );
    // A host of region 0 pointed here: the foreign mark is reported, naming both.
    let out = doctor(&["--region", "0", "--regions", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    support::assert_contains_all(&err, &["region 1 of 2", "region 0 of 2"]);
    // Once the region-less server is gone, its record is history: region 1's view is clean.
    drop(server);
    let clean = support::wait_until(std::time::Duration::from_secs(20), || {
        doctor(&["--region", "1", "--regions", "2"])
            .status
            .success()
    });
    let out = doctor(&["--region", "1", "--regions", "2"]);
    assert!(clean, "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outside_slice"], serde_json::json!([]), "{report}");
}

/// Leaf's own (Java) servers know no regions: on a region's forever tree they issue with their
/// node's number as the worker id, outside the region's slice. `workers doctor` tells them
/// from leafctl's holders (which keep a temporary node) by their live reports.
#[test]
fn doctor_reports_a_leaf_server_on_a_regions_forever_tree() {
    let zk = ZkServer::start();
    let hosts = zk.hosts();
    let sb = Sandbox::new();
    let region = ["--region", "1", "--regions", "2"];
    // leafctl's own forever holder (it keeps a temporary node while it runs).
    let mut cmd = sb.leafctl_std();
    cmd.args(region)
        .args(support::words(&format!(
            "--zk {hosts} serve --snowflake --registry forever"
        )))
        .args(["--instance", "10.6.0.1:8080"]);
    let server = support::serve::Server::start(cmd);
    assert_eq!(worker_of(server.get("/api/snowflake/get/k").id()), 512);
    let doctor = || {
        sb.leafctl()
            .args(region)
            .args(["workers", "doctor", "--zk", &hosts, "--output", "json"])
            .output()
            .unwrap()
    };
    let out = doctor();
    assert!(
        out.status.success(),
        "leafctl's own node is no problem: {}",
        stderr(&out)
    );
    // A Leaf server registers (number 1) and reports now, as Leaf does every 3 s.
    let raw = RawZk::connect(&hosts, None);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    raw.leaf_register("leaf", "10.6.0.2", "8080", now);
    let out = doctor();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outside_slice"], serde_json::json!([1]), "{report}");
    let err = stderr(&out);
    support::assert_contains_all(&err, &["10.6.0.2:8080", "worker id 1"]);
    assert!(
        !err.contains("10.6.0.1:8080"),
        "leafctl's holder is not Leaf's: {err}"
    );
    drop(server);
}
