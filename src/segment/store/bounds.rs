//! Where claims stay ([`Bounds`], resolved from the region in `region.rs`), and the one check of
//! a claim's range against them.

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
            Some(&cap) => self.bounds.capped(cap),
            None => self.bounds,
        }
    }
}

impl Bounds {
    /// These bounds with their ceiling lowered to `ceiling` (an opaque tag's capacity).
    pub fn capped(self, ceiling: i64) -> Bounds {
        Bounds {
            ceiling: self.ceiling.min(ceiling),
            ..self
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
