//! An [`AllocStore`] in memory, beside the trait as raft-rs keeps `MemStorage` beside `Storage`:
//! the generator's rules (refresh, batches, outages, handing IDs back) are tested on it without a
//! database, and a database going down, slow or backwards is one call. The backends pass the
//! same checks against real servers in the integration tests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::store::{Added, NewTag, Removed, check_claim, unknown_tag};
use super::{
    AllocStore, Claim, Increment, LeafAlloc, RowsPage, SegmentError, Tombstone, validate_step,
};
use crate::region::Region;

/// `leaf_alloc` in a map, with faults to inject: down, slow, rows rewound. Each
/// [`MemoryStore::connection`] is another handle on the same table with bounds of its own, as
/// two processes opening one database are.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Arc<Mutex<State>>,
    /// Where this handle's claims stay ([`Confined::confine`](crate::segment::Confined::confine)).
    bounds: crate::segment::store::Confinement,
}

#[derive(Debug, Default)]
struct State {
    rows: BTreeMap<String, LeafAlloc>,
    /// `leaf_alloc_removed`: the max_id each removed tag left behind.
    removed: BTreeMap<String, i64>,
    /// Every call fails as an unreachable database would.
    down: bool,
    /// Every call takes this long first.
    latency: Duration,
    /// Calls of [`AllocStore::claim`], failed ones included.
    claims: u64,
    /// `leaf_region`'s row.
    region: Option<Region>,
    /// `leaf_tag_shape`: each shaped tag's spec.
    shapes: BTreeMap<String, String>,
}

impl MemoryStore {
    /// An empty table.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// Another handle on the same table, not confined to any bounds: what a second process
    /// opening the same database gets.
    pub fn connection(&self) -> MemoryStore {
        MemoryStore {
            state: self.state.clone(),
            bounds: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the database down (`true`) or brings it back: while down every call fails with
    /// [`SegmentError::Unreachable`] and changes nothing.
    pub fn set_down(&self, down: bool) {
        self.lock().down = down;
    }

    /// Makes every call wait `latency` first (a far or slow database).
    pub fn set_latency(&self, latency: Duration) {
        self.lock().latency = latency;
    }

    /// Sets a tag's `max_id` as a restore from a backup or a lossy failover would (down
    /// included): the table going backwards.
    pub fn rewind(&self, tag: &str, max_id: i64) {
        if let Some(row) = self.lock().rows.get_mut(tag) {
            row.max_id = max_id;
        }
    }

    /// How many claims were asked for, failed ones included.
    pub fn claims(&self) -> u64 {
        self.lock().claims
    }

    /// The store, after its latency, unless it is down.
    fn open(&self) -> Result<std::sync::MutexGuard<'_, State>, SegmentError> {
        let latency = self.lock().latency;
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        let st = self.lock();
        if st.down {
            return Err(SegmentError::Unreachable {
                db: self.describe(),
                detail: "the in-memory database is down".into(),
            });
        }
        Ok(st)
    }
}

/// What the `MemoryStore` does for each [`AllocStore`] operation: its statements, one method
/// each (the trait's methods dispatch here).
impl MemoryStore {
    fn read_rows_page(&self, page: &RowsPage<'_>) -> Result<Vec<LeafAlloc>, SegmentError> {
        let st = self.open()?;
        Ok(st
            .rows
            .values()
            .filter(|r| page.after.is_none_or(|a| r.tag.as_str() > a))
            .filter(|r| page.filter.matches(&r.tag))
            .take(page.limit)
            .cloned()
            .collect())
    }

    fn read_removed_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Tombstone>, SegmentError> {
        let st = self.open()?;
        Ok(st
            .removed
            .iter()
            .filter(|(t, _)| after.is_none_or(|a| t.as_str() > a))
            .take(limit)
            .map(|(tag, max_id)| Tombstone {
                tag: tag.clone(),
                max_id: *max_id,
            })
            .collect())
    }

    fn read_tags_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, SegmentError> {
        let st = self.open()?;
        Ok(st
            .rows
            .keys()
            .filter(|t| after.is_none_or(|a| t.as_str() > a))
            .take(limit)
            .cloned()
            .collect())
    }

    fn update_step(&self, tag: &str, step: i64) -> Result<(), SegmentError> {
        validate_step(step)?;
        let mut st = self.open()?;
        let row = st
            .rows
            .get_mut(tag)
            .ok_or_else(|| unknown_tag(tag, &self.describe()))?;
        row.step = step;
        Ok(())
    }

    fn update_bump(&self, tag: &str, to: i64) -> Result<i64, SegmentError> {
        let mut st = self.open()?;
        let row = st
            .rows
            .get_mut(tag)
            .ok_or_else(|| unknown_tag(tag, &self.describe()))?;
        let before = row.max_id;
        if to < before {
            return Err(SegmentError::BumpDown {
                tag: tag.into(),
                max_id: before,
                to,
            });
        }
        row.max_id = to;
        Ok(before)
    }

