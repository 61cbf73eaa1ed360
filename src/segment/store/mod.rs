//! The `leaf_alloc` table behind a trait, so the generator and the CLI work on any database
//! (`crate::db`).

use std::time::Duration;

use serde::Serialize;

use super::SegmentError;
use crate::region::Region;

mod bounds;
mod ext;
mod pages;
mod region;
mod retry;

pub use bounds::*;
pub use ext::AllocStoreExt;
pub use pages::*;
pub use region::*;
pub use retry::*;

/// The table that keeps the last max_id of every removed tag (its "tombstone"), so that
/// `tag add` of the name starts above every ID the tag issued. It is the last statement of each
/// DDL list; Leaf's servers never read it.
pub const REMOVED_TABLE: &str = "leaf_alloc_removed";

/// The table that records each shaped tag's shape ([`crate::segment::TagShape`]): `biz_tag` and
/// its spec text, written at `tag add` and kept through removals. Created when a shaped tag is
/// first added, so a deployment of plain tags never sees it; Leaf's servers never read it (and
/// must not serve a shaped tag: they would issue its dense IDs).
pub const SHAPE_TABLE: &str = "leaf_tag_shape";

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

/// Where a tag added with [`AllocStore::add_tag`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// At 1 for a new name; at the tombstone's max_id for a name that was removed, so that no
    /// ID the removed tag issued is issued again.
    Default,
    /// At this max_id; refused ([`SegmentError::BelowRemoved`]) when it is below the tombstone
    /// of a removed tag of the same name.
    Given(i64),
    /// At this max_id even below a tombstone: the operator's explicit override
    /// (`--reuse-removed-ids`), for IDs known to be unused.
    Reuse(i64),
}

/// What [`AllocStore::add_tag`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// Whether a row was inserted (`false`: it existed and `if_not_exists` was set).
    pub added: bool,
    /// The max_id the row was inserted with (meaningless when nothing was added).
    pub start: i64,
    /// The max_id a removed tag of the same name left behind, if any.
    pub removed_max_id: Option<i64>,
}

impl Added {
    /// A row inserted at `start`, above the tombstone's `removed` max_id if any.
    pub(crate) fn inserted(start: i64, removed: Option<i64>) -> Added {
        Added {
            added: true,
            start,
            removed_max_id: removed,
        }
    }
}

/// A tag to add ([`AllocStore::add_tag`]): the row and what an existing tag of the name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewTag<'a> {
    /// The business tag.
    pub tag: &'a str,
    /// Where its IDs start.
    pub start: StartAt,
    /// The step of its row.
    pub step: i64,
    /// The description of its row.
    pub description: Option<&'a str>,
    /// Whether an existing tag of the name is an answer (nothing added) rather than
    /// [`SegmentError::TagExists`].
    pub if_not_exists: bool,
}

impl<'a> NewTag<'a> {
    /// `tag` with step `step`, starting at [`StartAt::Default`], with no description; an
    /// existing tag of the name is an error.
    pub fn new(tag: &'a str, step: i64) -> NewTag<'a> {
        NewTag {
            tag,
            start: StartAt::Default,
            step,
            description: None,
            if_not_exists: false,
        }
    }

    /// The max_id the new row gets in `db`, given the tombstone's max_id; a
    /// [`StartAt::Given`] below the tombstone is refused ([`SegmentError::BelowRemoved`]).
    pub(crate) fn first_id(&self, db: &str, removed: Option<i64>) -> Result<i64, SegmentError> {
        match (self.start, removed) {
            (StartAt::Default, Some(r)) => Ok(r.max(1)),
            (StartAt::Default, None) => Ok(1),
            (StartAt::Given(s), Some(r)) if s < r => Err(SegmentError::BelowRemoved {
                tag: self.tag.into(),
                db: db.to_string(),
                start: s,
                removed_max_id: r,
            }),
            (StartAt::Given(s) | StartAt::Reuse(s), _) => Ok(s),
        }
    }

    /// The answer when the tag exists in `db` with max_id `max_id` (`removed`: its
    /// tombstone's): nothing added with `if_not_exists`, else [`SegmentError::TagExists`].
    pub(crate) fn exists(
        &self,
        db: &str,
        max_id: i64,
        removed: Option<i64>,
    ) -> Result<Added, SegmentError> {
        if self.if_not_exists {
            Ok(Added {
                added: false,
                start: max_id,
                removed_max_id: removed,
            })
        } else {
            Err(SegmentError::TagExists {
                tag: self.tag.into(),
                db: db.to_string(),
            })
        }
    }
}

/// Whether a database message is about the tombstone table (missing, say) rather than
/// `leaf_alloc`.
pub(crate) fn names_removed_table(detail: &str) -> bool {
    detail.contains(REMOVED_TABLE)
}

/// A removed tag's tombstone: its name and the max_id it reached, the first ID it never issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tombstone {
    /// The removed tag.
    pub tag: String,
    /// The highest max_id the name reached before a removal.
    pub max_id: i64,
}

