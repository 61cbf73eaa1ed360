//! Worker ids from MySQL: NotFound9's `leaf_workerid_alloc` table.
//!
//! The worker id is the row's `id`, looked up by `ip_port` and created when absent (MySQL never
//! reuses an AUTO_INCREMENT value, like ZooKeeper's sequence numbers). `max_timestamp` bounds the
//! times of every ID issued with the id. This is the MySQL store of the fenced-lease protocol
//! (`src/worker/lease`): the claim is the named lock `leafctl_worker_{id}_{database}` (`GET_LOCK`)
//! held by one dedicated connection, so a second live process with the same identity refuses to
//! start; `max_timestamp` is read under that lock and raised before IDs past it are issued, by an
//! `UPDATE` that compares the stored value and the lock's owner; `update_time` is the 3 s report.
//!
//! A named property of this store: the lock has no TTL. It lives as long as the connection, so a
//! holder cut off from the server goes on issuing below its recorded `max_timestamp` until its
//! connection fails, and the server frees the lock only once it notices the connection gone. That
//! is safe (its successor waits out `max_timestamp`), and "still held?" is the connection's
//! health: it fails at the first failed statement, and a lost answer loses the connection.

use crate::worker::IssueOptions;
use std::sync::Arc;
use std::time::Duration;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::lease::{FencedLease, LeaseStore, Record, Write, Written};
use super::table::{self, LockHolder};
use super::{
    Identity, Registry, RegistryKind, RegistrySettings, StoreError, StoreFailure, WorkerError,
    WorkerLease, WorkerRecord, WorkerRegistry,
};
use crate::mysql_url::{self, scrub};
use crate::snowflake::Clock;

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

/// MySQL's failures, as the MySQL registry reports them.
#[derive(Debug, thiserror::Error)]
pub enum MysqlError {
    /// A MySQL request failed.
    #[error("MySQL {action} failed: {reason}")]
    Request {
        /// What was being done.
        action: &'static str,
        /// The driver's message, any password removed.
        reason: String,
    },
}

impl StoreError for MysqlError {
    fn hint(&self) -> &'static str {
        "check --db and that MySQL is running; `leafctl db init` creates leaf_workerid_alloc"
    }
}

impl From<MysqlError> for WorkerError {
    fn from(e: MysqlError) -> WorkerError {
        WorkerError::Store(StoreFailure::new("MySQL", e))
    }
}

/// How to reach the database and who we are.
#[derive(Debug, Clone)]
pub struct MysqlOptions {
    /// `mysql://user[:password]@host[:port]/database[?tls=true]`.
    pub url: String,
    /// Replaces a password in the URL (from `LEAF_DB_PASSWORD` / `db.password`).
    pub password: Option<String>,
    /// This process's `ip:port`.
    pub identity: Identity,
    /// How long MySQL keeps the registry's connection, and with it the worker id's named lock,
    /// when it hears nothing from this process: the session's `wait_timeout`, never longer than
    /// the server's own. A holder cut off by the network stops issuing within its window, but its
    /// id moves to another process only once MySQL drops this connection; the server's default
    /// is 8 hours. `None` keeps the server's; a value below [`MIN_REGISTRY_WAIT_TIMEOUT`] is
    /// raised to it.
    pub wait_timeout: Option<Duration>,
}

/// The registry connection's default [`MysqlOptions::wait_timeout`]: ten of its 3 s reports
/// missed, so a live holder never comes near it.
pub const DEFAULT_REGISTRY_WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// The shortest [`MysqlOptions::wait_timeout`] used (a shorter one is raised to it; the CLI refuses
/// it): two of the registry's 3 s reports, so a live holder's connection is never dropped for a
/// single late report.
pub const MIN_REGISTRY_WAIT_TIMEOUT: Duration = Duration::from_secs(6);

