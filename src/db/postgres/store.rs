//! The allocation table on PostgreSQL (one server, a libpq host list, a Patroni cluster), through
//! this folder's connection (`conn.rs`).

use std::sync::{Arc, Mutex};

use super::conn::{Param, PgConn, numbered};
use super::url::{PgTarget, parse};
use super::{PgFailure, segment_error};
use crate::db::HostChoice;
use crate::db::redact_url;
use crate::db::{PageParam, page_query};
use crate::region::Region;
use crate::segment::Removed;
use crate::segment::store::{
    Attempt, CONFLICT_TRIES, bump_with_retries, check_claim, names_removed_table, unknown_tag,
    with_retries,
};
use crate::segment::{
    Added, AllocStore, Bounds, Claim, Increment, LeafAlloc, NewTag, REGION_TABLE, REMOVED_TABLE,
    RowsPage, SHAPE_TABLE, SegmentError, StartAt, TagsFingerprint, Tombstone,
};

/// Leaf's table in PostgreSQL's types (`leafctl db init`). `biz_tag` compares byte for byte
/// (`COLLATE "C"`), as listings page through tags in that order and a prefix `LIKE` can use
/// the key; there is no `ON UPDATE`, so every write sets `update_time` itself.
pub const POSTGRES_DDL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS leaf_alloc (
  biz_tag varchar(128) COLLATE \"C\" NOT NULL DEFAULT '',
  max_id bigint NOT NULL DEFAULT 1,
  step integer NOT NULL,
  description varchar(256) DEFAULT NULL,
  update_time timestamp with time zone NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)",
    // The tombstones of removed tags (issue 33): not rows of leaf_alloc, which Leaf's servers
    // read as live tags.
    "CREATE TABLE IF NOT EXISTS leaf_alloc_removed (
  biz_tag varchar(128) COLLATE \"C\" NOT NULL,
  max_id bigint NOT NULL,
  removed_at timestamp with time zone NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)",
];

/// The shapes of shaped tags ([`crate::segment::SHAPE_TABLE`]), created when one is first added.
pub const POSTGRES_SHAPE_DDL: &str = "CREATE TABLE IF NOT EXISTS leaf_tag_shape (
  biz_tag varchar(128) NOT NULL PRIMARY KEY,
  shape varchar(255) NOT NULL,
  added_at timestamptz NOT NULL DEFAULT now()
)";

/// The region mark ([`REGION_TABLE`]), created when a region is first used.
pub const POSTGRES_REGION_DDL: &str = "CREATE TABLE IF NOT EXISTS leaf_region (
  id integer NOT NULL PRIMARY KEY,
  region integer NOT NULL,
  regions integer NOT NULL
)";

const ROW_SQL: &str = "SELECT biz_tag::text, max_id, step::bigint, description::text, \
     CAST(EXTRACT(EPOCH FROM update_time) AS bigint) FROM leaf_alloc";

/// The claim: one autocommit statement, so the answer that reports it is the one that reports
/// its commit (on a synchronous cluster, its replication). `$1` is a custom increment, NULL
/// for the row's step. The guard in `WHERE` keeps it from overflowing or issuing from a
/// negative row or past its ceiling (`$3`, `$4`: the store's [`Bounds`], the region's block or
/// 0 and 2^63-1); a row it leaves alone is explained afterwards. Plain SQL that
/// PostgreSQL-wire distributed engines accept: no function, no procedure, no lock clause.
const CLAIM_SQL: &str = "UPDATE leaf_alloc \
     SET max_id = max_id + COALESCE($1::bigint, step), update_time = CURRENT_TIMESTAMP \
     WHERE biz_tag = $2::text AND COALESCE($1::bigint, step) >= 1 AND max_id >= $3::bigint \
     AND max_id <= $4::bigint - COALESCE($1::bigint, step) \
     RETURNING max_id, step::bigint";

/// Connections kept open to the host in use between statements.
const IDLE_CONNECTIONS: usize = 4;

