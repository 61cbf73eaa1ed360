//! `leafctl next --snowflake --etcd`, `leafctl workers --etcd` and clock faults on the real binary,
//! against a real etcd 3.4.

use crate::support;

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use leafctl::snowflake::{Clock, FakeClock, SystemClock};
use leafctl::worker::{EtcdLeaseRegistry, WorkerGenerator};
use support::etcd::{EtcdServer, opts};
use support::faketime::under_faketime;
use support::snowflake::{assert_runs_apart_on_each_worker, leaf, system, zero_start};
use support::{
    Sandbox, assert_unique, config_row, free_port, json, parse_ids, run_concurrently, stderr,
    workers_list,
};

fn list(sb: &Sandbox, etcd: &EtcdServer, name: &str) -> serde_json::Value {
    workers_list(sb, &["--etcd", &etcd.endpoints(), "--name", name])
}

fn holder(etcd: &EtcdServer, name: &str, instance: &str) -> EtcdLeaseRegistry {
    EtcdLeaseRegistry::new(opts(&etcd.endpoints(), name, instance))
}

#[test]
fn eight_concurrent_runs_get_distinct_worker_ids_and_never_share_an_id() {
    let etcd = EtcdServer::shared();
    let sb = Sandbox::new();
    // Eight runs of 200,000 IDs each, all at once.
    let runs = run_concurrently(
        (0..8).map(|i| {
            let mut c = sb.leafctl_std();
            c.args(["next", "--snowflake", "--etcd", &etcd.endpoints()])
                .args(["--name", "conc", "--instance", &format!("10.50.0.{i}:8080")])
                .args(["-n", "200000"]);
            c
        }),
        200_000,
    );
    // No ID twice; runs that shared a worker id did so one after another, never over the same
    // times.
    let spans = assert_runs_apart_on_each_worker(&runs);
    assert!(
        spans.len() >= 2,
        "runs at the same time got different worker ids: {spans:?}"
    );
    // Every run gave its id back.
    let rows = list(&sb, etcd, "conc");
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["held"] == false && r["mode"] == "etcd"),
        "{rows}"
    );
}

#[test]
fn a_clock_set_back_never_reuses_an_earlier_holders_time() {
    let etcd = EtcdServer::shared();
    let sb = Sandbox::new();
    let args = [
        "next",
        "--snowflake",
        "--etcd",
        &etcd.endpoints(),
        "--name",
        "setback",
        "--instance",
        "10.51.0.1:8080",
        "-n",
        "1000",
    ];
    let first = sb.run_ok(args);
    let first_ids = parse_ids(&first.stdout);
    let first_max = *first_ids.iter().max().unwrap();

    // Two seconds behind the first holder's last time: waits it out, then issues after it.
    let t0 = Instant::now();
    let behind = support::run_ok(under_faketime(&sb.leafctl_std(), "-2s").args(args));
    let behind_ids = parse_ids(&behind.stdout);
    assert_eq!(
        leaf().decode(behind_ids[0]).unwrap().worker,
        0,
        "the same id"
    );
    assert!(
        behind_ids.iter().all(|id| *id > first_max),
        "a set-back clock reused an earlier holder's time"
    );
    assert!(t0.elapsed() >= Duration::from_millis(1_500), "it waited");

    // An hour behind: refused, nothing printed.
    let far = under_faketime(&sb.leafctl_std(), "-1h")
        .args(args)
        .output()
        .unwrap();
    assert_eq!(far.status.code(), Some(1), "{}", stderr(&far));
    support::assert_stderr_has(&far, "behind");
    support::assert_stderr_has(&far, "hint:");
    assert!(far.stdout.is_empty(), "no ID may be printed");
    let mut all: Vec<u64> = first_ids.into_iter().chain(behind_ids).collect();
    assert_unique(&mut all);
}

