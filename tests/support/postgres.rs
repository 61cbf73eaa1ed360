//! A private PostgreSQL 15 (Debian's `postgresql-15`) for one test binary, or for one test that
//! pauses, kills or restarts it, or fails over to a streaming replica.
//!
//! `initdb` makes a data directory in a temp dir under /tmp and `postgres` serves it on a free
//! loopback port and on a Unix socket in that temp dir. PostgreSQL refuses to run as root, so
//! `initdb`, `postgres` and `pg_basebackup` run as the `postgres` user the package created, and
//! the temp dir belongs to it; the tests' own SQL goes over the socket as the superuser
//! `postgres` (`psql` running as root may open the socket anyway). Over TCP, `leaf` is trusted
//! and `leaf_pw` must give [`PASSWORD`] (SCRAM). The server runs under a small shell watchdog
//! whose stdin is a pipe held by the test process: when the test binary ends, however it ends,
//! the pipe closes and the watchdog stops the server and removes the temp dir, so no postgres
//! outlives the tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::etcd::Certs;
use super::netns::Place;
use super::{free_port, wait_until};

/// The password of the `leaf_pw` role (the one role that must give a password over TCP).
pub const PASSWORD: &str = "pw";

/// How long a start, a shutdown or a replica's catching up may take.
const BOUND: Duration = Duration::from_secs(30);

/// A PostgreSQL 15 program (`postgres`, `initdb`, `psql`, ...).
fn bin(name: &str) -> PathBuf {
    Path::new("/usr/lib/postgresql/15/bin").join(name)
}

/// Settings every instance shares, appended to `postgresql.conf` (which `pg_basebackup` copies
/// to a replica); the port and the addresses are the instance's own, on its command line.
const CONF: &str = "
fsync = off
shared_buffers = 16MB
max_connections = 100
wal_level = replica
max_wal_senders = 5
dynamic_shared_memory_type = mmap
log_destination = stderr
logging_collector = off
";

/// Client authentication: the socket is trusted (the tests' SQL), `leaf_pw` needs its password
/// over TCP, everyone else is trusted on 127.0.0.1, replication included. `{host}` is `host`,
/// or `hostssl` on a TLS server, which then also rejects plain TCP.
const HBA: &str = "local all all trust
{host} replication all 127.0.0.1/32 trust
{host} all leaf_pw 127.0.0.1/32 scram-sha-256
{host} all all 127.0.0.1/32 trust
{host} all all 198.18.0.0/15 trust
";

/// The server under its watchdog. On stdin the watchdog waits for a line: `keep` stops the
/// server and leaves the temp dir; anything else, or the pipe closing, also removes the dir.
const WATCHDOG: &str = r#"
setpriv --reuid=postgres --regid=postgres --init-groups -- "$POSTGRES" -D "$D/data" \
  -c port="$PORT" -c listen_addresses="$BIND" -c unix_socket_directories="$D" \
  </dev/null >>"$D/postgres.log" 2>&1 &
pid=$!
echo "$pid"
read -r cmd
kids=$(pgrep -P "$pid")
kill -CONT "$pid" $kids 2>/dev/null
kill -INT "$pid" 2>/dev/null
( sleep 15; kill -KILL "$pid" $kids 2>/dev/null ) &
killer=$!
wait "$pid"
kill "$killer" 2>/dev/null
if [ "$cmd" != keep ]; then rm -rf "$D"; fi
"#;

struct Running {
    watchdog: Child,
    stdin: ChildStdin,
    /// The postmaster's.
    pid: u32,
}

/// One PostgreSQL server with its data directory.
pub struct Postgres {
    pub port: u16,
    /// Where it runs and listens (its namespace and address); the socket works from anywhere.
    pub place: Place,
    /// The temp dir: `data/`, the socket, `postgres.log`.
    dir: PathBuf,
    running: Mutex<Option<Running>>,
    next_db: AtomicU32,
}

