//! The allocation table on MySQL or MariaDB, through the pure-Rust `mysql` crate.

use mysql::prelude::Queryable;

use mysql::{OptsBuilder, Pool, PoolConstraints, PoolOpts};

use super::conn::{Checked, Poison};
use super::url as mysql_url;
use super::{ER_LOCK_DEADLOCK, host_cannot_serve, map_connect_error, map_error};
use crate::db::HostChoice;
use crate::db::{CONNECT_TIMEOUT, IO_TIMEOUT, redact_url};
use crate::db::{PageParam, page_query};
use crate::region::Region;
use crate::segment::Removed;
use crate::segment::store::{
    Attempt, CONFLICT_TRIES, bump_with_retries, check_claim, unknown_tag, with_retries,
};
use crate::segment::{
    Added, AllocStore, Bounds, Claim, Increment, LeafAlloc, NewTag, REMOVED_TABLE, RowsPage,
    SegmentError, StartAt, TagsFingerprint, Tombstone,
};

/// Leaf's table exactly as its `scripts/leaf_alloc.sql` creates it (plus `IF NOT EXISTS`), so a
/// table made by Leaf and one made by `leafctl db init` are the same.
///
/// `leafctl db init` runs every statement of the list in order; further tables go at the end.
pub const MYSQL_DDL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS `leaf_alloc` (
  `biz_tag` varchar(128) NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256) DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB",
    // The tombstones of removed tags (issue 33): not rows of leaf_alloc, which Leaf's servers
    // read as live tags.
    "CREATE TABLE IF NOT EXISTS `leaf_alloc_removed` (
  `biz_tag` varchar(128) NOT NULL,
  `max_id` bigint(20) NOT NULL,
  `removed_at` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB",
];

/// The region mark ([`crate::segment::REGION_TABLE`]), created when a region is first used.
pub const MYSQL_REGION_DDL: &str = "CREATE TABLE IF NOT EXISTS `leaf_region` (
  `id` int NOT NULL,
  `region` int NOT NULL,
  `regions` int NOT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB";

/// The shapes of shaped tags ([`crate::segment::SHAPE_TABLE`]), created when one is first added.
pub const MYSQL_SHAPE_DDL: &str = "CREATE TABLE IF NOT EXISTS `leaf_tag_shape` (
  `biz_tag` varchar(128) NOT NULL,
  `shape` varchar(255) NOT NULL,
  `added_at` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB";

const ROW_SQL: &str = "SELECT biz_tag, max_id, step, description, \
     CAST(UNIX_TIMESTAMP(update_time) AS SIGNED) FROM leaf_alloc";

type Row = (String, i64, i64, Option<String>, Option<i64>);

fn row(r: Row) -> LeafAlloc {
    LeafAlloc {
        tag: r.0,
        max_id: r.1,
        step: r.2,
        description: r.3,
        update_time_s: r.4.unwrap_or(0),
    }
}

/// `leaf_alloc` on a MySQL-compatible server: a small connection pool with short connect and
/// read/write timeouts, so an unreachable server fails within seconds with a clear error.
///
/// A URL may list several hosts (`mysql://user@h1:3306,h2:3306/db`, the form JDBC and libpq
/// use): the store connects to the first that answers, moves to the next when the one in use
/// stops answering or cannot take writes (read-only, a Galera node outside the primary
/// component), and tries the earlier ones again every [`FAILBACK_AFTER`](crate::db::FAILBACK_AFTER).
pub struct MysqlStore {
    /// One per host of the URL, in its order, with the pool's settings.
    hosts: Vec<OptsBuilder>,
    /// The host in use and its pool.
    active: HostChoice<Pool>,
    /// `mysql://user@host:port[,host:port...]/db`, never with a password.
    name: String,
    password: Option<String>,
    /// When a connection was last taken: one taken after a long idle time is pinged first.
    last_used: std::sync::Mutex<std::time::Instant>,
    /// Where claims stay ([`Confined::confine`](crate::segment::Confined::confine)).
    bounds: crate::segment::store::Confinement,
}

/// Most connections a store keeps to its host.
const POOL_CONNECTIONS: usize = 4;

/// A connection the store has not used for this long is pinged before its statement.
const PING_AFTER_IDLE: std::time::Duration = std::time::Duration::from_secs(5);

