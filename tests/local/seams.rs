//! Where two capabilities meet (issue 45), through the binary on SQLite files: the cases the
//! model of the command surface (`support::model`) shrank to, as ordinary tests, and every hint
//! those seams print, run as printed.

use crate::support::{self, Sandbox, hinted_commands, parse_ids, stderr};

/// Region 1 of 2's block: [2^52, 2^53).
const FLOOR_1: i64 = 1 << 52;

/// A sandbox and the URL of a SQLite file in it, `db init` done.
fn db(sb: &Sandbox, name: &str) -> String {
    let url = format!("sqlite://{}", sb.path().join(name).display());
    sb.run_ok(["--db", &url, "db", "init"]);
    url
}

/// Runs `leafctl --db URL ARGS` (ARGS split at white space).
fn on(sb: &Sandbox, url: &str, args: &str) -> std::process::Output {
    sb.run(["--db", url].into_iter().chain(support::words(args)))
}

/// Runs `leafctl --db URL ARGS`, which must succeed.
#[track_caller]
fn ok(sb: &Sandbox, url: &str, args: &str) -> std::process::Output {
    let out = on(sb, url, args);
    assert!(out.status.success(), "{args}: {}", stderr(&out));
    out
}

/// Runs `leafctl --db URL ARGS`, which must exit with `code`; its stderr.
#[track_caller]
fn refused(sb: &Sandbox, url: &str, args: &str, code: i32) -> String {
    let out = on(sb, url, args);
    assert_eq!(out.status.code(), Some(code), "{args}: {}", stderr(&out));
    stderr(&out)
}

/// The remedy the hint in `err` suggests (its first command), run as printed: it must succeed.
/// Any later command of the hint names its arguments as placeholders (`URL`, `NEW_URL`).
#[track_caller]
fn run_the_hint(sb: &Sandbox, err: &str) -> std::process::Output {
    let commands = hinted_commands(err);
    assert!(!commands.is_empty(), "a command in the hint: {err}");
    for later in &commands[1..] {
        assert!(
            later.iter().any(|w| w.contains("URL")),
            "a later command of the hint is a form with placeholders: {later:?}"
        );
    }
    let out = sb.run(&commands[0]);
    assert!(
        out.status.success(),
        "the hint's `leafctl {}` failed: {}",
        commands[0].join(" "),
        stderr(&out)
    );
    out
}

/// Issue 45 #1, as found: a tag removed after issuing IDs above region 0's block, then `region
/// add` of region 1 and the tag added again there. The new region continues above the removed
/// tag's IDs, and `region check` agrees.
#[test]
fn region_add_carries_a_removed_tag_and_its_ids_never_repeat() {
    let sb = Sandbox::new();
    let (old, new) = (db(&sb, "old.db"), db(&sb, "new.db"));
    ok(&sb, &old, &format!("tag add big --start {FLOOR_1}"));
    let mut ids = parse_ids(&ok(&sb, &old, "next big -n 3").stdout);
    assert_eq!(
        ids,
        [FLOOR_1 as u64, FLOOR_1 as u64 + 1, FLOOR_1 as u64 + 2]
    );
    ok(&sb, &old, "tag remove big --yes");
    let added = sb.run_ok(support::words(&format!(
        "region add --from {old} --db {new} --region 1 --regions 2"
    )));
    let said = String::from_utf8_lossy(&added.stdout);
    assert!(said.contains("1 removed tag(s)"), "{said}");
    ok(&sb, &new, "--region 1 --regions 2 tag add big");
    ids.extend(parse_ids(
        &ok(&sb, &new, "--region 1 --regions 2 next big -n 3").stdout,
    ));
    support::assert_n_unique(&mut ids, 6);
    let checked = sb.run(support::words(&format!("region check {old} {new}")));
    assert!(checked.status.success(), "{}", stderr(&checked));
}

