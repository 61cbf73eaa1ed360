//! Many threads sharing one generator never see the same ID.

use std::sync::Arc;

use leafctl::snowflake::{Layout, Preset, SnowflakeGenerator};

#[test]
fn eight_threads_a_million_ids_each_without_a_duplicate() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 1_000_000;
    let generator = Arc::new(
        SnowflakeGenerator::builder(Layout::preset(Preset::Leaf), 42)
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let g = generator.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                // Mix the single-ID and the batch paths.
                if i % 2 == 0 {
                    for _ in 0..PER_THREAD {
                        ids.push(g.next_id().unwrap());
                    }
                } else {
                    while ids.len() < PER_THREAD {
                        let want = (PER_THREAD - ids.len()).min(1000) as u64;
                        ids.extend(g.next_block(want).unwrap());
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::with_capacity(THREADS * PER_THREAD);
    for h in handles {
        let ids = h.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each thread sees strictly increasing IDs"
        );
        all.extend(ids);
    }
    assert_eq!(all.len(), THREADS * PER_THREAD);
    all.sort_unstable();
    let dup = all.windows(2).find(|w| w[0] == w[1]);
    assert!(dup.is_none(), "duplicate ID {:?}", dup);
    let layout = generator.layout();
    assert!(
        all.iter()
            .all(|id| layout.decode(*id).unwrap().worker == 42)
    );
}
