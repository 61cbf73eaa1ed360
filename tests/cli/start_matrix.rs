//! However leafctl is started (issue 46 #1): every command that writes, with its standard output
//! and its standard error each a terminal, a pipe, a pipe whose reader is gone, a file,
//! `/dev/null` write-only and read-write, closed and full, started directly (as a shell's
//! redirections leave it), from `sh -c` and from Python's `subprocess`. `/dev/null` in either
//! mode is a place to discard output (exit 0); a descriptor closed at start is exit 3 for every
//! command that writes, and so is a full device; a reader gone ends quietly (exit 0); a closed,
//! full or abandoned stderr never changes the outcome.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use crate::support::{self, Sandbox};

/// Where a descriptor goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sink {
    Terminal,
    Pipe,
    ReaderGone,
    File,
    NullWriteOnly,
    NullReadWrite,
    Closed,
    Full,
}

const SINKS: [Sink; 8] = [
    Sink::Terminal,
    Sink::Pipe,
    Sink::ReaderGone,
    Sink::File,
    Sink::NullWriteOnly,
    Sink::NullReadWrite,
    Sink::Closed,
    Sink::Full,
];

/// The exit code stdout's `sink` must give a command that writes.
fn expected_exit(sink: Sink) -> i32 {
    match sink {
        Sink::Closed | Sink::Full => 3,
        _ => 0,
    }
}

/// Every command that writes, on a sandbox that has what it reads (a tag `t`).
fn commands() -> Vec<Vec<&'static str>> {
    vec![
        vec!["next", "--snowflake", "--worker-id", "7", "-n", "3"],
        vec!["next", "t", "-n", "3"],
        vec!["decode", "2125018011969523729"],
        vec!["tag", "list"],
        vec!["tag", "show", "t"],
        vec!["config", "show"],
    ]
}

/// Points descriptor `fd` of `cmd` at `sink` (not [`Sink::Terminal`], which runs under
/// `script`); returns the file it writes, for [`Sink::File`].
fn point(cmd: &mut Command, fd: i32, sink: Sink, sb: &Sandbox) -> Option<std::path::PathBuf> {
    let stdio: Stdio = match sink {
        Sink::Terminal => unreachable!("a terminal is script's"),
        Sink::Pipe => Stdio::piped(),
        Sink::ReaderGone => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            writer.into()
        }
        Sink::File => {
            let path = sb.path().join(format!("out-{fd}"));
            let file = std::fs::File::create(&path).expect("file");
            if fd == 1 {
                cmd.stdout(file);
            } else {
                cmd.stderr(file);
            }
            return Some(path);
        }
        Sink::NullWriteOnly => std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .expect("/dev/null")
            .into(),
        Sink::NullReadWrite => std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .expect("/dev/null")
            .into(),
        Sink::Full => std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into(),
        Sink::Closed => {
            // SAFETY: close(2) between fork and exec, on the child's own descriptor.
            unsafe {
                cmd.pre_exec(move || {
                    libc::close(fd);
                    Ok(())
                });
            }
            return None;
        }
    };
    if fd == 1 {
        cmd.stdout(stdio);
    } else {
        cmd.stderr(stdio);
    }
    None
}

