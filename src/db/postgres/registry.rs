//! Worker ids from PostgreSQL: NotFound9's `leaf_workerid_alloc` table in PostgreSQL's types.
//!
//! The worker id is the row's `id` (a `bigserial`: the sequence never hands a value out twice,
//! like MySQL's AUTO_INCREMENT), looked up by `ip_port`; a new identity takes the lowest row
//! whose holder is gone, and a row is inserted only when none is (see `db/table_registry.rs`). This is the
//! PostgreSQL store of the fenced-lease protocol (`src/worker/lease`): the claim is the session
//! advisory lock `(0x4C454146, id)` ("LEAF") held by one dedicated connection, so a second live
//! process with the same identity refuses to start; `max_timestamp` is read under that lock and
//! raised before IDs past it are issued, by an `UPDATE` that compares the stored value and
//! checks in `pg_locks` that this session still holds the lock; `update_time` is the 3 s report.
//!
//! As on MySQL, the lock has no TTL: it lives as long as the session. The session's
//! `idle_session_timeout` (the registry wait timeout, 30 s by default) ends a session the
//! server stops hearing from, and with it the lock. It is set by a statement of the session
//! (`set_config`) and read back, not sent as a startup option: a pooler drops or refuses those.
//!
//! ## The session is this process's own, proven on every fenced statement
//!
//! Advisory locks are re-entrant within a server session, so two processes whose statements
//! share one server session (a transaction or statement pool, PgBouncer's `pool_mode =
//! transaction` or `statement`) would both "hold" its locks. At connect the registry takes a
//! *session marker*: a session advisory lock on the bigint key `0x4C47 << 48 | txid`, where
//! `txid` is the transaction id `txid_current()` assigns to that very statement. The server never
//! assigns a transaction id twice (64 bits with its epoch), so no other client of the server,
//! direct or pooled, ever takes the same marker: unique by construction, not by chance. Every
//! fenced statement (the claim of a free row, each `max_timestamp` write, the release, `workers
//! reclaim`) then requires, inside the statement itself, that the backend running it
//! (`pg_backend_pid()`) holds this marker and no other marker. A statement on a server session
//! that another client also used as a registry sees that client's marker; one on a server
//! session this process never marked lacks its own: either way nothing is written and the
//! registry stops, naming the pool. A statement landing on a session that is ours proves the
//! worker lock checked beside it is ours too: only this process's statements ran there while
//! it held its marker, among clients that take markers (a leafctl older than this check, sharing
//! the pooled session, is not seen). Why that suffices: a fenced write on worker id `r` passes
//! only on the one server session that holds `r`'s lock (locks exclude other sessions), and only
//! if that session holds exactly the writer's marker (markers are unique and stay until the
//! session ends or is reset, which drops `r`'s lock too); so at any moment at most one registry
//! can pass a fenced write on `r`, however a pool spreads the statements of the others. (`txid` must stay below 2^48, 65,536 wraparounds of 32-bit
//! xids; past it the registry refuses rather than truncate the key.)

use std::time::Duration;

use super::conn::PgConn;
use super::url::{PgTarget, parse};
use crate::db::LOCK_WAIT_TIMEOUT_S;
use crate::db::MIN_REGISTRY_WAIT_TIMEOUT;
use crate::db::first_answering;
use crate::db::table_registry::{self as table};
use crate::worker::{
    Registry, RegistryKind, RegistrySettings, StoreError, StoreFailure, WorkerError, WorkerRecord,
};

/// The kind of PostgreSQL's `leaf_workerid_alloc` registry: `--registry postgres`.
pub const REGISTRY_KIND: RegistryKind = RegistryKind::named("postgres");

/// The first key of every worker id's advisory lock: "LEAF" in ASCII.
pub(super) const LOCK_CLASS: i64 = 0x4C45_4146;

/// The top 16 bits of a session marker's bigint advisory lock key: "LG" in ASCII (see the
/// module's documentation).
const MARKER_TAG: i64 = 0x4C47;

/// The fix for a session that is not this process's own, in every such error.
pub(super) const SHARED_SESSION_FIX: &str = "connect the worker registry to PostgreSQL directly, or through a session-mode pool (PgBouncer pool_mode = session); a transaction or statement pool runs the statements of several clients on one server session, whose advisory locks they would all hold";

/// This process's session marker: the bigint advisory lock key taken at connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marker(i64);

