//! Segment mode: IDs handed out from ranges ("segments") claimed in Leaf's `leaf_alloc` table.
//!
//! A claim moves a tag's `max_id` forward inside one transaction, so every claimant - leafctl
//! processes, leafctl servers and Leaf's own servers - gets a range nobody else has.
//!
//! - [`AllocStore`]: the table, on any of the databases of [`crate::db`].
//! - [`SegmentGenerator`]: per-tag double buffers ([`SegmentBuffer`]) with background preloading,
//!   Leaf's dynamic step and a lock-free hot path, for long-running users such as a server.

mod buffer;
mod generator;
mod guard;
mod headroom;
mod memory;
mod period;
mod shape;
pub(crate) mod store;
mod tags;

pub use buffer::{BATCH_RETRY_AFTER, SegmentBuffer, SegmentBufferView, SegmentView, TagHealth};
pub use generator::{
    HandBack, IDLE_BUFFER_TIMEOUT, LoadEvent, LoadObserver, PeriodRouter, SegmentGenerator,
    SegmentGeneratorBuilder, SegmentHandle, SegmentTotals,
};
pub use guard::{ClaimGuard, Refusal};
pub use headroom::{Headroom, HeadroomStatus, LOW_CLAIMS};
pub use memory::MemoryStore;
pub use period::{Period, PeriodIssuing, PeriodicShape};
pub use shape::{
    Issuing, OpaqueIssuing, TagShape, add_shaped_tag, check_key, opaque_error, open_period,
};
pub use store::{
    Added, AllocStore, AllocStoreExt, Bounds, Claim, Confined, Increment, LeafAlloc, Mark, Marked,
    NewTag, Page, PageQuery, Pages, REGION_TABLE, REMOVED_TABLE, ROWS_PER_PAGE, RegionToRecord,
    Removed, RemovedPages, RowPages, RowUpdate, RowsPage, SHAPE_TABLE, StartAt, TAGS_PER_PAGE,
    TagFilter, TagPages, TagsFingerprint, Tombstone, Updated, add_tag, bump_tag, check_fits,
    check_region, enter_region, record_region, recorded_region,
};

use crate::region::{Region, RegionError};

/// Default step of a new tag (Leaf's examples use 1000-2000).
pub const DEFAULT_STEP: i64 = 1000;
/// Largest step a tag can have: the `step` column is a signed 32-bit `int`.
pub const MAX_TABLE_STEP: i64 = i32::MAX as i64;
/// Largest step the generator grows a segment to (Leaf's `MAX_STEP`).
pub const MAX_DYNAMIC_STEP: i64 = 1_000_000;
/// Longest tag: `biz_tag` is `varchar(128)`.
pub const MAX_TAG_CHARS: usize = 128;

