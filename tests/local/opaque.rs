//! Issue 48, items 1 and 2: opaque tags on the embedded default (SQLite). A tag added with
//! `--opaque` issues its dense IDs through FF1 under the ID key: every issuer (`next`, `serve`'s
//! single IDs and batches, a second server, a hand-back on stop) issues each dense ID at most once
//! and through the permutation, `decode --tag` maps them back, and the tag's shape is fixed for
//! good (a removal keeps it). A missing or wrong key, or an N-digit tag in a region, issues nothing.

use std::collections::BTreeSet;

use crate::support::serve::Serve;
use crate::support::{self, Sandbox, assert_unique, parse_ids, stderr};

/// A key file in the sandbox (64 hex digits, readable by this user only); its path.
fn key_file(sb: &Sandbox, name: &str, hex: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = sb.path().join(name);
    std::fs::write(&path, format!("{hex}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.display().to_string()
}

const KEY: &str = "5f0c3a1d9e8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c";
const OTHER_KEY: &str = "0000000000000000000000000000000000000000000000000000000000000001";

/// The dense IDs `decode --tag` maps `ids` back to, checking each was claimed.
fn dense_ids(sb: &Sandbox, key: &str, tag: &str, ids: &[u64]) -> Vec<u64> {
    dense_ids_with(sb, &[], key, tag, ids)
}

/// [`dense_ids`] with leafctl's options `before` (a region, say).
fn dense_ids_with(sb: &Sandbox, before: &[&str], key: &str, tag: &str, ids: &[u64]) -> Vec<u64> {
    let mut args: Vec<String> = before.iter().map(|s| s.to_string()).collect();
    args.extend(support::decode_tag_args(key, tag, ids));
    support::dense_ids_of(&sb.run_ok(&args).stdout, true)
}

#[test]
fn next_issues_each_dense_id_once_through_the_permutation_and_decode_maps_it_back() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    sb.run_ok([
        "--key-file",
        &key,
        "tag",
        "add",
        "order",
        "--opaque",
        "7",
        "--step",
        "100",
    ]);
    let shown = support::json(&sb.run_ok(["tag", "show", "order", "--output", "json"]));
    assert!(
        shown["shape"]
            .as_str()
            .unwrap()
            .starts_with("opaque=7 key="),
        "{shown}"
    );
    // Batches of every size, one after another: 1 + 2 + 99 + 100 + 101 + 697 = 1000 IDs.
    let mut ids = Vec::new();
    for n in [1, 2, 99, 100, 101, 697] {
        let out = sb.run_ok(["--key-file", &key, "next", "order", "-n", &n.to_string()]);
        let batch = parse_ids(&out.stdout);
        assert_eq!(batch.len(), n);
        ids.extend(batch);
    }
    assert!(
        ids.iter().all(|id| (1_000_000..10_000_000).contains(id)),
        "7 digits each"
    );
    assert!(
        ids.windows(2).filter(|w| w[0] < w[1]).count() < 900,
        "opaque IDs do not ascend"
    );
    let mut dense = dense_ids(&sb, &key, "order", &ids);
    dense.sort_unstable();
    assert_eq!(
        dense,
        (1..=1000).collect::<Vec<u64>>(),
        "each dense ID once"
    );
    assert_eq!(sb.max_id("order"), 1001);
    assert_unique(&mut ids);
}

#[test]
fn a_missing_or_wrong_key_issues_nothing() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    let other = key_file(&sb, "other.key", OTHER_KEY);
    sb.assert_refused(
        &["tag", "add", "order", "--opaque", "12"],
        2,
        "no ID key was given",
    );
    sb.run_ok(["--key-file", &key, "tag", "add", "order", "--opaque", "12"]);
    sb.assert_refused(&["next", "order"], 2, "is opaque, and no ID key was given");
    sb.assert_refused(
        &["--key-file", &other, "next", "order", "-n", "5"],
        2,
        "was added with the ID key whose check value is",
    );
    let missing = sb.path().join("missing.key").display().to_string();
    sb.assert_refused(
        &["--key-file", &missing, "next", "order"],
        2,
        "cannot read the ID key file",
    );
    let short = key_file(&sb, "short.key", &KEY[..63]);
    sb.assert_refused(
        &["--key-file", &short, "next", "order"],
        2,
        "is not an ID key",
    );
    assert_eq!(sb.max_id("order"), 1, "nothing was claimed");
    // The environment and the config file name the key as --key-file does.
    let out = sb
        .leafctl()
        .env("LEAF_ID_KEY_FILE", &key)
        .args(["next", "order", "-n", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let config = sb.path().join("leaf.toml");
    std::fs::write(&config, format!("[ids]\nkey_file = {key:?}\n")).unwrap();
    let config = config.display().to_string();
    sb.run_ok(["--config", &config, "next", "order", "-n", "3"]);
    assert_eq!(sb.max_id("order"), 6);
}

#[test]
fn a_tag_keeps_its_shape_through_removal_and_never_issues_an_id_twice() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    sb.run_ok(["--key-file", &key, "tag", "add", "order", "--opaque", "8"]);
    let mut ids = parse_ids(
        &sb.run_ok(["--key-file", &key, "next", "order", "-n", "50"])
            .stdout,
    );
    sb.run_ok(["tag", "remove", "order", "--yes"]);
    // Plain, or another width, would issue values the old shape issued: refused, nothing added;
    // the error names the shape, and the hint names no command (`tag show` of a removed name
    // would fail).
    sb.assert_refused(&["tag", "add", "order"], 2, "is opaque, 8 digits");
    let refused = stderr(&sb.run(["tag", "add", "order"]));
    assert!(
        refused.contains("add it with the shape named above"),
        "{refused}"
    );
    assert!(support::hinted_commands(&refused).is_empty(), "{refused}");
    sb.assert_refused(
        &["--key-file", &key, "tag", "add", "order", "--opaque", "9"],
        2,
        "a tag's shape is fixed",
    );
    // A rotated key is a new tag: the name under another key would permute the same dense IDs
    // onto values the old key issued.
    let rotated = key_file(&sb, "rotated.key", OTHER_KEY);
    sb.assert_refused(
        &[
            "--key-file",
            &rotated,
            "tag",
            "add",
            "order",
            "--opaque",
            "8",
        ],
        2,
        "a tag's shape is fixed",
    );
    sb.run_ok(["--key-file", &key, "tag", "add", "order", "--opaque", "8"]);
    ids.extend(parse_ids(
        &sb.run_ok(["--key-file", &key, "next", "order", "-n", "50"])
            .stdout,
    ));
    assert_unique(&mut ids);
    // A plain tag, live or removed, never becomes opaque.
    sb.run_ok(["tag", "add", "plain"]);
    sb.assert_refused(
        &[
            "--key-file",
            &key,
            "tag",
            "add",
            "plain",
            "--opaque",
            "12",
            "--if-not-exists",
        ],
        2,
        "is plain",
    );
    sb.run_ok(["tag", "remove", "plain", "--yes"]);
    sb.assert_refused(
        &["--key-file", &key, "tag", "add", "plain", "--opaque", "12"],
        2,
        "is plain",
    );
}

#[test]
fn the_end_of_the_width_is_refused_before_anything_is_claimed() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    // 7 digits hold 9,000,000 dense IDs; start 3 before the end.
    sb.run_ok([
        "--key-file",
        &key,
        "tag",
        "add",
        "small",
        "--opaque",
        "7",
        "--start",
        "8999998",
    ]);
    sb.assert_refused(
        &["--key-file", &key, "next", "small", "-n", "4"],
        1,
        "used them all",
    );
    assert_eq!(sb.max_id("small"), 8_999_998, "nothing claimed");
    let mut last = parse_ids(
        &sb.run_ok(["--key-file", &key, "next", "small", "-n", "3"])
            .stdout,
    );
    assert_eq!(last.len(), 3);
    assert_eq!(sb.max_id("small"), 9_000_001);
    sb.assert_refused(&["--key-file", &key, "next", "small"], 1, "used them all");
    let dense = dense_ids(&sb, &key, "small", &last);
    assert_eq!(dense, vec![8_999_998, 8_999_999, 9_000_000]);
    assert_unique(&mut last);
    sb.assert_refused(
        &[
            "--key-file",
            &key,
            "tag",
            "add",
            "big",
            "--opaque",
            "7",
            "--start",
            "9000001",
        ],
        2,
        "lies above the 9000000 dense IDs",
    );
}

