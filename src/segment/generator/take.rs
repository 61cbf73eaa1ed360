//! The path an ID takes: the current segment first, a load asked for when it runs low, the
//! tag marked as moved for monitoring; waiting for a load only when the segment is used up.

use std::sync::Arc;
use std::time::Instant;

use super::inner::{Inner, Msg, locked};
use crate::segment::buffer::Slow;
use crate::segment::{Issuing, SegmentBuffer, SegmentError};

/// The hot path: an ID from the current segment, the preload asked for once 10% is used, and
/// the tag listed as moved for monitoring (once per sample).
#[inline(always)]
pub(super) fn take(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Option<u64> {
    let Some((dense, preload)) = buffer.try_take() else {
        return periodic_take(buffer, inner);
    };
    if preload {
        request_preload(buffer, inner);
    }
    if !buffer.moved() {
        note_moved(buffer, inner);
    }
    match buffer.issue(dense) {
        Ok(id) => Some(id),
        Err(e) => unissuable(buffer, dense, e),
    }
}

/// A buffer with nothing to take: a periodic tag's own buffer (which never holds IDs) routes to
/// the buffer of the period now; any other has none.
#[cold]
fn periodic_take(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Option<u64> {
    match buffer.issuing() {
        Some(Issuing::Periodic(router)) => {
            let id = router.try_next_id(inner)?;
            routed(buffer, inner, 1);
            Some(id)
        }
        _ => None,
    }
}

/// `n` IDs of a periodic tag issued from its periods' buffers, counted as its own buffer's
/// ([`SegmentBuffer::count_routed`]) and the tag listed as moved for monitoring.
pub(super) fn routed(buffer: &Arc<SegmentBuffer>, inner: &Inner, n: u64) {
    buffer.count_routed(n);
    if !buffer.moved() {
        note_moved(buffer, inner);
    }
}

/// A dense ID taken that has no ID of the tag's shape: claims stop at an opaque tag's capacity,
/// so this is a bug. The ID is skipped (never issued), said loudly, and the caller waits on.
#[cold]
fn unissuable(buffer: &SegmentBuffer, dense: u64, e: SegmentError) -> Option<u64> {
    tracing::error!("tag {:?}: dense ID {dense} skipped: {e}", buffer.tag());
    None
}

#[cold]
pub(super) fn note_moved(buffer: &Arc<SegmentBuffer>, inner: &Inner) {
    if buffer.mark_moved() {
        locked(&inner.moved).push(buffer.clone());
    }
}

#[inline(always)]
pub(super) fn next_from(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Result<u64, SegmentError> {
    if let Some(id) = take(buffer, inner) {
        return Ok(id);
    }
    next_slow(buffer, inner)
}

#[cold]
pub(super) fn request_preload(buffer: &Arc<SegmentBuffer>, inner: &Inner) {
    if buffer.claim_preload() && inner.tx.send(Msg::Load(buffer.clone())).is_err() {
        buffer.abandon_load("the generator has been stopped");
    }
}

#[cold]
#[inline(never)]
fn next_slow(buffer: &Arc<SegmentBuffer>, inner: &Inner) -> Result<u64, SegmentError> {
    if let Some(Issuing::Periodic(router)) = buffer.issuing() {
        return router.next_id(inner).inspect(|_| routed(buffer, inner, 1));
    }
    let deadline = Instant::now() + inner.wait;
    // Counted once when the request waits for a claim: one it starts, or one under way.
    let mut counted = false;
    let mut waits = || {
        if !std::mem::replace(&mut counted, true) {
            inner
                .load_waits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    loop {
        if let Some(id) = take(buffer, inner) {
            return Ok(id);
        }
        let slow = match buffer.slow_path(deadline) {
            Ok(slow) => slow,
            Err(e) => {
                // The first load of a periodic tag's own buffer finds out that it is one.
                if let Some(Issuing::Periodic(router)) = buffer.issuing() {
                    return router.next_id(inner).inspect(|_| routed(buffer, inner, 1));
                }
                // The loader wakes this caller before it lists the tag as troubled: list it
                // here too, so what `/metrics` and the status page say next agrees with this
                // answer.
                inner.update_troubled(buffer);
                return Err(e);
            }
        };
        match slow {
            Slow::Retry => {}
            Slow::Waited => waits(),
            Slow::StartLoad => {
                waits();
                if inner.tx.send(Msg::Load(buffer.clone())).is_err() {
                    buffer.abandon_load("the generator has been stopped");
                }
            }
        }
    }
}