impl std::fmt::Debug for MysqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::db::debug_store(f, "MysqlStore", &self.name)
    }
}

impl MysqlStore {
    /// Connects to `mysql://user[:password]@host[:port][,host[:port]...]/database[?tls=true]`;
    /// `password`, when given, replaces one in the URL. `tls=true` (or `ssl=true`) requires TLS
    /// with the system's root certificates; the `mysql` crate's own `root_cert_path=...` etc.
    /// are passed through.
    pub fn open(url: &str, password: Option<&str>) -> Result<MysqlStore, SegmentError> {
        let invalid = |reason: String| SegmentError::InvalidUrl {
            url: redact_url(url),
            reason,
        };
        let target = mysql_url::parse(url, password).map_err(invalid)?;
        let constraints =
            PoolConstraints::new(1, POOL_CONNECTIONS).ok_or_else(|| invalid("pool".into()))?;
        let hosts: Vec<OptsBuilder> = target
            .hosts
            .into_iter()
            // Connections stay warm: no reset when one comes back (it would drop the session's
            // settings and prepared statements), no ping when one is taken. A connection that
            // broke meanwhile fails its statement, is shut down and replaced
            // ([`MysqlStore::conn`] pings one the store left idle for a while first).
            .map(|b| {
                b.pool_opts(
                    PoolOpts::default()
                        .with_constraints(constraints)
                        .with_reset_connection(false)
                        .with_check_health(false),
                )
            })
            .collect();
        let active = HostChoice::open(&target.name, hosts.len(), |host| {
            Pool::new(hosts[host].clone())
        })
        .map_err(|last| {
            let e = last.unwrap_or(mysql::Error::DriverError(
                mysql::DriverError::CouldNotConnect(None),
            ));
            map_connect_error(&target.name, e, target.password.as_deref())
        })?;
        Ok(MysqlStore {
            active,
            hosts,
            name: target.name,
            password: target.password,
            last_used: std::sync::Mutex::new(std::time::Instant::now()),
            bounds: Default::default(),
        })
    }

    fn err(&self, e: mysql::Error) -> SegmentError {
        map_error(&self.name, e, self.password.as_deref())
    }

    /// A connection to the host in use; if it does not answer, to the next that does. After
    /// the store was idle for [`PING_AFTER_IDLE`] the connection is pinged first (a server
    /// restart or its `wait_timeout` may have ended it meanwhile); a busy store never pings.
    fn conn(&self) -> Result<Checked, SegmentError> {
        let idle = {
            let mut last = self.last_used.lock().unwrap_or_else(|p| p.into_inner());
            let idle = last.elapsed() >= PING_AFTER_IDLE;
            *last = std::time::Instant::now();
            idle
        };
        // A pooled connection whose socket is closed (shut down after a failed statement, or
        // ended by a restarted server) is dropped for good and another taken: the pool neither
        // resets nor pings connections (that would cost round trips on every claim).
        for _ in 0..=POOL_CONNECTIONS {
            let mut checked = self.conn_unchecked()?;
            if checked.poison.alive() && !(idle && checked.conn.as_mut().ping().is_err()) {
                return Ok(checked);
            }
            checked.discard();
        }
        self.conn_unchecked()
    }

    fn conn_unchecked(&self) -> Result<Checked, SegmentError> {
        self.active
            .fail_back(|host| Pool::new(self.hosts[host].clone()));
        let get = |pool: &Pool| {
            pool.try_get_conn(CONNECT_TIMEOUT + IO_TIMEOUT)
                .map_err(|e| map_connect_error(&self.name, e, self.password.as_deref()))
        };
        let (host, pool) = self.active.current();
        match get(&pool) {
            Ok(c) => Ok(Checked::new(c, host)),
            Err(e) if self.hosts.len() == 1 => Err(e),
            Err(e) => {
                self.advance(host, &e)?;
                let (host, pool) = self.active.current();
                Ok(Checked::new(get(&pool)?, host))
            }
        }
    }

    /// Moves from host `failed` (if still in use) to the next host of the list that accepts a
    /// connection; the error of the last one tried if none does.
    fn advance(&self, failed: usize, why: &SegmentError) -> Result<(), SegmentError> {
        self.active
            .advance(failed, why, |host| Pool::new(self.hosts[host].clone()))
            .map_err(|e| map_connect_error(&self.name, e, self.password.as_deref()))
    }