/// What a removal did ([`AllocStore::remove`]): the row deleted, and the tombstone kept for
/// its name, the highest max_id the name ever reached (above the row's after a re-add with
/// `--reuse-removed-ids`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The row as it was deleted.
    pub row: LeafAlloc,
    /// The tombstone's max_id now.
    pub tombstone: i64,
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
pub trait AllocStore: Confined + Send + Sync {
    /// The database's URL with any password removed, for messages.
    fn describe(&self) -> String;
    /// Creates the tables when missing (idempotent).
    fn init_schema(&self) -> Result<(), SegmentError>;
    /// Claims a range for `tag`.
    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError>;
    /// Adds a tag where `start` says, reading the tombstone a removal of the same name left
    /// (see [`AllocStore::remove`]) in the same transaction as the insert, so a removal racing
    /// the insert is either seen or makes the insert fail as a duplicate. A database without
    /// the tombstone table has no tombstones.
    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError>;
    /// One row, if the tag exists.
    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError>;
    /// One page of a listing, in the database's order of `biz_tag` (see [`PageQuery`]), so a
    /// listing of a million tags holds one page in memory and no connection or transaction
    /// between pages ([`Pages`] reads them one after another).
    fn page(&self, query: &PageQuery<'_>) -> Result<Page, SegmentError>;
    /// How many tags there are and a checksum of their names, when the database computes both
    /// in one query without sending the names (`None` otherwise): a tag refresh that finds both
    /// unchanged skips reading the list.
    fn tags_fingerprint(&self) -> Result<Option<TagsFingerprint>, SegmentError> {
        Ok(None)
    }
    /// Changes one row in one statement (see [`RowUpdate`]: a step, a bump, a hand-back).
    fn update(&self, tag: &str, update: RowUpdate) -> Result<Updated, SegmentError>;
    /// Deletes a tag and returns its last row, leaving its max_id behind as a tombstone in
    /// `leaf_alloc_removed` (the highest, if the name was removed before), and the tombstone
    /// kept. The tombstone is committed no later than the deletion: there is never a removal
    /// without it. A missing tombstone table is created; when that fails, nothing is removed
    /// ([`SegmentError::NoRemovedTable`]).
    fn remove(&self, tag: &str) -> Result<Removed, SegmentError>;
    /// A fact recorded beside the table once and never changed: the database's region (the one
    /// row of [`REGION_TABLE`]) or a tag's shape (its row of [`SHAPE_TABLE`]). None when the
    /// table or its row is missing. With a value to record, it is recorded first (the table
    /// created) unless one is recorded already: the first writer wins, and what is returned is
    /// what the table holds then.
    fn mark(&self, mark: Mark<'_>) -> Result<Marked, SegmentError>;
}

/// One page of a listing to read ([`AllocStore::page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageQuery<'a> {
    /// Up to `limit` rows matching `filter` whose tags come after `after`: one page of
    /// [`RowPages`]. A [`TagFilter`] other than `All` may be applied loosely by the database (a
    /// `LIKE` that ignores case); [`RowPages`] applies it exactly.
    Rows(RowsPage<'a>),
    /// Up to `limit` tags after `after`: a page of [`TagPages`].
    Tags {
        /// The tag the page starts after (`None`: the first page).
        after: Option<&'a str>,
        /// The most tags on the page.
        limit: usize,
    },
    /// Up to `limit` tombstones of removed tags (`leaf_alloc_removed`) whose tags come after
    /// `after`: one page of [`RemovedPages`]. None when the table is missing (a database made
    /// before tombstones has none). Regions read them: a removed tag's IDs count as issued
    /// wherever regions are set up or checked.
    Removed {
        /// The tag the page starts after (`None`: the first page).
        after: Option<&'a str>,
        /// The most tombstones on the page.
        limit: usize,
    },
}

/// A page [`AllocStore::page`] read, of the kind its [`PageQuery`] asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// Rows of `leaf_alloc`.
    Rows(Vec<LeafAlloc>),
    /// Tag names.
    Tags(Vec<String>),
    /// Tombstones of removed tags.
    Removed(Vec<Tombstone>),
}

/// A change to one row ([`AllocStore::update`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowUpdate {
    /// Sets the tag's step.
    Step(i64),
    /// Moves the tag's max_id forward to this, never down: the repair after the table went
    /// backwards (equal to it changes nothing).
    BumpTo(i64),
    /// Gives the unused end of a claim back: moves `max_id` from `from` down to `to` in one
    /// compare-and-set, only if it is still `from` (nobody claimed after the claim that ended
    /// there). The caller guarantees no ID in `[to, from)` was ever handed out
    /// ([`crate::segment::SegmentGenerator::hand_back`]).
    HandBack {
        /// The max_id the claim left.
        from: i64,
        /// Where it goes back to.
        to: i64,
    },
}

