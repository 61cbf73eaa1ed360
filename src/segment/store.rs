//! The `leaf_alloc` table behind a trait, so the generator and the CLI work on any database
//! (`crate::db`).

use std::time::Duration;

use serde::Serialize;

use super::SegmentError;
use crate::region::Region;

/// The table that keeps the last max_id of every removed tag (its "tombstone"), so that
/// `tag add` of the name starts above every ID the tag issued. It is the last statement of each
/// DDL list; Leaf's servers never read it.
pub const REMOVED_TABLE: &str = "leaf_alloc_removed";

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
pub trait AllocStore: Send + Sync {
    /// The database's URL with any password removed, for messages.
    fn describe(&self) -> String;
    /// Creates the tables when missing (idempotent).
    fn init_schema(&self) -> Result<(), SegmentError>;
    /// Claims a range for `tag`.
    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError>;
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
    /// Adds a tag where `start` says, reading the tombstone a removal of the same name left
    /// (see [`AllocStore::remove`]) in the same transaction as the insert, so a removal racing
    /// the insert is either seen or makes the insert fail as a duplicate. A database without
    /// the tombstone table has no tombstones.
    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError>;
    /// Up to `page.limit` rows matching `page.filter` whose tags come after `page.after` in the
    /// database's order of `biz_tag`, in that order: one page of a listing (see [`RowPages`]), so a listing
    /// of a million tags holds one page in memory and no connection or transaction between
    /// pages. A [`TagFilter`] other than `All` may be applied loosely by the database (a `LIKE`
    /// that ignores case); [`RowPages`] applies it exactly.
    fn rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError>;
    /// Up to `limit` tombstones of removed tags (`leaf_alloc_removed`) whose tags come after
    /// `after`, in the database's order of `biz_tag`: one page of [`RemovedPages`]. None when the
    /// table is missing (a database made before tombstones has none). Regions read them: a
    /// removed tag's IDs count as issued wherever regions are set up or checked.
    fn removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError>;
    /// Up to `limit` tags after `after`, in the database's order: a page of the tag list (see
    /// [`TagPages`]).
    fn tags_page(&self, after: Option<&str>, limit: usize) -> Result<Vec<String>, SegmentError>;
    /// How many tags there are and a checksum of their names, when the database computes both
    /// in one query without sending the names (`None` otherwise): a tag refresh that finds both
    /// unchanged skips reading the list.
    fn tags_fingerprint(&self) -> Result<Option<TagsFingerprint>, SegmentError> {
        Ok(None)
    }
    /// One row, if the tag exists.
    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError>;
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
    /// Changes a tag's step.
    fn set_step(&self, tag: &str, step: i64) -> Result<(), SegmentError>;
    /// Deletes a tag and returns its last row, leaving its max_id behind as a tombstone in
    /// `leaf_alloc_removed` (the highest, if the name was removed before), and the tombstone
    /// kept. The tombstone is
    /// committed no later than the deletion: there is never a removal without it. A missing
    /// tombstone table is created; when that fails, nothing is removed
    /// ([`SegmentError::NoRemovedTable`]).
    fn remove(&self, tag: &str) -> Result<Removed, SegmentError>;
    /// Moves a tag's max_id forward to `to` in one statement, never down: the repair after
    /// the table went backwards. Returns the max_id it had; `to` equal to it changes nothing.
    fn bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError>;
    /// Gives the unused end of a claim back: moves the tag's `max_id` from `from` down to `to`
    /// in one compare-and-set statement, only if it is still `from` (nobody claimed after the
    /// claim that ended there). True when it moved. The caller guarantees no ID in
    /// `[to, from)` was ever handed out ([`crate::segment::SegmentGenerator::hand_back`]).
    fn hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError>;
    /// The region recorded in the database (the one row of [`REGION_TABLE`]); none when the
    /// table or its row is missing. Read once when a store is opened ([`enter_region`]).
    fn recorded_region(&self) -> Result<Option<Region>, SegmentError>;
    /// Records `region` in [`REGION_TABLE`], creating the table, unless a region is recorded
    /// there already: the first writer wins, and [`enter_region`] reads the row back.
    fn record_region(&self, region: Region) -> Result<(), SegmentError>;
    /// Keeps every later claim inside `bounds`: the store's claim statement carries them, so
    /// the table never moves past them (`check_claim` explains a claim they refuse).
    fn confine(&mut self, bounds: Bounds);
    /// The bounds claims are kept inside ([`AllocStore::confine`]).
    fn bounds(&self) -> Bounds;
}

