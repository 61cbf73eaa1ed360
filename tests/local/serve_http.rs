//! `leafctl serve` as a black box on the embedded SQLite default: every route, status and error
//! body, the token, shutdown, `config import-leaf` and the systemd unit.

use crate::support;

use std::time::{Duration, Instant};

use support::serve::{Serve, Server, http};
use support::{Sandbox, assert_unique, config_row, stderr};

#[test]
fn leaf_routes_answer_as_leaf_does() {
    let sb = Sandbox::with_tag("order", "100");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "5"])
        .start();

    // Segment: a bare decimal ID, text/plain, ascending; any method.
    let a = s.get("/api/segment/get/order");
    assert!(
        a.header("content-type")
            .is_some_and(|c| c.starts_with("text/plain")),
        "{a:?}"
    );
    let a = a.id();
    let b = s.request("POST", "/api/segment/get/order", &[]).id();
    assert!(b > a, "{a} then {b}");

    // Snowflake: the key is required but not used, as in Leaf; the worker id is ours.
    let sf = s.get("/api/snowflake/get/anything").id();
    let d = s.get(&format!("/decodeSnowflakeId?snowflakeId={sf}"));
    assert_eq!(d.status, 200, "{d:?}");
    let j = d.json();
    assert_eq!(j["workerId"], "5");
    let seq: u64 = j["sequenceId"].as_str().unwrap().parse().unwrap();
    assert!(seq < 4096);
    let ts = j["timestamp"].as_str().unwrap();
    let (ms, rest) = ts.split_once('(').expect("ms(local time)");
    let ms: i64 = ms.parse().unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    assert!((now - ms).abs() < 60_000, "{ts}");
    assert_eq!(rest.len(), "yyyy-MM-dd HH:mm:ss.SSS)".len(), "{ts}");
    assert!(rest.ends_with(')') && rest.as_bytes()[10] == b' ', "{ts}");

    // /cache: Leaf's SegmentBufferView fields, IDs as strings; HTML for a browser.
    let cache = s.get("/cache").json();
    let entry = support::serve::entry(&cache, "order");
    for k in [
        "initOk",
        "nextReady",
        "pos",
        "value0",
        "max0",
        "step0",
        "value1",
        "max1",
        "step1",
    ] {
        assert!(entry.get(k).is_some(), "{k} missing from {entry}");
    }
    assert_eq!(entry["initOk"], true);
    assert!(entry["max0"].is_string() && entry["value1"].is_string());
    let html = s.request("GET", "/cache", &[("Accept", "text/html,*/*")]);
    assert!(
        html.header("content-type")
            .is_some_and(|c| c.starts_with("text/html"))
    );
    assert!(html.body.contains("<td>order</td>"), "{}", html.body);
    for column in ["lastError", "loading", "minStep"] {
        assert!(
            html.body.contains(&format!("<th>{column}</th>")),
            "{}",
            html.body
        );
    }
    // q-values count: HTML at q=0.1 loses to JSON.
    let json = s.request(
        "GET",
        "/cache",
        &[("Accept", "text/html;q=0.1, application/json")],
    );
    assert!(
        json.header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{json:?}"
    );

    // /db: the leaf_alloc rows.
    let db = s.get("/db").json();
    let row = &db.as_array().unwrap()[0];
    assert_eq!(row["key"], "order");
    assert_eq!(row["step"], 100);
    let max_id: u64 = row["maxId"].as_str().unwrap().parse().unwrap();
    assert!(max_id > b, "{row}");
    assert!(row["updateTime"].as_str().unwrap().ends_with('Z'));

    // Health.
    assert_eq!(s.get("/healthz").status, 200);
    let ready = s.get("/readyz");
    assert_eq!(ready.status, 200, "{ready:?}");
    assert_eq!(ready.json()["ready"], true);
}

