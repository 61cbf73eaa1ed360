//! `leafctl next --snowflake --zk`, `leafctl workers` and clock faults on the real binary, against
//! a real ZooKeeper.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use leafctl::snowflake::{Clock, SystemClock, TimeFence};
use leafctl::worker::IssueOptions;
use leafctl::worker::{WorkerRegistry, ZkLeaseRegistry, ZkOptions};
use support::faketime::under_faketime;
use support::snowflake::{assert_runs_apart_on_each_worker, leaf};
use support::zookeeper::ZkServer;
use support::{Sandbox, config_row, free_port, parse_ids, run_concurrently, stderr, workers_list};

#[test]
fn eight_concurrent_leased_processes_never_share_an_id() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    // Eight processes of 20,000 IDs each, all at once.
    let runs = run_concurrently(
        (0..8).map(|i| {
            let mut c = sb.leafctl_std();
            c.args(["next", "--snowflake", "--zk", &zk.hosts(), "--name", "conc"])
                .args(["--instance", &format!("10.40.0.{i}:8080"), "-n", "20000"]);
            c
        }),
        20_000,
    );
    // No ID twice; runs that shared a worker id did so one after another, never over the same
    // times.
    assert_runs_apart_on_each_worker(&runs);
}

#[test]
fn global_options_go_before_or_after_the_subcommand() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let before = sb.run_ok(support::words(&format!(
        "--zk {} --name globals next --snowflake",
        zk.hosts()
    )));
    let after = sb.run_ok(support::words(&format!(
        "next --snowflake --zk {} --name globals",
        zk.hosts()
    )));
    let env = support::run_ok(
        sb.leafctl()
            .env("LEAF_ZK", zk.hosts())
            .env("LEAF_NAME", "globals")
            .args(["next", "--snowflake", "-n", "3"]),
    );
    let mut ids = parse_ids(&before.stdout);
    ids.extend(parse_ids(&after.stdout));
    ids.extend(parse_ids(&env.stdout));
    support::assert_n_unique(&mut ids, 5);
}

