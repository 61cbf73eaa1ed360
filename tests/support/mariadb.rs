//! A private MariaDB for one test binary (or for one test that stops and restarts it).
//!
//! `mariadb-install-db` initialises a data directory in a temp dir and `mariadbd` serves it on a
//! free loopback port (or on a host of a private network, [`super::netns`]), with a TCP user
//! `leaf`/`pw` as production would use; the tests' own SQL goes over its Unix socket, which a cut
//! network link does not affect. The server runs under
//! a small shell watchdog whose stdin is a pipe held by the test process: when the test binary
//! ends, however it ends, the pipe closes and the watchdog stops the server and removes the data
//! directory, so no mariadbd outlives the tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::netns::Place;
use super::{free_port, wait_until};

/// Leaf's `scripts/leaf_alloc.sql`, verbatim.
pub const LEAF_DDL: &str = "CREATE TABLE `leaf_alloc` (
  `biz_tag` varchar(128)  NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256)  DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB;";

/// Leaf's README row.
pub const LEAF_ROW: &str = "insert into leaf_alloc(biz_tag, max_id, step, description) \
     values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')";

/// The password of the `leaf` user.
pub const PASSWORD: &str = "pw";

fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    PathBuf::from(name)
}

/// The server's command line (shell words), with its options in `$EXTRA`.
const MARIADBD_CMD: &str = r#""$MARIADBD" --no-defaults --user=root --datadir="$D/data" --port="$PORT" \
  --bind-address="$BIND" --socket="$D/sock" --pid-file="$D/pid" \
  --innodb-buffer-pool-size=64M --skip-log-bin --tmpdir="$D/tmp" $EXTRA"#;

struct Running {
    watchdog: Child,
    stdin: ChildStdin,
    pid: u32,
}

/// One mariadbd with its data directory.
pub struct MariaDb {
    pub port: u16,
    /// Where it runs and listens.
    pub place: Place,
    dir: PathBuf,
    /// Extra `mariadbd` options (e.g. TLS), word-split by the shell.
    extra: String,
    running: Mutex<Option<Running>>,
    next_db: AtomicU32,
}