/// Everything that can go wrong with the allocation table or the segment generator.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    /// The tag is empty, too long, or has whitespace or control characters.
    #[error("invalid tag {tag:?}: {reason}")]
    InvalidTag {
        /// The tag as given.
        tag: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A step outside `1..=2147483647`.
    #[error("invalid step {0}: a step must be between 1 and 2147483647")]
    InvalidStep(i64),
    /// A start (initial max_id) below 0.
    #[error("invalid start {0}: the start must be 0 or more")]
    InvalidStart(i64),
    /// A claim of zero IDs or of more than fits in a signed 64-bit value.
    #[error("invalid count {0}: claim between 1 and 9223372036854775807 IDs")]
    InvalidCount(u64),
    /// The database URL is not one leafctl understands.
    #[error("invalid database URL {url}: {reason}")]
    InvalidUrl {
        /// The URL, password removed.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The tag is not in the table.
    #[error("unknown tag {tag:?} in {db}")]
    UnknownTag {
        /// The tag.
        tag: String,
        /// The database, password removed.
        db: String,
    },
    /// `tag add` for a tag that exists.
    #[error("tag {tag:?} already exists in {db}")]
    TagExists {
        /// The tag.
        tag: String,
        /// The database, password removed.
        db: String,
    },
    /// The claim would push `max_id` past its ceiling: 2^63-1, the end of the region's block,
    /// or an opaque tag's capacity; nothing was changed.
    #[error(
        "tag {tag:?} exhausted: max_id {max_id} + {increment} would pass {}; nothing was claimed",
        ceiling_text(*.ceiling)
    )]
    Exhausted {
        /// The tag.
        tag: String,
        /// Its current max_id.
        max_id: i64,
        /// The increment that did not fit.
        increment: i64,
        /// The highest max_id a claim may end at ([`Bounds::ceiling`]).
        ceiling: i64,
    },
    /// A batch asked for more IDs than the server's buffers and the table have left together
    /// (near 2^63-1, or the end of the region's block); a smaller one still fits.
    #[error(
        "tag {tag:?} has {left} IDs left, fewer than the {count} asked for; nothing was taken (ask for {left} or fewer)"
    )]
    TooFew {
        /// The tag.
        tag: String,
        /// The batch asked for.
        count: u64,
        /// IDs left: the buffers' and the table's.
        left: u64,
    },
    /// The row's max_id lies outside this region's block (a tag made before the region was
    /// set, a database restored from another region): nothing was claimed.
    #[error(
        "tag {tag:?}: max_id {max_id} lies outside {region}'s block [{floor}, {ceiling}); refused, nothing was changed"
    )]
    OutsideBlock {
        /// The tag.
        tag: String,
        /// Its max_id.
        max_id: i64,
        /// This process's region.
        region: Region,
        /// The block's start.
        floor: i64,
        /// The block's end.
        ceiling: i64,
        /// Whether the database records the region already (else it records none yet: the
        /// repair, `tag bump`, then runs without region flags).
        recorded: bool,
    },
    /// A database that records no region holds the tombstone of a removed tag below the block of
    /// the region it was given: that tag issued IDs another region's block holds.
    #[error(
        "removed tag {tag:?} issued IDs below {max_id}, below {region}'s block (which starts at {floor}): another region issues those; refused, nothing was recorded"
    )]
    RemovedBelowBlock {
        /// The removed tag.
        tag: String,
        /// Its tombstone's max_id.
        max_id: i64,
        /// The region given.
        region: Region,
        /// The block's start.
        floor: i64,
    },
    /// A `--start` or `--to` given for a tag lies outside the region's block: the tag would
    /// issue another region's IDs. What was asked is wrong; nothing was changed.
    #[error(
        "{option} {given} lies outside {region}'s block [{floor}, {ceiling}): tag {tag:?} in this region issues only IDs of its block; refused, nothing was changed"
    )]
    GivenOutsideBlock {
        /// The tag.
        tag: String,
        /// The option that gave the value (`--start`, `--to`).
        option: &'static str,
        /// The value given.
        given: i64,
        /// This process's region.
        region: Region,
        /// The block's start.
        floor: i64,
        /// The block's end.
        ceiling: i64,
    },
    /// A removed tag of this name issued IDs up to the end of the region's block (its tombstone
    /// lies at or above the block's end): the name has no IDs left in this region.
    #[error(
        "tag {tag:?} was removed at max_id {removed_max_id}, at or above the end of {region}'s block ({ceiling}): the name has no IDs left in this region; refused, nothing was changed"
    )]
    NameUsedUp {
        /// The tag name.
        tag: String,
        /// The tombstone's max_id.
        removed_max_id: i64,
        /// This process's region.
        region: Region,
        /// The block's end.
        ceiling: i64,
    },
    /// The database is recorded for another region (or for one, and this process has none).
    #[error(transparent)]
    Region(#[from] RegionError),
    /// `region add` was given, as the old deployment's database, one recorded for the very
    /// region being added: two databases of one region issue the same IDs.
    #[error("{db} is {region} already: the region being added needs a number of its own")]
    SameRegion {
        /// The old database.
        db: String,
        /// The region both would be.
        region: Region,
    },
    /// A name whose shape is recorded (or which was a plain tag) added with another shape.
    #[error(
        "tag {tag:?} is {recorded} (a tag's shape is fixed when it is first added and kept after a removal); refused to add it as {given}, nothing was changed"
    )]
    ShapeFixed {
        /// The tag.
        tag: String,
        /// The shape recorded for the name.
        recorded: String,
        /// The shape asked for.
        given: String,
    },
    /// A shape spec this leafctl cannot read (from a newer one, or edited by hand).
    #[error(
        "tag {tag:?} has the shape {spec:?} in leaf_tag_shape, which this leafctl cannot read; nothing was issued"
    )]
    UnreadableShape {
        /// The tag.
        tag: String,
        /// The spec as recorded.
        spec: String,
    },
    /// An opaque tag issued or decoded without a key.
    #[error("tag {tag:?} is opaque, and no ID key was given; nothing was issued")]
    KeyNeeded {
        /// The tag.
        tag: String,
    },
    /// An opaque tag given a key other than the one it was added with.
    #[error(
        "tag {tag:?} was added with the ID key whose check value is {recorded}; the key given has {given}; nothing was issued"
    )]
    KeyMismatch {
        /// The tag.
        tag: String,
        /// The check value recorded with the tag.
        recorded: String,
        /// The check value of the key given.
        given: String,
    },
    /// An opaque tag of N digits asked for in a region: a region's block of dense IDs lies above
    /// every N-digit domain, so it could issue nothing there.
    #[error(
        "tag {tag:?} is opaque with {digits} digits, which cannot be issued in {region}: the region's dense IDs lie above the {digits}-digit domain; nothing was issued"
    )]
    OpaqueInRegions {
        /// The tag.
        tag: String,
        /// Its digits.
        digits: u8,
        /// This process's region.
        region: Region,
    },
    /// An opaque tag of N digits added in a region, whose first digit is the region's, with
    /// too few digits left to permute.
    #[error(
        "an opaque tag of {digits} digits in a deployment of regions leaves {} digits to permute, fewer than the {} FF1 needs: the first digit is the region's",
        digits - 1,
        crate::idformat::opaque::MIN_DIGITS
    )]
    OpaqueTooNarrow {
        /// The tag.
        tag: String,
        /// The digits asked for.
        digits: u8,
    },
    /// An opaque tag's `--start` above the dense IDs its width holds.
    #[error(
        "--start {start} lies above the {} dense IDs an opaque tag of {width} holds",
        width.capacity()
    )]
    OpaqueStartAbove {
        /// The tag.
        tag: String,
        /// The start asked for.
        start: i64,
        /// The tag's width.
        width: crate::idformat::opaque::OpaqueWidth,
    },
    /// A periodic tag's options that do not fit (a zone, code or width).
    #[error("tag {tag:?} cannot be periodic this way: {reason}; nothing was added")]
    BadShape {
        /// The tag.
        tag: String,
        /// What does not fit.
        reason: String,
    },
    /// A value that is not an ID of the tag's shape.
    #[error("{id} is not an ID of tag {tag:?}: {reason}")]
    NotOfShape {
        /// The tag.
        tag: String,
        /// The value.
        id: u64,
        /// What its IDs look like.
        reason: String,
    },
    /// A period's sequence used up: refused, never widened.
    #[error(
        "tag {tag:?} has {left} sequences left in period {period} (its {width} digits hold {} per period); refused, nothing was claimed",
        10u64.saturating_pow(u32::from(*.width)) - 1
    )]
    PeriodFull {
        /// The tag.
        tag: String,
        /// The period's number.
        period: u64,
        /// The sequence's digits.
        width: u8,
        /// Sequences left in the period.
        left: i64,
    },
    /// A periodic tag added in a region: its period rows would start in the region's block,
    /// above every sequence width.
    #[error(
        "tag {tag:?} cannot be periodic in {region}: each period's sequence starts at 1, and the region's IDs lie in its own block; nothing was added"
    )]
    PeriodicInRegions {
        /// The tag.
        tag: String,
        /// This process's region.
        region: Region,
    },
    /// A periodic tag asked of an issuer that does not issue them (`serve`, the library's
    /// generator): only `next` does so far.
    #[error(
        "tag {tag:?} is periodic, and this issuer issues periodic tags not yet; nothing was issued"
    )]
    PeriodicHere {
        /// The tag.
        tag: String,
    },
    /// A claim of a periodic tag's own row: its IDs come from its period rows only.
    #[error(
        "tag {tag:?} is periodic: its IDs come from its period rows (TAG@PERIOD), never from its own row"
    )]
    PeriodicBase {
        /// The tag.
        tag: String,
    },
    /// One period's row of a periodic tag asked for directly: its sequence alone is no ID.
    #[error("tag {tag:?} is a period row of the periodic tag {of:?}; nothing was issued")]
    PeriodRow {
        /// The row's tag.
        tag: String,
        /// The periodic tag.
        of: String,
    },
    /// An opaque tag added with a region digit, asked for without a region.
    #[error(
        "tag {tag:?} is opaque with a region digit (it was added in a deployment of regions), and no region was given; nothing was issued"
    )]
    OpaqueNeedsRegion {
        /// The tag.
        tag: String,
    },
    /// The tag's permutation refused a value (its domain used up, or an ID not of its shape).
    #[error("tag {tag:?}: {source}")]
    Opaque {
        /// The tag.
        tag: String,
        /// What the permutation said.
        #[source]
        source: crate::idformat::opaque::OpaqueError,
    },
    /// The row holds values leafctl refuses to issue from (a negative max_id or step).
    #[error("tag {tag:?} has an unusable row ({reason}); nothing was claimed")]
    BadRow {
        /// The tag.
        tag: String,
        /// What is wrong.
        reason: String,
    },
    /// The database has no `leaf_alloc` table (or the SQLite file does not exist).
    #[error("{db} has no leaf_alloc table")]
    MissingTable {
        /// The database, password removed.
        db: String,
    },
    /// The database server could not be reached or the connection broke.
    #[error("cannot reach {db}: {detail}")]
    Unreachable {
        /// The database, password removed.
        db: String,
        /// The driver's explanation.
        detail: String,
    },
    /// The server is up but did not answer in time: a row lock held by another session past
    /// the lock wait timeout, or no reply within the I/O timeout (an overloaded server).
    #[error("{db} did not answer in time: {detail}")]
    Busy {
        /// The database, password removed.
        db: String,
        /// What took too long.
        detail: String,
    },
    /// TLS was asked for and failed: the server's certificate was refused (not signed by a
    /// trusted CA, or not for the host name in the URL), or the server offers no TLS.
    #[error("TLS to {db} failed: {detail}")]
    TlsRefused {
        /// The database, password removed.
        db: String,
        /// The driver's explanation.
        detail: String,
    },
    /// The server refused the login.
    #[error("{db} refused the login: {detail}")]
    AccessDenied {
        /// The database, password removed.
        db: String,
        /// The server's message.
        detail: String,
    },
    /// The SQLite file (or its directory, where SQLite writes its journal) cannot be read or
    /// written: permissions, or a read-only file system.
    #[error("{db} cannot be used: {detail}")]
    FileAccess {
        /// The database, `sqlite://PATH`.
        db: String,
        /// The file.
        path: std::path::PathBuf,
        /// SQLite's explanation.
        detail: String,
    },
    /// Any other database failure.
    #[error("database error on {db}: {detail}")]
    Database {
        /// The database, password removed.
        db: String,
        /// The driver's explanation.
        detail: String,
    },
    /// A claim or a tag command lost a write conflict (error 1213: an InnoDB deadlock, or a
    /// Galera certification failure against a write from another node) on every one of its
    /// tries; nothing was claimed or changed.
    #[error(
        "a write to tag {tag:?} on {db} lost a write conflict {tries} times in a row ({detail}); nothing was claimed or changed"
    )]
    Conflict {
        /// The tag.
        tag: String,
        /// The database, password removed.
        db: String,
        /// How many tries were made.
        tries: u32,
        /// The last conflict, as the server put it.
        detail: String,
    },
    /// A claim came back below a range claimed before through the same guard: the table lost
    /// claims. Nothing was issued from it.
    #[error(
        "tag {tag:?} in {db} went backwards: a claim came back starting at {start}, but IDs up to {mark} were claimed here before; nothing was issued from it. The table lost claims: a failover to a replica that had not received them, a restore from a backup, or the tag removed and added again at a lower start"
    )]
    WentBackwards {
        /// The tag.
        tag: String,
        /// The database, password removed.
        db: String,
        /// The first ID of the refused claim.
        start: u64,
        /// The highest max_id claimed before.
        mark: u64,
    },
    /// A process opened the database before it recorded a region (`region add` since), and a
    /// claim of its left that region's block: nothing of it is issued, as the next region may
    /// issue the same IDs.
    #[error(
        "tag {tag:?} in {db}: the database records {region} since this process opened it, and a claim reached [{start}, {end}), past that region's block (up to {ceiling}); nothing was issued from it. Restart this process with the region"
    )]
    RegionRecordedSince {
        /// The tag.
        tag: String,
        /// The database, password removed.
        db: String,
        /// The region the database records now.
        region: Region,
        /// The refused claim's first ID and one past its last.
        start: u64,
        /// One past the refused claim's last ID.
        end: u64,
        /// The end of the region's block.
        ceiling: i64,
    },
    /// `tag bump` to a value below the tag's max_id: refused, nothing changed.
    #[error(
        "refusing to move tag {tag:?} down from max_id {max_id} to {to}: IDs below {max_id} may have been issued; nothing was changed"
    )]
    BumpDown {
        /// The tag.
        tag: String,
        /// Its max_id.
        max_id: i64,
        /// The value asked for.
        to: i64,
    },
    /// `tag add --start` below the max_id a removed tag of the same name left behind: IDs
    /// from there were issued before. Nothing was added.
    #[error(
        "refusing to add tag {tag:?} at {start}: a removed tag of that name issued IDs below {removed_max_id} (its tombstone in {db}); nothing was added"
    )]
    BelowRemoved {
        /// The tag.
        tag: String,
        /// The database.
        db: String,
        /// The start asked for.
        start: i64,
        /// The tombstone's max_id: the first ID the removed tag never issued.
        removed_max_id: i64,
    },
    /// A removal could not record the tag's tombstone (the table `leaf_alloc_removed` is
    /// missing and could not be created): nothing was removed.
    #[error(
        "refusing to remove tag {tag:?}: its last max_id cannot be recorded in {db} (table leaf_alloc_removed: {detail}); nothing was removed"
    )]
    NoRemovedTable {
        /// The tag.
        tag: String,
        /// The database.
        db: String,
        /// Why the table could not be used or created.
        detail: String,
    },
    /// The guard's record of claimed max_ids (in the state directory) could not be used.
    #[error("the record of claimed max_ids: cannot {detail}")]
    Marks {
        /// What failed, on which file.
        detail: String,
    },
    /// The generator's segments for a tag are used up and the next one did not arrive in time.
    #[error("no IDs ready for tag {tag:?}: both segments are used up and loading the next failed or is slow{}", .cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    NotReady {
        /// The tag.
        tag: String,
        /// The last load failure, if any.
        cause: Option<String>,
    },
    /// A batch larger than the buffered IDs needs a claim of its own, and the database is
    /// failing: refused at once, with nothing taken from the buffers (single IDs keep coming
    /// from them).
    #[error(
        "a batch of {count} IDs for tag {tag:?} needs a claim of its own (the buffers hold {buffered}, kept for single IDs) and the database is failing: {cause}; nothing was taken"
    )]
    BatchNotReady {
        /// The tag.
        tag: String,
        /// The batch size asked for.
        count: u64,
        /// IDs the tag's buffers hold now.
        buffered: u64,
        /// The last claim failure.
        cause: String,
    },
    /// The generator handed its segments back to the table (a server stopping): it issues
    /// nothing more.
    #[error("the segment generator has stopped and handed tag {tag:?}'s unused IDs back")]
    Stopped {
        /// The tag.
        tag: String,
    },
}

