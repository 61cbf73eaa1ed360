//! Black-box tests of `leafctl next --snowflake` and `leafctl config show`.

use crate::support;

use std::fs::OpenOptions;
use std::process::Stdio;

use leafctl::snowflake::{Layout, Preset};
use predicates::prelude::*;
use support::faketime::under_faketime;
use support::snowflake::{now_ms, time_of, worker_of};
use support::{Sandbox, assert_unique, config_row, on_a_terminal_of, parse_ids, stderr};

#[test]
fn issues_ascending_ids_for_the_worker() {
    let sb = Sandbox::new();
    let out = sb.run_ok(["next", "--snowflake", "--worker-id", "7", "-n", "5000"]);
    let ids = parse_ids(&out.stdout);
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    for &id in &ids {
        assert_eq!(worker_of(id), 7);
        assert!((time_of(id) - now_ms()).abs() < 60_000);
    }
}

#[test]
fn json_output_is_an_array_of_decimal_strings() {
    let sb = Sandbox::new();
    let v = support::json(&sb.run(support::words(
        "next --snowflake --worker-id 1 -n 3 --output json",
    )));
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 3);
    for x in arr {
        let s = x.as_str().expect("IDs are strings in JSON");
        assert!(s.parse::<u64>().is_ok());
    }
}

#[test]
fn tsv_and_ndjson_stream_ids_too() {
    let sb = Sandbox::new();
    let run = |format: &str| {
        let out = support::run_ok(
            sb.leafctl()
                .args(["next", "--snowflake", "--worker-id", "3", "-n", "4"])
                .args(["--output", format]),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let tsv = run("tsv");
    let mut lines = tsv.lines();
    assert_eq!(lines.next(), Some("id"));
    let ids: Vec<u64> = lines.map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    let ndjson = run("ndjson");
    let ids: Vec<u64> = ndjson
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_str().expect("a string per line").parse().unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 4);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn presets_put_the_worker_where_decode_finds_it() {
    let sb = Sandbox::new();
    // (Baidu's default layout is out of time: see a_layout_out_of_time_refuses_instead_of_wrapping.)
    for (preset, worker) in [("discord", "9"), ("sonyflake", "65000")] {
        let out = sb.run_ok([
            "next",
            "--snowflake",
            "--preset",
            preset,
            "--worker-id",
            worker,
            "-n",
            "2",
        ]);
        let ids = parse_ids(&out.stdout);
        let dec = support::run_ok(
            sb.leafctl()
                .args(["decode", "--preset", preset, "--output", "json"])
                .arg(ids[1].to_string()),
        );
        let v: serde_json::Value = serde_json::from_slice(&dec.stdout).unwrap();
        assert_eq!(v[0]["worker"].to_string(), worker, "{preset}");
    }
}

#[test]
fn a_layout_out_of_time_refuses_instead_of_wrapping() {
    // Baidu's default layout holds 2^28 seconds from 2016-05-20+08:00: it ran out in November 2024.
    let sb = Sandbox::new();
    sb.leafctl()
        .args(support::words(
            "next --snowflake --preset baidu --worker-id 1",
        ))
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "past the last instant this layout can encode",
        ))
        .stderr(predicate::str::contains(
            "hint: the layout has run out of time",
        ));
    // Its IDs from before then still decode.
    let l = Layout::preset(Preset::Baidu);
    let id = l.encode(l.max_ticks(), 4_000_000, 8191).unwrap();
    let out = sb.run(support::words(&format!(
        "decode --preset baidu --output json {id}"
    )));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["time"], "2024-11-20T13:24:15.000Z");
    assert_eq!(v[0]["worker"], 4_000_000);
}