/// [`AllocStore::confine`] and [`AllocStore::bounds`] for a store that keeps its [`Bounds`] in
/// a field `bounds` (the database stores do), written once rather than in each store's impl.
macro_rules! bounds_in_field {
    () => {
        fn confine(&mut self, bounds: $crate::segment::Bounds) {
            self.bounds = bounds;
        }

        fn bounds(&self) -> $crate::segment::Bounds {
            self.bounds
        }
    };
}
pub(crate) use bounds_in_field;

/// Adds a tag inside the store's [`Bounds`]: what `tag add` and `region add` go through. With a
/// region, [`StartAt::Default`] starts at the block's start (1 in region 0's, as without regions), or above a removed tag's tombstone
/// in the block), and a start outside the block is refused ([`SegmentError::GivenOutsideBlock`],
/// or [`SegmentError::NameUsedUp`] when a removed tag of the name used the block up);
/// without one it is [`AllocStore::add_tag`] as it is.
pub fn add_tag(store: &dyn AllocStore, new: &NewTag<'_>) -> Result<Added, SegmentError> {
    let bounds = store.bounds();
    let Some(region) = bounds.region else {
        return store.add_tag(new);
    };
    // A start at the block's end would leave the tag no ID: outside too.
    let inside = |start: i64| (bounds.floor..bounds.ceiling).contains(&start);
    match new.start {
        StartAt::Given(s) | StartAt::Reuse(s) if !inside(s) => {
            Err(SegmentError::GivenOutsideBlock {
                tag: new.tag.into(),
                option: "--start",
                given: s,
                region,
                floor: bounds.floor,
                ceiling: bounds.ceiling,
            })
        }
        StartAt::Given(_) | StartAt::Reuse(_) => store.add_tag(new),
        StartAt::Default => {
            // Region 0's block starts at 0; its tags start at 1, as they do without regions.
            let at_floor = NewTag {
                start: StartAt::Given(bounds.floor.max(1)),
                ..*new
            };
            match store.add_tag(&at_floor) {
                // A removed tag of the name issued IDs in the block: continue above them.
                Err(SegmentError::BelowRemoved { removed_max_id, .. }) => {
                    if !inside(removed_max_id) {
                        return Err(SegmentError::NameUsedUp {
                            tag: new.tag.into(),
                            removed_max_id,
                            region,
                            ceiling: bounds.ceiling,
                        });
                    }
                    store.add_tag(&NewTag {
                        start: StartAt::Given(removed_max_id),
                        ..*new
                    })
                }
                other => other,
            }
        }
    }
}

/// Moves a tag's max_id forward to `to` ([`AllocStore::bump`]) inside the store's [`Bounds`]:
/// with a region, a `to` outside its block is refused ([`SegmentError::GivenOutsideBlock`]) before
/// anything changes, so the table never points into another region's block (where Leaf's own
/// servers, which know no regions, would issue from).
pub fn bump_tag(store: &dyn AllocStore, tag: &str, to: i64) -> Result<i64, SegmentError> {
    let bounds = store.bounds();
    if let Some(region) = bounds.region
        && !bounds.holds(to)
    {
        return Err(SegmentError::GivenOutsideBlock {
            tag: tag.into(),
            option: "--to",
            given: to,
            region,
            floor: bounds.floor,
            ceiling: bounds.ceiling,
        });
    }
    store.bump(tag, to)
}

/// The table that records a database's region: one row (`id` 1) holding `region` and
/// `regions`. Created only when a region is first used with the database, so a deployment
/// without regions never sees it.
pub const REGION_TABLE: &str = "leaf_region";

/// A region a store was opened in ([`enter_region`]) that the store does not record yet: the
/// command that opened it records it with [`RegionToRecord::record`] once it has succeeded, so a
/// refused command records nothing (issue 45).
#[must_use = "a region given to a database that records none is recorded once the command succeeded"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionToRecord(pub Region);

impl RegionToRecord {
    /// Records the region in `store`, unless a region is recorded there already: the first
    /// writer wins, and what the table holds then counts (another region is refused).
    pub fn record(self, store: &dyn AllocStore) -> Result<(), SegmentError> {
        let name = store.describe();
        store.record_region(self.0)?;
        crate::region::check_recorded(&name, store.recorded_region()?, Some(self.0))?;
        Ok(())
    }
}

