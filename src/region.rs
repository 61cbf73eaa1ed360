//! Regions: several independent deployments (data centres) whose IDs never collide, with no call
//! between them on any ID path.
//!
//! A deployment is told its region `r` and the region count `N` once (`--region`, `--regions`),
//! and every rule that follows from the pair lives here:
//!
//! - **Snowflake**: the region takes the top [`Region::bits`] bits of the worker field, so region
//!   `r` owns the worker ids `r << (worker_bits - bits) ..` of its slice ([`Region::worker_slice`]);
//!   a registry hands out ids of that slice only. Time stays the top field, so IDs of all regions
//!   still sort by time.
//! - **Segment**: region `r` owns one block of the ID space below 2^53 ([`Region::segment_block`]):
//!   `[r * 2^(53 - bits), (r + 1) * 2^(53 - bits))`. Its own `leaf_alloc` claims inside that block
//!   only, so steps, dynamic steps, batches and Leaf's own servers reading the table work as they
//!   did, every ID stays exact in a JavaScript number, and an ID's region is read from its size.
//!
//! The pair is recorded in each region's stores the first time it is used ([`check_recorded`]),
//! so a process pointed at another region's database or registry refuses to start.

use std::fmt;
use std::ops::Range;

/// The most regions one deployment can be split into (3 bits of Leaf's 10-bit worker field).
pub const MAX_REGIONS: u32 = 8;

/// Segment IDs of every region stay below 2^53, the largest range a JavaScript number (an IEEE
/// double) holds exactly.
pub const SEGMENT_ID_BITS: u32 = 53;

/// The smallest segment block any region count gives (that of [`MAX_REGIONS`] regions): every
/// block boundary of every region count is a multiple of it, so a claim that crosses none of
/// its multiples stays inside whatever block it started in.
pub const SMALLEST_SEGMENT_BLOCK: i64 = 1 << (SEGMENT_ID_BITS - bits_for(MAX_REGIONS));

/// Why a region setting or a recorded region was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    /// The region count is outside 2..=[`MAX_REGIONS`].
    #[error("{count} regions: the region count must be from 2 to {MAX_REGIONS}")]
    BadCount {
        /// The count given.
        count: u32,
    },
    /// The region is not below the count.
    #[error("region {index} of {count}: regions are numbered from 0 to {}", count.saturating_sub(1))]
    BadIndex {
        /// The region given.
        index: u32,
        /// The count given.
        count: u32,
    },
    /// Only one of `--region` and `--regions` was given.
    #[error("{given} was given without {missing}: a region needs both its number and the count")]
    HalfGiven {
        /// The setting that was given.
        given: &'static str,
        /// The one that is missing.
        missing: &'static str,
    },
    /// The snowflake layout's worker field is too narrow to split.
    #[error(
        "a {worker_bits}-bit worker field cannot be split into {count} regions (it needs at least {} bits)",
        needed
    )]
    NarrowWorkerField {
        /// Width of the layout's worker field.
        worker_bits: u32,
        /// The region count.
        count: u32,
        /// The width it needs: the region bits and one bit of worker.
        needed: u32,
    },
    /// The store was recorded for another region.
    #[error("{store} belongs to {recorded}, but this process is {mine}")]
    Mismatch {
        /// Which store (a redacted URL or a registry path).
        store: String,
        /// The region recorded in it.
        recorded: Region,
        /// The region this process was given.
        mine: Region,
    },
    /// A worker id outside the region's slice of the worker field.
    #[error("worker id {worker} ({source_of}) is outside {region}, whose worker ids are {start} to {}", end - 1)]
    WorkerOutsideSlice {
        /// The worker id.
        worker: u64,
        /// Where it came from (`--worker-id`, a forever node, a registry).
        source_of: String,
        /// The region.
        region: Region,
        /// The slice's first worker id.
        start: u64,
        /// One past the slice's last worker id.
        end: u64,
    },
    /// The store was recorded for a region, and this process was given none.
    #[error("{store} belongs to {recorded}, but this process was given no region")]
    Unset {
        /// Which store.
        store: String,
        /// The region recorded in it.
        recorded: Region,
    },
}

