//! The database down: singles served from the buffers, `not ready` once they run out (quickly,
//! without hammering the table), and recovery, by the loader or the next caller, once it is up.

use super::*;

/// Down with 18 IDs buffered: all 18 go out, in order; then `NotReady` naming the cause, at
/// once and without a claim per call; the tag is failing and stuck; back up, the next ID is
/// the one after the buffered ones, and the tag is healthy again.
#[test]
fn singles_come_from_the_buffers_while_down_then_not_ready_then_the_next_id() {
    let (store, g) = two_taken_and_the_next_loaded();
    store.set_down(true);
    let ids: Vec<u64> = (0..18).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids, (3..21).collect::<Vec<_>>());
    let claims = store.claims();
    for _ in 0..100 {
        let started = Instant::now();
        match g.next_id("t") {
            Err(SegmentError::NotReady {
                cause: Some(cause), ..
            }) => assert!(cause.contains("down"), "{cause}"),
            other => panic!("expected NotReady with a cause, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_millis(250));
    }
    assert!(
        store.claims() <= claims + 2,
        "{} claims for 100 calls",
        store.claims() - claims
    );
    let v = g.view("t").unwrap();
    assert!(v.stuck(), "{v:?}");
    assert_eq!(g.health(&v), TagHealth::Failing);
    until_troubled(&g, &["t"]);
    assert!(g.totals().claim_failures >= 1);
    store.set_down(false);
    assert_eq!(next_id_once_ready(&g, "t"), 21);
    let v = g.view("t").unwrap();
    assert!(v.last_error.is_none());
    assert_eq!(g.health(&v), TagHealth::Ok);
    until_troubled(&g, &[]);
}

/// A preload that failed is retried by the loader after
/// [`RETRY_AFTER`](crate::segment::buffer::RETRY_AFTER) with no caller asking.
#[test]
fn the_loader_retries_a_failed_preload_without_a_caller() {
    let (store, g) = generator("t", 10);
    assert_eq!(g.next_id("t").unwrap(), 1);
    store.set_down(true);
    assert_eq!(g.next_id("t").unwrap(), 2, "asks for [11, 21): refused");
    wait_for("the preload never failed", || {
        g.view("t").unwrap().last_error.is_some()
    });
    store.set_down(false);
    until_next_ready(&g, "t");
    assert_eq!((store.claims(), max_id(&store, "t")), (3, 21));
    let v = g.view("t").unwrap();
    assert_eq!((v.claims, v.claim_failures), (3, 1));
    assert!(v.last_error.is_none());
    let ids: Vec<u64> = (0..18).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids, (3..21).collect::<Vec<_>>());
}

/// A tag first asked for while the database is down: `NotReady` with the cause, nothing
/// loaded; once up, its IDs start at its first.
#[test]
fn a_tag_first_asked_for_while_down_starts_at_its_first_id_once_up() {
    let (store, g) = generator("t", 10);
    store.set_down(true);
    match g.next_id("t") {
        Err(SegmentError::NotReady {
            cause: Some(cause), ..
        }) => assert!(cause.contains("cannot reach"), "{cause}"),
        other => panic!("expected NotReady with a cause, got {other:?}"),
    }
    let v = g.view("t").unwrap();
    assert!(!v.init_ok);
    assert_eq!(g.health(&v), TagHealth::Failing);
    store.set_down(false);
    assert_eq!(next_id_once_ready(&g, "t"), 1);
    assert_eq!(g.next_id("t").unwrap(), 2);
}

/// A tag the generator does not know is looked up in the table: while it is down the answer
/// is that it cannot be reached, not that the tag does not exist.
#[test]
fn an_unknown_tag_asked_for_while_down_is_unreachable_not_unknown() {
    let (store, g) = generator("t", 10);
    store.set_down(true);
    assert!(matches!(
        g.next_id("new"),
        Err(SegmentError::Unreachable { .. })
    ));
    store.add("new", 7, 10, None, false).unwrap_err();
    store.set_down(false);
    assert!(matches!(
        g.next_id("other"),
        Err(SegmentError::UnknownTag { .. })
    ));
    store.add("new", 7, 10, None, false).unwrap();
    assert_eq!(g.next_id("new").unwrap(), 7);
}

/// A caller told a tag is used up finds it among the troubled tags at once (what `/metrics` and
/// the status page list as needing attention), not only once the loader, which woke the caller
/// before it updated that list, gets to it. 300 tags, each used up at its first load.
#[test]
fn a_tag_a_caller_was_told_is_used_up_is_troubled_as_the_answer_returns() {
    let rows: Vec<(String, i64, i64)> = (0..300)
        .map(|i| (format!("t{i:03}"), i64::MAX, 10))
        .collect();
    let rows: Vec<(&str, i64, i64)> = rows.iter().map(|(t, s, n)| (t.as_str(), *s, *n)).collect();
    let store = table(&rows);
    let g = builder(&store).build().unwrap();
    for &(tag, _, _) in &rows {
        match g.next_id(tag) {
            Err(SegmentError::Exhausted { .. }) => {}
            other => panic!("{tag}: {other:?}"),
        }
        assert!(
            g.troubled().iter().any(|v| v.tag == tag),
            "{tag} was answered used up but is not troubled yet"
        );
    }
}