impl MysqlOptions {
    /// The MySQL registry's options from a registry's settings: the database must be MySQL.
    pub fn from_settings(settings: &RegistrySettings) -> Result<MysqlOptions, WorkerError> {
        let db = &settings.db_url;
        let is_mysql = super::db_registry(&db.value) == Some(RegistryKind::Mysql);
        if !is_mysql {
            return Err(WorkerError::setting(
                format!(
                    "the mysql registry needs a MySQL database, not {} (from {})",
                    crate::segment::redact_url(&db.value),
                    db.origin
                ),
                "pass --db mysql://user@host:port/database (password in LEAF_DB_PASSWORD)",
            ));
        }
        Ok(MysqlOptions {
            url: db.value.clone(),
            password: settings.db_password.clone(),
            identity: settings.identity()?,
            wait_timeout: settings.db_wait_timeout,
        })
    }

    /// A failed database call, the driver's error said the way [`mysql_url::describe`] says it
    /// (a read that timed out is "no answer within 5 s", not the codec's "os error 11").
    fn db_fail(&self, action: &'static str, e: &mysql::Error) -> WorkerError {
        self.fail(action, mysql_url::describe(e))
    }

    fn fail(&self, action: &'static str, e: impl std::fmt::Display) -> WorkerError {
        WorkerError::from(MysqlError::Request {
            action,
            reason: scrub(e.to_string(), self.password_in_use().as_deref()),
        })
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
        let (_, mut conn) = target
            .connect_from(0)
            .map_err(|e| self.db_fail("connect", &e))?;
        if let Some(t) = self.wait_timeout {
            let secs = t.max(MIN_REGISTRY_WAIT_TIMEOUT).as_secs();
            conn.query_drop(format!(
                "SET SESSION wait_timeout = LEAST(@@GLOBAL.wait_timeout, {secs})"
            ))
            .map_err(|e| self.db_fail("set the session's wait_timeout", &e))?;
        }
        Ok(conn)
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
        wait_timeout: None,
    };
    let mut c = o.connect()?;
    c.query_drop(WORKERID_DDL)
        .map_err(|e| o.db_fail("create leaf_workerid_alloc", &e))
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
}

impl Registry for MysqlRegistry {
    fn kind(&self) -> RegistryKind {
        RegistryKind::Mysql
    }

    fn place(&self) -> String {
        "leaf_workerid_alloc".into()
    }

    /// Every row, for `leafctl workers list --db URL`.
    fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
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
            .map_err(|e| o.db_fail("list leaf_workerid_alloc", &e))?;
        Ok(rows
            .into_iter()
            .map(|(id, ip_port, max_ts, updated, lock)| {
                table::listed(
                    RegistryKind::Mysql,
                    id,
                    ip_port,
                    max_ts,
                    updated,
                    lock.is_some(),
                    now_ms,
                )
            })
            .collect())
    }

    fn reclaim_plan(&self, record: &WorkerRecord) -> String {
        table::reclaim_plan("MySQL never reuses AUTO_INCREMENT ids and", record)
    }

    fn held_because(&self, _record: &WorkerRecord) -> &'static str {
        "another connection holds its named lock"
    }

    /// Deletes the row; its id is never handed out again.
    fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let o = &self.opts;
        let mut c = o.connect()?;
        c.exec_drop(
            "DELETE FROM leaf_workerid_alloc WHERE id = ?",
            (record.worker,),
        )
        .map_err(|e| o.db_fail("delete from leaf_workerid_alloc", &e))?;
        Ok(if c.affected_rows() > 0 {
            vec![record.location.clone()]
        } else {
            Vec::new()
        })
    }
}

impl WorkerRegistry for MysqlRegistry {
    fn acquire(&self, options: &IssueOptions) -> Result<Arc<dyn WorkerLease>, WorkerError> {
        let (layout, clock, max_lead_ms) =
            (&options.layout, options.clock.clone(), options.max_lead_ms);
        let store = MysqlLeaseStore {
            conn: LockHolder::new(self.opts.connect()?),
            opts: self.opts.clone(),
            clock: clock.clone(),
        };
        Ok(Arc::new(FencedLease::acquire(
            store,
            layout,
            clock,
            max_lead_ms,
        )?))
    }
}

