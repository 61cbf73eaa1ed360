//! Issue 36: what operators and incident engineers tripped over. Each test names its item and
//! checks the output a script or a person reads (stdout, stderr, exit code).
//!
//! Here, the CLI's own output: rows, tables, JSON errors, a broken config file, flags refused.
//! Beside it: `databases` (a PostgreSQL socket and password files, a `mysql://` registry, a free
//! etcd id), `decode` (times only, `--scan`, `--around`, `--guess`) and `server` (running out,
//! visible on the status JSON, `/metrics` and `/readyz`, and the example alert rules).

use crate::support;

mod databases;
mod decode;
mod server;

use support::{Sandbox, stderr};

pub(super) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Item 3: a list with no rows is still rows: the TSV header off a terminal (text or tsv), `[]`
/// in JSON, nothing in NDJSON; the "no tags" sentence goes to stderr (none with -q).
#[test]
fn an_empty_tag_list_prints_rows_not_prose() {
    let sb = Sandbox::with_tag("order", "1000");
    let header = "tag\tmax_id\tstep\tdescription\tupdate_time\tids_left\theadroom\n";
    for format in ["text", "tsv"] {
        let out = sb.run_ok(["tag", "list", "--prefix", "nomatch", "--output", format]);
        assert_eq!(stdout(&out), header, "{format}");
        let err = stderr(&out);
        assert!(
            err.starts_with("note: no tags starting with \"nomatch\""),
            "{format}: {err}"
        );
    }
    let out = sb.run(["-q", "tag", "list", "--match", "x*", "--output", "tsv"]);
    assert_eq!(stdout(&out), header);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let out = sb.run(["tag", "list", "--prefix", "nomatch", "--output", "json"]);
    assert_eq!(stdout(&out).trim(), "[]");
    let out = sb.run(["tag", "list", "--prefix", "nomatch", "--output", "ndjson"]);
    assert!(out.stdout.is_empty());
    // A list with rows has the header once, then one line per tag.
    let out = sb.run(["tag", "list", "--output", "tsv"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[1].starts_with("order\t1\t1000\t"), "{text}");
    assert!(lines[1].ends_with("\t9223372036854775806\tok"), "{text}");
}

/// Item 9: the help's counting example counts tags, not tags plus a header; `--output tsv` on
/// a command without rows names the subcommand.
#[test]
fn help_examples_count_what_they_say() {
    let sb = Sandbox::new();
    for t in ["tenant-a", "tenant-b", "other"] {
        sb.leafctl().args(["tag", "add", t]).assert().success();
    }
    let help = sb.run(["tag", "list", "--help"]);
    let help = stdout(&help);
    let line = help
        .lines()
        .find(|l| l.contains("count the tenant tags"))
        .expect("the counting example");
    assert!(line.contains("--output ndjson | wc -l"), "{line}");
    let out = sb.run(["tag", "list", "--prefix", "tenant-", "--output", "ndjson"]);
    assert_eq!(stdout(&out).lines().count(), 2);

    let out = sb.run(["tag", "show", "other", "--output", "tsv"]);
    assert_eq!(out.status.code(), Some(2));
    support::assert_stderr_has(&out, "--output tsv is not available for `leafctl tag show`");
}

/// Item 12 (the `tag list`/`tag show` side): IDs left, claims left and a warning before a tag
/// runs out, not only once it has. The case: 806 IDs left and a step of 1,000.
#[test]
fn tags_running_out_are_visible_before_they_fail() {
    let sb = Sandbox::with_tag("plenty", "1000");
    let start = (i64::MAX - 806).to_string();
    sb.leafctl()
        .args(["tag", "add", "nearly", "--start", &start])
        .assert()
        .success();
    let low_start = (i64::MAX - 500_000).to_string();
    sb.leafctl()
        .args(["tag", "add", "low", "--start", &low_start])
        .assert()
        .success();

    let out = sb.run_ok(["tag", "show", "nearly", "--output", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["ids_left"], "806");
    assert_eq!(j["claims_left"], "0");
    assert_eq!(j["headroom"], "last");
    // Under --output json the warning is JSON too.
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert!(
        err["warning"]
            .as_str()
            .unwrap()
            .starts_with("tag nearly has 806 IDs left, less than its step 1000"),
        "{err}"
    );
    let out = sb.run(["tag", "show", "nearly"]);
    assert!(
        stderr(&out).starts_with("warning: tag nearly has 806 IDs left"),
        "{}",
        stderr(&out)
    );

    let out = sb.run(["tag", "show", "low"]);
    let text = stdout(&out);
    assert!(text.contains("ids_left\t500000"), "{text}");
    assert!(text.contains("claims_left\t500"), "{text}");
    assert!(text.contains("headroom\tlow"), "{text}");
    assert!(stderr(&out).contains("tag low is running out: 500000 IDs left, 500 claims"));

    // A healthy tag: ok, and no warning.
    let out = sb.run(["tag", "show", "plenty", "--output", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["headroom"], "ok");
    assert_eq!(j["ids_left"], "9223372036854775806");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    // The list marks both and warns once, naming them; -q keeps stderr empty.
    let out = sb.run(["tag", "list"]);
    let text = stdout(&out);
    assert!(text.contains("\t806\tlast"), "{text}");
    assert!(text.contains("\t500000\tlow"), "{text}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("warning: 2 tags are running out of IDs: low, nearly"),
        "{err}"
    );
    let out = sb.run(["-q", "tag", "list"]);
    assert!(out.stderr.is_empty());

    // What the warning predicts is what happens: the next claim of a step fails.
    let out = sb.run(["next", "nearly", "-n", "1000"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// Item 10: tables are for terminals; piped, `tag show` and `config show` are tab-separated
/// lines. A tag updated just now is "0s ago", never "in 0s".
#[test]
fn piped_tables_have_no_box_and_no_future_ages() {
    let sb = Sandbox::with_tag("order", "1000");
    for args in [&["tag", "show", "order"][..], &["config", "show"]] {
        let out = sb.run_ok(args);
        let text = stdout(&out);
        assert!(
            !text.contains('│') && !text.contains('┆') && !text.contains('─'),
            "{args:?}: {text}"
        );
        assert!(text.lines().all(|l| l.contains('\t')), "{args:?}: {text}");
    }
    let out = sb.run(["tag", "show", "order"]);
    let text = stdout(&out);
    let updated = text
        .lines()
        .find(|l| l.starts_with("updated\t"))
        .expect("updated row");
    assert!(updated.ends_with("s ago)"), "{updated}");
    assert!(!updated.contains("(in "), "{updated}");
}

/// Every stderr line of a run in `--output json|ndjson`, each one JSON error object.
fn json_errors(out: &std::process::Output) -> Vec<serde_json::Value> {
    stderr(out)
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}"));
            assert!(v["error"]["message"].is_string(), "{l}");
            v
        })
        .collect()
}

/// Item 11: with `--output json` or `ndjson`, an error is one JSON object on stderr (code,
/// exit, message, hint): the CLI's own errors, the library's, clap's, and decode's per value.
#[test]
fn errors_are_json_when_the_output_is() {
    let sb = Sandbox::with_tag("order", "1000");
    for format in ["json", "ndjson"] {
        // The library's error (an unknown tag): exit 2, code usage, the hint of text mode.
        let out = sb.run(["--output", format, "next", "nosuch"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let errs = json_errors(&out);
        assert_eq!(errs.len(), 1, "{errs:?}");
        let e = &errs[0]["error"];
        assert_eq!(e["code"], "usage");
        assert_eq!(e["exit"], 2);
        assert!(e["message"].as_str().unwrap().contains("nosuch"), "{e}");
        assert!(
            e["hint"].as_str().unwrap().contains("leafctl tag add"),
            "{e}"
        );

        // clap's refusal of an unknown flag.
        let out = sb.run(["next", "order", "--bogus", &format!("--output={format}")]);
        assert_eq!(out.status.code(), Some(2));
        let errs = json_errors(&out);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("--bogus")
        );

        // A runtime failure: exit 1, code runtime.
        let out = sb
            .leafctl()
            .args([
                "--output",
                format,
                "--db",
                "postgres://leaf@127.0.0.1:1/leaf",
            ])
            .args(["tag", "list"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let errs = json_errors(&out);
        assert_eq!(errs[0]["error"]["code"], "runtime");
        assert!(errs[0]["error"]["hint"].is_string());

        // decode: one object per bad value, then the closing one; good rows still on stdout.
        let out = sb.run(["--output", format, "decode", "12x", "4194308101"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stdout).contains("4194308101"));
        let errs = json_errors(&out);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("12x")
        );
        assert!(
            errs[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("1 of 2 values")
        );
    }
    // Text stays text.
    let out = sb.run(["next", "nosuch"]);
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err}");
    support::assert_contains_all(&err, &["\n  hint: "]);
}

/// Item 4: a config file with an error stops the commands that depend on it, with a hint that
/// works (not `config show`, which fails the same way); `decode` runs on, saying so.
#[test]
fn a_broken_config_file_does_not_stop_decode() {
    let sb = Sandbox::new();
    let cfg = sb.path().join("broken.toml");
    std::fs::write(&cfg, "[snowflake]\npreset = \"discord\"\nbogus = 1\n").unwrap();
    let out = support::run_ok(
        sb.leafctl()
            .arg("--config")
            .arg(&cfg)
            .args(["decode", "4194308101"]),
    );
    assert!(stdout(&out).contains("2010-11-04T01:42:55.657Z"));
    let err = stderr(&out);
    assert!(err.starts_with("warning: config file"), "{err}");
    support::assert_contains_all(&err, &["line 3", "decode runs without it"]);
    // Other commands stop, and the hint's way out works.
    let out = sb
        .leafctl()
        .arg("--config")
        .arg(&cfg)
        .args(["config", "show"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("line 3, column 1: unknown field `bogus`"),
        "{err}"
    );
    assert!(!err.contains("`leafctl config show` lists"), "{err}");
    assert!(
        err.contains("`--config /dev/null` runs without any file"),
        "{err}"
    );
    sb.leafctl()
        .args(["--config", "/dev/null", "config", "show"])
        .assert()
        .success();
    let help = sb.run(["config", "show", "--help"]);
    assert!(stdout(&help).contains("snowflake.preset"));
}

/// Item 8: flags that would be ignored are refused, naming them; -q keeps `tag add` quiet.
#[test]
fn ignored_flags_are_refused() {
    let sb = Sandbox::new();
    let out = sb.run_ok(["-q", "tag", "add", "demo"]);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    for (args, flag) in [
        (
            &["next", "demo", "--preset", "discord"][..],
            "--preset is for snowflake IDs",
        ),
        (
            &["next", "demo", "--worker-id", "3"],
            "--worker-id is for snowflake IDs",
        ),
        (
            &["next", "demo", "--registry", "local"],
            "--registry is for snowflake IDs",
        ),
        (
            &["decode", "--window", "1m", "4194308101"],
            "--window only applies to --around",
        ),
        (
            &["decode", "--to", "now", "4194308101"],
            "--to only applies to --from",
        ),
    ] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(flag) && err.contains("hint:"),
            "{args:?}: {err}"
        );
    }
    // Nothing was claimed by the refused runs: the tag's first ID is still 1.
    let out = sb.run(["next", "demo"]);
    assert_eq!(stdout(&out).trim(), "1");
}

/// Item 11, the rest of stderr: with `--output json|ndjson` notes and warnings are JSON
/// objects too (`{"note": ...}`, `{"warning": ...}`), so stderr is JSON lines throughout.
#[test]
fn notes_and_warnings_are_json_when_the_output_is() {
    let sb = Sandbox::new();
    let start = (i64::MAX - 806).to_string();
    sb.leafctl()
        .args(["tag", "add", "nearly", "--start", &start])
        .assert()
        .success();
    for args in [
        // Read as leaf it is in the future: a note says which layout it was read under.
        &["decode", "2200000000000000000"][..],
        &["tag", "list", "--prefix", "none"],
        &["tag", "list"],
        &["tag", "show", "nearly"],
    ] {
        let out = support::run_ok(sb.leafctl().args(["--output", "json"]).args(args));
        let err = stderr(&out);
        assert!(!err.is_empty(), "{args:?}: something to say");
        for line in err.lines() {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{args:?}: {line:?} is not JSON: {e}"));
            assert!(v["note"].is_string() || v["warning"].is_string(), "{line}");
        }
    }
}
