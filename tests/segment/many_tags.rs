//! Many tags (issue 25): a table of 50,000 tags on a private MariaDB, a few hundred of them
//! used. Every answer stays bounded whatever the number of tags (sizes, never times): `/metrics`
//! has per-tag series for at most `serve.metrics_tags` tags (those needing attention first)
//! plus totals over all tags, the status JSON is one page searched and sorted on the server,
//! `/cache` and `/db` stream every tag, and `tag list` streams in every format with filters.

use crate::support;

use support::mariadb::{MariaDb, PASSWORD};
use support::{Sandbox, stderr, wait_until};

const TAGS: usize = 50_000;
const USED: usize = 300;
/// The default of serve.metrics_tags.
const METRICS_TAGS: usize = 100;
const MB: usize = 1 << 20;

/// The tag of number `i` (1-based): zero-padded, so name order is number order.
fn tenant(i: usize) -> String {
    format!("tenant-{i:05}")
}

/// A table of `TAGS` tenant tags plus one used-up tag, `zz-used-up`.
fn table(db: &MariaDb) -> String {
    let name = db.fresh_db();
    db.root_sql(Some(&name), support::mariadb::LEAF_DDL);
    db.root_sql(
        Some(&name),
        &format!(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) \
             SELECT CONCAT('tenant-', LPAD(seq, 5, '0')), 1, 1000, 'many' FROM seq_1_to_{TAGS}"
        ),
    );
    db.root_sql(
        Some(&name),
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zz-used-up', 9223372036854775807, 10)",
    );
    name
}

/// The `VmHWM` (peak resident set) of a process, in bytes.
fn peak_rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb * 1024
}