/// The max_id of a tombstone row that records no removal: `tag add` writes it for a name never
/// removed, so that every add has a row to lock (see `add_once`). Below every start, and lost to
/// the first real tombstone's `GREATEST`; read back as none.
const NO_TOMBSTONE: i64 = i64::MIN;

/// `leaf_alloc` on PostgreSQL: a few connections to the host in use, every statement bounded by
/// the 5 s I/O timeout.
///
/// A URL may list several hosts (`postgres://leaf@h1:5432,h2:5432,h3:5432/leaf`): with more
/// than one, only a writable host is used (libpq's `target_session_attrs=read-write`); the
/// store moves to the next host when the one in use stops answering or becomes a standby, and
/// tries the earlier ones again every [`crate::db::FAILBACK_AFTER`].
pub struct PostgresStore {
    target: PgTarget,
    active: HostChoice<Arc<Idle>>,
    /// Where claims stay ([`Confined::confine`](crate::segment::Confined::confine)).
    bounds: crate::segment::store::Confinement,
}

/// Open connections to one host, waiting for their next statement.
struct Idle {
    host: usize,
    conns: Mutex<Vec<PgConn>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::db::debug_store(f, "PostgresStore", &self.target.name)
    }
}

/// A connection borrowed from the store; it goes back to its host's idle list when dropped if
/// it is still usable and that host is still the one in use.
struct Lease<'a> {
    conn: Option<PgConn>,
    idle: Arc<Idle>,
    store: &'a PostgresStore,
}

impl std::ops::Deref for Lease<'_> {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.conn.as_ref().expect("present until dropped")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        if !conn.usable() || self.store.active.current().0 != self.idle.host {
            return;
        }
        let mut idle = self.idle.conns.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(conn);
        }
    }
}

impl PostgresStore {
    /// Connects to `postgres://user[:password]@host[:port][,host[:port]...]/database[?...]`
    /// (libpq's URL form, see `src/db/postgres/url.rs`); `password`, when given, replaces one in the URL.
    pub fn open(url: &str, password: Option<&str>) -> Result<PostgresStore, SegmentError> {
        let target = parse(url, password).map_err(|reason| SegmentError::InvalidUrl {
            url: redact_url(url),
            reason,
        })?;
        let active = HostChoice::open(&target.name, target.hosts.len(), |host| {
            Self::connect(&target, host)
        })
        .map_err(|last| match last {
            Some(f) => segment_error(&target.name, f),
            None => SegmentError::Unreachable {
                db: target.name.clone(),
                detail: "no host".into(),
            },
        })?;
        Ok(PostgresStore {
            target,
            active,
            bounds: Default::default(),
        })
    }

    /// A first connection to `host`, kept as its idle list.
    fn connect(target: &PgTarget, host: usize) -> Result<Arc<Idle>, PgFailure> {
        let conn = PgConn::connect(target, host, "")?;
        Ok(Arc::new(Idle {
            host,
            conns: Mutex::new(vec![conn]),
        }))
    }

    fn name(&self) -> &str {
        &self.target.name
    }

