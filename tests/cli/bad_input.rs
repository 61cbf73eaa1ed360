//! Issue 8, scenario 10: bad input to the CLI and to `leafctl serve`, each with its exit code or
//! HTTP status and message checked. (More cases live beside the features: tests/segment/,
//! tests/cli/ and tests/local/serve_http.rs; this file adds what they do not cover.)

use crate::support;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::ffi::OsStrExt;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use support::serve::{Serve, Server, http};
use support::{Sandbox, parse_ids, stderr};

/// Exit 2, nothing on stdout, one `error:` line naming `needle`, and a hint or clap's usage
/// pointer.
fn assert_usage_error(out: &Output, needle: &str, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: stdout {:?}", out.stdout);
    assert!(err.starts_with("error: "), "{what}: {err}");
    assert!(err.contains(needle), "{what}: {needle:?} not in {err}");
    assert!(
        err.contains("hint:") || err.contains("--help"),
        "{what}: {err}"
    );
}

#[test]
fn bad_tags_are_usage_errors_and_change_nothing() {
    let sb = Sandbox::with_tag("t", "10");
    let long = "x".repeat(129);
    let cases: &[(&[u8], &str)] = &[
        (b"", "a tag cannot be empty"),
        (long.as_bytes(), "at most 128 characters"),
        (b"a b", "whitespace or control"),
        (b"a\tb", "whitespace or control"),
        (b"a\x01b", "whitespace or control"),
        (b"x'; DROP TABLE leaf_alloc; --", "whitespace or control"),
        (b"\xff\xfe", "invalid UTF-8"),
    ];
    for (tag, needle) in cases {
        for cmd in [&["next"][..], &["tag", "add"], &["tag", "show"]] {
            let out = sb
                .leafctl()
                .args(cmd)
                .arg(OsStr::from_bytes(tag))
                .output()
                .unwrap();
            assert_usage_error(&out, needle, &format!("{cmd:?} {tag:?}"));
        }
    }
    // SQL metacharacters without whitespace make a valid tag that is only ever a bound
    // parameter: an unknown tag, then an ordinary one.
    let sql = "x';DROP_TABLE_leaf_alloc;--";
    let out = sb.run(["next", sql]);
    assert_usage_error(&out, "unknown tag", sql);
    sb.leafctl().args(["tag", "add", sql]).assert().success();
    let out = sb.run(["next", sql]);
    assert_eq!(parse_ids(&out.stdout), vec![1]);
    // 128 characters is the limit, not past it.
    let max = "é".repeat(128);
    sb.leafctl().args(["tag", "add", &max]).assert().success();
    // Nothing else was added, and t was never claimed from.
    let out = sb.run(["--output", "json", "tag", "list"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let t = rows.iter().find(|r| r["tag"] == "t").unwrap();
    assert_eq!(t["max_id"], "1");
}

#[test]
fn bad_steps_and_counts_name_the_allowed_range() {
    let sb = Sandbox::with_tag("t", "10");
    let step = "1..=2147483647";
    let count = "1..=9223372036854775807";
    let cases: &[(&[&str], &str)] = &[
        (&["tag", "add", "u", "--step", "0"], step),
        (&["tag", "add", "u", "--step", "-1"], step),
        (&["tag", "add", "u", "--step", "2147483648"], step),
        (&["tag", "add", "u", "--step", "9223372036854775808"], step),
        (&["tag", "add", "u", "--step", "abc"], step),
        (&["tag", "set-step", "t", "0"], step),
        (&["tag", "set-step", "t", "-1"], step),
        (&["tag", "set-step", "t", "2147483648"], step),
        (&["tag", "set-step", "t", "abc"], step),
        (
            &["tag", "add", "u", "--start", "-1"],
            "0..=9223372036854775807",
        ),
        (&["next", "t", "-n", "0"], count),
        (&["next", "t", "-n", "-1"], count),
        (&["next", "t", "-n", "9223372036854775808"], count),
        (&["next", "t", "-n", "18446744073709551616"], count),
        (&["next", "t", "-n", "abc"], count),
        (
            &["next", "--snowflake", "--worker-id", "1", "-n", "0"],
            count,
        ),
        (
            &["next", "--snowflake", "--worker-id", "1", "-n", "-1"],
            count,
        ),
        (
            &["next", "--snowflake", "--worker-id", "-1"],
            "-1 is below 0",
        ),
        (
            &["next", "--snowflake", "--worker-id", "abc"],
            "not a whole number",
        ),
        (
            &["next", "--snowflake", "--worker-id", "2147483648"],
            "out of range for the leaf layout (0..=1023)",
        ),
    ];
    for (args, needle) in cases {
        let out = sb.leafctl().args(*args).output().unwrap();
        assert_usage_error(&out, needle, &format!("{args:?}"));
    }
    // Nothing was claimed or added by any of that.
    let out = sb.run(["tag", "show", "t"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("max_id\t1\n"), "{shown}");
    assert!(shown.contains("step\t10\n"), "step unchanged: {shown}");
    let out = sb.run(["tag", "show", "u"]);
    assert_eq!(out.status.code(), Some(2), "u was never added");

    // 2^31 (and more) IDs is a valid request: it streams, and a reader that stops early (like
    // `| head -3`) ends it quietly with exit 0. The claim is exact: the next ID follows it.
    for args in [
        &["next", "t", "-n", "2147483648"][..],
        &[
            "next",
            "--snowflake",
            "--worker-id",
            "3",
            "-n",
            "2147483648",
        ],
    ] {
        let mut child = sb
            .leafctl_std()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Vec<u64> = (0..3)
            .map(|_| lines.next().unwrap().unwrap().parse().unwrap())
            .collect();
        assert!(first.windows(2).all(|w| w[0] < w[1]), "{first:?}");
        drop(lines);
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "{args:?} did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{args:?}: {status}");
    }
    let out = sb.run(["next", "t"]);
    assert_eq!(parse_ids(&out.stdout), vec![2_147_483_649]);
}

#[test]
fn bad_ids_for_decode_are_reported_one_by_one() {
    let sb = Sandbox::new();
    let good = "4194308101";
    let out = sb.run([
        "decode",
        "--output",
        "json",
        "",
        "garbage",
        "-1",
        "18446744073709551616",
        good,
    ]);
    // Under --output json each error is a JSON object (issue 36, item 11): read the messages.
    let err: String = stderr(&out)
        .lines()
        // Notes are JSON too ({"note": ...}), not errors.
        .filter(|l| !l.starts_with("{\"note\""))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON error");
            v["error"]["message"].as_str().expect("message").to_string() + "\n"
        })
        .collect();
    assert_eq!(out.status.code(), Some(2), "{err}");
    support::assert_contains_all(
        &err,
        &[
            "\"\": empty value",
            "\"garbage\": not a number",
            "\"-1\": negative",
            "\"18446744073709551616\": over 2^63-1",
            "4 of 5 values are not IDs",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["id"], good);
    assert_eq!(v.as_array().unwrap().len(), 1);

    // On stdin: blank lines are skipped, a line that is not UTF-8 is one bad value (the rest
    // still decode), and only blank lines is "no IDs".
    let out = sb
        .leafctl()
        .args(["decode", "--output", "json"])
        .write_stdin(&b"\n4194308101\n\n\xff\xfe\n  \r\n4194308102\r\n"[..])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    support::assert_contains_all(&err, &["not a number", "1 of 3"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2, "{v}");
    // No IDs at all (a filter that matched nothing) is an empty answer, not an error (issue 18
    // #19): nothing in text, `[]` in JSON.
    let out = sb
        .leafctl()
        .arg("decode")
        .write_stdin("\n\n \n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    for input in ["", "\n \n"] {
        let out = sb
            .leafctl()
            .args(["decode", "--output", "json"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
    }
    // A bad --max-lead names its range, from the flag and from the environment (#18).
    for (args, env) in [
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--max-lead",
                "-1",
            ][..],
            None,
        ),
        (&["next", "--snowflake", "--worker-id", "1"][..], Some("-1")),
    ] {
        let mut cmd = sb.leafctl();
        cmd.args(args);
        if let Some(v) = env {
            cmd.env("LEAF_MAX_LEAD_MS", v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        support::assert_contains_all(&err, &["0", "60000"]);
        assert!(!err.contains("'-- -1'"), "{err}");
    }
}

/// A URL refused for a typo in its query never shows a password given in that query (the MySQL
/// driver reads `password=`), in any case of the key, nor one in the user part.
#[test]
fn a_refused_url_never_shows_its_password() {
    let sb = Sandbox::new();
    for url in [
        "mysql://u@127.0.0.1:1/d?password=hunter22q&tsl=true",
        "mysql://u@127.0.0.1:1/d?PASSWORD=hunter22q&tsl=true",
        "mysql://u:hunter22q@127.0.0.1:1/d?tsl=true",
        "postgres://u@127.0.0.1:1/d?password=hunter22q",
    ] {
        let out = sb.run(["--db", url, "tag", "list"]);
        assert_usage_error(&out, "unknown parameter", url);
        let err = stderr(&out);
        assert!(
            !err.contains("hunter22q") && err.contains("***"),
            "{url}: {err}"
        );
    }
}

#[test]
fn bad_config_files_are_usage_errors_on_one_line() {
    let sb = Sandbox::new();
    let dir = sb.path().join("conf");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, body: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let cases = [
        (
            file("malformed.toml", b"[snowflake\nworker_id = 1\n"),
            "line 1, column 11: unclosed table",
        ),
        (
            file("unknown.toml", b"[snowflake]\nworkr_id = 1\n"),
            "line 2, column 1: unknown field `workr_id`",
        ),
        (
            file("type.toml", b"[snowflake]\nworker_id = \"one\"\n"),
            "line 2, column 13: invalid type",
        ),
        (
            file("binary.toml", b"\xff\xfe[snowflake]\n"),
            "stream did not contain valid UTF-8",
        ),
        (
            file("secret.toml", b"[db]\npassword = \"hunter22-secret\n"),
            "line 2",
        ),
        // A directory cannot be read as a file (the tests run as root, which reads any mode).
        (dir.clone(), "cannot read config file"),
        (dir.join("missing.toml"), "cannot read config file"),
    ];
    for (path, needle) in &cases {
        for how in ["flag", "env"] {
            let mut cmd = sb.leafctl();
            if how == "flag" {
                cmd.arg("--config").arg(path);
            } else {
                cmd.env("LEAF_CONFIG", path);
            }
            let out = cmd
                .args(["next", "--snowflake", "--worker-id", "1"])
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_usage_error(&out, needle, &format!("{path:?} by {how}"));
            assert_eq!(err.lines().count(), 2, "one line and a hint: {err}");
            assert!(!err.contains("hunter22"), "{err}");
        }
    }
}

/// One request as raw bytes on its own connection; the status and body, or the I/O error.
fn raw(addr: SocketAddr, request: &[u8]) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    s.write_all(request)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    Ok((status, body.to_string()))
}

fn get(path: &[u8]) -> Vec<u8> {
    [
        b"GET ".as_slice(),
        path,
        b" HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    ]
    .concat()
}

#[test]
fn bad_paths_and_queries_get_a_4xx_and_the_server_carries_on() {
    let sb = Sandbox::with_tag("t", "10");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "2"])
        .start();
    let json_error = |(status, body): (u16, String), want: u16| {
        assert_eq!(status, want, "{body}");
        let j: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(j["code"], "bad_request", "{body}");
        assert!(!j["error"].as_str().unwrap().is_empty());
    };
    // An 8 KB tag: a bad tag (over 128 characters), a JSON 400.
    let long = format!("/api/segment/get/{}", "a".repeat(8192));
    json_error(raw(s.addr, &get(long.as_bytes())).unwrap(), 400);
    // A 100 KB path: refused by the HTTP layer before routing.
    let huge = format!("/api/segment/get/{}", "a".repeat(100_000));
    let (status, _) = raw(s.addr, &get(huge.as_bytes())).unwrap();
    assert_eq!(status, 414);
    // Raw bytes that are not UTF-8 (and not even valid in a request line): 400.
    let (status, _) = raw(s.addr, &get(b"/api/segment/get/\xff\xfe")).unwrap();
    assert_eq!(status, 400);
    // Percent-encoded ones reach the route, which refuses them.
    json_error(raw(s.addr, &get(b"/api/segment/get/%C0%AF")).unwrap(), 400);
    json_error(raw(s.addr, &get(b"/api/segment/get/t%00")).unwrap(), 400);
    // Malformed queries: a bad value of count is a 400; junk beside a good count is ignored,
    // as Leaf (Spring) ignores unknown parameters.
    for q in [
        "count=%zz",
        "count=%",
        "count=1%",
        "count",
        "count=1?count=2",
        "count=%2D1",
        "count=99999999999999999999999",
    ] {
        json_error(
            raw(s.addr, &get(format!("/api/segment/get/t?{q}").as_bytes())).unwrap(),
            400,
        );
    }
    for q in ["count=2&&=&%zz=%ff", "count=%32", "&count=2&count=abc"] {
        let (status, body) =
            raw(s.addr, &get(format!("/api/segment/get/t?{q}").as_bytes())).unwrap();
        assert_eq!((status, body.lines().count()), (200, 2), "{q}: {body}");
    }
    json_error(
        raw(s.addr, &get(b"/decodeSnowflakeId?snowflakeId=%zz")).unwrap(),
        400,
    );
    // A request line that is not HTTP at all.
    let (status, _) = raw(
        s.addr,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    )
    .unwrap();
    assert_eq!(status, 400);
    // Through all of that the server kept serving.
    assert_eq!(s.get("/api/segment/get/t").status, 200);
    assert_eq!(s.get("/healthz").status, 200);
}

/// Opens `n` connections to `addr` and sends nothing on them.
fn idle_connections(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(10)).unwrap())
        .collect()
}