/// Checks the region recorded in `store` against `region` (this process's, if any) and confines
/// the store's claims to the region's block: what every opening of a segment store goes through.
/// A store of another region, or of a region when `region` is none, is refused
/// ([`SegmentError::Region`]), naming both. A store that records no region yet, given one, must
/// hold nothing outside its block ([`check_fits`]); the region is then returned to record once
/// the command succeeded.
pub fn enter_region(
    store: &mut dyn AllocStore,
    region: Option<Region>,
) -> Result<Option<RegionToRecord>, SegmentError> {
    let to_record = check_region(&*store, region)?;
    store.confine(Bounds::of(region));
    Ok(to_record)
}

/// The recorded-region check of [`enter_region`] without confining the store: for a database
/// used as a worker-id registry, whose claims are not segment claims.
pub fn check_region(
    store: &dyn AllocStore,
    region: Option<Region>,
) -> Result<Option<RegionToRecord>, SegmentError> {
    let name = store.describe();
    if crate::region::check_recorded(&name, store.recorded_region()?, region)?
        && let Some(mine) = region
    {
        check_fits(store, mine)?;
        return Ok(Some(RegionToRecord(mine)));
    }
    Ok(None)
}

/// Whether a database that records no region may become `region`'s: every tag's max_id lies in
/// the region's block (else its claims are refused for good, or it issued another block's IDs),
/// and no removed tag issued IDs below the block (another region issues those). A removed tag
/// above the block's end is let through: a re-add here is refused as outside the block, and
/// `region add` carries the tombstone to the regions above ([`crate::db::regions`]).
pub fn check_fits(store: &dyn AllocStore, region: Region) -> Result<(), SegmentError> {
    let bounds = Bounds::of(Some(region));
    for page in RowPages::new(store, TagFilter::All) {
        for row in page? {
            if let Some(mut e) = bounds.outside(&row.tag, row.max_id) {
                if let SegmentError::OutsideBlock { recorded, .. } = &mut e {
                    *recorded = false;
                }
                return Err(e);
            }
        }
    }
    for page in RemovedPages::new(store) {
        for removed in page? {
            if removed.max_id < bounds.floor {
                return Err(SegmentError::RemovedBelowBlock {
                    tag: removed.tag,
                    max_id: removed.max_id,
                    region,
                    floor: bounds.floor,
                });
            }
        }
    }
    Ok(())
}

/// One page of a listing to read ([`AllocStore::rows_page`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowsPage<'a> {
    /// Which tags; a database may apply it loosely (see [`TagFilter::like_pattern`]).
    pub filter: &'a TagFilter,
    /// The tag the page starts after (`None`: the first page).
    pub after: Option<&'a str>,
    /// The most rows the page holds.
    pub limit: usize,
}

/// Rows a page of [`RowPages`] holds.
pub const ROWS_PER_PAGE: usize = 1000;
/// Tags a page of [`TagPages`] holds.
pub const TAGS_PER_PAGE: usize = 10_000;

/// Which tags a listing returns (`leafctl tag list --prefix/--match`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TagFilter {
    /// Every tag.
    #[default]
    All,
    /// Tags that start with this text (compared byte for byte).
    Prefix(String),
    /// Tags that match a glob: `*` stands for any run of characters, `?` for one character,
    /// and `\` takes the next character as it is. The whole tag must match.
    Glob(String),
}

/// The escape character of the `LIKE` patterns [`TagFilter::like_pattern`] makes: one that
/// needs no escaping inside an SQL string literal on MySQL, SQLite or PostgreSQL.
pub(crate) const LIKE_ESCAPE: char = '!';

impl TagFilter {
    /// Whether `tag` passes the filter.
    pub fn matches(&self, tag: &str) -> bool {
        match self {
            TagFilter::All => true,
            TagFilter::Prefix(p) => tag.starts_with(p.as_str()),
            TagFilter::Glob(g) => glob_matches(&glob_tokens(g), tag),
        }
    }

