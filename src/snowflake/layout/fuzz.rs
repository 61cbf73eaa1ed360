//! Parser fuzzing (issue 8): any layout parameters, IDs, times and width strings; decoding
//! inverts encoding for every layout that validates.
//! `PROPTEST_CASES=100000 cargo test --release --lib fuzz_` for a long run.

use super::*;
use proptest::prelude::*;

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Preset::Leaf.layout()),
        Just(Preset::Discord.layout()),
        Just(Preset::Sonyflake.layout()),
        Just(Preset::Baidu.layout()),
        Just(Preset::Instagram.layout()),
        Just(Preset::Mastodon.layout()),
        Just(Preset::Yitter.layout()),
        Just(Preset::Seata.layout()),
        (any::<i64>(), 1u32..62, 1u32..62, 1u64..100_000).prop_filter_map(
            "valid custom layout",
            |(epoch, t, w, unit)| {
                let s = 63u32.checked_sub(t + w).filter(|s| *s >= 1)?;
                Layout::custom(epoch, t, w, s, unit).ok()
            }
        ),
    ]
}

proptest! {
    #[test]
    fn fuzz_custom_layouts_validate_without_panicking(
        epoch in any::<i64>(), t in any::<u32>(), w in any::<u32>(), s in any::<u32>(), unit in any::<u64>()
    ) {
        if let Ok(l) = Layout::custom(epoch, t, w, s, unit) {
            prop_assert_eq!(l.time_bits() + l.worker_bits() + l.seq_bits(), 63);
            prop_assert!(l.last_unix_ms() >= l.epoch_ms());
        }
    }

    #[test]
    fn fuzz_ids_decode_and_encode_back(layout in layouts(), id in any::<u64>(), ms in any::<i64>(), ms2 in any::<i64>()) {
        match layout.decode(id) {
            Ok(p) => {
                prop_assert!(id <= i64::MAX as u64);
                prop_assert_eq!(layout.encode(p.ticks, p.worker, p.sequence).unwrap(), id);
            }
            Err(_) => prop_assert!(id > i64::MAX as u64),
        }
        if let Ok(ticks) = layout.ticks_at(ms) {
            let start = layout.unix_ms(ticks);
            prop_assert!(start <= ms && (ms - start) < layout.unit_ms() as i64);
        }
        if let Ok((lo, hi)) = layout.id_range(ms.min(ms2), ms.max(ms2)) {
            prop_assert!(lo <= hi && hi <= i64::MAX as u64);
        }
    }

    #[test]
    fn fuzz_width_strings(s in any::<String>(), t in any::<u32>(), w in any::<u32>(), q in any::<u32>()) {
        let _ = s.parse::<BitWidths>();
        let b = BitWidths { time: t, worker: w, seq: q };
        prop_assert_eq!(b.to_string().parse::<BitWidths>(), Ok(b));
    }
}
