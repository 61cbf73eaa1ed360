//! A database's region: opening a database in one (its recorded region checked once, recorded
//! once the command succeeded), the statements that record it, and several regions' segment
//! databases together: adding a region beside a running deployment (`leafctl region add`) and
//! checking the regions' databases against each other (`leafctl region check`). Neither of the
//! last two is on an ID path: both are operator commands that read each region's database once.

use std::collections::{BTreeMap, BTreeSet};

use super::{DbAddress, OpenMode};

use serde::Serialize;

use crate::region::{Region, RegionError};
use crate::segment::AllocStoreExt;
use crate::segment::{
    AllocStore, Bounds, NewTag, RegionToRecord, RemovedPages, RowPages, SegmentError, StartAt,
    TagFilter, TagShape, Tombstone, add_shaped_tag, check_region, recorded_region,
};

impl DbAddress {
    /// Opens the segment store of `region` (none: a deployment without regions). `password`
    /// (from `LEAF_DB_PASSWORD` or the config file) overrides one in the URL. The region
    /// recorded in the database is checked once here, never per claim
    /// ([`crate::segment::enter_region`]): recorded when the database has none and a region is
    /// given, refused when it is another's; the store's claims then stay in the region's block.
    pub fn open_in_region(
        &self,
        password: Option<&str>,
        mode: OpenMode,
        region: Option<Region>,
    ) -> Result<Box<dyn AllocStore>, SegmentError> {
        let (store, to_record) = self.open_in_region_unrecorded(password, mode, region)?;
        if let Some(r) = to_record {
            r.record(store.as_ref())?;
        }
        Ok(store)
    }

    /// [`DbAddress::open_in_region`] for a command that may still be refused: a region the
    /// database does not record yet is returned, to record once the command succeeded.
    pub fn open_in_region_unrecorded(
        &self,
        password: Option<&str>,
        mode: OpenMode,
        region: Option<Region>,
    ) -> Result<(Box<dyn AllocStore>, Option<RegionToRecord>), SegmentError> {
        let mut store = (self.database.open_store)(&self.url, password, mode)?;
        let to_record = crate::segment::enter_region(store.as_mut(), region)?;
        Ok((store, to_record))
    }

    /// Checks the region recorded in the database against `region`, as
    /// [`DbAddress::open_in_region_unrecorded`] does: for a database used only as a worker-id
    /// registry. A region the database does not record yet is returned, for the caller to record
    /// once its command succeeded ([`RegionToRecord::record`]).
    pub fn check_region(
        &self,
        password: Option<&str>,
        region: Option<Region>,
    ) -> Result<Option<RegionToRecord>, SegmentError> {
        let store = (self.database.open_store)(&self.url, password, OpenMode::Existing)?;
        crate::segment::check_region(store.as_ref(), region)
    }

    /// The statements that record `region` in a new database (`leafctl db init --print` with a
    /// region): the region mark's DDL and its one row.
    pub fn region_sql(&self, region: Region) -> [String; 2] {
        [
            self.database.region_ddl.to_string(),
            format!(
                "INSERT INTO {} (id, region, regions) VALUES (1, {}, {})",
                crate::segment::REGION_TABLE,
                region.index(),
                region.count()
            ),
        ]
    }
}

/// The region a `leaf_region` row holds (`region`, `regions`); a row that is no region is
/// refused, naming the database.
pub(crate) fn region_of_row(
    db: &str,
    region: i64,
    regions: i64,
) -> Result<crate::region::Region, SegmentError> {
    let number = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    crate::region::Region::new(number(region), number(regions)).map_err(|e| {
        SegmentError::Database {
            db: db.to_string(),
            detail: format!(
                "{} holds region {region} of {regions}, which is no region ({e}); fix the row by hand",
                crate::segment::REGION_TABLE
            ),
        }
    })
}

