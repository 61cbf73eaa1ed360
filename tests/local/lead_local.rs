//! `--max-lead` with the local registry (state file): the library with a fake clock, and the real
//! binary, including `kill -9` in the middle of a batch issued ahead of the clock.

use crate::support;

use std::sync::Arc;

use leafctl::snowflake::{Clock, FakeClock};
use leafctl::worker::local::{WorkerState, read_state};
use leafctl::worker::{LocalRegistry, WorkerGenerator};
use predicates::prelude::*;
use support::snowflake::{SMALL, next_block_ahead, now_ms, small_time, time_of, zero_start};
use support::{Sandbox, assert_unique, config_row, killed_mid_batch, parse_ids, stderr};

fn state(sb: &Sandbox, worker: u64) -> WorkerState {
    read_state(&sb.state_dir().join(format!("snowflake-leaf-{worker}.json")))
        .unwrap()
        .expect("a state file")
}

#[test]
fn the_state_file_covers_every_time_issued_ahead_before_the_ids_are_returned() {
    let dir = tempfile::tempdir().unwrap();
    let registry = LocalRegistry {
        state_dir: dir.path().to_path_buf(),
        name: "leaf".into(),
        worker: 5,
        no_wait: true,
    };
    let t0 = now_ms();
    let clock = Arc::new(FakeClock::new(t0));
    let lead = 3_000;
    let g =
        WorkerGenerator::start(&registry, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let path = dir.path().join("snowflake-leaf-5.json");
    let mut last = 0;
    // 5,000 full ticks with the clock standing still but for 1 ms per 10 blocks: the lead is
    // used up, then the generator waits for the clock.
    for i in 0..5_000 {
        let t = next_block_ahead(&g, &mut last, &*clock, lead);
        let on_disk = read_state(&path).unwrap().unwrap();
        assert!(!on_disk.clean);
        assert!(
            on_disk.issued_below_ms > t,
            "block at {t} returned before the state file covered it: {on_disk:?}"
        );
        if i % 10 == 9 {
            clock.advance_ms(1);
        }
    }
    assert!(
        time_of(last) >= clock.now_ms() + lead as i64 - 1,
        "the lead was used"
    );
    g.finish().unwrap();
    let on_disk = read_state(&path).unwrap().unwrap();
    assert_eq!(
        (on_disk.issued_below_ms, on_disk.clean, on_disk.max_lead_ms),
        (time_of(last) + 1, true, lead),
        "a clean exit records the exact last time, ahead of the clock"
    );
    drop(g);
    // A rerun with the same lead continues right after, without waiting.
    clock.advance_ms(100);
    let slept = clock.slept_ms();
    let g =
        WorkerGenerator::start(&registry, &zero_start(clock.clone()).max_lead_ms(lead)).unwrap();
    let next = g.next_block(1).unwrap().first;
    assert!(next > last);
    assert_eq!(time_of(next), time_of(last) + 1);
    assert_eq!(clock.slept_ms(), slept);
    g.finish().unwrap();
    drop(g);
    // Without a lead the rerun waits for the clock to pass the record.
    let g = WorkerGenerator::start(&registry, &zero_start(clock.clone())).unwrap();
    let after = g.next_block(1).unwrap().first;
    assert!(after > next);
    assert!(time_of(after) <= clock.now_ms());
    g.finish().unwrap();
}

#[test]
fn out_of_range_leads_are_usage_errors() {
    let sb = Sandbox::new();
    let base = ["next", "--snowflake", "--worker-id", "1"];
    for (extra, needle) in [
        (&["--max-lead", "60001"][..], "60000"),
        (&["--max-lead", "-5"][..], ""),
        (&["--max-lead", "soon"][..], ""),
        (&["--max-lead", "99999999999999999999999"][..], ""),
    ] {
        sb.leafctl()
            .args(base)
            .args(extra)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(needle));
    }
    for (value, needle) in [("70000", "LEAF_MAX_LEAD_MS"), ("x", "LEAF_MAX_LEAD_MS")] {
        sb.leafctl()
            .args(base)
            .env("LEAF_MAX_LEAD_MS", value)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(needle))
            .stderr(predicate::str::contains("hint:"));
    }
    let cfg = sb.path().join("leaf.toml");
    for body in ["max_lead_ms = 60001", "max_lead_ms = -1"] {
        std::fs::write(&cfg, format!("[snowflake]\n{body}\n")).unwrap();
        sb.leafctl()
            .args(base)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("hint:"));
    }
    // The limit itself is fine, and `config show` says where the value came from.
    std::fs::write(&cfg, "[snowflake]\nmax_lead_ms = 60000\n").unwrap();
    sb.leafctl().args(base).assert().success();
    let out = sb
        .leafctl()
        .args(["config", "show", "--output", "json"])
        .env("LEAF_MAX_LEAD_MS", "250")
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = config_row(&rows, "snowflake.max_lead_ms");
    assert_eq!(
        (row["value"].as_str(), row["source"].as_str()),
        (Some("250"), Some("env LEAF_MAX_LEAD_MS"))
    );
}

