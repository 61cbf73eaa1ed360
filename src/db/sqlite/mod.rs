//! The allocation table in an SQLite file: leafctl's embedded default, safe for many processes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::db::OpenMode;
use crate::db::{PageParam, page_query};
use crate::region::Region;
use crate::segment::Removed;
use crate::segment::store::{check_bump, check_claim, names_removed_table, unknown_tag};
use crate::segment::{
    Added, AllocStore, Claim, Increment, LeafAlloc, NewTag, REMOVED_TABLE, RowsPage, SegmentError,
    Tombstone,
};

/// The same table in SQLite's types; `update_time` is UTC text, set by every write.
pub const SQLITE_DDL: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS leaf_alloc (
  biz_tag TEXT NOT NULL PRIMARY KEY DEFAULT '',
  max_id INTEGER NOT NULL DEFAULT 1,
  step INTEGER NOT NULL,
  description TEXT DEFAULT NULL,
  update_time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)",
    "CREATE TABLE IF NOT EXISTS leaf_alloc_removed (
  biz_tag TEXT NOT NULL PRIMARY KEY,
  max_id INTEGER NOT NULL,
  removed_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)",
];

/// The region mark ([`crate::segment::REGION_TABLE`]), created when a region is first used.
pub const SQLITE_REGION_DDL: &str = "CREATE TABLE IF NOT EXISTS leaf_region (
  id INTEGER NOT NULL PRIMARY KEY,
  region INTEGER NOT NULL,
  regions INTEGER NOT NULL
)";

/// The shapes of shaped tags ([`crate::segment::SHAPE_TABLE`]), created when one is first added.
pub const SQLITE_SHAPE_DDL: &str = "CREATE TABLE IF NOT EXISTS leaf_tag_shape (
  biz_tag TEXT NOT NULL PRIMARY KEY,
  shape TEXT NOT NULL,
  added_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)";

/// How long a writer waits for another process's transaction before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

const ROW_SQL: &str = "SELECT biz_tag, max_id, step, description, \
     CAST(strftime('%s', update_time) AS INTEGER) FROM leaf_alloc";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LeafAlloc> {
    Ok(LeafAlloc {
        tag: r.get(0)?,
        max_id: r.get(1)?,
        step: r.get(2)?,
        description: r.get(3)?,
        update_time_s: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
    })
}

/// `leaf_alloc` in an SQLite file. Claims run under `BEGIN IMMEDIATE`, which takes the file's
/// write lock first, so concurrent processes queue (up to `BUSY_TIMEOUT`) instead of
/// overlapping.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    name: String,
    /// The file, for messages about its permissions.
    path: PathBuf,
    /// Where claims stay ([`Confined::confine`](crate::segment::Confined::confine)).
    bounds: crate::segment::store::Confinement,
}

/// A failure to read or write the file itself (permissions, a read-only file system), told
/// apart from other SQLite errors so the hint can name the file.
fn file_access(name: &str, path: &Path, e: &rusqlite::Error) -> Option<SegmentError> {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::PermissionDenied
            ) =>
        {
            Some(SegmentError::FileAccess {
                db: name.to_string(),
                path: path.to_path_buf(),
                detail: e.to_string(),
            })
        }
        _ => None,
    }
}

/// Opens the segment store a `sqlite://PATH` URL names ([`super::DbAddress::open_store`]).
pub(crate) fn open_store(
    url: &str,
    _password: Option<&str>,
    mode: OpenMode,
) -> Result<Box<dyn AllocStore>, SegmentError> {
    let path = url.strip_prefix("sqlite://").unwrap_or(url);
    Ok(Box::new(SqliteStore::open(path, mode)?))
}

/// The max_id of `tag`'s row, if it has one.
fn max_id_of(conn: &Connection, tag: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT max_id FROM leaf_alloc WHERE biz_tag = ?1",
        params![tag],
        |r| r.get(0),
    )
    .optional()
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::db::debug_store(f, "SqliteStore", &self.name)
    }
}

