//! Worker ids from MySQL: NotFound9's `leaf_workerid_alloc` table.
//!
//! The worker id is the row's `id`, looked up by `ip_port`; a new identity takes the lowest row
//! whose holder is gone, and a row is inserted only when none is (see `db/table_registry.rs` for the rule;
//! MySQL never reuses an AUTO_INCREMENT value, so a deleted row's id is retired). `max_timestamp`
//! bounds the times of every ID issued with the id. This is the MySQL store of the fenced-lease protocol
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
//!
//! The connection is the one it connected on: `CONNECTION_ID()` is read once at connect, in the
//! statement that takes a named lock of its own (`leafctl_connection_{id}`, which makes ProxySQL
//! pin that server connection to this client), and every fenced statement requires that the server connection running it is that one and holds
//! the lock (`IS_USED_LOCK(name) = CONNECTION_ID() AND CONNECTION_ID() = id`). A multiplexing
//! proxy that moved the registry's statements to another server connection (ProxySQL does not
//! once a connection used `GET_LOCK`: it disables multiplexing for it) is refused at the first
//! such statement, naming the proxy.

use std::time::Duration;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::url::{self as mysql_url, scrub};
use crate::db::MIN_REGISTRY_WAIT_TIMEOUT;
use crate::db::table_registry::{self as table};
use crate::worker::{
    Identity, Registry, RegistryKind, RegistrySettings, StoreError, StoreFailure, WorkerError,
    WorkerRecord,
};

/// The kind of MySQL's `leaf_workerid_alloc` registry: `--registry mysql`.
pub const REGISTRY_KIND: RegistryKind = RegistryKind::named("mysql");

/// How long (s) a start waits for the named lock of its row before saying another live process
/// holds it: long enough for the server to notice a killed holder's connection is gone.
pub(super) const LOCK_WAIT_S: i64 = 2;

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

impl MysqlOptions {
    /// The MySQL registry's options from a registry's settings: the database must be MySQL.
    pub fn from_settings(settings: &RegistrySettings) -> Result<MysqlOptions, WorkerError> {
        let db = table::db_url(REGISTRY_KIND, settings)?;
        Ok(MysqlOptions {
            url: db.value.clone(),
            password: settings.db_password.clone(),
            identity: settings.identity()?,
            wait_timeout: table::wait_timeout(settings),
        })
    }

    /// A failed database call, the driver's error said the way [`mysql_url::describe`] says it
    /// (a read that timed out is "no answer within 5 s", not the codec's "os error 11").
    pub(super) fn db_fail(&self, action: &'static str, e: &mysql::Error) -> WorkerError {
        self.fail(action, mysql_url::describe(e))
    }

    pub(super) fn fail(&self, action: &'static str, e: impl std::fmt::Display) -> WorkerError {
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

    /// One connection with the shared URL reading and timeouts (see [`super::url`]).
    pub(super) fn connect(&self) -> Result<Conn, WorkerError> {
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

/// The named lock of row `id` in SQL, from a placeholder or a column.
pub(super) fn lock_name_sql(id: &str) -> String {
    format!("LEFT(CONCAT('leafctl_worker_', {id}, '_', DATABASE()), 64)")
}

/// The `leaf_workerid_alloc` registry.
pub struct MysqlRegistry {
    pub(super) opts: MysqlOptions,
}

impl MysqlRegistry {
    /// A registry on `opts` (nothing is contacted until [`acquire`](crate::worker::WorkerRegistry::acquire)).
    pub fn new(opts: MysqlOptions) -> MysqlRegistry {
        MysqlRegistry { opts }
    }
}

impl Registry for MysqlRegistry {
    fn kind(&self) -> RegistryKind {
        REGISTRY_KIND
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
                    REGISTRY_KIND,
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

    fn reclaim_plan(&self, record: &WorkerRecord) -> Option<String> {
        table::reclaim_plan("MySQL", record)
    }

    fn held_because(&self, _record: &WorkerRecord) -> &'static str {
        "another connection holds its named lock"
    }

    /// A stale row is marked given back under its lock (`update_time` NULL), keeping its
    /// `max_timestamp`: the next new identity takes its id. A held row (`--force`) is deleted,
    /// so its holder stops at its next report; its id is retired with its fence.
    fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let o = &self.opts;
        let mut c = o.connect()?;
        let lock: Option<(String, Option<i64>)> = c
            .exec(
                format!(
                    "SELECT n, GET_LOCK(n, 0) FROM (SELECT {} AS n) AS l",
                    lock_name_sql("?")
                ),
                (record.worker,),
            )
            .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())
            .map_err(|e| o.db_fail("lock the worker id", &e))?;
        let changed = match lock {
            Some((name, Some(1))) => {
                let marked = c
                    .exec_drop(
                        "UPDATE leaf_workerid_alloc SET update_time = NULL WHERE id = ?",
                        (record.worker,),
                    )
                    .map(|()| c.affected_rows())
                    .map_err(|e| o.db_fail("update leaf_workerid_alloc", &e));
                let _ = c.exec_drop("DO RELEASE_LOCK(?)", (&name,));
                return Ok(table::marked_given_back(record, marked?));
            }
            _ if !record.held => return Err(table::taken_meanwhile("MySQL", record)),
            _ => {
                c.exec_drop(
                    "DELETE FROM leaf_workerid_alloc WHERE id = ?",
                    (record.worker,),
                )
                .map_err(|e| o.db_fail("delete from leaf_workerid_alloc", &e))?;
                c.affected_rows()
            }
        };
        Ok(table::deleted(record, changed))
    }
}