#[test]
fn two_servers_and_next_share_an_opaque_tag_without_an_id_twice() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    sb.run_ok([
        "--key-file",
        &key,
        "tag",
        "add",
        "order",
        "--opaque",
        "10",
        "--step",
        "50",
    ]);
    let servers: Vec<_> = (0..2)
        .map(|_| {
            Serve::new(&sb)
                .before(["--key-file", &key])
                .args(["--segment"])
                .start()
        })
        .collect();
    let mut ids = Vec::new();
    for round in 0..3 {
        for s in &servers {
            for _ in 0..20 {
                ids.push(s.get("/api/segment/get/order").id());
            }
            for n in [1, 49, 50, 51, 120] {
                let batch = s.get(&format!("/api/segment/get/order?count={n}")).ids();
                assert_eq!(batch.len(), n, "round {round}");
                ids.extend(batch);
            }
        }
        ids.extend(parse_ids(
            &sb.run_ok(["--key-file", &key, "next", "order", "-n", "30"])
                .stdout,
        ));
    }
    assert!(
        ids.iter()
            .all(|id| (1_000_000_000..10_000_000_000).contains(id)),
        "10 digits"
    );
    let dense: BTreeSet<u64> = dense_ids(&sb, &key, "order", &ids).into_iter().collect();
    assert_eq!(dense.len(), ids.len(), "each dense ID once");
    assert_unique(&mut ids);
    // A server's stop hands its unused dense IDs back: the next ones come from there, through
    // the permutation, and are none of those issued.
    drop(servers);
    let after = parse_ids(
        &sb.run_ok(["--key-file", &key, "next", "order", "-n", "200"])
            .stdout,
    );
    ids.extend(after);
    assert_unique(&mut ids);
}

