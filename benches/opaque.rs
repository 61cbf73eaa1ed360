//! Opaque IDs (issue 48 item 2): the cost of one FF1 permutation of a dense ID, for 12-digit IDs
//! (cycle-walking over 12 digits), a zero-padded 8-digit field and the 63-bit range, and of
//! decoding one 12-digit ID back. An opaque tag's `next` pays this once per ID.
//!
//! Run: `cargo bench --bench opaque`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use leafctl::idformat::opaque::{IdKey, OpaqueWidth, Permutation};

fn opaque(c: &mut Criterion) {
    let key = IdKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("opaque");
    g.throughput(Throughput::Elements(1));
    for (name, width) in [
        ("encode/12_digits", OpaqueWidth::Digits(12)),
        ("encode/padded_8", OpaqueWidth::Padded(8)),
        ("encode/63_bits", OpaqueWidth::Bits63),
    ] {
        let p = Permutation::new(&key, width, b"orders");
        // Consecutive dense IDs, as a tag issues them (the walk's length varies with the ID).
        let mut dense = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                dense = dense % 1_000_000 + 1;
                p.encode(std::hint::black_box(dense))
                    .unwrap_or_else(|e| panic!("{e}"))
            })
        });
    }
    let p = Permutation::new(&key, OpaqueWidth::Digits(12), b"orders");
    let ids: Vec<u64> = (1..=1000)
        .map(|d| p.encode(d).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let mut i = 0;
    g.bench_function("decode/12_digits", |b| {
        b.iter(|| {
            i = (i + 1) % ids.len();
            p.decode(std::hint::black_box(ids[i]))
                .unwrap_or_else(|e| panic!("{e}"))
        })
    });
    g.finish();
}

criterion_group!(benches, opaque);
criterion_main!(benches);