/// One dedicated connection: it holds the row's named lock for as long as it lives.
pub(crate) struct MysqlLeaseStore {
    opts: MysqlOptions,
    conn: LockHolder<Conn>,
    clock: Arc<dyn Clock>,
}

/// A held row: its id and the name of its lock.
pub(crate) struct MysqlClaim {
    worker: u64,
    lock: String,
}

impl MysqlLeaseStore {
    /// Runs `f` on the connection; an error loses it (see [`LockHolder`]).
    fn with_conn<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T, WorkerError> {
        self.conn.with(
            || self.opts.fail(action, "the connection is closed"),
            |e| self.opts.db_fail(action, &e),
            f,
        )
    }
}

impl LeaseStore for MysqlLeaseStore {
    type Claim = MysqlClaim;

    /// The one row of this identity (created when absent).
    fn candidates(&self, max_worker: u64) -> Result<Vec<u64>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let find = |c: &mut Conn| -> mysql::Result<Option<u64>> {
            c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = ?",
                (&ip_port,),
            )
            .map(|rows: Vec<u64>| rows.into_iter().next())
        };
        let now = self.clock.now_ms();
        let found = self.with_conn("read leaf_workerid_alloc", |c| {
            if let Some(id) = find(c)? {
                return Ok(Some(id));
            }
            let inserted = c.exec_drop(
                "INSERT INTO leaf_workerid_alloc \
                 (ip, port, ip_port, max_timestamp, create_time, update_time) \
                 VALUES (?, ?, ?, ?, NOW(), NOW())",
                (&o.identity.ip, &o.identity.port, &ip_port, now),
            );
            match inserted {
                Ok(()) => Ok(Some(c.last_insert_id())),
                // Another process inserted the same ip_port first: use its row.
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => find(c),
                Err(e) => Err(e),
            }
        })?;
        let id = found.ok_or_else(|| o.fail("read leaf_workerid_alloc", "row vanished"))?;
        if id > max_worker {
            return Err(WorkerError::OutOfRange {
                worker: id,
                max: max_worker,
                source_of: format!("leaf_workerid_alloc id of {ip_port}"),
            });
        }
        Ok(vec![id])
    }

    fn try_claim(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        // A holder killed a moment ago keeps its lock until the server notices its connection
        // closed (usually at once, later on a loaded server): wait briefly before refusing.
        let locked: Option<(String, Option<i64>)> = self.with_conn("lock the worker id", |c| {
            c.exec(
                "SELECT n, GET_LOCK(n, ?) FROM \
                 (SELECT LEFT(CONCAT('leafctl_worker_', ?, '_', DATABASE()), 64) AS n) AS l",
                (LOCK_WAIT_S, id),
            )
            .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())
        })?;
        let lock = match locked {
            Some((lock, Some(1))) => lock,
            Some((lock, _)) => {
                return Err(WorkerError::IdentityInUse {
                    identity: self.opts.identity.to_string(),
                    path: format!(
                        "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                    ),
                });
            }
            None => {
                return Err(self
                    .opts
                    .fail("lock the worker id", "GET_LOCK returned no row"));
            }
        };
        // Read under the lock: a previous holder's last write is in.
        let stored: Option<Option<i64>> = self.with_conn("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT max_timestamp FROM leaf_workerid_alloc WHERE id = ?",
                (id,),
            )
            .map(|rows: Vec<Option<i64>>| rows.into_iter().next())
        })?;
        let Some(stored) = stored else {
            return Err(self.opts.fail(
                "read leaf_workerid_alloc",
                format!("row id {id} no longer exists"),
            ));
        };
        let reserved_until = stored.unwrap_or(0);
        Ok(Some((
            MysqlClaim { worker: id, lock },
            Record {
                reserved_until,
                version: reserved_until,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            },
        )))
    }

    /// The compare is on the stored value itself and on the named lock being this
    /// connection's, in the one statement.
    fn write(&self, claim: &MysqlClaim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        let (changed, current) = self.with_conn("write max_timestamp", |c| {
            c.exec_drop(
                "UPDATE leaf_workerid_alloc SET max_timestamp = ?, update_time = NOW() \
                 WHERE id = ? AND COALESCE(max_timestamp, 0) = ? \
                 AND IS_USED_LOCK(?) = CONNECTION_ID()",
                (w.reserved_until, claim.worker, expected, &claim.lock),
            )?;
            if c.affected_rows() == 1 {
                return Ok((true, None));
            }
            let row: Option<(i64, Option<i64>)> = c
                .exec(
                    "SELECT COALESCE(max_timestamp, 0), IS_USED_LOCK(?) = CONNECTION_ID() \
                     FROM leaf_workerid_alloc WHERE id = ?",
                    (&claim.lock, claim.worker),
                )
                .map(|rows: Vec<(i64, Option<i64>)>| rows.into_iter().next())?;
            Ok((false, Some(row)))
        })?;
        if changed {
            return Ok(Written::Applied {
                version: w.reserved_until,
            });
        }
        let lost = |reason: String| {
            self.conn.lose();
            Ok(Written::NotHeld { reason })
        };
        match current.flatten() {
            None => lost(format!("row id {} no longer exists", claim.worker)),
            Some((_, held)) if held != Some(1) => {
                lost(format!("its named lock {} is no longer held", claim.lock))
            }
            // Matched but unchanged (the same value within the same second).
            Some((value, _)) if value == w.reserved_until => {
                Ok(Written::Applied { version: value })
            }
            // A lost answer loses the connection, so a change is never this holder's own.
            Some((value, _)) => Ok(Written::Changed {
                current: Record {
                    reserved_until: value,
                    version: value,
                    ahead_allowance_ms: None,
                    writer_lead_ms: 0,
                },
                own: false,
            }),
        }
    }

    fn still_held(&self, claim: &MysqlClaim) -> Result<(), WorkerError> {
        // Lock-free: `/readyz` and every request ask, and must not wait for a write.
        if !self.conn.usable() {
            return Err(WorkerError::Stopped {
                worker: claim.worker,
                reason: "the MySQL connection holding it failed or was closed".into(),
            });
        }
        Ok(())
    }

    /// `update_time` is the holder's report (what `workers list` shows as last seen); a row
    /// deleted under the holder ends the claim.
    fn report(&self, claim: &MysqlClaim, _now_ms: i64) -> Result<bool, WorkerError> {
        self.with_conn("report to leaf_workerid_alloc", |c| {
            c.exec_drop(
                "UPDATE leaf_workerid_alloc SET update_time = NOW() WHERE id = ?",
                (claim.worker,),
            )?;
            if c.affected_rows() == 1 {
                return Ok(true);
            }
            let rows: Vec<u64> = c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE id = ?",
                (claim.worker,),
            )?;
            Ok(!rows.is_empty())
        })
    }

    fn release(&self, claim: &MysqlClaim) {
        // Give the named lock back before the connection goes, so `workers list` sees the row
        // free as soon as this returns (closing the connection alone frees it a little later).
        let _ = self.with_conn("release the worker id", |c| {
            c.exec_drop("DO RELEASE_LOCK(?)", (&claim.lock,))
        });
        self.conn.lose();
    }

    fn worker(&self, claim: &MysqlClaim) -> u64 {
        claim.worker
    }

    fn describe(&self, claim: &MysqlClaim) -> String {
        format!(
            "MySQL leaf_workerid_alloc id {} ({})",
            claim.worker, self.opts.identity
        )
    }

    fn record_source(&self, claim: &MysqlClaim) -> String {
        table::record_source(claim.worker)
    }

    fn none_free(&self, count: u64) -> WorkerError {
        table::none_free(count)
    }
}
