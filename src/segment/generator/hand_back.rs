//! The graceful stop: the IDs that never went out go back to the table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::SegmentGenerator;
use super::inner::locked;
use crate::segment::AllocStoreExt;
use crate::segment::SegmentBuffer;

/// What [`SegmentGenerator::hand_back`] gave back to the table.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HandBack {
    /// Tags whose `max_id` went back down.
    pub tags: u64,
    /// IDs given back: the tags' next claims start with them.
    pub returned: u64,
    /// IDs that never went out and could not go back (another claim came after ours, the
    /// database did not answer, or the time ran out): skipped for good, never issued.
    pub wasted: u64,
    /// Why IDs could not go back, when the database failed.
    pub error: Option<String>,
}

impl SegmentGenerator {
    /// Stops issuing and gives the IDs that never went out back to the table, so that the
    /// next claim of each tag (this server restarted, or another) starts with them instead of
    /// skipping them: what a graceful stop does (Leaf throws them away on every restart).
    ///
    /// The loader is stopped first (a claim under way finishes and is counted), then each
    /// buffer is closed, so that no ID is taken from it after (a take that raced ahead keeps
    /// its ID, below what goes back), and its unused ranges go back newest first, each by one
    /// compare-and-set ([`RowUpdate::HandBack`](crate::segment::RowUpdate::HandBack)): `max_id` moves down only while it is still
    /// where our claim left it, so a claim anybody made after ours keeps everything. Gives up
    /// at the first failure that means the database is not answering, or after `within`; what
    /// could not go back is skipped for good. Afterwards every request answers
    /// [`SegmentError::Stopped`](crate::segment::SegmentError::Stopped), handles included.
    pub fn hand_back(&self, within: Duration) -> HandBack {
        self.stop_loader();
        let inner = &*self.inner;
        let buffers: Vec<Arc<SegmentBuffer>> = locked(&inner.active)
            .iter()
            .map(|a| a.buffer.clone())
            .collect();
        let deadline = Instant::now() + within;
        let mut report = HandBack::default();
        for buffer in buffers {
            let mut chain = true;
            let mut moved = false;
            for range in buffer.close_for_hand_back() {
                let len = range.end - range.start;
                if len == 0 {
                    continue;
                }
                let (Ok(from), Ok(to)) = (i64::try_from(range.end), i64::try_from(range.start))
                else {
                    report.wasted += len;
                    continue;
                };
                chain = chain && report.error.is_none() && Instant::now() < deadline;
                if chain {
                    match inner.store.hand_back(buffer.tag(), from, to) {
                        Ok(true) => {
                            report.returned += len;
                            moved = true;
                            continue;
                        }
                        // Claimed past it since: this range, and every older one, stays skipped.
                        Ok(false) => chain = false,
                        Err(e) => {
                            tracing::warn!(
                                "handing tag {:?}'s unused IDs back failed: {e}",
                                buffer.tag()
                            );
                            report.error = Some(e.to_string());
                        }
                    }
                }
                report.wasted += len;
            }
            report.tags += u64::from(moved);
        }
        report
    }
}
