//! The generator's table of tags: every tag of `leaf_alloc` by name, and the buffer of each tag
//! that was asked for.
//!
//! A million tags must cost little while idle, so a tag that was never asked for holds its name
//! and a few bytes (an [`Entry`] in a hash table: about 60 bytes with its name), and its
//! [`SegmentBuffer`] (about 1 KB) is made on first use. The table is split into [`SHARDS`]
//! shards, each a hash table behind its own lock: adding or removing one tag changes one
//! shard in place (no copy of the table), and a listing (`/cache`, the status page) takes one
//! shard's lock at a time. Requests rarely come here: each thread remembers the buffers it used
//! last (see `generator.rs`).

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use hashbrown::HashTable;

use super::SegmentBuffer;

/// Shards of the table: at a million tags, about 4,000 each, so one shard's listing under its
/// lock stays short.
pub(crate) const SHARDS: usize = 256;

/// One tag.
pub(crate) struct Entry {
    name: Box<str>,
    /// Made on first use; dropped again after a long idle time.
    buffer: Option<Arc<SegmentBuffer>>,
    /// The tag refresh that last found the tag in the table (see [`TagTable::sweep`]).
    seen: AtomicU32,
}

impl Entry {
    /// The tag.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Its buffer, if it was asked for.
    pub(crate) fn buffer(&self) -> Option<&Arc<SegmentBuffer>> {
        self.buffer.as_ref()
    }
}

/// A shard on its own cache lines, so that two threads on two shards do not slow each other.
#[repr(align(128))]
struct Shard(RwLock<HashTable<Entry>>);

/// Every known tag; see the module documentation.
pub(crate) struct TagTable {
    shards: Box<[Shard]>,
    hasher: hashbrown::DefaultHashBuilder,
    len: AtomicUsize,
    /// The current tag refresh.
    epoch: AtomicU32,
}

impl TagTable {
    pub(crate) fn new() -> TagTable {
        TagTable {
            shards: (0..SHARDS)
                .map(|_| Shard(RwLock::new(HashTable::new())))
                .collect(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            len: AtomicUsize::new(0),
            epoch: AtomicU32::new(0),
        }
    }

    /// How many tags the table holds.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    fn hash(&self, tag: &str) -> u64 {
        self.hasher.hash_one(tag)
    }

    /// The shard of a hash: bits that neither the shard's bucket index (the low bits) nor its
    /// control bytes (the top seven) use, so a shard's entries still spread over its table.
    fn shard(&self, hash: u64) -> &RwLock<HashTable<Entry>> {
        &self.shards[(hash >> 40) as usize % SHARDS].0
    }

    fn read(lock: &RwLock<HashTable<Entry>>) -> RwLockReadGuard<'_, HashTable<Entry>> {
        lock.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(lock: &RwLock<HashTable<Entry>>) -> RwLockWriteGuard<'_, HashTable<Entry>> {
        lock.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The buffer of a tag in the table, made on its first use (`true` then); `None` when the
    /// table does not hold the tag.
    pub(crate) fn buffer(&self, tag: &str) -> Option<(Arc<SegmentBuffer>, bool)> {
        let hash = self.hash(tag);
        let lock = self.shard(hash);
        {
            let shard = Self::read(lock);
            let entry = shard.find(hash, |e| *e.name == *tag)?;
            if let Some(b) = &entry.buffer {
                return Some((b.clone(), false));
            }
        }
        let mut shard = Self::write(lock);
        let entry = shard.find_mut(hash, |e| *e.name == *tag)?;
        match &entry.buffer {
            Some(b) => Some((b.clone(), false)), // made meanwhile
            None => {
                let b = Arc::new(SegmentBuffer::new(entry.name.clone()));
                entry.buffer = Some(b.clone());
                Some((b, true))
            }
        }
    }

    /// The entry of `tag`, if the table holds it: its buffer, if it has one.
    pub(crate) fn get(&self, tag: &str) -> Option<Option<Arc<SegmentBuffer>>> {
        let hash = self.hash(tag);
        Self::read(self.shard(hash))
            .find(hash, |e| *e.name == *tag)
            .map(|e| e.buffer.clone())
    }

    /// Whether `buffer` is still its tag's buffer (not dropped, the tag not removed).
    pub(crate) fn holds(&self, buffer: &Arc<SegmentBuffer>) -> bool {
        self.get(buffer.tag())
            .flatten()
            .is_some_and(|b| Arc::ptr_eq(&b, buffer))
    }