impl RegionError {
    /// What to do about it, in one sentence.
    pub fn hint(&self) -> String {
        match self {
            RegionError::BadCount { .. } | RegionError::BadIndex { .. } => format!(
                "give --regions N (2 to {MAX_REGIONS}, the same in every region) and --region R (0 to N-1, a different one in each)"
            ),
            RegionError::HalfGiven { missing, .. } => format!("give {missing} too"),
            RegionError::NarrowWorkerField { .. } => {
                "use a layout with a wider worker field, or fewer regions".to_string()
            }
            RegionError::WorkerOutsideSlice {
                region, start, end, ..
            } => format!(
                "give a worker id from {start} to {} ({region}'s slice), check --region on this host, or (Leaf's forever tree) reclaim unused nodes with `leafctl workers reclaim` or use another --name",
                end - 1
            ),
            RegionError::Mismatch { recorded, .. } | RegionError::Unset { recorded, .. } => {
                format!(
                    "point this process at its own region's stores, or give it --region {} --regions {} if it is part of that region",
                    recorded.index, recorded.count
                )
            }
        }
    }
}

/// One region of a deployment split into [`Region::count`] independent regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Region {
    index: u32,
    count: u32,
}

impl Region {
    /// Region `index` of `count` (count from 2 to [`MAX_REGIONS`], index below count).
    pub fn new(index: u32, count: u32) -> Result<Region, RegionError> {
        if !(2..=MAX_REGIONS).contains(&count) {
            return Err(RegionError::BadCount { count });
        }
        if index >= count {
            return Err(RegionError::BadIndex { index, count });
        }
        Ok(Region { index, count })
    }

    /// From the two settings, either of which may be unset: none when both are, an error when
    /// only one is.
    pub fn from_settings(
        index: Option<u32>,
        count: Option<u32>,
    ) -> Result<Option<Region>, RegionError> {
        match (index, count) {
            (None, None) => Ok(None),
            (Some(_), None) => Err(RegionError::HalfGiven {
                given: "--region",
                missing: "--regions",
            }),
            (None, Some(_)) => Err(RegionError::HalfGiven {
                given: "--regions",
                missing: "--region",
            }),
            (Some(i), Some(n)) => Region::new(i, n).map(Some),
        }
    }

    /// This region's number, from 0.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many regions the deployment has.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Bits the region takes: enough to number `count` regions.
    pub fn bits(&self) -> u32 {
        bits_for(self.count)
    }

    /// The worker ids this region's registries may hand out, for a worker field of `worker_bits`:
    /// the ids whose top [`Region::bits`] bits are the region's number.
    pub fn worker_slice(&self, worker_bits: u32) -> Result<Range<u64>, RegionError> {
        let needed = self.bits() + 1;
        if worker_bits < needed {
            return Err(RegionError::NarrowWorkerField {
                worker_bits,
                count: self.count,
                needed,
            });
        }
        let size = 1u64 << (worker_bits - self.bits());
        let start = u64::from(self.index) * size;
        Ok(start..start + size)
    }

    /// The segment IDs this region issues: its block below 2^[`SEGMENT_ID_BITS`].
    pub fn segment_block(&self) -> Range<i64> {
        let size = 1i64 << (SEGMENT_ID_BITS - self.bits());
        let start = i64::from(self.index) * size;
        start..start + size
    }

    /// Which region of `count` a worker field belongs to (`worker` below 2^`worker_bits`).
    pub fn of_worker(worker: u64, worker_bits: u32, count: u32) -> Result<Region, RegionError> {
        let bits = bits_for(count);
        let index = if worker_bits < bits {
            0
        } else {
            (worker >> (worker_bits - bits)) as u32
        };
        Region::new(index, count)
    }

    /// Which region of `count` issued a segment ID; none when the ID lies above every block.
    pub fn of_segment_id(id: i64, count: u32) -> Result<Option<Region>, RegionError> {
        let size = 1i64 << (SEGMENT_ID_BITS - bits_for(count));
        let index = id.max(0) / size;
        if index >= i64::from(count) {
            Region::new(0, count)?;
            return Ok(None);
        }
        Region::new(index as u32, count).map(Some)
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "region {} of {}", self.index, self.count)
    }
}

/// The worker ids a registry may hand out in a `worker_bits`-wide worker field: the region's
/// slice ([`Region::worker_slice`]), or the whole field when no region is set.
pub fn worker_ids(region: Option<Region>, worker_bits: u32) -> Result<Range<u64>, RegionError> {
    match region {
        Some(r) => r.worker_slice(worker_bits),
        None => Ok(0..1u64.checked_shl(worker_bits).unwrap_or(u64::MAX)),
    }
}

