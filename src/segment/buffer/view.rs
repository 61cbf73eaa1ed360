//! Monitoring snapshots of a tag's buffer, and the tag's health decided from one.

use serde::Serialize;

use crate::segment::{Bounds, Headroom, HeadroomStatus};

/// A monitoring snapshot of one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SegmentView {
    /// The next ID it would hand out (`max` once used up).
    pub value: u64,
    /// One past its last ID.
    pub max: u64,
    /// Its size.
    pub step: u64,
}

/// A monitoring snapshot of a tag's buffer (Leaf's `/cache` view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentBufferView {
    /// The tag.
    pub tag: String,
    /// Whether a segment was ever loaded.
    pub init_ok: bool,
    /// Index (0 or 1) of the segment IDs come from.
    pub pos: usize,
    /// Both segments.
    pub segments: [SegmentView; 2],
    /// Whether the other segment is loaded and waiting.
    pub next_ready: bool,
    /// Whether a load is queued or running.
    pub loading: bool,
    /// The step the next dynamic claim would start from.
    pub step: i64,
    /// The table's step.
    pub min_step: i64,
    /// The last load failure, cleared by the next success.
    pub last_error: Option<String>,
    /// The tag is used up: no ID is left below 2^63-1 (or its region's block's end), in the
    /// table or in the buffers (not a failure to recover from).
    pub exhausted: bool,
    /// IDs the buffers hold: the current segment's rest and the loaded next one.
    pub buffered: u64,
    /// Why the step last became what it is (doubled, kept, halved, the table's).
    pub step_reason: &'static str,
    /// When the last failure happened (Unix ms), while it is the last outcome.
    pub last_error_unix_ms: Option<i64>,
    /// IDs handed out since the buffer was made (a batch's IDs once taken).
    pub issued: u64,
    /// Claims made for the tag (background loads and batch claims).
    pub claims: u64,
    /// Claims that failed.
    pub claim_failures: u64,
    /// How long the last claim took (µs).
    pub last_claim_us: Option<u64>,
    /// Where the store keeps the tag's claims (its region's block): what headroom counts to.
    #[serde(skip)]
    pub bounds: Bounds,
}

impl SegmentBufferView {
    /// The view of a tag that has no buffer: nothing loaded, nothing issued.
    pub fn unloaded(tag: &str) -> SegmentBufferView {
        SegmentBufferView {
            tag: tag.to_string(),
            init_ok: false,
            pos: 0,
            segments: [SegmentView::default(); 2],
            next_ready: false,
            loading: false,
            step: 0,
            min_step: 0,
            last_error: None,
            exhausted: false,
            buffered: 0,
            step_reason: "",
            last_error_unix_ms: None,
            issued: 0,
            claims: 0,
            claim_failures: 0,
            last_claim_us: None,
            bounds: Bounds::UNBOUNDED,
        }
    }

    /// Whether the tag cannot issue now: its current segment is used up, the next is not
    /// loaded, and its last load failed (a used-up tag is not counted: it never will again).
    pub fn stuck(&self) -> bool {
        let cur = self.segments[self.pos & 1];
        cur.value >= cur.max && !self.next_ready && self.last_error.is_some() && !self.exhausted
    }

    /// A loaded tag's room left: the IDs its buffers hold and those its 63-bit range (its
    /// region's block with a region) holds above the highest max_id this buffer claimed (the end
    /// of its newest segment), with the step its next claim starts from; `None` before a segment
    /// was loaded.
    pub fn headroom(&self) -> Option<Headroom> {
        if !self.init_ok {
            return None;
        }
        let max_id = self.segments.iter().map(|s| s.max).max().unwrap_or(0);
        let max_id = i64::try_from(max_id).unwrap_or(i64::MAX);
        let table = self.bounds.ids_left(max_id);
        let buffered = i64::try_from(self.buffered).unwrap_or(i64::MAX);
        Some(Headroom::of_left(
            table.saturating_add(buffered),
            self.step.max(self.min_step),
        ))
    }

    /// Whether this server's last claim left the table nothing to claim (2^63-1 or the region's
    /// block end reached): the tag is used up once its buffers are.
    pub fn table_used_up(&self) -> bool {
        let max_id = self.segments.iter().map(|s| s.max).max().unwrap_or(0);
        self.init_ok
            && self
                .bounds
                .ids_left(i64::try_from(max_id).unwrap_or(i64::MAX))
                == 0
    }

    /// The tag's health, decided here for readiness, the status page and `/metrics` alike;
    /// `went_backwards` is whether the claim guard refuses the tag now
    /// ([`crate::segment::ClaimGuard::refusals`]).
    pub fn health(&self, went_backwards: bool) -> TagHealth {
        // Used up: said by the last load, or nothing left by this server's own count.
        if self.exhausted || self.headroom().is_some_and(|h| h.ids_left == 0) {
            TagHealth::Exhausted
        } else if went_backwards {
            TagHealth::WentBackwards
        } else if self.last_error.is_some() {
            TagHealth::Failing
        } else if !self.init_ok && !self.loading {
            TagHealth::Idle
        } else if self
            .headroom()
            .is_some_and(|h| h.status != HeadroomStatus::Ok)
        {
            TagHealth::Low
        } else {
            TagHealth::Ok
        }
    }
}

/// What a tag can do now (see [`SegmentBufferView::health`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TagHealth {
    /// A claim came back below an earlier one: refused until `leafctl tag bump`.
    WentBackwards,
    /// Its last claim failed (the database down, say); it issues from its buffers while they
    /// last.
    Failing,
    /// No ID is left below 2^63-1.
    Exhausted,
    /// Loaded and issuing, but running out of its range: fewer than
    /// [`LOW_CLAIMS`](crate::segment::LOW_CLAIMS) claims of its step left (its
    /// [`SegmentBufferView::headroom`] is not `ok`).
    Low,
    /// Loaded, and its last claim succeeded.
    Ok,
    /// Nothing loaded: not asked for since the generator started, or its buffers went after a
    /// long idle time.
    Idle,
}

impl TagHealth {
    /// The name used in JSON and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            TagHealth::WentBackwards => "went_backwards",
            TagHealth::Failing => "failing",
            TagHealth::Exhausted => "exhausted",
            TagHealth::Low => "low",
            TagHealth::Ok => "ok",
            TagHealth::Idle => "idle",
        }
    }

    /// Whether an operator should look at it (it sorts first on the status page and always gets
    /// its own series in `/metrics`, within the limit).
    pub fn needs_attention(self) -> bool {
        matches!(
            self,
            TagHealth::WentBackwards | TagHealth::Failing | TagHealth::Exhausted
        )
    }
}
