//! Where claims stay: the region's block (or all of `0..=2^63-1`), and the one check of a
//! claim's range against it.

use super::*;

/// Where a store keeps its claims: every [`AllocStore`] is one, its claim statement carrying the
/// bounds, so the table never moves past them (`check_claim` explains a claim they refuse).
pub trait Confined {
    /// Keeps every later claim inside `bounds`.
    fn confine(&mut self, bounds: Bounds);
    /// The bounds claims are kept inside ([`Confined::confine`]).
    fn bounds(&self) -> Bounds;
    /// Keeps every later claim of `tag` below `ceiling` as well (an opaque tag's capacity).
    fn cap_tag(&self, tag: &str, ceiling: i64);
    /// The bounds claims of `tag` are kept inside: the store's, with the tag's own ceiling.
    fn bounds_of(&self, tag: &str) -> Bounds;
}

/// A store's [`Bounds`] and the lower ceilings of single tags ([`Confined::cap_tag`]): what a
/// store keeps in its field `bounds` ([`bounds_in_field!`](super::bounds_in_field)).
#[derive(Debug, Default)]
pub struct Confinement {
    bounds: Bounds,
    tags: std::sync::RwLock<std::collections::HashMap<String, i64>>,
}

impl Confinement {
    /// The store's bounds.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// Replaces the store's bounds (the tags' ceilings stay).
    pub fn set(&mut self, bounds: Bounds) {
        self.bounds = bounds;
    }

    /// Lowers `tag`'s ceiling to `ceiling`.
    pub fn cap(&self, tag: &str, ceiling: i64) {
        let mut tags = self.tags.write().unwrap_or_else(|e| e.into_inner());
        let cap = tags.entry(tag.to_string()).or_insert(ceiling);
        *cap = (*cap).min(ceiling);
    }

    /// The bounds of `tag`'s claims.
    pub fn of(&self, tag: &str) -> Bounds {
        let tags = self.tags.read().unwrap_or_else(|e| e.into_inner());
        match tags.get(tag) {
            Some(&cap) => Bounds {
                ceiling: self.bounds.ceiling.min(cap),
                ..self.bounds
            },
            None => self.bounds,
        }
    }
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