#[test]
fn batches_are_ascending_and_cross_segments() {
    // A step of 100: a batch of 1000 must cross several segments (or claim the rest at once).
    let sb = Sandbox::with_tag("batch", "100");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "6"])
        .start();
    // Within a batch IDs ascend; across answers they are unique (a batch larger than the
    // buffers claims its rest directly, above the buffered next segment).
    let mut all = Vec::new();
    for n in [1, 7, 1000, 250, 100_000] {
        let ids = s.get(&format!("/api/segment/get/batch?count={n}")).ids();
        assert_eq!(ids.len(), n, "count={n}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ascending");
        all.extend(ids);
    }
    for _ in 0..50 {
        all.push(s.get("/api/segment/get/batch").id());
    }
    assert_unique(&mut all);

    let mut sf = s.get("/api/snowflake/get/k?count=100000").ids();
    assert_eq!(sf.len(), 100_000);
    assert!(sf.windows(2).all(|w| w[0] < w[1]), "ascending");
    sf.extend(s.get("/api/snowflake/get/k?count=3").ids());
    assert_unique(&mut sf);

    let metrics = s.get("/metrics").body;
    assert!(
        metrics.contains("leaf_ids_issued_total{mode=\"segment\",tag=\"batch\"} 101308"),
        "{metrics}"
    );
    assert!(
        metrics.contains("leaf_ids_issued_total{mode=\"snowflake\",tag=\"\"} 100003"),
        "{metrics}"
    );
}

#[test]
fn errors_are_never_an_id() {
    let sb = Sandbox::with_tag("order", "1000");
    let s = Serve::new(&sb).args(["--segment"]).start();
    s.get("/api/segment/get/nope")
        .assert_error(404, "unknown_tag");
    s.get("/api/segment/get/a%20b")
        .assert_error(400, "bad_request");
    s.get("/api/segment/get/%ff")
        .assert_error(400, "bad_request");
    s.get("/api/segment/get/").assert_error(400, "bad_request");
    s.get(&format!("/api/segment/get/{}", "x".repeat(129)))
        .assert_error(400, "bad_request");
    for bad in ["0", "100001", "-1", "abc", "", "1e3"] {
        s.get(&format!("/api/segment/get/order?count={bad}"))
            .assert_error(400, "bad_request");
    }
    s.get("/api/snowflake/get/x")
        .assert_error(404, "mode_disabled");
    s.get("/nope").assert_error(404, "not_found");
    // Leaf's decode route keeps its errorMsg key beside ours.
    for q in [
        "snowflakeId=abc",
        "snowflakeId=-1",
        "snowflakeId=18446744073709551616",
        "",
    ] {
        let r = s.get(&format!("/decodeSnowflakeId?{q}"));
        r.assert_error(400, "bad_request");
        assert!(r.json()["errorMsg"].is_string(), "{r:?}");
    }
    // A tag whose name looks like SQL is just an unknown tag.
    s.get("/api/segment/get/x';DROP%20TABLE%20leaf_alloc;--")
        .assert_error(400, "bad_request");
    s.get("/api/segment/get/x';DROP")
        .assert_error(404, "unknown_tag");
    assert_eq!(s.get("/api/segment/get/order").status, 200);

    let metrics = s.get("/metrics").body;
    assert!(
        metrics.contains("leaf_http_requests_total{route=\"segment\",status=\"404\"} 2"),
        "{metrics}"
    );
    // A segment-only server has no snowflake sample.
    assert!(!metrics.contains("mode=\"snowflake\""), "{metrics}");

    // Snowflake only: segment routes say so.
    let sf = Serve::new(&sb)
        .args(["--snowflake", "--worker-id", "1"])
        .start();
    sf.get("/api/segment/get/order")
        .assert_error(404, "mode_disabled");
    sf.get("/cache").assert_error(404, "mode_disabled");
}

