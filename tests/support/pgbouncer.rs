//! A private PgBouncer (Debian's `pgbouncer`) in front of a private PostgreSQL, in one pool mode
//! with the package's defaults otherwise: what most production PostgreSQL sits behind.
//!
//! PgBouncer refuses to run as root, so it runs as the `postgres` user in a temp dir of its
//! own; it listens on a free loopback port and sends every database to the PostgreSQL given.
//! Clients are trusted (`auth_type = trust`, the user listed in `auth_file`), as the PostgreSQL
//! behind it trusts `leaf` on loopback. Dropping the handle kills it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::free_port;
use super::postgres::Postgres;

/// A running PgBouncer.
pub struct PgBouncer {
    pub port: u16,
    dir: PathBuf,
    child: Child,
}

impl PgBouncer {
    /// PgBouncer in `pool_mode` (`session`, `transaction` or `statement`) in front of `pg`, with
    /// `extra` lines added to its `[pgbouncer]` section (e.g. `default_pool_size = 1`).
    pub fn start(pg: &Postgres, pool_mode: &str, extra: &[&str]) -> PgBouncer {
        let dir = std::env::temp_dir().join(format!(
            "leafctl-pgbouncer-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("pgbouncer dir");
        let port = free_port();
        let ini = format!(
            "[databases]\n* = host=127.0.0.1 port={pg_port}\n\n[pgbouncer]\n\
             listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
             auth_type = trust\nauth_file = {dir}/userlist.txt\npool_mode = {pool_mode}\n\
             logfile = {dir}/pgbouncer.log\npidfile = {dir}/pgbouncer.pid\n{extra}\n",
            pg_port = pg.port,
            dir = dir.display(),
            extra = extra.join("\n"),
        );
        std::fs::write(dir.join("pgbouncer.ini"), ini).expect("pgbouncer.ini");
        std::fs::write(
            dir.join("userlist.txt"),
            "\"leaf\" \"\"\n\"postgres\" \"\"\n",
        )
        .expect("userlist");
        let chown = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .status()
            .expect("chown");
        assert!(chown.success());
        let child = Command::new("setpriv")
            .args(super::words(
                "--reuid=postgres --regid=postgres --init-groups -- pgbouncer",
            ))
            .arg(dir.join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pgbouncer (Debian's pgbouncer package)");
        let bouncer = PgBouncer { port, dir, child };
        let up = super::wait_until(Duration::from_secs(15), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "pgbouncer did not listen: {}", bouncer.log());
        bouncer
    }

    /// The URL of `db` through the pooler, as `leaf`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://leaf@127.0.0.1:{}/{db}", self.port)
    }

    /// PgBouncer's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
