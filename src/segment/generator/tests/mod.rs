//! Unit tests of the generator on the in-memory table ([`MemoryStore`]): each file one of its
//! promises, this one the helpers and the batch and hand-back paths.

mod backwards;
mod burst;
mod idle;
mod outage;
mod periodic;
mod refresh;
mod region;
mod retire;
mod step;

use std::time::Instant;

use super::recent::same_bytes;
use super::*;
use crate::segment::{BATCH_RETRY_AFTER, MemoryStore};
use crate::snowflake::Clock;

/// A clock on which every reading is ten hours after the last: to the step rule, every
/// tag is slow, so segments keep the table's step and the tests know their bounds.
struct Crawling(std::sync::atomic::AtomicI64);

impl Clock for Crawling {
    fn now_ms(&self) -> i64 {
        self.0.fetch_add(36_000_000, Ordering::Relaxed)
    }
    fn sleep_ms(&self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }
    fn sleep_until_ms(&self, _target_ms: i64) {}
}

/// A fresh in-memory table holding each `(tag, start, step)`.
fn table(rows: &[(&str, i64, i64)]) -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    for &(tag, start, step) in rows {
        store.add(tag, start, step, None, false).unwrap();
    }
    store
}

/// A builder over `store` as [`generator`] makes it: the crawling clock (every segment of the
/// table's step), a wait of 5 s for a loading segment (a first load on a busy machine took more
/// than 300 ms, and a test expecting its ID got `NotReady`; a test of the wait's expiry sets its
/// own), the loader as it is.
fn builder(store: &Arc<MemoryStore>) -> SegmentGeneratorBuilder {
    SegmentGenerator::builder(store.clone() as Arc<dyn AllocStore>)
        .wait_timeout(Duration::from_secs(5))
        .clock(Arc::new(Crawling(std::sync::atomic::AtomicI64::new(0))))
}

/// A generator over a fresh in-memory table holding `tag` with `step`, its loader as it is,
/// every segment of the table's step.
fn generator(tag: &str, step: i64) -> (Arc<MemoryStore>, SegmentGenerator) {
    let store = table(&[(tag, 1, step)]);
    let g = builder(&store).build().unwrap();
    (store, g)
}

/// How long a test waits for something the loader does before it fails.
const PATIENCE: Duration = Duration::from_secs(5);

/// Waits (bounded by [`PATIENCE`]) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < until, "{what}: not within {PATIENCE:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Waits (bounded) until the tag's next segment is loaded.
fn until_next_ready(g: &SegmentGenerator, tag: &str) {
    wait_for("the next segment never loaded", || {
        g.view(tag).is_some_and(|v| v.next_ready)
    });
}