/// Waits (bounded) until the server has closed every connection; returns how many were still
/// open at the deadline.
fn open_after(conns: &mut Vec<TcpStream>, limit: Duration) -> usize {
    let deadline = Instant::now() + limit;
    while !conns.is_empty() && Instant::now() < deadline {
        conns.retain_mut(|c| !is_closed(c));
        std::thread::sleep(Duration::from_millis(100));
    }
    conns.len()
}

#[test]
fn a_thousand_idle_connections_starve_no_one_and_are_closed() {
    // This process holds the other ends; make sure it may.
    leafctl::server::raise_open_file_limit();
    let sb = Sandbox::with_tag("t", "10");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "2"])
        .env("LEAF_SERVE_HEADER_TIMEOUT_MS", "8000")
        .start();
    let opened = Instant::now();
    let mut idle = idle_connections(s.addr, 1000);
    // One more that asked once and then stays, idle, on a kept-alive connection.
    let mut kept = TcpStream::connect(s.addr).unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 512];
    kept.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = kept.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // Others are served meanwhile.
    let mut ids = Vec::new();
    for _ in 0..20 {
        let r = http(s.addr, "GET", "/api/segment/get/t", &[]).unwrap();
        ids.push(r.id());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let served_within = opened.elapsed();
    eprintln!("1000 idle connections open, 20 requests answered after {served_within:?}");
    // ... while every idle connection was still open (else this run proved nothing).
    let still_open = idle
        .iter_mut()
        .map(is_closed)
        .filter(|closed| !closed)
        .count();
    assert_eq!(
        still_open, 1000,
        "idle connections closed before the others were served ({served_within:?})"
    );
    // Then the server closes them all, the kept-alive one too, after the header timeout.
    idle.push(kept);
    let left = open_after(&mut idle, Duration::from_secs(30));
    assert_eq!(left, 0, "{left} idle connections still open after 30 s");
    eprintln!("all closed {:?} after opening", opened.elapsed());
    assert!(
        opened.elapsed() >= Duration::from_millis(3900),
        "closed too early"
    );
    assert_eq!(s.get("/healthz").status, 200);
}