impl SqliteStore {
    /// Opens the file at `path`. With [`OpenMode::CreateSchema`] the file, its directory and the
    /// table are created when missing; with [`OpenMode::Existing`] a missing file is a
    /// [`SegmentError::MissingTable`].
    pub fn open(path: impl AsRef<Path>, mode: OpenMode) -> Result<SqliteStore, SegmentError> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let name = format!("sqlite://{}", path.display());
        let db_err = |detail: String| SegmentError::Database {
            db: name.clone(),
            detail,
        };
        if path.as_os_str().is_empty() {
            return Err(SegmentError::InvalidUrl {
                url: name.clone(),
                reason: "no path: write sqlite:///absolute/path.db or sqlite://relative.db".into(),
            });
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match mode {
            OpenMode::Existing => {
                if !path.exists() {
                    return Err(SegmentError::MissingTable { db: name });
                }
            }
            OpenMode::CreateSchema => {
                flags |= OpenFlags::SQLITE_OPEN_CREATE;
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| db_err(format!("cannot create {}: {e}", dir.display())))?;
                }
            }
        }
        let conn = Connection::open_with_flags(&path, flags)
            .map_err(|e| file_access(&name, &path, &e).unwrap_or_else(|| db_err(e.to_string())))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_err(e.to_string()))?;
        let store = SqliteStore {
            conn: Mutex::new(conn),
            name,
            path,
            bounds: Default::default(),
        };
        if mode == OpenMode::CreateSchema {
            store.init_schema()?;
        }
        Ok(store)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn err(&self, e: rusqlite::Error) -> SegmentError {
        if let Some(access) = file_access(&self.name, &self.path, &e) {
            return access;
        }
        let detail = e.to_string();
        if detail.contains("no such table") {
            SegmentError::MissingTable {
                db: self.name.clone(),
            }
        } else {
            SegmentError::Database {
                db: self.name.clone(),
                detail,
            }
        }
    }
}

/// What the `SqliteStore` does for each [`AllocStore`] operation: its statements, one method
/// each (the trait's methods dispatch here).
impl SqliteStore {
    fn read_rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError> {
        let conn = self.lock();
        let like = page.filter.like_pattern();
        let (sql, params) = page_query(ROW_SQL, page.after, like.as_deref(), page.limit);
        let mut stmt = conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(rows)
    }

    fn read_removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError> {
        let conn = self.lock();
        let select = format!("SELECT biz_tag, max_id FROM {REMOVED_TABLE}");
        let (sql, params) = page_query(&select, after, None, limit);
        let mut stmt = match conn.prepare(&sql) {
            Ok(stmt) => stmt,
            // A file made before tombstones: none.
            Err(e) if e.to_string().contains("no such table") => return Ok(Vec::new()),
            Err(e) => return Err(self.err(e)),
        };
        let tombstones = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                Ok(Tombstone {
                    tag: r.get(0)?,
                    max_id: r.get(1)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(tombstones)
    }

    fn read_tags_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, SegmentError> {
        let conn = self.lock();
        let (sql, params) = page_query("SELECT biz_tag FROM leaf_alloc", after, None, limit);
        let mut stmt = conn.prepare(&sql).map_err(|e| self.err(e))?;
        let tags = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(tags)
    }

    fn update_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        let conn = self.lock();
        let n = conn
            .execute(
                "UPDATE leaf_alloc SET step = ?1, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?2",
                params![step, tag],
            )
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(unknown_tag(tag, &self.name));
        }
        Ok(())
    }

