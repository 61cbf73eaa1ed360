//! Issue 48, item 3: periodic tags on the embedded default (SQLite). `next` issues
//! `<period><code><sequence>` numbers from a row per period (`TAG@PERIOD`, made on first use);
//! the sequence restarts every period and is refused past its width, never widened; a clock
//! across midnight, late or ahead, never issues a number twice; an opaque sequence is permuted
//! within its width; `decode --tag` reads the period and sequence back.

use std::collections::BTreeSet;

use crate::support::faketime::under_faketime;
use crate::support::serve::{Serve, Server};
use crate::support::{self, Sandbox, assert_unique, parse_ids, stderr, words};

/// `next` of `tag` with the clock at `utc` ("2026-12-06 15:59:59", UTC): its IDs.
fn next_at(sb: &Sandbox, utc: &str, tag: &str, n: u64) -> Vec<u64> {
    let mut cmd = sb.leafctl_std();
    cmd.args(["next", tag, "-n", &n.to_string()])
        .env("TZ", "UTC");
    let out = under_faketime(&cmd, &format!("@{utc}")).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    parse_ids(&out.stdout)
}

#[test]
fn a_clock_across_midnight_late_or_ahead_never_issues_a_number_twice() {
    let sb = Sandbox::new();
    sb.run_ok([
        "tag",
        "add",
        "order",
        "--period",
        "day",
        "--width",
        "6",
        "--time-zone",
        "Asia/Shanghai",
        "--code",
        "07",
    ]);
    // 15:59:59 UTC is 23:59:59 in Shanghai: the last second of 2026-12-06 there.
    let before = next_at(&sb, "2026-12-06 15:59:59", "order", 3);
    assert_eq!(
        before,
        vec![2026120607000001, 2026120607000002, 2026120607000003]
    );
    let after = next_at(&sb, "2026-12-06 16:00:01", "order", 2);
    assert_eq!(
        after,
        vec![2026120707000001, 2026120707000002],
        "a new day starts at 1"
    );
    // A process whose clock is late issues on from the earlier day's row, never again from 1.
    let late = next_at(&sb, "2026-12-06 15:59:50", "order", 2);
    assert_eq!(late, vec![2026120607000004, 2026120607000005]);
    // One ahead takes the next day's row early; that day's sequence goes on from there.
    let ahead = next_at(&sb, "2026-12-07 16:00:05", "order", 1);
    assert_eq!(ahead, vec![2026120807000001]);
    let then = next_at(&sb, "2026-12-07 16:00:06", "order", 1);
    assert_eq!(then, vec![2026120807000002]);
    let mut all: Vec<u64> = [before, after, late, ahead, then].concat();
    assert_unique(&mut all);
    let rows = support::json(&sb.run_ok(["tag", "list", "--output", "json"]));
    let names: BTreeSet<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tag"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "order",
            "order@20261206",
            "order@20261207",
            "order@20261208"
        ])
    );
    // decode --tag reads each back: its period, its sequence, claimed.
    let rows = support::json(&sb.run_ok([
        "decode",
        "--tag",
        "order",
        "--output",
        "json",
        "2026120607000005",
        "2026120707000009",
    ]));
    assert_eq!(rows[0]["period"], "20261206");
    assert_eq!(rows[0]["dense_id"], "5");
    assert_eq!(rows[0]["claimed"], true);
    assert_eq!(
        rows[1]["claimed"], false,
        "sequence 9 of that day was never claimed"
    );
    sb.assert_refused(
        &["decode", "--tag", "order", "2026120608000001"],
        2,
        "carry the code 07",
    );
}

#[test]
fn a_period_is_refused_past_its_width_and_never_widened() {
    let sb = Sandbox::new();
    sb.run_ok(["tag", "add", "tiny", "--period", "year", "--width", "2"]);
    let at = "2026-03-01 12:00:00";
    let mut ids = next_at(&sb, at, "tiny", 90);
    assert_eq!(ids.first(), Some(&202601));
    let mut cmd = sb.leafctl_std();
    cmd.args(["next", "tiny", "-n", "10"]);
    let out = under_faketime(&cmd, &format!("@{at}")).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("9 sequences left in period 2026"),
        "{}",
        stderr(&out)
    );
    assert_eq!(sb.max_id("tiny@2026"), 91, "nothing claimed");
    ids.extend(next_at(&sb, at, "tiny", 9));
    assert_eq!(ids.last(), Some(&202699));
    assert_eq!(ids.len(), 99);
    assert_unique(&mut ids);
    // Every ID has the same width: 2026 and two digits.
    assert!(ids.iter().all(|id| (202601..=202699).contains(id)));
    sb.assert_refused(
        &["tag", "add", "wide", "--period", "day", "--width", "11"],
        2,
        "more than the 18 a Java long holds",
    );
}