/// What [`prepare_old_region`] found in the database of the deployment a region is added to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OldRegion {
    /// The region the old database belongs to.
    pub region: Region,
    /// Whether it is to be recorded now (the deployment had no regions before): recorded by
    /// [`OldRegion::record`] once the new database was checked too.
    pub recorded_now: bool,
}

impl OldRegion {
    /// Records the old database's region when it records none yet.
    pub fn record(&self, old: &dyn AllocStore) -> Result<(), SegmentError> {
        if self.recorded_now {
            RegionToRecord(self.region).record(old)?;
        }
        Ok(())
    }
}

/// Checks that the old database of a deployment can be a region beside `new` (the region being
/// added), recording nothing: a database without a mark is to become region 0 of `new`'s count,
/// once every tag's max_id is checked to lie in region 0's block (a tag above it would overlap
/// another region's IDs: refused, naming it); a database with a mark must have `new`'s count
/// and another number. The caller records it ([`OldRegion::record`]) once the new database was
/// checked as well, so a refused `region add` records nothing anywhere.
pub fn prepare_old_region(old: &dyn AllocStore, new: Region) -> Result<OldRegion, SegmentError> {
    let name = old.describe();
    if let Some(recorded) = recorded_region(old)? {
        if recorded.count() != new.count() {
            return Err(RegionError::Mismatch {
                store: name,
                recorded,
                mine: new,
            }
            .into());
        }
        if recorded == new {
            return Err(SegmentError::SameRegion {
                db: name,
                region: new,
            });
        }
        return Ok(OldRegion {
            region: recorded,
            recorded_now: false,
        });
    }
    let zero = Region::new(0, new.count())?;
    let bounds = Bounds::of(Some(zero));
    for page in RowPages::new(old, TagFilter::All) {
        for row in page? {
            if let Some(mut e) = bounds.outside(&row.tag, row.max_id) {
                if let SegmentError::OutsideBlock { recorded, .. } = &mut e {
                    *recorded = false;
                }
                return Err(e);
            }
        }
    }
    // Nothing is recorded here: the region to record is the one checked.
    let _ = check_region(old, Some(zero))?;
    Ok(OldRegion {
        region: zero,
        recorded_now: true,
    })
}

/// The rest of `region add` once the old database was checked ([`prepare_old_region`]) and the
/// new one's registry table made: the new database (`new_address`) is opened as `region`'s and
/// checked, the old database's tombstones against it ([`check_carry`]); only then are both
/// regions recorded, the old one's first, and every old tag seeded ([`seed_tags`]). A refusal
/// before the recording records nothing anywhere. The new region's store and what was seeded.
pub fn add_region(
    prepared: OldRegion,
    old: &dyn AllocStore,
    (new_address, password): (&DbAddress, Option<&str>),
    region: Region,
    progress: impl FnMut(u64),
) -> Result<(Box<dyn AllocStore>, Seeded), SegmentError> {
    let mode = super::OpenMode::CreateSchema;
    let (new, new_to_record) =
        new_address.open_in_region_unrecorded(password, mode, Some(region))?;
    check_carry(old, prepared.region, new.as_ref())?;
    prepared.record(old)?;
    if let Some(r) = new_to_record {
        r.record(new.as_ref())?;
    }
    let seeded = seed_tags(old, new.as_ref(), progress)?;
    Ok((new, seeded))
}

/// What [`seed_tags`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Seeded {
    /// Tags added to the new region's table, at the start of its block.
    pub added: u64,
    /// Tags the new region's table had already (a re-run): left as they were.
    pub existing: Vec<String>,
    /// Tombstones carried over: removed tags whose IDs reached the new region's block, so that a
    /// re-add of the name there starts above them.
    pub tombstones: u64,
    /// Tags not added: a removed tag of the name issued IDs up to the new block's end, so the
    /// name has none left there.
    pub used_up: Vec<String>,
}