    /// Maps an error of a statement on `conn`; a connection-level failure first poisons it.
    fn fail(&self, conn: &Poison, e: mysql::Error) -> SegmentError {
        if !matches!(e, mysql::Error::MySqlError(_)) {
            conn.poison();
        }
        self.err(e)
    }
}

/// The claim itself is one autocommit `UPDATE ... SET max_id = LAST_INSERT_ID(max_id + n)`. Its
/// OK packet is sent only once the change has committed (on Galera: certified and replicated);
/// `LAST_INSERT_ID(expr)` leaves the new `max_id` in the session for the `SELECT` sent with it.
/// The guard in `WHERE` keeps the claim from overflowing or issuing from a negative row; a row
/// it leaves alone is explained from the same answer.
impl MysqlStore {
    /// One try of a claim.
    ///
    /// It is deliberately not Leaf's `START TRANSACTION; SELECT ... FOR UPDATE; UPDATE;
    /// SELECT; COMMIT`. On a Galera cluster a transaction can be rolled back by a conflicting
    /// write from another node ("brute-force abort") while the client sits between two
    /// statements. MariaDB then runs the client's next prepared statement anyway, outside any
    /// transaction and without an error: the `SELECT` after the `UPDATE` read `max_id` with
    /// the claim already undone, and the `COMMIT` that followed committed nothing and said OK.
    /// The claim handed out the range below the current `max_id`, which another claimant
    /// owned: a duplicate ID. With a single autocommit statement there is no idle transaction
    /// to lose, and the answer that reports the claim is the one that reports its commit.
    fn claim_once(&self, tag: &str, increment: Increment) -> Result<Claim, Attempt> {
        let failed = |e| Attempt::Failed(e);
        let Checked {
            mut conn,
            poison,
            host,
        } = self.conn().map_err(failed)?;
        let attempt = |e: mysql::Error| self.attempt(&poison, host, e);
        let inc = match increment {
            Increment::Custom(n) => {
                check_claim(tag, &Bounds::UNBOUNDED, 0, n).map_err(failed)?;
                n
            }
            // The table's step, read first: the claim must know how many IDs it takes (a step
            // changed between the two reads is harmless: the claim takes what it read).
            Increment::TableStep => {
                let rows: Vec<i64> = conn
                    .exec("SELECT step FROM leaf_alloc WHERE biz_tag = ?", (tag,))
                    .map_err(attempt)?;
                let Some(&step) = rows.first() else {
                    return Err(failed(unknown_tag(tag, &self.name)));
                };
                check_claim(tag, &Bounds::UNBOUNDED, 0, step).map_err(failed)?;
                step
            }
        };
        // One round trip: the claim, then (in the same packet, after the claim's commit) what
        // it did and the row as it stands for the explanation of a claim that changed nothing.
        let literal = mysql::Value::from(tag).as_sql(conn.no_backslash_escape());
        // The guard's bounds are the store's (0 and 2^63-1, or the region's block), numbers
        // formatted from i64s like the increment.
        let Bounds { floor, ceiling, .. } = self.bounds.of(tag);
        let sql = format!(
            "UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + {inc}) \
             WHERE biz_tag = {literal} AND max_id >= {floor} AND max_id <= {ceiling} - {inc}; \
             SELECT ROW_COUNT(), LAST_INSERT_ID(), max_id, step FROM leaf_alloc \
             WHERE biz_tag = {literal}"
        );
        let mut answer: Option<(i64, i64, i64, i64)> = None;
        {
            let mut result = conn.query_iter(sql).map_err(attempt)?;
            while let Some(set) = result.iter() {
                for row in set {
                    let row = row.map_err(attempt)?;
                    answer = Some(mysql::from_row_opt(row).map_err(|e| {
                        failed(SegmentError::Database {
                            db: self.name.clone(),
                            detail: format!("unexpected answer to a claim: {e}"),
                        })
                    })?);
                }
            }
        }
        let Some((changed, new_max, max_id, table_step)) = answer else {
            return Err(failed(unknown_tag(tag, &self.name)));
        };
        if changed != 1 {
            // The row cannot be claimed from (say why), or it changed in between: try again.
            check_claim(tag, &self.bounds.of(tag), max_id, inc).map_err(failed)?;
            return Err(Attempt::Conflict(format!(
                "the claim changed {changed} rows"
            )));
        }
        // The session's LAST_INSERT_ID, not the OK packet's: a trigger on the table (an audit
        // log, say) clears the packet's value, while the session's is restored after it.
        if new_max < inc {
            return Err(failed(SegmentError::Database {
                db: self.name.clone(),
                detail: format!(
                    "the claim for tag {tag:?} committed but LAST_INSERT_ID() reported max_id \
                     {new_max}; nothing was issued from it"
                ),
            }));
        }
        let (start, end) =
            check_claim(tag, &self.bounds.of(tag), new_max - inc, inc).map_err(failed)?;
        Ok(Claim {
            start,
            end,
            table_step,
        })
    }
}

