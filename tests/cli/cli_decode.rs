//! Black-box tests of `leafctl decode`.

use crate::support;

mod real_ids;
mod terminal;

use leafctl::snowflake::{LEAF_EPOCH_MS, Layout, Preset};
use predicates::prelude::*;
use support::{Sandbox, json, stderr};

/// Worker 1, sequence 5, 1000 ms after Leaf's epoch (2010-11-04T01:42:55.657Z).
const KNOWN: u64 = (1000 << 22) | (1 << 12) | 5;

#[test]
fn decodes_a_known_id_to_json() {
    let sb = Sandbox::new();
    let v = json(&sb.run(["decode", "--output", "json", &KNOWN.to_string()]));
    assert_eq!(
        v,
        serde_json::json!([{
            "id": KNOWN.to_string(),
            "time": "2010-11-04T01:42:55.657Z",
            "timestamp_ms": LEAF_EPOCH_MS + 1000,
            "worker": 1,
            "sequence": 5,
            "layout": "leaf"
        }])
    );
}

#[test]
fn text_output_off_a_terminal_is_tab_separated_with_a_header() {
    let sb = Sandbox::new();
    let out = sb.run_ok(["decode", &KNOWN.to_string()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        lines[0],
        ["id", "time (UTC)", "age", "worker", "sequence", "layout"],
        "the table's columns"
    );
    assert_eq!(lines[1][0], KNOWN.to_string());
    assert_eq!(lines[1][1], "2010-11-04T01:42:55.657Z");
    assert!(lines[1][2].ends_with(" ago"), "{}", lines[1][2]);
    assert_eq!(&lines[1][3..], ["1", "5", "leaf"]);
    assert!(!text.contains('│'), "no table off a terminal");
}

#[test]
fn hex_and_stdin_inputs() {
    let sb = Sandbox::new();
    let hex = format!("{KNOWN:#x}");
    let v = json(&sb.run(["decode", "--output", "json", &hex]));
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
    let v = json(&sb.run(support::words(&format!(
        "decode --preset sonyflake --output json {id}"
    ))));
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
            .args(support::words(
                "decode --epoch 2020-01-01T00:00:00Z --layout 40,11,12 --unit-ms 10",
            ))
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
    let out = sb.run(support::words(&format!(
        "decode --output json abc {KNOWN} -5 9223372036854775808 0xnope"
    )));
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], KNOWN.to_string());
    // With --output json every error is a JSON object on its own line (issue 36, item 11).
    let err = json_error_messages(&out);
    support::assert_contains_all(
        &err,
        &[
            "\"abc\": not a number",
            "\"-5\": negative",
            "\"9223372036854775808\": over 2^63-1",
            "\"0xnope\"",
        ],
    );
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

/// Nothing to decode (an empty file, a filter that matched nothing) is an empty answer, as the
/// book says (docs/decode.md): exit 0, nothing in text, `[]` in JSON (issue 18 #19).
#[test]
fn nothing_to_decode_is_an_empty_answer() {
    let sb = Sandbox::new();
    sb.leafctl()
        .arg("decode")
        .write_stdin("")
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    sb.leafctl()
        .args(["decode", "--output", "json"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("[]\n");
}

#[test]
fn from_to_gives_the_bounding_ids() {
    let sb = Sandbox::new();
    let v = json(&sb.run(support::words(
        "decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z --output json",
    )));
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

    sb.assert_refused(
        &["decode", "--from", "2026-11-21", "--to", "2026-11-20"],
        2,
        "before --from",
    );
    sb.assert_refused(&["decode", "--from", "not-a-time"], 2, "invalid --from");
    sb.assert_prints(&["decode", "--from", "2026-11-21"], "WHERE id BETWEEN");

    // A date as --to is the whole day (issue 18 #8).
    let day = json(&sb.run(support::words(
        "decode --from 2026-11-21 --to 2026-11-21 --output json",
    )));
    assert_eq!(day["to"], "2026-11-21T23:59:59.999Z", "{day}");
    let hi: u64 = day["max_id"].as_str().unwrap().parse().unwrap();
    let top = l.decode(hi).unwrap();
    assert_eq!(l.unix_ms(top.ticks), from - 10 * 3_600_000 + 86_400_000 - 1);
    // A future --from without --to is said as such, not as "--to is before --from" (#9).
    sb.leafctl()
        .args(["decode", "--from", "2090-01-01"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--from 2090-01-01 is in the future",
        ))
        .stderr(predicate::str::contains("before").not());
}

/// Leaf IDs spread over 2011..2025 with varied workers and sequences, deterministically.
fn leaf_ids(n: usize) -> Vec<u64> {
    let l = Layout::preset(Preset::Leaf);
    let span = (1_735_689_600_000 - LEAF_EPOCH_MS) as u64; // up to 2025-01-01
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut t = 0u64;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Runs of IDs in one second, as in a log, with a jump now and then.
            if i.is_multiple_of(50) {
                t = x % span;
            } else {
                t = (t + x % 7).min(span);
            }
            l.encode(t, (x >> 20) % 1024, (x >> 40) % 4096).unwrap()
        })
        .collect()
}