#[test]
fn usage_errors_exit_2_and_runtime_errors_exit_1() {
    let sb = Sandbox::new();
    // Each of these must fail at once; the timeout keeps a wrongly started server from hanging
    // the test.
    let leafctl = || {
        let mut c = sb.leafctl();
        c.timeout(Duration::from_secs(30));
        c
    };
    let out = leafctl().arg("serve").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    support::assert_contains_all(&err, &["--segment", "--snowflake"]);
    let out = leafctl()
        .args(["serve", "--segment", "--listen", "localhost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // On a port of its own: the default 8080 may be taken on a test machine.
    let out = leafctl()
        .args(["serve", "--snowflake", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "no worker id: {out:?}");
    let out = leafctl()
        .arg("serve")
        .env("LEAF_SERVE_SEGMENT", "maybe")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // A taken port is a runtime failure naming the address.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = leafctl()
        .args(["serve", "--segment", "--listen", &addr])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains(&addr));

    // A server cannot share a local worker id with a running process: it fails at once.
    let first = Serve::new(&sb)
        .args(["--snowflake", "--worker-id", "4"])
        .start();
    let t = Instant::now();
    let out = leafctl()
        .args(support::words(
            "serve --snowflake --worker-id 4 --listen 127.0.0.1:0",
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(t.elapsed() < Duration::from_secs(10));
    drop(first);
}

#[test]
fn the_token_guards_every_route_but_health() {
    let sb = Sandbox::with_tag("order", "1000");
    let token = "s3cret-t0ken-value";
    let mut cmd = sb.leafctl_std();
    cmd.args(["-vvv", "serve", "--segment"])
        .env("LEAF_SERVE_TOKEN", token);
    let s = Server::start(cmd);
    for path in [
        "/api/segment/get/order",
        "/cache",
        "/db",
        "/metrics",
        "/decodeSnowflakeId?snowflakeId=1",
    ] {
        let r = s.get(path);
        r.assert_error(401, "unauthorized");
        assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        s.request("GET", path, &[("Authorization", "Bearer wrong")])
            .assert_error(401, "unauthorized");
        s.request("GET", path, &[("Authorization", token)])
            .assert_error(401, "unauthorized");
    }
    let auth = format!("Bearer {token}");
    let ok = s.request("GET", "/api/segment/get/order", &[("Authorization", &auth)]);
    assert_eq!(ok.status, 200);
    // The scheme is case-insensitive (RFC 9110); the token is not.
    for auth in [format!("bearer {token}"), format!("BEARER  {token}")] {
        let ok = s.request("GET", "/api/segment/get/order", &[("Authorization", &auth)]);
        assert_eq!(ok.status, 200, "{auth}: {ok:?}");
    }
    s.request(
        "GET",
        "/api/segment/get/order",
        &[("Authorization", &format!("Bearer {}", token.to_uppercase()))],
    )
    .assert_error(401, "unauthorized");
    s.request(
        "GET",
        "/api/segment/get/order",
        &[("Authorization", &format!("Bearerx{token}"))],
    )
    .assert_error(401, "unauthorized");
    assert_eq!(s.get("/healthz").status, 200);
    assert_eq!(s.get("/readyz").status, 200);

    let shown = sb
        .leafctl()
        .args(["config", "show"])
        .env("LEAF_SERVE_TOKEN", token)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    support::assert_contains_all(&shown, &["serve.token", "***"]);
    assert!(!shown.contains(token));

    let log = s.stop_cleanly();
    assert!(
        log.contains("/api/segment/get/order 200"),
        "access log with -v: {log}"
    );
    assert!(!log.contains(token), "the token leaked into the log: {log}");
    // stderr is a pipe here (a log file, journald): plain text, no colour codes.
    assert!(
        !log.contains('\x1b'),
        "ANSI escapes in a log that is not a terminal: {log}"
    );
}

#[test]
fn single_ids_that_must_wait_for_the_next_tick_never_repeat() {
    // Two sequence numbers per millisecond: with 16 clients at once most requests find the tick
    // used up and wait (one at a time, on a blocking thread) for the next one.
    let sb = Sandbox::new();
    let s = Serve::new(&sb)
        .args([
            "--snowflake",
            "--worker-id",
            "3",
            "--layout",
            "52,10,1",
            "--seq-start",
            "zero",
        ])
        .start();
    let addr = s.addr;
    let stop = Instant::now() + Duration::from_millis(1500);
    let clients: Vec<_> = (0..16)
        .map(|_| {
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                while Instant::now() < stop {
                    ids.push(http(addr, "GET", "/api/snowflake/get/k", &[]).unwrap().id());
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for c in clients {
        let ids = c.join().unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        all.extend(ids);
    }
    // More than two IDs a millisecond were asked for, so many requests waited.
    assert!(all.len() > 500, "{} IDs", all.len());
    assert_unique(&mut all);
    s.stop_cleanly();
}

#[test]
fn sigterm_finishes_and_records_the_last_time() {
    let sb = Sandbox::new();
    let s = Serve::new(&sb)
        .args(["--snowflake", "--worker-id", "9"])
        .start();
    let mut served = s.get("/api/snowflake/get/k?count=5000").ids();
    let t = Instant::now();
    let log = s.stop_cleanly();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(log.contains("stopped"), "{log}");
    // The lock is free at once and the next run continues after what the server issued.
    let out = sb.run_ok(support::words(
        "next --snowflake --worker-id 9 --no-wait -n 10",
    ));
    let next = support::parse_ids(&out.stdout);
    assert!(next[0] > *served.iter().max().unwrap());
    served.extend(next);
    assert_unique(&mut served);

    // No access log without -v.
    let s = Serve::new(&sb)
        .args(["--snowflake", "--worker-id", "9"])
        .start();
    s.get("/api/snowflake/get/k");
    let log = s.stop_cleanly();
    assert!(!log.contains("/api/snowflake/get/k"), "{log}");
}

#[test]
fn in_flight_requests_finish_on_sigterm() {
    let sb = Sandbox::with_tag("order", "1000");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "2"])
        .start();
    let addr = s.addr;
    // Requests in flight while SIGTERM arrives still get whole answers (or a refused connection
    // once the listener is closed), never a cut body.
    let workers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut answered = 0;
                for _ in 0..200 {
                    match http(addr, "GET", "/api/snowflake/get/k?count=20000", &[]) {
                        Ok(r) => {
                            assert_eq!(r.ids().len(), 20_000);
                            answered += 1;
                        }
                        Err(_) => break,
                    }
                }
                answered
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    s.stop_cleanly();
    let answered: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(answered > 0);
}

const LEAF_SAMPLE: &str = "\
leaf.name=com.sankuai.leaf.opensource.test
leaf.segment.enable=true
leaf.jdbc.url=jdbc:mysql://localhost:3306/leaf_test?useUnicode=true&characterEncoding=utf8&characterSetResults=utf8
leaf.jdbc.username=root
leaf.jdbc.password=leafpw123

leaf.snowflake.enable=true
leaf.snowflake.zk.address=zk1:2181
leaf.snowflake.port=8089
";

#[test]
fn import_leaf_turns_leafs_properties_into_a_config() {
    let sb = Sandbox::new();
    let props = sb.path().join("leaf.properties");
    std::fs::write(&props, LEAF_SAMPLE).unwrap();
    let out = support::run_ok(sb.leafctl().args(["config", "import-leaf"]).arg(&props));
    let toml_text = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!toml_text.contains("leafpw123") && !stderr.contains("leafpw123"));
    assert!(toml_text.contains("LEAF_DB_PASSWORD"), "{toml_text}");
    let cfg = sb.path().join("leaf.toml");
    std::fs::write(&cfg, &toml_text).unwrap();
    // The result is a config leafctl reads: check what it resolves to.
    let out = support::run_ok(
        sb.leafctl()
            .args(["--config"])
            .arg(&cfg)
            .args(["config", "show", "--output", "json"]),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let get = |k: &str| config_row(&rows, k)["value"].clone();
    assert_eq!(get("db.url"), "mysql://root@localhost:3306/leaf_test");
    assert_eq!(get("zk.hosts"), "zk1:2181");
    assert_eq!(get("snowflake.instance"), ":8089");
    assert_eq!(get("snowflake.registry"), "forever");
    assert_eq!(get("snowflake.name"), "com.sankuai.leaf.opensource.test");
    assert_eq!(get("serve.segment"), "true");
    assert_eq!(get("serve.snowflake"), "true");
    assert_eq!(get("serve.listen"), "0.0.0.0:8089");

    // Standard input, JSON, and a bad file.
    let out = support::run_ok(
        sb.leafctl()
            .args(["config", "import-leaf", "-", "--output", "json"])
            .write_stdin(LEAF_SAMPLE),
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["config"]["serve"]["segment"], true);
    assert!(j["notes"].as_array().unwrap().len() >= 2);
    let out = sb
        .leafctl()
        .args(["config", "import-leaf", "-"])
        .write_stdin("leaf.snowflake.port=http\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = sb.run(["config", "import-leaf", "/nonexistent/leaf.properties"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_systemd_unit_verifies() {
    let Ok(analyze) = which("systemd-analyze") else {
        panic!("systemd-analyze is missing (Debian's systemd package); scripts/test installs it");
    };
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/contrib/leafctl.service"
    ))
    .unwrap();
    support::assert_contains_all(
        &unit,
        &[
            "DynamicUser=yes",
            "StateDirectory=leafctl",
            "NoNewPrivileges=yes",
            "serve",
        ],
    );
    // Point ExecStart at the binary under test, then let systemd check the unit.
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("leafctl");
    let unit = unit.replace("/usr/local/bin/leafctl", &bin.display().to_string());
    let path = dir.path().join("leafctl.service");
    std::fs::write(&path, unit).unwrap();
    let out = std::process::Command::new(analyze)
        .arg("verify")
        .arg(&path)
        .env("SYSTEMD_LOG_LEVEL", "warning")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "systemd-analyze verify: {err}");
    assert!(
        !err.contains("leafctl.service:"),
        "warnings about the unit: {err}"
    );
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    for dir in ["/usr/bin", "/bin", "/usr/local/bin"] {
        let p = std::path::Path::new(dir).join(name);
        if p.exists() {
            return Ok(p);
        }
    }
    Err(())
}

/// Errors tell HTTP clients what was wrong with their request and nothing about the server's
/// insides (issue 18 #15), oversized requests get the same JSON errors as every other, and a
/// huge input is never echoed back whole (#16).
#[test]
fn errors_keep_internals_and_huge_inputs_out_of_the_body() {
    let sb = Sandbox::with_tag("order", "100");
    let s = Serve::new(&sb).args(["--segment"]).start();
    let r = s.get("/api/segment/get/nosuch");
    r.assert_error(404, "unknown_tag");
    assert!(r.body.contains("nosuch"), "{r:?}");
    let home = sb.path().to_string_lossy().into_owned();
    assert!(
        !r.body.contains("sqlite") && !r.body.contains(&home) && !r.body.contains("leaf.db"),
        "{r:?}"
    );

    // More than 100 header fields: hyper answers 431 itself, before leafctl sees the request
    // (a JSON body would need hyper's header buffer on the heap: a cost on every request).
    let many: Vec<(String, String)> = (0..101).map(|i| (format!("X-H{i}"), "1".into())).collect();
    let headers: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(s.request("GET", "/healthz", &headers).status, 431);

    let long = "a".repeat(20_000);
    s.get(&format!("/api/segment/get/{long}"))
        .assert_error(414, "path_too_long");
    s.get(&format!("/nosuch/{long}"))
        .assert_error(414, "path_too_long");

    // A bad tag of 6,000 characters: refused, and quoted back in a few hundred at most.
    let bad = format!("a%20{}", "b".repeat(6000));
    let r = s.get(&format!("/api/segment/get/{bad}"));
    r.assert_error(400, "bad_request");
    assert!(
        r.body.len() < 600,
        "{} bytes: {}",
        r.body.len(),
        &r.body[..200]
    );
    assert!(r.body.contains("characters in all"), "{}", r.body);
    // The server still answers.
    assert_eq!(s.get("/api/segment/get/order").status, 200);
}

/// A used-up tag (issue 18 #3, #4): the server hands out its very last IDs even when fewer are
/// left than a step, then answers 410 `exhausted` without a retry hint; the server stays ready
/// and the other tags serve; the log says it once, not on every request.
#[test]
fn a_used_up_tag_gives_its_last_ids_then_410_without_an_outage() {
    let sb = Sandbox::with_tag("ok", "1000");
    sb.leafctl()
        .args(["tag", "add", "tail", "--start", "9223372036854775807"])
        .assert()
        .success();
    sb.leafctl()
        .args(support::words(
            "tag add near --start 9223372036854774307 --step 1000",
        ))
        .assert()
        .success();
    sb.leafctl()
        .args(support::words(
            "tag add short --start 9223372036854775707 --step 10",
        ))
        .assert()
        .success();
    let s = Serve::new(&sb).args(["--segment"]).start();

    // A batch larger than what is left: a 400 saying so, not "used up".
    let r = s.get("/api/segment/get/short?count=1000");
    r.assert_error(400, "bad_request");
    assert!(
        r.body
            .contains("has 100 IDs left, fewer than the 1000 asked for"),
        "the refusal says how many are left: {r:?}"
    );
    assert_eq!(
        s.get("/api/segment/get/short").status,
        200,
        "the tag still issues"
    );

    let r = s.get("/api/segment/get/tail");
    r.assert_error(410, "exhausted");
    assert!(r.header("retry-after").is_none(), "{r:?}");
    assert!(r.body.contains("exhausted"), "{r:?}");

    // 1,500 IDs below 2^63-1 with a step of 1,000: all of them, the last one 2^63-2.
    let mut ids = Vec::new();
    let last = loop {
        let r = s.get("/api/segment/get/near");
        if r.status != 200 || ids.len() > 2000 {
            break r;
        }
        ids.push(r.id());
    };
    assert_eq!(ids.len(), 1500, "every last ID is issued");
    assert_eq!(ids.last(), Some(&(i64::MAX as u64 - 1)));
    last.assert_error(410, "exhausted");

    let ready = s.get("/readyz");
    assert_eq!(ready.status, 200, "{ready:?}");
    assert!(
        ready.body.contains("used up") && ready.body.contains("tail"),
        "{ready:?}"
    );
    assert_eq!(s.get("/api/segment/get/ok").status, 200);
    for _ in 0..20 {
        s.get("/api/segment/get/tail")
            .assert_error(410, "exhausted");
    }
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let log = s.stop_cleanly();
    let warned = log.matches("WARN").count();
    assert!(
        warned <= 2,
        "one warning per used-up tag, not a flood: {log}"
    );
}

/// A supervisor that stops the server the moment it says it listens gets the graceful stop
/// (exit 0, unused IDs given back), never the signal's default action: the handlers are
/// installed before the announcement. Seen in the nemesis: `exited with signal: 15`.
#[test]
fn sigterm_right_after_the_listening_line_is_a_graceful_stop() {
    let sb = Sandbox::with_tag("order", "100");
    for _ in 0..10 {
        let s = Serve::new(&sb).args(["--segment"]).start();
        let (status, log) = s.terminate();
        assert!(status.success(), "{status}: {log}");
        assert!(log.contains("leafctl serve: stopped"), "{log}");
    }
}

/// Issue 46 #1: under `--output json` every line on stderr is one JSON object: `serve`'s
/// listening and stopping lines, its logs (a used-up tag's warning), the hand-back, and a
/// re-added tag's note.
#[test]
fn under_output_json_every_stderr_line_is_json() {
    let sb = Sandbox::with_tag("ok", "100");
    sb.leafctl()
        .args(["tag", "add", "tail", "--start", "9223372036854775807"])
        .assert()
        .success();
    let s = Serve::new(&sb)
        .args(["--segment", "--output", "json"])
        .start();
    assert_eq!(s.get("/api/segment/get/ok").status, 200);
    s.get("/api/segment/get/tail")
        .assert_error(410, "exhausted");
    let log = s.stop_cleanly();
    sb.leafctl()
        .args(["tag", "remove", "ok", "--yes"])
        .assert()
        .success();
    let readd = sb.run(["tag", "add", "ok", "--output", "json"]);
    assert!(readd.status.success(), "{}", stderr(&readd));
    let all = format!("{log}\n{}", stderr(&readd));
    let mut kinds = Vec::new();
    for line in all.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}\n{all}"));
        let object = v
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {line}"));
        kinds.extend(object.keys().cloned());
    }
    for kind in ["progress", "level", "note"] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind:?} line: {all}");
    }
}