impl Marker {
    /// The marker for transaction id `txid`; `None` when it does not fit beside the tag.
    fn for_txid(txid: i64) -> Option<Marker> {
        (0..1i64 << 48)
            .contains(&txid)
            .then_some(Marker(MARKER_TAG << 48 | txid))
    }

    /// "The backend running this statement holds this marker and no other leafctl marker", in
    /// SQL: `pg_locks` shows a bigint key as its high half in `classid`, its low half in `objid`,
    /// `objsubid` 1.
    pub(super) fn own_session_sql(self) -> String {
        format!(
            "(SELECT count(*) = 1 AND bool_and(classid::bigint = {hi} AND objid::bigint = {lo}) \
             FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 \
             AND pid = pg_backend_pid() AND classid::bigint >> 16 = {MARKER_TAG})",
            hi = self.0 >> 32,
            lo = self.0 & 0xFFFF_FFFF,
        )
    }
}

/// A connection whose server session carries this process's [`Marker`]. Dropping it gives the
/// marker back while the connection is usable: behind a transaction or statement pool the server
/// session outlives the client's connection and is handed to the next client as it is, so a
/// marker (or a worker id's lock) left on it would refuse every process after this one.
pub(super) struct OwnSession {
    conn: PgConn,
    pub(super) marker: Marker,
}

impl std::ops::Deref for OwnSession {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        &self.conn
    }
}

impl Drop for OwnSession {
    fn drop(&mut self) {
        if self.conn.usable() {
            let _ = self.conn.query(
                &format!("SELECT pg_advisory_unlock({}::bigint)", self.marker.0),
                vec![],
            );
        }
    }
}

/// How long a start waits for its row's lock before saying another live process holds it:
/// long enough for the server to notice a killed holder's connection is gone.
pub(super) const LOCK_WAIT: Duration = Duration::from_secs(2);

/// NotFound9's table, as `leafctl db init` creates it on PostgreSQL.
pub const WORKERID_DDL: &str = "CREATE TABLE IF NOT EXISTS leaf_workerid_alloc (
  id bigserial PRIMARY KEY,
  ip varchar(127) DEFAULT NULL,
  port varchar(127) DEFAULT NULL,
  ip_port varchar(127) NOT NULL UNIQUE,
  max_timestamp bigint DEFAULT NULL,
  create_time timestamp with time zone NULL DEFAULT NULL,
  update_time timestamp with time zone NULL DEFAULT NULL
)";

/// "This session holds worker id `$n`'s advisory lock", for a `WHERE` clause.
pub(super) fn held_by_me(param: usize) -> String {
    format!(
        "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
         AND classid = {LOCK_CLASS} AND objid = (${param}::bigint)::oid AND objsubid = 2 \
         AND pid = pg_backend_pid())"
    )
}

/// "This session is this process's own (`marker`) and holds worker id `$n`'s advisory lock",
/// for the `WHERE` clause of a fenced statement.
pub(super) fn fenced(param: usize, marker: Marker) -> String {
    format!("{} AND {}", held_by_me(param), marker.own_session_sql())
}

/// PostgreSQL's failures, as the PostgreSQL registry reports them.
#[derive(Debug, thiserror::Error)]
pub enum PostgresError {
    /// A PostgreSQL request failed.
    #[error("PostgreSQL {action} failed: {reason}")]
    Request {
        /// What was being done.
        action: &'static str,
        /// The client's message, any password removed.
        reason: String,
    },
    /// The server session running the registry's statements is not this process's own: a
    /// transaction or statement pool in front of PostgreSQL shares it between clients.
    #[error(
        "the PostgreSQL session of the worker registry is not this process's own: {found}; a connection pooler in transaction or statement mode (PgBouncer pool_mode = transaction or statement) runs several clients' statements on one server session, and advisory locks are held by the session, so two processes would hold one worker id"
    )]
    SharedSession {
        /// What the check found.
        found: String,
    },
    /// The session would not take the registry's wait timeout (`idle_session_timeout`).
    #[error(
        "the PostgreSQL session of the worker registry has idle_session_timeout = {found} ms after setting it to {asked} ms: a pooler or the server overrides it, so a silent holder's worker id would not be freed in time"
    )]
    WaitTimeout {
        /// The value asked for, in ms.
        asked: u128,
        /// The value read back, in ms.
        found: i64,
    },
}

