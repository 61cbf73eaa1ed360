//! The generator's table of tags: every tag of `leaf_alloc` by name, and the buffer of each tag
//! that was asked for.
//!
//! A million tags must cost little while idle, so a tag that was never asked for holds its name
//! and a few bytes, and its [`SegmentBuffer`] (about 1 KB) is made on first use. The table is
//! split into [`SHARDS`] shards, each a hash table of 24-byte [`Entry`]s behind its own lock,
//! whose names sit end to end in one string per shard (no allocation per tag, and a pass over
//! every name reads memory in order instead of chasing a pointer per tag). Adding or removing
//! one tag changes one shard in place (no copy of the table), and a listing (`/cache`, the
//! status page) takes one shard's lock at a time. Requests rarely come here: each thread
//! remembers the buffers it used last (see `generator/recent.rs`).

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use hashbrown::HashTable;

use super::SegmentBuffer;

/// Shards of the table: at a million tags, about 4,000 each, so one shard's listing under its
/// lock stays short and its names (some 50 KB) stay in the processor's cache during a pass.
pub(crate) const SHARDS: usize = 256;

/// One tag: where its name is in its shard's [`Names`], and its buffer.
struct Entry {
    /// Made on first use; dropped again after a long idle time.
    buffer: Option<Arc<SegmentBuffer>>,
    /// The tag refresh that last found the tag in the table (see [`TagTable::sweep`]).
    seen: AtomicU32,
    at: u32,
    /// A tag has at most 128 characters, so at most 512 bytes.
    len: u16,
}

/// A shard's names, end to end. A removed tag's bytes stay until they are half the string, then
/// the string is rewritten without them.
#[derive(Default)]
struct Names {
    text: String,
    unused: usize,
}

impl Names {
    fn of(&self, e: &Entry) -> &str {
        let at = e.at as usize;
        self.text.get(at..at + usize::from(e.len)).unwrap_or("")
    }

    /// Appends a name; `None` if it cannot be placed (a shard past 4 GB of names).
    fn push(&mut self, name: &str) -> Option<(u32, u16)> {
        let at = u32::try_from(self.text.len()).ok()?;
        let len = u16::try_from(name.len()).ok()?;
        u32::try_from(self.text.len() + name.len()).ok()?;
        self.text.push_str(name);
        Some((at, len))
    }
}

/// One shard: its table and its names.
#[derive(Default)]
struct ShardData {
    table: HashTable<Entry>,
    names: Names,
}

impl ShardData {
    fn find(&self, hash: u64, tag: &str) -> Option<&Entry> {
        let names = &self.names;
        self.table.find(hash, |e| names.of(e) == tag)
    }

    fn find_mut(&mut self, hash: u64, tag: &str) -> Option<&mut Entry> {
        let names = &self.names;
        self.table.find_mut(hash, |e| names.of(e) == tag)
    }

    /// Rewrites the names without those of removed tags, once they are half of them.
    fn compact(&mut self) {
        if self.names.unused == 0 || self.names.unused * 2 < self.names.text.len() {
            return;
        }
        let mut text = String::with_capacity(self.names.text.len() - self.names.unused);
        for e in self.table.iter_mut() {
            let at = u32::try_from(text.len()).unwrap_or(u32::MAX);
            text.push_str(self.names.of(e));
            e.at = at;
        }
        self.names = Names { text, unused: 0 };
    }
}