#[test]
fn a_batch_ahead_of_the_clock_then_reruns_never_repeat() {
    let sb = Sandbox::new();
    let run = |lead: &str, n: &str| {
        let out = support::run_ok(
            sb.leafctl()
                .args(support::words(
                    "next --snowflake --worker-id 3 --seq-start zero",
                ))
                .args(["-n", n, "--max-lead", lead]),
        );
        (parse_ids(&out.stdout), now_ms())
    };
    // 400,000 IDs are 98 ms of sequence numbers.
    let (a, a_end) = run("5000", "400000");
    assert_eq!(a.len(), 400_000);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    let a_last = *a.last().unwrap();
    assert!(time_of(a_last) <= a_end + 5_000);
    let st = state(&sb, 3);
    assert_eq!(
        (st.issued_below_ms, st.clean),
        (time_of(a_last) + 1, true),
        "exact last time recorded"
    );
    // Right after: with the same lead, and without one; neither repeats.
    let (b, _) = run("5000", "5000");
    assert!(b[0] > a_last);
    let (c, c_end) = run("0", "5000");
    assert!(c[0] > *b.last().unwrap());
    assert!(time_of(*c.last().unwrap()) <= c_end, "no lead: never ahead");
    let mut all = [a, b, c].concat();
    assert_unique(&mut all);
}

#[test]
fn kill_9_in_a_borrowed_batch_then_an_immediate_rerun_never_repeats() {
    let sb = Sandbox::new();
    let started = now_ms();
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(
        "next --snowflake --worker-id 4 --seq-start zero",
    ))
    .args(SMALL)
    .args(["-n", "1000000000", "--max-lead", "20000"]);
    // 20,000 IDs: 5 s of this layout's sequence numbers, issued within a fraction of that.
    let killed = killed_mid_batch(cmd, 20_000);
    let killed_max = *killed.iter().max().unwrap();
    assert!(killed.windows(2).all(|w| w[0] < w[1]));
    let st = state(&sb, 4);
    assert!(!st.clean);
    assert!(
        st.issued_below_ms > small_time(killed_max),
        "the state file ({st:?}) must cover the last ID printed ({} ms)",
        small_time(killed_max)
    );
    assert!(
        small_time(killed_max) >= started + 4_000,
        "the batch ran ahead of the clock"
    );
    // Rerun at once with the lead: continues after the reservation, without a long wait.
    let out = support::run_ok(
        sb.leafctl()
            .args(["next", "--snowflake", "--worker-id", "4", "-n", "1000"])
            .args(SMALL)
            .args(["--max-lead", "20000"]),
    );
    let ids = parse_ids(&out.stdout);
    assert!(ids[0] > killed_max, "repeated a time of the killed run");
    // Without a lead: waits for the clock to pass the record, or refuses a wait over 10 s.
    let out = sb
        .leafctl()
        .args(["next", "--snowflake", "--worker-id", "4", "-n", "1000"])
        .args(SMALL)
        .output()
        .unwrap();
    if out.status.success() {
        assert!(parse_ids(&out.stdout)[0] > *ids.last().unwrap());
    } else {
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = stderr(&out);
        support::assert_contains_all(&err, &["behind", "--max-lead"]);
    }
}