impl StoreError for PostgresError {
    fn hint(&self) -> &'static str {
        match self {
            PostgresError::Request { reason, .. } if said_by_a_pooler(reason) => SHARED_SESSION_FIX,
            PostgresError::Request { .. } => {
                "check --db and that PostgreSQL is running; `leafctl db init` creates leaf_workerid_alloc"
            }
            PostgresError::SharedSession { .. } => SHARED_SESSION_FIX,
            PostgresError::WaitTimeout { .. } => {
                "connect the worker registry to PostgreSQL directly, or through a session-mode pool that lets a session SET idle_session_timeout (PostgreSQL 14 or newer)"
            }
        }
    }

    /// A session shared through a pool, a pool that refuses what the registry needs, or a
    /// session that refuses its timeout: no retry mends them, the registry's connection must.
    fn needs_operator(&self) -> bool {
        match self {
            PostgresError::Request { reason, .. } => said_by_a_pooler(reason),
            PostgresError::SharedSession { .. } | PostgresError::WaitTimeout { .. } => true,
        }
    }
}

/// Whether a failure's text is a connection pooler's own error (see `pooler_note`).
fn said_by_a_pooler(reason: &str) -> bool {
    reason.contains(super::POOLER_NOTE)
}

impl From<PostgresError> for WorkerError {
    fn from(e: PostgresError) -> WorkerError {
        WorkerError::Store(StoreFailure::new("PostgreSQL", e))
    }
}

/// How to reach the database and who we are.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    target: PgTarget,
    /// This process's `ip:port`.
    pub identity: crate::worker::Identity,
    /// The session's `idle_session_timeout` (see the module's documentation).
    pub wait_timeout: Option<Duration>,
}

pub(super) fn fail(action: &'static str, reason: impl std::fmt::Display) -> WorkerError {
    WorkerError::from(PostgresError::Request {
        action,
        reason: reason.to_string(),
    })
}

impl PostgresOptions {
    /// Options for the database at `url` (`password` replaces one in the URL), as `identity`;
    /// `wait_timeout`: the session's `idle_session_timeout` (see the module's documentation; at
    /// least [`MIN_REGISTRY_WAIT_TIMEOUT`], `None` keeps the server's).
    pub fn new(
        url: &str,
        password: Option<&str>,
        identity: crate::worker::Identity,
        wait_timeout: Option<Duration>,
    ) -> Result<PostgresOptions, WorkerError> {
        let target = parse(url, password).map_err(|reason| {
            WorkerError::setting(
                format!(
                    "invalid PostgreSQL URL {}: {reason}",
                    crate::db::redact_url(url)
                ),
                "pass --db postgres://user@host:port/database (password in LEAF_DB_PASSWORD)",
            )
        })?;
        Ok(PostgresOptions {
            target,
            identity,
            wait_timeout,
        })
    }

    /// The PostgreSQL registry's options from a registry's settings: the database must be
    /// PostgreSQL.
    pub fn from_settings(settings: &RegistrySettings) -> Result<PostgresOptions, WorkerError> {
        let db = table::db_url(REGISTRY_KIND, settings)?;
        PostgresOptions::new(
            &db.value,
            settings.db_password.as_deref(),
            settings.identity()?,
            table::wait_timeout(settings),
        )
    }

    /// One connection to the first writable host that answers. No startup options are sent
    /// (a pooler refuses or drops them): [`PostgresOptions::connect_own`] sets the session's.
    fn connect(&self) -> Result<PgConn, WorkerError> {
        first_answering(self.target.hosts.len(), 0, |host| {
            PgConn::connect(&self.target, host, "")
        })
        .map(|(_, c)| c)
        .map_err(|last| {
            fail(
                "connect",
                last.map_or_else(|| "no host".to_string(), |f| f.to_string()),
            )
        })
    }
}