#[test]
fn a_server_without_the_key_refuses_the_opaque_tag_and_serves_the_others() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    sb.run_ok(["--key-file", &key, "tag", "add", "order", "--opaque", "12"]);
    sb.run_ok(["tag", "add", "plain"]);
    let s = Serve::new(&sb).args(["--segment"]).start();
    let refused = s.get("/api/segment/get/order");
    assert!(refused.status >= 400, "{refused:?}");
    assert!(
        refused.body.contains("no ID key was given"),
        "{}",
        refused.body
    );
    assert_eq!(s.get("/api/segment/get/plain").id(), 1);
    assert_eq!(sb.max_id("order"), 1, "nothing claimed for the opaque tag");
}

#[test]
fn each_region_issues_an_opaque_tag_behind_its_own_first_digit() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    // Two regions, each its own database, one key.
    let with = |r: u32, args: &[&str]| -> Vec<String> {
        let db = format!("sqlite://{}/region{r}.db", sb.path().display());
        in_region(&db, &r.to_string(), &key, args)
    };
    for r in [0, 1] {
        sb.run_ok(with(r, &["db", "init"]));
    }
    let refused = sb.run(with(1, &["tag", "add", "order", "--opaque", "7"]));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the first digit is the region's"),
        "{}",
        stderr(&refused)
    );
    let mut all = Vec::new();
    for r in [0u32, 1] {
        sb.run_ok(with(r, &["tag", "add", "order", "--opaque", "12"]));
        sb.run_ok(with(r, &["tag", "add", "wide", "--opaque", "63"]));
        let before: Vec<String> = with(r, &[]).into_iter().take(6).collect();
        let before: Vec<&str> = before.iter().map(String::as_str).collect();
        let floor = u64::from(r) << 52;
        // 12 digits: the region's digit, then its block's dense IDs permuted over 11.
        let ids = parse_ids(&sb.run_ok(with(r, &["next", "order", "-n", "100"])).stdout);
        let first = u64::from(r + 1) * 100_000_000_000;
        assert!(
            ids.iter()
                .all(|id| (first..first + 100_000_000_000).contains(id)),
            "{ids:?}"
        );
        let dense = dense_ids_with(&sb, &before, &key, "order", &ids);
        assert!(
            dense.iter().all(|&d| (floor..floor + 102).contains(&d)),
            "{dense:?}"
        );
        all.extend(ids);
        // 63 bits: the one permutation over every region's block.
        let ids = parse_ids(&sb.run_ok(with(r, &["next", "wide", "-n", "100"])).stdout);
        assert!(ids.iter().all(|&id| (1..1 << 63).contains(&id)));
        let dense = dense_ids_with(&sb, &before, &key, "wide", &ids);
        assert!(
            dense.iter().all(|&d| (floor..floor + 102).contains(&d)),
            "{dense:?}"
        );
        all.extend(ids);
    }
    assert_eq!(all.len(), 400);
    assert_unique(&mut all);
    // Region 0's database reads region 1's ID back by its first digit; whether it was claimed
    // only region 1's database knows.
    let region1_id = parse_ids(&sb.run_ok(with(1, &["next", "order"])).stdout)[0];
    let mut args: Vec<String> = with(0, &[]).into_iter().take(6).collect();
    args.extend(support::decode_tag_args(&key, "order", &[region1_id]));
    let rows = support::json(&sb.run_ok(&args));
    let dense: u64 = rows[0]["dense_id"].as_str().unwrap().parse().unwrap();
    assert!((1u64 << 52..(1 << 52) + 200).contains(&dense), "{rows}");
    assert_eq!(rows[0]["claimed"], serde_json::Value::Null);
}

