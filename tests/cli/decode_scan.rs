//! Black-box tests of `leafctl decode` for incidents (issue 27): IDs of any time-ordered format,
//! `--guess`, `--scan` and `--around`.

use crate::support;

use leafctl::snowflake::{Layout, Preset};
use predicates::prelude::*;
use support::snowflake::now_ms;
use support::{Sandbox, on_a_terminal_of, stderr};

/// A Leaf ID made `ago_ms` before now by `worker`.
fn leaf_id(ago_ms: i64, worker: u64, seq: u64) -> u64 {
    let l = Layout::preset(Preset::Leaf);
    l.encode(l.ticks_at(now_ms() - ago_ms).unwrap(), worker, seq)
        .unwrap()
}

fn ndjson(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert!(out.status.success(), "{}", stderr(out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Published vectors of the text formats decode through the CLI with every field.
#[test]
fn text_ids_decode_by_their_shape() {
    let sb = Sandbox::new();
    let out = sb
        .leafctl()
        .args(["decode", "--output", "ndjson"])
        // RFC 9562 A.6 (v7) and A.1 (v1); ulid/spec; segmentio/ksuid's README; MongoDB's manual.
        .args([
            "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
            "C232AB00-9414-11EC-B3C8-9F6BDECED846",
            "01ARYZ6S41TSV4RRFFQ69G5FAV",
            "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
            "507f191e810c19729de860ea",
        ])
        .output()
        .unwrap();
    let v = ndjson(&out);
    let fields = |i: usize| {
        (
            v[i]["layout"].as_str().unwrap().to_string(),
            v[i]["time"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        fields(0),
        ("uuidv7".into(), "2022-02-22T19:22:22.000Z".into())
    );
    // rand_a 0xCC3 and rand_b 0x18C4DC0C0C07398F, 74 bits side by side.
    assert_eq!(v[0]["random"], "330d8c4dc0c0c07398f");
    assert_eq!(v[0]["worker"], serde_json::Value::Null);
    assert_eq!(
        fields(1),
        ("uuidv1".into(), "2022-02-22T19:22:22.000Z".into())
    );
    assert_eq!(v[1]["worker"], 0x9F6B_DECE_D846u64, "node");
    assert_eq!(v[1]["sequence"], 0x33C8, "clock_seq");
    assert_eq!(
        fields(2),
        ("ulid".into(), "2016-07-30T22:36:16.385Z".into())
    );
    assert_eq!(
        fields(3),
        ("ksuid".into(), "2017-10-10T04:00:47.000Z".into())
    );
    assert_eq!(v[3]["random"], "b5a1cd34b5f99d1154fb6853345c9735");
    assert_eq!(
        fields(4),
        ("objectid".into(), "2012-10-17T20:46:22.000Z".into())
    );
    assert_eq!(v[4]["sequence"], 0xe860ea, "counter");
}

#[test]
fn values_without_a_time_are_named_with_what_would_fit() {
    let sb = Sandbox::new();
    // RFC 9562 A.3: a version 4 UUID.
    sb.leafctl()
        .args(["decode", "919108f7-52d1-4320-9bac-f847db4148a8"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "a random UUID (version 4) holds no time; only UUID versions 1, 6 and 7",
        ));
    sb.leafctl()
        .args(["decode", "not-an-id-at-all"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("16 characters"))
        .stderr(predicate::str::contains("a ULID (26 characters"));
    // A ULID past the largest one the spec allows.
    sb.assert_refused(
        &["decode", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ"],
        2,
        "larger than the largest ULID",
    );
}

#[test]
fn new_presets_decode_their_published_ids() {
    let sb = Sandbox::new();
    let one = |preset: &str, id: &str| {
        let v = ndjson(&sb.run(["decode", "--output", "ndjson", "--preset", preset, id]));
        v[0].clone()
    };
    // Mastodon's API docs, Status example: created_at 2019-12-08T03:48:33.901Z.
    let m = one("mastodon", "103270115826048975");
    assert_eq!(m["time"], "2019-12-08T03:48:33.849Z");
    assert_eq!(
        m["worker"],
        serde_json::Value::Null,
        "Mastodon has no worker"
    );
    // An Instagram media ID published with its time, 2020-08-26T13:43:27Z.
    let i = one("instagram", "2384288897814875714");
    assert_eq!(i["time"], "2020-08-26T13:43:27.313Z");
    // Seata: worker 1023, a day after its twepoch, sequence 4095.
    let seata_id = (1023u64 << 53) | (86_400_000 << 12) | 4095;
    let s = one("seata", &seata_id.to_string());
    assert_eq!(
        (s["worker"].as_u64(), s["sequence"].as_u64()),
        (Some(1023), Some(4095))
    );
    assert_eq!(s["time"], "2020-05-03T16:00:00.000Z");
    // One time range is one range per worker under Seata's order.
    sb.leafctl()
        .args(["decode", "--preset", "seata", "--from", "2026-01-01"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("one ID range per worker"))
        .stderr(predicate::str::contains("--around"));
}

#[test]
fn without_a_layout_an_implausible_number_is_read_under_the_most_plausible_one() {
    let sb = Sandbox::new();
    let l = Layout::preset(Preset::Instagram);
    let id = l
        .encode(l.ticks_at(now_ms() - 60_000).unwrap(), 1341, 7)
        .unwrap();
    let out = sb.run(["decode", "--output", "ndjson", &id.to_string()]);
    let v = ndjson(&out);
    assert_eq!(v[0]["layout"], "instagram");
    assert_eq!(
        (v[0]["worker"].as_u64(), v[0]["sequence"].as_u64()),
        (Some(1341), Some(7))
    );
    let err = stderr(&out);
    support::assert_contains_all(&err, &["is no leaf ID", "read as instagram"]);
    // Named explicitly, leaf stays leaf, and the error says what would fit.
    sb.leafctl()
        .args(["decode", "--preset", "leaf", &id.to_string()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "in the future; is --preset right?",
        ))
        .stderr(predicate::str::contains("instagram"));
}

#[test]
fn guess_ranks_every_layout_and_says_why() {
    let sb = Sandbox::new();
    // Discord's API reference: 175928847299117063 is 2016-04-30T11:18:25.796Z.
    let rows = ndjson(&sb.run(support::words(
        "decode --guess --output ndjson 175928847299117063",
    )));
    assert_eq!(rows.len(), 8, "every preset once");
    let discord = rows.iter().find(|r| r["layout"] == "discord").unwrap();
    assert_eq!(discord["time"], "2016-04-30T11:18:25.796Z");
    assert_eq!(discord["plausible"], true);
    let mastodon = rows.iter().find(|r| r["layout"] == "mastodon").unwrap();
    assert_eq!(mastodon["plausible"], false);
    assert!(mastodon["why"].as_str().unwrap().contains("in the future"));
    assert_eq!(mastodon["rank"], serde_json::Value::Null);
    // Plausible first, ranked 1, 2, ...
    let plausible: Vec<bool> = rows.iter().map(|r| r["plausible"] == true).collect();
    let mut sorted = plausible.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(plausible, sorted);
    assert_eq!(rows[0]["rank"], 1);
    // The configured layout comes first and says so.
    let rows = ndjson(
        &sb.leafctl()
            .args([
                "decode", "--guess", "--preset", "discord", "--output", "ndjson",
            ])
            .arg("175928847299117063")
            .output()
            .unwrap(),
    );
    assert_eq!(rows[0]["layout"], "discord");
    assert!(
        rows[0]["why"]
            .as_str()
            .unwrap()
            .contains("the configured layout")
    );
    // A small number is no ID of any layout: exit 2, named.
    sb.assert_refused(
        &["decode", "--guess", "12345"],
        2,
        "no known layout gives it a plausible time",
    );
}

#[test]
fn guess_marks_a_worker_this_host_issued_with() {
    let sb = Sandbox::new();
    // Issue a few IDs as worker 7, which leaves its state file in the sandbox's state dir.
    let out = sb.run_ok(["next", "--snowflake", "--worker-id", "7", "-n", "1"]);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let rows = ndjson(&sb.run(["decode", "--guess", "--output", "ndjson", &id]));
    assert_eq!(rows[0]["layout"], "leaf");
    assert_eq!(rows[0]["worker"], 7);
    let why = rows[0]["why"].as_str().unwrap();
    assert!(why.contains("worker 7 issued IDs on this host"), "{why}");
    assert!(why.contains("snowflake-leaf-7.json"), "{why}");

    // Issue 45 #4: an ID whose Leaf reading (worker 1, 2015) predates worker 1's first use on
    // this host earns no credit from it: the Sonyflake reading of 2025 stays first.
    sb.run_ok(["next", "--snowflake", "--worker-id", "1", "-n", "1"]);
    let rows = ndjson(&sb.run([
        "decode",
        "--guess",
        "--output",
        "ndjson",
        "569093904138244660",
    ]));
    assert_eq!(rows[0]["layout"], "sonyflake", "{rows:?}");
    for row in &rows {
        let why = row["why"].as_str().unwrap_or_default();
        assert!(!why.contains("on this host"), "{row}");
    }
}

fn write_log(sb: &Sandbox) -> (std::path::PathBuf, [u64; 3]) {
    let ids = [
        leaf_id(60_000, 7, 3),
        leaf_id(120_000, 9, 0),
        leaf_id(1_000, 1, 1),
    ];
    let v7_ms = now_ms() - 5_000;
    let uuid = format!("{:012x}", v7_ms);
    let uuid = format!("{}-{}-7abc-8def-0123456789ab", &uuid[..8], &uuid[8..]);
    let log = format!(
        "2026-01-01 INFO order {} created by user 12345 phone 4915112345678\n\
         {{\"payment\":\"{}\",\"order\":\"{}\",\"req\":\"{uuid}\"}}\n\
         no ids here, only 123456789012345678901 which is too long\n\
         tail {}",
        ids[0], ids[1], ids[0], ids[2]
    );
    let path = sb.path().join("app.log");
    std::fs::write(&path, log).unwrap();
    (path, ids)
}

#[test]
fn scan_annotates_each_line_in_place() {
    let sb = Sandbox::new();
    let (path, ids) = write_log(&sb);
    let out = support::run_ok(sb.leafctl().args(["decode", "--scan"]).arg(&path));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no colour off a terminal");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "every line, IDs or not:\n{text}");
    let l = Layout::preset(Preset::Leaf);
    let time = |id: u64| {
        let ms = l.unix_ms(l.decode(id).unwrap().ticks);
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    assert_eq!(
        lines[0],
        format!(
            "2026-01-01 INFO order {} [{} worker=7 seq=3] created by user 12345 phone 4915112345678",
            ids[0],
            time(ids[0])
        )
    );
    assert!(lines[1].contains(&format!("{} [{} worker=9 seq=0]", ids[1], time(ids[1]))));
    assert!(lines[1].contains("-0123456789ab [uuidv7 "), "{}", lines[1]);
    assert_eq!(
        lines[2],
        "no ids here, only 123456789012345678901 which is too long"
    );
    assert!(lines[3].starts_with(&format!("tail {} [", ids[2])));
}

#[test]
fn scan_records_carry_file_line_and_column() {
    let sb = Sandbox::new();
    let (path, ids) = write_log(&sb);
    let missing = sb.path().join("missing.log");
    let out = sb
        .leafctl()
        .args(["decode", "--scan", "--output", "ndjson"])
        .arg(&path)
        .arg(&missing)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a missing file is bad input");
    let err = stderr(&out);
    support::assert_contains_all(&err, &["cannot open", "missing.log"]);
    let recs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 10, "5 IDs in each of the two readable files");
    let first = &recs[0];
    assert_eq!(first["file"], path.to_str().unwrap());
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(1), Some(23))
    );
    assert_eq!(first["id"], ids[0].to_string());
    assert_eq!(
        (first["worker"].as_u64(), first["sequence"].as_u64()),
        (Some(7), Some(3))
    );
    assert_eq!(recs[3]["layout"], "uuidv7");
    assert_eq!(
        (recs[3]["line"].as_u64(), recs[4]["line"].as_u64()),
        (Some(2), Some(4))
    );
    // TSV: a header, then one line per ID.
    let out = sb
        .leafctl()
        .args(["decode", "--scan", "--output", "tsv"])
        .write_stdin(std::fs::read(&path).unwrap())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("file\tline\tcolumn\tid\tlayout\ttime (UTC)\tworker\tsequence")
    );
    let row: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(&row[..5], ["-", "1", "23", &ids[0].to_string(), "leaf"]);
    assert_eq!(&row[6..], ["7", "3"]);
}

#[test]
fn scan_colours_on_a_terminal_unless_no_color() {
    let sb = Sandbox::new();
    let (path, ids) = write_log(&sb);
    let shown = on_a_terminal_of(
        &sb,
        200,
        &format!("'{{bin}}' decode --scan '{}'", path.display()),
        None,
    );
    assert!(shown.contains("\x1b[22;36m ["), "{shown:?}");
    assert!(shown.contains(&ids[0].to_string()));
    let plain = on_a_terminal_of(
        &sb,
        200,
        &format!("NO_COLOR=1 '{{bin}}' decode --scan '{}'", path.display()),
        None,
    );
    assert!(!plain.contains("\x1b["), "{plain:?}");
    assert!(plain.contains(" worker=7 seq=3]"));
}

#[test]
fn scan_streams_and_ends_quietly_under_head() {
    let sb = Sandbox::new();
    let id = leaf_id(1000, 3, 3);
    let big: String = (0..300_000)
        .map(|i| format!("{i} INFO order {id} created\n"))
        .collect();
    let file = sb.path().join("big.log");
    std::fs::write(&file, big).unwrap();
    let mut cmd = std::process::Command::new("bash");
    cmd.args([
        "-c",
        r#"set -o pipefail; "$LEAFCTL_BIN" decode --scan "$LOG" | head -2"#,
    ]);
    let isolated = sb.leafctl_std();
    for (k, v) in isolated.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("LEAFCTL_BIN", isolated.get_program())
        .env("LOG", &file)
        .current_dir(sb.path());
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(err.is_empty(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 2);
    assert!(text.starts_with(&format!("0 INFO order {id} [")), "{text}");
}

#[test]
fn around_gives_the_workers_range_and_its_sql() {
    let sb = Sandbox::new();
    let id = leaf_id(3_600_000, 7, 5);
    let v = support::json(&sb.run(support::words(&format!(
        "decode --around {id} --window 1m --output json"
    ))));
    let l = Layout::preset(Preset::Leaf);
    let lo: u64 = v["min_id"].as_str().unwrap().parse().unwrap();
    let hi: u64 = v["max_id"].as_str().unwrap().parse().unwrap();
    let t = l.decode(id).unwrap().ticks;
    assert_eq!(l.decode(lo).unwrap().ticks, t - 60_000);
    assert_eq!(l.decode(hi).unwrap().ticks, t + 60_000);
    assert_eq!(
        (l.decode(lo).unwrap().worker, l.decode(hi).unwrap().worker),
        (7, 7)
    );
    assert_eq!(
        v["sql"],
        format!("WHERE id BETWEEN {lo} AND {hi} AND (id >> 12) & 1023 = 7")
    );
    // Text for people, with the SQL line.
    sb.leafctl()
        .args(["decode", "--around", &id.to_string()])
        .assert()
        .success()
        .stdout(predicate::str::contains("(leaf, worker 7)"))
        .stdout(predicate::str::contains("SQL:    WHERE id BETWEEN"));
    // A UUIDv7's neighbours are quoted bounds; a UUIDv1 has none.
    sb.leafctl()
        .args(["decode", "--around", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "--window", "1s"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "WHERE id BETWEEN '017f22e2-75c8-7000-8000-000000000000' AND '017f22e2-7d98-7fff-bfff-ffffffffffff'",
        ));
    sb.assert_refused(
        &["decode", "--around", "C232AB00-9414-11EC-B3C8-9F6BDECED846"],
        2,
        "do not sort by time",
    );
    sb.assert_refused(
        &[
            "decode",
            "--around",
            &id.to_string(),
            "--window",
            "ten minutes",
        ],
        2,
        "10m",
    );
}

/// Issue 36, items 13 and 15: without a preset, `decode` and `decode --guess` judge a number by
/// the same rule (145344012, a tweet ID of 2007 from before Twitter's snowflake, is below 2^31:
/// no layout's ID), and a Mastodon status ID read as a Leaf ID from 2011 comes with a note.
#[test]
fn decode_and_guess_agree_and_a_mastodon_id_is_noted() {
    let sb = Sandbox::new();
    for args in [
        &["decode", "145344012"][..],
        &["decode", "--guess", "145344012"],
    ] {
        sb.leafctl()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("below 2^31"));
    }
    // mastodon.social, created_at 2023-11-03T05:56:19.586Z.
    let out = sb.run_ok(["decode", "111345072838007286"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("2011-09-07T07:48:28.712Z"));
    let err = stderr(&out);
    support::assert_contains_all(
        &err,
        &[
            "--guess ranks mastodon first (2023-11-03T05:56:19.583Z)",
            "--preset mastodon",
        ],
    );
    // A Leaf ID of today has no note.
    let out = sb.run(["decode", &leaf_id(60_000, 3, 2000).to_string()]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
}

/// Issue 36, item 14: a log line's own Unix time in ns is no snowflake ID (said in a note),
/// and a YAML `!!binary` block's indented base64 yields no KSUID.
#[test]
fn scan_passes_over_nanosecond_times_and_indented_base64() {
    let sb = Sandbox::new();
    let ns = now_ms() as u64 * 1_000_000 + 123_456;
    let id = leaf_id(60_000, 3, 7);
    let text = format!(
        "{{\"ts\":{ns},\"id\":{id}}}\n      body:\n        string: !!binary |\n          2XWjGwE0dSaVAFtIAtICNBzRjEH/oMCb079f+gp9nd0t4xRBpUEEKgxy4lKxbtFcI6HPNBYtUHXM\n"
    );
    let rows = ndjson(
        &sb.leafctl()
            .args(["decode", "--scan", "--output", "ndjson"])
            .write_stdin(text)
            .output()
            .unwrap(),
    );
    let found: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(found, [id.to_string()]);
    let out = sb
        .leafctl()
        .args(["decode", "--scan"])
        .write_stdin(format!("at {ns} done\n"))
        .output()
        .unwrap();
    assert_eq!(stdout_of(&out), format!("at {ns} done\n"));
    support::assert_stderr_has(
        &out,
        "1 number of 19 digits taken as Unix times in nanoseconds",
    );
}

fn stdout_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}