/// Adds every tag of `old` (its step, description and shape) to `new`, whose store is confined to the
/// new region ([`crate::segment::enter_region`]): each starts at the start of the new region's
/// block, which lies above every ID the old region's block holds. A tag `new` has already is left
/// and reported, so a re-run is safe. `progress` is told the number of tags done after each.
///
/// A removed tag of `old` whose IDs reached the new block (its tombstone above the old block's
/// end and the new block's start: a tag added with a high `--start` before the old database
/// recorded a region) leaves its tombstone in `new` too, first, so a `tag add` of the name in the new region
/// starts above every ID it issued (or is refused when none are left in the block).
pub fn seed_tags(
    old: &dyn AllocStore,
    new: &dyn AllocStore,
    mut progress: impl FnMut(u64),
) -> Result<Seeded, SegmentError> {
    if new.bounds().region.is_none() {
        return Err(SegmentError::Region(RegionError::HalfGiven {
            given: "a new region's database",
            missing: "--region and --regions",
        }));
    }
    let mut seeded = Seeded::default();
    // A removed tag of the old region issued IDs inside its block only, unless it did so before
    // the old database recorded its region: only a tombstone above its block's end reached
    // another block.
    if let Some(old_region) = recorded_region(old)? {
        for removed in check_carry(old, old_region, new)? {
            // The name's shape goes with its tombstone: it outlives the removal.
            if let Some(spec) = old.shape_mark(&removed.tag, None)? {
                new.shape_mark(&removed.tag, Some(&spec))?;
            }
            carry_tombstone(new, &removed)?;
            seeded.tombstones += 1;
        }
    }
    let mut done = 0;
    for page in RowPages::new(old, TagFilter::All) {
        for row in page? {
            // A shaped tag stays shaped in the new region (which may not issue it: an opaque
            // tag of N digits from before the regions, say), never a plain one there.
            let shape = TagShape::of(old, &row.tag)?;
            let outcome = add_shaped_tag(
                new,
                &NewTag {
                    tag: &row.tag,
                    start: StartAt::Default,
                    step: row.step,
                    description: row.description.as_deref(),
                    if_not_exists: true,
                },
                &shape,
            );
            match outcome {
                Ok(a) if a.added => seeded.added += 1,
                Ok(_) => seeded.existing.push(row.tag),
                // A removed tag of the name used the new block up: the name has no IDs there.
                Err(SegmentError::NameUsedUp { .. }) => seeded.used_up.push(row.tag),
                Err(e) => return Err(e),
            }
            done += 1;
            progress(done);
        }
    }
    Ok(seeded)
}

/// The tombstones of `old` (whose region is `old_region`) that [`seed_tags`] carries to `new`:
/// those above the old block's end and the new block's start. Refused, before anything is
/// recorded, when `new` has a tag of such a name below the tombstone: it may have issued IDs
/// the removed tag issued. `region add` calls it before it records either region.
pub fn check_carry(
    old: &dyn AllocStore,
    old_region: Region,
    new: &dyn AllocStore,
) -> Result<Vec<Tombstone>, SegmentError> {
    let old_ceiling = Bounds::of(Some(old_region)).ceiling;
    let floor = new.bounds().floor;
    let mut carried = Vec::new();
    for page in RemovedPages::new(old) {
        for removed in page? {
            if removed.max_id <= floor || removed.max_id <= old_ceiling {
                continue;
            }
            if let Some(row) = new.get(&removed.tag)?
                && row.max_id < removed.max_id
            {
                return Err(SegmentError::BelowRemoved {
                    tag: removed.tag,
                    db: new.describe(),
                    start: row.max_id,
                    removed_max_id: removed.max_id,
                });
            }
            carried.push(removed);
        }
    }
    Ok(carried)
}