impl PostgresOptions {
    /// A connection whose server session is proven this process's own (see the module's
    /// documentation): its marker taken, its `idle_session_timeout` and `lock_timeout` set and
    /// read back. Refused, naming the pool, when the session holds another marker or lacks ours;
    /// a refusal gives back the marker it took (see [`OwnSession`]).
    pub(super) fn connect_own(&self) -> Result<OwnSession, WorkerError> {
        let c = self.connect()?;
        let asked = self
            .wait_timeout
            .map(|t| t.max(MIN_REGISTRY_WAIT_TIMEOUT).as_millis());
        let rows = c
            .query(
                &format!(
                    "SELECT t, pg_try_advisory_lock(({MARKER_TAG}::bigint << 48) | t), \
                     set_config('lock_timeout', $1::text, false), \
                     set_config('idle_session_timeout', \
                     COALESCE($2::text, current_setting('idle_session_timeout')), false), \
                     pg_backend_pid() \
                     FROM (SELECT txid_current() AS t) s WHERE t < (1::bigint << 48)"
                ),
                vec![
                    format!("{}s", LOCK_WAIT_TIMEOUT_S).as_str().into(),
                    asked.map(|ms| format!("{ms}ms")).as_deref().into(),
                ],
            )
            .map_err(|f| fail("take the session marker", f))?;
        let row = rows.first().ok_or_else(|| {
            fail(
                "take the session marker",
                "the server's transaction id is past 2^48, beyond the marker's key",
            )
        })?;
        let get = |e: tokio_postgres::Error| fail("take the session marker", e);
        let txid: i64 = row.try_get(0).map_err(get)?;
        let got: bool = row.try_get(1).map_err(get)?;
        let first_pid: i32 = row.try_get(4).map_err(get)?;
        let marker = Marker::for_txid(txid).ok_or_else(|| {
            fail(
                "take the session marker",
                format!("transaction id {txid} is beyond the marker's key"),
            )
        })?;
        if !got {
            // A transaction id is never assigned twice: only a shared session explains it.
            return Err(PostgresError::SharedSession {
                found: format!(
                    "another server session holds its marker lock (transaction {txid}), a key only this process ever takes"
                ),
            }
            .into());
        }
        // From here on, a refusal drops the session, which gives the marker back.
        let session = OwnSession { conn: c, marker };
        check_own(&session, first_pid, asked)?;
        Ok(session)
    }
}

/// The registry's second statement: the session holds this process's marker and no other
/// (else its statements ran on two server sessions, or another process's marker is on it),
/// and its `idle_session_timeout` is the one `asked` (ms).
fn check_own(session: &OwnSession, first_pid: i32, asked: Option<u128>) -> Result<(), WorkerError> {
    let rows = session
        .query(
            &format!(
                "SELECT {}, (SELECT setting::bigint FROM pg_settings \
                 WHERE name = 'idle_session_timeout'), pg_backend_pid()",
                session.marker.own_session_sql()
            ),
            vec![],
        )
        .map_err(|f| fail("check the session", f))?;
    let row = rows
        .first()
        .ok_or_else(|| fail("check the session", "no answer row"))?;
    let own: bool = row.try_get(0).map_err(|e| fail("check the session", e))?;
    let timeout: Option<i64> = row.try_get(1).map_err(|e| fail("check the session", e))?;
    let pid: i32 = row.try_get(2).map_err(|e| fail("check the session", e))?;
    if !own {
        return Err(PostgresError::SharedSession {
            found: not_own_session(first_pid, pid),
        }
        .into());
    }
    if let Some(asked) = asked
        && timeout.and_then(|t| u128::try_from(t).ok()) != Some(asked)
    {
        return Err(PostgresError::WaitTimeout {
            asked,
            found: timeout.unwrap_or(-1),
        }
        .into());
    }
    Ok(())
}

/// What a registry whose second statement found its session not its own learned: its two
/// statements ran on two server sessions (backend pids `first` and `second`), or another
/// process's marker is on the one they ran on.
fn not_own_session(first: i32, second: i32) -> String {
    if first == second {
        format!(
            "another process's session marker is on the same server session (backend pid {first}), so a pool in front gives that session to other clients too: the other process uses it now, or was killed while using it (a transaction or statement pool does not reset a server session between clients, so what a killed client held stays on it until the pooler closes that session)"
        )
    } else {
        format!(
            "its first two statements ran on two server sessions (backend pids {first} and {second}): a pool in front hands each transaction to any of its server sessions"
        )
    }
}

/// Creates `leaf_workerid_alloc` when missing (`leafctl db init`).
pub fn init_schema(url: &str, password: Option<&str>) -> Result<(), WorkerError> {
    let target = parse(url, password).map_err(|r| fail("connect", r))?;
    let o = PostgresOptions {
        target,
        identity: crate::worker::Identity {
            ip: String::new(),
            port: String::new(),
        },
        wait_timeout: None,
    };
    match o.connect()?.batch(WORKERID_DDL) {
        Err(f) if !f.lost_a_concurrent_create() => Err(fail("create leaf_workerid_alloc", f)),
        _ => Ok(()),
    }
}

