//! Retirement: a tag removed from the table stops issuing once the tag list is read again, a
//! tag added is found, and a tag removed and added again continues above its old IDs.

use super::*;

/// Removed from the table, a tag issues what its buffers hold until the next refresh, then is
/// unknown to singles and batches alike; the other tags go on, and the totals keep its IDs.
#[test]
fn a_removed_tag_stops_issuing_once_the_tag_list_is_read_again() {
    let store = table(&[("a", 1, 10), ("b", 1, 10)]);
    let g = builder(&store).build().unwrap();
    assert_eq!((g.next_id("a").unwrap(), g.next_id("b").unwrap()), (1, 1));
    store.remove("a").unwrap();
    assert_eq!(g.next_id("a").unwrap(), 2, "claimed before the removal");
    g.refresh();
    assert_eq!(g.tags(), ["b"]);
    assert!(g.view("a").is_none());
    assert!(matches!(
        g.next_id("a"),
        Err(SegmentError::UnknownTag { .. })
    ));
    assert!(matches!(
        g.next_ids("a", 3),
        Err(SegmentError::UnknownTag { .. })
    ));
    assert_eq!(g.next_id("b").unwrap(), 2);
    let totals = g.totals();
    assert_eq!((totals.tags, totals.buffered, totals.issued), (1, 1, 4));
}

/// A handle on a removed tag issues what its buffer holds, then fails: its next claim finds no
/// row, and nothing is claimed for it again.
#[test]
fn a_handle_on_a_removed_tag_issues_its_buffers_then_fails() {
    let (store, g) = generator("t", 10);
    let h = g.handle("t").unwrap();
    assert_eq!(h.next_id().unwrap(), 1);
    store.remove("t").unwrap();
    g.refresh();
    // 2 asks for the next segment: the claim finds no row.
    let ids: Vec<u64> = (0..9).map(|_| h.next_id().unwrap()).collect();
    assert_eq!(ids, (2..11).collect::<Vec<_>>());
    wait_for("the failed claim", || h.view().last_error.is_some());
    match h.next_id() {
        Err(SegmentError::NotReady {
            cause: Some(cause), ..
        }) => assert!(cause.contains("unknown tag"), "{cause}"),
        other => panic!("expected NotReady, got {other:?}"),
    }
    // The loader retries a failed claim after RETRY_AFTER, but not this one.
    let claims = store.claims();
    std::thread::sleep(crate::segment::buffer::RETRY_AFTER + Duration::from_millis(100));
    assert_eq!(store.claims(), claims, "an unknown tag is not retried");
    assert!(h.next_id().is_err());
}

/// Removed, then added again without a start: the tag continues above every ID its old buffers
/// held (the table keeps the removed tag's `max_id`), found at once without a refresh.
#[test]
fn a_removed_and_readded_tag_continues_above_every_id_it_issued() {
    let (store, g) = generator("t", 100);
    let mut ids: Vec<u64> = (0..11).map(|_| g.next_id("t").unwrap()).collect();
    until_next_ready(&g, "t");
    store.remove("t").unwrap();
    g.refresh();
    assert!(matches!(
        g.next_id("t"),
        Err(SegmentError::UnknownTag { .. })
    ));
    let added = store
        .add_tag(&crate::segment::NewTag::new("t", 100))
        .unwrap();
    assert_eq!(added.start, 201, "above the removed buffers' [101, 201)");
    ids.extend((0..150).map(|_| g.next_id("t").unwrap()));
    assert_eq!(ids[11..], (201..351).collect::<Vec<_>>()[..]);
    assert!(all_distinct(&ids));
    assert_eq!(g.tags(), ["t"]);
}

/// A tag added after the start is found at once by a request, without a refresh; the loader's
/// own refresh finds added tags (without making them a buffer) and drops removed ones.
#[test]
fn added_tags_are_found_at_once_and_the_refresh_keeps_the_list() {
    let store = table(&[("a", 1, 10)]);
    let g = builder(&store).build().unwrap();
    store.add("b", 500, 10, None, false).unwrap();
    assert_eq!(g.tags(), ["a"], "the list is read every minute");
    assert_eq!(g.next_id("b").unwrap(), 500, "looked up at once");
    assert_eq!(g.tags(), ["a", "b"]);
    assert!(matches!(
        g.next_id("c"),
        Err(SegmentError::UnknownTag { .. })
    ));
    assert!(matches!(
        g.next_id("no such tag"),
        Err(SegmentError::InvalidTag { .. })
    ));
    let quick = builder(&store)
        .refresh_interval(Duration::from_millis(2))
        .build()
        .unwrap();
    store.add("c", 900, 10, None, false).unwrap();
    wait_for("the refresh never found c", || {
        quick.tags() == ["a", "b", "c"]
    });
    assert!(!quick.view("c").unwrap().init_ok, "known, not loaded");
    assert_eq!(quick.totals().buffered, 0);
    store.remove("a").unwrap();
    wait_for("the refresh never dropped a", || quick.tags() == ["b", "c"]);
    assert!(matches!(
        quick.next_id("a"),
        Err(SegmentError::UnknownTag { .. })
    ));
}