/// What an [`AllocStore::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Updated {
    /// The step is set.
    Step,
    /// Bumped; the max_id it had.
    Bumped {
        /// The max_id before.
        was: i64,
    },
    /// Whether the hand-back moved `max_id`.
    HandedBack(bool),
}

/// What [`AllocStore::mark`] reads, or records unless recorded already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark<'a> {
    /// The database's region; with `Some`, recorded first. Read once when a store is opened
    /// ([`enter_region`]).
    Region(Option<Region>),
    /// A tag's shape ([`crate::segment::TagShape`], as its spec text); with `record`, recorded
    /// first. Removing a tag keeps it, so a name is never re-added with another shape.
    Shape {
        /// The tag.
        tag: &'a str,
        /// The spec to record.
        record: Option<&'a str>,
    },
}

/// What an [`AllocStore::mark`] holds after the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marked {
    /// The region recorded, if any.
    Region(Option<Region>),
    /// The tag's shape spec recorded, if any.
    Shape(Option<String>),
}

/// [`Confined`] for a store that keeps its [`Confinement`] in a field `bounds` (every store
/// does), written once rather than in each store.
macro_rules! bounds_in_field {
    ($store:ty) => {
        impl $crate::segment::Confined for $store {
            fn confine(&mut self, bounds: $crate::segment::Bounds) {
                self.bounds.set(bounds);
            }

            fn bounds(&self) -> $crate::segment::Bounds {
                self.bounds.bounds()
            }

            fn cap_tag(&self, tag: &str, ceiling: i64) {
                self.bounds.cap(tag, ceiling);
            }

            fn bounds_of(&self, tag: &str) -> $crate::segment::Bounds {
                self.bounds.of(tag)
            }
        }
    };
}
pub(crate) use bounds_in_field;

/// [`AllocStore::page`], [`AllocStore::update`] and [`AllocStore::mark`] for a store whose
/// statements are inherent methods of these names (every store here): each variant of the query
/// or change goes to its statement. Written once rather than in each store.
macro_rules! table_operations {
    () => {
        fn page(
            &self,
            query: &$crate::segment::PageQuery<'_>,
        ) -> Result<$crate::segment::Page, $crate::segment::SegmentError> {
            use $crate::segment::{Page, PageQuery};
            Ok(match query {
                PageQuery::Rows(page) => Page::Rows(self.read_rows_page(page)?),
                PageQuery::Tags { after, limit } => {
                    Page::Tags(self.read_tags_page(*after, *limit)?)
                }
                PageQuery::Removed { after, limit } => {
                    Page::Removed(self.read_removed_page(*after, *limit)?)
                }
            })
        }

        fn update(
            &self,
            tag: &str,
            update: $crate::segment::RowUpdate,
        ) -> Result<$crate::segment::Updated, $crate::segment::SegmentError> {
            use $crate::segment::{RowUpdate, Updated};
            Ok(match update {
                RowUpdate::Step(step) => {
                    self.update_step(tag, step)?;
                    Updated::Step
                }
                RowUpdate::BumpTo(to) => Updated::Bumped {
                    was: self.update_bump(tag, to)?,
                },
                RowUpdate::HandBack { from, to } => {
                    Updated::HandedBack(self.update_hand_back(tag, from, to)?)
                }
            })
        }

        fn mark(
            &self,
            mark: $crate::segment::Mark<'_>,
        ) -> Result<$crate::segment::Marked, $crate::segment::SegmentError> {
            use $crate::segment::{Mark, Marked};
            Ok(match mark {
                Mark::Region(record) => {
                    if let Some(region) = record {
                        self.write_region(region)?;
                    }
                    Marked::Region(self.read_region()?)
                }
                Mark::Shape { tag, record } => {
                    if let Some(spec) = record {
                        self.write_shape(tag, spec)?;
                    }
                    Marked::Shape(self.read_shape(tag)?)
                }
            })
        }
    };
}
pub(crate) use table_operations;

