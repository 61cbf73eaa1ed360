//! Segment mode in several regions, on real SQLite, MariaDB and PostgreSQL databases (one per
//! region): each region records its number in its own database, issues only IDs of its own block
//! below 2^53, refuses another region's database, and a region is added beside a running
//! deployment with one command.

use crate::support;

use std::collections::HashSet;

use support::mariadb::{MariaDb, PASSWORD};
use support::postgres::Postgres;
use support::serve::Server;
use support::{Sandbox, json, parse_ids, stderr};

/// Region 1 of 2's block: [2^52, 2^53).
const BLOCK1: (u64, u64) = (1 << 52, 1 << 53);

/// Four empty databases of one kind: the deployment's old one, the new region's, and two more
/// for the misconfigurations `region check` must find. URLs carry their passwords, so every
/// command (and `region add --from`) reaches them without LEAF_DB_PASSWORD.
struct Dbs {
    /// The worker-id registry kept in this kind of database (`--registry mysql`), if any.
    registry: Option<&'static str>,
    old: String,
    new: String,
    twin: String,
    stray: String,
}

/// `leafctl ARGS` in `sb`, with `--db url` and, when given, `--region R --regions 2`.
fn run(sb: &Sandbox, url: &str, region: Option<u32>, args: &[&str]) -> std::process::Output {
    let mut cmd = sb.leafctl();
    cmd.args(args).args(["--db", url]);
    if let Some(r) = region {
        cmd.args(["--region", &r.to_string(), "--regions", "2"]);
    }
    cmd.output().unwrap()
}

fn ids(sb: &Sandbox, url: &str, region: Option<u32>, tag: &str, n: u32) -> Vec<u64> {
    let out = run(sb, url, region, &["next", tag, "-n", &n.to_string()]);
    assert!(
        out.status.success(),
        "next {tag} on {url}: {}",
        stderr(&out)
    );
    let got = parse_ids(&out.stdout);
    assert_eq!(got.len(), n as usize);
    got
}

fn max_id(sb: &Sandbox, url: &str, region: Option<u32>, tag: &str) -> u64 {
    let row = json(&run(
        sb,
        url,
        region,
        &["tag", "show", tag, "--output", "json"],
    ));
    row["max_id"].as_str().unwrap().parse().unwrap()
}

