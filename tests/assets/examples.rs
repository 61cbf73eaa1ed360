//! Every example a user can read runs as shown (issue 18): each `Examples:` line of every
//! command's `--help` (the same text as the man pages' EXAMPLES), and each `$ ` line of the
//! console blocks of the README and of every page of `docs/` (the book, read in the order of
//! [`book::BOOK`]), whose printed output must match in shape: the same lines, the same JSON
//! fields, the same worker ids and exit codes; IDs, times and ages may differ.
//!
//! The examples name hosts a reader has (`zk1:2181`, `mysql://leaf@db:3306/leaf`,
//! `postgres://leaf@pg/leaf`, `http://etcd1:2379`): the test rewrites them to private ZooKeeper,
//! MariaDB, PostgreSQL and etcd instances it starts on loopback, and the few files they read to
//! fixtures in a sandbox. A `serve`
//! example runs in the background on a free loopback port (the `curl` lines after it talk to
//! it) and is stopped with SIGTERM, which must end it with exit 0. A line that installs a system
//! service is not run: it is named in [`NOT_RUN`].

use crate::book;
use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use leafctl::snowflake::{Layout, Preset};
use support::etcd::EtcdServer;
use support::mariadb::{MariaDb, PASSWORD};
use support::postgres::Postgres;
use support::zookeeper::ZkServer;
use support::{Sandbox, free_port, on_a_terminal_of};

/// Example lines that change the machine (a system unit), so a test does not run them.
const NOT_RUN: &[&str] = &["install -m 644 contrib/leafctl.service"];

