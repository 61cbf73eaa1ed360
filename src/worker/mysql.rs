//! Worker ids from MySQL: NotFound9's `leaf_workerid_alloc` table.
//!
//! The worker id is the row's `id`, looked up by `ip_port` and created when absent (MySQL never
//! reuses an AUTO_INCREMENT value, like ZooKeeper's sequence numbers). `max_timestamp` bounds the
//! times of every ID issued with the id: it is raised (on one dedicated connection) before IDs
//! past it are issued, refreshed every 3 s, and checked at start. While a generator runs its
//! connection holds the named lock `leafctl_worker_{id}_{database}` (`GET_LOCK`), so a second live process
//! with the same identity refuses to start, and a holder whose connection fails stops issuing at
//! its next extension.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::record::{WorkerMode, WorkerStatus, status_of};
use super::{
    Identity, LEASE_WINDOW_MS, REPORT_INTERVAL_MS, WorkerError, WorkerLease, WorkerRecord,
    WorkerRegistry,
};
use crate::mysql_url::{self, scrub};
use crate::snowflake::{Clock, Layout, SnowflakeError, TimeFence};

/// How long (s) a start waits for the named lock of its row before saying another live process
/// holds it: long enough for the server to notice a killed holder's connection is gone.
const LOCK_WAIT_S: i64 = 2;

/// NotFound9's table, as `leafctl db init` creates it on MySQL.
pub const WORKERID_DDL: &str = "CREATE TABLE IF NOT EXISTS `leaf_workerid_alloc` (
  `id` bigint(20) NOT NULL AUTO_INCREMENT,
  `ip` varchar(127) DEFAULT NULL,
  `port` varchar(127) DEFAULT NULL,
  `ip_port` varchar(127) NOT NULL,
  `max_timestamp` bigint(20) DEFAULT NULL,
  `create_time` timestamp NULL DEFAULT NULL,
  `update_time` timestamp NULL DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uniq_ip_port` (`ip_port`)
) ENGINE=InnoDB";

/// How to reach the database and who we are.
#[derive(Debug, Clone)]
pub struct MysqlOptions {
    /// `mysql://user[:password]@host[:port]/database[?tls=true]`.
    pub url: String,
    /// Replaces a password in the URL (from `LEAF_DB_PASSWORD` / `db.password`).
    pub password: Option<String>,
    /// This process's `ip:port`.
    pub identity: Identity,
}

impl MysqlOptions {
    fn fail(&self, action: &'static str, e: impl std::fmt::Display) -> WorkerError {
        WorkerError::Mysql {
            action,
            reason: scrub(e.to_string(), self.password_in_use().as_deref()),
        }
    }

    fn password_in_use(&self) -> Option<String> {
        mysql_url::parse(&self.url, self.password.as_deref())
            .ok()
            .and_then(|t| t.password)
            .or_else(|| self.password.clone())
    }

    /// One connection with the shared URL reading and timeouts (see [`crate::mysql_url`]).
    fn connect(&self) -> Result<Conn, WorkerError> {
        let target = mysql_url::parse(&self.url, self.password.as_deref())
            .map_err(|reason| self.fail("connect", reason))?;
        // Several hosts: the first that answers (a new connection per use, so a lost one moves
        // to the next host at the next use).
        target
            .connect_from(0)
            .map(|(_, c)| c)
            .map_err(|e| self.fail("connect", mysql_url::describe(&e)))
    }
}

/// Creates `leaf_workerid_alloc` when missing (`leafctl db init`).
pub fn init_schema(url: &str, password: Option<&str>) -> Result<(), WorkerError> {
    let o = MysqlOptions {
        url: url.to_string(),
        password: password.map(str::to_string),
        identity: Identity {
            ip: String::new(),
            port: String::new(),
        },
    };
    let mut c = o.connect()?;
    c.query_drop(WORKERID_DDL)
        .map_err(|e| o.fail("create leaf_workerid_alloc", e))
}

