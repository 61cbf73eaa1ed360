//! Loading the next segment in the background: when it is claimed, how often, and what a caller
//! that uses its segment up before the next one arrives gets.

use super::*;

/// The next segment is claimed by the loader once a tenth of the current one is used, once;
/// the switch to it costs no claim and skips no ID, and the one after is claimed a tenth into
/// it again.
#[test]
fn the_next_segment_is_claimed_once_a_tenth_of_the_current_one_is_used() {
    let (store, g) = generator("t", 100);
    let ids: Vec<u64> = (0..10).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids, (1..11).collect::<Vec<_>>());
    assert_eq!(store.claims(), 1, "the first segment only");
    let v = g.view("t").unwrap();
    assert!(!v.loading && !v.next_ready, "nothing asked for yet: {v:?}");
    assert_eq!(
        g.next_id("t").unwrap(),
        11,
        "the preload point: 1 + 100 / 10"
    );
    until_next_ready(&g, "t");
    assert_eq!((store.claims(), max_id(&store, "t")), (2, 201));
    // Through the rest of the segment and into the next, short of its preload point.
    let ids: Vec<u64> = (0..99).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids, (12..111).collect::<Vec<_>>(), "no gap at the switch");
    let v = g.view("t").unwrap();
    assert_eq!(v.segments[v.pos].max, 201, "switched to [101, 201)");
    assert!(!v.loading && !v.next_ready, "{v:?}");
    assert_eq!(store.claims(), 2, "the switch claims nothing");
    assert_eq!(g.next_id("t").unwrap(), 111);
    until_next_ready(&g, "t");
    assert_eq!((store.claims(), max_id(&store, "t")), (3, 301));
    let v = g.view("t").unwrap();
    assert_eq!((v.claims, v.claim_failures, v.issued), (3, 0, 111));
    assert_eq!(g.totals().claims, 3);
}

/// A caller that uses its segment up while the next one is still being claimed waits for that
/// claim (it does not start another) and gets the very next ID.
#[test]
fn a_caller_that_outruns_the_preload_waits_for_it_and_skips_no_id() {
    let (store, g) = generator("t", 10);
    assert_eq!(g.next_id("t").unwrap(), 1);
    store.set_latency(Duration::from_millis(30));
    // ID 2 asks for [11, 21), which takes 30 ms; 3 to 10 are at hand, 11 waits for it.
    let ids: Vec<u64> = (0..10).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids, (2..12).collect::<Vec<_>>());
    assert_eq!(
        store.claims(),
        2,
        "the waiting caller started no claim of its own"
    );
    let v = g.view("t").unwrap();
    assert_eq!(v.segments[v.pos].max, 21);
    assert_eq!(v.claim_failures, 0);
}

/// A claim slower than the wait timeout: callers get `NotReady` without a cause (nothing
/// failed) after about the timeout, start no second claim, and the claim's IDs come once it
/// lands, from the first.
#[test]
fn a_load_slower_than_the_wait_timeout_is_not_ready_then_serves_from_the_first_id() {
    let store = table(&[("t", 1, 10)]);
    let g = builder(&store)
        .wait_timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    store.set_latency(Duration::from_millis(150));
    let started = Instant::now();
    match g.next_id("t") {
        Err(SegmentError::NotReady { tag, cause: None }) => assert_eq!(tag, "t"),
        other => panic!("expected NotReady without a cause, got {other:?}"),
    }
    assert!(started.elapsed() >= Duration::from_millis(20));
    assert_eq!(next_id_once_ready(&g, "t"), 1);
    assert_eq!(
        store.claims(),
        1,
        "the callers meanwhile waited for the one claim"
    );
}