/// What today's decoder says of an ID: (time, timestamp_ms, worker, sequence).
fn expected(id: u64) -> (String, i64, u64, u64) {
    let l = Layout::preset(Preset::Leaf);
    let p = l.decode(id).unwrap();
    let ms = l.unix_ms(p.ticks);
    let time = chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    (time, ms, p.worker, p.sequence)
}

#[derive(serde::Deserialize)]
struct Obj<'a> {
    id: &'a str,
    time: &'a str,
    timestamp_ms: i64,
    worker: u64,
    sequence: u64,
}

fn check_obj(o: &Obj, id: u64) {
    assert_eq!(o.id, id.to_string());
    let (time, ms, worker, sequence) = expected(id);
    assert_eq!(
        (o.time, o.timestamp_ms, o.worker, o.sequence),
        (time.as_str(), ms, worker, sequence),
        "{id}"
    );
}

#[test]
fn a_million_ids_decode_the_same_in_every_format_with_bad_lines_numbered() {
    const N: usize = 1_000_000;
    const BAD_AT: [usize; 2] = [400_000, 777_777]; // 1-based line numbers
    let sb = Sandbox::new();
    let ids = leaf_ids(N);
    let mut input = String::with_capacity(N * 20 + 64);
    let mut good = Vec::with_capacity(N);
    let mut line = 0;
    for id in &ids {
        line += 1;
        if BAD_AT.contains(&line) {
            input.push_str(if line == BAD_AT[0] { "12x4\n" } else { "-7\n" });
            line += 1;
        }
        input.push_str(&format!("{id}\n"));
        good.push(*id);
    }
    let file = sb.path().join("ids.txt");
    std::fs::write(&file, &input).unwrap();
    let sample = |i: usize| i.is_multiple_of(4999) || i + 1 == N;

    for format in ["text", "tsv", "json", "ndjson"] {
        let out = sb
            .leafctl()
            .args(["decode", "--output", format])
            .pipe_stdin(&file)
            .unwrap()
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{format}: bad lines give exit 2"
        );
        // Text and TSV errors are prose; JSON and NDJSON ones JSON objects (issue 36, item 11).
        let (err, prefix) = match format {
            "json" | "ndjson" => (json_error_messages(&out), ""),
            _ => (stderr(&out), "error: "),
        };
        assert!(
            err.contains(&format!("{prefix}line 400000: \"12x4\": not a number")),
            "{format}: {err}"
        );
        assert!(
            err.contains(&format!("{prefix}line 777777: \"-7\": negative")),
            "{format}: {err}"
        );
        assert!(
            err.contains(&format!("2 of {} values", N + 2)),
            "{format}: {err}"
        );
        match format {
            "text" | "tsv" => {
                let text = std::str::from_utf8(&out.stdout).unwrap();
                let mut lines = text.lines();
                assert_eq!(
                    lines.next(),
                    Some("id\ttime (UTC)\tage\tworker\tsequence\tlayout")
                );
                let mut n = 0;
                for (i, l) in lines.enumerate() {
                    n += 1;
                    if sample(i) {
                        let f: Vec<&str> = l.split('\t').collect();
                        let (time, _, worker, sequence) = expected(good[i]);
                        assert_eq!(f[0], good[i].to_string());
                        assert_eq!(f[1], time);
                        assert!(f[2].ends_with(" ago"), "{l}");
                        assert_eq!((f[3], f[4]), (&*worker.to_string(), &*sequence.to_string()));
                    }
                }
                assert_eq!(n, N, "{format}");
            }
            "json" => {
                let all: Vec<Obj> = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(all.len(), N);
                for (i, o) in all.iter().enumerate() {
                    if sample(i) {
                        check_obj(o, good[i]);
                    }
                }
            }
            _ => {
                let text = std::str::from_utf8(&out.stdout).unwrap();
                let mut n = 0;
                for (i, l) in text.lines().enumerate() {
                    n += 1;
                    if sample(i) {
                        check_obj(&serde_json::from_str(l).unwrap(), good[i]);
                    }
                }
                assert_eq!(n, N);
            }
        }
    }
}