/// The `leaf_workerid_alloc` registry.
pub struct MysqlRegistry {
    opts: MysqlOptions,
}

impl MysqlRegistry {
    /// A registry on `opts` (nothing is contacted until [`WorkerRegistry::acquire`]).
    pub fn new(opts: MysqlOptions) -> MysqlRegistry {
        MysqlRegistry { opts }
    }

    /// Every row, for `leafctl workers list --db URL`.
    pub fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        let o = &self.opts;
        let mut c = o.connect()?;
        type Row = (u64, String, Option<i64>, Option<i64>, Option<i64>);
        let rows: Vec<Row> = c
            .query(
                "SELECT id, ip_port, max_timestamp, \
                 CAST(UNIX_TIMESTAMP(update_time) * 1000 AS SIGNED), \
                 IS_USED_LOCK(LEFT(CONCAT('leafctl_worker_', id, '_', DATABASE()), 64)) \
                 FROM leaf_workerid_alloc ORDER BY id",
            )
            .map_err(|e| o.fail("list leaf_workerid_alloc", e))?;
        Ok(rows
            .into_iter()
            .map(|(id, ip_port, max_ts, updated, lock)| {
                let held = lock.is_some();
                // max_timestamp may legitimately run one window ahead (a reservation).
                let ahead = max_ts.is_some_and(|t| t > now_ms + LEASE_WINDOW_MS);
                let mut status = status_of(WorkerMode::Mysql, held, updated, now_ms);
                if ahead {
                    status = WorkerStatus::ClockAhead;
                }
                WorkerRecord {
                    worker: id,
                    identity: ip_port,
                    mode: WorkerMode::Mysql,
                    last_seen_ms: updated,
                    reserved_until_ms: max_ts,
                    held,
                    status,
                    location: format!("leaf_workerid_alloc id {id}"),
                }
            })
            .collect())
    }

    /// Deletes a row (`workers reclaim`); its id is never handed out again.
    pub fn reclaim(&self, worker: u64) -> Result<bool, WorkerError> {
        let o = &self.opts;
        let mut c = o.connect()?;
        c.exec_drop("DELETE FROM leaf_workerid_alloc WHERE id = ?", (worker,))
            .map_err(|e| o.fail("delete from leaf_workerid_alloc", e))?;
        Ok(c.affected_rows() > 0)
    }
}

struct Held {
    conn: Option<Conn>,
    max_timestamp: i64,
    finished: bool,
    /// Cleared with `conn` (see [`Held::lose`]); read by [`WorkerLease::check`] without the
    /// mutex, which a renewal holds for as long as its SQL write takes (seconds, against a
    /// frozen server).
    usable: Arc<AtomicBool>,
}

impl Held {
    /// The connection, and with it the named lock, is gone: never used again.
    fn lose(&mut self) {
        self.conn = None;
        self.usable.store(false, Ordering::Release);
    }
}

/// A worker id held through `leaf_workerid_alloc`.
pub struct MysqlWorkerLease {
    opts: MysqlOptions,
    worker: u64,
    resume_after_ms: Option<i64>,
    clock: Arc<dyn Clock>,
    held: Arc<Mutex<Held>>,
    /// The same flag as `held`'s, for a lock-free check.
    usable: Arc<AtomicBool>,
    stop: Mutex<Option<Sender<()>>>,
    reporter: Mutex<Option<JoinHandle<()>>>,
}

impl WorkerRegistry for MysqlRegistry {
    fn acquire(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        self.acquire_ahead(layout, clock, 0)
    }

