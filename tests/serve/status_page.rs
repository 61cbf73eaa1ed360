//! The status page (`GET /`) in a real browser: Debian's Chromium, headless, loads it from a
//! running `serve` with several tags (one used up, one failing because its database was
//! killed, one whose name is HTML), lets it refresh, and the rendered DOM is checked; a
//! screenshot is saved as target/status-page.png (and target/status-page-phone.png).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::mariadb::{MariaDb, PASSWORD};
use support::serve::Server;
use support::{Sandbox, wait_until};

/// A tag that is valid (no whitespace) and would be markup if the page wrote it as HTML.
const HTML_TAG: &str = "<img/src=x/onerror=document.title='owned'>";

fn chromium() -> PathBuf {
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("Chromium is missing: install Debian's chromium (scripts/test does)");
}

/// Runs headless Chromium on `url` with a fixed clock budget (timers, the page's refreshes,
/// run within it), with the flags a closed machine needs, plus `extra`.
fn headless(url: &str, profile: &Path, extra: &[&str]) -> std::process::Output {
    support::run_ok(
        Command::new(chromium())
            .args(support::words(
                "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run",
            ))
            .args(support::words(
                "--disable-background-networking --disable-component-update --disable-sync",
            ))
            .args(support::words(
                "--hide-scrollbars --virtual-time-budget=8000",
            ))
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(url),
    )
}

/// The text of the `<tr>` of a tag in the dumped DOM.
fn row<'a>(dom: &'a str, tag_attr: &str) -> &'a str {
    let at = dom
        .find(&format!("data-tag=\"{tag_attr}\""))
        .unwrap_or_else(|| panic!("no row for {tag_attr} in {dom}"));
    let start = dom[..at].rfind("<tr").unwrap();
    let end = at + dom[at..].find("</tr>").unwrap();
    &dom[start..end]
}

#[test]
fn the_status_page_renders_every_tag_in_a_real_browser() {
    let db = MariaDb::start();
    let (_, url) = db.fresh_db_url();
    let sb = Sandbox::new();
    let leafctl = |args: &[&str]| {
        support::run_ok(
            sb.leafctl()
                .env("LEAF_DB", &url)
                .env("LEAF_DB_PASSWORD", PASSWORD)
                .args(args),
        );
    };
    leafctl(&["db", "init"]);
    leafctl(&["tag", "add", "order", "--step", "1000"]);
    leafctl(&["tag", "add", "busy", "--step", "10"]);
    leafctl(&["tag", "add", "tail", "--start", "9223372036854775807"]);
    leafctl(&["tag", "add", HTML_TAG]);
    // 500,000 IDs left with a step of 1,000: running out (issue 36).
    leafctl(&["tag", "add", "nearly", "--start", "9223372036854275807"]);
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_DB", &url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["serve", "--segment", "--snowflake", "--worker-id", "4"]);
    let s = Server::start(cmd);
    for _ in 0..200 {
        assert_eq!(s.get("/api/segment/get/order").status, 200);
    }
    for _ in 0..30 {
        assert_eq!(s.get("/api/segment/get/busy").status, 200);
    }
    assert_eq!(s.get("/api/snowflake/get/x").status, 200);
    assert_eq!(s.get("/api/segment/get/nearly").status, 200);
    assert_eq!(s.get("/api/segment/get/tail").status, 410);
    let encoded: String = HTML_TAG.bytes().map(|b| format!("%{b:02X}")).collect();
    assert_eq!(s.get(&format!("/api/segment/get/{encoded}")).status, 200);

    // busy's database goes away: its small segments run out and its loads fail.
    db.kill();
    let failing = wait_until(Duration::from_secs(30), || {
        s.get("/api/segment/get/busy").status == 503
    });
    assert!(failing, "busy never ran out");
    std::thread::sleep(Duration::from_millis(2200)); // a few samples for the rates

    // The JSON the page draws.
    let report = s.get("/?format=json").json();
    let tags = report["segment"]["tags"].as_array().unwrap();
    let state = |t: &str| {
        tags.iter()
            .find(|x| x["tag"] == t)
            .map(|x| x["state"].as_str().unwrap().to_string())
    };
    assert_eq!(state("tail").as_deref(), Some("exhausted"));
    assert_eq!(state("busy").as_deref(), Some("failing"));
    assert_eq!(state("order").as_deref(), Some("ok"));
    assert_eq!(report["snowflake"]["worker"], 4);
    assert!(
        report["server"]["requests_per_s"].as_f64().unwrap() > 0.0,
        "{report}"
    );

    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&target).unwrap();
    let page = format!("http://{}/", s.addr);
    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(headless(&page, profile.path(), &["--dump-dom"]).stdout).unwrap();

    for word in ["NaN", "undefined", "Infinity"] {
        assert!(!dom.contains(word), "{word} on the page: {dom}");
    }
    assert!(
        dom.contains("class=\"pill ok\">ready<") || dom.contains(">not ready<"),
        "{dom}"
    );
    let order = row(&dom, "order");
    let rate = order
        .split("class=\"num rate\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap_or_else(|| panic!("no rate cell: {order}"));
    assert!(
        !rate.is_empty()
            && rate
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ','),
        "the rate is a number: {rate:?}"
    );
    assert!(order.contains("<svg"), "a sparkline: {order}");
    let busy = row(&dom, "busy");
    assert!(busy.contains("class=\"failing\""), "{busy}");
    // The error on the line under the row, in red.
    // (row() stops before the row's own "</tr>".)
    let after = &dom[dom.find(busy).unwrap() + busy.len() + "</tr>".len()..];
    let error_row = &after[..after.find("</tr>").unwrap_or(after.len())];
    assert!(
        error_row.contains("failing errrow")
            && error_row.contains("class=\"err\"")
            && error_row.contains("cannot reach"),
        "the error shows: {error_row}"
    );
    let tail = row(&dom, "tail");
    assert!(tail.contains("class=\"exhausted\""), "{tail}");
    // The HTML tag is text, not markup: escaped in the DOM, no <img> anywhere, title unchanged.
    assert!(dom.contains("&lt;img/src=x/onerror="), "{dom}");
    assert!(!dom.contains("<img"), "the tag became markup: {dom}");
    assert!(dom.contains("<title>leafctl status</title>"));
    // Worker id and version from the JSON made it onto the page.
    assert!(dom.contains("id=\"sf-worker\">4<"), "{dom}");
    // Running out, shown before it happens (issue 36): the tag's mark, the layout's years.
    let nearly = row(&dom, "nearly");
    support::assert_contains_all(nearly, &["pill warn headroom\"", ">running out<"]);
    assert!(!order.contains("running out"), "{order}");
    let left = dom
        .split("id=\"sf-left\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap_or_else(|| panic!("no layout card: {dom}"));
    assert!(left.ends_with(" years") && left.starts_with('5'), "{left}");
    assert!(dom.contains(env!("CARGO_PKG_VERSION")));

    for (file, size) in [
        ("status-page.png", "1280,860"),
        ("status-page-phone.png", "390,1400"),
    ] {
        let shot = target.join(file);
        let _ = std::fs::remove_file(&shot);
        headless(
            &page,
            profile.path(),
            &[
                &format!("--screenshot={}", shot.display()),
                &format!("--window-size={size}"),
            ],
        );
        assert!(
            std::fs::metadata(&shot)
                .map(|m| m.len() > 10_000)
                .unwrap_or(false),
            "no screenshot at {}",
            shot.display()
        );
    }

    // With a token: the page itself loads (it holds no data), its JSON does not without one.
    drop(s);
    let mut cmd = sb.leafctl_std();
    cmd.args(["serve", "--snowflake", "--worker-id", "5"])
        .env("LEAF_SERVE_TOKEN", "page-t0ken");
    let t = Server::start(cmd);
    assert_eq!(t.get("/").status, 200);
    t.get("/?format=json").assert_error(401, "unauthorized");
    let ok = t.request(
        "GET",
        "/?format=json",
        &[("Authorization", "Bearer page-t0ken")],
    );
    assert_eq!(ok.status, 200);
    let dom = String::from_utf8(
        headless(
            &format!("http://{}/", t.addr),
            profile.path(),
            &["--dump-dom"],
        )
        .stdout,
    )
    .unwrap();
    assert!(
        dom.contains("needs its bearer token"),
        "the page asks for the token: {dom}"
    );
}

