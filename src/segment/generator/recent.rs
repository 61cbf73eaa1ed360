//! A thread's memory of the buffers it used last: asked for one of those tags again,
//! `next_id(tag)` compares names instead of looking the tag up.

use std::cell::RefCell;
use std::sync::Arc;

use super::inner::Inner;
use super::take::take;
use crate::segment::SegmentBuffer;

/// Byte equality without a call out: 8 bytes at a time, and short names by overlapping loads
/// (like the hash itself) instead of a loop over bytes.
#[inline(always)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Lengths are checked above, so every load is in bounds; a failed one only misses.
    let load8 = |s: &[u8], i: usize| s.get(i..).and_then(|s| s.first_chunk::<8>()).copied();
    let load4 = |s: &[u8], i: usize| s.get(i..).and_then(|s| s.first_chunk::<4>()).copied();
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => {
            load4(a, 0).is_some_and(|x| Some(x) == load4(b, 0))
                && load4(a, n - 4).is_some_and(|x| Some(x) == load4(b, n - 4))
        }
        _ => {
            let mut i = 0;
            while i + 8 < n {
                if load8(a, i).is_none_or(|x| Some(x) != load8(b, i)) {
                    return false;
                }
                i += 8;
            }
            load8(a, n - 8).is_some_and(|x| Some(x) == load8(b, n - 8))
        }
    }
}

/// Buffers a thread remembers.
const RECENT_BUFFERS: usize = 4;

thread_local! {
    /// The buffers this thread used last, with their generator's id and version: asked for one
    /// of these tags again, `next_id(tag)` compares names instead of looking the tag up
    /// (checking the version is one plain load; the table's lookup takes a lock). A thread
    /// keeps them alive until it next calls `next_id(tag)` or ends.
    pub(super) static RECENT: RefCell<Recent> = const {
        RefCell::new(Recent {
            generator: 0,
            version: 0,
            buffers: [const { None }; RECENT_BUFFERS],
            next: 0,
            last: 0,
        })
    };
}

/// A thread's memory of the buffers it used last (see [`RECENT`]).
pub(super) struct Recent {
    pub(super) generator: u64,
    pub(super) version: u64,
    buffers: [Option<Arc<SegmentBuffer>>; RECENT_BUFFERS],
    /// Where the next buffer goes (the oldest).
    next: usize,
    /// The slot of the tag asked for last (asked for again, it is the one compared first).
    last: usize,
}

impl Recent {
    #[inline(always)]
    pub(super) fn find(&mut self, tag: &str) -> Option<&Arc<SegmentBuffer>> {
        let is = |b: &Option<Arc<SegmentBuffer>>| {
            b.as_ref()
                .is_some_and(|b| same_bytes(b.tag().as_bytes(), tag.as_bytes()))
        };
        if !self.buffers.get(self.last).is_some_and(is) {
            self.last = self.find_other(tag)?;
        }
        self.buffers.get(self.last)?.as_ref()
    }

    /// The slot of `tag` other than the last one asked for.
    fn find_other(&self, tag: &str) -> Option<usize> {
        self.buffers.iter().position(|b| {
            b.as_ref()
                .is_some_and(|b| same_bytes(b.tag().as_bytes(), tag.as_bytes()))
        })
    }

    pub(super) fn remember(&mut self, buffer: Arc<SegmentBuffer>) -> Option<&Arc<SegmentBuffer>> {
        let i = self.next % RECENT_BUFFERS;
        self.next = i + 1;
        self.last = i;
        let slot = self.buffers.get_mut(i)?;
        *slot = Some(buffer);
        slot.as_ref()
    }

    pub(super) fn reset(&mut self, generator: u64, version: u64) {
        self.generator = generator;
        self.version = version;
        self.buffers = [const { None }; RECENT_BUFFERS];
        self.next = 0;
        self.last = 0;
    }
}

/// [`SegmentGenerator::try_next_id`](super::SegmentGenerator::try_next_id) for a tag the thread does not remember: from the table
/// (a lock), remembered for next time.
#[cold]
pub(super) fn remember_and_take(recent: &mut Recent, inner: &Inner, tag: &str) -> Option<u64> {
    let buffer = inner.table_buffer(tag)?;
    take(recent.remember(buffer)?, inner)
}