#[test]
fn at_the_connection_cap_new_clients_wait_instead_of_failing() {
    let sb = Sandbox::with_tag("t", "10");
    // Hard and soft open-file limit 200 for the server: its cap becomes 200 - 64 = 136 however
    // many connections are asked for, so 300 idle clients cannot run it out of descriptors
    // (which the database needs: the answer below claims a new segment).
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -n 200 && exec \"$0\" -v serve --segment")
        .arg(assert_cmd::cargo::cargo_bin("leafctl"))
        .env("LEAF_SERVE_HEADER_TIMEOUT_MS", "3000");
    for (k, v) in [
        ("HOME", sb.path().to_path_buf()),
        ("XDG_DATA_HOME", sb.path().join("data")),
        ("XDG_CONFIG_HOME", sb.path().join("config")),
        ("XDG_STATE_HOME", sb.path().join("state-home")),
        ("LEAF_STATE_DIR", sb.path().join("state")),
    ] {
        cmd.env(k, v);
    }
    cmd.current_dir(sb.path());
    let s = Server::start(cmd);
    let opened = Instant::now();
    let mut idle = idle_connections(s.addr, 300);
    // Beyond the cap this one waits in the kernel's queue and is answered once idle ones go.
    let r = http(s.addr, "GET", "/api/segment/get/t?count=20", &[]).unwrap();
    assert_eq!(r.ids().len(), 20);
    eprintln!("answered at the cap after {:?}", opened.elapsed());
    assert_eq!(open_after(&mut idle, Duration::from_secs(20)), 0);
    let log = s.stop_cleanly();
    assert!(log.contains("at most 136 connections"), "{log}");
    assert!(log.contains("136 connections open"), "{log}");
    assert!(
        !log.contains("accepting a connection failed"),
        "ran out of descriptors: {log}"
    );
}