    /// The tags of shard `i` (of [`SHARDS`]) and their buffers, copied out under its read lock,
    /// for a listing that takes its time (serialising, sending) without holding the lock.
    pub(crate) fn shard_snapshot(&self, i: usize) -> Vec<(Box<str>, Option<Arc<SegmentBuffer>>)> {
        match self.shards.get(i) {
            Some(shard) => Self::read(&shard.0)
                .iter()
                .map(|e| (e.name.clone(), e.buffer.clone()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Whether the table holds `tag`.
    #[cfg(test)]
    pub(crate) fn contains(&self, tag: &str) -> bool {
        let hash = self.hash(tag);
        Self::read(self.shard(hash))
            .find(hash, |e| *e.name == *tag)
            .is_some()
    }

    /// Adds a tag (without a buffer) if it is not there, and marks it seen by the current
    /// refresh; true when it was added.
    pub(crate) fn insert(&self, tag: &str) -> bool {
        let hash = self.hash(tag);
        let lock = self.shard(hash);
        let epoch = self.epoch.load(Ordering::SeqCst);
        if let Some(e) = Self::read(lock).find(hash, |e| *e.name == *tag) {
            e.seen.store(epoch, Ordering::Relaxed);
            return false;
        }
        let mut shard = Self::write(lock);
        if let Some(e) = shard.find(hash, |e| *e.name == *tag) {
            e.seen.store(epoch, Ordering::Relaxed);
            return false;
        }
        shard.insert_unique(
            hash,
            Entry {
                name: tag.into(),
                buffer: None,
                seen: AtomicU32::new(epoch),
            },
            |e| self.hash(&e.name),
        );
        self.len.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Starts a tag refresh: tags it does not [`insert`](TagTable::insert) are removed by the
    /// [`sweep`](TagTable::sweep) that ends it (tags added meanwhile by a request are kept).
    pub(crate) fn begin_refresh(&self) -> u32 {
        self.epoch.fetch_add(1, Ordering::SeqCst).wrapping_add(1)
    }

    /// Ends the refresh `epoch`: removes the tags it did not see, and returns the buffers they
    /// had (to be forgotten elsewhere too).
    pub(crate) fn sweep(&self, epoch: u32) -> Vec<Arc<SegmentBuffer>> {
        let mut detached = Vec::new();
        for shard in self.shards.iter() {
            let stale = |e: &Entry| e.seen.load(Ordering::Relaxed) != epoch;
            if !Self::read(&shard.0).iter().any(stale) {
                continue;
            }
            let mut table = Self::write(&shard.0);
            let before = table.len();
            table.retain(|e| {
                if !stale(e) {
                    return true;
                }
                detached.extend(e.buffer.take());
                false
            });
            self.len.fetch_sub(before - table.len(), Ordering::Relaxed);
        }
        detached
    }

    /// Drops `buffer` from its tag (after a long idle time); false if the tag has another
    /// buffer or is gone.
    pub(crate) fn detach(&self, buffer: &Arc<SegmentBuffer>) -> bool {
        let hash = self.hash(buffer.tag());
        let mut shard = Self::write(self.shard(hash));
        match shard.find_mut(hash, |e| *e.name == *buffer.tag()) {
            Some(e) if e.buffer.as_ref().is_some_and(|b| Arc::ptr_eq(b, buffer)) => {
                e.buffer = None;
                true
            }
            _ => false,
        }
    }

    /// Calls `f` on every tag, one shard at a time under that shard's read lock: `f` must not
    /// block (collect what a slow consumer needs, and hand it over after).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&Entry)) {
        for shard in self.shards.iter() {
            Self::read(&shard.0).iter().for_each(&mut f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_on_first_use_and_only_for_known_tags() {
        let t = TagTable::new();
        assert!(t.insert("a"));
        assert!(!t.insert("a"));
        assert_eq!(t.len(), 1);
        assert!(t.buffer("b").is_none(), "an unknown tag gets no buffer");
        let (b1, made) = t.buffer("a").unwrap();
        assert!(made);
        let (b2, made) = t.buffer("a").unwrap();
        assert!(!made && Arc::ptr_eq(&b1, &b2));
        assert!(t.detach(&b1));
        assert!(!t.detach(&b1), "already detached");
        let (b3, made) = t.buffer("a").unwrap();
        assert!(made && !Arc::ptr_eq(&b1, &b3));
    }

    #[test]
    fn a_refresh_removes_what_it_did_not_see_and_keeps_what_came_meanwhile() {
        let t = TagTable::new();
        for i in 0..1000 {
            t.insert(&format!("t{i}"));
        }
        let (kept, _) = t.buffer("t1").unwrap();
        let (gone, _) = t.buffer("t2").unwrap();
        let epoch = t.begin_refresh();
        for i in (0..1000).filter(|i| i % 2 == 1) {
            t.insert(&format!("t{i}"));
        }
        t.insert("new"); // added by a request during the refresh
        let detached = t.sweep(epoch);
        assert_eq!(t.len(), 501);
        assert!(t.contains("t1") && t.contains("new") && !t.contains("t2"));
        assert_eq!(detached.len(), 1);
        assert!(Arc::ptr_eq(&detached[0], &gone));
        assert!(Arc::ptr_eq(&t.buffer("t1").unwrap().0, &kept));
        let mut n = 0;
        t.for_each(|_| n += 1);
        assert_eq!(n, 501);
    }
}
