//! The generator while its MariaDB goes away and comes back (a private server for this binary,
//! since the test kills it).

use crate::support;

use std::time::{Duration, Instant};

use leafctl::db::mysql::MysqlStore;
use leafctl::segment::AllocStoreExt;
use leafctl::segment::{AllocStore, SegmentError, SegmentGenerator};
use support::mariadb::{MariaDb, PASSWORD};
use support::{assert_unique, wait_until};

#[test]
fn keeps_issuing_then_says_not_ready_then_recovers() {
    let db = MariaDb::start();
    let (_, url) = db.fresh_db_url();
    let admin = MysqlStore::open(&url, Some(PASSWORD)).unwrap();
    admin.init_schema().unwrap();
    admin.add("down", 1, 1000, None, false).unwrap();

    let g = SegmentGenerator::builder(
        Box::new(MysqlStore::open(&url, Some(PASSWORD)).unwrap()) as Box<dyn AllocStore>
    )
    .wait_timeout(Duration::from_millis(500))
    .build()
    .unwrap();
    let h = g.handle("down").unwrap();
    let mut ids: Vec<u64> = (0..200).map(|_| h.next_id().unwrap()).collect();
    assert!(wait_until(Duration::from_secs(10), || h.view().next_ready));

    // What both segments hold: the rest of [1, 1001) and all of the next (the table's step, or
    // more when the claims are slow for the rate: see `SegmentBuffer::plan_load`).
    let claimed = admin.get("down").unwrap().unwrap().max_id as u64;
    assert!(claimed >= 2001, "{claimed}");
    db.kill();

    // Both segments are still served, to the last ID.
    let err = loop {
        match h.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => break e,
        }
    };
    assert_eq!(
        ids,
        (1..claimed).collect::<Vec<u64>>(),
        "every buffered ID, once"
    );
    match &err {
        SegmentError::NotReady { tag, cause } => {
            assert_eq!(tag, "down");
            let cause = cause.as_deref().unwrap_or_default();
            assert!(cause.contains("cannot reach"), "{cause}");
        }
        other => panic!("expected NotReady, got {other:?}"),
    }
    // It stays a quick, clear error while the database is down.
    for _ in 0..3 {
        let t = Instant::now();
        assert!(matches!(h.next_id(), Err(SegmentError::NotReady { .. })));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
    assert!(h.view().last_error.is_some());

    db.restart();

    // It recovers by itself: the loader retries, or the next caller starts a load.
    let mut recovered = None;
    assert!(
        wait_until(Duration::from_secs(60), || match h.next_id() {
            Ok(id) => {
                recovered = Some(id);
                true
            }
            Err(_) => false,
        }),
        "no recovery: {:?}",
        h.view()
    );
    ids.extend(recovered);
    for _ in 0..5000 {
        ids.push(h.next_id().unwrap());
    }
    assert!(h.view().last_error.is_none());
    let max_id = admin.get("down").unwrap().unwrap().max_id as u64;
    assert!(ids.iter().all(|&id| id >= 1 && id < max_id));
    assert_unique(&mut ids);

    // Dropping the generator stops its background thread.
    let loaders = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
            .filter(|c| c.starts_with("leafctl-segment"))
            .count()
    };
    assert_eq!(loaders(), 1);
    drop(g);
    assert_eq!(loaders(), 0);
}

/// Issue 33's first finding, as a user met it: `serve --segment` on MariaDB, tag `order` with
/// step 2000, 300 IDs issued and the next segment loaded, then mariadbd frozen. A batch larger
/// than the buffers is refused in bounded time without touching them; a smaller one and every
/// single ID still come from them, to the last; nothing buffered is thrown away.
#[test]
fn a_batch_larger_than_the_buffers_during_an_outage_costs_serve_nothing() {
    use support::Sandbox;

    let db = MariaDb::start();
    let (_, url) = db.fresh_db_url();
    let admin = MysqlStore::open(&url, Some(PASSWORD)).unwrap();
    admin.init_schema().unwrap();
    admin.add("order", 1, 2000, None, false).unwrap();
    let sb = Sandbox::new();
    let server = support::mariadb::serve_segment(&sb, &url);
    let single = "/api/segment/get/order";
    let mut ids: Vec<u64> = (0..300).map(|_| server.get(single).id()).collect();
    assert_eq!(ids, (1..=300).collect::<Vec<u64>>());
    assert!(wait_until(Duration::from_secs(10), || server.next_ready("order")));

    let claimed = admin.get("order").unwrap().unwrap().max_id as u64;
    // More than the buffers hold (about 3,700: the rest of the first segment and the next).
    let big_path = format!("/api/segment/get/order?count={}", claimed - 301 + 1000);
    db.pause();
    let t = Instant::now();
    let big = server.get(&big_path);
    let first_wait = t.elapsed();
    big.assert_error(503, "not_ready");
    assert!(big.body.contains("kept for single IDs"), "{}", big.body);
    // Bounded by one claim's timeouts (5 s a statement, a reconnect tried once).
    assert!(first_wait < Duration::from_secs(12), "{first_wait:?}");
    let t = Instant::now();
    server.get(&big_path).assert_error(503, "not_ready");
    let second_wait = t.elapsed();
    eprintln!(
        "batch of {} in the outage: first {first_wait:?}, then {second_wait:?}",
        claimed - 301 + 1000
    );
    // A batch the buffers hold is served from them, and single IDs take the rest.
    let batch = server.get("/api/segment/get/order?count=100").ids();
    assert_eq!(batch, (301..=400).collect::<Vec<u64>>());
    ids.extend(batch);
    let (rest, refused) = server.ids_until_refused(single, Duration::ZERO);
    assert_eq!(
        rest,
        (401..claimed).collect::<Vec<u64>>(),
        "every buffered ID"
    );
    ids.extend(rest);
    refused.assert_error(503, "not_ready");

    db.resume();
    let mut back = None;
    assert!(wait_until(Duration::from_secs(60), || {
        let r = server.get(single);
        back = (r.status == 200).then(|| r.id());
        back.is_some()
    }));
    let back = back.unwrap();
    // The refused batches' claims may have been committed when mariadbd woke (their client had
    // gone): those ranges are skipped, never issued.
    assert!(back >= claimed, "{back}");
    eprintln!("after the outage the next ID is {back}");
    ids.push(back);
    ids.extend(server.get("/api/segment/get/order?count=5000").ids());
    assert_unique(&mut ids);
    server.stop_cleanly();
}
