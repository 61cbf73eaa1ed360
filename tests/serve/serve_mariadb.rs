//! `leafctl serve` in segment mode on a real MariaDB: Leaf's own table, several servers sharing a
//! tag under concurrent load, and the database going away under load.

use crate::support;

use std::time::{Duration, Instant};

use support::mariadb::{LEAF_DDL, LEAF_ROW, MariaDb, PASSWORD};
use support::serve::{Serve, Server, hammer, http};
use support::{Sandbox, assert_unique, wait_until};

/// A fresh database with Leaf's own table (LEAF_DDL) and `row` inserted into it: its name and
/// URL.
fn leaf_table_db(db: &MariaDb, row: &str) -> (String, String) {
    let name = db.fresh_db();
    db.root_sql(Some(&name), LEAF_DDL);
    db.root_sql(Some(&name), row);
    let url = db.url(&name);
    (name, url)
}

#[test]
fn two_servers_share_leafs_table_without_a_duplicate() {
    let db = MariaDb::shared();
    let (_, url) = leaf_table_db(db, LEAF_ROW);
    let sb = Sandbox::new();
    let segment = Serve::new(&sb)
        .env("LEAF_DB", &url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["--segment"]);
    let a = segment.start();
    let b = segment.start();

    let tag = "/api/segment/get/leaf-segment-test";
    let mut ids = hammer(&[a.addr, b.addr], 6, 300, tag);
    // 6 threads x (270 single IDs + 30 batches of 100).
    support::assert_n_unique(&mut ids, 6 * (270 + 30 * 100));
    assert!(ids[0] >= 1, "Leaf's row starts at max_id 1");

    // /db shows Leaf's row as both servers left it.
    let rows = a.get("/db").json();
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["key"], "leaf-segment-test");
    assert_eq!(row["description"], "Test leaf Segment Mode Get Id");
    let max_id: u64 = row["maxId"].as_str().unwrap().parse().unwrap();
    assert!(max_id > *ids.last().unwrap());
    // Each server counted what it answered.
    let issued = |s: &Server| -> u64 {
        let m = s.get("/metrics").body;
        m.lines()
            .find(|l| {
                l.starts_with("leaf_ids_issued_total{mode=\"segment\",tag=\"leaf-segment-test\"}")
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(issued(&a) + issued(&b), ids.len() as u64);
    let m = a.get("/metrics").body;
    assert!(
        m.contains("leaf_segment_loads_total{tag=\"leaf-segment-test\"}"),
        "{m}"
    );
}

#[test]
fn database_down_answers_from_buffers_then_503_then_recovers() {
    let db = MariaDb::start();
    let (_, url) = leaf_table_db(
        &db,
        "insert into leaf_alloc(biz_tag, max_id, step) values('down', 1, 1000)",
    );
    let sb = Sandbox::new();
    let s = Serve::new(&sb)
        .env("LEAF_DB", &url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["--segment"])
        .start();
    let path = "/api/segment/get/down";
    let mut ids: Vec<u64> = (0..200).map(|_| s.get(path).id()).collect();
    // The next segment is loaded once 10% of the first is used.
    assert!(wait_until(Duration::from_secs(20), || {
        s.get("/cache").json()[0]["nextReady"] == true
    }));

    db.kill();

    // A batch bigger than the buffers in the outage is refused, and costs them nothing: the
    // refusal carries what they hold and what was handed out (issue 46: what a checker judges a
    // refusal by), and every buffered ID is still served below.
    let batch = s.get(&format!("{path}?count=5000"));
    batch.assert_error(503, "not_ready");
    let body = batch.json();
    assert_eq!(
        (body["buffered"].as_u64(), body["issued"].as_u64()),
        (Some(1800), Some(200)),
        "{body}"
    );

    // Both buffered segments are still served, then a clear 503 (never an ID, never a hang).
    let started = Instant::now();
    let unavailable = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no 503 in time"
        );
        let r = s.get(path);
        if r.status == 200 {
            ids.push(r.id());
            assert!(ids.len() <= 2000, "more IDs than the two segments hold");
        } else {
            break r;
        }
    };
    assert_eq!(ids.len(), 2000, "every buffered ID was served");
    unavailable.assert_error(503, "not_ready");
    assert_eq!(unavailable.header("retry-after"), Some("1"));
    let msg = unavailable.json()["error"].as_str().unwrap().to_string();
    support::assert_contains_all(&msg, &["down", "cannot reach"]);
    let ready = s.get("/readyz");
    assert_eq!(ready.status, 503, "{ready:?}");
    assert!(ready.body.contains("down"), "{ready:?}");
    s.get(&format!("{path}?count=10"))
        .assert_error(503, "not_ready");
    assert_eq!(s.get("/healthz").status, 200, "the process is up");

    db.restart();

    // It answers again by itself, without a restart.
    let started = Instant::now();
    let back = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "did not recover; {}",
            s.stderr()
        );
        let r = http(s.addr, "GET", path, &[]).expect("answer");
        if r.status == 200 {
            break r.id();
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    ids.push(back);
    ids.extend(s.get(&format!("{path}?count=500")).ids());
    assert_eq!(s.get("/readyz").status, 200);
    assert_unique(&mut ids);
    let m = s.get("/metrics").body;
    assert!(
        m.contains("leaf_segment_load_failures_total{tag=\"down\"}"),
        "{m}"
    );
}