/// `region add` seeds the new region with the old tags' shapes, never as plain tags: an opaque
/// tag of N digits from before the regions goes on in region 0 only, and a periodic one is
/// refused in the new region, as a periodic tag is in any region.
#[test]
fn region_add_carries_each_tags_shape_and_the_new_region_never_issues_it_plain() {
    let sb = Sandbox::new();
    let key = key_file(&sb, "id.key", KEY);
    let old = format!("sqlite://{}/old.db", sb.path().display());
    let new = format!("sqlite://{}/new.db", sb.path().display());
    sb.run_ok(["--db", &old, "db", "init"]);
    sb.run_ok([
        "--db",
        &old,
        "--key-file",
        &key,
        "tag",
        "add",
        "o",
        "--opaque",
        "12",
    ]);
    sb.run_ok([
        "--db", &old, "tag", "add", "d", "--period", "day", "--width", "6",
    ]);
    let mut ids = parse_ids(
        &sb.run_ok(["--db", &old, "--key-file", &key, "next", "o", "-n", "5"])
            .stdout,
    );
    sb.run_ok([
        "region",
        "add",
        "--from",
        &old,
        "--db",
        &new,
        "--region",
        "1",
        "--regions",
        "2",
    ]);
    let in_region = |db: &str, r: &str, args: &[&str]| in_region(db, r, &key, args);
    let shown = support::json(&sb.run_ok(in_region(
        &new,
        "1",
        &["tag", "show", "o", "--output", "json"],
    )));
    assert!(
        shown["shape"].as_str().unwrap().starts_with("opaque=12"),
        "{shown}"
    );
    let refused = sb.run(in_region(&new, "1", &["next", "o"]));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("only region 0 issues it"),
        "{}",
        stderr(&refused)
    );
    let refused = sb.run(in_region(&new, "1", &["next", "d"]));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    ids.extend(parse_ids(
        &sb.run_ok(in_region(&old, "0", &["next", "o", "-n", "5"]))
            .stdout,
    ));
    assert!(ids.iter().all(|id| id.to_string().len() == 12));
    assert_unique(&mut ids);
}

/// leafctl's arguments for region `r` of 2 on the database `db`, with the ID key file `key`,
/// then `args`.
fn in_region(db: &str, r: &str, key: &str, args: &[&str]) -> Vec<String> {
    let options = [
        "--db",
        db,
        "--region",
        r,
        "--regions",
        "2",
        "--key-file",
        key,
    ];
    options.iter().chain(args).map(|s| s.to_string()).collect()
}
