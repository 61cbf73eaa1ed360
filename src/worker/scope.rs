//! The worker ids a process may hold, and the mark that pins a registry's store to them: the one
//! place where the region ([`crate::region`]) meets the registries. The region is resolved once
//! (`--region`, `--regions`) into a [`WorkerScope`] that every registry opener takes; a registry
//! asks it for the ids it may hand out ([`WorkerScope::ids`]), has it check an id it was given
//! ([`WorkerScope::check_worker`]) and its store's mark ([`WorkerScope::ensure_mark`]), and never
//! handles a region itself.
//!
//! The mark: ZooKeeper's `/leafctl/region`, etcd's `/leafctl/region` and the state directory's
//! `region` file hold `"R/N"` once a process of region R of N used them. [`WorkerScope::ensure_mark`]
//! is the one sequence every store follows at open (read, [`region::check_recorded`],
//! create-if-absent, re-read when another process created it first); each backend only reads and
//! creates. Without a region and without a mark it costs one read. [`region_check`] is
//! `workers doctor`'s check of a registry against a region: its mark, and its live worker ids
//! against the region's slice.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use super::files::{ensure_dir, io};
use super::{Registry, WorkerError};
use crate::region::{self, Region};

/// The worker ids this process may hold and the mark its registries' stores must carry: the
/// region resolved once, in the terms a registry needs. The default is the whole worker field
/// (no region), whose stores must carry no mark.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerScope {
    region: Option<Region>,
}

impl WorkerScope {
    /// The scope of `region` (none: the whole worker field).
    pub fn of(region: Option<Region>) -> WorkerScope {
        WorkerScope { region }
    }

    /// The region this scope was resolved from, for a caller that records it elsewhere (a
    /// database's own mark).
    pub fn region(&self) -> Option<Region> {
        self.region
    }

    /// The worker ids a registry may hand out in a `worker_bits`-wide field: the region's
    /// slice, or the whole field.
    pub fn ids(&self, worker_bits: u32) -> Result<Range<u64>, WorkerError> {
        Ok(region::worker_ids(self.region, worker_bits)?)
    }

    /// Refuses `worker` (from `source_of`: a flag, a node, a row) outside [`WorkerScope::ids`].
    pub fn check_worker(
        &self,
        worker_bits: u32,
        worker: u64,
        source_of: &str,
    ) -> Result<(), WorkerError> {
        Ok(region::check_worker(
            self.region,
            worker_bits,
            worker,
            source_of,
        )?)
    }

    /// Checks the mark at `place` against this scope and records it when the store has none:
    /// `read` returns the mark (`None`: absent), `create` writes it only if still absent (false
    /// when another process was first, whose mark is then read and checked).
    pub fn ensure_mark(
        &self,
        place: &str,
        read: impl Fn() -> Result<Option<Vec<u8>>, WorkerError>,
        create: impl FnOnce(&[u8]) -> Result<bool, WorkerError>,
    ) -> Result<(), WorkerError> {
        let recorded = parse(place, read()?.as_deref())?;
        let mine = self.region;
        let (true, Some(mine)) = (region::check_recorded(place, recorded, mine)?, mine) else {
            return Ok(());
        };
        if create(region::to_record(mine).as_bytes())? {
            tracing::info!("recorded {mine} in {place}");
            return Ok(());
        }
        let recorded = parse(place, read()?.as_deref())?;
        region::check_recorded(place, recorded, Some(mine))?;
        Ok(())
    }