/// Refuses `worker` (from `source_of`) when it lies outside the region's slice; any worker id
/// passes without a region (the layout's own range is checked elsewhere).
pub fn check_worker(
    region: Option<Region>,
    worker_bits: u32,
    worker: u64,
    source_of: &str,
) -> Result<(), RegionError> {
    let Some(r) = region else {
        return Ok(());
    };
    let slice = r.worker_slice(worker_bits)?;
    if slice.contains(&worker) {
        return Ok(());
    }
    Err(RegionError::WorkerOutsideSlice {
        worker,
        source_of: source_of.to_string(),
        region: r,
        start: slice.start,
        end: slice.end,
    })
}

/// Bits needed to number `count` regions (ceil(log2 count)).
const fn bits_for(count: u32) -> u32 {
    let count = if count == 0 { 1 } else { count };
    count.next_power_of_two().trailing_zeros()
}

/// The one rule for a store's recorded region: `recorded` is what the store holds (none when no
/// region was ever recorded in it), `mine` what this process was given. A store that holds none
/// is recorded by the caller when this returns `Ok(true)`; a store of another region, or of a
/// region when this process has none, is refused, naming both.
pub fn check_recorded(
    store: &str,
    recorded: Option<Region>,
    mine: Option<Region>,
) -> Result<bool, RegionError> {
    match (recorded, mine) {
        (None, None) => Ok(false),
        (None, Some(_)) => Ok(true),
        (Some(recorded), None) => Err(RegionError::Unset {
            store: store.to_string(),
            recorded,
        }),
        (Some(recorded), Some(mine)) if recorded != mine => Err(RegionError::Mismatch {
            store: store.to_string(),
            recorded,
            mine,
        }),
        (Some(_), Some(_)) => Ok(false),
    }
}

/// A region as a store records it: `"R/N"` (region R of N).
pub fn to_record(region: Region) -> String {
    format!("{}/{}", region.index, region.count)
}