#[test]
fn every_answer_stays_bounded_with_fifty_thousand_tags() {
    let db = MariaDb::shared();
    let url = db.url(&table(db));
    let sb = Sandbox::new();
    let s = support::mariadb::serve_segment(&sb, &url);

    // A few hundred tenants ask for IDs; one tag is used up.
    for i in 1..=USED {
        let ids = s
            .get(&format!("/api/segment/get/{}?count=2", tenant(i)))
            .ids();
        // The batch is claimed on its own, beside the first load it starts for the buffer.
        assert!(
            ids.len() == 2 && ids[0] < ids[1] && ids[1] <= 1002,
            "{}: {ids:?}",
            tenant(i)
        );
    }
    assert_eq!(s.get("/api/segment/get/zz-used-up").status, 410);

    // /metrics: totals over every tag, series of its own for at most 100 tags, the used-up
    // one among them (it needs attention), and under 1 MB.
    let metrics = s.get("/metrics").body;
    assert!(metrics.len() < MB, "/metrics is {} bytes", metrics.len());
    let line = |prefix: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in /metrics"))
            .rsplit(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(line("leaf_segment_tags "), (TAGS + 1).to_string());
    assert_eq!(
        line("leaf_segment_all_tags_ids_issued_total "),
        (2 * USED).to_string()
    );
    assert_eq!(
        line("leaf_segment_tags_needing_attention{state=\"exhausted\"}"),
        "1"
    );
    assert_eq!(
        line("leaf_segment_tags_reported "),
        METRICS_TAGS.to_string()
    );
    let per_tag = metrics
        .lines()
        .filter(|l| l.starts_with("leaf_ids_issued_total{mode=\"segment\""))
        .count();
    assert_eq!(per_tag, METRICS_TAGS, "per-tag series are capped");
    assert!(
        metrics.contains("leaf_segment_ids_left{tag=\"zz-used-up\",segment=\"current\"}"),
        "the used-up tag has its own series"
    );

    // The status JSON: one page, the used-up tag first, every tag counted, under 1 MB.
    let status = s.get("/?format=json");
    assert!(
        status.body.len() < MB,
        "status JSON is {} bytes",
        status.body.len()
    );
    let report = status.json();
    let seg = &report["segment"];
    assert_eq!(seg["tag_count"], TAGS + 1);
    assert_eq!(seg["matched"], TAGS + 1);
    assert_eq!(seg["buffered"], USED + 1);
    assert_eq!(seg["attention"]["exhausted"], 1);
    let tags = seg["tags"].as_array().unwrap();
    assert_eq!(tags.len(), 50, "a page of the default size");
    assert_eq!(tags[0]["tag"], "zz-used-up");
    assert_eq!(tags[0]["state"], "exhausted");
    assert!(
        tags[1..].iter().all(|t| t["tag"]
            .as_str()
            .is_some_and(|n| n <= tenant(USED).as_str())),
        "the tags that issued come next: {tags:?}"
    );
    // The deepest page allowed, at the largest size: still under 1 MB.
    let deep = s.get("/?format=json&sort=name&per_page=200&page=50");
    assert!(deep.body.len() < MB, "{} bytes", deep.body.len());
    let deep = deep.json();
    let names: Vec<&str> = deep["segment"]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (9_801..=10_000).map(tenant).collect();
    assert_eq!(names, want, "by name, page 50 of 200 per page");
    assert_eq!(deep["segment"]["tags"][0]["state"], "idle");
    // Past the depth: a clear 400 that says to search.
    let past = s.get("/?format=json&sort=name&per_page=200&page=51");
    past.assert_error(400, "bad_request");
    assert!(
        past.body.contains("narrow it with a search"),
        "{}",
        past.body
    );
    // A search finds one tag among 50,000, in any case.
    let found = s.get("/?format=json&q=TENANT-04999").json();
    assert_eq!(found["segment"]["matched"], 1);
    assert_eq!(found["segment"]["tags"][0]["tag"], "tenant-04999");
    let found = s.get("/?format=json&q=tenant-0000&sort=name").json();
    assert_eq!(
        found["segment"]["matched"], 9,
        "tenant-00001 .. tenant-00009"
    );

    // /cache streams every tag (Leaf's format), and the server does not hold it whole.
    let before = peak_rss(s.pid());
    let cache = s.get("/cache");
    assert_eq!(cache.status, 200);
    assert_eq!(cache.header("transfer-encoding"), Some("chunked"));
    let entries = cache.json();
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), TAGS + 1);
    let mut keys: Vec<&str> = entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), TAGS + 1, "every tag once");
    let used = entries
        .iter()
        .find(|e| e["key"] == tenant(7))
        .expect("tenant-00007");
    assert_eq!(used["initOk"], true);
    let grown = peak_rss(s.pid()).saturating_sub(before);
    assert!(
        grown < cache.body.len() / 2,
        "the server's peak grew by {grown} bytes for a {} byte /cache",
        cache.body.len()
    );
    // /db streams the rows from the database, page by page.
    let rows = s.get("/db").json();
    assert_eq!(rows.as_array().unwrap().len(), TAGS + 1);

    // A tag added while serving is found at once.
    let leafctl = |args: &[&str]| {
        sb.leafctl()
            .env("LEAF_DB", &url)
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(leafctl(&["tag", "add", "brand-new"]).status.success());
    assert_eq!(s.get("/api/segment/get/brand-new").id(), 1);

    // tag list streams every row in every format, and filters.
    let lines = |args: &[&str]| {
        let out = leafctl(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let all = lines(&["tag", "list", "--output", "ndjson"]);
    assert_eq!(all.lines().count(), TAGS + 2);
    let first: serde_json::Value = serde_json::from_str(all.lines().next().unwrap()).unwrap();
    assert_eq!(first["tag"], "brand-new");
    let tsv = lines(&["tag", "list", "--output", "tsv", "--prefix", "tenant-0499"]);
    let tsv: Vec<&str> = tsv.lines().collect();
    assert_eq!(
        tsv[0],
        "tag\tmax_id\tstep\tdescription\tupdate_time\tids_left\theadroom"
    );
    assert_eq!(tsv.len(), 11, "the header and tenant-04990 .. tenant-04999");
    assert!(
        tsv[1].starts_with("tenant-04990\t1\t1000\tmany\t"),
        "{}",
        tsv[1]
    );
    // Off a terminal, text is the same tab-separated rows.
    let text = lines(&["tag", "list", "--prefix", "tenant-0499"]);
    assert_eq!(text.lines().count(), 11);
    let matched = lines(&[
        "tag",
        "list",
        "--match",
        "tenant-?????",
        "--output",
        "ndjson",
    ]);
    assert_eq!(matched.lines().count(), TAGS);
    let json = lines(&["tag", "list", "--match", "*-used-*", "--output", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[0]["tag"], "zz-used-up");
    assert_eq!(json[0]["max_id"], "9223372036854775807");
    assert_eq!(json.as_array().unwrap().len(), 1);
    // No match: the header alone on stdout, the sentence on stderr (issue 36, item 3).
    let none = leafctl(&["tag", "list", "--prefix", "nope"]);
    assert!(none.status.success(), "{}", stderr(&none));
    assert_eq!(String::from_utf8_lossy(&none.stdout).lines().count(), 1);
    support::assert_stderr_has(&none, "no tags starting with \"nope\"");

    // Nothing above changed what the server issues: the tags that issued are still counted.
    assert!(wait_until(std::time::Duration::from_secs(5), || {
        s.get("/metrics").body.contains(&format!(
            "leaf_segment_all_tags_ids_issued_total {}",
            2 * USED + 1
        ))
    }));
}