/// The whole story on one kind of database: a deployment without regions issues IDs; `region
/// add` makes it region 0 of 2 and seeds region 1 above every ID it issued (again: nothing
/// changes); both regions issue, tags added in each included, and no ID is issued twice; each
/// database refuses the other region and a process without one; a batch at the block's end is
/// refused without moving the table; `region check` passes the pair and finds a region recorded
/// twice and a tag outside its block.
fn two_regions(dbs: &Dbs) {
    let sb = Sandbox::new();
    let old = dbs.old.as_str();
    let new = dbs.new.as_str();
    assert!(run(&sb, old, None, &["db", "init"]).status.success());
    assert!(
        run(&sb, old, None, &["tag", "add", "order", "--step", "100"])
            .status
            .success()
    );
    // Each tag is its own sequence: IDs are unique per tag, so they are collected per tag.
    let mut order: Vec<u64> = ids(&sb, old, None, "order", 250);
    let issued_before = *order.iter().max().unwrap();

    // Adding region 1: one command; run twice, the second changes nothing.
    let mut add = sb.leafctl();
    add.args(["region", "add", "--from", old, "--db", new])
        .args(["--region", "1", "--regions", "2", "--output", "json"]);
    let first = json(&add.output().unwrap());
    assert_eq!(first["old"]["region"], 0, "{first}");
    assert_eq!(first["old_recorded_now"], true);
    assert_eq!(first["new"]["region"], 1);
    assert_eq!(first["tags_added"], 1);
    let again = json(&add.output().unwrap());
    assert_eq!(again["tags_added"], 0, "{again}");
    assert_eq!(again["old_recorded_now"], false);
    assert_eq!(again["tags_existing"], serde_json::json!(["order"]));
    let seeded = max_id(&sb, new, Some(1), "order");
    assert_eq!(seeded, BLOCK1.0);
    assert!(seeded > issued_before);

    // Both regions issue, from the seeded tag and from tags added in each region.
    for (url, r) in [(old, 0), (new, 1)] {
        let out = run(&sb, url, Some(r), &["tag", "add", "pay", "--step", "7"]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The next command it suggests carries the database and the region, without which it
        // would open another database or be refused.
        let said = String::from_utf8_lossy(&out.stdout);
        let next = format!(
            "next: leafctl --db {} --region {r} --regions 2 next pay\n",
            leafctl::db::url_without_password(url)
        );
        assert!(said.contains(&next), "{said}");
    }
    let mut pay: Vec<u64> = Vec::new();
    for round in 0..3 {
        for (url, r) in [(old, 0u32), (new, 1)] {
            for (tag, all) in [("order", &mut order), ("pay", &mut pay)] {
                let got = ids(&sb, url, Some(r), tag, 40 + round);
                if r == 0 {
                    assert!(got.iter().all(|&id| (1..BLOCK1.0).contains(&id)), "{got:?}");
                } else {
                    assert!(got.iter().all(|&id| (BLOCK1.0..BLOCK1.1).contains(&id)));
                }
                all.extend(got);
            }
        }
    }
    // `serve --segment` of each region: IDs of its block, the seeded tag included.
    for (url, r) in [(old, 0u32), (new, 1)] {
        let mut cmd = sb.leafctl_std();
        cmd.args(["serve", "--segment", "--db", url])
            .args(support::words(&format!("--region {r} --regions 2")));
        let server = Server::start(cmd);
        for tag in ["order", "pay"] {
            let got = server.get(&format!("/api/segment/get/{tag}")).id();
            let block = if r == 0 {
                1..BLOCK1.0
            } else {
                BLOCK1.0..BLOCK1.1
            };
            assert!(block.contains(&got), "{tag} from region {r}: {got}");
            if tag == "order" {
                order.push(got);
            } else {
                pay.push(got);
            }
        }
        server.stop_cleanly();
    }
    // A server pointed at the other region's database does not start.
    let mut cmd = sb.leafctl_std();
    cmd.args([
        "serve",
        "--segment",
        "--db",
        new,
        "--region",
        "0",
        "--regions",
        "2",
    ]);
    let refused = Server::try_start(cmd)
        .err()
        .expect("a server of region 0 on region 1's database");
    assert!(refused.contains("exit status: 2"), "{refused}");
    assert!(refused.contains("belongs to region 1 of 2"), "{refused}");
    for (tag, all) in [("order", &order), ("pay", &pay)] {
        let unique: HashSet<u64> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len(), "an ID of {tag} was issued twice");
        assert_eq!(all.len(), if tag == "order" { 250 + 248 } else { 248 });
    }

    // Each database refuses another region, and a process given none; nothing is issued.
    let out = run(&sb, old, Some(1), &["next", "order"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    support::assert_contains_all(
        &err,
        &["belongs to region 0 of 2", "this process is region 1 of 2"],
    );
    assert!(
        !err.contains(&format!(":{PASSWORD}@")),
        "password shown: {err}"
    );
    assert!(out.stdout.is_empty());
    let out = run(&sb, new, None, &["next", "order"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was given no region"),
        "{}",
        stderr(&out)
    );
    let out = run(&sb, new, None, &["tag", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // The worker-id registry in the same database checks the same mark before its first lease.
    if let Some(registry) = dbs.registry {
        let snowflake = [
            "next",
            "--snowflake",
            "--registry",
            registry,
            "--instance",
            "h:1",
        ];
        for (given, says) in [
            (None, "was given no region"),
            (Some(0), "this process is region 0 of 2"),
        ] {
            let out = run(&sb, new, given, &snowflake);
            assert_eq!(out.status.code(), Some(2), "{registry}: {}", stderr(&out));
            assert!(stderr(&out).contains(says), "{}", stderr(&out));
            assert!(out.stdout.is_empty());
        }
    }

    // A start outside the block is refused, as a usage error (issue 45 #6); the block's last
    // IDs are issued, never crossed.
    let out = run(&sb, new, Some(1), &["tag", "add", "low", "--start", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("outside region 1 of 2's block"),
        "{}",
        stderr(&out)
    );
    let past = (BLOCK1.1 + 1).to_string();
    let out = run(&sb, new, Some(1), &["tag", "bump", "order", "--to", &past]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("outside region 1 of 2's block"),
        "{}",
        stderr(&out)
    );
    let edge = (BLOCK1.1 - 10).to_string();
    let out = run(
        &sb,
        new,
        Some(1),
        &["tag", "add", "edge", "--start", &edge, "--step", "5"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&sb, new, Some(1), &["next", "edge", "-n", "11"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("the end of the region's block"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        max_id(&sb, new, Some(1), "edge"),
        BLOCK1.1 - 10,
        "the table moved"
    );
    let last = ids(&sb, new, Some(1), "edge", 10);
    assert_eq!(last, ((BLOCK1.1 - 10)..BLOCK1.1).collect::<Vec<_>>());
    let out = run(&sb, new, Some(1), &["next", "edge"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(max_id(&sb, new, Some(1), "edge"), BLOCK1.1);
    let show = json(&run(
        &sb,
        new,
        Some(1),
        &["tag", "show", "order", "--output", "json"],
    ));
    let left: u64 = show["ids_left"].as_str().unwrap().parse().unwrap();
    assert_eq!(left, BLOCK1.1 - max_id(&sb, new, Some(1), "order"));

    // `region check`: the pair is right; a second region 1, and a tag outside its block, are not.
    let check = |urls: &[&str]| {
        let mut cmd = sb.leafctl();
        cmd.args(["region", "check"])
            .args(urls)
            .args(["--output", "json"]);
        cmd.output().unwrap()
    };
    let out = check(&[old, new]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    // `edge` and `low` are region 1's alone: notes, not errors.
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] == "note"),
        "{report}"
    );
    let twin = dbs.twin.as_str();
    let out = run(&sb, twin, Some(1), &["db", "init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // It says what it recorded.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.ends_with(", recorded as region 1 of 2\n"), "{said}");
    let out = check(&[old, new, twin]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["duplicate"], "{report}");

    // A tag made before its database was given a region, above region 0's block: the database
    // is not recorded as region 0 (issue 45: a region is recorded only where every row fits),
    // and `region check` says it belongs to no region.
    let stray = dbs.stray.as_str();
    assert!(run(&sb, stray, None, &["db", "init"]).status.success());
    let above = (BLOCK1.0 + 5).to_string();
    let out = run(&sb, stray, None, &["tag", "add", "big", "--start", &above]);
    assert!(out.status.success(), "{}", stderr(&out));
    for args in [&["db", "init"][..], &["next", "big"]] {
        let out = run(&sb, stray, Some(0), args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("outside region 0 of 2's block")
                && stderr(&out).contains("tag remove big --yes"),
            "{}",
            stderr(&out)
        );
    }
    let shown = json(&run(
        &sb,
        stray,
        None,
        &["region", "show", "--output", "json"],
    ));
    assert_eq!(shown["region"], serde_json::Value::Null, "{shown}");
    let out = check(&[stray, new]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "unrecorded" && f["severity"] == "error"),
        "{report}"
    );
    // And `region add` from such a database (no mark yet) is refused before anything is written.
    let other = Sandbox::new();
    let fresh = format!("sqlite://{}", other.path().join("fresh.db").display());
    let plain = format!("sqlite://{}", other.path().join("plain.db").display());
    assert!(run(&other, &plain, None, &["db", "init"]).status.success());
    let out = run(
        &other,
        &plain,
        None,
        &["tag", "add", "big", "--start", &above],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = other
        .leafctl()
        .args(["region", "add", "--from", &plain, "--db", &fresh])
        .args(["--region", "1", "--regions", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!other.path().join("fresh.db").exists());
    let shown = json(&run(
        &other,
        &plain,
        None,
        &["region", "show", "--output", "json"],
    ));
    assert_eq!(shown["region"], serde_json::Value::Null, "{shown}");
}

#[test]
fn two_sqlite_regions_issue_no_id_twice() {
    let sb = Sandbox::new();
    let url = |name: &str| format!("sqlite://{}", sb.path().join(name).display());
    two_regions(&Dbs {
        registry: None,
        old: url("old.db"),
        new: url("new.db"),
        twin: url("twin.db"),
        stray: url("stray.db"),
    });
}

#[test]
fn two_mariadb_regions_issue_no_id_twice() {
    let db = MariaDb::shared();
    let url = || {
        db.url(&db.fresh_db())
            .replacen("leaf@", &format!("leaf:{PASSWORD}@"), 1)
    };
    two_regions(&Dbs {
        registry: Some("mysql"),
        old: url(),
        new: url(),
        twin: url(),
        stray: url(),
    });
}

#[test]
fn two_postgres_regions_issue_no_id_twice() {
    let pg = Postgres::shared();
    let url = || pg.url(&pg.fresh_db());
    two_regions(&Dbs {
        registry: Some("postgres"),
        old: url(),
        new: url(),
        twin: url(),
        stray: url(),
    });
}

/// `db init --print` with a region gives a DBA the region mark too: run as printed, the
/// database is that region's, and a command of another region refuses it.
#[test]
fn the_printed_ddl_records_the_region_for_a_dba() {
    let db = MariaDb::shared();
    let name = db.fresh_db();
    let url = db
        .url(&name)
        .replacen("leaf@", &format!("leaf:{PASSWORD}@"), 1);
    let sb = Sandbox::new();
    let out = run(&sb, &url, Some(1), &["db", "init", "--print"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sql = String::from_utf8(out.stdout).unwrap();
    assert!(
        sql.contains("INSERT INTO leaf_region (id, region, regions) VALUES (1, 1, 2);"),
        "{sql}"
    );
    db.root_sql(Some(&name), &sql);
    let shown = json(&run(
        &sb,
        &url,
        None,
        &["region", "show", "--output", "json"],
    ));
    assert_eq!(
        (shown["region"].as_u64(), shown["regions"].as_u64()),
        (Some(1), Some(2))
    );
    let out = run(&sb, &url, Some(0), &["tag", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(&sb, &url, Some(1), &["tag", "add", "order"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(max_id(&sb, &url, Some(1), "order"), BLOCK1.0);
}

/// Issue 45 #6: `region add --from` and `region check` take LEAF_DB_PASSWORD for a URL without
/// a password of its own (one password serves one user's databases), and a refused login's
/// hint names the password that was tried: the URL's own, or LEAF_DB_PASSWORD.
#[test]
fn region_urls_without_a_password_take_leaf_db_password() {
    let db = MariaDb::shared();
    let (old, new) = (db.url(&db.fresh_db()), db.url(&db.fresh_db()));
    let sb = Sandbox::new();
    let leafctl = |args: &str| support::mariadb::leafctl_with_password(&sb, args);
    let ok = |args: &str| {
        let out = leafctl(args);
        assert!(out.status.success(), "{args}: {}", stderr(&out));
        out
    };
    ok(&format!("--db {old} db init"));
    ok(&format!("--db {old} tag add order"));
    ok(&format!("--db {old} next order -n 3"));
    ok(&format!(
        "region add --from {old} --db {new} --region 1 --regions 2"
    ));
    ok(&format!("region check {old} {new}"));

    // A wrong password in the URL: refused, and the hint says the URL's was tried.
    let wrong = old.replacen("leaf@", "leaf:wrong@", 1);
    let out = leafctl(&format!("region check {wrong} {new}"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(given by the URL)"),
        "{}",
        stderr(&out)
    );
    // A wrong LEAF_DB_PASSWORD: the hint names it.
    let out = sb
        .leafctl()
        .env("LEAF_DB_PASSWORD", "wrong")
        .args(support::words(&format!("region check {old} {new}")))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(given by LEAF_DB_PASSWORD)"),
        "{}",
        stderr(&out)
    );
}
