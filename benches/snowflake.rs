//! Snowflake benchmarks: encode/decode, and the generator's cost per ID with a fake clock (pure
//! CPU) and with the system clock (bound by the layout's 4,096 IDs per ms ceiling).
//!
//! Run: `cargo bench --bench snowflake`

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use leafctl::snowflake::{FakeClock, LEAF_EPOCH_MS, Layout, Preset, SeqStart, SnowflakeGenerator};

fn layout(c: &mut Criterion) {
    let l = Layout::preset(Preset::Leaf);
    c.bench_function("layout/encode", |b| {
        b.iter(|| l.encode(std::hint::black_box(123_456_789), 7, 42))
    });
    let id = l.encode(123_456_789, 7, 42).unwrap();
    c.bench_function("layout/decode", |b| {
        b.iter(|| l.decode(std::hint::black_box(id)))
    });
}

fn generator(c: &mut Criterion) {
    let mut g = c.benchmark_group("generator");
    g.throughput(Throughput::Elements(1));
    let fake = Arc::new(FakeClock::new(LEAF_EPOCH_MS + 1));
    let cpu_only = SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 1)
        .clock(fake)
        .seq_start(SeqStart::Zero)
        .build()
        .unwrap();
    g.bench_function("next_id/fake_clock", |b| {
        b.iter(|| cpu_only.next_id().unwrap())
    });
    let real = SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 1)
        .build()
        .unwrap();
    g.bench_function("next_id/system_clock", |b| {
        b.iter(|| real.next_id().unwrap())
    });
    g.throughput(Throughput::Elements(4096));
    g.bench_function("next_block_4096/system_clock", |b| {
        b.iter(|| {
            let mut left = 4096u64;
            while left > 0 {
                left -= real.next_block(left).unwrap().count;
            }
        })
    });
    g.finish();
}

criterion_group!(benches, layout, generator);
criterion_main!(benches);
