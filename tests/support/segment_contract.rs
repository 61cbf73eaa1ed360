//! The segment store contract: one body a check, run against every backend's fixture by
//! [`segment_store_contract!`] (SQLite in `tests/local/segment_sqlite.rs`, MariaDB and
//! PostgreSQL in `tests/segment/`). Each check is the strictest version the backends' own
//! copies had; a new backend gets them all by building a [`SegmentDb`] and invoking the macro.

use std::process::Output;
use std::sync::Arc;

use leafctl::segment::{AllocStore, Increment, SegmentGenerator};

use super::{Sandbox, assert_stderr_has, assert_unique, parse_ids, run_concurrently, stderr};

/// One fresh database of a backend, with `leaf_alloc` in it and no tag.
pub struct SegmentDb {
    pub sandbox: Sandbox,
    /// The environment that points `leafctl` at the database (`LEAF_DB`, a password).
    pub env: Vec<(&'static str, String)>,
    /// Opens a new connection to the database as the library's store.
    pub store: Box<dyn Fn() -> Box<dyn AllocStore> + Send + Sync>,
    /// Runs a statement as an administrator (what a failover or a hand edit does to the table).
    pub sql: Box<dyn Fn(&str)>,
    /// The tag's `max_id` as the table holds it.
    pub max_id: Box<dyn Fn(&str) -> i64>,
}

impl SegmentDb {
    /// `leafctl` in the sandbox, pointed at the database.
    pub fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = self.sandbox.leafctl_std();
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    pub fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args);
        assert!(out.status.success(), "leafctl {args:?}: {}", stderr(&out));
        out
    }

    fn set_max_id(&self, tag: &str, max_id: i64) {
        (self.sql)(&format!(
            "UPDATE leaf_alloc SET max_id = {max_id} WHERE biz_tag = '{tag}'"
        ));
        assert_eq!((self.max_id)(tag), max_id);
    }
}