/// Issue 45 #2: a command refused in a region records nothing, so the database runs on without
/// region flags; the hint of the refusal, run as printed, moves the tag into the block, and the
/// region then issues from it (and is recorded).
#[test]
fn a_refused_region_records_nothing_and_its_hint_runs_as_printed() {
    let sb = Sandbox::new();
    let url = db(&sb, "a.db");
    ok(&sb, &url, "tag add order");
    ok(&sb, &url, "next order -n 3");
    let err = refused(&sb, &url, "--regions 2 --region 1 next order -n 2", 1);
    assert!(err.contains("lies outside region 1 of 2's block"), "{err}");
    let shown = ok(&sb, &url, "region show");
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("no region recorded"),
        "{}",
        String::from_utf8_lossy(&shown.stdout)
    );
    assert_eq!(parse_ids(&ok(&sb, &url, "next order").stdout), [4]);
    run_the_hint(&sb, &err);
    let ids = parse_ids(&ok(&sb, &url, "--regions 2 --region 1 next order -n 2").stdout);
    assert_eq!(ids, [FLOOR_1 as u64, FLOOR_1 as u64 + 1]);
    let shown = ok(&sb, &url, "region show");
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("region 1 of 2"),
        "{}",
        String::from_utf8_lossy(&shown.stdout)
    );
}

/// Issue 45 #6: a `--start` or `--to` outside the region's block is a usage error (exit 2) that
/// names the block, and its hint runs as printed.
#[test]
fn a_start_or_bump_outside_the_block_is_a_usage_error_whose_hint_runs() {
    let sb = Sandbox::new();
    let url = db(&sb, "r.db");
    let err = refused(&sb, &url, "--regions 2 --region 1 tag add low --start 5", 2);
    assert!(
        err.contains("--start 5 lies outside region 1 of 2's block"),
        "{err}"
    );
    run_the_hint(&sb, &err);
    let err = refused(&sb, &url, "--regions 2 --region 1 tag bump low --to 3", 2);
    assert!(err.contains("--to 3 lies outside"), "{err}");
    let shown = run_the_hint(&sb, &err);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains(&FLOOR_1.to_string()),
        "tag show gives the max_id: {}",
        String::from_utf8_lossy(&shown.stdout)
    );
}

/// A removed tag whose IDs reached the end of the region's block leaves its name no IDs there:
/// re-adding it is refused (exit 2) with a hint that runs as printed.
#[test]
fn a_name_used_up_in_a_region_is_refused_and_its_hint_runs() {
    let sb = Sandbox::new();
    let url = db(&sb, "u.db");
    let last = 2 * FLOOR_1 - 1;
    ok(
        &sb,
        &url,
        &format!("--regions 2 --region 1 tag add end --start {last}"),
    );
    assert_eq!(
        parse_ids(&ok(&sb, &url, "--regions 2 --region 1 next end").stdout),
        [last as u64]
    );
    ok(&sb, &url, "--regions 2 --region 1 tag remove end --yes");
    let err = refused(&sb, &url, "--regions 2 --region 1 tag add end", 2);
    assert!(
        err.contains("the name has no IDs left in this region"),
        "{err}"
    );
    run_the_hint(&sb, &err);
}

/// A tombstone below the block of the region given: refused before anything is recorded, and
/// the hint's `region show` runs as printed.
#[test]
fn a_removed_tag_below_the_block_is_refused_and_records_nothing() {
    let sb = Sandbox::new();
    let url = db(&sb, "b.db");
    ok(&sb, &url, "tag add gone");
    ok(&sb, &url, "next gone -n 5");
    ok(&sb, &url, "tag remove gone --yes");
    let err = refused(&sb, &url, "--regions 2 --region 1 tag add other", 1);
    assert!(
        err.contains("removed tag \"gone\" issued IDs below 6"),
        "{err}"
    );
    let shown = run_the_hint(&sb, &err);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("no region recorded"),
        "{}",
        String::from_utf8_lossy(&shown.stdout)
    );
}

/// Re-adding below a removed tag's IDs is refused, and the hint's `tag add` continues above
/// them; `--reuse-removed-ids` then a removal report the tombstone kept (the highest), not the
/// row's own max_id.
#[test]
fn a_readd_below_the_tombstone_and_the_tombstone_a_removal_keeps() {
    let sb = Sandbox::new();
    let url = db(&sb, "t.db");
    ok(&sb, &url, "tag add t --step 10");
    ok(&sb, &url, "next t -n 5");
    ok(&sb, &url, "tag remove t --yes");
    let err = refused(&sb, &url, "tag add t --start 1", 2);
    run_the_hint(&sb, &err);
    assert_eq!(parse_ids(&ok(&sb, &url, "next t").stdout), [6]);
    ok(&sb, &url, "tag remove t --yes");
    ok(&sb, &url, "tag add t --start 1 --reuse-removed-ids");
    let removed = ok(&sb, &url, "tag remove t --yes");
    let said = String::from_utf8_lossy(&removed.stdout);
    assert!(
        said.contains("its final max_id was 1, and leaf_alloc_removed keeps 7"),
        "{said}"
    );
    ok(&sb, &url, "tag add t --start 1 --reuse-removed-ids");
    let json = support::json(&ok(&sb, &url, "tag remove t --yes --output json"));
    assert_eq!(json["max_id"], "1", "{json}");
    assert_eq!(json["tombstone"], "7", "{json}");
}

