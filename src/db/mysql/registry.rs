//! Worker ids from MySQL: NotFound9's `leaf_workerid_alloc` table.
//!
//! The worker id is the row's `id`, looked up by `ip_port`; a new identity takes the lowest row
//! whose holder is gone, and a row is inserted only when none is (see `table.rs` for the rule;
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

use crate::worker::IssueOptions;
use std::sync::Arc;
use std::time::Duration;

use mysql::Conn;
use mysql::prelude::Queryable;

use super::url::{self as mysql_url, scrub};
use crate::db::MIN_REGISTRY_WAIT_TIMEOUT;
use crate::db::table_registry::{self as table, LockHolder, TableError};
use crate::snowflake::Clock;
use crate::worker::lease::{FencedLease, LeaseStore, Record, Write, Written};
use crate::worker::{
    Identity, Registry, RegistryKind, RegistrySettings, StoreError, StoreFailure, WorkerError,
    WorkerLease, WorkerRecord, WorkerRegistry,
};

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

impl MysqlOptions {
    /// The MySQL registry's options from a registry's settings: the database must be MySQL.
    pub fn from_settings(settings: &RegistrySettings) -> Result<MysqlOptions, WorkerError> {
        let db = &settings.db_url;
        let is_mysql = crate::db::db_registry(&db.value) == Some(RegistryKind::Mysql);
        if !is_mysql {
            return Err(WorkerError::setting(
                format!(
                    "the mysql registry needs a MySQL database, not {} (from {})",
                    crate::db::redact_url(&db.value),
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

    /// One connection with the shared URL reading and timeouts (see [`super::url`]).
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
                return Ok(if marked? > 0 {
                    vec![format!(
                        "the last report (update_time) of {}; the row stays, with its max_timestamp, for the next new identity",
                        record.location
                    )]
                } else {
                    Vec::new()
                });
            }
            _ if !record.held => {
                return Err(table::refused(
                    "MySQL",
                    TableError::TakenMeanwhile {
                        location: record.location.clone(),
                    },
                ));
            }
            _ => {
                c.exec_drop(
                    "DELETE FROM leaf_workerid_alloc WHERE id = ?",
                    (record.worker,),
                )
                .map_err(|e| o.db_fail("delete from leaf_workerid_alloc", &e))?;
                c.affected_rows()
            }
        };
        Ok(if changed > 0 {
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
        let mut conn = self.opts.connect()?;
        // One statement reads the server connection's id and takes a named lock on it: a
        // proxy that multiplexes (ProxySQL) pins the connection that ran a GET_LOCK to this
        // client from then on, so the id read is the one every later statement must run on.
        // (ProxySQL answers the exact text `SELECT CONNECTION_ID()` itself, with its own id.)
        let rows: Vec<(u64, Option<i64>)> = conn
            .query(
                "SELECT CONNECTION_ID(), GET_LOCK(CONCAT('leafctl_connection_', CONNECTION_ID()), 0)",
            )
            .map_err(|e| self.opts.fail("read CONNECTION_ID()", e))?;
        let (connection_id, pinned) = rows
            .into_iter()
            .next()
            .ok_or_else(|| self.opts.fail("read CONNECTION_ID()", "no answer row"))?;
        if pinned != Some(1) {
            return Err(self.opts.fail(
                "read CONNECTION_ID()",
                format!(
                    "the named lock leafctl_connection_{connection_id} is held by another connection: a proxy in front of MySQL runs this registry's statements on a connection it does not keep for it; connect the worker registry to MySQL directly"
                ),
            ));
        }
        let store = MysqlLeaseStore {
            conn: LockHolder::new(conn),
            connection_id,
            opts: self.opts.clone(),
            clock: clock.clone(),
            pick: Default::default(),
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
    /// `CONNECTION_ID()` at connect: every fenced statement must run on that server connection.
    connection_id: u64,
    clock: Arc<dyn Clock>,
    /// What this acquisition's listing found.
    pick: std::sync::Mutex<table::Pick>,
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

/// The named lock of row `id` in SQL, from a placeholder or a column.
fn lock_name_sql(id: &str) -> String {
    format!("LEFT(CONCAT('leafctl_worker_', {id}, '_', DATABASE()), 64)")
}

/// "A leafctl holder gave this row back (`update_time` NULL), or nobody wrote to it for
/// [`table::SILENT_MS`]: neither `update_time` (the server's clock; NotFound9's table refreshes
/// it on every `UPDATE`) nor `max_timestamp` (`now_ms` is our clock; NotFound9's servers rewrite
/// it every 3 s) is that recent", in SQL.
fn silent_sql(now_ms: i64) -> String {
    format!(
        "(update_time IS NULL OR (UNIX_TIMESTAMP(update_time) < UNIX_TIMESTAMP() - {} \
         AND COALESCE(max_timestamp, 0) < {}))",
        table::SILENT_MS / 1000,
        now_ms.saturating_sub(table::SILENT_MS)
    )
}

impl MysqlLeaseStore {
    fn pick(&self) -> std::sync::MutexGuard<'_, table::Pick> {
        self.pick.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes row `id`'s named lock, waiting up to `wait_s`: its name when granted.
    fn lock(&self, id: u64, wait_s: i64) -> Result<(String, bool), WorkerError> {
        let locked: Option<(String, Option<i64>)> = self.with_conn("lock the worker id", |c| {
            c.exec(
                format!(
                    "SELECT n, GET_LOCK(n, ?) FROM (SELECT {} AS n) AS l",
                    lock_name_sql("?")
                ),
                (wait_s, id),
            )
            .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())
        })?;
        match locked {
            Some((lock, got)) => Ok((lock, got == Some(1))),
            None => Err(self
                .opts
                .fail("lock the worker id", "GET_LOCK returned no row")),
        }
    }

    fn unlock(&self, lock: &str) -> Result<(), WorkerError> {
        self.with_conn("release the worker id", |c| {
            c.exec_drop("DO RELEASE_LOCK(?)", (lock,))
        })
    }

    /// Row `id`'s `ip_port` and `max_timestamp`, read under its lock.
    fn read_row(&self, id: u64) -> Result<Option<(String, i64)>, WorkerError> {
        self.with_conn("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT ip_port, COALESCE(max_timestamp, 0) FROM leaf_workerid_alloc WHERE id = ?",
                (id,),
            )
            .map(|rows: Vec<(String, i64)>| rows.into_iter().next())
        })
    }

    fn claimed(id: u64, lock: String, reserved_until: i64) -> (MysqlClaim, Record) {
        (
            MysqlClaim { worker: id, lock },
            Record {
                reserved_until,
                version: reserved_until,
                ahead_allowance_ms: None,
                writer_lead_ms: 0,
            },
        )
    }

    /// This identity's own row: waits briefly for its lock (a holder killed a moment ago keeps
    /// it until the server notices its connection closed), then refuses. `None` when a new
    /// identity took the row meanwhile (this one then inserts a row).
    fn claim_own(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        let row = if got { self.read_row(id)? } else { None };
        match row {
            Some((owner, stored)) if owner == ip_port => Ok(Some(Self::claimed(id, lock, stored))),
            Some(_) | None if got => {
                // Re-owned by a new identity (or deleted) between the lookup and the lock.
                self.unlock(&lock)?;
                Ok(None)
            }
            _ => {
                let still_ours = self
                    .with_conn("read leaf_workerid_alloc", |c| {
                        c.exec(
                            "SELECT ip_port FROM leaf_workerid_alloc WHERE id = ?",
                            (id,),
                        )
                        .map(|rows: Vec<String>| rows.into_iter().next())
                    })?
                    .is_some_and(|owner| owner == ip_port);
                if !still_ours {
                    return Ok(None);
                }
                Err(WorkerError::IdentityInUse {
                    identity: ip_port,
                    path: format!(
                        "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                    ),
                })
            }
        }
    }

    /// Another identity's free row: its lock without waiting, then a compare-and-set that
    /// re-keys the row to this identity only if it still carries the `ip_port` listed and its
    /// holder is still gone (silent, fence within reach). `None`: someone else took it first.
    fn claim_free(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let Some(seen) = self.pick().seen.get(&id).cloned() else {
            return Ok(None);
        };
        let (lock, got) = self.lock(id, 0)?;
        if !got {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let taken = self.with_conn("take a free row of leaf_workerid_alloc", |c| {
            let r = c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET ip = ?, port = ?, ip_port = ?, update_time = NOW() \
                     WHERE id = ? AND ip_port = ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {conn_id}",
                    silent = silent_sql(now),
                    conn_id = self.connection_id
                ),
                (
                    &o.identity.ip,
                    &o.identity.port,
                    o.identity.to_string(),
                    id,
                    &seen,
                    reach,
                    &lock,
                ),
            );
            match r {
                Ok(()) => Ok(Some(c.affected_rows() == 1)),
                // This identity got a row meanwhile (a second process with it): not this one.
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        match taken {
            Some(true) => {}
            Some(false) => {
                self.unlock(&lock)?;
                return Ok(None);
            }
            None => {
                self.unlock(&lock)?;
                return Err(WorkerError::IdentityInUse {
                    identity: o.identity.to_string(),
                    path:
                        "another process with it registered a row of leaf_workerid_alloc meanwhile"
                            .into(),
                });
            }
        }
        tracing::info!("took leaf_workerid_alloc id {id}, last held by {seen}");
        match self.read_row(id)? {
            Some((_, stored)) => Ok(Some(Self::claimed(id, lock, stored))),
            None => Err(o.fail(
                "read leaf_workerid_alloc",
                format!("row id {id} no longer exists"),
            )),
        }
    }

    /// A new row for this identity, in one transaction with the check of its id against the
    /// layout and the take of its lock: a refusal rolls the row back.
    fn claim_new(&self) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        let o = &self.opts;
        let ip_port = o.identity.to_string();
        let max = self.pick().max_worker;
        let now = self.clock.now_ms();
        enum Outcome {
            Claimed(u64, String),
            Exists,
            Beyond,
            LockBusy(u64),
        }
        let outcome = self.with_conn("insert into leaf_workerid_alloc", |c| {
            c.query_drop("START TRANSACTION")?;
            let inserted = c.exec_drop(
                "INSERT INTO leaf_workerid_alloc \
                 (ip, port, ip_port, max_timestamp, create_time, update_time) \
                 VALUES (?, ?, ?, ?, NOW(), NOW())",
                (&o.identity.ip, &o.identity.port, &ip_port, now),
            );
            let id = match inserted {
                Ok(()) => c.last_insert_id(),
                Err(mysql::Error::MySqlError(e)) if e.code == 1062 => {
                    c.query_drop("ROLLBACK")?;
                    return Ok(Outcome::Exists);
                }
                Err(e) => return Err(e),
            };
            if id > max {
                c.query_drop("ROLLBACK")?;
                return Ok(Outcome::Beyond);
            }
            let got: Option<(String, Option<i64>)> = c
                .exec(
                    format!(
                        "SELECT n, GET_LOCK(n, 0) FROM (SELECT {} AS n) AS l",
                        lock_name_sql("?")
                    ),
                    (id,),
                )
                .map(|rows: Vec<(String, Option<i64>)>| rows.into_iter().next())?;
            match got {
                Some((lock, Some(1))) => {
                    c.query_drop("COMMIT")?;
                    Ok(Outcome::Claimed(id, lock))
                }
                _ => {
                    c.query_drop("ROLLBACK")?;
                    Ok(Outcome::LockBusy(id))
                }
            }
        })?;
        match outcome {
            Outcome::Claimed(id, lock) => Ok(Some(Self::claimed(id, lock, now))),
            // A second process with this identity inserted it first: its row, its lock.
            Outcome::Exists => {
                let id = self.own_row()?.ok_or_else(|| {
                    o.fail(
                        "read leaf_workerid_alloc",
                        "the row of this identity vanished",
                    )
                })?;
                self.claim_own(id)
            }
            Outcome::Beyond => Err(self.none_free(max + 1)),
            Outcome::LockBusy(id) => Err(table::refused("MySQL", TableError::NewRowLocked { id })),
        }
    }

    /// The id of this identity's row, if it has one.
    fn own_row(&self) -> Result<Option<u64>, WorkerError> {
        let ip_port = self.opts.identity.to_string();
        self.with_conn("read leaf_workerid_alloc", |c| {
            c.exec(
                "SELECT id FROM leaf_workerid_alloc WHERE ip_port = ?",
                (&ip_port,),
            )
            .map(|rows: Vec<u64>| rows.into_iter().next())
        })
    }

    /// Deletes this identity's own row when its id is beyond the layout (a row an older
    /// version inserted on a refused attempt): it could never be used, and AUTO_INCREMENT
    /// never hands its id out again. Refused while another connection holds its lock.
    fn retire_own(&self, id: u64) -> Result<(), WorkerError> {
        let (lock, got) = self.lock(id, LOCK_WAIT_S)?;
        if !got {
            return Err(WorkerError::IdentityInUse {
                identity: self.opts.identity.to_string(),
                path: format!(
                    "the named lock {lock} of leaf_workerid_alloc id {id} is held by another MySQL connection"
                ),
            });
        }
        self.with_conn("delete from leaf_workerid_alloc", |c| {
            c.exec_drop("DELETE FROM leaf_workerid_alloc WHERE id = ?", (id,))
        })?;
        tracing::info!(
            "deleted this identity's leaf_workerid_alloc id {id}: beyond the layout's worker ids"
        );
        self.unlock(&lock)
    }
}

impl LeaseStore for MysqlLeaseStore {
    type Claim = MysqlClaim;

    /// This identity's own row when it has one; else the lowest free rows (no connection holds
    /// their lock, silent for 9 s or given back, `max_timestamp` within a window of our clock),
    /// then a new row ([`table::NEW_ROW`]).
    fn candidates(&self, max_worker: u64) -> Result<Vec<u64>, WorkerError> {
        self.pick().max_worker = max_worker;
        match self.own_row()? {
            Some(id) if id <= max_worker => {
                self.pick().own = Some(id);
                return Ok(vec![id, table::NEW_ROW]);
            }
            Some(id) => self.retire_own(id)?,
            None => {}
        }
        let now = self.clock.now_ms();
        let reach = now.saturating_add(table::REUSE_AHEAD_MS);
        let free: Vec<(u64, String)> =
            self.with_conn("list free rows of leaf_workerid_alloc", |c| {
                c.exec(
                    format!(
                        "SELECT id, ip_port FROM leaf_workerid_alloc \
                     WHERE id <= ? AND COALESCE(max_timestamp, 0) <= ? AND {silent} \
                     AND IS_FREE_LOCK({}) = 1 ORDER BY id LIMIT {}",
                        lock_name_sql("id"),
                        table::FREE_ROWS_LISTED,
                        silent = silent_sql(now)
                    ),
                    (max_worker, reach),
                )
            })?;
        let mut pick = self.pick();
        let mut ids: Vec<u64> = free.iter().map(|(id, _)| *id).collect();
        pick.seen = free.into_iter().collect();
        ids.push(table::NEW_ROW);
        Ok(ids)
    }

    fn try_claim(&self, id: u64) -> Result<Option<(MysqlClaim, Record)>, WorkerError> {
        if id == table::NEW_ROW {
            return self.claim_new();
        }
        if self.pick().own == Some(id) {
            return self.claim_own(id);
        }
        self.claim_free(id)
    }

    /// The compare is on the stored value itself and on the named lock being this
    /// connection's, in the one statement.
    fn write(&self, claim: &MysqlClaim, expected: i64, w: &Write) -> Result<Written, WorkerError> {
        let (changed, current) = self.with_conn("write max_timestamp", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET max_timestamp = ?, update_time = NOW() \
                     WHERE id = ? AND COALESCE(max_timestamp, 0) = ? \
                     AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (w.reserved_until, claim.worker, expected, &claim.lock),
            )?;
            if c.affected_rows() == 1 {
                return Ok((true, None));
            }
            let row: Option<(i64, Option<i64>, u64)> = c
                .exec(
                    "SELECT COALESCE(max_timestamp, 0), IS_USED_LOCK(?) = CONNECTION_ID(), \
                     CONNECTION_ID() FROM leaf_workerid_alloc WHERE id = ?",
                    (&claim.lock, claim.worker),
                )
                .map(|rows: Vec<(i64, Option<i64>, u64)>| rows.into_iter().next())?;
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
            Some((_, _, on)) if on != self.connection_id => lost(format!(
                "its statements ran on MySQL connection {on}, not on connection {} that holds its named lock {}: a proxy in front of MySQL (ProxySQL) multiplexes the registry's connection; connect the worker registry to MySQL directly, or through a proxy that keeps one server connection per client",
                self.connection_id, claim.lock
            )),
            Some((_, held, _)) if held != Some(1) => {
                lost(format!("its named lock {} is no longer held", claim.lock))
            }
            // Matched but unchanged (the same value within the same second).
            Some((value, _, _)) if value == w.reserved_until => {
                Ok(Written::Applied { version: value })
            }
            // A lost answer loses the connection, so a change is never this holder's own.
            Some((value, _, _)) => Ok(Written::Changed {
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
        // `update_time` NULL says "given back by its leafctl holder": a new identity may take
        // the row at once (not only after 9 s of silence, the sign NotFound9's servers give).
        let _ = self.with_conn("release the worker id", |c| {
            c.exec_drop(
                format!(
                    "UPDATE leaf_workerid_alloc SET update_time = NULL \
                     WHERE id = ? AND IS_USED_LOCK(?) = CONNECTION_ID() AND CONNECTION_ID() = {}",
                    self.connection_id
                ),
                (claim.worker, &claim.lock),
            )?;
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
        table::none_free(
            "MySQL",
            self.opts.identity.to_string(),
            count.saturating_sub(1),
        )
    }
}