#[test]
fn two_concurrent_processes_with_one_worker_id_never_collide() {
    let sb = Sandbox::new();
    let spawn = || {
        sb.leafctl_std()
            .args(["next", "--snowflake", "--worker-id", "7", "-n", "200000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Drain both at once: the one waiting for the lock must not keep the holder's pipe full.
    let (a, b) = (spawn(), spawn());
    let a = std::thread::spawn(move || a.wait_with_output().unwrap());
    let b = std::thread::spawn(move || b.wait_with_output().unwrap());
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    let mut all = parse_ids(&a.stdout);
    all.extend(parse_ids(&b.stdout));
    support::assert_n_unique(&mut all, 400_000);
}

#[test]
fn back_to_back_runs_never_repeat_an_id() {
    let sb = Sandbox::new();
    let mut all = Vec::new();
    for _ in 0..20 {
        let out = sb.run_ok(["next", "--snowflake", "--worker-id", "3", "-n", "50"]);
        all.extend(parse_ids(&out.stdout));
    }
    assert_unique(&mut all);
}

#[test]
fn no_wait_fails_while_another_process_holds_the_worker_id() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.state_dir()).unwrap();
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(sb.state_dir().join("snowflake-leaf-7.lock"))
        .unwrap();
    lock.lock().unwrap();
    sb.leafctl()
        .args(["next", "--snowflake", "--worker-id", "7", "--no-wait"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "in use by another leafctl process",
        ))
        .stderr(predicate::str::contains("hint:"));
    // Another worker id is unaffected.
    sb.leafctl()
        .args(["next", "--snowflake", "--worker-id", "8", "--no-wait"])
        .assert()
        .success();
}

fn write_state(sb: &Sandbox, worker: u64, issued_below_ms: i64, clean: bool) {
    std::fs::create_dir_all(sb.state_dir()).unwrap();
    let body = serde_json::json!({
        "name": "leaf", "worker_id": worker, "issued_below_ms": issued_below_ms, "clean": clean
    });
    std::fs::write(
        sb.state_dir().join(format!("snowflake-leaf-{worker}.json")),
        body.to_string(),
    )
    .unwrap();
}

#[test]
fn a_clock_far_behind_the_recorded_time_is_refused() {
    let sb = Sandbox::new();
    write_state(&sb, 4, now_ms() + 3_600_000, true);
    sb.leafctl()
        .args(["next", "--snowflake", "--worker-id", "4"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("clock moved backwards"));
    write_state(&sb, 4, now_ms() + 3_600_000, false);
    sb.assert_refused(
        &["next", "--snowflake", "--worker-id", "4"],
        1,
        "behind the last time worker id 4 issued",
    );
}

#[test]
fn a_small_step_back_or_a_crashed_reservation_is_waited_out() {
    let sb = Sandbox::new();
    let bound = now_ms() + 300;
    write_state(&sb, 5, bound, false);
    let out = sb.run_ok(["next", "--snowflake", "--worker-id", "5"]);
    let id = parse_ids(&out.stdout)[0];
    assert!(time_of(id) >= bound);

    let bound = now_ms() + 3;
    write_state(&sb, 6, bound, true);
    let out = sb.run_ok(["next", "--snowflake", "--worker-id", "6"]);
    let id = parse_ids(&out.stdout)[0];
    assert!(time_of(id) >= bound);
}

#[test]
fn faketime_an_hour_back_is_refused_end_to_end() {
    let sb = Sandbox::new();
    sb.leafctl()
        .args(["next", "--snowflake", "--worker-id", "2"])
        .assert()
        .success();
    let out = under_faketime(&sb.leafctl_std(), "-1h")
        .args(["next", "--snowflake", "--worker-id", "2"])
        .output()
        .expect("faketime is installed by scripts/test");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("clock moved backwards"));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_closed_pipe_ends_quietly_with_success() {
    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.args(["next", "--snowflake", "--worker-id", "9", "-n", "2000000"]);
    let (first, out) = support::head_1(cmd);
    assert!(first.trim().parse::<u64>().is_ok());
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        stderr(&out)
    );
    // A note counts the IDs issued but not written (snowflake IDs are never issued again).
    support::assert_reader_gone_note(
        &out,
        &[
            "IDs issued were not written",
            "of the 2000000 asked for were not issued",
        ],
    );
    // The next run still starts after the IDs that were issued.
    let next = sb.run(["next", "--snowflake", "--worker-id", "9"]);
    assert!(parse_ids(&next.stdout)[0] > first.trim().parse::<u64>().unwrap());
}

#[test]
fn bad_inputs_are_usage_errors_with_a_hint() {
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["next", "--snowflake"], "no worker id"),
        (
            &["next", "--snowflake", "--worker-id", "1024"],
            "out of range",
        ),
        (
            &[
                "next",
                "--snowflake",
                "--preset",
                "sonyflake",
                "--worker-id",
                "65536",
            ],
            "out of range",
        ),
        (&["next", "--snowflake", "--worker-id", "-1"], ""),
        (&["next", "--snowflake", "--worker-id", "1", "-n", "0"], ""),
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--preset",
                "nope",
            ],
            "",
        ),
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--preset",
                "leaf",
                "--layout",
                "41,10,12",
            ],
            "both given",
        ),
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--layout",
                "41,10,13",
            ],
            "add up to 63",
        ),
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--epoch",
                "yesterday",
            ],
            "invalid epoch",
        ),
        (
            &[
                "next",
                "--snowflake",
                "--worker-id",
                "1",
                "--config",
                "/nonexistent/leaf.toml",
            ],
            "cannot read config file",
        ),
        (&["next", "--worker-id", "1"], ""),
        (&["frobnicate"], ""),
    ];
    for (args, needle) in cases {
        let a = sb
            .leafctl()
            .args(*args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty());
        a.stderr(predicate::str::contains(*needle));
    }
    sb.leafctl()
        .args(["next", "--snowflake"])
        .env("LEAF_WORKER_ID", "abc")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("LEAF_WORKER_ID"));
}