#[test]
fn decode_shows_a_time_issued_ahead_of_the_clock_as_it_is() {
    let sb = Sandbox::new();
    // 20,000 IDs of a 4-per-ms layout: 5 s of times, issued in much less.
    let out = support::run_ok(
        sb.leafctl()
            .args(support::words(
                "next --snowflake --worker-id 2 --seq-start zero",
            ))
            .args(SMALL)
            .args(["-n", "20000", "--max-lead", "10000"]),
    );
    let last = *parse_ids(&out.stdout).last().unwrap();
    let at = small_time(last);
    let dec = support::run_ok(
        sb.leafctl()
            .args(["decode", "--output", "json"])
            .args(SMALL)
            .arg(last.to_string()),
    );
    let v: serde_json::Value = serde_json::from_slice(&dec.stdout).unwrap();
    assert_eq!(v[0]["timestamp_ms"], at);
    assert_eq!(v[0]["worker"], 2);
    let text = sb
        .leafctl()
        .arg("decode")
        .args(SMALL)
        .arg(last.to_string())
        .output()
        .unwrap();
    if at > now_ms() + 1_000 {
        assert!(
            String::from_utf8_lossy(&text.stdout).contains("in "),
            "the age of a future time reads `in ...`: {}",
            String::from_utf8_lossy(&text.stdout)
        );
    }
}

#[test]
fn serve_runs_ahead_too_and_records_before_answering() {
    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.args(support::words(
        "serve --snowflake --worker-id 7 --seq-start zero",
    ))
    .args(SMALL)
    .args(["--max-lead", "5000"]);
    let s = support::serve::Server::start(cmd);
    let mut all = Vec::new();
    // 8,000 IDs of a 4-per-ms layout: 2 s of times per answer.
    for _ in 0..2 {
        let ids = s.get("/api/snowflake/get/k?count=8000").ids();
        assert_eq!(ids.len(), 8_000);
        let last = *ids.last().unwrap();
        assert!(small_time(last) <= now_ms() + 5_000, "within the lead");
        let st = state(&sb, 7);
        assert!(
            st.issued_below_ms > small_time(last),
            "answered before the state file covered {}: {st:?}",
            small_time(last)
        );
        all.extend(ids);
    }
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    let last = *all.last().unwrap();
    assert!(
        small_time(last) >= small_time(all[0]) + 3_999,
        "4,000 ms of times"
    );
    s.stop_cleanly();
    let st = state(&sb, 7);
    assert_eq!(
        (st.issued_below_ms, st.clean),
        (small_time(last) + 1, true),
        "a clean stop records the exact last time"
    );
}

/// A plain run right after one that ran ahead of the clock with `--max-lead` waits for the
/// clock to pass the recorded time, and says why at the default verbosity (issue 18).
#[test]
fn a_wait_after_a_run_with_a_lead_is_explained() {
    let sb = Sandbox::new();
    let base = [
        "next",
        "--snowflake",
        "--worker-id",
        "6",
        "--seq-start",
        "zero",
    ];
    // 8,000 IDs of a 4-per-ms layout: 2 s of times, issued in a fraction of that.
    let out = support::run_ok(sb.leafctl().args(base).args(SMALL).args([
        "-n",
        "8000",
        "--max-lead",
        "3000",
    ]));
    let last = *parse_ids(&out.stdout).last().unwrap();
    let started = std::time::Instant::now();
    let out = sb
        .leafctl()
        .args(base)
        .args(SMALL)
        .args(["-n", "1"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(parse_ids(&out.stdout)[0] > last);
    // The first run ends well within its 2 s lead, so this wait is over a second: said.
    assert!(
        err.contains("worker id 6: waiting") && err.contains("--max-lead"),
        "a long wait is explained: {err}"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(1000),
        "it waited"
    );
}