#[test]
fn etcd_unreachable_is_a_clear_runtime_error_in_bounded_time() {
    let sb = Sandbox::new();
    let port = free_port();
    let t0 = Instant::now();
    let out = sb.run_bounded([
        "next",
        "--snowflake",
        "--etcd",
        &format!("127.0.0.1:{port}"),
    ]);
    let took = t0.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("cannot reach etcd"), "{err}");
    assert!(err.contains(&port.to_string()), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(out.stdout.is_empty());
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // A stopped server behind an endpoint that answered a moment ago: the same.
    let etcd = EtcdServer::start();
    let ep = etcd.endpoints();
    sb.run_ok(["next", "--snowflake", "--etcd", &ep]);
    etcd.first().kill();
    let t0 = Instant::now();
    let out = sb.run_bounded(["workers", "list", "--etcd", &ep]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    support::assert_stderr_has(&out, "cannot reach etcd");
    assert!(t0.elapsed() < Duration::from_secs(10));

    // Not an endpoint at all: a usage error.
    let bad = sb.run(["next", "--snowflake", "--etcd", "ftp://x:1"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn list_and_reclaim_live_and_expired_ids() {
    let etcd = EtcdServer::shared();
    let sb = Sandbox::new();
    let ep = etcd.endpoints();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);

    // A live holder.
    let g = WorkerGenerator::start(
        &holder(etcd, "reclaim", "10.52.0.1:8080"),
        &zero_start(clock.clone()),
    )
    .unwrap();
    g.next_block(10).unwrap();
    let rows = list(&sb, etcd, "reclaim");
    let r = &rows[0];
    assert_eq!(r["worker"], 0);
    assert_eq!(r["identity"], "10.52.0.1:8080");
    assert_eq!(r["mode"], "etcd");
    assert_eq!(r["status"], "live");
    assert_eq!(r["held"], true);
    assert_eq!(r["node"], "/leafctl/reclaim/leases/0");
    assert!(r["reserved_until"].is_string(), "{r}");
    let text = sb.run(["workers", "list", "--etcd", &ep, "--name", "reclaim"]);
    let t = String::from_utf8_lossy(&text.stdout);
    support::assert_contains_all(&t, &["10.52.0.1:8080", "live", "etcd"]);

    let reclaim = |extra: &[&str]| {
        sb.leafctl()
            .args([
                "workers", "reclaim", "0", "--etcd", &ep, "--name", "reclaim",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = reclaim(&["--yes"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    support::assert_stderr_has(&refused, "is live");
    assert!(g.lease().check().is_ok(), "the holder keeps its lease");
    let dry = reclaim(&["--force"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(
        String::from_utf8_lossy(&dry.stdout).contains("would revoke the etcd lease"),
        "{}",
        String::from_utf8_lossy(&dry.stdout)
    );
    let forced = reclaim(&["--force", "--yes", "--output", "json"]);
    let v = json(&forced);
    assert_eq!(v["deleted"][0], "/leafctl/reclaim/leases/0", "{v}");
    assert_eq!(v["mode"], "etcd");
    assert!(stderr(&forced).contains("warning"));
    // The holder notices at its next keep-alive and stops issuing.
    assert!(
        support::wait_until(Duration::from_secs(5), || g.next_block(1).is_err()),
        "the reclaimed holder kept issuing"
    );
    let rows = list(&sb, etcd, "reclaim");
    assert_eq!(rows[0]["held"], false);
    assert!(
        rows[0]["reserved_until"].is_string(),
        "reserved_until stays"
    );
    drop(g);

    // An expired id: its last holder ran with a clock 40 s behind and finished long "ago".
    support::run_ok(
        under_faketime(&sb.leafctl_std(), "-40s")
            .args(["next", "--snowflake", "--etcd", &ep, "--name", "expired"])
            .args(["--instance", "10.52.0.2:8080"]),
    );
    let rows = list(&sb, etcd, "expired");
    assert_eq!(rows[0]["status"], "stale", "{rows}");
    assert_eq!(rows[0]["held"], false);
    let by_identity = support::run_ok(
        sb.leafctl()
            .args(support::words(&format!(
                "workers reclaim 10.52.0.2:8080 --yes --etcd {ep}"
            )))
            .args(["--name", "expired"]),
    );
    assert!(
        String::from_utf8_lossy(&by_identity.stdout).contains("already free"),
        "{}",
        String::from_utf8_lossy(&by_identity.stdout)
    );
    let missing = sb.run([
        "workers", "reclaim", "9", "--etcd", &ep, "--name", "expired",
    ]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    support::assert_stderr_has(&missing, "/leafctl/expired/");
}

#[test]
fn a_killed_holders_lease_expires_and_the_next_run_starts_after_it() {
    let etcd = EtcdServer::shared();
    let sb = Sandbox::new();
    let ep = etcd.endpoints();
    let mut child = sb
        .leafctl_std()
        .env("LEAF_ETCD_LEASE_TTL_MS", "2000")
        .args(["next", "--snowflake", "--etcd", &ep, "--name", "crash"])
        .args(["-n", "4000000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        support::wait_until(Duration::from_secs(20), || {
            list(&sb, etcd, "crash")
                .as_array()
                .is_some_and(|a| a.iter().any(|r| r["held"] == true))
        }),
        "the run never held a lease"
    );
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    assert!(
        support::wait_until(
            Duration::from_secs(15),
            || list(&sb, etcd, "crash")[0]["held"] == false
        ),
        "the lease of a killed process never expired"
    );
    eprintln!(
        "the killed run's lease expired {:?} after the kill",
        killed.elapsed()
    );
    let reserved = list(&sb, etcd, "crash")[0]["reserved_until"]
        .as_str()
        .map(|s| {
            chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .timestamp_millis()
        })
        .unwrap();
    let next = sb.run_ok(support::words(&format!(
        "next --snowflake --etcd {ep} --name crash -n 5"
    )));
    for id in parse_ids(&next.stdout) {
        let p = leaf().decode(id).unwrap();
        assert_eq!(p.worker, 0);
        assert!(
            leaf().unix_ms(p.ticks) >= reserved,
            "issued at a time the killed run had reserved"
        );
    }
}

#[test]
fn wrong_password_is_refused_and_never_echoed() {
    let etcd = EtcdServer::start();
    etcd.enable_auth("Right-Pass-1");
    let sb = Sandbox::new();
    let ep = etcd.endpoints();
    let run = |user: Option<&str>, password: Option<&str>, extra: &[&str]| {
        let mut c = sb.leafctl();
        if let Some(u) = user {
            c.env("LEAF_ETCD_USER", u);
        }
        if let Some(p) = password {
            c.env("LEAF_ETCD_PASSWORD", p);
        }
        c.args(["next", "--snowflake", "--etcd", &ep])
            .args(extra)
            .output()
            .unwrap()
    };
    let ok = run(Some("root"), Some("Right-Pass-1"), &[]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(parse_ids(&ok.stdout).len(), 1);

    for extra in [&[][..], &["-vvv"][..]] {
        let wrong = run(Some("root"), Some("Wrong-Pass-2"), extra);
        assert_eq!(wrong.status.code(), Some(1), "{}", stderr(&wrong));
        let err = stderr(&wrong);
        assert!(err.contains("refused user \"root\""), "{err}");
        assert!(err.contains("LEAF_ETCD_PASSWORD"), "{err}");
        assert!(
            !err.contains("Wrong-Pass-2"),
            "the password was printed: {err}"
        );
        assert!(wrong.stdout.is_empty());
    }
    let anonymous = run(None, None, &[]);
    assert_eq!(anonymous.status.code(), Some(1), "{}", stderr(&anonymous));
    support::assert_stderr_has(&anonymous, "authentication");
    let no_user = run(None, Some("Right-Pass-1"), &[]);
    assert_eq!(no_user.status.code(), Some(2), "{}", stderr(&no_user));

    let show = sb
        .leafctl()
        .env("LEAF_ETCD_USER", "root")
        .env("LEAF_ETCD_PASSWORD", "Right-Pass-1")
        .args(["config", "show", "--etcd", &ep, "--output", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout).into_owned();
    assert!(!text.contains("Right-Pass-1"), "{text}");
    let v = json(&show);
    let row = |k: &str| config_row(&v, k);
    assert_eq!(row("etcd.password")["value"], "***");
    assert_eq!(row("etcd.password")["source"], "env LEAF_ETCD_PASSWORD");
    assert_eq!(row("etcd.user")["value"], "root");
    assert_eq!(row("etcd.endpoints")["source"], "flag");
}

#[test]
fn doctor_compares_this_clock_with_live_holders_reports() {
    let etcd = EtcdServer::shared();
    let sb = Sandbox::new();
    let doctor = || {
        sb.leafctl()
            .args(support::words(&format!(
                "workers doctor --etcd {} --name doctor",
                etcd.endpoints()
            )))
            .args(["--output", "json"])
            .output()
            .unwrap()
    };
    // No holders: nothing to compare, fine.
    let v = json(&doctor());
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["peers"], 0);
    assert!(v["zk_offset_ms"].is_null());

    // A holder whose clock is right.
    let good = WorkerGenerator::start(
        &holder(etcd, "doctor", "10.53.0.1:8080"),
        &zero_start(system()),
    )
    .unwrap();
    good.next_block(1).unwrap();
    let v = json(&doctor());
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["peers"], 1, "{v}");
    assert!(v["peer_offset_ms"].as_i64().unwrap().abs() < 1_000, "{v}");

    // And one 40 s ahead: this host is then 20 s behind the peers' average.
    let ahead = Arc::new(FakeClock::new(SystemClock.now_ms() + 40_000));
    let fast = WorkerGenerator::start(
        &holder(etcd, "doctor", "10.53.0.2:8080"),
        &zero_start(ahead),
    )
    .unwrap();
    fast.next_block(1).unwrap();
    let out = doctor();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["peers"], 2, "{v}");
    assert!(v["peer_offset_ms"].as_i64().unwrap() < -10_000, "{v}");
    assert!(stderr(&out).contains("clock check failed"));
    good.finish().unwrap();
    drop(fast);
}

#[test]
fn registry_choice_with_etcd() {
    let sb = Sandbox::new();
    let code = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = sb.leafctl();
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.args(args).output().unwrap();
        (out.status.code(), stderr(&out))
    };
    let (c, e) = code(
        &support::words("next --snowflake --etcd 127.0.0.1:1 --zk 127.0.0.1:2"),
        &[],
    );
    assert_eq!(c, Some(2), "{e}");
    support::assert_contains_all(&e, &["etcd endpoints", "--registry"]);
    let (c, e) = code(
        &support::words("next --snowflake --etcd 127.0.0.1:1 --worker-id 3"),
        &[],
    );
    assert_eq!(c, Some(2), "{e}");
    let (c, e) = code(&["next", "--snowflake", "--registry", "etcd"], &[]);
    assert_eq!(c, Some(2), "{e}");
    assert!(e.contains("--etcd"), "{e}");
    // --worker-id on the command line beats LEAF_ETCD from the environment.
    let (c, e) = code(
        &["next", "--snowflake", "--worker-id", "3"],
        &[("LEAF_ETCD", "127.0.0.1:1")],
    );
    assert_eq!(c, Some(0), "{e}");
    // A TTL etcd would not honour is refused up front.
    let (c, e) = code(
        &["next", "--snowflake", "--etcd", "127.0.0.1:1"],
        &[("LEAF_ETCD_LEASE_TTL_MS", "500")],
    );
    assert_eq!(c, Some(2), "{e}");
    let (c, e) = code(
        &support::words("workers list --etcd 127.0.0.1:1 --zk 127.0.0.1:2"),
        &[],
    );
    assert_eq!(c, Some(2), "{e}");
}

#[test]
fn https_endpoints_with_a_ca_file() {
    let certs = support::etcd::Certs::new();
    let etcd = EtcdServer::start_tls(&certs);
    let sb = Sandbox::new();
    let ep = etcd.endpoints();
    assert!(ep.starts_with("https://"), "{ep}");
    let with_ca = support::run_ok(sb.leafctl().env("LEAF_ETCD_CA_FILE", &certs.ca).args([
        "next",
        "--snowflake",
        "--etcd",
        &ep,
        "-n",
        "3",
    ]));
    assert_eq!(parse_ids(&with_ca.stdout).len(), 3);
    // The CA from the config file works the same.
    std::fs::write(
        sb.path().join("leaf.toml"),
        format!("[etcd]\nca_file = {:?}\n", certs.ca.display().to_string()),
    )
    .unwrap();
    let listed = sb.run(["workers", "list", "--etcd", &ep, "--output", "json"]);
    assert_eq!(json(&listed)[0]["mode"], "etcd");
    std::fs::remove_file(sb.path().join("leaf.toml")).unwrap();

    // Without the CA the server's certificate is not trusted: a clear error, no ID.
    let without = sb.run_bounded(["next", "--snowflake", "--etcd", &ep]);
    assert_eq!(without.status.code(), Some(1), "{}", stderr(&without));
    support::assert_stderr_has(&without, "TLS");
    support::assert_stderr_has(&without, "ca_file");
    assert!(without.stdout.is_empty());
    // A CA file that is not there: a usage error naming it.
    let missing = sb
        .leafctl()
        .env("LEAF_ETCD_CA_FILE", "/nonexistent/ca.pem")
        .args(["next", "--snowflake", "--etcd", &ep])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    support::assert_stderr_has(&missing, "/nonexistent/ca.pem");
}
