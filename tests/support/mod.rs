//! Shared helpers for the integration tests: an isolated `leafctl` command and small utilities.
//! Real services live beside this file (MariaDB, ZooKeeper), one private instance per test binary.
#![allow(dead_code)] // each test binary uses a different subset

pub mod env;
pub mod etcd;
pub mod faketime;
pub mod fault;
pub mod galera;
pub mod mariadb;
pub mod model;
pub mod nemesis;
pub mod netns;
pub mod patroni;
pub mod pgbouncer;
pub mod postgres;
pub mod proxy;
pub mod regions;
pub mod segment_contract;
pub mod serve;
pub mod snowflake;
pub mod zookeeper;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// A scratch home for one test: config, state and data directories that nothing else uses.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A new sandbox whose default (SQLite) store has `tag`, added with `--step step`.
    pub fn with_tag(tag: &str, step: &str) -> Sandbox {
        let sb = Sandbox::new();
        sb.leafctl()
            .args(["tag", "add", tag, "--step", step])
            .assert()
            .success();
        sb
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn state_dir(&self) -> PathBuf {
        self.path().join("state")
    }

    /// `leafctl` running in this sandbox: its own HOME and XDG dirs, no inherited LEAF_* settings,
    /// and the sandbox as working directory (so no stray ./leaf.toml is read).
    pub fn leafctl(&self) -> Command {
        let mut cmd = Command::cargo_bin("leafctl").expect("leafctl binary");
        isolate(&mut cmd, self.path());
        cmd
    }

    /// Runs `leafctl ARGS` in the sandbox to the end: its status, stdout and stderr.
    pub fn run<I, S>(&self, args: I) -> std::process::Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.leafctl().args(args).output().unwrap()
    }

    /// Runs `leafctl ARGS`, which must exit with `code` and say `part` on stderr.
    #[track_caller]
    pub fn assert_refused(&self, args: &[&str], code: i32, part: &str) {
        let refused = self.leafctl().args(args).assert().code(code);
        refused.stderr(predicates::str::contains(part));
    }

    /// Runs `leafctl ARGS`, which must succeed and print `part` on stdout.
    #[track_caller]
    pub fn assert_prints(&self, args: &[&str], part: &str) {
        let done = self.leafctl().args(args).assert().success();
        done.stdout(predicates::str::contains(part));
    }

    /// [`Sandbox::run`], which must succeed ([`run_ok`]).
    #[track_caller]
    pub fn run_ok<I, S>(&self, args: I) -> std::process::Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        run_ok(self.leafctl().args(args))
    }

    /// [`Sandbox::run`], killed after 60 s (a hang fails the test instead of stalling it).
    pub fn run_bounded<I, S>(&self, args: I) -> std::process::Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.leafctl();
        cmd.args(args).timeout(Duration::from_secs(60));
        cmd.output().expect("run leafctl")
    }

    /// The same as [`Sandbox::leafctl`], as a std Command (for processes run concurrently).
    pub fn leafctl_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("leafctl"));
        isolate_std(&mut cmd, self.path());
        cmd
    }
}

fn isolated_env(home: &Path) -> Vec<(String, PathBuf)> {
    vec![
        ("HOME".into(), home.to_path_buf()),
        ("XDG_CONFIG_HOME".into(), home.join("config")),
        ("XDG_STATE_HOME".into(), home.join("state-home")),
        ("XDG_DATA_HOME".into(), home.join("data")),
        ("LEAF_STATE_DIR".into(), home.join("state")),
    ]
}

fn leaf_vars() -> Vec<String> {
    std::env::vars()
        .map(|(k, _)| k)
        .filter(|k| k.starts_with("LEAF_"))
        .collect()
}

fn isolate(cmd: &mut Command, home: &Path) {
    for k in leaf_vars() {
        cmd.env_remove(k);
    }
    for (k, v) in isolated_env(home) {
        cmd.env(k, v);
    }
    cmd.current_dir(home);
}

fn isolate_std(cmd: &mut std::process::Command, home: &Path) {
    for k in leaf_vars() {
        cmd.env_remove(k);
    }
    for (k, v) in isolated_env(home) {
        cmd.env(k, v);
    }
    cmd.current_dir(home);
}