/// Leaves `removed`'s tombstone in `new` with the stores' own statements: the name added at the
/// tombstone's max_id and removed again, which records it (the highest, when `new` has one
/// already). A name `new` has as a tag is left as it is when the tag starts at or above the
/// tombstone (a re-run), and refused when below it: it may issue IDs the removed tag issued.
fn carry_tombstone(new: &dyn AllocStore, removed: &Tombstone) -> Result<(), SegmentError> {
    let added = new.add_tag(&NewTag {
        tag: &removed.tag,
        start: StartAt::Reuse(removed.max_id),
        step: 1,
        description: None,
        if_not_exists: true,
    })?;
    if added.added {
        new.remove(&removed.tag)?;
        return Ok(());
    }
    match new.get(&removed.tag)? {
        Some(row) if row.max_id < removed.max_id => Err(SegmentError::BelowRemoved {
            tag: removed.tag.clone(),
            db: new.describe(),
            start: row.max_id,
            removed_max_id: removed.max_id,
        }),
        _ => Ok(()),
    }
}

/// One region's database as [`check_regions`] reads it.
#[derive(Debug, Clone)]
pub struct RegionDb {
    /// The database, password removed.
    pub database: String,
    /// The region recorded in it.
    pub region: Option<Region>,
    /// Its tags' max_ids.
    pub max_ids: BTreeMap<String, i64>,
    /// Its removed tags' tombstones (the max_id each reached).
    pub removed: BTreeMap<String, i64>,
}

impl RegionDb {
    /// Reads the mark and every tag of `store`.
    pub fn read(store: &dyn AllocStore) -> Result<RegionDb, SegmentError> {
        let region = recorded_region(store)?;
        let mut max_ids = BTreeMap::new();
        for page in RowPages::new(store, TagFilter::All) {
            for row in page? {
                max_ids.insert(row.tag, row.max_id);
            }
        }
        let mut removed = BTreeMap::new();
        for page in RemovedPages::new(store) {
            for t in page? {
                removed.insert(t.tag, t.max_id);
            }
        }
        Ok(RegionDb {
            database: store.describe(),
            region,
            max_ids,
            removed,
        })
    }
}

/// How much a [`Finding`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A misconfiguration that can make two regions issue the same ID, or a region refuse to
    /// start.
    Error,
    /// Worth knowing, not wrong (a tag some regions do not have).
    Note,
}

/// One thing [`check_regions`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or note.
    pub severity: Severity,
    /// What kind: `unrecorded`, `count`, `duplicate`, `outside_block`, `missing_tag`.
    pub kind: &'static str,
    /// The sentence.
    pub message: String,
}

/// Checks several regions' databases against each other: every database records a region,
/// all with the same count, no number twice, every tag's max_id inside its region's block; a tag
/// that some regions lack is a note. The databases are compared only: nothing is written.
pub fn check_regions(dbs: &[RegionDb]) -> Vec<Finding> {
    let mut errors = Vec::new();
    check_recorded(dbs, &mut errors);
    check_blocks(dbs, &mut errors);
    check_removed(dbs, &mut errors);
    let mut found: Vec<Finding> = errors
        .into_iter()
        .map(|(kind, message)| Finding {
            severity: Severity::Error,
            kind,
            message,
        })
        .collect();
    found.extend(missing_tags(dbs));
    found
}

