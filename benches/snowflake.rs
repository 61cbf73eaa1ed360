//! Snowflake benchmarks: encode/decode, the generator's cost per ID with a fake clock (pure CPU)
//! and with the system clock (bound by the layout's 4,096 IDs per ms ceiling), and a 100,000-ID
//! batch with a lead over the clock.
//!
//! Run: `cargo bench --bench snowflake`

use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
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

    // A batch of 100,000 IDs (25 ticks' worth) with a lead: taken at once instead of waiting
    // 24 ms for the clock. A fresh generator per batch, since a lead is a burst allowance
    // (sustained, the ceiling stays 4,096 IDs per ms).
    let mut g = c.benchmark_group("lead");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("batch_100000/system_clock_lead_5000", |b| {
        b.iter_batched(
            || {
                SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 1)
                    .max_lead_ms(5_000)
                    .build()
                    .unwrap()
            },
            |generator| {
                let mut left = 100_000u64;
                while left > 0 {
                    left -= generator.next_block(left).unwrap().count;
                }
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, layout, generator);
criterion_main!(benches);
