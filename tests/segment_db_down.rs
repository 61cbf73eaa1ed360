//! The generator while its MariaDB goes away and comes back (a private server for this binary,
//! since the test kills it).

mod support;

use std::time::{Duration, Instant};

use leafctl::segment::{AllocStore, MysqlStore, SegmentError, SegmentGenerator};
use support::mariadb::{MariaDb, PASSWORD};
use support::{assert_unique, wait_until};

#[test]
fn keeps_issuing_then_says_not_ready_then_recovers() {
    let db = MariaDb::start();
    let name = db.fresh_db();
    let url = db.url(&name);
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

    db.kill();

    // Both segments are still served: the rest of [1, 1001) and all of [1001, 2001).
    let err = loop {
        match h.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => break e,
        }
    };
    assert_eq!(ids.len(), 2000, "every buffered ID was issued");
    assert_eq!(ids, (1..=2000).collect::<Vec<u64>>());
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