impl SegmentError {
    /// Whether the database could not answer now and the same claim may succeed later (down,
    /// slow, a lost write conflict): what a retry, or riding it out on the buffers, is for.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            SegmentError::Unreachable { .. }
                | SegmentError::Busy { .. }
                | SegmentError::Database { .. }
                | SegmentError::Conflict { .. }
                | SegmentError::NotReady { .. }
                | SegmentError::BatchNotReady { .. }
        )
    }
}

/// The ceiling of a claim in messages: `9223372036854775807`, `the end of the region's block
/// (N)`, or the end of a shaped tag's IDs.
fn ceiling_text(ceiling: i64) -> String {
    if ceiling == i64::MAX {
        ceiling.to_string()
    } else if ceiling % crate::region::SMALLEST_SEGMENT_BLOCK == 0 {
        format!("the end of the region's block ({ceiling})")
    } else {
        // A tag's own ceiling: every block boundary is a multiple of the smallest block, and no
        // opaque capacity (9 x 10^(N-1) + 1) or period's end (10^W) is.
        format!("the end of the tag's shape ({ceiling}: an opaque width, or a period's sequence)")
    }
}

/// Whether a character shows nothing on screen though it is there: Unicode's format characters
/// (zero-width space and joiners, bidirectional controls, the byte-order mark, soft hyphen),
/// variation selectors and fillers. A tag holding one looks like another tag, or like nothing.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// A tag as one shell word, for the commands printed in hints and messages: as it is when it
/// holds only characters no shell treats specially, else in single quotes.
pub fn tag_for_shell(tag: &str) -> std::borrow::Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.,:/@%+=".contains(c);
    if !tag.is_empty() && tag.chars().all(plain) {
        std::borrow::Cow::Borrowed(tag)
    } else {
        std::borrow::Cow::Owned(format!("'{}'", tag.replace('\'', "'\\''")))
    }
}

