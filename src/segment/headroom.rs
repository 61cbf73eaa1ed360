//! How much of its 63-bit range a tag has left, and whether that is running low: the numbers
//! `tag list`/`tag show` print, so running out is visible before a claim fails.

use serde::Serialize;

use super::Bounds;

/// Claims (at the tag's step) below which a tag counts as running [`HeadroomStatus::Low`]: at one
/// claim a second that is under 17 minutes, at one a minute under 17 hours.
pub const LOW_CLAIMS: i64 = 1000;

/// A tag's room left: IDs between its `max_id` and 2^63-1, and whole claims of its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Headroom {
    /// IDs a claim can still hand out: `9223372036854775807 - max_id` (0 for a bad row).
    pub ids_left: i64,
    /// Whole claims of `step` IDs that still fit (a claim that does not fit fails whole).
    pub claims_left: i64,
    /// What the two mean for the tag.
    pub status: HeadroomStatus,
}

/// Whether a tag's range is running out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadroomStatus {
    /// At least [`LOW_CLAIMS`] claims left.
    Ok,
    /// Fewer than [`LOW_CLAIMS`] claims of its step left: move to a new tag soon.
    Low,
    /// Less than one step left: the next claim of a step does not fit (`leafctl serve` then
    /// claims the last IDs, Leaf's own servers fail; smaller `leafctl next -n` requests fit
    /// until the range is used up).
    Last,
    /// No ID left at all.
    Exhausted,
}

impl HeadroomStatus {
    /// The status as printed: `ok`, `low`, `last` or `exhausted`.
    pub fn as_str(self) -> &'static str {
        match self {
            HeadroomStatus::Ok => "ok",
            HeadroomStatus::Low => "low",
            HeadroomStatus::Last => "last",
            HeadroomStatus::Exhausted => "exhausted",
        }
    }
}

impl Headroom {
    /// The headroom of a row with this `max_id` and `step` (a negative `max_id`, a bad row,
    /// counts as nothing left; a step below 1 as 1).
    pub fn of(max_id: i64, step: i64) -> Headroom {
        Headroom::within(&Bounds::UNBOUNDED, max_id, step)
    }

    /// The headroom of a row inside `bounds`: IDs up to their ceiling (the end of the region's
    /// block with a region); a max_id outside them counts as nothing left.
    pub fn within(bounds: &Bounds, max_id: i64, step: i64) -> Headroom {
        Headroom::of_left(bounds.ids_left(max_id), step)
    }

    /// The headroom of `ids_left` IDs (a server's: its buffers' and the table's) at `step`.
    pub fn of_left(ids_left: i64, step: i64) -> Headroom {
        let ids_left = ids_left.max(0);
        let claims_left = ids_left / step.max(1);
        let status = if ids_left == 0 {
            HeadroomStatus::Exhausted
        } else if claims_left == 0 {
            HeadroomStatus::Last
        } else if claims_left < LOW_CLAIMS {
            HeadroomStatus::Low
        } else {
            HeadroomStatus::Ok
        };
        Headroom {
            ids_left,
            claims_left,
            status,
        }
    }

    /// A sentence for an operator when the tag is not [`HeadroomStatus::Ok`] (`None` when it is).
    pub fn warning(&self, tag: &str, step: i64) -> Option<String> {
        let left = self.ids_left;
        let claims = self.claims_left;
        match self.status {
            HeadroomStatus::Ok => None,
            HeadroomStatus::Low => Some(format!(
                "tag {tag} is running out: {left} IDs left, {claims} claim{} of step {step}; move its users to a new tag before it runs out",
                if claims == 1 { "" } else { "s" }
            )),
            HeadroomStatus::Last => Some(format!(
                "tag {tag} has {left} IDs left, less than its step {step}: a claim of a step no longer fits (leafctl serve claims the last ones, Leaf's servers fail); move its users to a new tag now"
            )),
            HeadroomStatus::Exhausted => Some(format!(
                "tag {tag} has no IDs left (max_id is 9223372036854775807); move its users to a new tag"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_counts_ids_and_claims_left() {
        let h = Headroom::of(1, 1000);
        assert_eq!(h.ids_left, i64::MAX - 1);
        assert_eq!(h.status, HeadroomStatus::Ok);
        // The case: 806 IDs left and a step of 1,000 is no longer ok.
        let h = Headroom::of(i64::MAX - 806, 1000);
        assert_eq!((h.ids_left, h.claims_left), (806, 0));
        assert_eq!(h.status, HeadroomStatus::Last);
        assert!(h.warning("t", 1000).unwrap().contains("806 IDs left"));
        let h = Headroom::of(i64::MAX - 1000 * LOW_CLAIMS + 1, 1000);
        assert_eq!(h.claims_left, LOW_CLAIMS - 1);
        assert_eq!(h.status, HeadroomStatus::Low);
        let h = Headroom::of(i64::MAX - 1000 * LOW_CLAIMS, 1000);
        assert_eq!(h.status, HeadroomStatus::Ok);
        assert_eq!(h.warning("t", 1000), None);
        let h = Headroom::of(i64::MAX, 1000);
        assert_eq!((h.ids_left, h.status), (0, HeadroomStatus::Exhausted));
        // A bad row or step never panics.
        assert_eq!(Headroom::of(-5, 0).status, HeadroomStatus::Exhausted);
        assert_eq!(Headroom::of(0, 0).claims_left, i64::MAX);
    }
}
