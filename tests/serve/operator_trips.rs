//! Issue 36: what operators and incident engineers tripped over. Each test names its item and
//! checks the output a script or a person reads (stdout, stderr, exit code).

use crate::support;

use support::{Sandbox, stderr};

fn stdout(out: &std::process::Output) -> String {
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

/// Items 2 and 5, on a real PostgreSQL: a Unix socket in both of libpq's URL forms; the
/// password from LEAF_DB_PASSWORD_FILE and from systemd's credential directory; a missing
/// password said as such (not as a network problem), and a wrong one's hint naming where it
/// came from.
#[test]
fn postgres_over_a_socket_and_passwords_from_files() {
    use support::postgres::{PASSWORD, Postgres};
    let pg = Postgres::shared();
    let sb = Sandbox::new();
    let db = pg.fresh_db();
    let dir = pg.dir().to_string_lossy().replace('/', "%2F");
    let socket_url = format!("postgres://leaf@{dir}:{}/{db}", pg.port);
    let out = sb.run_ok(["db", "init", "--db", &socket_url]);
    assert!(stdout(&out).contains(&socket_url), "{}", stdout(&out));
    sb.leafctl()
        .args(["tag", "add", "sock", "--db", &socket_url])
        .assert()
        .success();
    let query_url = format!(
        "postgres:///{db}?host={}&port={}&user=leaf",
        pg.dir().display(),
        pg.port
    );
    let out = sb.run(["next", "sock", "-n", "3", "--db", &query_url]);
    assert_eq!(stdout(&out), "1\n2\n3\n", "{}", stderr(&out));
    let out = sb.run(["next", "sock", "-n", "2", "--db", &socket_url]);
    assert_eq!(stdout(&out), "4\n5\n", "{}", stderr(&out));

    // leaf_pw needs its password over TCP. None given: said as such, exit 1.
    let tcp_url = pg.url_for("leaf_pw", &db);
    let out = sb.run(["tag", "list", "--db", &tcp_url]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the server asks for a password and none was given"),
        "{err}"
    );
    assert!(err.contains("LEAF_DB_PASSWORD_FILE"), "{err}");
    assert!(
        !err.contains("check that the database server is up"),
        "{err}"
    );

    // From a file (one trailing line break dropped), and from systemd's credentials.
    let file = sb.path().join("pw");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let out = support::run_ok(
        sb.leafctl()
            .env("LEAF_DB_PASSWORD_FILE", &file)
            .args(["tag", "list", "--db", &tcp_url, "--output", "ndjson"]),
    );
    assert!(stdout(&out).contains("\"sock\""));
    let creds = sb.path().join("creds");
    std::fs::create_dir(&creds).unwrap();
    std::fs::write(creds.join("leaf-db-password"), PASSWORD).unwrap();
    let out = sb
        .leafctl()
        .env("CREDENTIALS_DIRECTORY", &creds)
        .args(["next", "sock", "--db", &tcp_url])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "6\n", "{}", stderr(&out));

    // A wrong password: the hint names where it came from (the file; the URL).
    std::fs::write(&file, "wrong\n").unwrap();
    let out = sb
        .leafctl()
        .env("LEAF_DB_PASSWORD_FILE", &file)
        .args(["tag", "list", "--db", &tcp_url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    support::assert_stderr_has(&out, "the password (given by LEAF_DB_PASSWORD_FILE)");
    let in_url = tcp_url.replace("leaf_pw@", "leaf_pw:wrong@");
    let out = sb.run(["tag", "list", "--db", &in_url]);
    let err = stderr(&out);
    assert!(err.contains("given by the URL"), "{err}");
    assert!(!err.contains("wrong"), "the password is never shown: {err}");

    // A password file that is empty, missing, or given twice at the same level: usage errors.
    std::fs::write(&file, "").unwrap();
    for (env, needle) in [
        (vec![("LEAF_DB_PASSWORD_FILE", file.clone())], "is empty"),
        (
            vec![("LEAF_DB_PASSWORD_FILE", sb.path().join("nope"))],
            "cannot read the database password file",
        ),
        (
            vec![
                ("LEAF_DB_PASSWORD_FILE", file.clone()),
                ("LEAF_DB_PASSWORD", "x".into()),
            ],
            "given twice",
        ),
    ] {
        let mut cmd = sb.leafctl();
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["tag", "list", "--db", &tcp_url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{needle}");
        support::assert_stderr_has(&out, needle);
    }
}

/// Items 6 and 7, on a real MariaDB: a `mysql://` database alone picks its worker registry as
/// a `postgres://` one does; TLS asked of a server without it, a bad URL and an unknown
/// parameter are said in words with a hint that fits.
#[test]
fn mysql_alone_picks_its_registry_and_its_errors_are_words() {
    use support::mariadb::{MariaDb, PASSWORD};
    let db = MariaDb::shared();
    let (_, url) = db.fresh_db_url();
    let sb = Sandbox::new();
    let leafctl = || {
        let mut c = sb.leafctl();
        c.env("LEAF_DB_PASSWORD", PASSWORD);
        c
    };
    support::run_ok(leafctl().args(["db", "init", "--db", &url]));
    let out = support::run_ok(leafctl().args(support::words(&format!(
        "next --snowflake --db {url} --instance 10.36.0.1:8080"
    ))));
    assert_eq!(support::parse_ids(&out.stdout).len(), 1);
    let out = leafctl()
        .args(["workers", "list", "--db", &url, "--output", "json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].to_string().contains("10.36.0.1:8080"), "{rows:?}");

    // Without any registry: the hint names the database ones too.
    let out = sb.run(["next", "--snowflake"]);
    assert_eq!(out.status.code(), Some(2));
    support::assert_stderr_has(&out, "--registry mysql|postgres");

    // TLS asked of a server without it.
    let out = leafctl()
        .args(["tag", "list", "--db", &format!("{url}?tls=true")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(!err.contains("DriverError"), "{err}");
    assert!(err.contains("does not offer TLS"), "{err}");
    assert!(err.contains("turn TLS on at the server"), "{err}");
    assert!(!err.contains("give the CA"), "{err}");

    // A bad URL and an unknown parameter: usage errors in words.
    for (bad, needle) in [
        (
            "mysql://leaf@[::1/leaf".to_string(),
            "not a URL leafctl can read",
        ),
        (
            format!("{url}?sslmode=require"),
            "leafctl reads tls (or ssl), ca (or ca_file)",
        ),
    ] {
        let out = leafctl()
            .args(["tag", "list", "--db", &bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains(needle) && !err.contains("ParseError {"),
            "{bad}: {err}"
        );
    }

    // Asking for more IDs than a tag has left says how many it has.
    leafctl()
        .args(["tag", "add", "demo", "--db", &url])
        .assert()
        .success();
    let out = leafctl()
        .args(["next", "demo", "-n", "9223372036854775807", "--db", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the tag has 9223372036854775806 IDs left"),
        "{err}"
    );
    assert!(!err.contains("has run out"), "{err}");
}

/// Item 9: decode's "the times only" example prints the times only, not the header too.
#[test]
fn decodes_times_only_example_prints_times_only() {
    let sb = Sandbox::new();
    let help = sb.run(["decode", "--help"]);
    let help = stdout(&help);
    let line = help
        .lines()
        .find(|l| l.contains("the times only"))
        .expect("the example");
    let command = line.split("   ").next().unwrap().trim();
    assert!(command.contains("tail -n +2"), "{command}");
    std::fs::write(
        sb.path().join("ids.txt"),
        "4194308101\n175928847299117063\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("leafctl");
    let run = command.replacen("leafctl", &bin.display().to_string(), 1);
    let out = support::run_ok(
        std::process::Command::new("sh")
            .args(["-c", &run])
            .current_dir(sb.path())
            .env("HOME", sb.path())
            .env("XDG_CONFIG_HOME", sb.path())
            .env_remove("LEAF_CONFIG"),
    );
    assert_eq!(
        stdout(&out),
        "2010-11-04T01:42:55.657Z\n2012-03-03T13:01:20.453Z\n"
    );
}

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

/// Item 10, on a real etcd: the dry run of reclaiming an id no lease holds says it is already
/// free, as `--yes` then does, instead of promising to revoke a lease.
#[test]
fn reclaiming_a_free_etcd_id_says_so_before_and_after() {
    use support::etcd::EtcdServer;
    let etcd = EtcdServer::shared();
    let ep = etcd.endpoints();
    let sb = Sandbox::new();
    support::run_ok(
        sb.leafctl()
            .args(["next", "--snowflake", "--etcd", &ep, "--name", "issue36"])
            .args(["--instance", "10.36.0.2:8080"]),
    );
    let reclaim = |extra: &[&str]| {
        sb.leafctl()
            .args([
                "workers", "reclaim", "0", "--etcd", &ep, "--name", "issue36",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // The run released its lease on exit; if the list still shows it live (its last report is
    // recent), --force lets the dry run through, which is what the issue saw.
    let dry = reclaim(&["--force"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    let said = stdout(&dry);
    assert!(!said.contains("would revoke"), "{said}");
    assert!(said.contains("worker id 0 is already free"), "{said}");
    let done = reclaim(&["--force", "--yes"]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(stdout(&done).contains("already free"), "{}", stdout(&done));

    // "For registries, ids in use of the total": `workers list` says it on stderr.
    let list = sb.run_ok(["workers", "list", "--etcd", &ep, "--name", "issue36"]);
    let err = stderr(&list);
    assert!(err.starts_with("note: "), "{err}");
    support::assert_contains_all(
        &err,
        &[
            " of 1024 worker ids in use (live or held) under ",
            ", 1 registered; the leaf layout holds 1024",
        ],
    );
    let quiet = sb.run(["-q", "workers", "list", "--etcd", &ep, "--name", "issue36"]);
    assert!(quiet.stderr.is_empty(), "{}", stderr(&quiet));
    // Nothing registered, piped: the header alone on stdout, the sentence on stderr (item 3).
    let empty = sb.run_ok(["workers", "list", "--etcd", &ep, "--name", "issue36-none"]);
    assert_eq!(
        stdout(&empty),
        "worker\tidentity\tmode\tlast report\tstatus\n"
    );
    support::assert_stderr_has(&empty, "no worker ids registered under");
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

/// Item 14: `--scan`'s ten-year window can be widened (`--since`) or narrowed (`--until`): an
/// account's ObjectId from 2012 in today's log is found when asked for; base64 is no KSUID.
#[test]
fn scan_windows_can_be_chosen_and_base64_is_no_ksuid() {
    let sb = Sandbox::new();
    let log = sb.path().join("app.log");
    let k = "0ujtsYcgvSTl8PAuAdqWYSMnLOv"; // segment's documented KSUID, 2017-10-10
    std::fs::write(
        &log,
        format!(
            "account 4f4b2a1e0000000000000000 created\n\
             now 6836a5c0a1b2c3d4e5f60718 user={k}\n\
             cert MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo/4gSoZaXBHx4mW1bbq1VxSuAw+kQ/ZnQIDAQAB\n"
        ),
    )
    .unwrap();
    let scan = |extra: &[&str]| {
        let out = support::run_ok(
            sb.leafctl()
                .args(["decode", "--scan", "--output", "ndjson"])
                .args(extra)
                .arg(&log),
        );
        stdout(&out)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["id"].as_str().unwrap().to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(scan(&[]), vec!["6836a5c0a1b2c3d4e5f60718", k]);
    assert_eq!(
        scan(&["--since", "2010-01-01"]),
        vec!["4f4b2a1e0000000000000000", "6836a5c0a1b2c3d4e5f60718", k]
    );
    assert_eq!(
        scan(&["--since", "2010-01-01", "--until", "2017-12-31"]),
        vec!["4f4b2a1e0000000000000000", k]
    );
    for (args, needle) in [
        (
            &[
                "decode",
                "--scan",
                "--since",
                "2020-01-01",
                "--until",
                "2019-01-01",
            ][..],
            "--since is after --until",
        ),
        (
            &["decode", "--scan", "--since", "yesterday-ish"],
            "--since \"yesterday-ish\"",
        ),
    ] {
        let out = sb.leafctl().args(args).arg(&log).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        support::assert_stderr_has(&out, needle);
    }
}

/// Item 15: `--around` an ObjectId: its bounds hold every process's IDs of the window, so the
/// process is a filter, in SQL and as a MongoDB query.
#[test]
fn around_an_objectid_filters_by_process_and_gives_a_mongodb_query() {
    let sb = Sandbox::new();
    let out = sb.run_ok(support::words(
        "decode --around 507f1f77bcf86cd799439011 --window 1s --output json",
    ));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["min_id"], "507f1f760000000000000000");
    assert_eq!(v["max_id"], "507f1f78ffffffffffffffff");
    assert_eq!(
        v["sql"],
        "WHERE id BETWEEN '507f1f760000000000000000' AND '507f1f78ffffffffffffffff' AND substr(id, 9, 10) = 'bcf86cd799'"
    );
    let mongo = v["mongo"].as_str().unwrap();
    assert!(
        mongo.starts_with("{_id: {$gte: ObjectId(\"507f1f760000000000000000\")"),
        "{mongo}"
    );
    let text = sb.run(["decode", "--around", "507f1f77bcf86cd799439011"]);
    assert!(
        stdout(&text).contains("\nMongoDB: db.COLLECTION.find({_id:"),
        "{}",
        stdout(&text)
    );
    // A snowflake has no MongoDB line.
    let out = sb.run(support::words(
        "decode --around 1864829180581093376 --output json",
    ));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("mongo").is_none(), "{v}");
}

/// Item 14: numbers of an ID's length that the layout does not make plausible are counted and
/// said (not silently skipped), with what to try.
#[test]
fn scan_says_how_many_id_length_numbers_it_passed_over() {
    let sb = Sandbox::new();
    let out = support::run_ok(
        sb.leafctl()
            .args(["decode", "--scan"])
            .write_stdin("n 9000000000000000000 m 100000000000000000 id 2124080376837046272\n"),
    );
    assert!(stdout(&out).contains("2124080376837046272 [2026-11-21T10:00:00.000Z"));
    let err = stderr(&out);
    assert!(
        err.starts_with("note: 2 numbers of 18-19 digits (the length of leaf IDs) not read as IDs"),
        "{err}"
    );
    support::assert_contains_all(&err, &["--preset", "--since/--until"]);
    let out = sb
        .leafctl()
        .args(["decode", "--scan"])
        .write_stdin("id 2124080376837046272\n")
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
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

/// `--guess` judged on real IDs with their recorded creation times (issue 36, "judged on real
/// IDs"): each fixture decodes to its recorded time under its own layout, and the rank-1 rate
/// per kind is printed (`cargo test --test serve operator_trips::guess_on_real -- --nocapture`).
/// Sources: Twitter's API docs (tweet objects), Discord's API reference (snowflakes), two
/// Mastodon statuses with their created_at recorded in public projects' fixtures
/// (cookiemumbles/justmytoots.com js/testData.js; pschiffmann/initiative's demo status), MongoDB's
/// ObjectId docs, segment's KSUID README, the ULID spec. A small set, not the 653.
#[test]
fn guess_on_real_ids_ranks_as_measured() {
    let fixtures: &[(&str, &str, &str)] = &[
        ("twitter", "1050118621198921728", "2018-10-10T20:19:24"),
        ("twitter", "210462857140252672", "2012-06-06T20:07:10"),
        ("discord", "175928847299117063", "2016-04-30T11:18:25.796"),
        ("mastodon", "109744721228760114", "2023-01-24T14:45:51.9"),
        ("mastodon", "111345072838007286", "2023-11-03T05:56:19.58"),
        (
            "objectid",
            "507f1f77bcf86cd799439011",
            "2012-10-17T21:13:27",
        ),
        (
            "ksuid",
            "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
            "2017-10-10T04:00:47",
        ),
        (
            "ulid",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "2016-07-30T23:54:10.259",
        ),
    ];
    fn layout_of(kind: &str) -> &str {
        match kind {
            "twitter" => "leaf",
            other => other,
        }
    }
    let sb = Sandbox::new();
    let mut rates: std::collections::BTreeMap<&str, (u32, u32)> = Default::default();
    for (kind, id, created) in fixtures {
        let out = sb.run_ok(["decode", "--guess", "--output", "ndjson", id]);
        let rows: Vec<serde_json::Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let own = rows
            .iter()
            .find(|r| r["layout"] == layout_of(kind))
            .unwrap_or_else(|| panic!("{id}: no {kind} reading"));
        assert!(
            own["time"].as_str().unwrap().starts_with(created),
            "{id}: {own} vs {created}"
        );
        assert_eq!(own["plausible"], true, "{id}: {own}");
        let e = rates.entry(kind).or_default();
        e.1 += 1;
        e.0 += u32::from(rows[0]["layout"] == layout_of(kind));
    }
    for (kind, (first, all)) in &rates {
        println!("--guess rank 1 for {kind}: {first} of {all}");
    }
    // The default layout keeps its own IDs first; text formats have one reading.
    assert_eq!(rates["twitter"], (2, 2));
    for kind in ["objectid", "ksuid", "ulid"] {
        assert_eq!(rates[kind].0, rates[kind].1, "{kind}");
    }
}