    fn update_hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError> {
        let conn = self.lock();
        let n = conn
            .execute(
                "UPDATE leaf_alloc SET max_id = ?1, update_time = CURRENT_TIMESTAMP \
                 WHERE biz_tag = ?2 AND max_id = ?3",
                params![to, tag, from],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    fn read_region(&self) -> Result<Option<Region>, SegmentError> {
        let conn = self.lock();
        let exists: Option<String> = conn
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'leaf_region'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if exists.is_none() {
            return Ok(None);
        }
        let row: Option<(i64, i64)> = conn
            .query_row(
                "SELECT region, regions FROM leaf_region WHERE id = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        row.map(|(r, n)| crate::db::regions::region_of_row(&self.name, r, n))
            .transpose()
    }

    fn write_region(&self, region: Region) -> Result<(), SegmentError> {
        let conn = self.lock();
        conn.execute_batch(SQLITE_REGION_DDL)
            .map_err(|e| self.err(e))?;
        conn.execute(
            "INSERT OR IGNORE INTO leaf_region (id, region, regions) VALUES (1, ?1, ?2)",
            params![region.index(), region.count()],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn read_shape(&self, tag: &str) -> Result<Option<String>, SegmentError> {
        let conn = self.lock();
        let exists: Option<String> = conn
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'leaf_tag_shape'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if exists.is_none() {
            return Ok(None);
        }
        conn.query_row(
            "SELECT shape FROM leaf_tag_shape WHERE biz_tag = ?1",
            params![tag],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| self.err(e))
    }

    fn write_shape(&self, tag: &str, spec: &str) -> Result<(), SegmentError> {
        let conn = self.lock();
        conn.execute_batch(SQLITE_SHAPE_DDL)
            .map_err(|e| self.err(e))?;
        conn.execute(
            "INSERT OR IGNORE INTO leaf_tag_shape (biz_tag, shape) VALUES (?1, ?2)",
            params![tag, spec],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn update_bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let max_id = max_id_of(&tx, tag).map_err(|e| self.err(e))?;
        let Some(max_id) = max_id else {
            return Err(unknown_tag(tag, &self.name));
        };
        check_bump(tag, max_id, to)?;
        if max_id < to {
            tx.execute(
                "UPDATE leaf_alloc SET max_id = ?1, update_time = CURRENT_TIMESTAMP \
                 WHERE biz_tag = ?2",
                params![to, tag],
            )
            .map_err(|e| self.err(e))?;
            tx.commit().map_err(|e| self.err(e))?;
        }
        Ok(max_id)
    }
}

impl AllocStore for SqliteStore {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn init_schema(&self) -> Result<(), SegmentError> {
        let conn = self.lock();
        for ddl in SQLITE_DDL {
            conn.execute_batch(ddl).map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let current: Option<(i64, i64)> = tx
            .query_row(
                "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ?1",
                params![tag],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((max_id, step)) = current else {
            return Err(unknown_tag(tag, &self.name));
        };
        let inc = match increment {
            Increment::TableStep => step,
            Increment::Custom(n) => n,
        };
        check_claim(tag, &self.bounds.of(tag), max_id, inc)?;
        tx.execute(
            "UPDATE leaf_alloc SET max_id = max_id + ?1, update_time = CURRENT_TIMESTAMP \
             WHERE biz_tag = ?2",
            params![inc, tag],
        )
        .map_err(|e| self.err(e))?;
        let (new_max, table_step): (i64, i64) = tx
            .query_row(
                "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?1",
                params![tag],
                |r| Ok((r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.err(e))?;
        let (start, end) = check_claim(tag, &self.bounds.of(tag), new_max - inc, inc)?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Claim {
            start,
            end,
            table_step,
        })
    }

    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError> {
        let mut conn = self.lock();
        // Immediate: the tombstone read and the insert see no removal in between.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let removed: Option<i64> = match tx
            .query_row(
                "SELECT max_id FROM leaf_alloc_removed WHERE biz_tag = ?1",
                params![new.tag],
                |r| r.get(0),
            )
            .optional()
        {
            Ok(r) => r,
            // A file made before tombstones: no tag was removed with one.
            Err(e) if names_removed_table(&e.to_string()) => None,
            Err(e) => return Err(self.err(e)),
        };
        let exists = max_id_of(&tx, new.tag).map_err(|e| self.err(e))?;
        if let Some(max_id) = exists {
            return new.exists(&self.name, max_id, removed);
        }
        let first = new.first_id(&self.name, removed)?;
        match tx.execute(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES (?1, ?2, ?3, ?4)",
            params![new.tag, first, new.step, new.description],
        ) {
            Ok(_) => {}
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                return new.exists(&self.name, first, removed);
            }
            Err(e) => return Err(self.err(e)),
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Added::inserted(first, removed))
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        let conn = self.lock();
        conn.query_row(&format!("{ROW_SQL} WHERE biz_tag = ?1"), params![tag], row)
            .optional()
            .map_err(|e| self.err(e))
    }

    fn remove(&self, tag: &str) -> Result<Removed, SegmentError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let r = tx
            .query_row(&format!("{ROW_SQL} WHERE biz_tag = ?1"), params![tag], row)
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(r) = r else {
            return Err(unknown_tag(tag, &self.name));
        };
        // A file made before tombstones gets the table here, in the same transaction.
        let refuse = |e: rusqlite::Error| match self.err(e) {
            access @ SegmentError::FileAccess { .. } => access,
            e => SegmentError::NoRemovedTable {
                tag: tag.into(),
                db: self.name.clone(),
                detail: e.to_string(),
            },
        };
        if let Some(ddl) = SQLITE_DDL.last() {
            tx.execute_batch(ddl).map_err(refuse)?;
        }
        tx.execute(
            "INSERT INTO leaf_alloc_removed (biz_tag, max_id, removed_at) \
             VALUES (?1, ?2, CURRENT_TIMESTAMP) ON CONFLICT (biz_tag) DO UPDATE SET \
             max_id = MAX(max_id, excluded.max_id), removed_at = excluded.removed_at",
            params![tag, r.max_id],
        )
        .map_err(refuse)?;
        let tombstone: i64 = tx
            .query_row(
                "SELECT max_id FROM leaf_alloc_removed WHERE biz_tag = ?1",
                params![tag],
                |c| c.get(0),
            )
            .map_err(|e| self.err(e))?;
        tx.execute("DELETE FROM leaf_alloc WHERE biz_tag = ?1", params![tag])
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Removed { row: r, tombstone })
    }

    crate::segment::store::table_operations!();
}

crate::segment::store::bounds_in_field!(SqliteStore);

impl rusqlite::ToSql for PageParam {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            PageParam::Text(t) => t.to_sql(),
            PageParam::Int(i) => i.to_sql(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::AllocStoreExt;

    #[test]
    fn claims_follow_leafs_arithmetic() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(dir.path().join("a/leaf.db"), OpenMode::CreateSchema).unwrap();
        assert!(s.add("t", 1, 2000, Some("d"), false).unwrap());
        assert!(!s.add("t", 1, 2000, None, true).unwrap());
        assert!(matches!(
            s.add("t", 1, 2000, None, false),
            Err(SegmentError::TagExists { .. })
        ));
        let c = s.claim("t", Increment::TableStep).unwrap();
        assert_eq!((c.start, c.end, c.table_step), (1, 2001, 2000));
        let c = s.claim("t", Increment::Custom(5)).unwrap();
        assert_eq!((c.start, c.end), (2001, 2006));
        assert_eq!(s.get("t").unwrap().unwrap().max_id, 2006);
        assert!(matches!(
            s.claim("nope", Increment::TableStep),
            Err(SegmentError::UnknownTag { .. })
        ));
    }

    #[test]
    fn an_overflowing_claim_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open(dir.path().join("leaf.db"), OpenMode::CreateSchema).unwrap();
        s.add("t", i64::MAX - 3, 10, None, false).unwrap();
        assert!(matches!(
            s.claim("t", Increment::TableStep),
            Err(SegmentError::Exhausted { .. })
        ));
        assert_eq!(s.get("t").unwrap().unwrap().max_id, i64::MAX - 3);
        let c = s.claim("t", Increment::Custom(3)).unwrap();
        assert_eq!(c.end, i64::MAX as u64);
    }

    #[test]
    fn a_missing_file_or_table_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            SqliteStore::open(dir.path().join("none.db"), OpenMode::Existing),
            Err(SegmentError::MissingTable { .. })
        ));
        let p = dir.path().join("empty.db");
        Connection::open(&p).unwrap();
        let s = SqliteStore::open(&p, OpenMode::Existing).unwrap();
        assert!(matches!(s.list(), Err(SegmentError::MissingTable { .. })));
    }
}