    fn update_hand_back(&self, tag: &str, from: i64, to: i64) -> Result<bool, SegmentError> {
        let mut st = self.open()?;
        match st.rows.get_mut(tag) {
            Some(row) if row.max_id == from => {
                row.max_id = to;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn read_region(&self) -> Result<Option<Region>, SegmentError> {
        Ok(self.open()?.region)
    }

    fn write_region(&self, region: Region) -> Result<(), SegmentError> {
        self.open()?.region.get_or_insert(region);
        Ok(())
    }

    fn read_shape(&self, tag: &str) -> Result<Option<String>, SegmentError> {
        Ok(self.open()?.shapes.get(tag).cloned())
    }

    fn write_shape(&self, tag: &str, spec: &str) -> Result<(), SegmentError> {
        self.open()?
            .shapes
            .entry(tag.to_string())
            .or_insert_with(|| spec.to_string());
        Ok(())
    }
}

impl AllocStore for MemoryStore {
    fn describe(&self) -> String {
        "memory://".into()
    }

    fn init_schema(&self) -> Result<(), SegmentError> {
        self.open().map(drop)
    }

    fn claim(&self, tag: &str, increment: Increment) -> Result<Claim, SegmentError> {
        self.lock().claims += 1;
        let mut st = self.open()?;
        let bounds = self.bounds.of(tag);
        let row = st
            .rows
            .get_mut(tag)
            .ok_or_else(|| unknown_tag(tag, &self.describe()))?;
        let by = match increment {
            Increment::TableStep => row.step,
            Increment::Custom(n) => n,
        };
        let (start, end) = check_claim(tag, &bounds, row.max_id, by)?;
        // check_claim kept `end` at or below a ceiling that is an i64.
        row.max_id = row.max_id.saturating_add(by);
        Ok(Claim {
            start,
            end,
            table_step: row.step,
        })
    }

    fn add_tag(&self, new: &NewTag<'_>) -> Result<Added, SegmentError> {
        validate_step(new.step)?;
        let mut st = self.open()?;
        let removed = st.removed.get(new.tag).copied();
        if let Some(row) = st.rows.get(new.tag) {
            return new.exists(&self.describe(), row.max_id, removed);
        }
        let first = new.first_id(&self.describe(), removed)?;
        st.rows.insert(
            new.tag.to_string(),
            LeafAlloc {
                tag: new.tag.to_string(),
                max_id: first,
                step: new.step,
                description: new.description.map(str::to_string),
                update_time_s: 0,
            },
        );
        Ok(Added::inserted(first, removed))
    }

    fn get(&self, tag: &str) -> Result<Option<LeafAlloc>, SegmentError> {
        Ok(self.open()?.rows.get(tag).cloned())
    }

    fn remove(&self, tag: &str) -> Result<Removed, SegmentError> {
        let mut st = self.open()?;
        let row = st
            .rows
            .remove(tag)
            .ok_or_else(|| unknown_tag(tag, &self.describe()))?;
        let kept = st.removed.entry(tag.to_string()).or_insert(row.max_id);
        *kept = (*kept).max(row.max_id);
        let tombstone = *kept;
        Ok(Removed { row, tombstone })
    }

    crate::segment::store::table_operations!();
}

crate::segment::store::bounds_in_field!(MemoryStore);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::AllocStoreExt;
    use crate::segment::StartAt;

    /// The in-memory table keeps the rules the real ones keep: a removed and re-added tag
    /// starts above what it issued, a hand-back is a compare-and-set, a down table changes nothing.
    #[test]
    fn the_in_memory_table_keeps_the_stores_rules() {
        let s = MemoryStore::new();
        assert!(s.add("t", 1, 10, None, false).unwrap());
        let c = s.claim("t", Increment::TableStep).unwrap();
        assert_eq!((c.start, c.end), (1, 11));
        assert_eq!(s.remove("t").unwrap().row.max_id, 11);
        let again = s.add_tag(&NewTag::new("t", 10)).unwrap();
        assert_eq!((again.start, again.removed_max_id), (11, Some(11)));
        assert!(matches!(
            s.add_tag(&NewTag {
                start: StartAt::Given(0),
                ..NewTag::new("u", 0)
            }),
            Err(SegmentError::InvalidStep(0))
        ));
        assert!(!s.hand_back("t", 12, 1).unwrap(), "max_id is 11, not 12");
        let c = s.claim("t", Increment::Custom(5)).unwrap();
        assert!(s.hand_back("t", c.end as i64, c.start as i64).unwrap());
        assert_eq!(s.get("t").unwrap().unwrap().max_id, 11);
        s.set_down(true);
        assert!(matches!(
            s.claim("t", Increment::TableStep),
            Err(SegmentError::Unreachable { .. })
        ));
        s.set_down(false);
        s.rewind("t", 3);
        assert_eq!(s.claim("t", Increment::Custom(1)).unwrap().start, 3);
        assert!(matches!(s.bump("t", 2), Err(SegmentError::BumpDown { .. })));
    }
}