#[test]
fn an_opaque_sequence_is_permuted_within_its_width_and_decodes_back() {
    let sb = Sandbox::new();
    let key = sb.path().join("id.key");
    std::fs::write(&key, "7e".repeat(32)).unwrap();
    let key = key.display().to_string();
    sb.assert_refused(
        &[
            "--key-file",
            &key,
            "tag",
            "add",
            "o",
            "--period",
            "day",
            "--width",
            "6",
            "--opaque",
            "6",
        ],
        2,
        "--opaque",
    );
    sb.run_ok([
        "--key-file",
        &key,
        "tag",
        "add",
        "o",
        "--period",
        "day",
        "--width",
        "8",
        "--opaque",
        "8",
    ]);
    let mut cmd = sb.leafctl_std();
    cmd.args(["--key-file", &key, "next", "o", "-n", "500"]);
    let out = under_faketime(&cmd, "@2026-12-06 10:00:00")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut ids = parse_ids(&out.stdout);
    assert!(
        ids.iter().all(|id| id / 100_000_000 == 20261206),
        "the day, then 8 digits"
    );
    assert!(
        ids.windows(2).filter(|w| w[0] < w[1]).count() < 400,
        "not ascending"
    );
    let args = support::decode_tag_args(&key, "o", &ids);
    let mut dense = support::dense_ids_of(&sb.run_ok(&args).stdout, false);
    dense.sort_unstable();
    assert_eq!(dense, (1..=500).collect::<Vec<u64>>());
    assert_unique(&mut ids);
    sb.assert_refused(&["next", "o"], 2, "no ID key was given");
}

#[test]
fn a_period_row_is_never_issued_from_alone_nor_taken_over() {
    let sb = Sandbox::new();
    // A plain tag already named like tomorrow's row: the periodic tag refuses to issue from it.
    sb.run_ok(["tag", "add", "d@20261207"]);
    sb.run_ok(["tag", "add", "d", "--period", "day", "--width", "4"]);
    let mut cmd = sb.leafctl_std();
    cmd.args(["next", "d"]);
    let out = under_faketime(&cmd, "@2026-12-07 08:00:00")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is plain"), "{}", stderr(&out));
    next_at(&sb, "2026-12-08 08:00:00", "d", 2);
    sb.assert_refused(
        &["next", "d@20261208"],
        2,
        "is a period row of the periodic tag",
    );
    // The hint names the periodic tag's command, which runs as printed.
    let hinted = support::hinted_commands(&stderr(&sb.run(["next", "d@20261208"])));
    assert_eq!(hinted, vec![vec!["next", "d"]]);
    // Run at a fixed clock: run at the real one, it would meet the plain row above on its date.
    let mut cmd = sb.leafctl_std();
    cmd.args(&hinted[0]).env("TZ", "UTC");
    let out = under_faketime(&cmd, "@2026-12-08 08:30:00")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(parse_ids(&out.stdout), vec![202612080003]);
    // The shape is kept through a removal: the name comes back periodic, its rows continue.
    sb.run_ok(["tag", "remove", "d", "--yes"]);
    sb.assert_refused(&["tag", "add", "d"], 2, "is periodic");
    sb.run_ok(["tag", "add", "d", "--period", "day", "--width", "4"]);
    assert_eq!(
        next_at(&sb, "2026-12-08 09:00:00", "d", 1),
        vec![202612080004]
    );
    // serve asked for a period row by name refuses it: its sequence alone is no ID.
    let s = Serve::new(&sb).args(["--segment"]).start();
    let r = s.get("/api/segment/get/d@20261208");
    assert!(
        r.status >= 400 && r.body.contains("is a period row"),
        "{r:?}"
    );
    Sandbox::new().assert_refused(
        &[
            "--region",
            "1",
            "--regions",
            "2",
            "tag",
            "add",
            "e",
            "--period",
            "day",
            "--width",
            "4",
        ],
        2,
        "cannot be periodic in region 1",
    );
}