    /// Refuses Leaf's forever node number's `worker` beyond `ids` (the scope's ids within the
    /// layout) when the scope is a region's slice, with `source_of` naming the node; without a
    /// region the layout's own range is checked by the caller.
    pub fn refuse_beyond(
        &self,
        worker: u64,
        ids: &Range<u64>,
        source_of: impl FnOnce() -> String,
    ) -> Result<(), WorkerError> {
        match self.region {
            Some(region) if worker >= ids.end => Err(region::RegionError::WorkerOutsideSlice {
                worker,
                source_of: source_of(),
                region,
                start: ids.start,
                end: ids.end,
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// [`WorkerScope::ensure_mark`] on the state directory `dir`'s `region` file (created
    /// atomically: a complete temporary file hard-linked to its name, which fails if the name
    /// exists).
    pub fn ensure_file_mark(&self, dir: &Path) -> Result<(), WorkerError> {
        let path = dir.join(FILE);
        let place = format!("state directory {} (its {FILE} file)", dir.display());
        let read = || match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(WorkerError::from(io("cannot read", &path)(e))),
        };
        let create = |text: &[u8]| {
            ensure_dir(dir)?;
            let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
            let written = std::fs::File::create(&tmp).and_then(|mut f| {
                f.write_all(text)?;
                f.write_all(b"\n")?;
                f.sync_all()
            });
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                return Err(WorkerError::from(io("cannot write", &tmp)(e)));
            }
            let linked = std::fs::hard_link(&tmp, &path);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => {
                    if let Ok(d) = std::fs::File::open(dir) {
                        let _ = d.sync_all();
                    }
                    Ok(true)
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(WorkerError::from(io("cannot create", &path)(e))),
            }
        };
        self.ensure_mark(&place, read, create)
    }
}

impl std::fmt::Display for WorkerScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.region {
            Some(r) => write!(f, "{r}"),
            None => f.write_str("the whole worker field"),
        }
    }
}

/// ZooKeeper's mark: a persistent node (Leaf's own `/snowflake/{name}` is left as Leaf lays it
/// out).
pub const ZK_PATH: &str = "/leafctl/region";

/// etcd's mark, beside the names' `/leafctl/{name}/` prefixes.
pub const ETCD_KEY: &str = "/leafctl/region";

/// The state directory's mark (the local registry, the forever mode's cache).
pub const FILE: &str = "region";

/// A registry store's mark as `workers doctor` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreMark {
    /// Where it lives (`ZooKeeper HOSTS/leafctl/region`).
    pub place: String,
    /// The region recorded there; none when no region was ever recorded.
    pub recorded: Option<Region>,
}

impl StoreMark {
    /// The mark at `place` whose store holds `data` (`None`: no mark).
    pub fn read(place: String, data: Option<&[u8]>) -> Result<StoreMark, WorkerError> {
        Ok(StoreMark {
            recorded: parse(&place, data)?,
            place,
        })
    }

    /// The scope a store carrying this mark was used in: the recorded one, else `mine`
    /// (`workers` reading another region's store follows its mark).
    pub fn scope_or(&self, mine: WorkerScope) -> WorkerScope {
        WorkerScope::of(self.recorded.or(mine.region))
    }
}

/// The region a store's mark at `place` holds (`None`: no mark); a mark that is not `R/N` is
/// refused, naming it.
pub fn parse(place: &str, mark: Option<&[u8]>) -> Result<Option<Region>, WorkerError> {
    let Some(bytes) = mark else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(bytes);
    region::from_record(&text).map(Some).map_err(|e| {
        WorkerError::setting(
            format!("the region mark {place} is unreadable: {e}"),
            "it is written by leafctl as R/N (region R of N); restore it from another host of this region, or delete it only if you know no other region's process used this store",
        )
    })
}

/// What `workers doctor` found about regions.
#[derive(Debug, Clone)]
pub struct RegionCheck {
    /// The registry's mark, when it keeps one.
    pub mark: Option<StoreMark>,
    /// The region whose slice was checked: this process's, else the recorded one.
    pub checked: Option<Region>,
    /// Live or held worker ids outside that slice.
    pub outside: Vec<u64>,
    /// Each problem in one sentence.
    pub problems: Vec<String>,
}

