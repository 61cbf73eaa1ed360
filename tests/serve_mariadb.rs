//! `leafctl serve` in segment mode on a real MariaDB: Leaf's own table, several servers sharing a
//! tag under concurrent load, and the database going away under load.

mod support;

use std::time::{Duration, Instant};

use support::mariadb::{LEAF_DDL, LEAF_ROW, MariaDb, PASSWORD};
use support::serve::{Server, hammer, http};
use support::{Sandbox, assert_unique, wait_until};

fn serve(sb: &Sandbox, url: &str, args: &[&str]) -> Server {
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_DB", url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .arg("serve")
        .args(args);
    Server::start(cmd)
}

#[test]
fn two_servers_share_leafs_table_without_a_duplicate() {
    let db = MariaDb::shared();
    let name = db.fresh_db();
    db.root_sql(Some(&name), LEAF_DDL);
    db.root_sql(Some(&name), LEAF_ROW);
    let url = db.url(&name);
    let sb = Sandbox::new();
    let a = serve(&sb, &url, &["--segment"]);
    let b = serve(&sb, &url, &["--segment"]);

    let tag = "/api/segment/get/leaf-segment-test";
    let mut ids = hammer(&[a.addr, b.addr], 6, 300, tag);
    // 6 threads x (270 single IDs + 30 batches of 100).
    assert_eq!(ids.len(), 6 * (270 + 30 * 100));
    assert_unique(&mut ids);
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
    let name = db.fresh_db();
    db.root_sql(Some(&name), LEAF_DDL);
    db.root_sql(
        Some(&name),
        "insert into leaf_alloc(biz_tag, max_id, step) values('down', 1, 1000)",
    );
    let url = db.url(&name);
    let sb = Sandbox::new();
    let s = serve(&sb, &url, &["--segment"]);
    let path = "/api/segment/get/down";
    let mut ids: Vec<u64> = (0..200).map(|_| s.get(path).id()).collect();
    // The next segment is loaded once 10% of the first is used.
    assert!(wait_until(Duration::from_secs(20), || {
        s.get("/cache").json()[0]["nextReady"] == true
    }));

    db.kill();

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
    assert!(
        msg.contains("down") && msg.contains("cannot reach"),
        "{msg}"
    );
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