/// Issue 33, item 4: a graceful stop gives back what never went out. A lone server's restart
/// continues at the ID after its last one; of three servers stopped one after another, each
/// gives back what nobody claimed past. Prints what a restart wastes with and without it.
#[test]
fn a_graceful_restart_gives_back_what_never_went_out() {
    let db = MariaDb::shared();
    let (name, url) = leaf_table_db(
        db,
        "insert into leaf_alloc(biz_tag, max_id, step) values ('restart', 1, 1000)",
    );
    let sb = Sandbox::new();
    let segment = Serve::new(&sb)
        .env("LEAF_DB", &url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["--segment"]);
    let path = "/api/segment/get/restart";

    // One server: 150 IDs (past the preload point), both segments claimed.
    let a = segment.start();
    let mut ids: Vec<u64> = (0..150).map(|_| a.get(path).id()).collect();
    assert!(wait_until(Duration::from_secs(10), || a.next_ready("restart")));
    let claimed = db.max_id(&name, "restart") as u64;
    let unissued = claimed - 1 - ids.len() as u64;
    let log = a.stop_cleanly();
    assert!(
        log.contains(&format!(
            "gave {unissued} unused IDs of 1 tags back to the table; 0 could not go back"
        )),
        "{log}"
    );
    assert_eq!(db.max_id(&name, "restart"), 151);
    let b = segment.start();
    assert_eq!(
        b.get(path).id(),
        151,
        "the restart goes on where it stopped"
    );
    ids.push(151);
    b.stop_cleanly();
    eprintln!("one server: a restart after 150 IDs wasted {unissued} IDs before, 0 now");

    // Three servers, each with two segments, stopped one after another.
    let servers: Vec<Server> = (0..3).map(|_| segment.start()).collect();
    for s in &servers {
        for _ in 0..150 {
            ids.push(s.get(path).id());
        }
        assert!(wait_until(Duration::from_secs(10), || s.next_ready("restart")));
    }
    let claimed = db.max_id(&name, "restart") as u64;
    let issued = ids.len() as u64;
    for s in servers.into_iter().rev() {
        s.stop_cleanly();
    }
    let after = db.max_id(&name, "restart") as u64;
    let c = segment.start();
    ids.extend((0..10).map(|_| c.get(path).id()));
    assert_unique(&mut ids);
    // Every ID below max_id was issued or skipped; what went back is issued again next.
    let wasted_before = claimed - 1 - issued;
    let wasted_after = after - 1 - issued;
    assert!(
        wasted_after < wasted_before,
        "{wasted_after} vs {wasted_before}"
    );
    assert!(ids.iter().all(|&id| id >= 1));
    eprintln!(
        "three servers stopped one after another: {wasted_before} IDs wasted before, {wasted_after} now"
    );
    c.stop_cleanly();
}
