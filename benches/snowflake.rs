//! Snowflake benchmarks: encode/decode, the generator's cost per ID with a fake clock (pure CPU)
//! and with the system clock (bound by the layout's 4,096 IDs per ms ceiling), and a 100,000-ID
//! batch with a lead over the clock, and one ID at a time from one and from two threads on a
//! layout too wide to run out of sequence numbers (what `serve`'s two worker threads do: the cost
//! of the generator's own synchronisation, not of waiting for the clock).
//!
//! Run: `cargo bench --bench snowflake`

use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// One ID per call, as `serve` asks, on a layout with 2^22 sequence numbers per ms (1 worker bit):
/// the clock never runs out, so the figure is the generator's own cost, alone and shared by two
/// threads (the time per ID of the pair, both issuing at once).
fn one_at_a_time(c: &mut Criterion) {
    let wide = Layout::custom(LEAF_EPOCH_MS, 40, 1, 22, 1).unwrap();
    let generator = SnowflakeGenerator::builder(wide, 1).build().unwrap();
    let mut g = c.benchmark_group("one_at_a_time");
    g.throughput(Throughput::Elements(1));
    g.bench_function("try_next_block_1/one_thread", |b| {
        b.iter(|| generator.try_next_block(1))
    });
    g.bench_function("try_next_block_1/two_threads", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(2);
            let elapsed = std::thread::scope(|s| {
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        s.spawn(|| {
                            let start = Instant::now();
                            for _ in 0..per_thread {
                                std::hint::black_box(generator.try_next_block(1));
                            }
                            start.elapsed()
                        })
                    })
                    .collect();
                threads
                    .into_iter()
                    .map(|t| t.join().unwrap_or_default())
                    .max()
                    .unwrap_or(Duration::ZERO)
            });
            // Both threads issue at once: the pair's time for `iters` IDs.
            elapsed.mul_f64(iters as f64 / (2 * per_thread) as f64)
        })
    });
    g.finish();
}

criterion_group!(benches, layout, generator, one_at_a_time);
criterion_main!(benches);