#[test]
fn a_slow_trickle_of_headers_is_cut_off() {
    let sb = Sandbox::with_tag("t", "10");
    let s = Serve::new(&sb)
        .args(["--segment", "--snowflake", "--worker-id", "2"])
        .env("LEAF_SERVE_HEADER_TIMEOUT_MS", "2000")
        .start();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    c.write_all(b"GET /api/segment/get/t HTTP/1.1\r\n").unwrap();
    // One header byte every 200 ms would take 12 s; the server must close it at about 2 s.
    let mut cut_after = None;
    for i in 0..60 {
        std::thread::sleep(Duration::from_millis(200));
        if c.write_all(if i % 2 == 0 { b"X" } else { b"-" }).is_err() || is_closed(&mut c) {
            cut_after = Some(start.elapsed());
            break;
        }
        // Others are served meanwhile.
        if i == 3 {
            assert_eq!(s.get("/api/segment/get/t").status, 200);
        }
    }
    let cut_after = cut_after.expect("the trickling connection was never closed");
    eprintln!("trickle cut after {cut_after:?}");
    assert!(cut_after >= Duration::from_millis(1900), "{cut_after:?}");
    assert!(cut_after < Duration::from_secs(10), "{cut_after:?}");
}

/// Whether the peer has closed the connection (EOF or a reset); data it sent is read and
/// dropped.
fn is_closed(c: &mut TcpStream) -> bool {
    let mut b = [0u8; 4096];
    c.set_nonblocking(true).unwrap();
    let closed = loop {
        match c.read(&mut b) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) => break e.kind() != std::io::ErrorKind::WouldBlock,
        }
    };
    let _ = c.set_nonblocking(false);
    closed
}