/// Asks for `tag`'s next ID until one comes (bounded by [`PATIENCE`]), and returns it.
fn next_id_once_ready(g: &SegmentGenerator, tag: &str) -> u64 {
    let until = Instant::now() + PATIENCE;
    loop {
        match g.next_id(tag) {
            Ok(id) => return id,
            Err(e) => assert!(Instant::now() < until, "no ID within {PATIENCE:?}: {e}"),
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (bounded) until the tags that need attention are `tags`: the loader lists a tag after
/// it wakes the callers waiting for the load, so a caller may see a failure a moment before
/// [`SegmentGenerator::troubled`] does.
fn until_troubled(g: &SegmentGenerator, tags: &[&str]) {
    wait_for("the troubled tags", || {
        g.troubled()
            .iter()
            .map(|v| v.tag.as_str())
            .eq(tags.iter().copied())
    });
}

/// The tag's `max_id` in the table.
fn max_id(store: &MemoryStore, tag: &str) -> i64 {
    store.get(tag).unwrap().unwrap().max_id
}

/// Whether no ID occurs twice in `ids`.
fn all_distinct(ids: &[u64]) -> bool {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// A generator over tag `t` (step 10) whose first two IDs, 1 and 2, are taken, its next
/// segment loaded: 8 IDs left in the current segment and 10 in the next.
fn two_taken_and_the_next_loaded() -> (Arc<MemoryStore>, SegmentGenerator) {
    let (store, g) = generator("t", 10);
    assert_eq!((g.next_id("t").unwrap(), g.next_id("t").unwrap()), (1, 2));
    until_next_ready(&g, "t");
    (store, g)
}

fn flat(ranges: Vec<Range<u64>>) -> Vec<u64> {
    ranges.into_iter().flatten().collect()
}

/// Issue 33's first finding, on the in-memory table: a batch larger than the buffers during
/// an outage must not cost them a single ID.
#[test]
fn a_batch_larger_than_the_buffers_in_an_outage_costs_them_nothing() {
    let (store, g) = generator("order", 100);
    let first: Vec<u64> = (0..30).map(|_| g.next_id("order").unwrap()).collect();
    assert_eq!(first, (1..31).collect::<Vec<_>>());
    until_next_ready(&g, "order");
    store.set_down(true);
    let claims = store.claims();
    let started = Instant::now();
    match g.next_ids("order", 500) {
        Err(SegmentError::BatchNotReady {
            count, buffered, ..
        }) => {
            assert_eq!((count, buffered), (500, 170));
        }
        other => panic!("expected BatchNotReady, got {other:?}"),
    }
    assert_eq!(store.claims(), claims + 1, "one claim was tried");
    assert_eq!(g.view("order").unwrap().issued, 30, "nothing taken");
    // Refused at once from now on: no claim, no wait.
    assert!(matches!(
        g.next_ids("order", 171),
        Err(SegmentError::BatchNotReady { .. })
    ));
    assert_eq!(store.claims(), claims + 1);
    assert!(started.elapsed() < Duration::from_secs(1));
    // A batch the buffers hold is served from them, spanning both segments.
    let batch = flat(g.next_ids("order", 100).unwrap());
    assert_eq!(batch, (31..131).collect::<Vec<_>>());
    // Single IDs keep coming until the buffers are empty, every one of them.
    let singles: Vec<u64> = (0..70).map(|_| g.next_id("order").unwrap()).collect();
    assert_eq!(singles, (131..201).collect::<Vec<_>>());
    assert!(matches!(
        g.next_id("order"),
        Err(SegmentError::NotReady { .. })
    ));
    // Back: nothing was thrown away.
    store.set_down(false);
    let until = Instant::now() + Duration::from_secs(5);
    let next = loop {
        match g.next_id("order") {
            Ok(id) => break id,
            Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("never recovered: {e}"),
        }
    };
    assert_eq!(next, 201, "the IDs after the buffered ones come next");
    let batch = flat(g.next_ids("order", 500).unwrap());
    assert_eq!(batch.len(), 500);
    assert!(batch[0] > next);
}

/// While batch claims fail, one batch a second asks the database again; the rest are
/// answered at once.
#[test]
fn a_failing_database_is_asked_again_by_one_batch_a_second() {
    let (store, g) = two_taken_and_the_next_loaded();
    store.set_down(true);
    let claims = store.claims();
    for _ in 0..5 {
        assert!(g.next_ids("t", 100).is_err());
    }
    assert_eq!(store.claims(), claims + 1);
    std::thread::sleep(BATCH_RETRY_AFTER);
    assert!(g.next_ids("t", 100).is_err());
    assert!(g.next_ids("t", 100).is_err());
    assert_eq!(store.claims(), claims + 2, "one probe after the pause");
    store.set_down(false);
    std::thread::sleep(BATCH_RETRY_AFTER);
    assert_eq!(g.next_ids("t", 100).unwrap().len(), 1);
    assert_eq!(g.next_ids("t", 100).unwrap().len(), 1, "open again");
}

#[test]
fn a_batch_is_taken_from_the_buffers_only_whole() {
    let (store, g) = two_taken_and_the_next_loaded();
    // 8 left in the current segment, 10 in the next: 18 fit.
    assert_eq!(
        flat(g.next_ids("t", 18).unwrap()),
        (3..21).collect::<Vec<_>>()
    );
    let v = g.view("t").unwrap();
    assert_eq!(v.segments[v.pos].value, v.segments[v.pos].max);
    until_next_ready(&g, "t");
    let before = g.view("t").unwrap();
    let big = flat(g.next_ids("t", 25).unwrap());
    assert_eq!(big.len(), 25);
    assert!(
        big[0] >= 31,
        "claimed above the buffered next segment: {big:?}"
    );
    assert_eq!(
        g.view("t").unwrap().segments,
        before.segments,
        "buffers untouched"
    );
    assert!(store.claims() >= 4);
    assert_eq!(
        g.next_id("t").unwrap(),
        21,
        "single IDs go on where they were"
    );
}

/// A graceful stop gives back what never went out, and a lone server's restart continues
/// where it stopped.
#[test]
fn hand_back_returns_the_unused_ids_and_a_restart_continues_from_them() {
    let (store, g) = generator("t", 100);
    let ids: Vec<u64> = (0..42).map(|_| g.next_id("t").unwrap()).collect();
    until_next_ready(&g, "t");
    assert_eq!(store.get("t").unwrap().unwrap().max_id, 201);
    let h = g.hand_back(Duration::from_secs(5));
    assert_eq!(
        h,
        HandBack {
            tags: 1,
            returned: 158,
            wasted: 0,
            error: None
        }
    );
    assert_eq!(store.get("t").unwrap().unwrap().max_id, 43);
    assert!(matches!(g.next_id("t"), Err(SegmentError::Stopped { .. })));
    assert!(matches!(
        g.next_ids("t", 3),
        Err(SegmentError::Stopped { .. })
    ));
    drop(g);
    let again = SegmentGenerator::builder(store.clone() as Arc<dyn AllocStore>)
        .build()
        .unwrap();
    assert_eq!(again.next_id("t").unwrap(), ids[41] + 1);
}

/// With another claimant's claim after ours, only what lies above it could go back, and
/// nothing does: the compare-and-set finds `max_id` moved.
#[test]
fn hand_back_leaves_a_range_someone_claimed_past() {
    let (store, g) = generator("t", 100);
    let ids: Vec<u64> = (0..20).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(ids[19], 20);
    until_next_ready(&g, "t");
    let other = store.claim("t", Increment::TableStep).unwrap();
    assert_eq!(other.start, 201);
    let h = g.hand_back(Duration::from_secs(5));
    assert_eq!((h.tags, h.returned, h.wasted), (0, 0, 180));
    assert_eq!(store.get("t").unwrap().unwrap().max_id, 301);
}

#[test]
fn hand_back_with_the_database_down_skips_and_says_why() {
    let (store, g) = two_taken_and_the_next_loaded();
    store.set_down(true);
    let h = g.hand_back(Duration::from_secs(5));
    assert_eq!((h.returned, h.wasted), (0, 18));
    assert!(h.error.unwrap().contains("down"));
    store.set_down(false);
    assert_eq!(store.get("t").unwrap().unwrap().max_id, 21);
}

/// Threads taking single IDs and batches of every size while the loader refills and the
/// database goes down and up: no ID twice, and every batch is whole or refused.
#[test]
fn singles_and_batches_of_every_size_never_repeat_an_id() {
    let (store, g) = generator("t", 50);
    let g = Arc::new(g);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let (g, stop) = (g.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                let mut n = 1u64;
                for _ in 0..4_000 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if w == 0 {
                        if let Ok(id) = g.next_id("t") {
                            ids.push(id);
                        }
                    } else {
                        n = n * 7 % 131 + 1;
                        if let Ok(r) = g.next_ids("t", n) {
                            let got: Vec<u64> = r.into_iter().flatten().collect();
                            assert_eq!(got.len() as u64, n, "a batch is whole");
                            ids.extend(got);
                        }
                    }
                }
                ids
            })
        })
        .collect();
    for k in 0..10 {
        std::thread::sleep(Duration::from_millis(5));
        store.set_down(k % 2 == 0);
    }
    store.set_down(false);
    stop.store(true, Ordering::Relaxed);
    let mut all: Vec<u64> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID was issued twice");
    let max_id = store.get("t").unwrap().unwrap().max_id as u64;
    assert!(all.iter().all(|&id| (1..max_id).contains(&id)));
}

#[test]
fn inline_equality_agrees_with_slices_at_every_length() {
    let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
    for n in 0..base.len() {
        let a = &base[..n];
        let copy = a.to_vec(); // equal bytes elsewhere in memory
        assert!(same_bytes(a, &copy), "len {n}");
        if n > 0 {
            assert!(!same_bytes(a, &base[..n - 1]), "len {n} vs {}", n - 1);
        }
        for i in 0..n {
            let mut b = a.to_vec();
            b[i] ^= 0x20;
            assert!(!same_bytes(a, &b), "len {n}, byte {i} differs");
        }
    }
}
