//! (Part of operator_trips.) Running out, visible before it happens on the server: the IDs a tag
//! has left in the status JSON and `/metrics` with the example alert rules, and the snowflake
//! layout's years left and its end in `/readyz`.

use crate::support;

use support::{Sandbox, stderr};

use super::stdout;

/// Item 12 and "running out is visible before it happens", on the server: the status JSON
/// says how many IDs a tag has left and when they run out (a tag never loaded has no step to
/// show, not `step 0`), `/metrics` carries the range left per reported tag, and the example
/// alert rules in contrib/ are valid and fire on such series (`promtool`).
#[test]
fn the_server_shows_tags_running_out_and_the_alert_rules_fire() {
    use std::time::Duration;
    use support::serve::Server;
    let sb = Sandbox::with_tag("fresh", "1000");
    let start = (i64::MAX - 500_000).to_string();
    sb.leafctl()
        .args(["tag", "add", "nearly", "--start", &start, "--step", "1000"])
        .assert()
        .success();
    let mut cmd = sb.leafctl_std();
    cmd.args(["serve", "--segment"]);
    let s = Server::start(cmd);
    for _ in 0..5 {
        assert_eq!(s.get("/api/segment/get/nearly").status, 200);
    }
    // Wait (bounded) for a sample or two of the rate.
    std::thread::sleep(Duration::from_millis(2200));
    assert_eq!(s.get("/api/segment/get/nearly").status, 200);

    let report = s.get("/?format=json&sort=name").json();
    let tags = report["segment"]["tags"].as_array().expect("tags");
    let tag = |t: &str| tags.iter().find(|x| x["tag"] == t).cloned().expect(t);
    let nearly = tag("nearly");
    let left: i64 = nearly["ids_left"].as_str().unwrap().parse().unwrap();
    assert!(
        (i64::MAX - start.parse::<i64>().unwrap() - 2000..500_000).contains(&left),
        "{nearly}"
    );
    assert_eq!(nearly["headroom"], "low", "{nearly}");
    assert!(nearly["step"].as_i64().unwrap() >= 1000, "{nearly}");
    let fresh = tag("fresh");
    assert_eq!(fresh["state"], "idle", "{fresh}");
    for key in [
        "step",
        "table_step",
        "recommended_step",
        "ids_left",
        "headroom",
    ] {
        assert!(fresh[key].is_null(), "{key}: {fresh}");
    }

    let metrics = s.get("/metrics").body;
    let line = metrics
        .lines()
        .find(|l| l.starts_with("leaf_segment_range_ids_left{tag=\"nearly\"}"))
        .unwrap_or_else(|| panic!("no range gauge: {metrics}"));
    assert_eq!(line.rsplit(' ').next().unwrap(), left.to_string(), "{line}");
    let claims = metrics
        .lines()
        .find(|l| l.starts_with("leaf_segment_range_claims_left{tag=\"nearly\"}"))
        .expect("claims gauge");
    let claims: i64 = claims.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(claims < 1000, "{claims}");
    assert!(!metrics.contains("leaf_segment_range_ids_left{tag=\"fresh\"}"));

    // promtool: the scrape is valid exposition text, the rules are valid, and their unit test
    // (contrib/leafctl-alerts.test.yml) passes.
    let promtool = |args: &[&str], stdin: Option<&str>| {
        use std::io::Write;
        let mut child = std::process::Command::new("promtool")
            .args(args)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/contrib"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("promtool (apt-get install prometheus)");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        drop(child.stdin.take());
        child.wait_with_output().unwrap()
    };
    let out = promtool(&["check", "metrics"], Some(&metrics));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!said.contains("leaf_segment_range"), "{said}");
    let out = promtool(&["check", "rules", "leafctl-alerts.yml"], None);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = promtool(&["test", "rules", "leafctl-alerts.test.yml"], None);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

/// "Running out is visible before it happens", snowflake: years left in the layout's time on
/// the status JSON and in `/metrics` (leaf's 41 bits of ms run to 2080).
#[test]
fn the_server_shows_the_years_left_in_the_snowflake_layout() {
    use support::serve::Server;
    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.args(["serve", "--snowflake", "--worker-id", "3"]);
    let s = Server::start(cmd);
    assert_eq!(s.get("/api/snowflake/get/x").status, 200);
    let report = s.get("/?format=json").json();
    let sf = &report["snowflake"];
    // 2^41 ms after 2010-11-04T01:42:54.657Z.
    assert_eq!(
        sf["layout_ends_at_ms"],
        1_288_834_974_657i64 + (1i64 << 41) - 1,
        "{sf}"
    );
    let years = sf["layout_years_left"].as_f64().unwrap();
    let now_ms = chrono::Utc::now().timestamp_millis();
    let expected =
        ((1_288_834_974_657i64 + (1i64 << 41)) - now_ms) as f64 / (365.25 * 86_400_000.0);
    assert!((years - expected).abs() < 0.01, "{years} vs {expected}");
    let metrics = s.get("/metrics").body;
    let line = metrics
        .lines()
        .find(|l| l.starts_with("leaf_snowflake_layout_seconds_left "))
        .unwrap_or_else(|| panic!("{metrics}"));
    let secs: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(
        (secs / (365.25 * 86_400.0) - expected).abs() < 0.01,
        "{line}"
    );
}

/// `/readyz` on a layout's time: within a year of its end the detail says when (still ready);
/// once past it (Baidu's 28 bits of seconds ended in 2024) the server is not ready, saying why,
/// instead of answering ready while every ID fails.
#[test]
fn readyz_says_when_the_snowflake_layout_runs_out() {
    use support::serve::Server;
    let sb = Sandbox::new();
    // 35 bits of ms (397.7 days) from an epoch 297 days ago: about 100 days left.
    let now_ms = chrono::Utc::now().timestamp_millis();
    let epoch = now_ms - (1i64 << 35) + 100 * 86_400_000;
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(
        "serve --snowflake --worker-id 1 --layout 35,10,18",
    ))
    .args(["--epoch", &epoch.to_string()]);
    let s = Server::start(cmd);
    let r = s.get("/readyz");
    assert_eq!(r.status, 200);
    let v = r.json();
    let detail = v["snowflake"].as_str().unwrap();
    assert!(
        detail.starts_with("ok (worker id 1; the layout's time runs out in 99 days")
            || detail.starts_with("ok (worker id 1; the layout's time runs out in 100 days"),
        "{detail}"
    );
    assert_eq!(s.get("/api/snowflake/get/x").status, 200);
    drop(s);

    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(
        "serve --snowflake --worker-id 1 --preset baidu",
    ));
    let s = Server::start(cmd);
    let r = s.get("/readyz");
    assert_eq!(r.status, 503);
    let v = r.json();
    assert_eq!(v["ready"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("the layout's time ran out at 2024-11-20T13:24:15Z: no ID can be issued"),
        "{v}"
    );
}