/// Copies `from`'s environment changes and working directory to `to` (a command wrapping it).
pub fn copy_env(from: &std::process::Command, to: &mut std::process::Command) {
    for (k, v) in from.get_envs() {
        match v {
            Some(v) => to.env(k, v),
            None => to.env_remove(k),
        };
    }
    if let Some(d) = from.get_current_dir() {
        to.current_dir(d);
    }
}

/// Runs the shell command line `command` at `place` under a small shell watchdog: the watchdog
/// starts it in the background, prints its pid, waits for its own stdin to close, then kills it
/// (SIGCONT, SIGKILL). The caller holds the returned stdin while the process may run: when the
/// test binary ends, however it ends, the pipe closes and no process outlives the tests.
/// Returns the watchdog, its stdin and the pid of the process (`what` names it in panics).
pub fn under_watchdog(
    place: &netns::Place,
    command: &str,
    what: &str,
) -> (std::process::Child, std::process::ChildStdin, u32) {
    under_watchdog_stopping(
        place,
        command,
        "kill -CONT $J 2>/dev/null; kill -9 $J 2>/dev/null",
        what,
    )
}

/// [`under_watchdog`] with the shell snippet `stop` (the process's pid in `$J`) run instead of
/// its SIGCONT and SIGKILL when stdin closes, e.g. to kill what the process started too.
pub fn under_watchdog_stopping(
    place: &netns::Place,
    command: &str,
    stop: &str,
    what: &str,
) -> (std::process::Child, std::process::ChildStdin, u32) {
    use std::io::BufRead;
    use std::process::Stdio;
    let script = format!(
        "{command} </dev/null & J=$!; echo $J; cat >/dev/null; {stop}; wait $J 2>/dev/null"
    );
    let mut child = place
        .command("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start the {what} watchdog: {e}"));
    let stdin = child.stdin.take().expect("stdin");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("{what} pid: {e}"));
    let pid = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{what} pid is a number: {line:?}"));
    (child, stdin, pid)
}

/// A TCP port on 127.0.0.1 that was free a moment ago and that this test process has not
/// handed out before. The second condition matters for servers started inside a test's network
/// namespace: they bind there, out of sight of the root namespace's 127.0.0.1, so the kernel
/// could hand their port out again (an etcd member once failed "bind: address already in use"
/// next to a MariaDB server in the same namespace).
pub fn free_port() -> u16 {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..1000 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        if !handed_out.contains(&port) {
            handed_out.push(port);
            return port;
        }
    }
    panic!("no free port not handed out before in 1000 tries")
}

/// Polls `ready` until it returns true or `timeout` passes.
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ready()
}

/// The arguments of a command line written as one: `line` split at white space
/// (`sb.run(support::words("next --snowflake -n 3"))`), for arguments that hold none.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// A command [`run_ok`] can run: leafctl's (assert_cmd) or any other (std), owned or borrowed.
pub trait Runnable {
    /// Runs the command to the end: its output, and how to name it in a failure.
    fn run_to_end(&mut self) -> (std::process::Output, String);
}

impl Runnable for Command {
    fn run_to_end(&mut self) -> (std::process::Output, String) {
        let name = format!("{self:?}");
        let out = self.output();
        (
            out.unwrap_or_else(|e| panic!("cannot run {name} ({e}): is it installed?")),
            name,
        )
    }
}

impl Runnable for std::process::Command {
    fn run_to_end(&mut self) -> (std::process::Output, String) {
        let name = format!("{self:?}");
        let out = self.output();
        (
            out.unwrap_or_else(|e| panic!("cannot run {name} ({e}): is it installed?")),
            name,
        )
    }
}

impl<R: Runnable + ?Sized> Runnable for &mut R {
    fn run_to_end(&mut self) -> (std::process::Output, String) {
        (**self).run_to_end()
    }
}

/// Runs `cmd` to the end and asserts that it succeeded (showing the command, its status, stdout
/// and stderr when not): its output.
#[track_caller]
pub fn run_ok(mut cmd: impl Runnable) -> std::process::Output {
    let (out, name) = cmd.run_to_end();
    assert!(
        out.status.success(),
        "{name} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    out
}

/// `items` joined with commas (a host or endpoint list).
pub fn comma_list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(",")
}