/// The sandbox and services the examples run against.
struct World {
    sb: Sandbox,
    bin_dir: PathBuf,
    db_url: String,
    /// The same for PostgreSQL (`postgres://leaf@pg...` in the examples).
    pg_url: String,
    pg_hosts: String,
    /// Each region's own database in the region examples (`mysql://leaf@eu/leaf`,
    /// `mysql://leaf@us/leaf`, `postgres://leaf@ap/leaf`): fresh databases beside the ones above, which
    /// stay without a region.
    regions: Vec<(&'static str, String)>,
    zk: String,
    etcd: String,
    port: u16,
    server: Option<Background>,
}

/// A `serve` example running in the background.
struct Background {
    child: Child,
    line: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl World {
    fn new() -> World {
        let db = MariaDb::shared();
        let name = db.fresh_db();
        let sb = Sandbox::new();
        let bin_dir = sb.path().join("bin");
        std::fs::create_dir_all(&bin_dir).unwrap();
        let leafctl = sb.leafctl_std();
        std::os::unix::fs::symlink(leafctl.get_program(), bin_dir.join("leafctl")).unwrap();
        let pg = Postgres::shared();
        let pg_db = pg.fresh_db();
        let world = World {
            db_url: db.url(&name),
            pg_url: pg.url(&pg_db),
            pg_hosts: format!(
                "postgres://leaf@127.0.0.1:{0},127.0.0.1:{0}/{pg_db}",
                pg.port
            ),
            regions: vec![
                ("mysql://leaf@eu/leaf", db.url(&db.fresh_db())),
                ("mysql://leaf@us/leaf", db.url(&db.fresh_db())),
                ("postgres://leaf@ap/leaf", pg.url(&pg.fresh_db())),
            ],
            zk: ZkServer::shared().hosts(),
            etcd: EtcdServer::shared().endpoints(),
            port: free_port(),
            sb,
            bin_dir,
            server: None,
        };
        world.fixtures(&name, db.port);
        // The MySQL examples work on a database set up as docs/segment.md says.
        let init = world.run(&format!("leafctl db init --db {}", world.db_url), false);
        assert_eq!(init.code, Some(0), "{}", init.stderr);
        // The MySQL examples use a tag `order`, added there as docs/segment.md says (the
        // embedded default gets it from that page's `tag add` example, run first).
        let tag = world.run(
            &format!("leafctl tag add order --db {}", world.db_url),
            false,
        );
        assert_eq!(tag.code, Some(0), "{}", tag.stderr);
        // The running deployment of the region examples has a database set up and a tag.
        for line in ["leafctl db init --db URL", "leafctl tag add order --db URL"] {
            let out = world.run(&line.replace("URL", "mysql://leaf@eu/leaf"), false);
            assert_eq!(out.code, Some(0), "{line}: {}", out.stderr);
        }
        // The same on PostgreSQL.
        for line in ["leafctl db init --db URL", "leafctl tag add order --db URL"] {
            let out = world.run(&line.replace("URL", &world.pg_url), false);
            assert_eq!(out.code, Some(0), "{line}: {}", out.stderr);
        }
        world
    }

    /// Files the examples read: an application log with IDs in it, a list of IDs, the ID key of
    /// opaque tags, and Leaf's leaf.properties pointing at the private MariaDB.
    fn fixtures(&self, db: &str, port: u16) {
        let dir = self.sb.path();
        let l = Layout::preset(Preset::Leaf);
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-21T10:00:00Z")
            .unwrap()
            .timestamp_millis();
        let ids: Vec<String> = (0..5)
            .map(|w| l.encode(l.ticks_at(at).unwrap(), w, 0).unwrap().to_string())
            .collect();
        let log: String = ids
            .iter()
            .map(|id| format!("2026-11-21 10:00:00 INFO order {id} created\n"))
            .collect();
        std::fs::write(dir.join("app.log"), log).unwrap();
        std::fs::write(dir.join("ids.txt"), ids.join("\n") + "\n").unwrap();
        // The ID key of opaque tags (`--key-file id.key`), readable by this user only.
        let key = dir.join("id.key");
        std::fs::write(&key, "3c".repeat(32) + "\n").unwrap();
        let only_mine =
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
        std::fs::set_permissions(&key, only_mine).unwrap();
        std::fs::write(
            dir.join("leaf.properties"),
            format!(
                "leaf.name=com.sankuai.leaf.opensource.test\nleaf.segment.enable=true\n\
                 leaf.jdbc.url=jdbc:mysql://127.0.0.1:{port}/{db}?useUnicode=true&characterEncoding=utf8\n\
                 leaf.jdbc.username=leaf\nleaf.jdbc.password={PASSWORD}\nleaf.snowflake.enable=false\n"
            ),
        )
        .unwrap();
    }

    /// A line as it runs here: hosts, secrets and system paths made the test's own.
    fn rewrite(&self, line: &str) -> String {
        let mut l = line.to_string();
        for (from, to) in &self.regions {
            // Other URLs carry their own password (`region add --from`, `region check`).
            l = l.replace(from, &to.replacen("leaf@", &format!("leaf:{PASSWORD}@"), 1));
        }
        for (from, to) in [
            ("LEAF_ETCD_USER=leaf LEAF_ETCD_PASSWORD=... ", String::new()),
            (
                "LEAF_DB_PASSWORD=...",
                format!("LEAF_DB_PASSWORD={PASSWORD}"),
            ),
            (
                "LEAF_SERVE_TOKEN=...",
                "LEAF_SERVE_TOKEN=an-example-token".into(),
            ),
            ("mysql://leaf@db.example:3306/leaf", self.db_url.clone()),
            ("mysql://leaf@db:3306/leaf", self.db_url.clone()),
            ("mysql://leaf@db/leaf", self.db_url.clone()),
            (
                "postgres://leaf@pg1:5432,pg2:5432/leaf",
                self.pg_hosts.clone(),
            ),
            ("postgres://leaf@pg1,pg2/leaf", self.pg_hosts.clone()),
            ("postgres://leaf@pg:5432/leaf", self.pg_url.clone()),
            ("postgres://leaf@pg/leaf", self.pg_url.clone()),
            ("zk1:2181,zk2:2181", self.zk.clone()),
            ("zk1:2181", self.zk.clone()),
            ("http://etcd1:2379,http://etcd2:2379", self.etcd.clone()),
            ("https://etcd1:2379", self.etcd.clone()),
            ("http://etcd1:2379", self.etcd.clone()),
            ("http://e1:2379", self.etcd.clone()),
            (
                "sqlite:///var/lib/leaf/leaf.db",
                "sqlite://var-lib-leaf.db".into(),
            ),
            ("/opt/leaf/leaf.properties", "leaf.properties".into()),
            // Not ./leaf.toml, which leafctl would read by itself (a file in /etc it would not).
            ("/etc/leafctl/leaf.toml", "etc-leaf.toml".into()),
            (" --listen 0.0.0.0:8080", String::new()),
            ("localhost:8080", format!("127.0.0.1:{}", self.port)),
        ] {
            l = l.replace(from, &to);
        }
        l
    }

    fn shell(&self, line: &str) -> Command {
        let template = self.sb.leafctl_std();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", line]);
        for (k, v) in template.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let path = std::env::var("PATH").unwrap_or_default();
        // The reader has the database password in the environment, as docs/segment.md advises.
        cmd.env("LEAF_DB_PASSWORD", PASSWORD)
            .env("PATH", format!("{}:{path}", self.bin_dir.display()))
            .current_dir(self.sb.path())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs an example line (already rewritten when `rewritten`), or starts it in the
    /// background when it is a `serve`.
    fn run(&self, line: &str, rewritten: bool) -> Ran {
        let line = if rewritten {
            line.to_string()
        } else {
            self.rewrite(line)
        };
        let out = self
            .shell(&format!(
                "timeout 120 sh -c '{}'",
                line.replace('\'', "'\\''")
            ))
            .output()
            .unwrap();
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Starts a `serve` line on the test's port; returns its first stderr line.
    fn start_server(&mut self, line: &str) -> String {
        self.stop_server();
        // `env` runs `VAR=value leafctl ...` too, and is replaced by leafctl (the signal goes to it).
        let line = format!("exec env {line} --listen 127.0.0.1:{}", self.port);
        let mut child = self
            .shell(&line)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(l);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let listening = lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains("listening on"))
                .cloned();
            if let Some(first) = listening {
                self.server = Some(Background {
                    child,
                    line,
                    stderr: lines,
                });
                return first;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "`{line}` exited with {status} before listening: {}",
                    lines.lock().unwrap().join("\n")
                );
            }
            assert!(Instant::now() < deadline, "`{line}` never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops a background server with SIGTERM: it must finish with exit 0.
    fn stop_server(&mut self) {
        if let Some(mut s) = self.server.take() {
            support::serve::signal(s.child.id(), libc::SIGTERM);
            let status = s.child.wait().unwrap();
            assert!(
                status.success(),
                "`{}` ended with {status} on SIGTERM: {}",
                s.line,
                s.stderr.lock().unwrap().join("\n")
            );
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(mut s) = self.server.take() {
            let _ = s.child.kill();
            let _ = s.child.wait();
        }
    }
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The command of an example line: the text before a comment (`# ...`, or a run of three or
/// more spaces before words that describe it).
fn command_of(line: &str) -> &str {
    let line = line.split(" # ").next().unwrap_or(line);
    line.split("   ").next().unwrap_or(line).trim()
}

fn is_serve(line: &str) -> bool {
    line.contains("leafctl") && line.split_whitespace().any(|w| w == "serve")
}

/// Runs one example line: `serve` in the background, `a && b` as its parts, anything else
/// in the foreground. Returns what it printed (stdout, or a server's listening line).
fn run_example(world: &mut World, line: &str) -> (Option<i32>, String, String) {
    let line = world.rewrite(line);
    let mut parts = line.split(" && ").peekable();
    let mut last = (Some(0), String::new(), String::new());
    while let Some(part) = parts.next() {
        if is_serve(part) {
            let listening = world.start_server(part);
            last = (Some(0), String::new(), listening);
        } else {
            let r = world.run(part, true);
            if r.code != Some(0) || parts.peek().is_none() {
                return (r.code, r.stdout, r.stderr);
            }
            last = (r.code, r.stdout, r.stderr);
        }
    }
    last
}

/// The last `n` lines of `text`, saying how many were left out: an example's output may be
/// millions of lines (`next -n 10000000`), too many for a failure message.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(n);
    let kept = lines[skip..].join("\n");
    match skip {
        0 => kept,
        _ => format!("({skip} lines before these left out)\n{kept}"),
    }
}

/// The `Examples:` lines of one `--help` text.
fn help_examples(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Examples:" {
            inside = true;
            continue;
        }
        if inside {
            if line.trim().is_empty() {
                break;
            }
            // Continuation lines (deeper indentation) describe the line above.
            if line.starts_with("  ") && !line.starts_with("      ") {
                out.push(command_of(line).to_string());
            }
        }
    }
    out
}

#[test]
fn every_help_example_runs_as_shown() {
    let mut world = World::new();
    let mut seen = std::collections::BTreeSet::new();
    // `tag add` first: the other examples use the tag `order` it adds.
    let paths: &[&[&str]] = &[
        &["tag", "add"],
        &["region", "show"],
        &["next"],
        &["decode"],
        &["db", "init"],
        &["workers", "list"],
        &["config", "show"],
        &["config", "import-leaf"],
        &["serve"],
    ];
    let mut ran = 0;
    for path in paths {
        let help = world.run(&format!("leafctl {} --help", path.join(" ")), true);
        assert_eq!(help.code, Some(0));
        for example in help_examples(&help.stdout) {
            if !seen.insert(example.clone()) {
                continue;
            }
            // A curl line talks to the server the serve example before it started.
            if example.starts_with("curl") && world.server.is_none() {
                world.start_server("leafctl serve --segment");
            }
            let (code, stdout, stderr) = run_example(&mut world, &example);
            assert_eq!(
                code,
                Some(0),
                "`leafctl {} --help` shows `{example}`, which fails:\n{}\n{}",
                path.join(" "),
                last_lines(&stdout, 40),
                last_lines(&stderr, 40)
            );
            ran += 1;
        }
        world.stop_server();
    }
    assert!(ran >= 40, "only {ran} examples found");
}

/// A line with what may differ made uniform: numbers (IDs, times, counts), ages and the
/// widths of table cells.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut last_digit = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('9');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        match c {
            '─' | '═' | '━' => {
                if !out.ends_with('─') {
                    out.push('─');
                }
            }
            ' ' => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c => out.push(c),
        }
    }
    // `16y 21d ago`, `2m 5s ago`: one shape (the separators around it kept).
    let mut shaped = String::new();
    let mut in_age = false;
    for piece in out.split_inclusive([' ', '\t']) {
        let word = piece.trim_end_matches([' ', '\t']);
        let unit = word
            .strip_prefix('9')
            .is_some_and(|u| ["y", "d", "h", "m", "s", "ms"].contains(&u));
        if unit {
            if !in_age {
                shaped.push_str("AGE ");
            }
            in_age = true;
            continue;
        }
        in_age = false;
        shaped.push_str(piece);
    }
    shaped
}

/// The worker id of every 64-bit ID in a line (Leaf's layout), in order.
fn workers_in(line: &str) -> Vec<u64> {
    let l = Layout::preset(Preset::Leaf);
    line.split(|c: char| !c.is_ascii_digit())
        .filter(|w| w.len() >= 16)
        .filter_map(|w| w.parse::<u64>().ok())
        .filter_map(|id| l.decode(id).ok().map(|p| p.worker))
        .collect()
}

/// JSON keys and the values that must not differ (worker ids).
fn json_shape(text: &str) -> Option<String> {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Object(m) => {
                out.push('{');
                for (k, v) in m {
                    out.push_str(k);
                    out.push(':');
                    if k == "worker" || k == "workerId" {
                        out.push_str(&v.to_string());
                    } else {
                        walk(v, out);
                    }
                    out.push(',');
                }
                out.push('}');
            }
            serde_json::Value::Array(a) => {
                out.push_str(&format!("[{}x", a.len()));
                if let Some(first) = a.first() {
                    walk(first, out);
                }
                out.push(']');
            }
            serde_json::Value::String(_) => out.push('s'),
            serde_json::Value::Number(_) => out.push('n'),
            other => out.push_str(&other.to_string()),
        }
    }
    let v: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let mut out = String::new();
    walk(&v, &mut out);
    Some(out)
}

