//! Clock faults on a real process with Debian's libfaketime (package `faketime`, installed by
//! scripts/test): a clock set off at start (`FAKETIME=OFFSET`, as `faketime -f OFFSET`), or read from a file the test
//! rewrites while the process runs.
//!
//! Both set `DONT_FAKE_MONOTONIC=1`: a real clock step (NTP, an operator) moves only the wall
//! clock, and a faked monotonic clock goes negative on a machine up for less than the offset (a
//! fresh test machine often is), which makes timers in the process under test wait for ever.
//! What leafctl checks against its records is the wall clock, so the faults tested are the same.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Sandbox;
use super::serve::Server;

/// `cmd` (a leafctl command with its environment and working directory, e.g.
/// `sb.leafctl_std()`) run with its clock set off by OFFSET (libfaketime's `FAKETIME`, what
/// `faketime -f OFFSET` sets), the monotonic clock left alone as a real clock step leaves it.
/// The library is preloaded directly rather than through the `faketime` wrapper: the wrapper
/// opens a semaphore named after its process id, which a killed run leaves behind, and a later
/// wrapper given the same id fails with "sem_open: File exists".
pub fn under_faketime(cmd: &Command, offset: &str) -> Command {
    let mut c = preloaded(cmd);
    c.env("FAKETIME", offset);
    c
}

/// `cmd` with its clock read from `file` on every call (libfaketime's
/// `FAKETIME_TIMESTAMP_FILE`), so a test can step the clock of the running process by
/// rewriting the file (`+0`, `-10s`, `+1h`, ...). The monotonic clock is left alone.
pub fn with_clock_file(cmd: &Command, file: &Path) -> Command {
    let mut c = preloaded(cmd);
    c.env("FAKETIME_TIMESTAMP_FILE", file)
        .env("FAKETIME_NO_CACHE", "1");
    c
}

/// A copy of `cmd` (program, arguments, environment, working directory) with libfaketime
/// preloaded and the monotonic clock left alone; the caller says how to fake the clock.
fn preloaded(cmd: &Command) -> Command {
    let mut c = Command::new(cmd.get_program());
    c.args(cmd.get_args());
    super::copy_env(cmd, &mut c);
    c.env("LD_PRELOAD", libfaketime())
        .env("DONT_FAKE_MONOTONIC", "1");
    c
}

/// Debian's libfaketime, for this architecture. Sweeps what killed processes left behind first
/// ([`sweep_stale_shm`]).
pub fn libfaketime() -> PathBuf {
    sweep_stale_shm();
    std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists())
        .expect("libfaketime.so.1 under /usr/lib/*/faketime: install Debian's faketime")
}

/// libfaketime (0.9.10) creates, exclusively, a shared memory object and a semaphore named
/// after each process it is preloaded into (`/dev/shm/faketime_shm_PID`,
/// `/dev/shm/sem.faketime_sem_PID`); a process killed with SIGKILL leaves them behind, and a
/// later process given the same id exits at start ("ft_shm_create(), shm_open failed: File
/// exists"). Removes those of processes that no longer run; a live process's are left alone.
fn sweep_stale_shm() {
    let Ok(entries) = std::fs::read_dir("/dev/shm") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let pid = name
            .strip_prefix("faketime_shm_")
            .or_else(|| name.strip_prefix("sem.faketime_sem_"))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The offset file running processes read their clock from (see [`with_clock_file`]).
pub struct ClockFile(PathBuf);

impl ClockFile {
    /// `DIR/clock`, set to the true time (`+0`).
    pub fn new(dir: &Path) -> ClockFile {
        let f = ClockFile(dir.join("clock"));
        f.set("+0");
        f
    }

    /// Sets the offset from the real clock (libfaketime's syntax: `-0.003`, `-10`, `+3600`),
    /// replacing the file atomically so a reader never sees half of it.
    pub fn set(&self, offset: &str) {
        let tmp = self.0.with_extension("tmp");
        std::fs::write(&tmp, format!("{offset}\n")).unwrap();
        std::fs::rename(&tmp, &self.0).unwrap();
    }

    /// Sets the offset in ms (negative: behind the real clock).
    pub fn set_ms(&self, offset_ms: i64) {
        self.set(&format!("{:+.3}", offset_ms as f64 / 1000.0));
    }

    /// `cmd` with its clock read from this file.
    pub fn command(&self, cmd: &Command) -> Command {
        with_clock_file(cmd, &self.0)
    }

    /// `leafctl ARGS` (a `serve`) in `sb`, its clock read from this file.
    pub fn serve(&self, sb: &Sandbox, args: &[&str]) -> Server {
        let mut cmd = sb.leafctl_std();
        cmd.args(args);
        Server::start(self.command(&cmd))
    }
}