/// The page with 20,000 tags: it draws one page of them, the used-up tag first, says how many
/// there are and how many pages the listing has, and its search box (here from the address,
/// as a link would open it) finds one tag among them on the server.
#[test]
fn the_status_page_pages_and_searches_twenty_thousand_tags_in_a_real_browser() {
    const TAGS: usize = 20_000;
    let db = MariaDb::shared();
    let name = db.fresh_db();
    db.root_sql(Some(&name), support::mariadb::LEAF_DDL);
    db.root_sql(
        Some(&name),
        &format!(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step) \
             SELECT CONCAT('tenant-', LPAD(seq, 5, '0')), 1, 1000 FROM seq_1_to_{TAGS}"
        ),
    );
    db.root_sql(
        Some(&name),
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('tail', 9223372036854775807, 10)",
    );
    let sb = Sandbox::new();
    let mut cmd = sb.leafctl_std();
    cmd.env("LEAF_DB", db.url(&name))
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(["serve", "--segment"]);
    let s = Server::start(cmd);
    for i in 1..=5 {
        assert_eq!(
            s.get(&format!("/api/segment/get/tenant-{i:05}")).status,
            200
        );
    }
    assert_eq!(s.get("/api/segment/get/tail").status, 410);
    std::thread::sleep(Duration::from_millis(1500)); // a sample for the rates

    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(
        headless(
            &format!("http://{}/", s.addr),
            profile.path(),
            &["--dump-dom"],
        )
        .stdout,
    )
    .unwrap();
    let rows = dom.matches("data-tag=\"").count();
    assert_eq!(rows, 50, "one page of 50 tags is drawn: {dom}");
    let first = dom.find("data-tag=\"").unwrap();
    assert!(
        dom[first..].starts_with("data-tag=\"tail\""),
        "the used-up tag comes first: {}",
        &dom[first..first + 40]
    );
    assert!(row(&dom, "tail").contains("class=\"exhausted\""));
    assert!(row(&dom, "tenant-00003").contains("class=\"ok\""));
    assert!(
        dom.contains("20,001 tags") && dom.contains("1 used up"),
        "the summary counts every tag: {dom}"
    );
    assert!(
        dom.contains("page 1 of 200 (1-50 of 20,001)"),
        "the listing pages through the first 10,000: {dom}"
    );

    // A search, as the box sends it: one tag of 20,000, found by the server.
    let dom = String::from_utf8(
        headless(
            &format!("http://{}/?q=TENANT-12345", s.addr),
            profile.path(),
            &["--dump-dom"],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(dom.matches("data-tag=\"").count(), 1, "{dom}");
    assert!(
        row(&dom, "tenant-12345").contains("class=\"idle\""),
        "{dom}"
    );
    assert!(dom.contains("(1-1 of 1 matching)"), "{dom}");
}