/// A shard on its own cache lines, so that two threads on two shards do not slow each other.
#[repr(align(128))]
struct Shard(RwLock<ShardData>);

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
                .map(|_| Shard(RwLock::new(ShardData::default())))
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
    fn shard(&self, hash: u64) -> &RwLock<ShardData> {
        &self.shards[(hash >> 40) as usize % SHARDS].0
    }

    fn read(lock: &RwLock<ShardData>) -> RwLockReadGuard<'_, ShardData> {
        lock.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(lock: &RwLock<ShardData>) -> RwLockWriteGuard<'_, ShardData> {
        lock.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The buffer of a tag in the table, made on its first use (`true` then); `None` when the
    /// table does not hold the tag.
    pub(crate) fn buffer(&self, tag: &str) -> Option<(Arc<SegmentBuffer>, bool)> {
        let hash = self.hash(tag);
        let lock = self.shard(hash);
        {
            let shard = Self::read(lock);
            if let Some(b) = &shard.find(hash, tag)?.buffer {
                return Some((b.clone(), false));
            }
        }
        let mut shard = Self::write(lock);
        let entry = shard.find_mut(hash, tag)?;
        match &entry.buffer {
            Some(b) => Some((b.clone(), false)), // made meanwhile
            None => {
                let b = Arc::new(SegmentBuffer::new(tag));
                entry.buffer = Some(b.clone());
                Some((b, true))
            }
        }
    }

    /// The entry of `tag`, if the table holds it: its buffer, if it has one.
    pub(crate) fn get(&self, tag: &str) -> Option<Option<Arc<SegmentBuffer>>> {
        let hash = self.hash(tag);
        Self::read(self.shard(hash))
            .find(hash, tag)
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
            Some(shard) => {
                let shard = Self::read(&shard.0);
                shard
                    .table
                    .iter()
                    .map(|e| (shard.names.of(e).into(), e.buffer.clone()))
                    .collect()
            }
            None => Vec::new(),
        }
    }

    /// Whether the table holds `tag`.
    #[cfg(test)]
    pub(crate) fn contains(&self, tag: &str) -> bool {
        self.get(tag).is_some()
    }

    /// Adds a tag (without a buffer) if it is not there, and marks it seen by the current
    /// refresh; true when it was added. A tag that cannot be stored (over 512 bytes, which no
    /// valid tag is) is not added.
    pub(crate) fn insert(&self, tag: &str) -> bool {
        let hash = self.hash(tag);
        let lock = self.shard(hash);
        let epoch = self.epoch.load(Ordering::SeqCst);
        // The latest refresh that saw it wins: a request's insert that read the epoch just
        // before a refresh began must not undo the refresh's own mark.
        if let Some(e) = Self::read(lock).find(hash, tag) {
            e.seen.fetch_max(epoch, Ordering::Relaxed);
            return false;
        }
        let mut shard = Self::write(lock);
        if let Some(e) = shard.find(hash, tag) {
            e.seen.fetch_max(epoch, Ordering::Relaxed);
            return false;
        }
        let ShardData { table, names } = &mut *shard;
        let Some((at, len)) = names.push(tag) else {
            return false;
        };
        table.insert_unique(
            hash,
            Entry {
                buffer: None,
                seen: AtomicU32::new(epoch),
                at,
                len,
            },
            |e| self.hash(names.of(e)),
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
        let stale = |e: &Entry| e.seen.load(Ordering::Relaxed) != epoch;
        for shard in self.shards.iter() {
            if !Self::read(&shard.0).table.iter().any(stale) {
                continue;
            }
            let mut shard = Self::write(&shard.0);
            let ShardData { table, names } = &mut *shard;
            let before = table.len();
            table.retain(|e| {
                if !stale(e) {
                    return true;
                }
                detached.extend(e.buffer.take());
                names.unused += usize::from(e.len);
                false
            });
            self.len.fetch_sub(before - table.len(), Ordering::Relaxed);
            shard.compact();
        }
        detached
    }

    /// Drops `buffer` from its tag (after a long idle time); false if the tag has another
    /// buffer or is gone.
    pub(crate) fn detach(&self, buffer: &Arc<SegmentBuffer>) -> bool {
        let hash = self.hash(buffer.tag());
        let mut shard = Self::write(self.shard(hash));
        match shard.find_mut(hash, buffer.tag()) {
            Some(e) if e.buffer.as_ref().is_some_and(|b| Arc::ptr_eq(b, buffer)) => {
                e.buffer = None;
                true
            }
            _ => false,
        }
    }

    /// Calls `f` with every tag and whether it has a buffer, one shard at a time under that
    /// shard's read lock: `f` must not block (collect what a slow consumer needs, and hand it
    /// over after).
    pub(crate) fn for_each(&self, mut f: impl FnMut(&str, bool)) {
        for shard in self.shards.iter() {
            let shard = Self::read(&shard.0);
            for e in shard.table.iter() {
                f(shard.names.of(e), e.buffer.is_some());
            }
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
        assert_eq!(b1.tag(), "a");
        let (b2, made) = t.buffer("a").unwrap();
        assert!(!made && Arc::ptr_eq(&b1, &b2));
        assert!(t.detach(&b1));
        assert!(!t.detach(&b1), "already detached");
        let (b3, made) = t.buffer("a").unwrap();
        assert!(made && !Arc::ptr_eq(&b1, &b3));
        assert!(!t.insert(&"x".repeat(70_000)), "no tag is that long");
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
        let mut names = Vec::new();
        t.for_each(|name, _| names.push(name.to_string()));
        names.sort();
        let mut want: Vec<String> = (0..1000)
            .filter(|i| i % 2 == 1)
            .map(|i| format!("t{i}"))
            .collect();
        want.push("new".into());
        want.sort();
        assert_eq!(names, want);
    }

    #[test]
    fn names_stay_whole_through_removals_and_compaction() {
        let t = TagTable::new();
        let name = |i: usize| format!("tenant-{i}-{}", "é".repeat(i % 7));
        for i in 0..20_000 {
            t.insert(&name(i));
        }
        // Remove nine in ten, a few times over: the shards rewrite their names.
        for round in 0..3 {
            let epoch = t.begin_refresh();
            for i in (0..20_000).filter(|i| i % 10 == 0 || i % 3 == round) {
                t.insert(&name(i));
            }
            t.sweep(epoch);
        }
        let epoch = t.begin_refresh();
        for i in (0..20_000).filter(|i| i % 10 == 0) {
            t.insert(&name(i));
        }
        t.sweep(epoch);
        assert_eq!(t.len(), 2_000);
        for i in 0..20_000 {
            assert_eq!(t.contains(&name(i)), i % 10 == 0, "{}", name(i));
        }
        let mut n = 0;
        t.for_each(|tag, _| {
            assert!(tag.starts_with("tenant-"), "{tag:?}");
            n += 1;
        });
        assert_eq!(n, 2_000);
    }
}