impl MariaDb {
    /// The server shared by every test in this binary (started on first use).
    pub fn shared() -> &'static MariaDb {
        static SHARED: OnceLock<MariaDb> = OnceLock::new();
        SHARED.get_or_init(MariaDb::start)
    }

    /// Initialises a data directory and starts a server on it.
    pub fn start() -> MariaDb {
        MariaDb::start_with(&[])
    }

    /// The same with extra `mariadbd` options (no spaces inside one).
    pub fn start_with(extra: &[&str]) -> MariaDb {
        MariaDb::start_at(&Place::local(), extra)
    }

    /// A server at `place` (its namespace and address), with extra `mariadbd` options.
    pub fn start_at(place: &Place, extra: &[&str]) -> MariaDb {
        let db = MariaDb::initialised(place, extra);
        db.launch(&[]);
        db.create_user();
        db
    }

    /// A data directory made by `mariadb-install-db`, not yet served.
    pub(crate) fn initialised(place: &Place, extra: &[&str]) -> MariaDb {
        let db = MariaDb::empty(place, extra);
        // A private tmpdir, and one bootstrap at a time: concurrent bootstraps sharing /tmp
        // collide on their temporary tables.
        static BOOTSTRAP: Mutex<()> = Mutex::new(());
        let _one = BOOTSTRAP.lock().unwrap_or_else(|p| p.into_inner());
        super::run_ok(
            Command::new(tool("mariadb-install-db"))
                .arg("--user=root")
                .arg(format!("--tmpdir={}", db.dir.join("tmp").display()))
                .arg(format!("--datadir={}", db.dir.join("data").display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db"),
        );
        db
    }

    /// A server with an empty data directory (a Galera joiner, filled by its state transfer),
    /// on a free port, not yet started.
    pub(crate) fn empty(place: &Place, extra: &[&str]) -> MariaDb {
        let dir = tempfile::Builder::new()
            .prefix("leafctl-mariadb-")
            .tempdir()
            .expect("temp dir")
            .keep();
        std::fs::create_dir_all(dir.join("tmp")).expect("tmp dir");
        std::fs::create_dir_all(dir.join("data")).expect("data dir");
        MariaDb::at(place, dir, free_port(), extra)
    }

    /// A server at `place` on `dir` and `port` (already chosen), not yet started.
    pub(crate) fn at(place: &Place, dir: PathBuf, port: u16, extra: &[&str]) -> MariaDb {
        MariaDb {
            port,
            place: place.clone(),
            dir,
            extra: extra.join(" "),
            running: Mutex::new(None),
            next_db: AtomicU32::new(0),
        }
    }

    /// The temp directory that holds the data directory, socket and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The TCP user `leaf` that leafctl connects as.
    pub(crate) fn create_user(&self) {
        self.root_sql(
            None,
            &format!(
                "CREATE USER 'leaf'@'%' IDENTIFIED BY '{PASSWORD}'; GRANT ALL ON *.* TO 'leaf'@'%';"
            ),
        );
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("sock")
    }

    /// Starts mariadbd on the existing data directory and port, with `once` appended to the
    /// options for this start only (`--wsrep-new-cluster`); waits until it answers.
    pub(crate) fn launch(&self, once: &[&str]) {
        if let Err(log) = self.try_launch(once) {
            panic!("mariadbd did not become ready:\n{log}");
        }
    }

    /// [`MariaDb::launch`], returning the error log instead of panicking when the server does
    /// not come up (it has exited, or is reaped: another launch may follow).
    pub(crate) fn try_launch(&self, once: &[&str]) -> Result<(), String> {
        let mut guard = self.running.lock().unwrap();
        assert!(guard.is_none(), "already running");
        let script = format!(
            r#"
{MARIADBD_CMD} --log-error="$D/error.log" $ONCE &
pid=$!
echo "$pid"
read -r cmd
kill -TERM "$pid" 2>/dev/null
kill -CONT "$pid" 2>/dev/null
( sleep 15; kill -KILL "$pid" 2>/dev/null ) &
killer=$!
wait "$pid"
kill "$killer" 2>/dev/null
if [ "$cmd" != keep ]; then rm -rf "$D"; fi
"#
        );
        let mut child = self
            .place
            .command("sh")
            .arg("-c")
            .arg(&script)
            .env("BIND", self.place.ip.to_string())
            .env("MARIADBD", tool("mariadbd"))
            .env("D", &self.dir)
            .env("PORT", self.port.to_string())
            .env("EXTRA", &self.extra)
            .env("ONCE", once.join(" "))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the mariadbd watchdog");
        let stdin = child.stdin.take().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid: u32 = line.trim().parse().expect("mariadbd pid");
        *guard = Some(Running {
            watchdog: child,
            stdin,
            pid,
        });
        drop(guard);
        let ready = wait_until(Duration::from_secs(60), || {
            Command::new(tool("mariadb"))
                .args(["--no-defaults", "-uroot"])
                .arg(format!("--socket={}", self.socket().display()))
                .args(["-e", "select 1"])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        });
        if ready {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
        // Gone or not: stop what is left, keeping the data directory.
        let _ = self
            .place
            .command("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        self.reap();
        Err(log)
    }

    /// The `mariadb` client running SQL as root over the socket (to run in the background).
    pub fn root_sql_command(&self, db: Option<&str>, sql: &str) -> Command {
        let mut cmd = Command::new(tool("mariadb"));
        cmd.args(["--no-defaults", "-uroot", "-N", "-B"])
            .arg(format!("--socket={}", self.socket().display()))
            .args(["-e", sql]);
        if let Some(db) = db {
            cmd.arg(db);
        }
        cmd
    }

    /// Runs SQL as root over the socket and returns the tab-separated output.
    pub fn root_sql(&self, db: Option<&str>, sql: &str) -> String {
        let out = super::run_ok(self.root_sql_command(db, sql));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A tag's max_id in `leaf_alloc` of database `db`, read as root.
    pub fn max_id(&self, db: &str, tag: &str) -> i64 {
        let out = self.root_sql(
            Some(db),
            &format!("SELECT max_id FROM leaf_alloc WHERE biz_tag = '{tag}'"),
        );
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("max_id of {tag:?} in {db}: {out:?}"))
    }

    /// A new empty database: its name and [`Self::url`].
    pub fn fresh_db_url(&self) -> (String, String) {
        let name = self.fresh_db();
        let url = self.url(&name);
        (name, url)
    }

    /// A new empty database; returns its name.
    pub fn fresh_db(&self) -> String {
        let n = self.next_db.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        self.root_sql(None, &format!("CREATE DATABASE `{name}`"));
        name
    }

    /// A new database that `leafctl db init` (run in `sb`, which must succeed) prepared: its
    /// name and URL.
    pub fn initialized_db(&self, sb: &super::Sandbox) -> (String, String) {
        let name = self.fresh_db();
        let url = self.url(&name);
        super::run_ok(
            sb.leafctl()
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .args(["db", "init", "--db", &url]),
        );
        (name, url)
    }

    /// The URL leafctl connects with (no password: that comes from LEAF_DB_PASSWORD).
    pub fn url(&self, db: &str) -> String {
        format!("mysql://leaf@{}/{db}", self.place.hostport(self.port))
    }

    fn signal(&self, sig: &str) {
        let guard = self.running.lock().unwrap();
        let r = guard.as_ref().expect("not running");
        let st = Command::new("kill")
            .args([sig, &r.pid.to_string()])
            .status()
            .unwrap();
        assert!(st.success(), "kill {sig} failed");
    }

    fn reap(&self) {
        let mut guard = self.running.lock().unwrap();
        if let Some(mut r) = guard.take() {
            let _ = writeln!(r.stdin, "keep");
            drop(r.stdin);
            let _ = r.watchdog.wait();
        }
        assert!(
            wait_until(Duration::from_secs(30), || !self.place.listening(self.port)),
            "mariadbd still listening"
        );
    }

    /// Stops the server cleanly (SIGTERM) and waits until it is gone.
    pub fn stop(&self) {
        self.signal("-TERM");
        self.reap();
    }

    /// Kills the server (SIGKILL), like a crash.
    pub fn kill(&self) {
        self.signal("-KILL");
        self.reap();
    }

    /// Starts it again on the same data directory and port.
    pub fn restart(&self) {
        self.launch(&[]);
    }

    /// Runs `mariadbd --wsrep-recover` on the stopped server's data directory and returns the
    /// position it recovered (`UUID:SEQNO`), to rejoin a Galera cluster by IST.
    pub fn wsrep_recover(&self) -> String {
        assert!(self.running.lock().unwrap().is_none(), "still running");
        let log = self.dir.join("recover.log");
        let _ = std::fs::remove_file(&log);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                r#"{MARIADBD_CMD} --log-error="$D/recover.log" --wsrep-recover"#
            ))
            .env("MARIADBD", tool("mariadbd"))
            .env("BIND", self.place.ip.to_string())
            .env("D", &self.dir)
            .env("PORT", self.port.to_string())
            .env("EXTRA", &self.extra)
            .output()
            .expect("run mariadbd --wsrep-recover");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.lines()
            .rev()
            .find_map(|l| l.split("Recovered position: ").nth(1))
            .map(|p| p.trim().to_string())
            .unwrap_or_else(|| {
                panic!(
                    "no recovered position ({}):\n{text}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
    }

    /// Freezes the server (SIGSTOP): connections stay open but nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.running.lock()
            && let Some(mut r) = guard.take()
        {
            let _ = writeln!(r.stdin, "stop");
            drop(r.stdin);
            let _ = r.watchdog.wait();
        }
    }
}

/// An asynchronous primary/replica pair (GTID replication), each its own private server: the
/// replication a failover can lose committed claims from.
pub struct Replicated {
    pub primary: MariaDb,
    pub replica: MariaDb,
}

impl Replicated {
    /// Starts both and replication from the primary; returns once the replica runs it.
    pub fn start() -> Replicated {
        let binlog = |id: u32| {
            [
                "--log-bin=binlog".to_string(),
                format!("--server-id={id}"),
                "--gtid-strict-mode=ON".to_string(),
                "--binlog-format=ROW".to_string(),
            ]
        };
        let p_opts = binlog(1);
        let mut r_opts = binlog(2).to_vec();
        r_opts.extend([
            "--log-slave-updates".to_string(),
            "--read-only=ON".to_string(),
        ]);
        let primary = MariaDb::start_with(&p_opts.iter().map(String::as_str).collect::<Vec<_>>());
        let replica = MariaDb::start_with(&r_opts.iter().map(String::as_str).collect::<Vec<_>>());
        // The users exist on both; replication starts from an empty history.
        primary.root_sql(None, "RESET MASTER");
        replica.root_sql(None, "RESET MASTER");
        replica.root_sql(
            None,
            &format!(
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='leaf', \
                 MASTER_PASSWORD='{PASSWORD}', MASTER_USE_GTID=slave_pos; START SLAVE",
                primary.port
            ),
        );
        let running = super::wait_until(Duration::from_secs(30), || {
            replica
                .root_sql(None, "SHOW GLOBAL STATUS LIKE 'Slave_running'")
                .contains("ON")
        });
        assert!(
            running,
            "replication did not start: {}",
            replica.root_sql(None, "SHOW SLAVE STATUS")
        );
        Replicated { primary, replica }
    }

    /// Waits until the replica has applied everything the primary has written.
    pub fn sync(&self) {
        let pos = self
            .primary
            .root_sql(None, "SELECT @@gtid_binlog_pos")
            .trim()
            .to_string();
        let out = self
            .replica
            .root_sql(None, &format!("SELECT MASTER_GTID_WAIT('{pos}', 30)"));
        assert_eq!(out.trim(), "0", "replica did not reach {pos}");
    }

    /// Stops replication: what the primary commits from now on never reaches the replica.
    pub fn stop_replication(&self) {
        self.replica.root_sql(None, "STOP SLAVE");
    }

    /// Kills the primary and promotes the replica (replication off, writable).
    pub fn fail_over(&self) {
        self.primary.kill();
        self.replica.root_sql(
            None,
            "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF",
        );
    }

    /// One URL listing the primary, then the replica.
    pub fn url(&self, db: &str) -> String {
        format!(
            "mysql://leaf@127.0.0.1:{},127.0.0.1:{}/{db}",
            self.primary.port, self.replica.port
        )
    }
}

/// `serve --segment` in `sb` on the MariaDB database `url`.
pub fn serve_segment(sb: &super::Sandbox, url: &str) -> super::serve::Server {
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_DB", url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["serve", "--segment"]);
    super::serve::Server::start(cmd)
}

/// Runs `leafctl LINE` (split at white space) in `sb` with the private server's password in
/// `LEAF_DB_PASSWORD`, as a reader of the README has it: its status, stdout and stderr.
pub fn leafctl_with_password(sb: &super::Sandbox, line: &str) -> std::process::Output {
    sb.leafctl()
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(super::words(line))
        .output()
        .expect("run leafctl")
}
