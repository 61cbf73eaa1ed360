//! A database's region: the table that records it, and entering, checking and recording it
//! through any store.

use super::*;

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