/// A server under load crosses midnight (Asia/Shanghai) with no number twice: every ID is of the
/// day before or the day after, each day's sequences are 1, 2, 3, ... with none missing or
/// repeated, and `next` beside it continues each day's row after the server's claims.
#[test]
fn a_server_under_load_crosses_midnight_with_no_number_twice() {
    let sb = Sandbox::new();
    sb.run_ok([
        "tag",
        "add",
        "order",
        "--period",
        "day",
        "--width",
        "6",
        "--time-zone",
        "Asia/Shanghai",
        "--step",
        "50",
    ]);
    // The server's clock starts 3 s before midnight in Shanghai (15:59:57 UTC).
    let cmd = Serve::new(&sb).args(["--segment"]).command();
    let server = Server::start(under_faketime(&cmd, "@2026-12-06 15:59:57"));
    let ids = load_until_every_server_crossed(&[&server]);

    let mut days: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for id in &ids {
        days.entry(id / 1_000_000).or_default().push(id % 1_000_000);
    }
    assert_eq!(
        days.keys().copied().collect::<Vec<u64>>(),
        vec![20261206, 20261207],
        "both days, and only them"
    );
    for (day, seqs) in &mut days {
        seqs.sort_unstable();
        let n = seqs.len() as u64;
        assert_eq!(
            *seqs,
            (1..=n).collect::<Vec<u64>>(),
            "day {day}: 1 to {n}, each once"
        );
    }
    drop(server);
    let mut all = ids;
    all.extend(next_at(&sb, "2026-12-06 16:00:30", "order", 3));
    assert_unique(&mut all);
}

/// Two servers whose clocks are 4 s apart cross midnight under load, one after the other: the
/// earlier one issues from the new day's row while the later one still issues from the old
/// day's, and neither ever issues a number the other did.
#[test]
fn two_servers_seconds_apart_cross_midnight_with_no_number_twice() {
    let sb = Sandbox::new();
    sb.run_ok(words(
        "tag add order --period day --width 6 --time-zone Asia/Shanghai --step 20",
    ));
    let cmd = Serve::new(&sb).args(["--segment"]).command();
    let ahead = Server::start(under_faketime(&cmd, "@2026-12-06 15:59:57"));
    let behind = Server::start(under_faketime(&cmd, "@2026-12-06 15:59:53"));
    let mut ids = load_until_every_server_crossed(&[&ahead, &behind]);
    let days: BTreeSet<u64> = ids.iter().map(|id| id / 1_000_000).collect();
    assert_eq!(days, BTreeSet::from([20261206, 20261207]));
    assert_unique(&mut ids);
}

/// Asks every server in `servers` for single IDs and small batches (two threads each) until each
/// has answered 100 IDs of 2026-12-07, within 30 s and 100,000 IDs a thread; the IDs.
fn load_until_every_server_crossed(servers: &[&Server]) -> Vec<u64> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::time::{Duration, Instant};
    let deadline = Instant::now() + Duration::from_secs(30);
    let new_day: Vec<AtomicU64> = servers.iter().map(|_| AtomicU64::new(0)).collect();
    let crossed = || new_day.iter().all(|n| n.load(Relaxed) >= 100);
    let ids: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..servers.len() * 2)
            .map(|i| {
                let (server, seen) = (servers[i % servers.len()], &new_day[i % servers.len()]);
                let crossed = &crossed;
                scope.spawn(move || {
                    let mut ids = Vec::new();
                    while Instant::now() < deadline && !crossed() && ids.len() < 100_000 {
                        let mut got = vec![server.get("/api/segment/get/order").id()];
                        if ids.len() % 100 == 0 {
                            got.extend(server.get("/api/segment/get/order?count=7").ids());
                        }
                        let of_new_day = got.iter().filter(|id| *id / 1_000_000 == 20261207);
                        seen.fetch_add(of_new_day.count() as u64, Relaxed);
                        ids.extend(got);
                    }
                    ids
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert!(
        crossed(),
        "every server's clock passed midnight within 30 s"
    );
    ids
}