#[test]
fn config_precedence_is_flag_env_file_default() {
    let sb = Sandbox::new();
    let cfg = sb.path().join("leaf.toml");
    std::fs::write(
        &cfg,
        "[snowflake]\nworker_id = 3\nname = \"orders\"\n[db]\npassword = \"s3cret\"\n",
    )
    .unwrap();
    let out = support::run_ok(
        sb.leafctl()
            .args(["config", "show", "--output", "json"])
            .env("LEAF_WORKER_ID", "4"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("s3cret"), "password leaked: {text}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |k: &str| config_row(&rows, k);
    assert_eq!(row("snowflake.worker_id")["value"], "4");
    assert_eq!(row("snowflake.worker_id")["source"], "env LEAF_WORKER_ID");
    assert_eq!(row("snowflake.name")["value"], "orders");
    assert_eq!(row("snowflake.name")["source"], "config file");
    assert_eq!(row("snowflake.seq_start")["source"], "default");
    assert_eq!(row("db.password")["value"], "***");
    assert_eq!(row("db.registry_wait_timeout_s")["value"], "30");
    assert_eq!(row("db.registry_wait_timeout_s")["source"], "default");
    assert_eq!(row("config")["value"], "leaf.toml");

    // The MySQL registry's wait_timeout: a value too short to survive one late report is refused,
    // naming the range and where it came from.
    sb.leafctl()
        .args(["config", "show"])
        .env("LEAF_DB_REGISTRY_WAIT_TIMEOUT_S", "3")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "registry wait_timeout 3 s (from env LEAF_DB_REGISTRY_WAIT_TIMEOUT_S) is not in 6..=31536000",
        ));

    // The flag beats the environment and the file.
    let out = sb
        .leafctl()
        .args(["next", "--snowflake", "--worker-id", "5"])
        .env("LEAF_WORKER_ID", "4")
        .output()
        .unwrap();
    let id = parse_ids(&out.stdout)[0];
    assert_eq!(worker_of(id), 5);
    // The file is used when nothing else is given, and a broken file is a usage error.
    let out = sb.run(["next", "--snowflake"]);
    assert_eq!(worker_of(parse_ids(&out.stdout)[0]), 3);
    std::fs::write(&cfg, "[snowflake]\nworker_id = \"three\"\n").unwrap();
    sb.assert_refused(&["next", "--snowflake"], 2, "leaf.toml");
}

/// The progress bar of a long `next` (issue 18 #11): none when the IDs go to the terminal the
/// bar would be drawn on; otherwise it fits the terminal's width, and Ctrl-C leaves no frame.
#[test]
fn the_progress_bar_stays_out_of_the_way() {
    let sb = Sandbox::new();
    // IDs and the bar on one terminal: no bar (its frames would be glued to the ID lines).
    let shown = on_a_terminal_of(
        &sb,
        80,
        "'{bin}' next --snowflake --worker-id 9 -n 1000000",
        None,
    );
    assert_eq!(
        shown
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        1_000_000
    );
    assert!(!shown.contains("eta"), "a bar among the IDs");

    // IDs to a file, the bar on the terminal: it fits 80 columns, and Ctrl-C (SIGINT) erases
    // its line before the process ends.
    let out = sb.path().join("ids.txt");
    let shown = on_a_terminal_of(
        &sb,
        80,
        &format!(
            "timeout -s INT 2 '{{bin}}' next --snowflake --worker-id 9 -n 2000000000 > '{}'; echo \"rc=$?\"",
            out.display()
        ),
        None,
    );
    let rc_at = shown.find("rc=").unwrap_or_else(|| panic!("{shown:?}"));
    assert!(shown[rc_at..].starts_with("rc=124"), "{shown:?}");
    let before = &shown[..rc_at];
    let frames: Vec<&str> = before
        .split(['\r', '\n'])
        .filter(|f| f.contains("eta"))
        .collect();
    assert!(!frames.is_empty(), "no bar on the terminal: {shown:?}");
    for f in &frames {
        let visible = strip_ansi(f);
        assert!(
            visible.chars().count() <= 80,
            "{} columns: {visible:?}",
            visible.chars().count()
        );
    }
    let last_frame = before.rfind("eta").expect("a bar was drawn");
    assert!(
        before[last_frame..].contains("\x1b[2K"),
        "the last frame stays on the screen: {:?}",
        &before[last_frame..]
    );
}

/// Text as the terminal shows it: ANSI escape sequences removed.
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Issue 33: a closed or full stdout is found before a worker id is even taken (exit 3, nothing
/// issued); a closed or full stderr never panics.
#[test]
fn closed_or_full_outputs_are_errors_not_panics() {
    use support::{Sink, redirect};
    let sb = Sandbox::new();
    for (sink, says) in [
        (
            Sink::Closed,
            "standard output is closed; nothing was claimed",
        ),
        (
            Sink::Full,
            "No space left on device (os error 28); nothing was claimed",
        ),
    ] {
        let mut cmd = sb.leafctl_std();
        cmd.args(["next", "--snowflake", "--worker-id", "4", "-n", "3"])
            .stderr(Stdio::piped());
        redirect(&mut cmd, 1, sink);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        support::assert_stderr_has(&out, says);
        support::assert_stderr_has(&out, "hint: ");
    }
    for sink in [Sink::Closed, Sink::Full, Sink::DeadPipe] {
        let mut cmd = sb.leafctl_std();
        cmd.args(["next", "--snowflake", "--worker-id", "4", "-n", "3"])
            .stdout(Stdio::piped());
        redirect(&mut cmd, 2, sink);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(parse_ids(&out.stdout).len(), 3);
    }
}
