//! The batch path: exactly `n` IDs from the buffers, or a claim of its own refused while the
//! database is failing.

use std::ops::Range;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Instant;

use super::{BATCH_RETRY_AFTER, SegmentBuffer};
use crate::segment::{Claim, SegmentError};

impl SegmentBuffer {
    /// The batch path: exactly `n` IDs from the buffers, or none taken at all. From the current
    /// segment in one compare-and-swap when it holds `n`; else, when the loaded next segment
    /// makes up the difference, the current one's rest and the next one's start (under the state
    /// lock, switching to it). The flag says whether the other segment should now be preloaded.
    /// `None` leaves both segments as they were, for single IDs: a batch larger than the buffers
    /// is claimed on its own ([`crate::segment::SegmentGenerator::next_ids`]), so a batch that
    /// fails (the database down) costs the buffers nothing.
    pub(crate) fn try_take_exact(&self, n: u64) -> Option<(Vec<Range<u64>>, bool)> {
        let idx = self.hot.0.current.load(SeqCst);
        if let Some((range, past)) = self.segments[idx].take_exact(n) {
            return Some((
                std::iter::once(range).collect(),
                past && !self.next_busy.load(SeqCst),
            ));
        }
        let mut st = self.lock();
        if !st.next_ready || st.closed {
            return None;
        }
        let cur = self.hot.0.current.load(SeqCst);
        let (current, next) = (&self.segments[cur], &self.segments[1 - cur]);
        let next_left = next.left();
        let fits = |tail: u64| {
            n.checked_sub(tail)
                .is_some_and(|rest| rest <= next_left.end - next_left.start)
        };
        let tail_guess = current.left();
        if !fits(tail_guess.end - tail_guess.start) {
            return None;
        }
        // Single IDs may take from the current segment until it is closed: the tail is what
        // the close returns. Nothing takes from it after the close, so it can be reopened.
        let tail = current.close();
        let tail_len = tail.end - tail.start;
        if tail_len >= n {
            // The current segment was switched under the fast path's feet: it holds them all.
            current.reopen(tail.start + n);
            return Some((std::iter::once(tail.start..tail.start + n).collect(), false));
        }
        if !fits(tail_len) {
            current.reopen(tail.start);
            return None;
        }
        // Nothing takes from the next segment before the switch below (takers read the current
        // index), so its start is still free; a take from a long-stale index could have wasted
        // some, and then the batch gives the tail back and goes to the table.
        let Some((head, _)) = next.take_exact(n - tail_len) else {
            current.reopen(tail.start);
            return None;
        };
        self.switch_locked(&mut st);
        let ranges = [tail, head].into_iter().filter(|r| !r.is_empty()).collect();
        Some((ranges, !self.next_busy.load(SeqCst)))
    }

    /// Why a batch of `count` that the buffers cannot cover is refused without asking the
    /// database; `None`: claim. Refused while the tag's loads are failing (the loader is
    /// retrying them) and after a batch claim failed, until one succeeds: meanwhile one batch at
    /// most every [`BATCH_RETRY_AFTER`] is let through to ask the database again, and the others
    /// are answered at once. Refused for good once the generator stopped.
    pub(crate) fn batch_refusal(&self, count: u64) -> Option<SegmentError> {
        let mut st = self.lock();
        if st.closed {
            return Some(SegmentError::Stopped {
                tag: self.tag.to_string(),
            });
        }
        let cause = if st.load_failing {
            st.last_error.clone()?
        } else {
            let probe_due = !st.batch_probe
                && st
                    .batch_failure
                    .as_ref()
                    .is_some_and(|(at, _)| at.elapsed() >= BATCH_RETRY_AFTER);
            match &st.batch_failure {
                None => return None,
                Some(_) if probe_due => {
                    st.batch_probe = true;
                    return None;
                }
                Some((_, why)) => why.clone(),
            }
        };
        Some(SegmentError::BatchNotReady {
            tag: self.tag.to_string(),
            count,
            buffered: self.buffered_locked(&st),
            cause,
        })
    }

    /// Records a batch claim made past the buffers: its IDs count as issued; a failure for a
    /// passing reason refuses the next batches ([`SegmentBuffer::batch_refusal`]).
    /// A batch claim took the table's last IDs (its `max_id` reached `ceiling`, 2^63-1 or the
    /// region's block end): the tag is used up once its buffers are, as a load that found
    /// nothing left would have said.
    pub(crate) fn note_table_used_up(&self, max_id: i64, ceiling: i64) {
        let mut st = self.lock();
        if st.exhausted.is_none() {
            st.exhausted = Some((max_id, 1, ceiling));
            // Said once, as a load that finds nothing left says it.
            tracing::warn!(
                "tag {:?} has no IDs left to claim (a batch took the last ones); the last {} in this server's buffers are issued, then it is used up",
                self.tag,
                self.buffered_locked(&st)
            );
        }
    }

    pub(crate) fn finish_batch(&self, result: &Result<Claim, SegmentError>) {
        let mut st = self.lock();
        st.batch_probe = false;
        match result {
            Ok(claim) => {
                st.retired = st.retired.saturating_add(claim.len());
                st.batch_claimed = st.batch_claimed.saturating_add(claim.len());
                st.batch_failure = None;
            }
            Err(e) if e.is_transient() => st.batch_failure = Some((Instant::now(), e.to_string())),
            Err(_) => {}
        }
    }
}