    /// A connection to the host in use; if that host cannot serve, to the next that can.
    fn conn(&self) -> Result<Lease<'_>, SegmentError> {
        self.active.fail_back(|h| Self::connect(&self.target, h));
        let (host, idle) = self.active.current();
        match self.conn_to(&idle) {
            Ok(c) => Ok(c),
            Err(f) if self.active.len() == 1 || !f.host_cannot_serve() => {
                Err(segment_error(self.name(), f))
            }
            Err(f) => {
                self.advance(host, &segment_error(self.name(), f))?;
                let (_, idle) = self.active.current();
                self.conn_to(&idle)
                    .map_err(|f| segment_error(self.name(), f))
            }
        }
    }

    fn conn_to(&self, idle: &Arc<Idle>) -> Result<Lease<'_>, PgFailure> {
        let kept = loop {
            let next = idle.conns.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match next {
                Some(c) if c.usable() => break Some(c),
                Some(_) => continue,
                None => break None,
            }
        };
        let conn = match kept {
            Some(c) => c,
            None => PgConn::connect(&self.target, idle.host, "")?,
        };
        Ok(Lease {
            conn: Some(conn),
            idle: idle.clone(),
            store: self,
        })
    }

    fn advance(&self, failed: usize, why: &SegmentError) -> Result<(), SegmentError> {
        self.active
            .advance(failed, why, |h| Self::connect(&self.target, h))
            .map_err(|f| segment_error(self.name(), f))
    }

    fn err(&self, f: PgFailure) -> SegmentError {
        segment_error(self.name(), f)
    }

    /// One try of a claim.
    fn claim_once(&self, tag: &str, increment: Increment) -> Result<Claim, Attempt> {
        let custom = match increment {
            Increment::TableStep => None,
            Increment::Custom(n) => {
                check_claim(tag, &Bounds::UNBOUNDED, 0, n).map_err(Attempt::Failed)?;
                Some(n)
            }
        };
        let conn = self.conn().map_err(Attempt::Failed)?;
        let attempt = |f: PgFailure| self.attempt(conn.host, f);
        let bounds = self.bounds.of(tag);
        let params = vec![
            custom.into(),
            tag.into(),
            bounds.floor.into(),
            bounds.ceiling.into(),
        ];
        let rows = conn.query(CLAIM_SQL, params).map_err(attempt)?;
        if let Some(row) = rows.first() {
            let (new_max, table_step): (i64, i64) = (
                row.try_get(0)
                    .map_err(|e| Attempt::Failed(self.decode(e)))?,
                row.try_get(1)
                    .map_err(|e| Attempt::Failed(self.decode(e)))?,
            );
            let inc = custom.unwrap_or(table_step);
            let (start, end) =
                check_claim(tag, &bounds, new_max - inc, inc).map_err(Attempt::Failed)?;
            return Ok(Claim {
                start,
                end,
                table_step,
            });
        }
        // Nothing claimed: say why (no such tag, a row that cannot be claimed from), or try
        // again if the row changed in between.
        let rows = conn
            .query(
                "SELECT max_id, step::bigint FROM leaf_alloc WHERE biz_tag = $1::text",
                vec![tag.into()],
            )
            .map_err(attempt)?;
        let Some(row) = rows.first() else {
            return Err(Attempt::Failed(unknown_tag(tag, self.name())));
        };
        let (max_id, table_step): (i64, i64) = (
            row.try_get(0)
                .map_err(|e| Attempt::Failed(self.decode(e)))?,
            row.try_get(1)
                .map_err(|e| Attempt::Failed(self.decode(e)))?,
        );
        check_claim(tag, &bounds, max_id, custom.unwrap_or(table_step)).map_err(Attempt::Failed)?;
        Err(Attempt::Conflict("the row changed during the claim".into()))
    }

    /// How a statement's failure on host `host` ends one try of a claim or a tag command: a lost
    /// conflict (40001 serialization, 40P01 deadlock: nothing was written), a host that cannot
    /// serve (a standby, shutting down, gone), or the answer.
    fn attempt(&self, host: usize, f: PgFailure) -> Attempt {
        if f.is_conflict() {
            Attempt::Conflict(f.to_string())
        } else if f.host_cannot_serve() {
            Attempt::HostDown(self.err(f), host)
        } else {
            Attempt::Failed(self.err(f))
        }
    }

    /// A tag command tried as a claim is ([`with_retries`]), as on MySQL: `once` is one try of
    /// its statements on a connection to the host in use; a lost conflict runs it again after a
    /// jittered wait, a host that cannot serve hands it to the next host of the list. Only for
    /// commands that are safe to run twice (each try reads what it changes afresh).
    fn command<T>(
        &self,
        tag: &str,
        mut once: impl FnMut(&Lease<'_>) -> Result<T, Attempt>,
    ) -> Result<T, SegmentError> {
        with_retries(
            self.name(),
            tag,
            self.active.len(),
            || once(&self.conn().map_err(Attempt::Failed)?),
            |host, e| self.advance(host, e),
        )
    }

    /// Whether a table of that name is visible on the search path.
    fn table_exists(&self, table: &str) -> Result<bool, SegmentError> {
        let sql = "SELECT to_regclass($1::text) IS NOT NULL";
        let exists = self.first_value(&self.conn()?, sql, vec![table.into()], |f| self.err(f))?;
        Ok(exists.unwrap_or(false))
    }

    /// The first column of the first row `sql` answers on `conn`, if it answers one; a failed
    /// statement is `fail`'s error (a store error, or how it ends one try of a command).
    fn first_value<T, E: From<SegmentError>>(
        &self,
        conn: &Lease<'_>,
        sql: &str,
        params: Vec<Param>,
        fail: impl FnOnce(PgFailure) -> E,
    ) -> Result<Option<T>, E>
    where
        T: for<'r> tokio_postgres::types::FromSql<'r>,
    {
        let rows = conn.query(sql, params).map_err(fail)?;
        rows.first()
            .map(|r| r.try_get(0).map_err(|e| E::from(self.decode(e))))
            .transpose()
    }

    /// The add as one statement (one round trip, and no transaction block, which a statement
    /// pool refuses). A statement's snapshot is taken when it starts, so a tombstone read in it
    /// can be stale: another client may add the name, claim from it and remove it again (a
    /// newer tombstone) before this insert runs, and the row it inserted and deleted is no
    /// conflict by then. So the tombstone row is first locked and read by `INSERT .. ON CONFLICT
    /// DO UPDATE`, which acts on its latest committed version (not the snapshot's) and holds
    /// its lock until this statement commits; every removal writes that row before it commits,
    /// so none can slip in between the read and the insert. A name never removed gets the row
    /// too, with the sentinel [`NO_TOMBSTONE`] that no start is below. A removal that deleted
    /// the row but waits for the lock makes this insert wait for it: one of the two is aborted
    /// as a deadlock (40P01) and tried again. A database made before tombstones has none to
    /// read.
    fn add_once(
        &self,
        new: &NewTag<'_>,
        with_tombstones: bool,
    ) -> Result<Result<Option<Added>, PgFailure>, SegmentError> {
        let (mode, requested) = match new.start {
            StartAt::Default => ("default", 1),
            StartAt::Given(s) => ("given", s),
            StartAt::Reuse(s) => ("reuse", s),
        };
        let removed = if with_tombstones {
            "WITH l AS (INSERT INTO leaf_alloc_removed (biz_tag, max_id, removed_at) \
             VALUES ($1::text, $6::bigint, CURRENT_TIMESTAMP) \
             ON CONFLICT (biz_tag) DO UPDATE SET max_id = leaf_alloc_removed.max_id \
             RETURNING NULLIF(max_id, $6::bigint) AS max_id), \
             r AS (SELECT max_id FROM l)"
        } else {
            "WITH r AS (SELECT NULL::bigint AS max_id WHERE $6::bigint IS NOT NULL)"
        };
        let sql = format!(
            "{removed} \
             INSERT INTO leaf_alloc (biz_tag, max_id, step, description) \
             SELECT $1::text, \
               CASE WHEN $5::text = 'default' THEN GREATEST($2::bigint, COALESCE(r.max_id, 1)) \
                    ELSE $2::bigint END, \
               $3::bigint, $4::text \
             FROM r \
             WHERE NOT EXISTS (SELECT 1 FROM leaf_alloc WHERE biz_tag = $1::text) \
               AND NOT ($5::text = 'given' AND $2::bigint < COALESCE(r.max_id, $2::bigint)) \
             ON CONFLICT (biz_tag) DO NOTHING \
             RETURNING max_id, (SELECT max_id FROM r)"
        );
        let conn = self.conn()?;
        let rows = match conn.query(
            &sql,
            vec![
                new.tag.into(),
                requested.into(),
                new.step.into(),
                new.description.into(),
                mode.into(),
                NO_TOMBSTONE.into(),
            ],
        ) {
            Ok(rows) => rows,
            Err(f) => return Ok(Err(f)),
        };
        let Some(row) = rows.first() else {
            return Ok(Ok(None));
        };
        let first: i64 = row.try_get(0).map_err(|e| self.decode(e))?;
        let removed: Option<i64> = row.try_get(1).map_err(|e| self.decode(e))?;
        Ok(Ok(Some(Added::inserted(first, removed))))
    }

    /// The max_id a removed tag of this name left behind, if any. A name never removed may
    /// have a row with the sentinel [`NO_TOMBSTONE`] (see `add_once`), read as NULL: none.
    fn removed_max_id(&self, tag: &str) -> Result<Option<i64>, SegmentError> {
        let sql =
            "SELECT NULLIF(max_id, $2::bigint) FROM leaf_alloc_removed WHERE biz_tag = $1::text";
        let removed: Option<Option<i64>> = self.first_value(
            &self.conn()?,
            sql,
            vec![tag.into(), NO_TOMBSTONE.into()],
            |f| self.err(f),
        )?;
        Ok(removed.flatten())
    }

    fn decode(&self, e: tokio_postgres::Error) -> SegmentError {
        SegmentError::Database {
            db: self.name().to_string(),
            detail: format!("unexpected column type in leaf_alloc: {e}"),
        }
    }

    fn rows(&self, sql: &str, params: Vec<Param>) -> Result<Vec<LeafAlloc>, SegmentError> {
        self.rows_or_failure(sql, params)?.map_err(|f| self.err(f))
    }

    /// [`Self::rows`], with the statement's own failure kept apart (for a caller that retries
    /// some).
    fn rows_or_failure(
        &self,
        sql: &str,
        params: Vec<Param>,
    ) -> Result<Result<Vec<LeafAlloc>, PgFailure>, SegmentError> {
        let conn = self.conn()?;
        let rows = match conn.query(sql, params) {
            Ok(rows) => rows,
            Err(f) => return Ok(Err(f)),
        };
        rows.iter()
            .map(|r| {
                Ok(LeafAlloc {
                    tag: r.try_get(0).map_err(|e| self.decode(e))?,
                    max_id: r.try_get(1).map_err(|e| self.decode(e))?,
                    step: r.try_get(2).map_err(|e| self.decode(e))?,
                    description: r.try_get(3).map_err(|e| self.decode(e))?,
                    update_time_s: r
                        .try_get::<_, Option<i64>>(4)
                        .map_err(|e| self.decode(e))?
                        .unwrap_or(0),
                })
            })
            .collect::<Result<_, _>>()
            .map(Ok)
    }
}