/// Reads what [`to_record`] wrote; anything else is an error naming the text.
pub fn from_record(text: &str) -> Result<Region, String> {
    let (index, count) = text
        .trim()
        .split_once('/')
        .ok_or_else(|| format!("recorded region {text:?} is not R/N"))?;
    let number = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("recorded region {text:?} is not R/N"))
    };
    Region::new(number(index)?, number(count)?).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn counts_and_indexes_are_checked() {
        assert_eq!(Region::new(0, 1), Err(RegionError::BadCount { count: 1 }));
        assert_eq!(Region::new(0, 9), Err(RegionError::BadCount { count: 9 }));
        assert_eq!(
            Region::new(2, 2),
            Err(RegionError::BadIndex { index: 2, count: 2 })
        );
        assert!(Region::new(7, 8).is_ok());
        assert_eq!(Region::from_settings(None, None), Ok(None));
        assert!(matches!(
            Region::from_settings(Some(1), None),
            Err(RegionError::HalfGiven { .. })
        ));
        assert!(matches!(
            Region::from_settings(None, Some(2)),
            Err(RegionError::HalfGiven { .. })
        ));
    }

    #[test]
    fn region_bits_number_every_region() {
        for (count, bits) in [(2, 1), (3, 2), (4, 2), (5, 3), (8, 3)] {
            assert_eq!(Region::new(0, count).unwrap().bits(), bits, "{count}");
        }
    }

    /// Leaf's layout: 8 regions leave 128 workers each, in the top bits of the worker field.
    #[test]
    fn leafs_worker_field_splits_into_slices_of_128() {
        let r = Region::new(3, 8).unwrap();
        assert_eq!(r.worker_slice(10).unwrap(), 384..512);
        assert_eq!(
            Region::new(1, 2).unwrap().worker_slice(10).unwrap(),
            512..1024
        );
        assert!(matches!(
            r.worker_slice(3),
            Err(RegionError::NarrowWorkerField { needed: 4, .. })
        ));
        assert_eq!(Region::new(0, 2).unwrap().worker_slice(2).unwrap(), 0..2);
    }

    /// Every (region, worker in its slice, sequence) of a small layout maps to one ID of its own
    /// and back: the region bits overlap neither the other regions' nor the sequence's (the shift
    /// mistake reported of other generators).
    #[test]
    fn region_worker_and_sequence_map_to_one_id_each_exhaustively() {
        use crate::snowflake::Layout;
        for count in 2..=MAX_REGIONS {
            let bits = bits_for(count);
            let layout = Layout::custom(0, 63 - (bits + 2) - 3, bits + 2, 3, 1).unwrap();
            let mut seen = HashSet::new();
            for index in 0..count {
                let region = Region::new(index, count).unwrap();
                for worker in region.worker_slice(layout.worker_bits()).unwrap() {
                    for seq in 0..=layout.max_sequence() {
                        let id = layout.encode(5, worker, seq).unwrap();
                        assert!(seen.insert(id), "{region} worker {worker} seq {seq}");
                        let parts = layout.decode(id).unwrap();
                        let back =
                            Region::of_worker(parts.worker, layout.worker_bits(), count).unwrap();
                        assert_eq!(back, region);
                        assert_eq!((parts.worker, parts.sequence), (worker, seq));
                    }
                }
            }
            // Every worker id is some region's: the slices tile the field when count is a power
            // of two, and leave the top slots unused otherwise.
            let per = 1u64 << 2;
            assert_eq!(seen.len() as u64, u64::from(count) * per * 8);
        }
    }

    #[test]
    fn worker_ids_are_the_slice_or_the_whole_field() {
        let r = Region::new(1, 4).unwrap();
        assert_eq!(worker_ids(Some(r), 10).unwrap(), 256..512);
        assert_eq!(worker_ids(None, 10).unwrap(), 0..1024);
        assert_eq!(worker_ids(None, 64).unwrap(), 0..u64::MAX);
        assert!(check_worker(Some(r), 10, 256, "x").is_ok());
        assert!(check_worker(Some(r), 10, 511, "x").is_ok());
        assert!(check_worker(None, 10, 1000, "x").is_ok());
        let e = check_worker(Some(r), 10, 512, "--worker-id").unwrap_err();
        assert_eq!(
            e.to_string(),
            "worker id 512 (--worker-id) is outside region 1 of 4, whose worker ids are 256 to 511"
        );
        assert!(e.hint().contains("from 256 to 511"));
        assert!(check_worker(Some(r), 10, 255, "x").is_err());
    }

    #[test]
    fn segment_blocks_tile_the_space_below_2_pow_53() {
        for count in 2..=MAX_REGIONS {
            let mut end = 0;
            for index in 0..count {
                let block = Region::new(index, count).unwrap().segment_block();
                assert_eq!(block.start, end, "blocks of {count} regions are contiguous");
                assert!(block.end <= 1 << SEGMENT_ID_BITS);
                for id in [block.start, block.start + 1, block.end - 1] {
                    assert_eq!(
                        Region::of_segment_id(id, count).unwrap(),
                        Some(Region::new(index, count).unwrap())
                    );
                }
                end = block.end;
            }
        }
        assert_eq!(Region::new(1, 8).unwrap().segment_block(), 1 << 50..2 << 50);
        assert_eq!(Region::of_segment_id(1 << 53, 8).unwrap(), None);
    }

    #[test]
    fn the_recorded_region_is_checked_both_ways() {
        let r0 = Region::new(0, 2).unwrap();
        let r1 = Region::new(1, 2).unwrap();
        assert_eq!(check_recorded("db", None, None), Ok(false));
        assert_eq!(check_recorded("db", None, Some(r0)), Ok(true));
        assert_eq!(check_recorded("db", Some(r0), Some(r0)), Ok(false));
        let e = check_recorded("mysql://h/leaf", Some(r0), Some(r1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mysql://h/leaf belongs to region 0 of 2, but this process is region 1 of 2"
        );
        assert!(e.hint().contains("--region 0 --regions 2"));
        assert!(matches!(
            check_recorded("db", Some(r1), None),
            Err(RegionError::Unset { .. })
        ));
        // Same index, another count: a different deployment shape, refused too.
        let r0_of_4 = Region::new(0, 4).unwrap();
        assert!(check_recorded("db", Some(r0), Some(r0_of_4)).is_err());
    }

    #[test]
    fn records_round_trip_and_bad_ones_are_named() {
        let r = Region::new(2, 4).unwrap();
        assert_eq!(from_record(&to_record(r)), Ok(r));
        assert!(from_record("2/4\n").is_ok());
        assert!(from_record("x").unwrap_err().contains("\"x\""));
        assert!(from_record("4/4").is_err());
    }
}