/// A console block: its `$ ` lines, each with the lines it prints.
type Block = Vec<(String, Vec<String>)>;

/// The console blocks of a page.
fn console_blocks(page: &str, text: &str) -> Vec<Block> {
    let mut in_block = false;
    let mut blocks: Vec<Block> = Vec::new();
    for line in text.lines() {
        if line.starts_with("```console") {
            in_block = true;
            blocks.push(Vec::new());
            continue;
        }
        if line.starts_with("```") {
            in_block = false;
            continue;
        }
        if !in_block {
            continue;
        }
        let block = blocks.last_mut().unwrap();
        if let Some(cmd) = line.strip_prefix("$ ") {
            block.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = block.last_mut() {
            last.1.push(line.to_string());
        } else {
            panic!("{page}: a console block starts with `{line}`, not with a `$ ` line");
        }
    }
    for block in &blocks {
        assert!(
            !block.is_empty(),
            "{page}: a console block without a `$ ` line"
        );
    }
    blocks
}

#[test]
fn every_console_example_of_the_book_runs_and_prints_what_it_shows() {
    let pages: Vec<(&str, Vec<Block>)> = book::BOOK
        .iter()
        .map(|page| (*page, console_blocks(page, &book::read(page))))
        .collect();
    // One sandbox for the whole book, read top to bottom, page after page, as a reader trying it
    // would.
    let mut world = World::new();
    let mut checked = 0;
    let mut counts = Vec::new();
    for (page, blocks) in pages {
        let (mut shown, mut ran) = (0, 0);
        for block in blocks {
            for (line, expected) in block {
                shown += 1;
                if NOT_RUN.iter().any(|n| line.starts_with(n)) {
                    continue;
                }
                check_example(&mut world, page, &line, &expected);
                ran += 1;
            }
            world.stop_server();
        }
        // Every example a page shows ran, but the system unit's.
        assert!(
            shown == 0 || ran > 0,
            "{page}: none of its {shown} examples ran"
        );
        counts.push(format!("{page}: {ran} of {shown}"));
        checked += ran;
    }
    eprintln!(
        "console examples checked: {checked} ({})",
        counts.join(", ")
    );
    assert!(checked >= 30, "only {checked} console examples checked");
}

/// Runs one console example of `page` and compares what it printed with what the page shows.
fn check_example(world: &mut World, page: &str, line: &str, expected: &[String]) {
    let cmd = command_of(line).to_string();
    // A table on a page is what a terminal shows: run that line at one.
    let (code, stdout, stderr) = if expected.iter().any(|l| l.contains('┌')) {
        let line = format!(
            "PATH='{}':\"$PATH\" LEAF_DB_PASSWORD={PASSWORD} {}",
            world.bin_dir.display(),
            world.rewrite(&cmd)
        );
        let shown = on_a_terminal_of(&world.sb, 120, &line, None);
        (Some(0), shown, String::new())
    } else {
        run_example(world, &cmd)
    };
    let shown_error = expected.iter().any(|l| l.starts_with("error:"));
    if shown_error {
        assert_ne!(code, Some(0), "{page}: `{cmd}` should fail as shown");
    } else {
        assert_eq!(code, Some(0), "{page}: `{cmd}` fails:\n{stdout}\n{stderr}");
    }
    if expected.is_empty() {
        return;
    }
    // What it printed: stdout, or stderr when the page shows a note or an error (or a server's
    // listening line).
    let printed = if expected[0].starts_with("note:")
        || expected[0].starts_with("error:")
        || expected[0].starts_with("leafctl serve:")
    {
        stderr
    } else {
        stdout
    };
    let got: Vec<&str> = printed.lines().collect();
    match (json_shape(&expected.join("\n")), json_shape(&printed)) {
        (Some(want), Some(have)) => {
            assert_eq!(have, want, "{page}: `{cmd}` prints JSON of another shape")
        }
        _ => {
            assert_eq!(
                got.len(),
                expected.len(),
                "{page}: `{cmd}` prints {} lines, the page shows {}:\n{printed}",
                got.len(),
                expected.len()
            );
            for (have, want) in got.iter().zip(expected) {
                if want.starts_with("leafctl serve: listening") {
                    assert!(have.starts_with("leafctl serve: listening"), "{have}");
                    continue;
                }
                assert_eq!(
                    shape(have),
                    shape(want),
                    "{page}: `{cmd}` prints\n  {have}\nwhere it shows\n  {want}"
                );
                assert_eq!(
                    workers_in(have),
                    workers_in(want),
                    "{page}: `{cmd}`: other worker ids in\n  {have}\nthan in\n  {want}"
                );
            }
        }
    }
}

#[test]
fn shapes_ignore_what_may_differ_and_keep_what_may_not() {
    assert_eq!(
        shape("│ 4194308101 ┆ 2010-11-04T01:42:55.657Z ┆ 16y 21d ago ┆ 1      ┆ 5        │"),
        shape("│ 2124080376837046272 ┆ 2026-11-21T10:00:00.000Z ┆ 2m 5s ago ┆ 0 ┆ 0 │")
    );
    assert_ne!(shape("from 2026-11-21"), shape("to 2026-11-21"));
    assert_eq!(workers_in("2124190896911052820"), vec![7]);
    assert_eq!(
        json_shape(r#"{"id":"1","worker":1}"#),
        Some("{id:s,worker:1,}".into())
    );
    assert_ne!(
        json_shape(r#"{"id":"1","worker":1}"#),
        json_shape(r#"{"id":"1","worker":7}"#)
    );
    assert_eq!(
        command_of("leafctl tag list   # tag, max_id"),
        "leafctl tag list"
    );
    let _ = Path::new("");
}