impl MysqlStore {
    /// How a statement's failure on the connection `poison` guards (to host `host`) ends one
    /// try of a claim or a tag command: a lost write conflict (1213: an InnoDB deadlock, or on
    /// Galera another node's write to the same row certified first), a host that cannot serve
    /// (1047: a Galera node outside the primary component, read-only, gone), or the answer.
    fn attempt(&self, poison: &Poison, host: usize, e: mysql::Error) -> Attempt {
        match e {
            mysql::Error::MySqlError(ref m) if m.code == ER_LOCK_DEADLOCK => {
                Attempt::Conflict(format!("error {}: {}", m.code, m.message))
            }
            e if host_cannot_serve(&e) => Attempt::HostDown(self.fail(poison, e), host),
            e => Attempt::Failed(self.fail(poison, e)),
        }
    }

    /// A tag command tried as a claim is ([`with_retries`]): `once` is one try of its
    /// statements on a connection to the host in use; a lost write conflict runs it again, a
    /// host that cannot serve hands it to the next host of the list. Each try reads what it
    /// changes afresh, so running it again is safe.
    fn command<T>(
        &self,
        tag: &str,
        mut once: impl FnMut(&mut Checked) -> Result<T, Attempt>,
    ) -> Result<T, SegmentError> {
        with_retries(
            &self.name,
            tag,
            self.active.len(),
            || once(&mut self.conn().map_err(Attempt::Failed)?),
            |host, e| self.advance(host, e),
        )
    }

    /// Statements that read, or write what running them again leaves the same, run where a
    /// claim would: on the next host of the list when this one cannot serve (a Galera node
    /// that is rejoining answers 1047 to every query), as a tag command is. `tag`: the tag they
    /// concern, for a conflict's message (empty for statements not about one tag).
    fn on_a_host<T>(
        &self,
        tag: &str,
        mut once: impl FnMut(&mut mysql::PooledConn) -> Result<T, mysql::Error>,
    ) -> Result<T, SegmentError> {
        self.command(tag, |Checked { conn, poison, host }| {
            once(conn).map_err(|e| self.attempt(poison, *host, e))
        })
    }

    /// One try of `add_tag` on `checked` ([`MysqlStore::command`]).
    fn add_tag_once(&self, checked: &mut Checked, new: &NewTag<'_>) -> Result<Added, Attempt> {
        let &NewTag {
            tag,
            step,
            description,
            ..
        } = new;
        let Checked {
            conn, poison, host, ..
        } = checked;
        let (poison, host) = (*poison, *host);
        // The tombstone as it stands, to refuse a --start below it and to say where the tag
        // starts. A server without the table has no tombstones.
        let (removed, table): (Option<i64>, bool) = match conn.exec(
            "SELECT max_id FROM leaf_alloc_removed WHERE biz_tag = ?",
            (tag,),
        ) {
            Ok(rows) => (rows.into_iter().next(), true),
            Err(mysql::Error::MySqlError(m)) if m.code == 1146 => (None, false),
            Err(e) => return Err(self.attempt(&poison, host, e)),
        };
        let first = new.first_id(&self.name, removed).map_err(Attempt::Failed)?;
        // One autocommit statement (see `claim_once` on transactions here): the row starts at
        // the tombstone or above it as the tombstone stands when the insert commits. A removal
        // commits its tombstone before its deletion, and the insert cannot commit before the
        // deletion, so the statement's (locking) read of the tombstone sees it.
        let result = if table && !matches!(new.start, StartAt::Reuse(_)) {
            conn.exec_drop(
                "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) \
                 SELECT ?, GREATEST(?, COALESCE((SELECT r.max_id FROM leaf_alloc_removed r \
                 WHERE r.biz_tag = ? LOCK IN SHARE MODE), 0)), ?, ?",
                (tag, first, tag, step, description),
            )
        } else {
            conn.exec_drop(
                "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?, ?, ?, ?)",
                (tag, first, step, description),
            )
        };
        match result {
            Ok(()) => Ok(Added::inserted(first, removed)),
            Err(mysql::Error::MySqlError(m)) if m.code == 1062 => new
                .exists(&self.name, first, removed)
                .map_err(Attempt::Failed),
            Err(e) => Err(self.attempt(&poison, host, e)),
        }
    }