/// A table that went backwards (a re-add at a lower start with --reuse-removed-ids, while this
/// host remembers the IDs it issued): refused, and the hint's `tag bump`, run as printed, lets
/// the tag issue again above every ID issued.
#[test]
fn went_backwards_is_refused_and_its_bump_runs_as_printed() {
    let sb = Sandbox::new();
    let url = db(&sb, "w.db");
    ok(&sb, &url, "tag add w");
    let mut ids = parse_ids(&ok(&sb, &url, "next w -n 5").stdout);
    ok(&sb, &url, "tag remove w --yes");
    ok(&sb, &url, "tag add w --start 1 --reuse-removed-ids");
    let err = refused(&sb, &url, "next w", 1);
    assert!(err.contains("went backwards"), "{err}");
    run_the_hint(&sb, &err);
    ids.extend(parse_ids(&ok(&sb, &url, "next w -n 5").stdout));
    support::assert_n_unique(&mut ids, 10);
}

/// `region add` from a database whose tag issued IDs above region 0's block (issue 45 #6: the
/// hint said `tag bump big 0`, down): refused, recording nothing, with a hint on the old
/// database that runs as printed; `region add` then carries the removed tag's tombstone, and
/// the new region never repeats its IDs.
#[test]
fn region_add_over_a_tag_above_the_old_block_hints_a_removal_that_runs() {
    let sb = Sandbox::new();
    let (old, new) = (db(&sb, "old.db"), db(&sb, "new.db"));
    ok(&sb, &old, &format!("tag add big --start {FLOOR_1}"));
    let mut ids = parse_ids(&ok(&sb, &old, "next big -n 2").stdout);
    let add = format!("region add --from {old} --db {new} --region 1 --regions 2");
    let out = sb.run(support::words(&add));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("above this region's block"), "{err}");
    for url in [&old, &new] {
        let shown = ok(&sb, url, "region show");
        assert!(
            String::from_utf8_lossy(&shown.stdout).contains("no region recorded"),
            "{url}: {}",
            String::from_utf8_lossy(&shown.stdout)
        );
    }
    run_the_hint(&sb, &err);
    sb.run_ok(support::words(&add));
    ok(&sb, &new, "--region 1 --regions 2 tag add big");
    ids.extend(parse_ids(
        &ok(&sb, &new, "--region 1 --regions 2 next big -n 2").stdout,
    ));
    support::assert_n_unique(&mut ids, 4);
}

/// The hints of the everyday refusals run as printed, with the flags that open the same
/// database: an unknown tag (its `tag add`), a bump down (its `tag show`), a batch past the
/// end of a tag's range (its `tag show`).
#[test]
fn everyday_hints_run_as_printed() {
    let sb = Sandbox::new();
    let url = db(&sb, "e.db");
    let err = refused(&sb, &url, "next nosuch", 2);
    let hinted = hinted_commands(&err);
    assert_eq!(hinted.len(), 2, "{err}");
    for command in &hinted {
        let out = sb.run(command);
        assert!(out.status.success(), "{command:?}: {}", stderr(&out));
    }
    ok(&sb, &url, "next nosuch");

    ok(&sb, &url, "tag add t --start 100");
    let err = refused(&sb, &url, "tag bump t --to 5", 2);
    let shown = run_the_hint(&sb, &err);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("100"),
        "{}",
        String::from_utf8_lossy(&shown.stdout)
    );

    let near = i64::MAX - 10;
    ok(&sb, &url, &format!("tag add end --start {near}"));
    let err = refused(&sb, &url, "next end -n 20", 1);
    assert!(err.contains("ask for at most 10"), "{err}");
    run_the_hint(&sb, &err);
    assert_eq!(parse_ids(&ok(&sb, &url, "next end -n 10").stdout).len(), 10);
}