/// Runs `args` directly with descriptor `fd` on `sink` (the other output piped): its exit code
/// and what reached standard output (when it can be read: a pipe, a file, a terminal).
fn direct(sb: &Sandbox, args: &[&str], fd: i32, sink: Sink) -> (Option<i32>, String) {
    if sink == Sink::Terminal {
        let line = format!(
            "{{bin}} {} {}; echo \"exit=$?\"",
            args.join(" "),
            if fd == 1 { "2>/dev/null" } else { ">/dev/null" }
        );
        let shown = support::on_a_terminal_of(sb, 200, &line, None);
        let code = shown
            .lines()
            .find_map(|l| l.trim().strip_prefix("exit="))
            .and_then(|c| c.parse().ok());
        let text = shown
            .lines()
            .filter(|l| !l.starts_with("exit="))
            .collect::<Vec<_>>()
            .join("\n");
        return (code, text);
    }
    let mut cmd = sb.leafctl_std();
    cmd.args(args).stdin(Stdio::null());
    let other = if fd == 1 { 2 } else { 1 };
    point(&mut cmd, other, Sink::Pipe, sb);
    let file = point(&mut cmd, fd, sink, sb);
    let out = cmd.output().expect("run leafctl");
    let text = match file {
        Some(path) if fd == 1 => std::fs::read_to_string(path).unwrap_or_default(),
        _ => String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    (out.status.code(), text)
}

/// Every stdout cell of every command, started directly: the exit code, and the output where
/// it can be read.
#[test]
fn every_command_that_writes_under_every_stdout() {
    let sb = Sandbox::with_tag("t", "10");
    let mut failures = Vec::new();
    for args in commands() {
        for sink in SINKS {
            let (code, text) = direct(&sb, &args, 1, sink);
            let want = expected_exit(sink);
            if code != Some(want) {
                failures.push(format!("{args:?} >{sink:?}: exit {code:?}, not {want}"));
            }
            let readable = matches!(sink, Sink::Pipe | Sink::File | Sink::Terminal);
            if readable && text.trim().is_empty() {
                failures.push(format!("{args:?} >{sink:?}: no output"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every stderr cell: a command that succeeds succeeds whatever its stderr is, its output
/// whole; one that fails keeps its exit code (2 for a usage error).
#[test]
fn every_stderr_leaves_the_outcome_alone() {
    let sb = Sandbox::with_tag("t", "10");
    let mut failures = Vec::new();
    for sink in SINKS.into_iter().filter(|s| *s != Sink::Terminal) {
        for args in commands() {
            let (code, text) = direct(&sb, &args, 2, sink);
            if code != Some(0) || text.trim().is_empty() {
                failures.push(format!(
                    "{args:?} 2>{sink:?}: exit {code:?}, output {text:?}"
                ));
            }
        }
        let (code, _) = direct(&sb, &["decode", "abc"], 2, sink);
        if code != Some(2) {
            failures.push(format!("decode abc 2>{sink:?}: exit {code:?}, not 2"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// From a shell (`bash -c`), with the shell's own redirections: `>/dev/null`, `1<>/dev/null`,
/// `>&-`, `>/dev/full`, `| head -c 1` and a file.
#[test]
fn from_a_shell() {
    let sb = Sandbox::with_tag("t", "10");
    let template = sb.leafctl_std();
    let mut failures = Vec::new();
    for args in commands() {
        for (redirect, want) in [
            (">/dev/null", 0),
            ("1<>/dev/null", 0),
            (">&-", 3),
            (">/dev/full", 3),
            ("| head -c 1 >/dev/null", 0),
            ("> out.txt", 0),
        ] {
            // leafctl's own status, also at the head of a pipe.
            let line = format!(
                "\"$LEAFCTL\" {} 2>/dev/null {redirect}; exit ${{PIPESTATUS[0]}}",
                args.join(" ")
            );
            let mut sh = Command::new("bash");
            sh.args(["-c", &line])
                .env("LEAFCTL", template.get_program())
                .current_dir(sb.path())
                .stdin(Stdio::null())
                .stderr(Stdio::null());
            for (k, v) in template.get_envs() {
                match v {
                    Some(v) => sh.env(k, v),
                    None => sh.env_remove(k),
                };
            }
            let code = sh.output().expect("bash").status.code();
            if code != Some(want) {
                failures.push(format!(
                    "bash: {args:?} {redirect}: exit {code:?}, not {want}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// From Python's `subprocess`, the way scripts start it: `stdout=DEVNULL` (read-write, as Node's
/// `'ignore'`), a pipe, a file, `/dev/full`, and stdout closed in the child.
#[test]
fn from_python_subprocess() {
    let sb = Sandbox::with_tag("t", "10");
    let bin = sb.leafctl_std().get_program().to_owned();
    let script = r#"
import json, os, subprocess, sys
bin, args = sys.argv[1], json.loads(sys.argv[2])
def run(**kw):
    return subprocess.run([bin] + args, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw).returncode
out = {}
out["devnull"] = run(stdout=subprocess.DEVNULL)
out["pipe"] = run(stdout=subprocess.PIPE)
with open("py-out.txt", "w") as f:
    out["file"] = run(stdout=f)
with open("/dev/full", "w") as f:
    out["full"] = run(stdout=f)
out["closed"] = run(preexec_fn=lambda: os.close(1))
print(json.dumps(out))
"#;
    let mut failures = Vec::new();
    for args in commands() {
        let mut py = Command::new("python3");
        let template = sb.leafctl_std();
        for (k, v) in template.get_envs() {
            match v {
                Some(v) => py.env(k, v),
                None => py.env_remove(k),
            };
        }
        let out = py
            .args(["-c", script])
            .arg(&bin)
            .arg(serde_json::to_string(&args).unwrap())
            .current_dir(sb.path())
            .output()
            .expect("python3");
        assert!(out.status.success(), "{}", support::stderr(&out));
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for (cell, want) in [
            ("devnull", 0),
            ("pipe", 0),
            ("file", 0),
            ("full", 3),
            ("closed", 3),
        ] {
            if got[cell] != want {
                failures.push(format!(
                    "python: {args:?} {cell}: exit {}, not {want}",
                    got[cell]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
