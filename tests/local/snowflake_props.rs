//! Property tests: every layout encodes and decodes losslessly and never sets the sign bit.

use leafctl::snowflake::{Layout, Preset};
use proptest::prelude::*;

fn roundtrip(layout: &Layout, ticks: u64, worker: u64, seq: u64) -> Result<(), TestCaseError> {
    let id = layout
        .encode(ticks, worker, seq)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(id <= i64::MAX as u64, "sign bit set in {id}");
    let p = layout
        .decode(id)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!((p.ticks, p.worker, p.sequence), (ticks, worker, seq));
    Ok(())
}

fn preset() -> impl Strategy<Value = Preset> {
    prop_oneof![
        Just(Preset::Leaf),
        Just(Preset::Discord),
        Just(Preset::Sonyflake),
        Just(Preset::Baidu)
    ]
}

proptest! {
    #[test]
    fn presets_roundtrip(p in preset(), t in any::<u64>(), w in any::<u64>(), s in any::<u64>()) {
        let l = p.layout();
        roundtrip(&l, t % (l.max_ticks() + 1), w % (l.max_worker() + 1), s % (l.max_sequence() + 1))?;
    }

    #[test]
    fn presets_reject_out_of_range_fields(p in preset(), extra in 1u64..1000) {
        let l = p.layout();
        prop_assert!(l.encode(l.max_ticks() + extra, 0, 0).is_err());
        prop_assert!(l.encode(0, l.max_worker() + extra, 0).is_err());
        prop_assert!(l.encode(0, 0, l.max_sequence() + extra).is_err());
    }

    #[test]
    fn custom_layouts_roundtrip(
        time_bits in 1u32..=61,
        worker_frac in 0.0f64..1.0,
        epoch in 0i64..4_000_000_000_000,
        unit in 1u64..=1000,
        t in any::<u64>(), w in any::<u64>(), s in any::<u64>(),
    ) {
        let rest = 63 - time_bits; // >= 2
        let worker_bits = 1 + ((rest - 2) as f64 * worker_frac) as u32;
        let seq_bits = rest - worker_bits;
        match Layout::custom(epoch, time_bits, worker_bits, seq_bits, unit) {
            Ok(l) => {
                roundtrip(&l, t % (l.max_ticks() + 1), w % (l.max_worker() + 1), s % (l.max_sequence() + 1))?;
                // Time conversion agrees with the tick arithmetic.
                let ticks = t % (l.max_ticks() + 1);
                let ms = l.unix_ms(ticks);
                prop_assert_eq!(l.ticks_at(ms).ok(), Some(ticks));
            }
            // Only a span that overflows i64 milliseconds may be refused.
            Err(_) => prop_assert!((epoch as i128) + (((1i128 << time_bits) - 1) * unit as i128) > i64::MAX as i128),
        }
    }

    #[test]
    fn id_ranges_bound_every_id_in_the_window(
        p in preset(), from_off in 0i64..1_000_000_000, len in 0i64..10_000_000,
        w in any::<u64>(), s in any::<u64>(), pos in 0.0f64..=1.0,
    ) {
        let l = p.layout();
        let from = l.epoch_ms() + from_off;
        let to = from + len;
        let (lo, hi) = l.id_range(from, to).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let at = from + (len as f64 * pos) as i64;
        let ticks = l.ticks_at(at).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let id = l.encode(ticks, w % (l.max_worker() + 1), s % (l.max_sequence() + 1))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(lo <= id && id <= hi, "{id} outside [{lo}, {hi}]");
    }
}