impl From<PageParam> for Param {
    fn from(p: PageParam) -> Param {
        match p {
            PageParam::Text(t) => Param::Text(t),
            PageParam::Int(i) => Param::Int(i),
        }
    }
}

/// A page query's SQL and parameters for PostgreSQL: `$n` placeholders, typed parameters.
fn pg_page(
    select: &str,
    filter: Option<&str>,
    after: Option<&str>,
    limit: usize,
) -> (String, Vec<Param>) {
    let (sql, params) = page_query(select, after, filter, limit);
    let sql = numbered(&sql).replace("biz_tag > $1", "biz_tag > $1::text");
    (sql, params.into_iter().map(Param::from).collect())
}

/// What the `PostgresStore` does for each [`AllocStore`] operation: its statements, one method
/// each (the trait's methods dispatch here).
impl PostgresStore {
    fn read_rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError> {
        let like = page.filter.like_pattern();
        let (sql, params) = pg_page(ROW_SQL, like.as_deref(), page.after, page.limit);
        self.rows(&sql, params)
    }

    fn read_removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError> {
        // The sentinel rows `tag add` writes for names never removed are no tombstones.
        let select = format!(
            "SELECT biz_tag::text, max_id FROM {REMOVED_TABLE} WHERE max_id <> {NO_TOMBSTONE}"
        );
        let (sql, params) = pg_page(&select, None, after, limit);
        let sql = sql.replacen(" WHERE biz_tag >", " AND biz_tag >", 1);
        let conn = self.conn()?;
        let rows = match conn.query(&sql, params) {
            Ok(rows) => rows,
            // A database made before tombstones: none.
            Err(f) if f.code() == Some("42P01") => return Ok(Vec::new()),
            Err(f) => return Err(self.err(f)),
        };
        rows.iter()
            .map(|r| {
                Ok(Tombstone {
                    tag: r.try_get(0).map_err(|e| self.decode(e))?,
                    max_id: r.try_get(1).map_err(|e| self.decode(e))?,
                })
            })
            .collect()
    }