#[test]
fn zookeeper_unreachable_is_a_clear_runtime_error() {
    let sb = Sandbox::new();
    let hosts = format!("127.0.0.1:{}", free_port());
    let out = sb.run_bounded(["next", "--snowflake", "--zk", &hosts]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cannot reach ZooKeeper"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    // Forever mode without a cache says so.
    let out = sb
        .leafctl()
        .args(support::words(&format!(
            "next --snowflake --zk {hosts} --registry forever"
        )))
        .args(["--instance", "10.41.0.1:8080"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "no cached worker id");
}

#[test]
fn faketime_behind_the_stored_time_is_refused() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    for registry in ["forever", "lease"] {
        let name = format!("faketime-{registry}");
        let args = [
            "next",
            "--snowflake",
            "--zk",
            &zk.hosts(),
            "--name",
            &name,
            "--registry",
            registry,
            "--instance",
            "10.42.0.1:8080",
            "-n",
            "10",
        ];
        sb.run_ok(args);
        let behind = under_faketime(&sb.leafctl_std(), "-1h")
            .args(args)
            .output()
            .expect("run faketime (Debian package faketime)");
        assert_eq!(
            behind.status.code(),
            Some(1),
            "{registry}: an hour behind must be refused: {}",
            stderr(&behind)
        );
        assert!(
            stderr(&behind).contains("behind"),
            "{registry}: {}",
            stderr(&behind)
        );
        assert!(behind.stdout.is_empty(), "{registry}: no ID may be printed");
    }
}

#[test]
fn list_shows_leases_and_reclaim_refuses_a_live_worker() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let state = tempfile::tempdir().unwrap();
    let opts = ZkOptions::new(
        &zk.hosts(),
        "reclaim",
        "10.43.0.1:8080".parse().unwrap(),
        state.path(),
    );
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let lease = ZkLeaseRegistry::new(opts)
        .acquire(&IssueOptions::new(leaf()).clock(clock.clone()))
        .unwrap();
    assert_eq!(lease.worker(), 0);
    lease.extend(clock.now_ms()).unwrap();

    let v = workers_list(&sb, &["--zk", &zk.hosts(), "--name", "reclaim"]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    let r = &rows[0];
    assert_eq!(r["worker"], 0);
    assert_eq!(r["identity"], "10.43.0.1:8080");
    assert_eq!(r["mode"], "lease");
    assert_eq!(r["status"], "live");
    let seen = r["last_seen"].as_str().unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(seen).is_ok(), "{seen}");

    let text = sb.run(["workers", "list", "--zk", &zk.hosts(), "--name", "reclaim"]);
    let t = String::from_utf8_lossy(&text.stdout);
    support::assert_contains_all(&t, &["10.43.0.1:8080", "live"]);

    let refused = sb
        .leafctl()
        .args(["workers", "reclaim", "0", "--yes", "--zk", &zk.hosts()])
        .args(["--name", "reclaim"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    support::assert_stderr_has(&refused, "is live");
    support::assert_stderr_has(&refused, "--force");
    assert!(lease.check().is_ok(), "the holder keeps its lease");

    let dry = support::run_ok(
        sb.leafctl()
            .args(["workers", "reclaim", "0", "--force", "--zk", &zk.hosts()])
            .args(["--name", "reclaim"]),
    );
    assert!(String::from_utf8_lossy(&dry.stdout).contains("would delete the lease"));

    let forced = support::run_ok(
        sb.leafctl()
            .args(support::words(&format!(
                "workers reclaim 0 --force --yes --zk {}",
                zk.hosts()
            )))
            .args(["--name", "reclaim"]),
    );
    assert!(
        stderr(&forced).contains("warning"),
        "says what could go wrong"
    );
    drop(lease);

    // The lease is free again and its reserved_until stayed.
    let v = workers_list(&sb, &["--zk", &zk.hosts(), "--name", "reclaim"]);
    assert_eq!(v[0]["held"], false);
    assert_eq!(
        v[0]["status"], "stale",
        "no lease node: nobody can issue with it, however recent its report"
    );
    assert!(v[0]["reserved_until"].is_string(), "{v}");
}

#[test]
fn reclaim_tidies_a_stale_forever_node() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    // A forever node that last reported a minute ago and has no live process.
    support::run_ok(
        sb.leafctl()
            .args(["next", "--snowflake", "--zk", &zk.hosts(), "--name", "tidy"])
            .args(["--registry", "forever", "--instance", "10.44.0.1:8080"]),
    );
    let reclaim = || {
        sb.leafctl()
            .args(["workers", "reclaim", "10.44.0.1:8080", "--yes"])
            .args(["--zk", &zk.hosts(), "--name", "tidy"])
            .output()
            .unwrap()
    };
    // Its last report is fresh: live until 3 report intervals have passed.
    let live = reclaim();
    assert_eq!(live.status.code(), Some(1), "a fresh report counts as live");
    let became_stale = support::wait_until(Duration::from_secs(30), || {
        let out = sb
            .leafctl()
            .args(["workers", "list", "--zk", &zk.hosts(), "--name", "tidy"])
            .args(["--output", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v[0]["status"] == "stale"
    });
    assert!(became_stale);
    let done = reclaim();
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(String::from_utf8_lossy(&done.stdout).contains("forever/10.44.0.1:8080-"));
    let v = workers_list(&sb, &["--zk", &zk.hosts(), "--name", "tidy"]);
    assert_eq!(v.as_array().unwrap().len(), 0);
}

#[test]
fn doctor_compares_clocks_and_config_show_redacts_auth() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let v = support::json(&sb.run(["workers", "doctor", "--zk", &zk.hosts(), "--output", "json"]));
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["zk_offset_ms"].as_i64().unwrap().abs() < 5_000);

    let show = support::run_ok(
        sb.leafctl()
            .env("LEAF_ZK_AUTH", "leaf:topsecret")
            .args(["config", "show", "--zk", "zk1:2181", "--output", "json"]),
    );
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(!text.contains("topsecret"), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let row = |k: &str| config_row(&v, k);
    assert_eq!(row("zk.hosts")["value"], "zk1:2181");
    assert_eq!(row("zk.hosts")["source"], "flag");
    assert_eq!(row("zk.auth")["value"], "***");
    assert_eq!(row("zk.auth")["source"], "env LEAF_ZK_AUTH");
}

#[test]
fn registry_choice_errors_are_usage_errors() {
    let sb = Sandbox::new();
    let both = sb.run(support::words(
        "next --snowflake --worker-id 1 --zk 127.0.0.1:1",
    ));
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    support::assert_stderr_has(&both, "--registry");
    let bogus = sb.run(support::words(
        "next --snowflake --registry zookeeper --worker-id 1",
    ));
    assert_eq!(bogus.status.code(), Some(2), "{}", stderr(&bogus));
    let no_zk = sb.run(["next", "--snowflake", "--registry", "lease"]);
    assert_eq!(no_zk.status.code(), Some(2), "{}", stderr(&no_zk));
    support::assert_stderr_has(&no_zk, "--zk");
    let bad_instance = sb.run(support::words(
        "next --snowflake --zk 127.0.0.1:1 --instance nope",
    ));
    assert_eq!(
        bad_instance.status.code(),
        Some(2),
        "{}",
        stderr(&bad_instance)
    );
    // A worker id from the config file loses to --zk on the command line.
    std::fs::write(sb.path().join("leaf.toml"), "[snowflake]\nworker_id = 3\n").unwrap();
    let zk = ZkServer::shared();
    let out = sb.run_ok(support::words(&format!(
        "next --snowflake --zk {} --name choice",
        zk.hosts()
    )));
    let id = parse_ids(&out.stdout)[0];
    assert_eq!(
        leaf().decode(id).unwrap().worker,
        0,
        "leased, not the file's 3"
    );
    let local = sb.run_ok(["next", "--snowflake"]);
    assert_eq!(
        leaf().decode(parse_ids(&local.stdout)[0]).unwrap().worker,
        3
    );
}

/// Issue 45 #6: `workers doctor` compares this host with the holders live now. One that exited
/// a moment ago (its release wrote its node) is no peer; a live one counts however long ago it
/// last wrote (before: only nodes written in the last 10 s counted).
#[test]
fn doctor_compares_with_the_holders_live_now() {
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let name = "doctorpeers";
    sb.run_ok([
        "next",
        "--snowflake",
        "--zk",
        &zk.hosts(),
        "--name",
        name,
        "-n",
        "1",
    ]);
    let doctor = || {
        support::json(&sb.run([
            "workers",
            "doctor",
            "--zk",
            &zk.hosts(),
            "--name",
            name,
            "--output",
            "json",
        ]))
    };
    let v = doctor();
    assert_eq!(v["peers"], 0, "an exited holder is no peer: {v}");

    let state = tempfile::tempdir().unwrap();
    let opts = ZkOptions::new(
        &zk.hosts(),
        name,
        "10.43.9.1:8080".parse().unwrap(),
        state.path(),
    );
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let lease = ZkLeaseRegistry::new(opts)
        .acquire(&IssueOptions::new(leaf()).clock(clock.clone()))
        .unwrap();
    lease.extend(clock.now_ms()).unwrap();
    std::thread::sleep(Duration::from_secs(11));
    let v = doctor();
    assert_eq!(v["peers"], 1, "a live holder is a peer: {v}");
    assert_eq!(v["ok"], true, "{v}");
    drop(lease);
}

/// Issue 46 #1, the matrix's registry command: `workers list` under a stdout closed at start
/// (exit 3, nothing done), `/dev/null` read-write as Python's `subprocess.DEVNULL` opens it and
/// write-only (exit 0), full (exit 3) and a pipe (exit 0, the listing).
#[test]
fn workers_list_under_every_stdout() {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let zk = ZkServer::shared();
    let sb = Sandbox::new();
    let open = |path: &str, read: bool| -> Stdio {
        std::fs::OpenOptions::new()
            .read(read)
            .write(true)
            .open(path)
            .unwrap()
            .into()
    };
    let run = |stdout: Option<Stdio>| {
        let mut cmd = sb.leafctl_std();
        cmd.args(["workers", "list", "--zk", &zk.hosts(), "--name", "matrix"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
        match stdout {
            Some(s) => {
                cmd.stdout(s);
            }
            None => {
                // SAFETY: close(2) between fork and exec, on the child's own descriptor.
                unsafe {
                    cmd.pre_exec(|| {
                        libc::close(1);
                        Ok(())
                    });
                }
            }
        }
        cmd.output().unwrap()
    };
    for (cell, stdout, want) in [
        ("closed", None, 3),
        ("/dev/null read-write", Some(open("/dev/null", true)), 0),
        ("/dev/null write-only", Some(open("/dev/null", false)), 0),
        ("/dev/full", Some(open("/dev/full", false)), 3),
        ("a pipe", Some(Stdio::piped()), 0),
    ] {
        let out = run(stdout);
        assert_eq!(out.status.code(), Some(want), "{cell}: {}", stderr(&out));
    }
}