    fn acquire_ahead(
        &self,
        layout: &Layout,
        clock: Arc<dyn Clock>,
        max_lead_ms: u64,
    ) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let mut c = o.connect()?;
        let find = |c: &mut Conn| -> Result<Option<(u64, Option<i64>)>, WorkerError> {
            c.exec(
                "SELECT id, max_timestamp FROM leaf_workerid_alloc WHERE ip_port = ?",
                (&ip_port,),
            )
            .map(|rows: Vec<(u64, Option<i64>)>| rows.into_iter().next())
            .map_err(|e| o.fail("read leaf_workerid_alloc", e))
        };
        let (id, stored) = match find(&mut c)? {
            Some(found) => found,
            None => {
                let now = clock.now_ms();
                let inserted = c.exec_drop(
                    "INSERT INTO leaf_workerid_alloc \
                     (ip, port, ip_port, max_timestamp, create_time, update_time) \
                     VALUES (?, ?, ?, ?, NOW(), NOW())",
                    (&o.identity.ip, &o.identity.port, &ip_port, now),
                );
                match inserted {
                    Ok(()) => (c.last_insert_id(), Some(now)),
                    // Another process inserted the same ip_port first: use its row.
                    Err(mysql::Error::MySqlError(e)) if e.code == 1062 => find(&mut c)?
                        .ok_or_else(|| o.fail("read leaf_workerid_alloc", "row vanished"))?,
                    Err(e) => return Err(o.fail("insert into leaf_workerid_alloc", e)),
                }
            }
        };
        if id > layout.max_worker() {
            return Err(WorkerError::OutOfRange {
                worker: id,
                max: layout.max_worker(),
                source_of: format!("leaf_workerid_alloc id of {ip_port}"),
            });
        }
        // A holder killed a moment ago keeps its lock until the server notices its connection
        // closed (usually at once, later on a loaded server): wait briefly before refusing.
        let locked: Option<(String, Option<i64>)> = c
            .exec(
                "SELECT n, GET_LOCK(n, ?) FROM \
                 (SELECT LEFT(CONCAT('leafctl_worker_', ?, '_', DATABASE()), 64) AS n) AS l",
                (LOCK_WAIT_S, id),
            )
            .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())
            .map_err(|e| o.fail("lock the worker id", e))?;
        match locked {
            Some((_, Some(1))) => {}
            Some((lock, _)) => {
                return Err(WorkerError::IdentityInUse {
                    identity: ip_port,
                    path: format!(
                        "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                    ),
                });
            }
            None => return Err(o.fail("lock the worker id", "GET_LOCK returned no row")),
        }
        let stored = stored.unwrap_or(0);
        super::wait_for_record(clock.as_ref(), id, stored, max_lead_ms, || {
            format!("max_timestamp of leaf_workerid_alloc id {id}")
        })?;
        let usable = Arc::new(AtomicBool::new(true));
        let held = Arc::new(Mutex::new(Held {
            conn: Some(c),
            max_timestamp: stored,
            finished: false,
            usable: usable.clone(),
        }));
        let (tx, rx) = mpsc::channel::<()>();
        let (reporter_held, reporter_clock, reporter_opts) =
            (held.clone(), clock.clone(), o.clone());
        let reporter = std::thread::Builder::new()
            .name("leafctl-mysql-report".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) =
                    rx.recv_timeout(Duration::from_millis(REPORT_INTERVAL_MS as u64))
                {
                    let mut h = reporter_held.lock().unwrap_or_else(|p| p.into_inner());
                    let now = reporter_clock.now_ms();
                    if let Err(e) = write_max(&reporter_opts, &mut h, id, now) {
                        tracing::warn!("cannot report to MySQL: {e}");
                    }
                }
            })
            .ok();
        Ok(Arc::new(MysqlWorkerLease {
            opts: o.clone(),
            worker: id,
            resume_after_ms: (stored > 0).then(|| stored - 1),
            clock,
            held,
            usable,
            stop: Mutex::new(Some(tx)),
            reporter: Mutex::new(reporter),
        }))
    }
}

