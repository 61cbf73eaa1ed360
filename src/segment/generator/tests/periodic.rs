//! A periodic tag through the generator (issue 48 item 3), on a fake clock: each ID from the row
//! of the period the clock says, the next period's row opened and claimed before its first
//! second, a late clock issuing on from the earlier row, batches composed, and the period rows
//! themselves never issued from by name.

use std::sync::Arc;

use super::*;
use crate::segment::{AllocStoreExt, NewTag, PeriodicShape, TagShape, add_shaped_tag};
use crate::snowflake::FakeClock;

/// 2026-12-06T15:59:00Z: 23:59:00 in Shanghai, a minute before 2026-12-07 there.
const BEFORE_MIDNIGHT_MS: i64 = 1_796_572_740_000;

fn periodic_generator() -> (Arc<MemoryStore>, Arc<FakeClock>, SegmentGenerator) {
    let store = Arc::new(MemoryStore::new());
    let shape = PeriodicShape::new(
        "bill",
        crate::segment::Period::Day,
        "Asia/Shanghai",
        "7",
        4,
        None,
    )
    .unwrap();
    add_shaped_tag(
        &*store,
        &NewTag::new("bill", 10),
        &TagShape::Periodic(shape),
    )
    .unwrap();
    let clock = Arc::new(FakeClock::new(BEFORE_MIDNIGHT_MS));
    let generator = SegmentGenerator::builder(store.clone() as Arc<dyn AllocStore>)
        .clock(clock.clone())
        .build()
        .unwrap();
    (store, clock, generator)
}

#[test]
fn ids_follow_the_clocks_period_and_the_next_row_is_claimed_ahead() {
    let (store, clock, g) = periodic_generator();
    assert_eq!(g.next_id("bill").unwrap(), 2026120670001);
    assert_eq!(g.next_id("bill").unwrap(), 2026120670002);
    // Within PREFETCH_AHEAD_MS of midnight: the next day's row is made and claimed in the
    // background, before its first second.
    clock.set_ms(BEFORE_MIDNIGHT_MS + 40_000);
    assert_eq!(g.next_id("bill").unwrap(), 2026120670003);
    assert!(
        wait_for(|| store
            .get("bill@20261207")
            .unwrap()
            .is_some_and(|r| r.max_id > 1)),
        "tomorrow's row claimed ahead"
    );
    let claims_before = store.claims();
    let waits_before = g.totals().load_waits;
    assert!(
        waits_before >= 1,
        "the first ID of the first day waited for its claim"
    );
    clock.set_ms(BEFORE_MIDNIGHT_MS + 61_000);
    assert_eq!(
        g.next_id("bill").unwrap(),
        2026120770001,
        "a new day starts at 1"
    );
    assert_eq!(
        store.claims(),
        claims_before,
        "the first ID of the day waited for no claim"
    );
    assert_eq!(
        g.totals().load_waits,
        waits_before,
        "nor did the request wait"
    );
    // A clock that steps back issues on from the earlier day's row, never from 1 again.
    clock.set_ms(BEFORE_MIDNIGHT_MS + 50_000);
    assert_eq!(g.next_id("bill").unwrap(), 2026120670004);
    clock.set_ms(BEFORE_MIDNIGHT_MS + 62_000);
    let batch: Vec<u64> = g
        .next_ids("bill", 3)
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(batch, vec![2026120770002, 2026120770003, 2026120770004]);
    // Monitoring counts the tag as one: its own buffer holds the count of every period's IDs.
    assert_eq!(g.view("bill").unwrap().issued, 8);
    // The base row is never claimed from; a period row asked for by name issues nothing.
    assert_eq!(store.get("bill").unwrap().unwrap().max_id, 1);
    assert!(g.next_id("bill@20261207").is_err());
}

#[test]
fn a_periods_sequence_is_refused_past_its_width() {
    let (store, _clock, g) = periodic_generator();
    store.add("bill@20261206", 9995, 10, None, false).unwrap();
    store
        .shape_mark("bill@20261206", Some("period-of=bill"))
        .unwrap();
    let ids: Vec<u64> = (0..4).map(|_| g.next_id("bill").unwrap()).collect();
    assert_eq!(
        ids,
        vec![2026120679995, 2026120679996, 2026120679997, 2026120679998]
    );
    assert_eq!(g.next_id("bill").unwrap(), 2026120679999);
    assert!(g.next_id("bill").is_err(), "9999 is the last of 4 digits");
}

fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}