/// Generates one `#[test]` a check of the contract, each on a fresh database from
/// `fixture()`, a function of the module that invokes it.
#[allow(unused_macros)] // each group binary compiles support; two of them invoke it
macro_rules! segment_store_contract {
    ($fixture:ident) => {
        /// The segment store contract (`support::segment_contract`) on this backend.
        mod contract {
            use crate::support::segment_contract as c;

            #[test]
            fn claims_follow_the_table() {
                c::claims_follow_the_table(&super::$fixture());
            }

            #[test]
            fn claims_that_would_overflow_or_start_below_zero_change_nothing() {
                c::claims_that_would_overflow_or_start_below_zero_change_nothing(
                    &super::$fixture(),
                );
            }

            #[test]
            fn eight_processes_on_one_tag_are_contiguous_unique_and_bounded() {
                c::eight_processes_on_one_tag_are_contiguous_unique_and_bounded(
                    &super::$fixture(),
                );
            }

            #[test]
            fn two_generators_share_a_tag_without_duplicates() {
                c::two_generators_share_a_tag_without_duplicates(&super::$fixture());
            }

            #[test]
            fn a_table_gone_backwards_is_refused_until_bumped() {
                c::a_table_gone_backwards_is_refused_until_bumped(&super::$fixture());
            }

            #[test]
            fn a_removal_reports_the_tombstone_it_keeps() {
                c::a_removal_reports_the_tombstone_it_keeps(&super::$fixture());
            }

            #[test]
            fn a_shape_is_recorded_once_and_outlives_its_tag() {
                c::a_shape_is_recorded_once_and_outlives_its_tag(&super::$fixture());
            }

            #[test]
            fn shaped_tags_issue_through_their_shape() {
                c::shaped_tags_issue_through_their_shape(&super::$fixture());
            }

            #[test]
            fn removals_racing_adds_and_claims_issue_no_id_twice() {
                let db = super::$fixture();
                crate::support::removals_racing_adds_and_claims_issue_no_id_twice(&*db.store);
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use segment_store_contract;

/// `next` and the library's claims take exactly what they ask for from `max_id` up, in
/// turn, and each one moves `max_id` to the end of its range.
pub fn claims_follow_the_table(db: &SegmentDb) {
    db.ok(&["tag", "add", "c", "--step", "10"]);
    assert_eq!((db.max_id)("c"), 1);
    assert_eq!(
        parse_ids(&db.ok(&["next", "c", "-n", "5"]).stdout),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!((db.max_id)("c"), 6);
    let store = (db.store)();
    let claim = store.claim("c", Increment::TableStep).unwrap();
    assert_eq!((claim.start, claim.end, claim.table_step), (6, 16, 10));
    let claim = store.claim("c", Increment::Custom(5)).unwrap();
    assert_eq!((claim.start, claim.end), (16, 21));
    assert_eq!((db.max_id)("c"), 21);
    assert_eq!(
        parse_ids(&db.ok(&["next", "c", "-n", "2"]).stdout),
        vec![21, 22]
    );
    assert_eq!((db.max_id)("c"), 23);
}

/// A claim past 2^63-1 and one from a negative `max_id` are refused (exit 1, the tag or the
/// cause named) and change nothing; the last IDs there are can still be claimed exactly.
pub fn claims_that_would_overflow_or_start_below_zero_change_nothing(db: &SegmentDb) {
    db.ok(&["tag", "add", "full", "--step", "10"]);
    db.ok(&["tag", "add", "neg", "--step", "10"]);
    let max = i64::MAX - 5;
    db.set_max_id("full", max);
    db.set_max_id("neg", -20);
    let out = db.run(&["next", "full", "-n", "6"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "nothing issued");
    super::assert_stderr_has(&out, "full");
    assert_eq!((db.max_id)("full"), max, "nothing claimed");
    let out = db.run(&["next", "neg"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "nothing issued");
    super::assert_stderr_has(&out, "negative");
    assert_eq!((db.max_id)("neg"), -20);
    let claim = (db.store)().claim("full", Increment::Custom(5)).unwrap();
    assert_eq!((claim.start, claim.end), (max as u64, i64::MAX as u64));
    assert_eq!((db.max_id)("full"), i64::MAX);
}

/// Eight processes claim one tag at once: each prints one contiguous ascending claim, none
/// overlaps another, together they cover exactly 1 ..= 800,000, and `max_id` records exactly
/// what was claimed.
pub fn eight_processes_on_one_tag_are_contiguous_unique_and_bounded(db: &SegmentDb) {
    const N: usize = 100_000;
    db.ok(&["tag", "add", "busy", "--step", "10"]);
    let runs = run_concurrently(
        (0..8).map(|_| db.cmd(&["next", "busy", "-n", &N.to_string()])),
        N,
    );
    for ids in &runs {
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "a process's IDs are one contiguous ascending claim"
        );
    }
    let mut all = runs.concat();
    super::assert_n_unique(&mut all, 8 * N);
    let max_id = (db.max_id)("busy") as u64;
    assert_eq!(
        max_id,
        1 + 8 * N as u64,
        "exactly the claimed IDs were recorded"
    );
    assert_eq!(all.first(), Some(&1));
    assert_eq!(all.last(), Some(&(max_id - 1)));
}

/// Two generators on their own connections, six threads mixing the by-name and the handle
/// paths: no ID twice, every ID below the table's `max_id`.
pub fn two_generators_share_a_tag_without_duplicates(db: &SegmentDb) {
    db.ok(&["tag", "add", "shared", "--step", "50"]);
    let gens: Vec<Arc<SegmentGenerator>> = (0..2)
        .map(|_| Arc::new(SegmentGenerator::builder((db.store)()).build().unwrap()))
        .collect();
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let g = gens[i % 2].clone();
            std::thread::spawn(move || {
                let h = g.handle("shared").unwrap();
                (0..20_000)
                    .map(|k| {
                        if k % 7 == 0 {
                            g.next_id("shared")
                        } else {
                            h.next_id()
                        }
                        .unwrap()
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    super::assert_n_unique(&mut all, 120_000);
    let max_id = (db.max_id)("shared") as u64;
    assert!(all.iter().all(|&id| (1..max_id).contains(&id)));
}

/// The table loses the last claim (what an asynchronous failover does): `next` remembers the
/// highest `max_id` it claimed and refuses the lost range until `tag bump`
/// ([`lost_claims_are_refused_until_bumped`]); the bump is recorded in the table.
pub fn a_table_gone_backwards_is_refused_until_bumped(db: &SegmentDb) {
    db.ok(&["tag", "add", "f", "--step", "10"]);
    let mut ids = parse_ids(&db.ok(&["next", "f", "-n", "5"]).stdout);
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    ids.extend(parse_ids(&db.ok(&["next", "f", "-n", "5"]).stdout));
    assert_eq!(ids.last(), Some(&10));
    db.set_max_id("f", 6);

    lost_claims_are_refused_until_bumped(&|args| db.run(args), ids);
    assert_eq!((db.max_id)("f"), 14);
}

/// Tag `f` (step 10) issued `ids` up to 10 in claims of 5, and the table lost the last claim
/// (its `max_id` is back at 6: a failover, or a hand edit): `next` refuses the lost range,
/// naming the tag, both values, the causes and the repair; `tag bump` refuses to move the tag
/// down and moves it up; issuing resumes above every ID issued. `run` runs `leafctl ARGS`
/// against the database with the state directory that issued `ids`.
pub fn lost_claims_are_refused_until_bumped(run: &dyn Fn(&[&str]) -> Output, mut ids: Vec<u64>) {
    let out = run(&["next", "f", "-n", "3"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty(), "nothing issued from a lost range");
    for part in [
        "tag \"f\"",
        "went backwards",
        "starting at 6",
        "up to 11",
        "failover",
    ] {
        assert!(err.contains(part), "{part:?} missing: {err}");
    }
    // The hint's command carries the flags that open this database (`--db URL` when given).
    let hinted = super::hinted_commands(&err);
    assert!(
        hinted
            .first()
            .is_some_and(|c| c.ends_with(&["tag", "bump", "f", "--to", "11"].map(String::from))),
        "the hint's bump: {err}"
    );

    let out = run(&["tag", "bump", "f", "--to", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "refusing to move tag \"f\" down");
    let out = run(&["tag", "bump", "f", "--to", "11"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("to 11"), "{printed}");
    let out = run(&["next", "f", "-n", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = parse_ids(&out.stdout);
    assert_eq!(after, vec![11, 12, 13]);
    ids.extend(after);
    assert_unique(&mut ids);
}

/// A removal reports the row it deleted and the tombstone it keeps: the highest max_id the name
/// ever reached, above the row's after a re-add with `--reuse-removed-ids` (issue 45 #6).
pub fn a_removal_reports_the_tombstone_it_keeps(db: &SegmentDb) {
    use leafctl::segment::{NewTag, StartAt};
    let store = (db.store)();
    store.add_tag(&NewTag::new("kept", 10)).unwrap();
    store.claim("kept", Increment::TableStep).unwrap();
    let first = store.remove("kept").unwrap();
    assert_eq!(first.row.max_id, 11);
    assert_eq!(first.tombstone, 11);
    store
        .add_tag(&NewTag {
            start: StartAt::Reuse(1),
            ..NewTag::new("kept", 10)
        })
        .unwrap();
    let second = store.remove("kept").unwrap();
    assert_eq!(second.row.max_id, 1);
    assert_eq!(second.tombstone, 11, "the highest the name reached is kept");
}

/// A tag's shape mark (`leaf_tag_shape`, issue 48): none before the table exists, the first
/// spec written is the one kept (a second writer reads it back), another tag's is its own, and a
/// removal of the tag keeps it, so the name is never re-added with another shape.
pub fn a_shape_is_recorded_once_and_outlives_its_tag(db: &SegmentDb) {
    use leafctl::segment::{AllocStoreExt, NewTag};
    let store = (db.store)();
    assert_eq!(store.shape_mark("o", None).unwrap(), None, "no table yet");
    let first = "opaque=12 key=00112233aabbccdd";
    assert_eq!(
        store.shape_mark("o", Some(first)).unwrap().as_deref(),
        Some(first)
    );
    let other = (db.store)();
    assert_eq!(
        other
            .shape_mark("o", Some("opaque=63 key=ffffffffffffffff"))
            .unwrap()
            .as_deref(),
        Some(first),
        "the first writer wins"
    );
    assert_eq!(other.shape_mark("p", None).unwrap(), None);
    store.add_tag(&NewTag::new("o", 10)).unwrap();
    store.remove("o").unwrap();
    assert_eq!(
        other.shape_mark("o", None).unwrap().as_deref(),
        Some(first),
        "a removal keeps the shape"
    );
}

/// Shaped tags (issue 48) on the backend: an opaque tag's IDs through `next` are its dense IDs
/// permuted (each of the tag's width, `decode --tag` maps them back to the claimed range, and its
/// claims stop at the width's end in the claim's own statement); a periodic tag's come from its
/// period's row, made on first use.
pub fn shaped_tags_issue_through_their_shape(db: &SegmentDb) {
    let key = db.sandbox.path().join("id.key");
    std::fs::write(&key, "a5".repeat(32)).unwrap();
    let key = key.display().to_string();
    db.ok(&[
        "--key-file",
        &key,
        "tag",
        "add",
        "o",
        "--opaque",
        "7",
        "--start",
        "8999990",
    ]);
    let mut ids = parse_ids(&db.ok(&["--key-file", &key, "next", "o", "-n", "8"]).stdout);
    assert!(
        ids.iter().all(|id| (1_000_000..10_000_000).contains(id)),
        "{ids:?}"
    );
    let out = db.run(&["--key-file", &key, "next", "o", "-n", "4"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "past the width: {}",
        stderr(&out)
    );
    assert_eq!(
        (db.max_id)("o"),
        8_999_998,
        "the refused claim changed nothing"
    );
    ids.extend(parse_ids(
        &db.ok(&["--key-file", &key, "next", "o", "-n", "3"]).stdout,
    ));
    let args = super::decode_tag_args(&key, "o", &ids);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let dense = super::dense_ids_of(&db.ok(&args).stdout, true);
    assert_eq!(dense, (8_999_990..=9_000_000).collect::<Vec<u64>>());
    assert_unique(&mut ids);
    db.ok(&[
        "tag", "add", "p", "--period", "year", "--width", "3", "--code", "9",
    ]);
    let year = chrono::Utc::now().format("%Y").to_string();
    let first: u64 = format!("{year}9001").parse().unwrap();
    assert_eq!(
        parse_ids(&db.ok(&["next", "p", "-n", "2"]).stdout),
        vec![first, first + 1]
    );
    assert_eq!((db.max_id)(&format!("p@{year}")), 3);
}
