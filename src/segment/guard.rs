//! A guard against a table that went backwards.
//!
//! `max_id` only ever moves forward, so every claim a claimant makes starts at or above the end
//! of every claim it made before. A claim that starts below means the table lost claims: a
//! failover to a replica that had not received them (semi-synchronous replication falls back to
//! asynchronous under load), a restore from a backup, or a tag removed and added again at a
//! lower start. Issuing from such a claim hands out IDs that were handed out before, so the
//! guard refuses it, names the tag and both values, and keeps refusing until the tag is moved
//! forward (`leafctl tag bump`).
//!
//! The marks live in memory for a long-running generator (`serve`), and in the state directory,
//! one file per database, for one-shot processes (`leafctl next`). What the guard cannot know:
//! a claimant that never claimed from the lost range has no mark above it, and issues from it
//! as if nothing happened; the guard catches it at the claimant that did.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::{AllocStore, Claim, Increment, SegmentError};

/// How long a claim waits for another process's claim through the same marks file.
const MARKS_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A claim the guard refused: the tag, where the claim started and the mark it fell below.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The tag.
    pub tag: String,
    /// The first ID of the refused claim.
    pub start: u64,
    /// The highest max_id claimed before (the claim should have started at or above it).
    pub mark: u64,
}

/// Remembers the highest `max_id` claimed per tag and refuses a claim that comes back below it.
#[derive(Debug)]
pub struct ClaimGuard {
    marks: Marks,
    refused: AtomicU64,
    /// The tags whose last claim was refused (cleared by a claim that is admitted).
    refusals: Mutex<BTreeMap<String, Refusal>>,
}

#[derive(Debug)]
enum Marks {
    /// Per tag, a lock held across the claim and its check, so two claims of one tag in
    /// flight at once are checked in the order the table granted them.
    Memory(Mutex<HashMap<String, Arc<Mutex<u64>>>>),
    /// A JSON file per database under this directory, locked (flock) across the claim.
    StateDir(PathBuf),
}

/// The marks file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct MarksFile {
    /// The database, password removed.
    database: String,
    /// Per tag, the highest max_id claimed through this state directory.
    max_id: BTreeMap<String, u64>,
}

impl ClaimGuard {
    /// Marks kept in memory, for as long as the guard lives (a server).
    pub fn in_memory() -> ClaimGuard {
        ClaimGuard::with(Marks::Memory(Mutex::new(HashMap::new())))
    }

    /// Marks kept in `dir/segment-marks/`, one file per database, shared by every process that
    /// uses the same state directory (`leafctl next`).
    pub fn in_state_dir(dir: &Path) -> ClaimGuard {
        ClaimGuard::with(Marks::StateDir(dir.join("segment-marks")))
    }

    fn with(marks: Marks) -> ClaimGuard {
        ClaimGuard {
            marks,
            refused: AtomicU64::new(0),
            refusals: Mutex::new(BTreeMap::new()),
        }
    }