/// Checks a tag: 1..=128 characters, no whitespace, control or invisible characters.
#[inline]
pub fn validate_tag(tag: &str) -> Result<(), SegmentError> {
    // The usual tag, checked byte by byte (every request checks its tag): printable ASCII
    // without a space has no whitespace, control or invisible character, and a byte per char.
    if (1..=MAX_TAG_CHARS).contains(&tag.len()) && tag.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Ok(());
    }
    validate_other_tag(tag)
}

/// [`validate_tag`] for what is not printable ASCII (kept out of line: requests rarely get here).
#[cold]
fn validate_other_tag(tag: &str) -> Result<(), SegmentError> {
    let bad = |reason| {
        Err(SegmentError::InvalidTag {
            // A message never carries a huge input back whole.
            tag: crate::text::excerpt(tag, MAX_TAG_CHARS + 8).into_owned(),
            reason,
        })
    };
    if tag.is_empty() {
        return bad("a tag cannot be empty");
    }
    if tag.chars().count() > MAX_TAG_CHARS {
        return bad("a tag has at most 128 characters");
    }
    if tag.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("a tag cannot contain whitespace or control characters");
    }
    if tag.chars().any(is_invisible) {
        return bad("a tag cannot contain invisible characters (such as a zero-width space)");
    }
    Ok(())
}