#[test]
fn registries_that_accept_but_never_answer_fail_in_bounded_time() {
    // A loopback port whose connections the kernel accepts but nobody ever answers.
    let black_hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = black_hole.local_addr().unwrap();
    let sb = Sandbox::new();
    for (args, needle) in [
        (
            vec!["next", "--snowflake", "--zk", &addr.to_string()],
            "cannot reach ZooKeeper",
        ),
        (
            vec!["next", "--snowflake", "--etcd", &format!("http://{addr}")],
            // The first request: the read of the region mark, before the lease grant.
            "etcd read /leafctl/region failed",
        ),
    ] {
        let start = Instant::now();
        let out = sb.run_bounded(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        support::assert_contains_all(&err, &[needle, "hint:"]);
        eprintln!("{args:?} failed after {:?}", start.elapsed());
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
    }
}

/// `scripts/nemesis` reads its arguments before anything is built or run: `--help` lists them
/// (`--show` too), and a typo, a missing value or a seed that is not a number is exit 2 naming
/// it.
#[test]
fn scripts_nemesis_checks_its_arguments_before_it_runs() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/nemesis");
    let run = |args: &[&str]| {
        std::process::Command::new("bash")
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("bash runs")
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0), "{}", stderr(&help));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--show") && text.contains("--seed 7"),
        "{text}"
    );
    for (args, needle) in [
        (&["--bogus"][..], "unknown argument --bogus"),
        (&["--seed"][..], "--seed needs a value"),
        (&["--seed", "x"][..], "take whole numbers (got 'x')"),
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}
