//! What callers do with any [`AllocStore`], built on its few operations: adding a tag at a
//! given start, reading whole listings or one page of a kind, changing a row, the region mark.
//! A backend implements [`AllocStore`] only; this comes with it.

use super::*;

/// The operations callers use on any store, each one of [`AllocStore`]'s few.
pub trait AllocStoreExt: AllocStore {
    /// Adds a tag starting at `start`; `Ok(false)` when it existed and `if_not_exists` was set.
    /// A start below the tombstone of a removed tag of that name is refused
    /// ([`SegmentError::BelowRemoved`]); see [`AllocStore::add_tag`].
    fn add(
        &self,
        tag: &str,
        start: i64,
        step: i64,
        description: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool, SegmentError> {
        let new = NewTag {
            tag,
            start: StartAt::Given(start),
            step,
            description,
            if_not_exists,
        };
        self.add_tag(&new).map(|a| a.added)
    }

    /// Every row, ordered by tag, in memory at once: for small tables and tests. Listings that
    /// may be long page through [`RowPages`].
    fn list(&self) -> Result<Vec<LeafAlloc>, SegmentError> {
        let mut rows = Vec::new();
        for page in RowPages::new(self, TagFilter::All) {
            rows.extend(page?);
        }
        Ok(rows)
    }

    /// Every tag, ordered, in memory at once: for small tables and tests (see [`TagPages`]).
    fn tags(&self) -> Result<Vec<String>, SegmentError> {
        let mut tags = Vec::new();
        for page in TagPages::new(self) {
            tags.extend(page?);
        }
        Ok(tags)
    }

    /// One page of rows ([`PageQuery::Rows`]).
    fn rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError> {
        match self.page(&PageQuery::Rows(*page))? {
            Page::Rows(rows) => Ok(rows),
            other => Err(wrong_page("rows", &other)),
        }
    }

    /// One page of tags ([`PageQuery::Tags`]).
    fn tags_page(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, SegmentError> {
        match self.page(&PageQuery::Tags { after, limit })? {
            Page::Tags(tags) => Ok(tags),
            other => Err(wrong_page("tags", &other)),
        }
    }

    /// One page of tombstones ([`PageQuery::Removed`]).
    fn removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError> {
        match self.page(&PageQuery::Removed { after, limit })? {
            Page::Removed(removed) => Ok(removed),
            other => Err(wrong_page("tombstones", &other)),
        }
    }

    /// Changes a tag's step ([`RowUpdate::Step`]).
    fn set_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        self.update(tag, RowUpdate::Step(step)).map(|_| ())
    }

    /// Moves a tag's max_id forward to `to` ([`RowUpdate::BumpTo`]); the max_id it had.
    fn bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError> {
        match self.update(tag, RowUpdate::BumpTo(to))? {
            Updated::Bumped { was } => Ok(was),
            other => Err(wrong_update("a bump", other)),
        }
    }

    /// Gives the unused end of a claim back ([`RowUpdate::HandBack`]); true when it moved.
    fn hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError> {
        match self.update(tag, RowUpdate::HandBack { from, to })? {
            Updated::HandedBack(moved) => Ok(moved),
            other => Err(wrong_update("a hand-back", other)),
        }
    }

    /// The shape spec recorded for `tag`, if any ([`Mark::Shape`]); with `record`, recorded
    /// first unless one is recorded already (what is returned is then what the table holds).
    fn shape_mark(&self, tag: &str, record: Option<&str>) -> Result<Option<String>, SegmentError> {
        match self.mark(Mark::Shape { tag, record })? {
            Marked::Shape(spec) => Ok(spec),
            other => Err(wrong_mark("a shape", &other)),
        }
    }
}

impl<S: AllocStore + ?Sized> AllocStoreExt for S {}

/// A store that answered a page of another kind than asked: a bug in the store.
fn wrong_page(asked: &str, got: &Page) -> SegmentError {
    SegmentError::BadRow {
        tag: String::new(),
        reason: format!("the store answered a page of {asked} with {got:?}"),
    }
}

/// A store that answered an update with another kind of outcome: a bug in the store.
fn wrong_update(asked: &str, got: Updated) -> SegmentError {
    SegmentError::BadRow {
        tag: String::new(),
        reason: format!("the store answered {asked} with {got:?}"),
    }
}

/// A store that answered a mark of another kind than asked: a bug in the store.
pub(super) fn wrong_mark(asked: &str, got: &Marked) -> SegmentError {
    SegmentError::BadRow {
        tag: String::new(),
        reason: format!("the store answered a read of {asked} with {got:?}"),
    }
}