pub(super) fn key(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

/// The `leaf_workerid_alloc` registry on PostgreSQL.
pub struct PostgresRegistry {
    pub(super) opts: PostgresOptions,
}

impl PostgresRegistry {
    /// A registry on `opts` (nothing is contacted until [`acquire`](crate::worker::WorkerRegistry::acquire)).
    pub fn new(opts: PostgresOptions) -> PostgresRegistry {
        PostgresRegistry { opts }
    }
}

impl Registry for PostgresRegistry {
    fn kind(&self) -> RegistryKind {
        REGISTRY_KIND
    }

    fn place(&self) -> String {
        "leaf_workerid_alloc".into()
    }

    /// Every row, for `leafctl workers list --db URL`.
    fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        let c = self.opts.connect()?;
        let rows = c
            .query(
                &format!(
                    "SELECT id, ip_port::text, max_timestamp, \
                     CAST(EXTRACT(EPOCH FROM update_time) * 1000 AS bigint), \
                     EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
                     AND classid = {LOCK_CLASS} AND objid = id::oid AND objsubid = 2 \
                     AND database = (SELECT oid FROM pg_database \
                     WHERE datname = current_database())) \
                     FROM leaf_workerid_alloc ORDER BY id"
                ),
                vec![],
            )
            .map_err(|f| fail("list leaf_workerid_alloc", f))?;
        rows.iter()
            .map(|r| {
                let get = |e: tokio_postgres::Error| fail("list leaf_workerid_alloc", e);
                let id: i64 = r.try_get(0).map_err(get)?;
                Ok(table::listed(
                    REGISTRY_KIND,
                    u64::try_from(id).unwrap_or(0),
                    r.try_get(1).map_err(get)?,
                    r.try_get(2).map_err(get)?,
                    r.try_get(3).map_err(get)?,
                    r.try_get(4).map_err(get)?,
                    now_ms,
                ))
            })
            .collect()
    }

    fn reclaim_plan(&self, record: &WorkerRecord) -> Option<String> {
        table::reclaim_plan("PostgreSQL", record)
    }

    fn held_because(&self, _record: &WorkerRecord) -> &'static str {
        "another session holds its advisory lock"
    }

    /// A stale row is marked given back under its lock (`update_time` NULL), keeping its
    /// `max_timestamp`: the next new identity takes its id. A held row (`--force`) is deleted,
    /// so its holder stops at its next report; its id is retired with its fence.
    fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let c = self.opts.connect_own()?;
        let marker = c.marker;
        let id = key(record.worker);
        let got = c
            .query(
                &format!("SELECT pg_try_advisory_lock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![id.into()],
            )
            .map_err(|f| fail("lock the worker id", f))?
            .first()
            .and_then(|r| r.try_get::<_, bool>(0).ok())
            == Some(true);
        if got {
            let marked = c
                .execute(
                    &format!(
                        "UPDATE leaf_workerid_alloc SET update_time = NULL WHERE id = $1::bigint \
                         AND {}",
                        fenced(1, marker)
                    ),
                    vec![id.into()],
                )
                .map_err(|f| fail("update leaf_workerid_alloc", f));
            let _ = c.query(
                &format!("SELECT pg_advisory_unlock({LOCK_CLASS}::int, $1::bigint::int)"),
                vec![id.into()],
            );
            return Ok(table::marked_given_back(record, marked?));
        }
        if !record.held {
            return Err(table::taken_meanwhile("PostgreSQL", record));
        }
        let deleted = c
            .execute(
                "DELETE FROM leaf_workerid_alloc WHERE id = $1::bigint",
                vec![id.into()],
            )
            .map_err(|f| fail("delete from leaf_workerid_alloc", f))?;
        Ok(table::deleted(record, deleted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A marker's key is the tag over the transaction id, whole: 48 bits fit, 2^48 and negative
    /// ids are refused rather than cut, and the check names its two halves as `pg_locks` shows
    /// a bigint key (high half in `classid`, low half in `objid`).
    #[test]
    fn a_marker_is_the_whole_transaction_id_under_its_tag() {
        let m = Marker::for_txid(0x0000_8765_4321_0FED).unwrap();
        assert_eq!(m.0, 0x4C47_8765_4321_0FED);
        let sql = m.own_session_sql();
        assert!(
            sql.contains(&format!("classid::bigint = {}", 0x4C47_8765_i64))
                && sql.contains(&format!("objid::bigint = {}", 0x4321_0FED_i64))
                && sql.contains(&format!("classid::bigint >> 16 = {}", 0x4C47)),
            "{sql}"
        );
        assert!(Marker::for_txid((1 << 48) - 1).is_some());
        assert_eq!(Marker::for_txid(1 << 48), None);
        assert_eq!(Marker::for_txid(-1), None);
    }
}