    /// Claims through `store` and admits the claim only if it starts at or above every claim
    /// of the tag made through this guard before.
    pub fn claim(
        &self,
        store: &dyn AllocStore,
        tag: &str,
        increment: Increment,
    ) -> Result<Claim, SegmentError> {
        let result = match &self.marks {
            Marks::Memory(map) => {
                let slot = map
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(tag.to_string())
                    .or_default()
                    .clone();
                let mut mark = slot.lock().unwrap_or_else(|p| p.into_inner());
                let claim = store.claim(tag, increment)?;
                super::store::within_recorded_block(store, tag, &claim)?;
                admit(store, tag, &claim, &mut mark).map(|()| claim)
            }
            Marks::StateDir(dir) => self.claim_in_file(dir, store, tag, increment),
        };
        let mut refusals = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
        match &result {
            Ok(_) => {
                refusals.remove(tag);
            }
            Err(SegmentError::WentBackwards { start, mark, .. }) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                refusals.insert(
                    tag.to_string(),
                    Refusal {
                        tag: tag.to_string(),
                        start: *start,
                        mark: *mark,
                    },
                );
            }
            Err(_) => {}
        }
        result
    }

    /// How many claims the guard has refused.
    pub fn refused_total(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Whether the last claim of `tag` was refused (the tag went backwards).
    pub fn refuses(&self, tag: &str) -> bool {
        self.refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(tag)
    }

    /// The tags whose last claim was refused, ordered by tag.
    pub fn refusals(&self) -> Vec<Refusal> {
        self.refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    fn claim_in_file(
        &self,
        dir: &Path,
        store: &dyn AllocStore,
        tag: &str,
        increment: Increment,
    ) -> Result<Claim, SegmentError> {
        let database = store.describe();
        let path = dir.join(format!("{}.json", file_key(&database)));
        let state_err = |action: &str, p: &Path, e: &dyn std::fmt::Display| SegmentError::Marks {
            detail: format!("{action} {}: {e}", p.display()),
        };
        crate::worker::files::ensure_dir(dir).map_err(|e| state_err("create", dir, &e))?;
        let lock_path = path.with_extension("lock");
        let lock = crate::worker::files::open_lock_file(&lock_path)
            .map_err(|e| state_err("open", &lock_path, &e))?;
        // A holder claims for seconds at most; one that is stopped (Ctrl-Z, SIGSTOP) would hold
        // it for ever, so the wait is bounded.
        let deadline = std::time::Instant::now() + MARKS_LOCK_WAIT;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(state_err(
                        "lock",
                        &lock_path,
                        &format!(
                            "another leafctl process has held it for {} s (a stopped one?)",
                            MARKS_LOCK_WAIT.as_secs()
                        ),
                    ));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(state_err("lock", &lock_path, &e));
                }
            }
        }
        let mut marks = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<MarksFile>(&bytes).map_err(|e| {
                state_err(
                    "read (move it aside only if the tags' tables are known to be intact)",
                    &path,
                    &e,
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => MarksFile::default(),
            Err(e) => return Err(state_err("read", &path, &e)),
        };
        marks.database = database;
        let mut mark = marks.max_id.get(tag).copied().unwrap_or(0);
        let claim = store.claim(tag, increment)?;
        super::store::within_recorded_block(store, tag, &claim)?;
        admit(store, tag, &claim, &mut mark)?;
        marks.max_id.insert(tag.to_string(), mark);
        // Recorded before a single ID of the claim is handed out.
        crate::worker::files::write_atomically(&path, &marks)
            .map_err(|e| state_err("write", &path, &e))?;
        Ok(claim)
    }
}

/// The check itself: a claim starting below the mark is refused; otherwise the mark moves up.
fn admit(
    store: &dyn AllocStore,
    tag: &str,
    claim: &Claim,
    mark: &mut u64,
) -> Result<(), SegmentError> {
    if claim.start < *mark {
        return Err(SegmentError::WentBackwards {
            tag: tag.to_string(),
            db: store.describe(),
            start: claim.start,
            mark: *mark,
        });
    }
    *mark = claim.end;
    Ok(())
}