/// Compares the registry's mark with this process's region, and its worker ids with the
/// region's slice: an id outside it (left from before the region was set) may be another
/// region's too, and a mark of another region means this host points at the wrong registry.
/// `scope`: this process's; `worker_bits`: the layout's worker field.
pub fn region_check(
    registry: &dyn Registry,
    scope: WorkerScope,
    worker_bits: u32,
    now_ms: i64,
) -> Result<RegionCheck, WorkerError> {
    let mine = scope.region;
    let mark = registry.mark()?;
    let mut problems = Vec::new();
    if let (Some(m), Some(_)) = (&mark, mine)
        && let Err(e) = region::check_recorded(&m.place, m.recorded, mine)
    {
        problems.push(e.to_string());
    }
    let checked = mine.or(mark.as_ref().and_then(|m| m.recorded));
    let mut outside = Vec::new();
    if let Some(r) = checked {
        let slice = r.worker_slice(worker_bits)?;
        // Only a live or held id can issue; a record left behind is history the slice never
        // hands out again.
        for rec in registry.list(now_ms)? {
            let checked_scope = WorkerScope::of(Some(r));
            if let Some((n, why)) = registry.foreign_issuer(&rec, &checked_scope, &slice, now_ms) {
                problems.push(why);
                outside.push(n);
                continue;
            }
            if !slice.contains(&rec.worker) && (rec.held || rec.is_live(now_ms)) {
                problems.push(format!(
                    "live worker id {} ({}, {}) is outside {r}'s worker ids {} to {}: a process started without the region (or with another) issues here, and another region may issue with the same id",
                    rec.worker,
                    rec.identity,
                    rec.mode,
                    slice.start,
                    slice.end - 1
                ));
                outside.push(rec.worker);
            }
        }
    }
    Ok(RegionCheck {
        mark,
        checked,
        outside,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::RegionError;

    #[test]
    fn the_file_is_recorded_once_and_another_region_refused() {
        let dir = tempfile::tempdir().unwrap();
        let r0 = Region::new(0, 2).unwrap();
        let r1 = Region::new(1, 2).unwrap();
        // No region, no mark: nothing written.
        WorkerScope::of(None).ensure_file_mark(dir.path()).unwrap();
        assert!(!dir.path().join(FILE).exists());
        WorkerScope::of(Some(r1))
            .ensure_file_mark(dir.path())
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(FILE)).unwrap(),
            "1/2\n"
        );
        WorkerScope::of(Some(r1))
            .ensure_file_mark(dir.path())
            .unwrap();
        let e = WorkerScope::of(Some(r0))
            .ensure_file_mark(dir.path())
            .unwrap_err();
        assert!(matches!(
            e,
            WorkerError::Region(RegionError::Mismatch { .. })
        ));
        let text = e.to_string();
        assert!(
            text.contains("region 1 of 2") && text.contains("region 0 of 2"),
            "{text}"
        );
        assert!(e.is_usage());
        assert!(matches!(
            WorkerScope::of(None).ensure_file_mark(dir.path()),
            Err(WorkerError::Region(RegionError::Unset { .. }))
        ));
        std::fs::write(dir.path().join(FILE), "x").unwrap();
        let e = WorkerScope::of(Some(r1))
            .ensure_file_mark(dir.path())
            .unwrap_err();
        assert!(e.to_string().contains("unreadable"), "{e}");
    }

    /// Two processes racing to record: the second sees the first's mark and is checked
    /// against it.
    #[test]
    fn a_lost_race_checks_the_winners_mark() {
        let r0 = Region::new(0, 2).unwrap();
        let r1 = Region::new(1, 2).unwrap();
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Ok(if reads.get() == 1 {
                None
            } else {
                Some(b"0/2".to_vec())
            })
        };
        let e = WorkerScope::of(Some(r1))
            .ensure_mark("z", read, |_| Ok(false))
            .unwrap_err();
        assert!(e.to_string().contains("belongs to region 0 of 2"), "{e}");
        reads.set(0);
        WorkerScope::of(Some(r0))
            .ensure_mark("z", read, |_| Ok(false))
            .unwrap();
    }
}