/// `?encode=` (issue 48 item 5): leafctl's own parameter of the get routes answers each ID as the
/// compact string `next --encode` prints, single IDs and batches, segment and snowflake alike;
/// an unknown encoding is a 400; without it the routes answer numbers.
#[test]
fn get_routes_answer_compact_strings_with_encode() {
    use leafctl::idformat::compact::Encoding;
    let sb = Sandbox::with_tag("order", "100");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "3"])
        .start();
    let mut expected = s.get("/api/segment/get/order").id() + 1;
    for e in Encoding::ALL {
        let one = s.get(&format!("/api/segment/get/order?encode={}", e.name()));
        assert_eq!(one.status, 200, "{one:?}");
        let text = one.body.trim();
        assert_eq!(e.decode(text), Ok(expected), "{text}");
        let batch = s.get(&format!(
            "/api/segment/get/order?count=3&encode={}",
            e.name()
        ));
        let ids: Vec<u64> = batch.body.lines().map(|l| e.decode(l).unwrap()).collect();
        assert_eq!(ids, vec![expected + 1, expected + 2, expected + 3]);
        expected += 4;
        let sf = s.get(&format!("/api/snowflake/get/k?encode={}", e.name()));
        let id = e.decode(sf.body.trim()).unwrap();
        assert!(id > 1 << 40, "a snowflake ID: {id}");
        let sfs = s.get(&format!("/api/snowflake/get/k?encode={}&count=5", e.name()));
        let ids: Vec<u64> = sfs.body.lines().map(|l| e.decode(l).unwrap()).collect();
        assert_eq!(ids.len(), 5);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
    s.get("/api/segment/get/order?encode=hex")
        .assert_error(400, "bad_request");
    assert_eq!(s.get("/api/segment/get/order").id(), expected);
}