    /// A `LIKE` pattern (escape character `LIKE_ESCAPE` (`!`)) that every tag passing the filter
    /// matches, for the database to narrow a listing; `None` for every tag. It may let through
    /// more than the filter (`LIKE` ignores case on MySQL's usual collations), never less.
    pub fn like_pattern(&self) -> Option<String> {
        let mut out = String::new();
        let literal = |out: &mut String, c: char| {
            if matches!(c, '%' | '_') || c == LIKE_ESCAPE {
                out.push(LIKE_ESCAPE);
            }
            out.push(c);
        };
        match self {
            TagFilter::All => return None,
            TagFilter::Prefix(p) => {
                p.chars().for_each(|c| literal(&mut out, c));
                out.push('%');
            }
            TagFilter::Glob(g) => {
                for token in glob_tokens(g) {
                    match token {
                        GlobToken::Any => out.push('%'),
                        GlobToken::One => out.push('_'),
                        GlobToken::Char(c) => literal(&mut out, c),
                    }
                }
            }
        }
        Some(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GlobToken {
    Any,
    One,
    Char(char),
}

fn glob_tokens(glob: &str) -> Vec<GlobToken> {
    let mut tokens = Vec::new();
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' => GlobToken::Any,
            '?' => GlobToken::One,
            // A trailing backslash stands for itself.
            '\\' => GlobToken::Char(chars.next().unwrap_or('\\')),
            c => GlobToken::Char(c),
        });
    }
    tokens
}

/// Glob matching by the classic two-pointer walk: linear in the tag for each `*`, no recursion.
fn glob_matches(tokens: &[GlobToken], tag: &str) -> bool {
    let text: Vec<char> = tag.chars().collect();
    let (mut t, mut p) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(GlobToken::Any) => {
                star = Some((p, t));
                p += 1;
            }
            Some(GlobToken::One) => {
                t += 1;
                p += 1;
            }
            Some(GlobToken::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p.min(tokens.len())..]
        .iter()
        .all(|k| *k == GlobToken::Any)
}

/// The tag count and a checksum of the names (see [`AllocStore::tags_fingerprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagsFingerprint {
    /// How many tags.
    pub count: u64,
    /// An order-independent checksum of their names.
    pub checksum: u64,
}

/// A table read page by page in the database's order of tags: each item is one page, or the
/// error that ended the reading. The next page starts after the last tag the database sent.
pub struct Pages<'a, S: AllocStore + ?Sized, T> {
    store: &'a S,
    fetch: FetchPage<S, T>,
    tag_of: fn(&T) -> &str,
    filter: TagFilter,
    size: usize,
    after: Option<String>,
    done: bool,
}

/// How [`Pages`] reads one page: the store, the filter, the tag it starts after.
type FetchPage<S, T> = fn(&S, &TagFilter, Option<&str>) -> Result<Vec<T>, SegmentError>;

/// The rows of a table, [`ROWS_PER_PAGE`] at a time ([`AllocStore::rows_page`]), filtered
/// exactly by a [`TagFilter`].
pub type RowPages<'a, S> = Pages<'a, S, LeafAlloc>;
/// The tags of a table, [`TAGS_PER_PAGE`] at a time ([`AllocStore::tags_page`]).
pub type TagPages<'a, S> = Pages<'a, S, String>;
/// The tombstones of a table, [`ROWS_PER_PAGE`] at a time ([`AllocStore::removed_page`]).
pub type RemovedPages<'a, S> = Pages<'a, S, Tombstone>;

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, Tombstone> {
    /// Every tombstone of `store`.
    pub fn new(store: &'a S) -> Self {
        Pages {
            store,
            fetch: |s, _, after| s.removed_page(after, ROWS_PER_PAGE),
            tag_of: |t| &t.tag,
            filter: TagFilter::All,
            size: ROWS_PER_PAGE,
            after: None,
            done: false,
        }
    }
}

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, LeafAlloc> {
    /// The rows of `store` that pass `filter`.
    pub fn new(store: &'a S, filter: TagFilter) -> Self {
        Pages {
            store,
            fetch: |s, filter, after| {
                s.rows_page(&RowsPage {
                    filter,
                    after,
                    limit: ROWS_PER_PAGE,
                })
            },
            tag_of: |r| &r.tag,
            filter,
            size: ROWS_PER_PAGE,
            after: None,
            done: false,
        }
    }

    /// The same, from the row after tag `after` on (resuming a listing).
    pub fn after(store: &'a S, filter: TagFilter, after: String) -> Self {
        Pages {
            after: Some(after),
            ..Self::new(store, filter)
        }
    }
}

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, String> {
    /// Every tag of `store`.
    pub fn new(store: &'a S) -> Self {
        Pages {
            store,
            fetch: |s, _, after| s.tags_page(after, TAGS_PER_PAGE),
            tag_of: |t| t,
            filter: TagFilter::All,
            size: TAGS_PER_PAGE,
            after: None,
            done: false,
        }
    }
}