/// Checks a table step: `1..=2147483647`.
pub fn validate_step(step: i64) -> Result<(), SegmentError> {
    if (1..=MAX_TABLE_STEP).contains(&step) {
        Ok(())
    } else {
        Err(SegmentError::InvalidStep(step))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked() {
        assert!(validate_tag("order").is_ok());
        assert!(validate_tag("leaf-segment-test").is_ok());
        assert!(validate_tag(&"x".repeat(128)).is_ok());
        assert!(validate_tag(&"é".repeat(128)).is_ok());
        for bad in [
            "",
            "a b",
            "a\tb",
            "a\nb",
            "a\u{7}b",
            "\u{200b}",
            "a\u{200d}b",
            "\u{feff}x",
            "x\u{2066}",
            "\u{3164}",
        ] {
            assert!(validate_tag(bad).is_err(), "{bad:?}");
        }
        assert!(validate_tag(&"x".repeat(129)).is_err());
        // SQL-looking text without whitespace is a valid (if odd) tag; it only ever travels as
        // a bound parameter.
        assert!(validate_tag("x';DROP").is_ok());
    }

    #[test]
    fn tags_are_quoted_for_a_shell_only_when_needed() {
        assert_eq!(tag_for_shell("order-2024.v1"), "order-2024.v1");
        assert_eq!(tag_for_shell("a;b"), "'a;b'");
        assert_eq!(tag_for_shell("$(id)"), "'$(id)'");
        assert_eq!(tag_for_shell("it's"), "'it'\\''s'");
        assert_eq!(tag_for_shell("é"), "'é'");
    }

    #[test]
    fn steps_are_checked() {
        assert!(validate_step(1).is_ok());
        assert!(validate_step(2_147_483_647).is_ok());
        assert!(validate_step(0).is_err());
        assert!(validate_step(2_147_483_648).is_err());
        assert!(validate_step(-5).is_err());
    }
}

/// Parser fuzzing (issue 8): tags and store URLs. `PROPTEST_CASES=100000 cargo test --release
/// --lib fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_tags_are_checked_without_panicking(tag in any::<String>()) {
            match validate_tag(&tag) {
                Ok(()) => {
                    let n = tag.chars().count();
                    prop_assert!((1..=MAX_TAG_CHARS).contains(&n));
                    prop_assert!(!tag.chars().any(|c| c.is_whitespace() || c.is_control()));
                    prop_assert!(!tag.chars().any(is_invisible));
                }
                Err(e) => prop_assert!(e.to_string().starts_with("invalid tag")),
            }
        }
    }
}