    /// One try of `remove` on `checked` ([`MysqlStore::command`]).
    fn remove_once(&self, checked: &mut Checked, tag: &str) -> Result<Removed, Attempt> {
        // No transaction (see `claim_once`): each try records the tombstone (the highest
        // max_id seen) first, then deletes the row only if its max_id is still the one
        // recorded; a claim in between makes it look again. So the tombstone is committed
        // before the deletion, never after, and the delete removes exactly the row reported.
        let Checked { conn, poison, host } = checked;
        let (poison, host) = (*poison, *host);
        let mut created = false;
        for _ in 0..CONFLICT_TRIES {
            let rows: Vec<Row> = conn
                .exec(format!("{ROW_SQL} WHERE biz_tag = ?"), (tag,))
                .map_err(|e| self.attempt(&poison, host, e))?;
            let Some(r) = rows.into_iter().next() else {
                return Err(Attempt::Failed(unknown_tag(tag, &self.name)));
            };
            let tombstone = conn.exec_drop(
                // The value bound twice: VALUES() here is deprecated on MySQL 8.
                "INSERT INTO leaf_alloc_removed (biz_tag, max_id) VALUES (?, ?) \
                 ON DUPLICATE KEY UPDATE max_id = GREATEST(max_id, ?), \
                 removed_at = CURRENT_TIMESTAMP",
                (tag, r.1, r.1),
            );
            match tombstone {
                Ok(()) => {}
                // A database made before tombstones: create the table (once), then try again.
                Err(mysql::Error::MySqlError(m)) if m.code == 1146 && !created => {
                    created = true;
                    let ddl = MYSQL_DDL.last().copied().unwrap_or_default();
                    if let Err(e) = conn.query_drop(ddl) {
                        return Err(Attempt::Failed(SegmentError::NoRemovedTable {
                            tag: tag.into(),
                            db: self.name.clone(),
                            detail: format!("missing, and creating it failed: {}", self.err(e)),
                        }));
                    }
                    continue;
                }
                Err(e) => {
                    return Err(match self.attempt(&poison, host, e) {
                        Attempt::Failed(
                            e @ (SegmentError::MissingTable { .. }
                            | SegmentError::AccessDenied { .. }),
                        ) => Attempt::Failed(SegmentError::NoRemovedTable {
                            tag: tag.into(),
                            db: self.name.clone(),
                            detail: e.to_string(),
                        }),
                        other => other,
                    });
                }
            }
            conn.exec_drop(
                "DELETE FROM leaf_alloc WHERE biz_tag = ? AND max_id = ?",
                (tag, r.1),
            )
            .map_err(|e| self.attempt(&poison, host, e))?;
            if conn.affected_rows() == 1 {
                // The tombstone as the removal left it: the highest the name reached.
                let kept: Vec<i64> = conn
                    .exec(
                        "SELECT max_id FROM leaf_alloc_removed WHERE biz_tag = ?",
                        (tag,),
                    )
                    .map_err(|e| self.attempt(&poison, host, e))?;
                let kept = kept.first().copied();
                let row = row(r);
                return Ok(Removed {
                    tombstone: kept.unwrap_or(row.max_id).max(row.max_id),
                    row,
                });
            }
        }
        Err(Attempt::Failed(SegmentError::Conflict {
            tag: tag.into(),
            db: self.name.clone(),
            tries: CONFLICT_TRIES,
            detail: "the tag was claimed from between every read and delete".into(),
        }))
    }
}

