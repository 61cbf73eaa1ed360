//! Sizing the next claim (Leaf's dynamic step and the claim-time floor) and recording its
//! outcome.

use std::sync::atomic::Ordering::SeqCst;
use std::time::Instant;

use super::{CLAIMS_COVERED, MAX_COVERING_STEP, SEGMENT_DURATION_MS, SegmentBuffer, unix_now_ms};
use crate::segment::{Claim, Increment, MAX_DYNAMIC_STEP, SegmentError};

/// How the next claim is sized, decided before it is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadPlan {
    pub increment: Increment,
    update_ms: i64,
    /// When it was planned (clock ms), for the rate after the first claim.
    first_ms: i64,
    /// Leaf's step (`None`: the table's), which the next plan doubles or halves, whatever the
    /// floor made this claim.
    leaf_step: Option<i64>,
    /// The IDs taken from the segments when it was planned.
    taken: u64,
    /// Why the step is what it is, for the status page.
    reason: &'static str,
}

impl SegmentBuffer {
    /// Sizes the next claim. Leaf's rule decides first: the table's step for the first two
    /// claims, then double (under 15 min since the last claim, up to [`MAX_DYNAMIC_STEP`]), keep
    /// (15-30 min) or halve (over 30 min, not below the table's step). Then what is measured
    /// sets a floor: the segment holds at least [`CLAIMS_COVERED`] claim times' worth of IDs at
    /// the tag's rate (the IDs taken from its segments since the last claim was planned, over the
    /// time since on the generator's clock, and the last claim's time), up to
    /// [`MAX_COVERING_STEP`]. On a near database the floor is below Leaf's step and changes
    /// nothing; on a far one a burst gets, from its second claim on, segments that last until
    /// the next claim is back, instead of doubling through seven segments that each run out
    /// first. A graceful stop gives back what a large segment did not use
    /// ([`crate::segment::SegmentGenerator::hand_back`]); a crash skips it, as Leaf's does.
    pub(crate) fn plan_load(&self, now_ms: i64) -> LoadPlan {
        let st = self.lock();
        let taken = self.issued_locked(&st).saturating_sub(st.batch_claimed);
        let (leaf_step, reason) = if !st.initialised || st.update_ms == 0 {
            (None, "the table's step (the first two segments)")
        } else {
            let elapsed = now_ms.saturating_sub(st.update_ms);
            let mut next = st.step;
            let reason = if elapsed < SEGMENT_DURATION_MS {
                if next.saturating_mul(2) <= MAX_DYNAMIC_STEP {
                    next *= 2;
                    "doubled: the last segment lasted under 15 min"
                } else {
                    "kept: at the largest step, 1,000,000"
                }
            } else if elapsed < 2 * SEGMENT_DURATION_MS {
                "kept: the last segment lasted 15-30 min"
            } else if next / 2 >= st.min_step {
                next /= 2;
                "halved: the last segment lasted over 30 min"
            } else {
                "kept: at the table's step, the smallest"
            };
            (Some(next.max(st.min_step).max(1)), reason)
        };
        // The floor from what is measured (nothing before the first claim).
        let covering = if st.initialised {
            let since = if st.update_ms == 0 {
                st.first_ms
            } else {
                st.update_ms
            };
            let elapsed_ms = now_ms.saturating_sub(since).max(1) as f64;
            let per_ms = taken.saturating_sub(st.taken_at_update) as f64 / elapsed_ms;
            let claim_ms = st.last_claim_us.unwrap_or(0) as f64 / 1000.0;
            ((per_ms * claim_ms * CLAIMS_COVERED as f64).ceil() as i64).min(MAX_COVERING_STEP)
        } else {
            0
        };
        let floor_wins = covering > leaf_step.unwrap_or(st.min_step.max(1));
        let (increment, reason) = match leaf_step {
            _ if floor_wins => (
                Increment::Custom(covering),
                "8 claim times at the rate: the claims are slow for it",
            ),
            Some(step) => (Increment::Custom(step), reason),
            None => (Increment::TableStep, reason),
        };
        LoadPlan {
            increment,
            update_ms: if st.initialised { now_ms } else { 0 },
            first_ms: now_ms,
            taken,
            leaf_step,
            reason,
        }
    }

    /// Records a load's outcome: on success fills the other segment and marks it ready.
    /// Returns the failure, if any (so the loader schedules a retry).
    pub(crate) fn finish_load(
        &self,
        plan: LoadPlan,
        result: Result<Claim, SegmentError>,
    ) -> Option<String> {
        let mut st = self.lock();
        let outcome = match result {
            Ok(claim) => {
                let cur = self.hot.0.current.load(SeqCst);
                self.segments[1 - cur].refill(&claim);
                st.step = plan.leaf_step.unwrap_or(claim.table_step);
                st.step_reason = plan.reason;
                st.min_step = claim.table_step;
                if !st.initialised {
                    st.first_ms = plan.first_ms;
                }
                st.update_ms = plan.update_ms;
                st.taken_at_update = plan.taken;
                st.initialised = true;
                st.next_ready = true;
                st.last_error = None;
                st.last_failure = None;
                st.went_backwards = None;
                st.load_failing = false;
                // The database answers again: batches need not wait for a probe of their own.
                st.batch_failure = None;
                None
            }
            Err(e) => {
                if let SegmentError::WentBackwards {
                    db, start, mark, ..
                } = &e
                {
                    st.went_backwards = Some((db.clone(), *start, *mark));
                }
                let msg = e.to_string();
                st.load_failing = e.is_transient();
                if let SegmentError::Exhausted {
                    max_id,
                    increment,
                    ceiling,
                    ..
                } = e
                {
                    let buffered = self.buffered_locked(&st);
                    // Said once: a used-up tag stays used up.
                    if st.exhausted.replace((max_id, increment, ceiling)).is_none() {
                        if buffered == 0 {
                            tracing::warn!("tag {:?} is used up: {msg}", self.tag);
                        } else {
                            tracing::warn!(
                                "tag {:?} has no IDs left to claim; the last {buffered} in this server's buffers are issued, then it is used up",
                                self.tag
                            );
                        }
                    }
                    // Not a failure while the buffers still issue: the tag is running out.
                    if buffered > 0 {
                        st.loading = false;
                        self.next_busy.store(true, SeqCst);
                        self.changed.notify_all();
                        return None;
                    }
                } else {
                    tracing::warn!("loading a segment for tag {:?} failed: {msg}", self.tag);
                }
                st.last_error = Some(msg.clone());
                st.last_failure = Some(Instant::now());
                st.last_failure_unix_ms = Some(unix_now_ms());
                st.failures += 1;
                Some(msg)
            }
        };
        st.loading = false;
        // Ready, or failed and waiting for the loader's retry: either way the hot path must not
        // ask for another load on every ID meanwhile.
        self.next_busy.store(true, SeqCst);
        self.changed.notify_all();
        outcome
    }
}