    fn read_tags_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, SegmentError> {
        let (sql, params) = pg_page("SELECT biz_tag::text FROM leaf_alloc", None, after, limit);
        let conn = self.conn()?;
        let rows = conn.query(&sql, params).map_err(|f| self.err(f))?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(|e| self.decode(e)))
            .collect()
    }

    fn update_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        // Setting the same step again changes nothing: safe to try again.
        let changed = self.command(tag, |conn| {
            conn.execute(
                "UPDATE leaf_alloc SET step = $1::bigint, update_time = CURRENT_TIMESTAMP \
                 WHERE biz_tag = $2::text",
                vec![step.into(), tag.into()],
            )
            .map_err(|f| self.attempt(conn.host, f))
        })?;
        if changed == 0 {
            return Err(unknown_tag(tag, self.name()));
        }
        Ok(())
    }

    fn update_hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError> {
        let conn = self.conn()?;
        let changed = conn
            .execute(
                "UPDATE leaf_alloc SET max_id = $1::bigint, update_time = CURRENT_TIMESTAMP \
                 WHERE biz_tag = $2::text AND max_id = $3::bigint",
                vec![to.into(), tag.into(), from.into()],
            )
            .map_err(|f| self.err(f))?;
        Ok(changed == 1)
    }

    fn read_region(&self) -> Result<Option<Region>, SegmentError> {
        if !self.table_exists(REGION_TABLE)? {
            return Ok(None);
        }
        let conn = self.conn()?;
        let rows = conn
            .query(
                "SELECT region::bigint, regions::bigint FROM leaf_region WHERE id = 1",
                vec![],
            )
            .map_err(|f| self.err(f))?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let region: i64 = row.try_get(0).map_err(|e| self.decode(e))?;
        let regions: i64 = row.try_get(1).map_err(|e| self.decode(e))?;
        crate::db::regions::region_of_row(self.name(), region, regions).map(Some)
    }

    fn write_region(&self, region: Region) -> Result<(), SegmentError> {
        let conn = self.conn()?;
        match conn.execute(POSTGRES_REGION_DDL, vec![]) {
            Ok(_) => {}
            // Two processes of a fresh region creating the table at once.
            Err(f) if f.lost_a_concurrent_create() => {}
            Err(f) => return Err(self.err(f)),
        }
        conn.execute(
            "INSERT INTO leaf_region (id, region, regions) VALUES (1, $1::integer, $2::integer) \
             ON CONFLICT (id) DO NOTHING",
            vec![
                i64::from(region.index()).into(),
                i64::from(region.count()).into(),
            ],
        )
        .map_err(|f| self.err(f))?;
        Ok(())
    }

    fn read_shape(&self, tag: &str) -> Result<Option<String>, SegmentError> {
        if !self.table_exists(SHAPE_TABLE)? {
            return Ok(None);
        }
        let sql = "SELECT shape::text FROM leaf_tag_shape WHERE biz_tag = $1::text";
        self.first_value(&self.conn()?, sql, vec![tag.into()], |f| self.err(f))
    }

    fn write_shape(&self, tag: &str, spec: &str) -> Result<(), SegmentError> {
        let conn = self.conn()?;
        match conn.execute(POSTGRES_SHAPE_DDL, vec![]) {
            Ok(_) => {}
            // Two processes adding shaped tags to a fresh database at once.
            Err(f) if f.lost_a_concurrent_create() => {}
            Err(f) => return Err(self.err(f)),
        }
        conn.execute(
            "INSERT INTO leaf_tag_shape (biz_tag, shape) VALUES ($1::text, $2::text) \
             ON CONFLICT (biz_tag) DO NOTHING",
            vec![tag.into(), spec.into()],
        )
        .map_err(|f| self.err(f))?;
        Ok(())
    }

    fn update_bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError> {
        // The whole read-and-compare-and-set is one try: it only moves the row forward, so a
        // try again after a lost answer finds the row at `to` and is done.
        self.command(tag, |conn| {
            let attempt = |f: PgFailure| self.attempt(conn.host, f);
            bump_with_retries(
                self.name(),
                tag,
                to,
                || {
                    let sql = "SELECT max_id FROM leaf_alloc WHERE biz_tag = $1::text";
                    self.first_value(conn, sql, vec![tag.into()], attempt)
                },
                // One autocommit statement that can only move the row forward.
                |max_id| {
                    let changed = conn
                        .execute(
                            "UPDATE leaf_alloc SET max_id = $1::bigint, \
                             update_time = CURRENT_TIMESTAMP \
                             WHERE biz_tag = $2::text AND max_id = $3::bigint",
                            vec![to.into(), tag.into(), max_id.into()],
                        )
                        .map_err(attempt)?;
                    Ok(changed == 1)
                },
            )
        })
    }
}

