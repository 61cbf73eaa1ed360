//! Segment generator hot path: `next_id` on one thread (handle, by name, by name with two tags
//! in turn) and two threads on one tag. The store is an SQLite file with Leaf's largest step, so loads are rare and the
//! figures show the in-memory path; `cargo bench --bench segment`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use leafctl::db::OpenMode;
use leafctl::db::sqlite::SqliteStore;
use leafctl::segment::AllocStoreExt;
use leafctl::segment::{AllocStore, SegmentGenerator};

fn generator(dir: &tempfile::TempDir) -> SegmentGenerator {
    let path = dir.path().join("bench.db");
    let store = SqliteStore::open(&path, OpenMode::CreateSchema).unwrap();
    store.add("bench", 1, 1_000_000, None, true).unwrap();
    store.add("other-tag", 1, 1_000_000, None, true).unwrap();
    SegmentGenerator::builder(Box::new(store) as Box<dyn AllocStore>)
        .build()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let g = Arc::new(generator(&dir));
    let h = g.handle("bench").unwrap();
    for _ in 0..10 {
        h.next_id().unwrap();
    }

    let mut group = c.benchmark_group("segment");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("next_id/handle/1-thread", |b| {
        b.iter(|| black_box(h.next_id().unwrap()))
    });
    group.bench_function("next_id/by-name/1-thread", |b| {
        b.iter(|| black_box(g.next_id(black_box("bench")).unwrap()))
    });
    // Two tags by name in turn: no help from the thread's memory of its last tag.
    group.bench_function("next_id/by-name/2-tags-alternating", |b| {
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            let tag = if flip { "bench" } else { "other-tag" };
            black_box(g.next_id(black_box(tag)).unwrap())
        })
    });
    // Two threads on one tag: time per ID of the pair (IDs/s total = 1e9 / ns).
    group.bench_function("next_id/handle/2-threads-one-tag", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(2);
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    let h = h.clone();
                    s.spawn(move || {
                        for _ in 0..per_thread {
                            black_box(h.next_id().unwrap());
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