#[test]
fn rows_appear_as_input_arrives_and_a_closed_reader_ends_quietly() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc;
    use std::time::Duration;

    let sb = Sandbox::new();
    let mut child = sb
        .leafctl_std()
        .args(["decode"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        // Like `| head -4`: the header and three rows, then the reader goes away.
        for l in BufReader::new(stdout).lines().take(4) {
            if tx.send(l.unwrap()).is_err() {
                break;
            }
        }
    });
    for i in 0..3 {
        writeln!(stdin, "{}", KNOWN + i).unwrap();
    }
    stdin.flush().unwrap();
    // Input stays open: the rows must come before it ends.
    let mut got = Vec::new();
    for _ in 0..4 {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(l) => got.push(l),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("only {got:?} before input ended: {e}");
            }
        }
    }
    reader.join().unwrap();
    assert!(got[0].starts_with("id\t"), "{got:?}");
    assert!(got[3].starts_with(&format!("{}\t", KNOWN + 2)), "{got:?}");
    // More input after the reader left: the next write fails and leafctl ends quietly.
    for i in 0..100_000u64 {
        if writeln!(stdin, "{}", KNOWN + i).is_err() {
            break;
        }
    }
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("leafctl did not end after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "exit {status:?}: {err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn head_on_a_million_ids_ends_early_and_quietly() {
    let sb = Sandbox::new();
    let file = sb.path().join("ids.txt");
    let input: String = leaf_ids(1_000_000)
        .iter()
        .map(|id| format!("{id}\n"))
        .collect();
    std::fs::write(&file, input).unwrap();
    let bin = sb.leafctl_std().get_program().to_str().unwrap().to_string();
    for format in ["text", "json", "ndjson"] {
        let mut cmd = std::process::Command::new("bash");
        cmd.args([
            "-c",
            r#"set -o pipefail; "$LEAFCTL_BIN" decode --output "$FORMAT" < "$IDS" | head -3"#,
        ]);
        let isolated = sb.leafctl_std();
        for (k, v) in isolated.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("LEAFCTL_BIN", &bin)
            .env("IDS", &file)
            .env("FORMAT", format)
            .current_dir(sb.path());
        let out = cmd.output().unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{format}: {:?} {err}", out.status);
        assert!(err.is_empty(), "{format}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    }
}

#[test]
fn tsv_and_ndjson_are_for_commands_that_print_rows() {
    let sb = Sandbox::new();
    for format in ["tsv", "ndjson"] {
        sb.leafctl()
            .args(["tag", "show", "order", "--output", format])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "--output {format} is not available for `leafctl tag show`"
            )))
            .stderr(predicate::str::contains(if format == "tsv" {
                "hint: use --output text or --output json"
            } else {
                // NDJSON asked for: the error is JSON too (issue 36, item 11).
                "\"hint\":\"use --output text or --output json"
            }));
    }
    // decode --from/--to: one row, in the same forms.
    let out = support::run_ok(
        sb.leafctl()
            .args(support::words(
                "decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z",
            ))
            .args(["--output", "tsv"]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "from\tto\tmin_id\tmax_id");
    assert!(lines[1].starts_with("2026-11-21T10:00:00.000Z\t2026-11-21T11:00:00.000Z\t"));
    let out = sb
        .leafctl()
        .args(support::words(
            "decode --from 2026-11-21T10:00:00Z --to 2026-11-21T11:00:00Z",
        ))
        .args(["--output", "ndjson"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["from"], "2026-11-21T10:00:00.000Z");
}

/// Issue 33: a closed, full or abandoned stderr never panics (exit 101): `decode abc` still
/// ends with its usage error's exit 2 (`2>/dev/full`, `2>&-`, `2>&1 | head -c1`); a full stdout
/// is exit 3 and says so; a reader gone from stdout is not an error.
#[test]
fn output_failures_never_panic_and_end_with_a_documented_code() {
    use std::io::Read;
    use std::process::Stdio;
    use support::{Sink, redirect};
    let sb = Sandbox::new();
    for sink in [Sink::Full, Sink::Closed, Sink::DeadPipe] {
        let mut cmd = sb.leafctl_std();
        cmd.args(["decode", "abc"]).stdout(Stdio::piped());
        redirect(&mut cmd, 2, sink);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
    // `2>&1 | head -c1`, three times (it panicked in two runs of three): both streams into one
    // pipe whose reader takes one byte and goes.
    for _ in 0..3 {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut child = sb
            .leafctl_std()
            .args(["decode", "abc"])
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .spawn()
            .unwrap();
        let mut one = [0u8; 1];
        reader.read_exact(&mut one).unwrap();
        drop(reader);
        let status = child.wait().unwrap();
        assert_eq!(one[0], b'e', "error: ...");
        assert_eq!(status.code(), Some(2), "{status}");
    }
    // Stdout full: exit 3 with the reason; stdout gone: exit 0.
    let decode_into = |sink| {
        let mut cmd = sb.leafctl_std();
        cmd.args(["decode", "2125018011969523729"])
            .stderr(Stdio::piped());
        redirect(&mut cmd, 1, sink);
        cmd.output().expect("run leafctl decode")
    };
    let out = decode_into(Sink::Full);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    support::assert_stderr_has(
        &out,
        "cannot write to standard output: No space left on device",
    );
    let out = decode_into(Sink::DeadPipe);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// The messages of the JSON error objects on stderr (one per line), one per line; panics on a
/// line that is not one.
fn json_error_messages(out: &std::process::Output) -> String {
    stderr(out)
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}"));
            v["error"]["message"]
                .as_str()
                .unwrap_or_else(|| panic!("no message in {l}"))
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