/// Runs `cmd` as `cmd | head -1` does: reads the first line of its stdout, then closes the
/// pipe, and waits for it to end. The line, and how it ended (with its stderr).
pub fn head_1(mut cmd: std::process::Command) -> (String, std::process::Output) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the command");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut first)
        .expect("read the first line");
    // The reader is dropped here, like `| head -1`.
    let out = child.wait_with_output().expect("wait for the command");
    (first, out)
}

/// Starts `cmd` with its stdout and stderr piped (processes run at once, each then read with
/// `wait_with_output`).
pub fn spawn_piped(cmd: &mut std::process::Command) -> std::process::Child {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn leafctl")
}

/// What a finished process wrote to stderr, as text (for assertion messages and `contains`).
pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that a run's stderr contains `part`, showing the whole of it when not.
#[track_caller]
pub fn assert_stderr_has(out: &std::process::Output, part: &str) {
    let err = stderr(out);
    assert!(err.contains(part), "{part:?} missing from stderr: {err}");
}

/// Asserts that `text` contains each of `parts`, naming the missing one and showing `text`.
#[track_caller]
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
}

/// The stderr of a run whose reader went away (`| head`): it must begin with the note saying
/// so and contain each of `parts`.
#[track_caller]
pub fn assert_reader_gone_note(out: &std::process::Output, parts: &[&str]) -> String {
    let err = stderr(out);
    assert!(
        err.starts_with("note: the reader of standard output went away: the last "),
        "{err}"
    );
    assert_contains_all(&err, parts);
    err
}

/// A finished process's stdout as JSON, once it is known to have succeeded.
pub fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// `leafctl workers list REGISTRY... --output json` in `sb`, which must succeed: its rows.
pub fn workers_list(sb: &Sandbox, registry: &[&str]) -> serde_json::Value {
    json(
        &sb.leafctl()
            .args(["workers", "list"])
            .args(registry)
            .args(["--output", "json"])
            .output()
            .unwrap(),
    )
}

/// The row of `key` (with its `value` and `source`) in what `leafctl config show --output json`
/// printed (`rows`, parsed); panics naming the key if there is none.
pub fn config_row<'a>(rows: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    rows.as_array()
        .expect("config show prints an array")
        .iter()
        .find(|r| r["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in config show: {rows}"))
}

/// Parses stdout as one decimal ID per line.
pub fn parse_ids(stdout: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            l.parse::<u64>()
                .unwrap_or_else(|_| panic!("not an ID: {l:?}"))
        })
        .collect()
}

impl Sandbox {
    /// `tag`'s max_id in the sandbox's default database, as `tag show` gives it.
    pub fn max_id(&self, tag: &str) -> u64 {
        let v = json(&self.run_ok(["tag", "show", tag, "--output", "json"]));
        v["max_id"]
            .as_str()
            .expect("max_id")
            .parse()
            .expect("a number")
    }
}

/// `--key-file KEY decode --tag TAG --output json ID...`: the arguments that read a shaped tag's
/// IDs back (issue 48), for any way of running leafctl.
pub fn decode_tag_args(key: &str, tag: &str, ids: &[u64]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--key-file",
        key,
        "decode",
        "--tag",
        tag,
        "--output",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(ids.iter().map(u64::to_string));
    args
}

/// The `dense_id` of each row `decode --tag --output json` printed, in order; each row must say
/// the tag claimed it when `claimed` is set.
pub fn dense_ids_of(stdout: &[u8], claimed: bool) -> Vec<u64> {
    let rows: serde_json::Value = serde_json::from_slice(stdout).expect("decode's JSON");
    rows.as_array()
        .expect("an array of rows")
        .iter()
        .map(|r| {
            if claimed {
                assert_eq!(r["claimed"], true, "{r}");
            }
            r["dense_id"]
                .as_str()
                .expect("a dense_id")
                .parse()
                .expect("a number")
        })
        .collect()
}