/// Raises `max_timestamp` to at least `to` (never lowers it unless `exact`).
fn write_max(o: &MysqlOptions, h: &mut Held, id: u64, to: i64) -> Result<(), WorkerError> {
    let conn = h
        .conn
        .as_mut()
        .ok_or_else(|| o.fail("write max_timestamp", "the connection is closed"))?;
    let r = conn.exec_drop(
        "UPDATE leaf_workerid_alloc SET max_timestamp = GREATEST(COALESCE(max_timestamp, 0), ?), \
         update_time = NOW() WHERE id = ?",
        (to, id),
    );
    match r {
        Ok(()) if conn.affected_rows() == 1 => {
            h.max_timestamp = h.max_timestamp.max(to);
            Ok(())
        }
        Ok(()) => {
            // The row is gone (reclaimed): stop using the connection.
            h.lose();
            Err(o.fail(
                "write max_timestamp",
                format!("row id {id} no longer exists"),
            ))
        }
        Err(e) => {
            // A failed connection is not trusted again; its named lock may be gone.
            h.lose();
            Err(o.fail("write max_timestamp", e))
        }
    }
}

impl TimeFence for MysqlWorkerLease {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if h.finished {
            return Err(SnowflakeError::FenceFailed(
                "the worker id was given back".into(),
            ));
        }
        if h.max_timestamp > unix_ms {
            return Ok(h.max_timestamp);
        }
        let fence = unix_ms.saturating_add(LEASE_WINDOW_MS);
        write_max(&self.opts, &mut h, self.worker, fence)
            .map_err(|e| SnowflakeError::FenceFailed(e.to_string()))?;
        Ok(fence)
    }
}

impl WorkerLease for MysqlWorkerLease {
    fn worker(&self) -> u64 {
        self.worker
    }

    fn resume_after_ms(&self) -> Option<i64> {
        self.resume_after_ms
    }

    fn check(&self) -> Result<(), WorkerError> {
        // Lock-free: `/readyz` and every request ask, and must not wait for a renewal's write.
        if !self.usable.load(Ordering::Acquire) {
            return Err(WorkerError::Stopped {
                worker: self.worker,
                reason: "the MySQL connection holding it failed or was closed".into(),
            });
        }
        Ok(())
    }

    fn finish(&self, last_issued_ms: Option<i64>) -> Result<(), WorkerError> {
        self.stop_reporter();
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if h.finished {
            return Ok(());
        }
        h.finished = true;
        // Nothing is issued from here on.
        self.usable.store(false, Ordering::Release);
        let now = self.clock.now_ms();
        let reserved = h.max_timestamp;
        let result = match (h.conn.as_mut(), last_issued_ms) {
            (Some(conn), Some(t)) => conn
                .exec_drop(
                    "UPDATE leaf_workerid_alloc SET max_timestamp = ?, update_time = NOW() \
                     WHERE id = ?",
                    ((t + 1).max(now.min(reserved)), self.worker),
                )
                .map_err(|e| self.opts.fail("write max_timestamp", e)),
            _ => Ok(()),
        };
        // Give the named lock back before the connection goes, so `workers list` sees the row
        // free as soon as this returns (closing the connection alone frees it a little later).
        if let Some(conn) = h.conn.as_mut() {
            let _ = conn.exec_drop(
                "DO RELEASE_LOCK(LEFT(CONCAT('leafctl_worker_', ?, '_', DATABASE()), 64))",
                (self.worker,),
            );
        }
        h.lose();
        result
    }

    fn describe(&self) -> String {
        format!(
            "MySQL leaf_workerid_alloc id {} ({})",
            self.worker, self.opts.identity
        )
    }
}

impl MysqlWorkerLease {
    fn stop_reporter(&self) {
        self.stop.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = self
            .reporter
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = h.join();
        }
    }
}

impl Drop for MysqlWorkerLease {
    fn drop(&mut self) {
        self.stop_reporter();
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        h.finished = true;
        h.lose();
    }
}
