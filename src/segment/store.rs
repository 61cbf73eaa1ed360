//! The `leaf_alloc` table behind a trait, so the generator and the CLI work on MySQL and SQLite.

use serde::Serialize;

use super::SegmentError;

/// Leaf's table exactly as its `scripts/leaf_alloc.sql` creates it (plus `IF NOT EXISTS`), so a
/// table made by Leaf and one made by `leafctl db init` are the same.
///
/// `leafctl db init` runs every statement of the list in order; further tables go at the end.
pub const MYSQL_DDL: &[&str] = &["CREATE TABLE IF NOT EXISTS `leaf_alloc` (
  `biz_tag` varchar(128) NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256) DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB"];

/// The same table in SQLite's types; `update_time` is UTC text, set by every write.
pub const SQLITE_DDL: &[&str] = &["CREATE TABLE IF NOT EXISTS leaf_alloc (
  biz_tag TEXT NOT NULL PRIMARY KEY DEFAULT '',
  max_id INTEGER NOT NULL DEFAULT 1,
  step INTEGER NOT NULL,
  description TEXT DEFAULT NULL,
  update_time TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)"];

/// The DDL statements for the database a URL names (`mysql://` or `sqlite://`).
pub fn ddl_for_url(url: &str) -> &'static [&'static str] {
    if url.starts_with("sqlite://") {
        SQLITE_DDL
    } else {
        MYSQL_DDL
    }
}

/// One row of `leaf_alloc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeafAlloc {
    /// `biz_tag`: the business tag IDs are issued for.
    pub tag: String,
    /// `max_id`: the next unclaimed ID (every ID below it has been claimed).
    pub max_id: i64,
    /// `step`: the size of a segment claimed with the table's step.
    pub step: i64,
    /// `description`.
    pub description: Option<String>,
    /// `update_time` as Unix seconds.
    pub update_time_s: i64,
}

/// How many IDs a claim takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increment {
    /// The row's `step` (Leaf's `updateMaxIdAndGetLeafAlloc`).
    TableStep,
    /// A given number (Leaf's `updateMaxIdByCustomStepAndGetLeafAlloc`), at least 1.
    Custom(i64),
}

/// A claimed range `[start, end)`: these IDs belong to the claimant alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// The first ID of the range.
    pub start: u64,
    /// One past the last ID (the row's new `max_id`).
    pub end: u64,
    /// The row's `step` column at the time of the claim.
    pub table_step: i64,
}

impl Claim {
    /// How many IDs the claim holds.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Whether the claim is empty (never, for claims a store returns).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// The allocation table: claims and the admin operations of `leafctl tag` and `leafctl db`.
///
/// Every implementation claims atomically (MySQL: one autocommit `UPDATE ... SET max_id =
/// LAST_INSERT_ID(max_id + ?)`, whose success is its commit; SQLite: an immediate transaction),
/// reports a claim only once it has committed, refuses a claim that would overflow before
/// changing anything, and passes every value as a bound parameter.
pub trait AllocStore: Send + Sync {
    /// The database's URL with any password removed, for messages.
    fn describe(&self) -> String;
    /// Creates the tables when missing (idempotent).
    fn init_schema(&self) -> Result<(), SegmentError>;
    /// Claims a range for `tag`.
    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError>;
    /// Adds a tag; `Ok(false)` when it existed and `if_not_exists` was set.
    fn add(
        &self,
        tag: &str,
        start: i64,
        step: i64,
        description: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool, SegmentError>;
    /// Every row, ordered by tag.
    fn list(&self) -> Result<Vec<LeafAlloc>, SegmentError>;
    /// One row, if the tag exists.
    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError>;
    /// Every tag, ordered.
    fn tags(&self) -> Result<Vec<String>, SegmentError>;
    /// Changes a tag's step.
    fn set_step(&self, tag: &str, step: i64) -> Result<(), SegmentError>;
    /// Deletes a tag and returns its last row.
    fn remove(&self, tag: &str) -> Result<LeafAlloc, SegmentError>;
    /// Moves a tag's max_id forward to `to` in one statement, never down: the repair after
    /// the table went backwards. Returns the max_id it had; `to` equal to it changes nothing.
    fn bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError>;
}

/// Checks a bump before it is made: `to` is at or above the tag's max_id.
pub(crate) fn check_bump(tag: &str, max_id: i64, to: i64) -> Result<(), SegmentError> {
    if to < max_id {
        return Err(SegmentError::BumpDown {
            tag: tag.into(),
            max_id,
            to,
        });
    }
    Ok(())
}

/// Checks a claim's arithmetic before anything changes: the increment is positive and the new
/// max_id fits in a signed 64-bit value, and the range does not start below zero.
pub(crate) fn check_claim(
    tag: &str,
    max_id: i64,
    increment: i64,
) -> Result<(u64, u64), SegmentError> {
    if increment < 1 {
        return Err(SegmentError::BadRow {
            tag: tag.into(),
            reason: format!("step {increment} is not positive"),
        });
    }
    if max_id < 0 {
        return Err(SegmentError::BadRow {
            tag: tag.into(),
            reason: format!("max_id {max_id} is negative"),
        });
    }
    match max_id.checked_add(increment) {
        Some(end) => Ok((max_id as u64, end as u64)),
        None => Err(SegmentError::Exhausted {
            tag: tag.into(),
            max_id,
            increment,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_checked_before_the_update() {
        assert_eq!(check_claim("t", 1, 2000).unwrap(), (1, 2001));
        assert_eq!(
            check_claim("t", i64::MAX - 10, 10).unwrap(),
            (i64::MAX as u64 - 10, i64::MAX as u64)
        );
        assert!(matches!(
            check_claim("t", i64::MAX - 10, 11),
            Err(SegmentError::Exhausted { .. })
        ));
        assert!(matches!(
            check_claim("t", -1, 1),
            Err(SegmentError::BadRow { .. })
        ));
        assert!(matches!(
            check_claim("t", 1, 0),
            Err(SegmentError::BadRow { .. })
        ));
    }
}