/// Starts every command at once (stdout and stderr piped), then waits for each: every run must
/// succeed and print `n` IDs. Returns each run's IDs, in the order of `cmds`.
pub fn run_concurrently(
    cmds: impl IntoIterator<Item = std::process::Command>,
    n: usize,
) -> Vec<Vec<u64>> {
    let children: Vec<_> = cmds
        .into_iter()
        .map(|mut c| {
            c.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            let ids = parse_ids(&out.stdout);
            assert_eq!(ids.len(), n);
            ids
        })
        .collect()
}

/// Asserts that no value repeats.
pub fn assert_unique(ids: &mut [u64]) {
    ids.sort_unstable();
    let before = ids.len();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        panic!("duplicate ID {} among {before}", w[0]);
    }
}

/// Asserts that there are `n` IDs, no one twice (sorts them).
#[track_caller]
pub fn assert_n_unique(ids: &mut [u64], n: usize) {
    assert_eq!(ids.len(), n, "how many IDs");
    assert_unique(ids);
}

/// Starts `next` for a huge batch ahead of the clock, reads until `read_at_least` IDs came out
/// (the pipe paces it: it is still issuing), kills it with SIGKILL, and returns every complete
/// line it wrote.
pub fn killed_mid_batch(mut cmd: std::process::Command, read_at_least: usize) -> Vec<u64> {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut lines = 0;
    while lines < read_at_least && Instant::now() < deadline {
        let n = std::io::Read::read(&mut stdout, &mut chunk).unwrap();
        if n == 0 {
            break;
        }
        lines += chunk[..n].iter().filter(|b| **b == b'\n').count();
        bytes.extend_from_slice(&chunk[..n]);
    }
    child.kill().unwrap(); // SIGKILL: no finish, no clean record
    // What it wrote before dying is still in the pipe.
    std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
    child.wait().unwrap();
    assert!(lines >= read_at_least, "the batch ended early");
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    parse_ids(&bytes[..complete])
}

