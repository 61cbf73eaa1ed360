//! Fault suite, local faults (RELIABILITY.md scenario 9): a read-only or full state directory, a
//! state file truncated or garbled by hand, a lock file left by a killed process or held by a
//! stopped one. Each is a clear error with exit 1 and never a silent reset of the recorded time.
//!
//! Read-only and full directories are real file systems: a small tmpfs mounted in a private
//! mount namespace (`unshare`), so nothing outside the test sees it.

use crate::support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::fault::complete_ids;
use support::serve::signal;
use support::snowflake::time_of;
use support::{Sandbox, assert_unique, parse_ids, stderr};

fn state_file(sb: &Sandbox, worker: u64) -> std::path::PathBuf {
    sb.state_dir().join(format!("snowflake-leaf-{worker}.json"))
}

fn recorded(sb: &Sandbox, worker: u64) -> serde_json::Value {
    let text = std::fs::read_to_string(state_file(sb, worker)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs `script` with sh in a private mount namespace (as root of a user namespace when this is
/// allowed, else as root), with `$L` the leafctl binary, `$D` the sandbox's state directory and
/// `$O` a directory for results, and the sandbox's isolated environment.
fn in_private_mount(sb: &Sandbox, script: &str) -> std::process::Output {
    let probe = |args: &[&str]| {
        Command::new("unshare")
            .args(args)
            .args(["sh", "-c", "true"])
            .status()
            .is_ok_and(|s| s.success())
    };
    let ns: &[&str] = if probe(&["--user", "--map-root-user", "--mount"]) {
        &["--user", "--map-root-user", "--mount"]
    } else if probe(&["--mount"]) {
        &["--mount"]
    } else {
        panic!(
            "this test needs unshare(1) with a mount namespace (util-linux; root or user namespaces)"
        );
    };
    let template = sb.leafctl_std();
    let mut cmd = Command::new("unshare");
    cmd.args(ns).args(["sh", "-c", script]);
    for (k, v) in template.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out_dir = sb.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::create_dir_all(sb.state_dir()).unwrap();
    cmd.current_dir(sb.path())
        .env("L", template.get_program())
        .env("D", sb.state_dir())
        .env("O", &out_dir)
        .stdin(Stdio::null());
    support::run_ok(cmd)
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn a_read_only_state_directory_is_a_clear_error_and_the_record_stays() {
    let sb = Sandbox::new();
    let out = in_private_mount(
        &sb,
        r#"
set -e
mount -t tmpfs -o size=1m tmpfs "$D"
"$L" next --snowflake --worker-id 4 -n 5 > "$O/first"
cp "$D/snowflake-leaf-4.json" "$O/before"
mount -o remount,ro "$D"
set +e
"$L" next --snowflake --worker-id 4 -n 5 > "$O/second" 2> "$O/second.err"
echo $? > "$O/second.rc"
"$L" serve --snowflake --worker-id 4 --listen 127.0.0.1:0 > /dev/null 2> "$O/serve.err"
echo $? > "$O/serve.rc"
cp "$D/snowflake-leaf-4.json" "$O/after"
"#,
    );
    let o = sb.path().join("out");
    let _ = out;
    assert_eq!(parse_ids(read(&o, "first").as_bytes()).len(), 5);
    for (what, rc, err) in [
        ("next", "second.rc", "second.err"),
        ("serve", "serve.rc", "serve.err"),
    ] {
        assert_eq!(read(&o, rc).trim(), "1", "{what}: {}", read(&o, err));
        let err = read(&o, err);
        assert!(
            err.contains("Read-only file system") && err.contains("snowflake-leaf-4"),
            "{what} names the file and the cause: {err}"
        );
        assert!(err.contains("hint:"), "{err}");
    }
    assert!(read(&o, "second").is_empty(), "no ID without a record");
    assert_eq!(
        read(&o, "before"),
        read(&o, "after"),
        "the record is intact"
    );
}

#[test]
fn a_full_state_directory_is_a_clear_error_and_never_resets_the_record() {
    let sb = Sandbox::new();
    let out = in_private_mount(
        &sb,
        r#"
set -e
mount -t tmpfs -o size=256k tmpfs "$D"
"$L" next --snowflake --worker-id 5 -n 5 > "$O/first"
cp "$D/snowflake-leaf-5.json" "$O/before"
dd if=/dev/zero of="$D/filler" bs=4k 2>/dev/null || true
set +e
"$L" next --snowflake --worker-id 5 -n 5 > "$O/second" 2> "$O/second.err"
echo $? > "$O/second.rc"
cp "$D/snowflake-leaf-5.json" "$O/after"
rm -f "$D/filler" "$D"/*.tmp
"$L" next --snowflake --worker-id 5 -n 5 > "$O/third" 2> "$O/third.err"
echo $? > "$O/third.rc"
"#,
    );
    let _ = out;
    let o = sb.path().join("out");
    assert_eq!(
        read(&o, "second.rc").trim(),
        "1",
        "{}",
        read(&o, "second.err")
    );
    let err = read(&o, "second.err");
    support::assert_contains_all(&err, &["No space left on device", "snowflake-leaf-5"]);
    support::assert_contains_all(&err, &["hint:", "full or read-only state directory"]);
    assert!(read(&o, "second").is_empty(), "no ID without a reservation");
    assert_eq!(
        read(&o, "before"),
        read(&o, "after"),
        "the record is intact"
    );
    // Once there is room again, the next run continues after the first.
    assert_eq!(
        read(&o, "third.rc").trim(),
        "0",
        "{}",
        read(&o, "third.err")
    );
    let mut ids = parse_ids(read(&o, "first").as_bytes());
    let third = parse_ids(read(&o, "third").as_bytes());
    assert!(third[0] > *ids.iter().max().unwrap());
    ids.extend(third);
    assert_unique(&mut ids);
}

#[test]
fn a_state_file_truncated_or_garbled_by_hand_is_refused_and_left_alone() {
    let sb = Sandbox::new();
    let first = sb.run_ok(["next", "--snowflake", "--worker-id", "6", "-n", "3"]);
    let good = std::fs::read_to_string(state_file(&sb, 6)).unwrap();
    let cut = good.len() / 2;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated", good.as_bytes()[..cut].to_vec()),
        ("garbage bytes", vec![0xff, 0x00, 0x13, 0x37, b'{']),
        (
            "a field missing",
            br#"{"name":"leaf","worker_id":6,"clean":true}"#.to_vec(),
        ),
        (
            "a negative time",
            br#"{"name":"leaf","worker_id":6,"issued_below_ms":-1,"clean":true}"#.to_vec(),
        ),
        (
            "another worker's",
            good.replace("\"worker_id\": 6", "\"worker_id\": 9")
                .into_bytes(),
        ),
    ];
    for (what, bytes) in cases {
        std::fs::write(state_file(&sb, 6), &bytes).unwrap();
        let out = sb.run(["next", "--snowflake", "--worker-id", "6"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: no ID");
        assert!(
            err.contains("state file") && err.contains("snowflake-leaf-6.json"),
            "{what}: {err}"
        );
        assert!(
            err.contains("hint:") && err.contains("another worker id"),
            "{what}: {err}"
        );
        assert_eq!(
            std::fs::read(state_file(&sb, 6)).unwrap(),
            bytes,
            "{what}: the file was left as it was"
        );
        // serve refuses the same way, before listening.
        let out = sb
            .leafctl()
            .timeout(Duration::from_secs(30))
            .args(support::words(
                "serve --snowflake --worker-id 6 --listen 127.0.0.1:0",
            ))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "serve, {what}: {}",
            stderr(&out)
        );
        support::assert_stderr_has(&out, "snowflake-leaf-6.json");
    }
    // Put back, it is accepted, and the run continues after the first.
    std::fs::write(state_file(&sb, 6), &good).unwrap();
    let out = sb.run_ok(["next", "--snowflake", "--worker-id", "6"]);
    assert!(parse_ids(&out.stdout)[0] > *parse_ids(&first.stdout).last().unwrap());
}

#[test]
fn a_lock_held_by_a_stopped_process_is_refused_and_a_killed_ones_is_not_a_reset() {
    let sb = Sandbox::new();
    // The holder blocks on its full stdout pipe once we stop reading: it keeps the lock.
    let mut holder = sb
        .leafctl_std()
        .args(["next", "--snowflake", "--worker-id", "7", "-n", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = holder.id();
    let mut holder_out = holder.stdout.take().unwrap();
    let mut first = [0u8; 1];
    holder_out.read_exact(&mut first).unwrap();
    signal(pid, libc::SIGSTOP);
    // The signal is delivered asynchronously: wait until the kernel shows the holder stopped.
    let stopped = support::wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('T'))
            })
            .unwrap_or(false)
    });
    assert!(stopped, "the holder never showed as stopped");

    // With and without --no-wait: exit 1 at once, naming the stopped holder.
    for args in [&["--no-wait"][..], &[][..]] {
        let started = Instant::now();
        let out = sb
            .leafctl()
            .timeout(Duration::from_secs(60))
            .args(["next", "--snowflake", "--worker-id", "7"])
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("process {pid}")) && err.contains("stopped"),
            "{args:?}: {err}"
        );
        assert!(err.contains("kill -CONT"), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    // serve never waits for a local worker id: the same clear refusal.
    let out = sb
        .leafctl()
        .timeout(Duration::from_secs(60))
        .args(support::words(
            "serve --snowflake --worker-id 7 --listen 127.0.0.1:0",
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    support::assert_stderr_has(&out, "stopped");

    // Resumed (still blocked on its pipe, holding the lock): a new run says whom it waits for ...
    signal(pid, libc::SIGCONT);
    let mut waiter = sb
        .leafctl_std()
        .args(["next", "--snowflake", "--worker-id", "7", "-n", "1000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter_err = BufReader::new(waiter.stderr.take().unwrap());
    let err_reader = std::thread::spawn(move || {
        let mut all = String::new();
        for l in waiter_err.lines().map_while(Result::ok) {
            if l.contains("waiting") {
                let _ = tx.send(());
            }
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    let announced = rx.recv_timeout(Duration::from_secs(30)).is_ok();
    // ... and once the holder is killed mid-run (its lock file stays behind, its reservation is
    // on disk), goes on after every time the holder used.
    signal(pid, libc::SIGKILL);
    let _ = holder.wait();
    let mut printed = first.to_vec();
    holder_out.read_to_end(&mut printed).unwrap();
    let mut ids = complete_ids(&printed);
    let out = waiter.wait_with_output().unwrap();
    let err = err_reader.join().unwrap();
    assert!(announced, "no waiting notice: {err}");
    assert!(out.status.success(), "{err}");
    support::assert_contains_all(
        &err,
        &["in use by another leafctl process", &format!("pid {pid}")],
    );
    assert!(!ids.is_empty());
    let after = parse_ids(&out.stdout);
    assert_eq!(after.len(), 1000);
    let last_killed = ids.iter().map(|&i| time_of(i)).max().unwrap();
    assert!(
        time_of(after[0]) > last_killed,
        "the run after the kill starts after every time the killed run used"
    );
    assert!(sb.state_dir().join("snowflake-leaf-7.lock").exists());
    assert_eq!(recorded(&sb, 7)["clean"], true);
    ids.extend(after);
    assert_unique(&mut ids);
}

/// A read-only SQLite database (issue 18 #10): the error and its hint are about the file's
/// permissions and name it, not "the database server's log".
#[test]
fn a_read_only_sqlite_file_names_the_file_and_its_permissions() {
    let sb = Sandbox::new();
    let out = in_private_mount(
        &sb,
        r#"
set -e
mkdir -p "$D/db"
mount -t tmpfs -o size=1m tmpfs "$D/db"
"$L" --db "sqlite://$D/db/leaf.db" db init > /dev/null
"$L" --db "sqlite://$D/db/leaf.db" tag add t > /dev/null
mount -o remount,ro "$D/db"
set +e
"$L" --db "sqlite://$D/db/leaf.db" next t -n 3 > "$O/next" 2> "$O/next.err"
echo $? > "$O/next.rc"
"$L" --db "sqlite://$D/db/leaf.db" tag add u > /dev/null 2> "$O/add.err"
echo $? > "$O/add.rc"
"#,
    );
    let _ = out;
    let o = sb.path().join("out");
    let file = sb.state_dir().join("db/leaf.db");
    for (rc, err) in [("next.rc", "next.err"), ("add.rc", "add.err")] {
        let err = read(&o, err);
        assert_eq!(read(&o, rc).trim(), "1", "{err}");
        assert!(
            err.contains("readonly") || err.contains("read-only"),
            "{err}"
        );
        assert!(
            err.contains(&format!("hint: check that {}", file.display()))
                && err.contains("writable"),
            "the hint names the file and its permissions: {err}"
        );
        assert!(!err.contains("server's log"), "{err}");
    }
    assert!(read(&o, "next").is_empty());
}