impl<S: AllocStore + ?Sized, T> Pages<'_, S, T> {
    /// Where the next page would start (`None` once the last page was read): to resume with
    /// [`RowPages::after`].
    pub fn cursor(&self) -> Option<String> {
        (!self.done).then(|| self.after.clone()).flatten()
    }
}

impl<S: AllocStore + ?Sized, T> Iterator for Pages<'_, S, T> {
    type Item = Result<Vec<T>, SegmentError>;
    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut page = match (self.fetch)(self.store, &self.filter, self.after.as_deref()) {
                Ok(page) => page,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            self.done = page.len() < self.size;
            // The next page starts after the last tag the database sent, filtered or not.
            match page.last() {
                Some(last) => self.after = Some((self.tag_of)(last).to_string()),
                None => self.done = true,
            }
            let (filter, tag_of) = (&self.filter, self.tag_of);
            page.retain(|r| filter.matches(tag_of(r)));
            if !page.is_empty() {
                return Some(Ok(page));
            }
        }
        None
    }
}

/// How often a claim is tried when it loses a write conflict (error 1213: an InnoDB deadlock,
/// or a Galera certification failure, a normal answer on a multi-writer cluster) before the
/// conflict is reported.
pub const CONFLICT_TRIES: u32 = 10;
/// The backoff before retry `n` is drawn from `[cap/2, cap]`, with `cap` doubling from this
/// bound up to [`CONFLICT_BACKOFF_MAX`]: about 0.8 s of waiting in all, at most.
const CONFLICT_BACKOFF_MIN: Duration = Duration::from_millis(2);
const CONFLICT_BACKOFF_MAX: Duration = Duration::from_millis(250);

/// The jittered wait after the `tries`-th conflict: claimants that collided once spread out
/// instead of colliding again in step.
pub(crate) fn conflict_backoff(tries: u32) -> Duration {
    let cap = CONFLICT_BACKOFF_MIN
        .saturating_mul(1 << tries.min(16))
        .min(CONFLICT_BACKOFF_MAX);
    let half = cap / 2;
    // A fresh RandomState is randomly keyed: enough randomness for a jitter, no extra crate.
    let draw = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), tries);
    let span = u64::try_from(half.as_micros()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_micros(draw % span)
}

/// How one try of a claim (or a tag command) ended, when it did not succeed.
pub(crate) enum Attempt {
    /// Lost a write conflict: nothing was claimed, and trying again is the answer.
    Conflict(String),
    /// The host in use cannot take it (gone, read-only, outside the primary component):
    /// another host of the list might. Nothing was claimed, or a claim of unknown outcome
    /// (its answer lost) is abandoned: a gap, never a duplicate.
    HostDown(SegmentError, usize),
    /// Anything else: reported as it is.
    Failed(SegmentError),
}

impl From<SegmentError> for Attempt {
    fn from(e: SegmentError) -> Attempt {
        Attempt::Failed(e)
    }
}

/// A claim (or a tag command) tried until it ends: a lost write conflict is tried again after
/// a jittered wait (up to [`CONFLICT_TRIES`] times), a host that cannot serve hands over to the
/// next host of the list (`advance`; each other host once per try), anything else is the
/// answer. `once` makes one try on the host in use.
pub(crate) fn with_retries<T>(
    db: &str,
    tag: &str,
    hosts: usize,
    mut once: impl FnMut() -> Result<T, Attempt>,
    mut advance: impl FnMut(usize, &SegmentError) -> Result<(), SegmentError>,
) -> Result<T, SegmentError> {
    let mut tries = 0;
    let mut hops = 0;
    loop {
        tries += 1;
        match once() {
            Ok(claim) => return Ok(claim),
            Err(Attempt::Failed(e)) => return Err(e),
            Err(Attempt::HostDown(e, host)) => {
                if hops + 1 >= hosts {
                    return Err(e);
                }
                hops += 1;
                tries -= 1;
                advance(host, &e)?;
            }
            Err(Attempt::Conflict(detail)) if tries >= CONFLICT_TRIES => {
                return Err(SegmentError::Conflict {
                    tag: tag.into(),
                    db: db.to_string(),
                    tries,
                    detail,
                });
            }
            Err(Attempt::Conflict(detail)) => {
                let wait = conflict_backoff(tries);
                tracing::debug!(
                    "a write for tag {tag:?} lost a write conflict ({detail}); try {tries} of \
                     {CONFLICT_TRIES}, retrying in {} ms",
                    wait.as_millis()
                );
                std::thread::sleep(wait);
            }
        }
    }
}

