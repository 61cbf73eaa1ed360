//! Idle drop: a tag's buffers go after a long idle time (checked every refresh interval, real
//! time), and come back on first use with a claim of their own, never repeating an ID.

use super::*;

/// Unused for the idle time, a buffer goes: its tag is idle again (known, unloaded), and its
/// next request claims anew above everything the dropped buffer held; the issued total keeps
/// the dropped buffer's IDs.
#[test]
fn an_idle_buffer_goes_and_its_tag_claims_anew_above_its_old_ids() {
    let store = table(&[("a", 1, 100), ("b", 1, 100)]);
    // Idle for 1 s, not 0: with 0 a refresh between two of the 30 calls below (a thread
    // descheduled for a few ms on a busy machine) drops the buffer in the middle of them.
    let g = builder(&store)
        .refresh_interval(Duration::from_millis(2))
        .idle_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    assert_eq!(
        (g.totals().tags, g.totals().buffered),
        (2, 0),
        "no buffer before use"
    );
    let ids: Vec<u64> = (0..30).map(|_| g.next_id("a").unwrap()).collect();
    assert_eq!(ids, (1..31).collect::<Vec<_>>());
    // ID 11 asked for [101, 201): a loading buffer is not dropped, so once it goes the load is in.
    wait_for("the idle buffer was not dropped", || {
        g.totals().buffered == 0
    });
    assert_eq!(max_id(&store, "a"), 201);
    let v = g.view("a").unwrap();
    assert!(!v.init_ok && v.issued == 0, "{v:?}");
    assert_eq!(g.health(&v), TagHealth::Idle);
    assert_eq!(g.tags(), ["a", "b"], "the tag stays known");
    assert_eq!(
        g.next_id("a").unwrap(),
        201,
        "a claim of its own, above the dropped segments"
    );
    assert_eq!(store.claims(), 3);
    assert_eq!(
        g.totals().issued,
        31,
        "the dropped buffer's IDs still count"
    );
    assert!(
        !g.view("b").unwrap().init_ok,
        "a tag never asked for has no buffer"
    );
}

/// A buffer that keeps issuing is never dropped, however long it lives; once it stops for the
/// idle time, it goes.
#[test]
fn a_buffer_in_use_is_not_dropped() {
    let store = table(&[("t", 1, 1000)]);
    // Far above the 2 ms between calls, so only a stall of the whole test thread longer than
    // this (not seen) could pass for idleness.
    let idle = Duration::from_millis(500);
    let g = builder(&store)
        .refresh_interval(Duration::from_millis(2))
        .idle_timeout(idle)
        .build()
        .unwrap();
    let started = Instant::now();
    let mut ids = Vec::new();
    let mut last = started;
    while started.elapsed() < idle + Duration::from_millis(100) {
        last = Instant::now();
        ids.push(g.next_id("t").unwrap());
        assert_eq!(g.totals().buffered, 1, "dropped while in use");
        std::thread::sleep(Duration::from_millis(2));
    }
    let n = ids.len() as u64;
    assert_eq!(ids, (1..=n).collect::<Vec<_>>(), "one buffer throughout");
    assert!(store.claims() <= 2, "{} claims", store.claims());
    wait_for("the buffer was not dropped once unused", || {
        g.totals().buffered == 0
    });
    // The loader reads the time before the count, so it may date the last ID a little early.
    assert!(
        last.elapsed() + Duration::from_millis(10) >= idle,
        "dropped {:?} after its last ID",
        last.elapsed()
    );
}

/// A handle keeps its buffer after the generator dropped it as idle: the handle issues on from
/// its segments (and claims more), the generator's new buffer claims its own, and no ID is
/// issued by both.
#[test]
fn a_handle_outlives_the_idle_drop_of_its_buffer_without_sharing_an_id() {
    let store = table(&[("t", 1, 10)]);
    let g = builder(&store)
        .refresh_interval(Duration::from_millis(2))
        .idle_timeout(Duration::ZERO)
        .build()
        .unwrap();
    let h = g.handle("t").unwrap();
    assert_eq!(h.next_id().unwrap(), 1);
    wait_for("the idle buffer was not dropped", || {
        g.totals().buffered == 0
    });
    assert!(h.view().init_ok, "the handle's buffer is kept as it was");
    // 2 asks for [11, 21) for the handle before the generator's new buffer asks for its first.
    assert_eq!(h.next_id().unwrap(), 2);
    assert_eq!(g.next_id("t").unwrap(), 21, "the new buffer's own claim");
    let mut from_handle: Vec<u64> = (0..18).map(|_| h.next_id().unwrap()).collect();
    assert_eq!(from_handle, (3..21).collect::<Vec<_>>());
    let mut from_generator = vec![21];
    for _ in 0..50 {
        from_handle.push(h.next_id().unwrap());
        from_generator.push(next_id_once_ready(&g, "t"));
    }
    assert!(from_handle.is_sorted() && from_generator.is_sorted());
    let all: Vec<u64> = from_handle.iter().chain(&from_generator).copied().collect();
    assert!(all_distinct(&all), "an ID went out twice: {all:?}");
    let top = max_id(&store, "t") as u64;
    assert!(all.iter().all(|&id| id < top));
    assert_eq!(h.view().issued, 70, "the handle's buffer counts its own");
}