/// What the `MysqlStore` does for each [`AllocStore`] operation: its statements, one method
/// each (the trait's methods dispatch here).
impl MysqlStore {
    fn read_rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError> {
        let like = page.filter.like_pattern();
        let (sql, params) = page_query(ROW_SQL, page.after, like.as_deref(), page.limit);
        let rows: Vec<Row> = self.on_a_host("", |conn| conn.exec(&sql, params.clone()))?;
        Ok(rows.into_iter().map(row).collect())
    }

    fn read_removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError> {
        let select = format!("SELECT biz_tag, max_id FROM {REMOVED_TABLE}");
        let (sql, params) = page_query(&select, after, None, limit);
        match self.on_a_host("", |conn| {
            conn.exec::<(String, i64), _, _>(&sql, params.clone())
        }) {
            Ok(rows) => Ok(rows
                .into_iter()
                .map(|(tag, max_id)| Tombstone { tag, max_id })
                .collect()),
            // A database made before tombstones: none.
            Err(SegmentError::MissingTable { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    fn read_tags_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, SegmentError> {
        let (sql, params) = page_query("SELECT biz_tag FROM leaf_alloc", after, None, limit);
        self.on_a_host("", |conn| conn.exec(&sql, params.clone()))
    }

    fn update_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        let changed = self.command(tag, |Checked { conn, poison, host }| {
            conn.exec_drop(
                "UPDATE leaf_alloc SET step = ? WHERE biz_tag = ?",
                (step, tag),
            )
            .map_err(|e| self.attempt(poison, *host, e))?;
            Ok(conn.affected_rows())
        })?;
        if changed == 0 && self.get(tag)?.is_none() {
            return Err(unknown_tag(tag, &self.name));
        }
        Ok(())
    }

    fn update_hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError> {
        // Tried once, on the host in use, and never again (unlike every other statement here):
        // it moves max_id down, so a second try after an answer lost with its host could find
        // max_id back at `from` after someone else's claim above `to` and hand that claim's
        // range out again. A hand-back that fails leaves a gap, never a repeat.
        let Checked {
            mut conn, poison, ..
        } = self.conn()?;
        conn.exec_drop(
            "UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?",
            (to, tag, from),
        )
        .map_err(|e| self.fail(&poison, e))?;
        // `to` differs from `from`, so a matched row is a changed row.
        Ok(conn.affected_rows() == 1)
    }

    fn read_region(&self) -> Result<Option<Region>, SegmentError> {
        let rows: Vec<(i64, i64)> = self.on_a_host("", |conn| {
            // information_schema first: no error to tell apart when the table was never made.
            let exists: Vec<i64> = conn.query(
                "SELECT COUNT(*) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = 'leaf_region'",
            )?;
            if exists.first().copied().unwrap_or(0) == 0 {
                return Ok(Vec::new());
            }
            conn.query("SELECT region, regions FROM leaf_region WHERE id = 1")
        })?;
        rows.first()
            .map(|&(r, n)| crate::db::regions::region_of_row(&self.name, r, n))
            .transpose()
    }

    fn write_region(&self, region: Region) -> Result<(), SegmentError> {
        // A create if missing and an insert that keeps a row already there: again, the same.
        self.on_a_host("", |conn| {
            conn.query_drop(MYSQL_REGION_DDL)?;
            conn.exec_drop(
                "INSERT IGNORE INTO leaf_region (id, region, regions) VALUES (1, ?, ?)",
                (region.index(), region.count()),
            )
        })
    }

    fn read_shape(&self, tag: &str) -> Result<Option<String>, SegmentError> {
        let rows: Vec<String> = self.on_a_host("", |conn| {
            // information_schema first: no error to tell apart when the table was never made.
            let exists: Vec<i64> = conn.query(
                "SELECT COUNT(*) FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = 'leaf_tag_shape'",
            )?;
            if exists.first().copied().unwrap_or(0) == 0 {
                return Ok(Vec::new());
            }
            conn.exec("SELECT shape FROM leaf_tag_shape WHERE biz_tag = ?", (tag,))
        })?;
        Ok(rows.into_iter().next())
    }

    fn write_shape(&self, tag: &str, spec: &str) -> Result<(), SegmentError> {
        // A create if missing and an insert that keeps a row already there: again, the same.
        self.on_a_host("", |conn| {
            conn.query_drop(MYSQL_SHAPE_DDL)?;
            conn.exec_drop(
                "INSERT IGNORE INTO leaf_tag_shape (biz_tag, shape) VALUES (?, ?)",
                (tag, spec),
            )
        })
    }

    fn update_bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError> {
        self.command(tag, |Checked { conn, poison, host }| {
            let (poison, host) = (*poison, *host);
            let conn = std::cell::RefCell::new(conn);
            bump_with_retries(
                &self.name,
                tag,
                to,
                || {
                    let rows: Vec<i64> = conn
                        .borrow_mut()
                        .exec("SELECT max_id FROM leaf_alloc WHERE biz_tag = ?", (tag,))
                        .map_err(|e| self.attempt(&poison, host, e))?;
                    Ok(rows.first().copied())
                },
                // One autocommit statement that can only move the row forward.
                |max_id| {
                    let mut conn = conn.borrow_mut();
                    conn.exec_drop(
                        "UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?",
                        (to, tag, max_id),
                    )
                    .map_err(|e| self.attempt(&poison, host, e))?;
                    Ok(conn.affected_rows() == 1)
                },
            )
        })
    }
}

impl AllocStore for MysqlStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn init_schema(&self) -> Result<(), SegmentError> {
        // `CREATE TABLE IF NOT EXISTS`: running it again changes nothing.
        self.on_a_host("", |conn| {
            for ddl in MYSQL_DDL {
                conn.query_drop(ddl)?;
            }
            Ok(())
        })
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        with_retries(
            &self.name,
            tag,
            self.hosts.len(),
            || self.claim_once(tag, increment),
            |host, e| self.advance(host, e),
        )
    }

    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError> {
        self.command(new.tag, |checked| self.add_tag_once(checked, new))
    }

    fn tags_fingerprint(&self) -> Result<Option<TagsFingerprint>, SegmentError> {
        // The server reads the names and sends two numbers.
        let rows: Vec<(i64, u64)> = self.on_a_host("", |conn| {
            conn.query(
                "SELECT COUNT(*), CAST(COALESCE(BIT_XOR(CRC32(biz_tag)), 0) AS UNSIGNED) \
                 FROM leaf_alloc",
            )
        })?;
        Ok(rows.first().map(|&(count, checksum)| TagsFingerprint {
            count: u64::try_from(count).unwrap_or(0),
            checksum,
        }))
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        let rows: Vec<Row> = self.on_a_host(tag, |conn| {
            conn.exec(format!("{ROW_SQL} WHERE biz_tag = ?"), (tag,))
        })?;
        Ok(rows.into_iter().next().map(row))
    }

    fn remove(&self, tag: &str) -> Result<Removed, SegmentError> {
        self.command(tag, |checked| self.remove_once(checked, tag))
    }

    crate::segment::store::table_operations!();
}

crate::segment::store::bounds_in_field!(MysqlStore);

impl From<PageParam> for mysql::Value {
    fn from(p: PageParam) -> mysql::Value {
        match p {
            PageParam::Text(t) => mysql::Value::from(t),
            PageParam::Int(i) => mysql::Value::from(i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error(code: u16, message: &str) -> mysql::Error {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "HY000".into(),
            message: message.into(),
            code,
        })
    }

    /// The nemesis (tests/nemesis/main.rs) saw `next` fail with 1180 on a Galera node that had just
    /// left the primary component while two other nodes could take the claim.
    #[test]
    fn a_node_out_of_the_primary_component_hands_over_to_the_next_host() {
        let out = "Error while appending streaming replication fragment(provider status: Not \
                   connected to Primary Component)";
        assert!(host_cannot_serve(&server_error(1180, out)));
        assert!(host_cannot_serve(&server_error(
            1047,
            "WSREP has not yet prepared node"
        )));
        assert!(host_cannot_serve(&server_error(1290, "--read-only")));
        // A statement's own failure is the answer on every host.
        assert!(!host_cannot_serve(&server_error(
            1146,
            "Table 'leaf.leaf_alloc' doesn't exist"
        )));
        assert!(!host_cannot_serve(&server_error(1213, "Deadlock found")));
    }
}