/// [`SegmentError::UnknownTag`] for `tag` in `db`.
pub(crate) fn unknown_tag(tag: &str, db: &str) -> SegmentError {
    SegmentError::UnknownTag {
        tag: tag.into(),
        db: db.to_string(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_as_documented() {
        let prefix = TagFilter::Prefix("ten_".into());
        assert!(prefix.matches("ten_1") && !prefix.matches("tenx1") && !prefix.matches("Ten_1"));
        assert_eq!(prefix.like_pattern().as_deref(), Some("ten!_%"));
        let glob = TagFilter::Glob("order-*-20?6".into());
        assert!(glob.matches("order-eu-2026") && glob.matches("order--2016"));
        assert!(!glob.matches("order-eu-2026x") && !glob.matches("xorder-eu-2026"));
        assert_eq!(glob.like_pattern().as_deref(), Some("order-%-20_6"));
        let quoted = TagFilter::Glob(r"50\%*\*".into());
        assert!(quoted.matches("50%off*") && !quoted.matches("50%off"));
        assert_eq!(quoted.like_pattern().as_deref(), Some("50!%%*"));
        assert!(TagFilter::Glob("*".into()).matches(""));
        assert!(TagFilter::Glob("a*b*c".into()).matches("aXbYbZc"));
        assert!(!TagFilter::Glob("a*b*c".into()).matches("aXbYbZ"));
        assert!(TagFilter::Glob("é?".into()).matches("éé"));
        assert_eq!(
            TagFilter::Prefix("a!b".into()).like_pattern().as_deref(),
            Some("a!!b%")
        );
        assert_eq!(TagFilter::All.like_pattern(), None);
    }

    #[test]
    fn claims_are_checked_before_the_update() {
        assert_eq!(
            check_claim("t", &Bounds::UNBOUNDED, 1, 2000).unwrap(),
            (1, 2001)
        );
        assert_eq!(
            check_claim("t", &Bounds::UNBOUNDED, i64::MAX - 10, 10).unwrap(),
            (i64::MAX as u64 - 10, i64::MAX as u64)
        );
        assert!(matches!(
            check_claim("t", &Bounds::UNBOUNDED, i64::MAX - 10, 11),
            Err(SegmentError::Exhausted { .. })
        ));
        assert!(matches!(
            check_claim("t", &Bounds::UNBOUNDED, -1, 1),
            Err(SegmentError::BadRow { .. })
        ));
        assert!(matches!(
            check_claim("t", &Bounds::UNBOUNDED, 1, 0),
            Err(SegmentError::BadRow { .. })
        ));
    }

    /// With a region, claims start inside its block and never end past it; the arithmetic is
    /// the same as without one, with the block's end for 2^63-1.
    #[test]
    fn claims_stay_inside_the_region_block() {
        let region = Region::new(1, 2).unwrap();
        let b = Bounds::of(Some(region));
        let (start, end) = (1i64 << 52, 1i64 << 53);
        assert_eq!((b.floor, b.ceiling), (start, end));
        assert_eq!(
            check_claim("t", &b, start, 10).unwrap(),
            (start as u64, start as u64 + 10)
        );
        assert_eq!(
            check_claim("t", &b, end - 10, 10).unwrap(),
            ((end - 10) as u64, end as u64)
        );
        match check_claim("t", &b, end - 10, 11) {
            Err(SegmentError::Exhausted {
                max_id, ceiling, ..
            }) => assert_eq!((max_id, ceiling), (end - 10, end)),
            other => panic!("{other:?}"),
        }
        for outside in [0, 5000, start - 1, end + 1, i64::MAX - 1] {
            match check_claim("t", &b, outside, 1) {
                Err(e @ SegmentError::OutsideBlock { .. }) => {
                    assert!(e.to_string().contains("region 1 of 2"), "{e}")
                }
                other => panic!("{outside}: {other:?}"),
            }
        }
        assert_eq!(b.ids_left(end - 3), 3);
        assert_eq!(b.ids_left(5), 0);
        assert_eq!(Bounds::of(None), Bounds::UNBOUNDED);
        assert_eq!(Bounds::UNBOUNDED.ids_left(i64::MAX - 4), 4);
    }
}
