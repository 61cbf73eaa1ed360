//! A database's region, the one place where the region meets the segment stores: the table that
//! records it; entering, checking and recording it through any store; the [`Bounds`] it confines
//! claims to, and what a region's block refuses (a tag added or bumped outside it, a periodic
//! tag, a claim of a store opened before `region add` that leaves the block recorded since).
//! Every other file of `segment` sees floor and ceiling only.

use super::ext::wrong_mark;
use super::*;

/// The table that records a database's region: one row (`id` 1) holding `region` and
/// `regions`. Created only when a region is first used with the database, so a deployment
/// without regions never sees it.
pub const REGION_TABLE: &str = "leaf_region";

/// The max_ids a store's claims stay between: `0..=2^63-1` for a deployment without regions,
/// the region's block ([`Region::segment_block`]) for one with. The one place a claim's range is
/// checked (`check_claim`); the SQL of each store carries the same two numbers in its guard, so
/// the table itself never moves past them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The region whose block this is, if any: read by this file alone (the rules of a
    /// region's block), the rest of the crate sees floor and ceiling.
    pub(crate) region: Option<Region>,
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

    /// The region whose block these are (none: unbounded).
    pub fn region(&self) -> Option<Region> {
        self.region
    }

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

    /// Refuses a periodic tag in a region's block: its rows' IDs are dates, which no block holds
    /// ([`SegmentError::PeriodicInRegions`]). What `next`, `tag add` and the generator ask.
    pub fn refuse_periodic(&self, tag: &str) -> Result<(), SegmentError> {
        match self.region {
            Some(region) => Err(SegmentError::PeriodicInRegions {
                tag: tag.into(),
                region,
            }),
            None => Ok(()),
        }
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::UNBOUNDED
    }
}

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
        record_region(store, self.0)?;
        crate::region::check_recorded(&name, recorded_region(store)?, Some(self.0))?;
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
    if crate::region::check_recorded(&name, recorded_region(store)?, region)?
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

/// Moves a tag's max_id forward to `to` ([`RowUpdate::BumpTo`]) inside the store's [`Bounds`]:
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

/// The region recorded in `store`'s database, if any ([`Mark::Region`]).
pub fn recorded_region(store: &dyn AllocStore) -> Result<Option<Region>, SegmentError> {
    match store.mark(Mark::Region(None))? {
        Marked::Region(region) => Ok(region),
        other => Err(wrong_mark("the region", &other)),
    }
}

/// Records `region` in `store`'s database unless a region is recorded already ([`Mark::Region`]).
pub fn record_region(store: &dyn AllocStore, region: Region) -> Result<(), SegmentError> {
    store.mark(Mark::Region(Some(region))).map(|_| ())
}

/// A claim of a store opened without a region, checked against the region its database may
/// record since (`region add` while this process ran): one that leaves the recorded region's
/// block is refused, nothing of it issued, as the next region issues those IDs. The mark is read
/// after the claim, so a region recorded before the claim is seen, and one recorded after it
/// found this claim in the table when seeding the other regions. Only a claim that holds a
/// multiple of [`crate::region::SMALLEST_SEGMENT_BLOCK`] can leave a block, so the read is made once in 2^50
/// IDs at most, never on the way of an ordinary claim.
pub(crate) fn within_recorded_block(
    store: &dyn AllocStore,
    tag: &str,
    claim: &crate::segment::Claim,
) -> Result<(), SegmentError> {
    // A claim can leave the block it follows only by holding a multiple of the smallest block
    // (its start one when the claim before it ended right at a block's end).
    let block = crate::region::SMALLEST_SEGMENT_BLOCK.unsigned_abs();
    let enters_a_block = claim.start.div_ceil(block).saturating_mul(block) < claim.end;
    if store.bounds().region.is_some() || !enters_a_block {
        return Ok(());
    }
    let Some(region) = recorded_region(store)? else {
        return Ok(());
    };
    let range = region.segment_block();
    let inside = |id: u64| i64::try_from(id).is_ok_and(|id| range.contains(&id));
    if inside(claim.start) && i64::try_from(claim.end).is_ok_and(|end| end <= range.end) {
        return Ok(());
    }
    Err(SegmentError::RegionRecordedSince {
        tag: tag.to_string(),
        db: store.describe(),
        region,
        start: claim.start,
        end: claim.end,
        ceiling: range.end,
    })
}