/// A bump tried until it ends: `read` gives the tag's max_id (`None`: unknown tag), `set`
/// moves it from the value read to `to` in one compare-and-set statement (`false`: a claim
/// moved it meanwhile, so look again). Never moves a tag down. `E` is the stores' error, or an
/// [`Attempt`] when the whole bump is one try of [`with_retries`].
pub(crate) fn bump_with_retries<E: From<SegmentError>>(
    db: &str,
    tag: &str,
    to: i64,
    mut read: impl FnMut() -> Result<Option<i64>, E>,
    mut set: impl FnMut(i64) -> Result<bool, E>,
) -> Result<i64, E> {
    for _ in 0..CONFLICT_TRIES {
        let Some(max_id) = read()? else {
            return Err(unknown_tag(tag, db).into());
        };
        check_bump(tag, max_id, to)?;
        if max_id == to || set(max_id)? {
            return Ok(max_id);
        }
    }
    Err(SegmentError::Conflict {
        tag: tag.into(),
        db: db.to_string(),
        tries: CONFLICT_TRIES,
        detail: "the tag was claimed from between every read and update".into(),
    }
    .into())
}

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

/// The max_ids a store's claims stay between: `0..=2^63-1` for a deployment without regions,
/// the region's block ([`Region::segment_block`]) for one with. The one place a claim's range is
/// checked (`check_claim`); the SQL of each store carries the same two numbers in its guard, so
/// the table itself never moves past them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The region whose block this is, if any.
    pub region: Option<Region>,
    /// The lowest max_id a claim may start from.
    pub floor: i64,
    /// The highest max_id a claim may end at (one past the last ID it may issue).
    pub ceiling: i64,
}

impl Bounds {
    /// No region: every max_id from 0 to 2^63-1.
    pub const UNBOUNDED: Bounds = Bounds {
        region: None,
        floor: 0,
        ceiling: i64::MAX,
    };

    /// The bounds of `region`'s block, or [`Bounds::UNBOUNDED`] without a region.
    pub fn of(region: Option<Region>) -> Bounds {
        match region {
            Some(r) => {
                let block = r.segment_block();
                Bounds {
                    region,
                    floor: block.start,
                    ceiling: block.end,
                }
            }
            None => Bounds::UNBOUNDED,
        }
    }

    /// Whether a row's max_id lies where claims may start from or end at.
    pub fn holds(&self, max_id: i64) -> bool {
        (self.floor..=self.ceiling).contains(&max_id)
    }

    /// How many IDs are left above `max_id` (0 when it lies outside).
    pub fn ids_left(&self, max_id: i64) -> i64 {
        if self.holds(max_id) {
            self.ceiling - max_id
        } else {
            0
        }
    }

    /// The error for a row whose max_id lies outside these bounds, or `None` when it lies inside.
    pub fn outside(&self, tag: &str, max_id: i64) -> Option<SegmentError> {
        if self.holds(max_id) {
            return None;
        }
        Some(match self.region {
            Some(region) => SegmentError::OutsideBlock {
                tag: tag.into(),
                max_id,
                region,
                floor: self.floor,
                ceiling: self.ceiling,
                recorded: true,
            },
            None => SegmentError::BadRow {
                tag: tag.into(),
                reason: format!("max_id {max_id} is negative"),
            },
        })
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::UNBOUNDED
    }
}

/// Checks a claim's arithmetic before anything changes: the increment is positive, the row's
/// max_id lies inside `bounds` and the new max_id does not pass their ceiling (2^63-1, or the
/// end of the region's block).
pub(crate) fn check_claim(
    tag: &str,
    bounds: &Bounds,
    max_id: i64,
    increment: i64,
) -> Result<(u64, u64), SegmentError> {
    if increment < 1 {
        return Err(SegmentError::BadRow {
            tag: tag.into(),
            reason: format!("step {increment} is not positive"),
        });
    }
    if let Some(e) = bounds.outside(tag, max_id) {
        return Err(e);
    }
    match max_id.checked_add(increment) {
        Some(end) if end <= bounds.ceiling => Ok((max_id as u64, end as u64)),
        _ => Err(SegmentError::Exhausted {
            tag: tag.into(),
            max_id,
            increment,
            ceiling: bounds.ceiling,
        }),
    }
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