impl Postgres {
    /// The server shared by every test in this binary (started on first use).
    pub fn shared() -> &'static Postgres {
        static SHARED: OnceLock<Postgres> = OnceLock::new();
        SHARED.get_or_init(Postgres::start)
    }

    /// A server of its own, for tests that pause, kill or restart it.
    pub fn start() -> Postgres {
        Postgres::start_with(None)
    }

    /// A server that takes TCP clients only over TLS, with `certs`' server certificate
    /// (`sslmode=disable` is rejected; the CA is `certs.ca`).
    pub fn start_tls(certs: &Certs) -> Postgres {
        Postgres::start_with(Some(certs))
    }

    /// A server at `place` (a host of a private network, [`super::netns`]), listening on its
    /// address.
    pub fn start_at(place: &Place) -> Postgres {
        Postgres::start_with_at(None, place)
    }

    fn start_with(tls: Option<&Certs>) -> Postgres {
        Postgres::start_with_at(tls, &Place::local())
    }

    fn start_with_at(tls: Option<&Certs>, place: &Place) -> Postgres {
        let mut pg = Postgres::in_new_dir();
        pg.place = place.clone();
        super::run_ok(
            pg.as_postgres(bin("initdb"))
                .arg("-D")
                .arg(pg.data())
                .args(["-U", "postgres", "--auth-local=trust", "--auth-host=trust"])
                .args(["-E", "UTF8", "--locale=C", "--no-sync"]),
        );
        let conf_path = pg.data().join("postgresql.conf");
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(&conf_path)
            .unwrap_or_else(|e| panic!("open {}: {e}", conf_path.display()));
        conf.write_all(CONF.as_bytes())
            .expect("write postgresql.conf");
        let mut hba = HBA.replace("{host}", if tls.is_some() { "hostssl" } else { "host" });
        if let Some(certs) = tls {
            for (from, to) in [(&certs.cert, "server.crt"), (&certs.key, "server.key")] {
                let to = pg.data().join(to);
                std::fs::copy(from, &to)
                    .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
                give_to_postgres(&to, 0o600);
            }
            conf.write_all(
                b"ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
            )
            .expect("write postgresql.conf");
            hba.push_str("hostnossl all all 127.0.0.1/32 reject\n");
        }
        std::fs::write(pg.data().join("pg_hba.conf"), hba).expect("write pg_hba.conf");
        let pg = pg.serve_on_a_free_port();
        pg.sql(
            None,
            &format!(
                "CREATE ROLE leaf LOGIN SUPERUSER; \
                 CREATE ROLE leaf_pw LOGIN SUPERUSER PASSWORD '{PASSWORD}'"
            ),
        );
        pg
    }

    /// A streaming replica of `primary` (running): `pg_basebackup -R` of it, served on a port of
    /// its own, read-only until [`Postgres::promote`], with the primary's settings, roles and
    /// TLS. Replication is asynchronous: what the primary commits reaches the replica a little
    /// later, or never if the primary dies first.
    pub fn replica_of(primary: &Postgres) -> Postgres {
        let replica = Postgres::in_new_dir();
        super::run_ok(
            replica
                .as_postgres(bin("pg_basebackup"))
                .args(super::words(&format!(
                    "-h 127.0.0.1 -p {} -U postgres",
                    primary.port
                )))
                .arg("-D")
                .arg(replica.data())
                .args(["-R", "-c", "fast", "-X", "stream"]),
        );
        // The copy holds the primary's fresh databases: new ones get names after theirs.
        let made = primary.next_db.load(Ordering::SeqCst);
        replica.next_db.store(made, Ordering::SeqCst);
        replica.serve_on_a_free_port()
    }

    /// An empty temp dir under /tmp that belongs to `postgres`, and a server to be made in it.
    fn in_new_dir() -> Postgres {
        let dir = tempfile::Builder::new()
            .prefix("leafctl-pg-")
            .tempdir_in("/tmp")
            .expect("temp dir")
            .keep();
        give_to_postgres(&dir, 0o700);
        Postgres {
            port: 0,
            place: Place::local(),
            dir,
            running: Mutex::new(None),
            next_db: AtomicU32::new(0),
        }
    }

    /// Serves the data directory on a free port; a port found free may be taken before the
    /// server binds it, then it tries another.
    fn serve_on_a_free_port(mut self) -> Postgres {
        for _ in 0..3 {
            self.port = free_port();
            let _ = std::fs::remove_file(self.log_file());
            if self.launch() {
                return self;
            }
        }
        panic!("postgres found its port taken three times in a row");
    }

    /// `program` run as the `postgres` user, in the temp dir.
    fn as_postgres(&self, program: PathBuf) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.args(super::words(
            "--reuid=postgres --regid=postgres --init-groups --",
        ))
        .arg(program)
        .current_dir(&self.dir)
        .env("HOME", &self.dir)
        .stdin(Stdio::null());
        cmd
    }

    /// The temp directory: the data directory, the socket and the log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.join("postgres.log")
    }

    /// The server's log (all its starts), for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_file()).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Starts postgres on the data directory and port under its watchdog and waits until it
    /// accepts connections; false if its port was taken (then it is not running).
    fn launch(&self) -> bool {
        let mut guard = self.running.lock().expect("lock");
        assert!(guard.is_none(), "postgres is already running");
        let mut watchdog = self
            .place
            .command("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .env("POSTGRES", bin("postgres"))
            .env("D", &self.dir)
            .env("PORT", self.port.to_string())
            .env("BIND", self.place.ip.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the postgres watchdog");
        let stdin = watchdog.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(watchdog.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("postgres pid");
        let pid: u32 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("postgres pid is a number: {line:?}"));
        *guard = Some(Running {
            watchdog,
            stdin,
            pid,
        });
        drop(guard);
        let port_taken = || self.log().contains("could not create any TCP/IP sockets");
        wait_until(BOUND, || self.ready() || gone(pid) || port_taken());
        if self.ready() {
            return true;
        }
        let taken = port_taken();
        self.reap();
        assert!(
            taken,
            "postgres did not become ready on port {} within {BOUND:?}; log tail:\n{}",
            self.port,
            self.log_tail()
        );
        false
    }

    /// True when the server accepts connections (on its socket).
    fn ready(&self) -> bool {
        Command::new(bin("pg_isready"))
            .arg("-h")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-t", "2", "-q"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// True while the server runs (started, and neither stopped nor killed since).
    pub fn is_running(&self) -> bool {
        self.running.lock().expect("lock").is_some()
    }

    /// `psql` running `sql` as the superuser over the socket (in database `db`, else
    /// `postgres`), stopping at the first error: to run in the background, or to look at a
    /// failure.
    pub fn sql_command(&self, db: Option<&str>, sql: &str) -> Command {
        let mut cmd = Command::new(bin("psql"));
        cmd.arg("-h")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres"])
            .args(["-d", db.unwrap_or("postgres")])
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `sql` as the superuser over the socket; its output (unaligned, tuples only,
    /// `|` between columns), trimmed. Panics with psql's stderr if it fails.
    pub fn sql(&self, db: Option<&str>, sql: &str) -> String {
        let out = super::run_ok(self.sql_command(db, sql));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A tag's max_id in `leaf_alloc` of database `db`, read as the superuser.
    pub fn max_id(&self, db: &str, tag: &str) -> i64 {
        let out = self.sql(
            Some(db),
            &format!("SELECT max_id FROM leaf_alloc WHERE biz_tag = '{tag}'"),
        );
        out.parse()
            .unwrap_or_else(|_| panic!("max_id of {tag:?} in {db}: {out:?}"))
    }

    /// A new empty database: its name and [`Self::url`].
    pub fn fresh_db_url(&self) -> (String, String) {
        let name = self.fresh_db();
        let url = self.url(&name);
        (name, url)
    }

    /// A new empty database (`leaf_1`, `leaf_2`, ...) owned by `leaf`; returns its name.
    pub fn fresh_db(&self) -> String {
        let name = format!("leaf_{}", self.next_db.fetch_add(1, Ordering::SeqCst) + 1);
        self.sql(None, &format!("CREATE DATABASE {name} OWNER leaf"));
        name
    }

    /// The URL leafctl connects with, as `leaf` (trusted: no password).
    pub fn url(&self, db: &str) -> String {
        self.url_for("leaf", db)
    }

    /// The URL of `db` as `user` (`leaf_pw` needs [`PASSWORD`], given some other way).
    pub fn url_for(&self, user: &str, db: &str) -> String {
        format!("postgres://{user}@{}/{db}", self.place.hostport(self.port))
    }

    fn pid(&self) -> u32 {
        self.running
            .lock()
            .expect("lock")
            .as_ref()
            .expect("postgres is not running")
            .pid
    }

    /// Freezes the server (SIGSTOP to the postmaster, then to its children, the backends of
    /// open connections among them): nothing answers, new connections or old.
    pub fn pause(&self) {
        let pid = self.pid();
        send(pid, libc::SIGSTOP);
        for kid in children(pid) {
            send(kid, libc::SIGSTOP);
        }
    }

    /// Thaws a paused server (SIGCONT to all of it).
    pub fn resume(&self) {
        let pid = self.pid();
        for kid in children(pid) {
            send(kid, libc::SIGCONT);
        }
        send(pid, libc::SIGCONT);
    }

    /// Kills the server (SIGKILL to the postmaster and its children), like a crash, and waits
    /// until all of it is gone.
    pub fn kill(&self) {
        let pid = self.pid();
        let all: Vec<u32> = std::iter::once(pid).chain(children(pid)).collect();
        for p in &all {
            send(*p, libc::SIGKILL);
        }
        assert!(
            wait_until(BOUND, || all.iter().all(|p| gone(*p))),
            "postgres processes survived SIGKILL"
        );
        self.reap();
        // The crash leaves the server's small System V segment behind (a restart would reuse
        // its key and remove it, but a killed server may never restart).
        let pid_file =
            std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap_or_default();
        if let Some(shmid) = pid_file
            .lines()
            .nth(6)
            .and_then(|l| l.split_whitespace().nth(1))
        {
            let _ = Command::new("ipcrm").args(["-m", shmid]).output();
        }
    }

    /// Stops the server (fast shutdown: SIGINT, after a SIGCONT in case it was paused) and
    /// waits until it has exited.
    pub fn stop(&self) {
        assert!(self.is_running(), "postgres is not running");
        self.reap();
    }

    /// Starts it again on the same data directory and port; waits until it accepts
    /// connections (after crash recovery, if it was killed).
    pub fn restart(&self) {
        assert!(
            self.launch(),
            "postgres could not bind port {} again; log tail:\n{}",
            self.port,
            self.log_tail()
        );
    }

    /// Tells the watchdog to stop the server and keep the temp dir, and waits for it.
    fn reap(&self) {
        let taken = self.running.lock().expect("lock").take();
        if let Some(mut r) = taken {
            let _ = writeln!(r.stdin, "keep");
            drop(r.stdin);
            let _ = r.watchdog.wait();
        }
    }

    /// Waits (up to 30 s) until this replica has replayed everything `primary` has written.
    pub fn catch_up_with(&self, primary: &Postgres) {
        let lsn = primary.sql(None, "SELECT pg_current_wal_lsn()");
        let replayed = || {
            self.sql(
                None,
                &format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"),
            ) == "t"
        };
        assert!(
            wait_until(BOUND, replayed),
            "the replica did not replay up to {lsn}: it is at {}",
            self.sql(None, "SELECT pg_last_wal_replay_lsn()")
        );
    }

    /// Stops this replica following its primary (its WAL receiver ends): what the primary
    /// commits from now on never arrives here.
    pub fn stop_replication(&self) {
        self.sql(None, "ALTER SYSTEM SET primary_conninfo = ''");
        self.sql(None, "SELECT pg_reload_conf()");
        assert!(
            wait_until(BOUND, || self
                .sql(None, "SELECT count(*) FROM pg_stat_wal_receiver")
                == "0"),
            "the replica's WAL receiver did not stop"
        );
    }

    /// Promotes this replica to a primary (it stops following and takes writes); returns once
    /// it is out of recovery.
    pub fn promote(&self) {
        let promoted = self.sql(None, "SELECT pg_promote(true, 30)");
        assert_eq!(promoted, "t", "pg_promote; log tail:\n{}", self.log_tail());
        assert!(
            wait_until(BOUND, || self.sql(None, "SELECT pg_is_in_recovery()")
                == "f"),
            "the promoted replica is still in recovery"
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.running.lock()
            && let Some(mut r) = guard.take()
        {
            let _ = writeln!(r.stdin, "stop");
            drop(r.stdin);
            let _ = r.watchdog.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Makes `path` belong to the `postgres` user and group, with `mode`.
fn give_to_postgres(path: &Path, mode: u32) {
    static IDS: OnceLock<(u32, u32)> = OnceLock::new();
    let (uid, gid) = *IDS.get_or_init(|| {
        let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
        let fields: Vec<&str> = passwd
            .lines()
            .find(|l| l.starts_with("postgres:"))
            .expect("a postgres user (made by the postgresql-15 package)")
            .split(':')
            .collect();
        let id = |i: usize| fields[i].parse().expect("a numeric id in /etc/passwd");
        (id(2), id(3))
    });
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// The children of process `pid` (the postmaster's: its backends and helpers).
fn children(pid: u32) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .expect("run pgrep (procps)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Sends `sig` to `pid`; a process that has exited meanwhile is no error.
fn send(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid of this test's postgres and a valid signal number.
    let rc = unsafe { libc::kill(pid as i32, sig) };
    let err = std::io::Error::last_os_error();
    assert!(
        rc == 0 || err.raw_os_error() == Some(libc::ESRCH),
        "kill({pid}, {sig}): {err}"
    );
}

/// True when process `pid` has exited (no such process, or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}
