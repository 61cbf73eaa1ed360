//! Black-box tests of `leafctl decode`.

mod support;

use leafctl::snowflake::{LEAF_EPOCH_MS, Layout, Preset};
use predicates::prelude::*;
use support::Sandbox;

/// Worker 1, sequence 5, 1000 ms after Leaf's epoch (2010-11-04T01:42:55.657Z).
const KNOWN: u64 = (1000 << 22) | (1 << 12) | 5;

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn decodes_a_known_id_to_json() {
    let sb = Sandbox::new();
    let v = json(
        &sb.leafctl()
            .args(["decode", "--output", "json", &KNOWN.to_string()])
            .output()
            .unwrap(),
    );
    assert_eq!(
        v,
        serde_json::json!([{
            "id": KNOWN.to_string(),
            "time": "2010-11-04T01:42:55.657Z",
            "timestamp_ms": LEAF_EPOCH_MS + 1000,
            "worker": 1,
            "sequence": 5
        }])
    );
}

#[test]
fn text_output_is_a_table_with_the_fields() {
    let sb = Sandbox::new();
    sb.leafctl()
        .args(["decode", &KNOWN.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains("2010-11-04T01:42:55.657Z"))
        .stdout(predicate::str::contains("worker"))
        .stdout(predicate::str::contains("ago"));
}

#[test]
fn hex_and_stdin_inputs() {
    let sb = Sandbox::new();
    let hex = format!("{KNOWN:#x}");
    let v = json(
        &sb.leafctl()
            .args(["decode", "--output", "json", &hex])
            .output()
            .unwrap(),
    );
    assert_eq!(v[0]["id"], KNOWN.to_string());
    let v = json(
        &sb.leafctl()
            .args(["decode", "--output", "json"])
            .write_stdin(format!("{KNOWN}\n\n{hex}\n"))
            .output()
            .unwrap(),
    );
    assert_eq!(v.as_array().unwrap().len(), 2);
    let v = json(
        &sb.leafctl()
            .args(["decode", "--output", "json", "-"])
            .write_stdin(format!("{KNOWN}\n"))
            .output()
            .unwrap(),
    );
    assert_eq!(v[0]["sequence"], 5);
}

#[test]
fn sonyflake_reports_the_machine_id() {
    let sb = Sandbox::new();
    let l = Layout::preset(Preset::Sonyflake);
    let id = l.encode(100, 0xBEEF, 7).unwrap();
    let v = json(
        &sb.leafctl()
            .args([
                "decode",
                "--preset",
                "sonyflake",
                "--output",
                "json",
                &id.to_string(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(v[0]["worker"], 0xBEEF);
    assert_eq!(v[0]["sequence"], 7);
    assert_eq!(v[0]["time"], "2014-09-01T00:00:01.000Z");
}

#[test]
fn custom_layouts_decode() {
    let sb = Sandbox::new();
    // 2020-01-01T00:00:00Z epoch, 10 ms units, 40|11|12.
    let id: u64 = (500 << 23) | (3 << 12) | 2;
    let v = json(
        &sb.leafctl()
            .args([
                "decode",
                "--epoch",
                "2020-01-01T00:00:00Z",
                "--layout",
                "40,11,12",
                "--unit-ms",
                "10",
            ])
            .args(["--output", "json", &id.to_string()])
            .output()
            .unwrap(),
    );
    assert_eq!(v[0]["time"], "2020-01-01T00:00:05.000Z");
    assert_eq!(
        (v[0]["worker"].as_u64(), v[0]["sequence"].as_u64()),
        (Some(3), Some(2))
    );
}

#[test]
fn bad_values_are_reported_and_good_ones_still_printed() {
    let sb = Sandbox::new();
    let out = sb
        .leafctl()
        .args([
            "decode",
            "--output",
            "json",
            "abc",
            &KNOWN.to_string(),
            "-5",
            "9223372036854775808",
            "0xnope",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], KNOWN.to_string());
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "\"abc\": not a number",
        "\"-5\": negative",
        "\"9223372036854775808\": over 2^63-1",
        "\"0xnope\"",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
}

#[test]
fn a_time_far_in_the_future_suggests_the_wrong_preset() {
    let sb = Sandbox::new();
    let leaf_id = Layout::preset(Preset::Leaf)
        .encode(
            Layout::preset(Preset::Leaf)
                .ticks_at(chrono::Utc::now().timestamp_millis())
                .unwrap(),
            1,
            1,
        )
        .unwrap();
    sb.leafctl()
        .args(["decode", "--preset", "sonyflake", &leaf_id.to_string()])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "in the future; is --preset right?",
        ));
}

#[test]
fn nothing_to_decode_is_a_usage_error() {
    let sb = Sandbox::new();
    sb.leafctl()
        .arg("decode")
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no IDs"));
}

#[test]
fn from_to_gives_the_bounding_ids() {
    let sb = Sandbox::new();
    let v = json(
        &sb.leafctl()
            .args([
                "decode",
                "--from",
                "2026-11-21T10:00:00Z",
                "--to",
                "2026-11-21T11:00:00Z",
                "--output",
                "json",
            ])
            .output()
            .unwrap(),
    );
    let l = Layout::preset(Preset::Leaf);
    let lo: u64 = v["min_id"].as_str().unwrap().parse().unwrap();
    let hi: u64 = v["max_id"].as_str().unwrap().parse().unwrap();
    let from = chrono::DateTime::parse_from_rfc3339("2026-11-21T10:00:00Z")
        .unwrap()
        .timestamp_millis();
    let to = from + 3_600_000;
    assert_eq!(l.unix_ms(l.decode(lo).unwrap().ticks), from);
    assert_eq!(l.decode(lo).unwrap().worker, 0);
    let top = l.decode(hi).unwrap();
    assert_eq!(
        (l.unix_ms(top.ticks), top.worker, top.sequence),
        (to, 1023, 4095)
    );
    assert!(l.decode(hi + 1).map(|p| l.unix_ms(p.ticks) > to).unwrap());

    sb.leafctl()
        .args(["decode", "--from", "2026-11-21", "--to", "2026-11-20"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("before --from"));
    sb.leafctl()
        .args(["decode", "--from", "not-a-time"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid --from"));
    sb.leafctl()
        .args(["decode", "--from", "2026-11-21"])
        .assert()
        .success()
        .stdout(predicate::str::contains("WHERE id BETWEEN"));
}