/// An error of [`check_regions`]: its kind and sentence.
type Disagreement = (&'static str, String);

/// Every database records a region, all with one count, no region twice.
fn check_recorded(dbs: &[RegionDb], errors: &mut Vec<Disagreement>) {
    let counts: BTreeSet<u32> = dbs
        .iter()
        .filter_map(|d| d.region)
        .map(|r| r.count())
        .collect();
    if counts.len() > 1 {
        let each: Vec<String> = dbs
            .iter()
            .filter_map(|d| d.region.map(|r| format!("{} is {r}", d.database)))
            .collect();
        errors.push((
            "count",
            format!(
                "the databases disagree on the region count: {}",
                each.join(", ")
            ),
        ));
    }
    let mut by_region: BTreeMap<(u32, u32), Vec<&str>> = BTreeMap::new();
    for d in dbs {
        match d.region {
            None => errors.push((
                "unrecorded",
                format!(
                    "{} records no region (it belongs to no region yet)",
                    d.database
                ),
            )),
            Some(r) => by_region
                .entry((r.count(), r.index()))
                .or_default()
                .push(&d.database),
        }
    }
    for ((count, index), names) in &by_region {
        if names.len() > 1 {
            errors.push((
                "duplicate",
                format!(
                    "region {index} of {count} is recorded in {} databases: {}; their IDs can collide",
                    names.len(),
                    names.join(", ")
                ),
            ));
        }
    }
}

/// Every tag's max_id inside its region's block.
fn check_blocks(dbs: &[RegionDb], errors: &mut Vec<Disagreement>) {
    for d in dbs {
        let Some(region) = d.region else { continue };
        let bounds = Bounds::of(Some(region));
        for (tag, max_id) in &d.max_ids {
            if let Some(e) = bounds.outside(tag, *max_id) {
                errors.push(("outside_block", format!("{}: {e}", d.database)));
            }
        }
    }
}

/// A removed tag whose IDs reached past its region's block: every region whose block they
/// reached must start that name above them (a tombstone or a tag at or above its max_id, or
/// above the block's end), else it may issue them again.
fn check_removed(dbs: &[RegionDb], errors: &mut Vec<Disagreement>) {
    for d in dbs {
        let Some(region) = d.region else { continue };
        let ceiling = Bounds::of(Some(region)).ceiling;
        for (tag, &reached) in d.removed.iter().filter(|&(_, &m)| m > ceiling) {
            for other in dbs {
                let Some(theirs) = other.region else { continue };
                let block = Bounds::of(Some(theirs));
                if theirs == region || block.floor >= reached {
                    continue;
                }
                let needed = reached.min(block.ceiling);
                let held = [other.removed.get(tag), other.max_ids.get(tag)]
                    .into_iter()
                    .flatten()
                    .copied()
                    .max();
                if held.is_none_or(|h| h < needed) {
                    errors.push((
                        "removed_tag",
                        format!(
                            "{}: removed tag {tag:?} issued IDs up to {}, inside {theirs}'s block, but {} does not start {tag:?} above them: it can issue them again (run `leafctl region add` again, or add {tag:?} there with --start {needed})",
                            d.database,
                            reached - 1,
                            other.database
                        ),
                    ));
                }
            }
        }
    }
}

/// A note for each tag some databases lack.
fn missing_tags(dbs: &[RegionDb]) -> Vec<Finding> {
    let all: BTreeSet<&String> = dbs.iter().flat_map(|d| d.max_ids.keys()).collect();
    all.into_iter()
        .filter_map(|tag| {
            let missing: Vec<&str> = dbs
                .iter()
                .filter(|d| !d.max_ids.contains_key(tag))
                .map(|d| d.database.as_str())
                .collect();
            (!missing.is_empty()).then(|| Finding {
                severity: Severity::Note,
                kind: "missing_tag",
                message: format!("tag {tag:?} is missing in {}", missing.join(", ")),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{Increment, MemoryStore, enter_region};

    fn region(i: u32, n: u32) -> Region {
        Region::new(i, n).unwrap()
    }

    /// Adding region 1 to a deployment without regions: the old table becomes region 0, the new
    /// one gets every tag above every ID the old one issued, and a re-run adds nothing.
    #[test]
    fn a_region_is_added_above_every_old_id_and_a_rerun_is_safe() {
        let old = MemoryStore::new();
        old.add("order", 1, 100, Some("orders"), false).unwrap();
        old.add("pay", 5_000_000, 10, None, false).unwrap();
        let issued = old.claim("pay", Increment::TableStep).unwrap();
        let r1 = region(1, 2);
        let prepared = prepare_old_region(&old, r1).unwrap();
        assert_eq!(
            prepared,
            OldRegion {
                region: region(0, 2),
                recorded_now: true
            }
        );
        // Checked, not recorded: `region add` records once the new database passed its checks.
        assert_eq!(recorded_region(&old).unwrap(), None);
        prepared.record(&old).unwrap();
        assert_eq!(recorded_region(&old).unwrap(), Some(region(0, 2)));
        let mut new = MemoryStore::new();
        enter_region(&mut new, Some(r1)).unwrap();
        let seeded = seed_tags(&old, &new, |_| {}).unwrap();
        assert_eq!((seeded.added, seeded.existing.len()), (2, 0));
        let block = r1.segment_block();
        for tag in ["order", "pay"] {
            let row = new.get(tag).unwrap().unwrap();
            assert_eq!(row.max_id, block.start, "{tag}");
            assert!(row.max_id as u64 > issued.end);
        }
        assert_eq!(
            new.get("order").unwrap().unwrap().description.as_deref(),
            Some("orders")
        );
        // Again: the old database is region 0 now, the tags are there.
        assert!(!prepare_old_region(&old, r1).unwrap().recorded_now);
        let again = seed_tags(&old, &new, |_| {}).unwrap();
        assert_eq!(
            (again.added, again.existing),
            (0, vec!["order".to_string(), "pay".to_string()])
        );
        // The old database given as the new region's own number is refused.
        assert!(matches!(
            prepare_old_region(&old, region(0, 2)),
            Err(SegmentError::SameRegion { .. })
        ));
        assert!(matches!(
            prepare_old_region(&old, region(1, 4)),
            Err(SegmentError::Region(RegionError::Mismatch { .. }))
        ));
    }

    /// An old tag above region 0's block would share IDs with another region: nothing recorded.
    #[test]
    fn an_old_tag_outside_region_zeros_block_stops_the_add() {
        let old = MemoryStore::new();
        old.add("big", 1 << 60, 10, None, false).unwrap();
        let e = prepare_old_region(&old, region(1, 2)).unwrap_err();
        assert!(matches!(e, SegmentError::OutsideBlock { .. }), "{e}");
        assert_eq!(recorded_region(&old).unwrap(), None);
    }

    fn db(name: &str, r: Option<Region>, tags: &[(&str, i64)]) -> RegionDb {
        RegionDb {
            database: name.into(),
            region: r,
            max_ids: tags.iter().map(|(t, m)| (t.to_string(), *m)).collect(),
            removed: BTreeMap::new(),
        }
    }

    #[test]
    fn the_check_finds_every_misconfiguration_and_notes_missing_tags() {
        let b1 = region(1, 2).segment_block().start;
        let good = [
            db("a", Some(region(0, 2)), &[("t", 10)]),
            db("b", Some(region(1, 2)), &[("t", b1 + 10)]),
        ];
        assert!(check_regions(&good).is_empty());
        let kinds = |dbs: &[RegionDb]| -> Vec<(&'static str, Severity)> {
            check_regions(dbs)
                .into_iter()
                .map(|f| (f.kind, f.severity))
                .collect()
        };
        let dup = [
            db("a", Some(region(1, 2)), &[]),
            db("b", Some(region(1, 2)), &[]),
        ];
        assert_eq!(kinds(&dup), [("duplicate", Severity::Error)]);
        let count = [
            db("a", Some(region(0, 2)), &[]),
            db("b", Some(region(1, 4)), &[]),
        ];
        assert_eq!(kinds(&count), [("count", Severity::Error)]);
        let unrecorded = [db("a", None, &[]), db("b", Some(region(1, 2)), &[])];
        assert_eq!(kinds(&unrecorded), [("unrecorded", Severity::Error)]);
        let outside = [
            db("a", Some(region(0, 2)), &[("t", b1 + 5)]),
            db("b", Some(region(1, 2)), &[("t", b1)]),
        ];
        assert_eq!(kinds(&outside), [("outside_block", Severity::Error)]);
        let missing = [
            db("a", Some(region(0, 2)), &[("t", 1)]),
            db("b", Some(region(1, 2)), &[]),
        ];
        let f = check_regions(&missing);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].kind, f[0].severity), ("missing_tag", Severity::Note));
        assert!(f[0].message.contains("b"), "{}", f[0].message);
    }
}