impl AllocStore for PostgresStore {
    fn describe(&self) -> String {
        self.target.name.clone()
    }

    fn init_schema(&self) -> Result<(), SegmentError> {
        let conn = self.conn()?;
        for ddl in POSTGRES_DDL {
            match conn.batch(ddl) {
                Ok(()) => {}
                // Two `db init` (or first starts) at once on a fresh database.
                Err(f) if f.lost_a_concurrent_create() => {}
                Err(f) => return Err(self.err(f)),
            }
        }
        Ok(())
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        with_retries(
            self.name(),
            tag,
            self.active.len(),
            || self.claim_once(tag, increment),
            |host, e| self.advance(host, e),
        )
    }

    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError> {
        let mut with_tombstones = true;
        let mut tries = 0;
        loop {
            tries += 1;
            let added = match self.add_once(new, with_tombstones)? {
                Ok(added) => added,
                // A database made before tombstones: no tag was removed with one.
                Err(f)
                    if with_tombstones
                        && f.code() == Some("42P01")
                        && names_removed_table(&f.detail) =>
                {
                    with_tombstones = false;
                    continue;
                }
                Err(f) if f.code() == Some("23505") => None,
                // A removal of the name holding the row this insert waits on (see add_once).
                Err(f) if f.is_conflict() && tries < CONFLICT_TRIES => continue,
                Err(f) => return Err(self.err(f)),
            };
            if let Some(added) = added {
                return Ok(added);
            }
            // Nothing inserted: the tag exists, or the start is below its tombstone. Say which.
            let removed = if with_tombstones {
                self.removed_max_id(new.tag)?
            } else {
                None
            };
            if let Some(row) = self.get(new.tag)? {
                return new.exists(self.name(), row.max_id, removed);
            }
            new.first_id(self.name(), removed)?;
            // A removal committed while the insert ran, and the row is gone again: the next try
            // sees both.
            if tries >= CONFLICT_TRIES {
                return Err(SegmentError::Conflict {
                    tag: new.tag.into(),
                    db: self.name().to_string(),
                    tries,
                    detail: "the tag was removed and added by others while it was added".into(),
                });
            }
        }
    }