/// A file name for a database: readable, and distinct for distinct names (a hash of the exact
/// name follows the readable part, which replaces unusual characters).
fn file_key(database: &str) -> String {
    let readable: String = database
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    // FNV-1a: stable across Rust versions, unlike the standard library's hasher.
    let hash = database.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{readable}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::OpenMode;
    use crate::db::sqlite::SqliteStore;
    use crate::segment::AllocStoreExt;
    use crate::segment::NewTag;

    fn store(dir: &Path) -> SqliteStore {
        let s = SqliteStore::open(dir.join("leaf.db"), OpenMode::CreateSchema).unwrap();
        s.add("t", 1, 10, None, false).unwrap();
        s
    }

    /// The tag removed and added again at its old start (overriding its tombstone): the table
    /// went backwards.
    fn rewind(s: &SqliteStore, to: i64) {
        s.remove("t").unwrap();
        s.add_tag(&NewTag {
            start: crate::segment::StartAt::Reuse(to),
            ..NewTag::new("t", 10)
        })
        .unwrap();
    }

    fn check(guard: &ClaimGuard, s: &SqliteStore) {
        let c = guard.claim(s, "t", Increment::TableStep).unwrap();
        assert_eq!((c.start, c.end), (1, 11));
        let c = guard.claim(s, "t", Increment::Custom(5)).unwrap();
        assert_eq!((c.start, c.end), (11, 16));
        rewind(s, 6);
        match guard.claim(s, "t", Increment::TableStep) {
            Err(SegmentError::WentBackwards {
                tag, start, mark, ..
            }) => assert_eq!((tag.as_str(), start, mark), ("t", 6, 16)),
            other => panic!("expected WentBackwards, got {other:?}"),
        }
        assert_eq!(guard.refused_total(), 1);
        assert_eq!(
            guard.refusals(),
            vec![Refusal {
                tag: "t".into(),
                start: 6,
                mark: 16
            }]
        );
        // Still below the mark (6 + 10 = 16 now, the next claim starts at 16): admitted.
        let c = guard.claim(s, "t", Increment::TableStep).unwrap();
        assert_eq!(c.start, 16);
        assert!(guard.refusals().is_empty());
        assert_eq!(guard.refused_total(), 1);
    }

    #[test]
    fn a_claim_below_an_earlier_one_is_refused_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        check(&ClaimGuard::in_memory(), &store(dir.path()));
    }

    #[test]
    fn a_claim_below_an_earlier_one_is_refused_across_processes_in_the_state_dir() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        check(&ClaimGuard::in_state_dir(&dir.path().join("state")), &s);
        // A second guard on the same directory (the next process) knows the mark.
        rewind(&s, 1);
        let again = ClaimGuard::in_state_dir(&dir.path().join("state"));
        assert!(matches!(
            again.claim(&s, "t", Increment::Custom(1)),
            Err(SegmentError::WentBackwards { mark: 26, .. })
        ));
        // Another tag, another database: no mark, no refusal.
        s.add("u", 1, 10, None, false).unwrap();
        assert!(again.claim(&s, "u", Increment::Custom(1)).is_ok());
        let other = tempfile::tempdir().unwrap();
        let s2 = store(other.path());
        assert!(again.claim(&s2, "t", Increment::Custom(1)).is_ok());
    }

    #[test]
    fn a_held_marks_lock_is_waited_for_then_refused_not_waited_on_for_ever() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let guard = ClaimGuard::in_state_dir(&dir.path().join("state"));
        guard.claim(&s, "t", Increment::Custom(1)).unwrap();
        // Another process holding the lock (a stopped one, say): the file it locks.
        let marks = dir.path().join("state/segment-marks");
        let lock_path = std::fs::read_dir(&marks)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "lock"))
            .unwrap();
        let held = std::fs::File::options()
            .write(true)
            .open(&lock_path)
            .unwrap();
        held.lock().unwrap();
        let started = std::time::Instant::now();
        let waiter = std::thread::spawn(move || {
            let g = ClaimGuard::in_state_dir(&dir.path().join("state"));
            let r = g.claim(&s, "t", Increment::Custom(1));
            (r, dir)
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held); // released: the waiting claim goes through
        let (r, _dir) = waiter.join().unwrap();
        assert!(r.is_ok(), "{r:?}");
        assert!(started.elapsed() < MARKS_LOCK_WAIT);
    }

    #[test]
    fn file_keys_are_distinct_and_plain() {
        let a = file_key("mysql://leaf@h:3306/a_b");
        let b = file_key("mysql://leaf@h:3306/a.b");
        assert_ne!(a, b);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        );
    }

    /// Found by the model of the command surface (tests/support/model.rs, on CI): a server
    /// running since before `region add` recorded its database as region 0 of 2 went on claiming
    /// without the region, past region 0's block, and issued the first ID of region 1's block,
    /// which region 1 issued too. Such a claim is now refused (nothing of it issued) by every
    /// process that has no region, SQLite's and memory's alike; one inside the block goes on.
    #[test]
    fn a_claim_of_a_process_without_the_region_recorded_since_stays_in_its_block() {
        let region = crate::region::Region::new(0, 2).unwrap();
        let end = region.segment_block().end;
        let dir = tempfile::tempdir().unwrap();
        let sqlite = SqliteStore::open(dir.path().join("leaf.db"), OpenMode::CreateSchema).unwrap();
        let memory = crate::segment::MemoryStore::new();
        type RecordElsewhere = Box<dyn Fn(crate::region::Region)>;
        let stores: [(&dyn AllocStore, RecordElsewhere); 2] = [
            (&sqlite, {
                let other =
                    SqliteStore::open(dir.path().join("leaf.db"), OpenMode::Existing).unwrap();
                Box::new(move |r| crate::segment::record_region(&other, r).unwrap())
            }),
            (&memory, {
                let other = memory.connection();
                Box::new(move |r| crate::segment::record_region(&other, r).unwrap())
            }),
        ];
        for (store, record_elsewhere) in stores {
            let guard = ClaimGuard::in_memory();
            store.add("near_end", end - 3, 2, None, false).unwrap();
            store.add("far", 1, 2, None, false).unwrap();
            store.add("at_end", end, 1, None, false).unwrap();
            // Before the region is recorded: a claim up to the block's end.
            assert!(guard.claim(store, "near_end", Increment::TableStep).is_ok());
            record_elsewhere(region);
            // Inside the block: no read of the mark, no refusal.
            assert!(guard.claim(store, "far", Increment::TableStep).is_ok());
            // A claim that starts right at the block's end (no boundary inside it) too.
            assert!(matches!(
                guard.claim(store, "at_end", Increment::TableStep),
                Err(SegmentError::RegionRecordedSince { .. })
            ));
            match guard.claim(store, "near_end", Increment::TableStep) {
                Err(SegmentError::RegionRecordedSince {
                    start,
                    end: to,
                    ceiling,
                    ..
                }) => {
                    assert_eq!((start, to), ((end - 1) as u64, (end + 1) as u64));
                    assert_eq!(ceiling, end);
                }
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
    }
}