/// A shell command line run under a pseudo-terminal of `cols` columns (`script` from
/// util-linux), `{bin}` standing for the leafctl binary, with the sandbox's environment and
/// `stdin` (a file) as standard input; returns what the terminal showed, `\r\n` made `\n`.
pub fn on_a_terminal_of(
    sb: &Sandbox,
    cols: u16,
    line: &str,
    stdin: Option<&std::path::Path>,
) -> String {
    let isolated = sb.leafctl_std();
    let bin = isolated.get_program().to_str().unwrap().to_string();
    let input = stdin
        .map(|p| format!(" < '{}'", p.display()))
        .unwrap_or_default();
    let mut cmd = std::process::Command::new("script");
    cmd.args([
        "-qec",
        &format!(
            "stty cols {cols} rows 50; {}{input}",
            line.replace("{bin}", &bin)
        ),
        "/dev/null",
    ]);
    for (k, v) in isolated.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.current_dir(sb.path())
        .stdin(std::process::Stdio::null());
    let out = cmd.output().expect("script (util-linux) runs");
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

/// Issue 33's repro and its variations, on any database: a tag removed and added again never
/// issues an ID twice. `run` runs leafctl (with the database set) and returns its output;
/// `store` opens the database for a generator, as a server's. Tag `fresh` must not exist.
pub fn removed_and_readded_tags_issue_no_id_twice(
    run: &dyn Fn(&[&str]) -> std::process::Output,
    store: &dyn Fn() -> Box<dyn leafctl::segment::AllocStore>,
) {
    use std::collections::HashSet;
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "leafctl {args:?}: {}", stderr(&out));
        out
    };
    let seen = std::cell::RefCell::new(HashSet::new());
    let take = |ids: Vec<u64>, what: &str| {
        assert!(!ids.is_empty(), "{what}: no IDs");
        for id in ids {
            assert!(
                seen.borrow_mut().insert(id),
                "{what}: ID {id} was issued before"
            );
        }
    };
    ok(&["tag", "add", "fresh", "--step", "10"]);
    // A server issued ID 1 (and holds the rest of its segment); then `next` issues more.
    {
        let generator = leafctl::segment::SegmentGenerator::builder(store())
            .build()
            .unwrap();
        let first = generator.next_id("fresh").unwrap();
        assert_eq!(first, 1);
        take(vec![first], "the server");
    }
    take(parse_ids(&ok(&["next", "fresh", "-n", "3"]).stdout), "next");
    // The issue's exact steps: remove, add, next.
    let removed = ok(&["tag", "remove", "fresh", "--yes"]);
    assert!(
        String::from_utf8_lossy(&removed.stdout).contains("leaf_alloc_removed"),
        "{}",
        String::from_utf8_lossy(&removed.stdout)
    );
    let added = ok(&["tag", "add", "fresh"]);
    assert!(
        stderr(&added).contains("was removed before at max_id"),
        "the re-add says where it continues: {}",
        stderr(&added)
    );
    take(
        parse_ids(&ok(&["next", "fresh"]).stdout),
        "next after re-add",
    );
    // Removed and re-added again (and once with --if-not-exists): still above everything.
    for add in [
        &["tag", "add", "fresh"][..],
        &["tag", "add", "fresh", "--if-not-exists"],
    ] {
        ok(&["tag", "remove", "fresh", "--yes"]);
        let out = ok(add);
        assert!(String::from_utf8_lossy(&out.stdout).contains("added tag fresh"));
        take(parse_ids(&ok(&["next", "fresh", "-n", "2"]).stdout), "next");
    }
    // An explicit --start below the tombstone is refused, naming it; nothing is added.
    let max: u64 = *seen.borrow().iter().max().unwrap();
    ok(&["tag", "remove", "fresh", "--yes"]);
    let out = run(&["tag", "add", "fresh", "--start", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let tombstone = (max + 1).to_string();
    assert!(
        stderr(&out).contains(&format!("issued IDs below {tombstone}"))
            && stderr(&out).contains("--reuse-removed-ids"),
        "{}",
        stderr(&out)
    );
    let out = run(&["tag", "show", "fresh"]);
    assert_eq!(out.status.code(), Some(2), "nothing was added");
    // At the tombstone itself it is accepted.
    let at = ok(&[
        "tag", "add", "fresh", "--start", &tombstone, "--output", "json",
    ]);
    assert_eq!(json(&at)["removed_max_id"], tombstone.as_str());
    take(
        parse_ids(&ok(&["next", "fresh"]).stdout),
        "next at the tombstone",
    );
    // The override is accepted, and warns; the tombstone keeps the highest max_id, so the
    // next re-add is above everything again.
    ok(&["tag", "remove", "fresh", "--yes"]);
    let out = ok(&["tag", "add", "fresh", "--start", "1", "--reuse-removed-ids"]);
    assert!(stderr(&out).contains("again"), "{}", stderr(&out));
    // (A `next` here would be refused by this state directory's claim guard, which saw the
    // tag's IDs go past 1: the override is for IDs known to be unused.)
    assert_eq!(
        json(&ok(&["tag", "show", "fresh", "--output", "json"]))["max_id"],
        "1"
    );
    ok(&["tag", "remove", "fresh", "--yes"]);
    ok(&["tag", "add", "fresh"]);
    take(parse_ids(&ok(&["next", "fresh", "-n", "5"]).stdout), "next");
    // --reuse-removed-ids means nothing without --start.
    let out = run(&["tag", "add", "other", "--reuse-removed-ids"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Where a child's standard output or error goes in the output-failure tests (issue 33).
pub enum Sink {
    /// Closed, as the shell's `>&-` leaves it.
    Closed,
    /// `/dev/full`: every write fails with "no space left".
    Full,
    /// A pipe whose reader is already gone: every write fails with EPIPE.
    DeadPipe,
    /// A file that may grow to this many bytes (RLIMIT_FSIZE, SIGXFSZ ignored): writes past
    /// it fail with EFBIG, part-way through a run.
    FileUpTo(std::path::PathBuf, u64),
}

/// Points descriptor `fd` (1 or 2) of `cmd` at `sink`.
pub fn redirect(cmd: &mut std::process::Command, fd: i32, sink: Sink) {
    use std::os::unix::process::CommandExt;
    let stdio: std::process::Stdio = match sink {
        Sink::Closed => {
            // SAFETY: close(2) between fork and exec, on the child's own descriptor.
            unsafe {
                cmd.pre_exec(move || {
                    libc::close(fd);
                    Ok(())
                });
            }
            return;
        }
        Sink::Full => std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into(),
        Sink::DeadPipe => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            writer.into()
        }
        Sink::FileUpTo(path, bytes) => {
            // SAFETY: signal(2) and setrlimit(2) between fork and exec, for the child alone.
            unsafe {
                cmd.pre_exec(move || {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let limit = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            std::fs::File::create(path).expect("output file").into()
        }
    };
    if fd == 1 {
        cmd.stdout(stdio);
    } else {
        cmd.stderr(stdio);
    }
}

/// Removals, re-adds and claims of one tag racing each other (bounded rounds): a claimant
/// never gets an ID twice, whatever the interleaving. `store` opens a new connection to the
/// database; tag `race` must not exist.
pub fn removals_racing_adds_and_claims_issue_no_id_twice(
    store: &(dyn Fn() -> Box<dyn leafctl::segment::AllocStore> + Sync),
) {
    use leafctl::segment::{Increment, NewTag, SegmentError};
    use std::sync::atomic::{AtomicBool, Ordering};
    const ROUNDS: usize = 150;
    store().add_tag(&NewTag::new("race", 5)).unwrap();
    let done = AtomicBool::new(false);
    let mut ids: Vec<u64> = std::thread::scope(|s| {
        let claimers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let db = store();
                    let mut ids = Vec::new();
                    // Bounded: the other threads end after ROUNDS, and so many tries at most.
                    for _ in 0..ROUNDS * 20 {
                        if done.load(Ordering::SeqCst) {
                            break;
                        }
                        match db.claim("race", Increment::Custom(3)) {
                            Ok(c) => ids.extend(c.start..c.end),
                            Err(
                                SegmentError::UnknownTag { .. } | SegmentError::Conflict { .. },
                            ) => {}
                            Err(e) => panic!("claim: {e}"),
                        }
                        // SQLite's busy handler is not fair: a tight loop could starve the
                        // others past its timeout.
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    ids
                })
            })
            .collect();
        let churn: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let db = store();
                    for _ in 0..ROUNDS {
                        match db.remove("race") {
                            Ok(_) | Err(SegmentError::UnknownTag { .. }) => {}
                            Err(SegmentError::Conflict { .. }) => {}
                            Err(e) => panic!("remove: {e}"),
                        }
                        let new = NewTag {
                            if_not_exists: true,
                            ..NewTag::new("race", 5)
                        };
                        match db.add_tag(&new) {
                            Ok(_) => {}
                            Err(e) => panic!("add: {e}"),
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        for t in churn {
            t.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        claimers
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    assert!(ids.len() > 10, "claims happened: {}", ids.len());
    assert_unique(&mut ids);
}

/// Round trips a claim of the store costs on a warm connection, as counted by `proxy` (the
/// store connects through it): `(a claim of a given size, a claim of the table's step)`, each the
/// average over 20 claims of tag `tag` (which must exist).
pub fn round_trips_per_claim(
    proxy: &proxy::Proxy,
    store: &dyn leafctl::segment::AllocStore,
    tag: &str,
) -> (f64, f64) {
    use leafctl::segment::Increment;
    let per = |increment: Increment| {
        store.claim(tag, increment).expect("warm-up claim");
        let before = proxy.round_trips();
        for _ in 0..20 {
            store.claim(tag, increment).expect("claim");
        }
        (proxy.round_trips() - before) as f64 / 20.0
    };
    (per(Increment::Custom(1000)), per(Increment::TableStep))
}

/// The commands a hint on `stderr` suggests (each `leafctl ...` between backticks on a `hint:`
/// line), as argument lists without the leading `leafctl`: a test runs them as printed.
/// Placeholders (`TAG`, `NEW`, `URL`) are left in; a test that meets one fails to run it.
pub fn hinted_commands(stderr: &str) -> Vec<Vec<String>> {
    stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("hint: "))
        .flat_map(|hint| hint.split('`').skip(1).step_by(2))
        .filter_map(|cmd| cmd.strip_prefix("leafctl "))
        .map(|args| args.split_whitespace().map(str::to_string).collect())
        .collect()
}