    fn tags_fingerprint(&self) -> Result<Option<TagsFingerprint>, SegmentError> {
        let conn = self.conn()?;
        // The server reads the names and sends two numbers. bit_xor is PostgreSQL 14's; an
        // engine without it (or without hashtext) reads the list instead.
        match conn.query(
            "SELECT COUNT(*), COALESCE(BIT_XOR(hashtext(biz_tag)::bigint & 4294967295), 0) \
             FROM leaf_alloc",
            vec![],
        ) {
            Ok(rows) => {
                let Some(r) = rows.first() else {
                    return Ok(None);
                };
                let count: i64 = r.try_get(0).map_err(|e| self.decode(e))?;
                let checksum: i64 = r.try_get(1).map_err(|e| self.decode(e))?;
                Ok(Some(TagsFingerprint {
                    count: u64::try_from(count).unwrap_or(0),
                    checksum: checksum as u64,
                }))
            }
            Err(f) if f.code() == Some("42883") => Ok(None),
            Err(f) => Err(self.err(f)),
        }
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        Ok(self
            .rows(
                &format!("{ROW_SQL} WHERE biz_tag = $1::text"),
                vec![tag.into()],
            )?
            .into_iter()
            .next())
    }

    fn remove(&self, tag: &str) -> Result<Removed, SegmentError> {
        // One statement, so one transaction: the row it reports is the row it deleted, and the
        // tombstone (the highest max_id the name reached) commits with the deletion.
        let sql = ROW_SQL
            .replacen("FROM leaf_alloc", "", 1)
            .replacen("SELECT ", "", 1);
        let statement = format!(
            "WITH d AS (DELETE FROM leaf_alloc WHERE biz_tag = $1::text \
             RETURNING biz_tag, max_id, step, description, update_time), \
             t AS (INSERT INTO leaf_alloc_removed (biz_tag, max_id, removed_at) \
             SELECT biz_tag, max_id, CURRENT_TIMESTAMP FROM d \
             ON CONFLICT (biz_tag) DO UPDATE SET \
             max_id = GREATEST(leaf_alloc_removed.max_id, EXCLUDED.max_id), \
             removed_at = EXCLUDED.removed_at) \
             SELECT {sql} FROM d"
        );
        let mut created = false;
        let mut tries = 0;
        loop {
            tries += 1;
            let rows = match self.rows_or_failure(&statement, vec![tag.into()])? {
                // The deadlock victim of an add of the same name (see add_once): again.
                Err(f) if f.is_conflict() && tries < CONFLICT_TRIES => continue,
                rows => rows.map_err(|f| self.err(f)),
            };
            match rows {
                Ok(rows) => {
                    let row = rows
                        .into_iter()
                        .next()
                        .ok_or_else(|| unknown_tag(tag, self.name()))?;
                    // Read after the removal's commit: the highest the name reached.
                    let kept = self.removed_max_id(tag)?.unwrap_or(row.max_id);
                    return Ok(Removed {
                        tombstone: kept.max(row.max_id),
                        row,
                    });
                }
                // A database made before tombstones: create the table (once), then try again.
                Err(SegmentError::MissingTable { .. })
                    if !created && self.table_exists("leaf_alloc")? =>
                {
                    created = true;
                    let ddl = POSTGRES_DDL.last().copied().unwrap_or_default();
                    let conn = self.conn()?;
                    if let Err(f) = conn.batch(ddl) {
                        return Err(SegmentError::NoRemovedTable {
                            tag: tag.into(),
                            db: self.name().to_string(),
                            detail: format!("missing, and creating it failed: {f}"),
                        });
                    }
                }
                Err(SegmentError::AccessDenied { detail, .. }) if names_removed_table(&detail) => {
                    return Err(SegmentError::NoRemovedTable {
                        tag: tag.into(),
                        db: self.name().to_string(),
                        detail,
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }

    crate::segment::store::table_operations!();
}

crate::segment::store::bounds_in_field!(PostgresStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_queries_are_typed_for_postgres() {
        let (sql, params) = pg_page(
            "SELECT biz_tag::text FROM leaf_alloc",
            Some("a%"),
            Some("t"),
            10,
        );
        assert_eq!(
            sql,
            "SELECT biz_tag::text FROM leaf_alloc WHERE biz_tag > $1::text AND biz_tag LIKE $2 \
             ESCAPE '!' ORDER BY biz_tag LIMIT $3"
        );
        assert_eq!(
            params,
            vec![
                Param::Text("t".into()),
                Param::Text("a%".into()),
                Param::Int(10)
            ]
        );
    }
}
