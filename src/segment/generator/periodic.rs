//! Periodic tags in the generator (issue 48 item 3): a request for a periodic tag is routed to
//! the buffer of the period's row (`TAG@PERIOD`) by the generator's clock, and the sequence it
//! takes is composed into `<period><code><sequence>`. Each period's buffer is the router's own,
//! reachable by no tag name (a request for `TAG@PERIOD` itself is refused as a period row), and
//! the next period's row is opened and its first segment claimed ahead of the boundary
//! ([`PREFETCH_AHEAD_MS`]), so the first ID of a day does not wait for the database.
//!
//! Uniqueness never depends on the clock: a generator whose clock is late issues from the earlier
//! period's row, one that is ahead from the later one's, and each row's claims are exclusive.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};

use super::inner::{Inner, Msg, locked};
use super::take::next_from;
use crate::idformat::opaque::IdKey;
use crate::segment::buffer::Slow;
use crate::segment::{
    Issuing, PeriodIssuing, PeriodicShape, SegmentBuffer, SegmentError, open_period,
};

/// How long before a period ends the next period's row is opened and its first segment claimed.
pub const PREFETCH_AHEAD_MS: i64 = 30_000;

/// Periods a router keeps open at once: the current, the next (prefetched), and one a late
/// clock may still ask for.
const OPEN_PERIODS: usize = 3;

/// One period in use: its issuing and its own buffer.
struct OpenPeriod {
    issuing: PeriodIssuing,
    buffer: Arc<SegmentBuffer>,
}

/// The period a batch of a periodic tag comes from: its buffer, and how a dense sequence taken
/// from it becomes an ID.
pub(super) struct PeriodBatch {
    router: Arc<PeriodRouter>,
    period: Arc<OpenPeriod>,
}

impl PeriodBatch {
    /// The period's buffer.
    pub(super) fn buffer(&self) -> &Arc<SegmentBuffer> {
        &self.period.buffer
    }

    /// The ID of dense sequence `dense`.
    pub(super) fn id(&self, dense: u64) -> Result<u64, SegmentError> {
        self.router.id(&self.period, dense)
    }
}

/// A periodic tag as the generator issues it.
pub struct PeriodRouter {
    tag: Box<str>,
    shape: PeriodicShape,
    key: Option<IdKey>,
    periods: Mutex<Vec<Arc<OpenPeriod>>>,
    /// The period whose prefetch was asked for last (0: none yet).
    prefetched: AtomicU64,
}

impl fmt::Debug for PeriodRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeriodRouter")
            .field("tag", &self.tag)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl PeriodRouter {
    /// The router of `tag`, of shape `shape`, with the key of an opaque sequence (checked by
    /// the caller against the shape's).
    pub(crate) fn new(tag: &str, shape: PeriodicShape, key: Option<IdKey>) -> PeriodRouter {
        PeriodRouter {
            tag: tag.into(),
            shape,
            key,
            periods: Mutex::new(Vec::new()),
            prefetched: AtomicU64::new(0),
        }
    }

    fn at(inner: &Inner, ahead_ms: i64) -> DateTime<Utc> {
        let ms = inner.clock.now_ms().saturating_add(ahead_ms);
        DateTime::from_timestamp_millis(ms).unwrap_or_default()
    }

    fn number_at(&self, at: DateTime<Utc>) -> u64 {
        self.shape.period.number_at(at, self.shape.zone)
    }

    fn find(&self, number: u64) -> Option<Arc<OpenPeriod>> {
        locked(&self.periods)
            .iter()
            .find(|p| p.issuing.number == number)
            .cloned()
    }

    /// The period `number`, opened (its row made, on first use) when it is not yet.
    fn open(
        &self,
        inner: &Inner,
        number: u64,
        at: DateTime<Utc>,
    ) -> Result<Arc<OpenPeriod>, SegmentError> {
        if let Some(open) = self.find(number) {
            return Ok(open);
        }
        let issuing = open_period(&*inner.store, &self.tag, &self.shape, self.key.as_ref(), at)?;
        let buffer = Arc::new(SegmentBuffer::new(issuing.row.as_str()));
        // The row's dense sequence is composed here, not by the buffer.
        buffer.set_issuing(Issuing::Plain);
        let open = Arc::new(OpenPeriod { issuing, buffer });
        let mut periods = locked(&self.periods);
        if let Some(raced) = periods.iter().find(|p| p.issuing.number == number) {
            return Ok(raced.clone());
        }
        periods.push(open.clone());
        // The oldest goes first: its unused IDs are skipped, never issued again.
        periods.sort_by_key(|p| p.issuing.number);
        while periods.len() > OPEN_PERIODS {
            periods.remove(0);
        }
        Ok(open)
    }

    /// The ID of dense sequence `dense` of `period`.
    fn id(&self, period: &OpenPeriod, dense: u64) -> Result<u64, SegmentError> {
        let sequence = period.issuing.sequence(&self.tag, dense)?;
        Ok(self.shape.compose(period.issuing.number, sequence))
    }

    /// The next ID without waiting: the period's buffer has one, and the period is open.
    pub(super) fn try_next_id(self: &Arc<Self>, inner: &Inner) -> Option<u64> {
        let number = self.number_at(Self::at(inner, 0));
        let period = self.find(number)?;
        self.prefetch(inner, number);
        let dense = super::take::take(&period.buffer, inner)?;
        self.id(&period, dense).ok()
    }

    /// The next ID: from the period the clock says, opened on first use.
    pub(super) fn next_id(self: &Arc<Self>, inner: &Inner) -> Result<u64, SegmentError> {
        let at = Self::at(inner, 0);
        let number = self.number_at(at);
        let period = self.open(inner, number, at)?;
        self.prefetch(inner, number);
        let dense = next_from(&period.buffer, inner)?;
        self.id(&period, dense)
    }

    /// The period a batch is taken from (opened on first use).
    pub(super) fn batch_period(
        self: &Arc<Self>,
        inner: &Inner,
    ) -> Result<PeriodBatch, SegmentError> {
        let at = Self::at(inner, 0);
        let number = self.number_at(at);
        let period = self.open(inner, number, at)?;
        self.prefetch(inner, number);
        Ok(PeriodBatch {
            router: self.clone(),
            period,
        })
    }

    /// Asks the loader, once per period, to open the next period's row and claim its first
    /// segment when the boundary is less than [`PREFETCH_AHEAD_MS`] away.
    fn prefetch(self: &Arc<Self>, inner: &Inner, current: u64) {
        let next = self.number_at(Self::at(inner, PREFETCH_AHEAD_MS));
        if next == current || self.prefetched.swap(next, Ordering::Relaxed) == next {
            return;
        }
        let _ = inner.tx.send(Msg::OpenPeriod(self.clone(), next));
    }

    /// On the loader thread: opens period `number` and starts its first load, without waiting.
    pub(super) fn open_ahead(&self, inner: &Inner, number: u64) -> Option<Arc<SegmentBuffer>> {
        let at = Self::at(inner, PREFETCH_AHEAD_MS);
        if self.number_at(at) != number {
            return None;
        }
        match self.open(inner, number, at) {
            Ok(period) => match period.buffer.slow_path(Instant::now()) {
                Ok(Slow::StartLoad) => Some(period.buffer.clone()),
                _ => None,
            },
            Err(e) => {
                tracing::warn!(
                    "opening period {number} of tag {:?} ahead of time failed (it opens on first use): {e}",
                    self.tag
                );
                None
            }
        }
    }
}
