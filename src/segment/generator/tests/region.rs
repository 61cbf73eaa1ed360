//! A region's generator (`serve --segment --region R`): IDs come from the region's block only,
//! the last ones of the block included, and never one past its end.

use super::*;
use crate::region::Region;
use crate::segment::{MemoryStore, enter_region};

/// Region 1 of 2's generator on a table confined to the region, whose one tag `tag` (step
/// `step`) starts `left` IDs before the end of the region's block.
fn near_the_block_end(
    tag: &str,
    left: i64,
    step: i64,
) -> (Arc<MemoryStore>, Range<i64>, SegmentGenerator) {
    let region = Region::new(1, 2).unwrap();
    let mut store = MemoryStore::new();
    enter_region(&mut store, Some(region)).unwrap();
    let block = region.segment_block();
    store.add(tag, block.end - left, step, None, false).unwrap();
    let store = Arc::new(store);
    let g = builder(&store).build().unwrap();
    (store, block, g)
}

/// Singles run to the block's last ID (the last claim smaller than the step, as below 2^63-1),
/// then the tag is used up: the table stops at the block's end, not past it.
#[test]
fn singles_use_the_block_to_its_last_id_and_stop_there() {
    let (store, block, g) = near_the_block_end("t", 25, 10);
    let until = Instant::now() + PATIENCE;
    let mut ids = Vec::new();
    let last = loop {
        assert!(
            Instant::now() < until,
            "not used up within {PATIENCE:?}: {ids:?}"
        );
        match g.next_id("t") {
            Ok(id) => ids.push(id),
            Err(e @ SegmentError::Exhausted { .. }) => break e,
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    let expected: Vec<u64> = ((block.end - 25) as u64..block.end as u64).collect();
    assert_eq!(ids, expected);
    assert!(matches!(last, SegmentError::Exhausted { ceiling, .. } if ceiling == block.end));
    assert_eq!(max_id(&store, "t"), block.end);
}

/// A batch larger than what is left of the block is refused whole, saying how many are left
/// (issue 45: it was called exhausted); the table does not move past the block, and what is
/// left is still issued.
#[test]
fn a_batch_past_the_block_end_is_refused_without_crossing() {
    let (store, block, g) = near_the_block_end("b", 8, 3);
    let until = Instant::now() + PATIENCE;
    let refused = loop {
        assert!(Instant::now() < until, "no answer within {PATIENCE:?}");
        match g.next_ids("b", 20) {
            Ok(r) => panic!("a batch of 20 with 8 left: {r:?}"),
            Err(e @ SegmentError::TooFew { .. }) => break e,
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    assert!(
        matches!(
            refused,
            SegmentError::TooFew {
                count: 20,
                left: 8,
                ..
            }
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("has 8 IDs left"), "{refused}");
    assert!(max_id(&store, "b") <= block.end);
    let mut ids = Vec::new();
    while ids.len() < 8 {
        assert!(Instant::now() < until, "the last 8 not issued: {ids:?}");
        match g.next_id("b") {
            Ok(id) => ids.push(id),
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    assert!(all_distinct(&ids));
    assert!(
        ids.iter()
            .all(|&id| ((block.end - 8) as u64..block.end as u64).contains(&id))
    );
    assert_eq!(max_id(&store, "b"), block.end);
    // The status page's headroom counts to the block's end, not to 2^63-1.
    let h = g.view("b").and_then(|v| v.headroom()).unwrap();
    assert_eq!(h.ids_left, 0, "{h:?}");
}

/// A batch that takes the block's last IDs leaves the tag used up, and the generator's short
/// list of tags needing attention (what `/readyz`, `/metrics` and the status page read) says
/// so at once, before any later request fails (a seam the model of the command surface found:
/// `/readyz` said "ok" until then).
#[test]
fn a_batch_that_takes_the_last_ids_lists_the_tag_as_used_up_at_once() {
    let (_store, _block, g) = near_the_block_end("t", 3, 5);
    let until = Instant::now() + PATIENCE;
    let ranges = loop {
        assert!(Instant::now() < until, "no batch within {PATIENCE:?}");
        match g.next_ids("t", 3) {
            Ok(ranges) => break ranges,
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    };
    assert_eq!(ranges.iter().map(|r| r.end - r.start).sum::<u64>(), 3);
    let listed = g.troubled();
    assert!(
        listed
            .iter()
            .any(|v| v.tag == "t" && g.health(v) == TagHealth::Exhausted),
        "{listed:?}"
    );
}
