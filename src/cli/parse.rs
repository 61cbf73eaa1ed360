//! Parsers of command-line values that name what they accept when they refuse one.

use leafctl::worker::RegistryKind;

/// A clap value parser for a whole number in `min..=max` whose error names the range, for a
/// negative number or a word too. (clap's own integer parser takes `-1` for an unknown flag and
/// suggests `-- -1`, and says "invalid digit found in string" for `abc`.) Pair it with
/// `allow_negative_numbers = true`.
pub fn whole_number<T>(
    min: T,
    max: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<i128> + Into<i128> + Copy + std::fmt::Display + Send + Sync + 'static,
{
    move |raw: &str| {
        let (lo, hi): (i128, i128) = (min.into(), max.into());
        let unbounded = hi >= u64::MAX as i128;
        let Ok(v) = raw.trim().parse::<i128>() else {
            return Err(if unbounded {
                format!("{raw:?} is not a whole number (expected {min} or more)")
            } else {
                format!("{raw:?} is not a whole number (expected {min}..={max})")
            });
        };
        if v < lo || v > hi {
            return Err(if unbounded {
                format!("{v} is below {min}")
            } else {
                format!("{v} is not in {min}..={max}")
            });
        }
        T::try_from(v).map_err(|_| format!("{v} is not in {min}..={max}"))
    }
}

/// `--registry`'s parser: the library's kinds, named the way the config file names them.
pub fn parse_registry(s: &str) -> Result<RegistryKind, String> {
    leafctl::registries::kind_named(s)
}

#[cfg(test)]
mod tests {
    use super::whole_number;

    #[test]
    fn whole_numbers_name_their_range() {
        let step = whole_number(1i64, 2_147_483_647);
        assert_eq!(step("5"), Ok(5));
        assert_eq!(step("2147483647"), Ok(2_147_483_647));
        for (raw, want) in [
            ("0", "0 is not in 1..=2147483647"),
            ("-1", "-1 is not in 1..=2147483647"),
            ("2147483648", "2147483648 is not in 1..=2147483647"),
            ("9223372036854775808", "9223372036854775808 is not in"),
            (
                "abc",
                "\"abc\" is not a whole number (expected 1..=2147483647)",
            ),
            ("", "is not a whole number"),
            ("1e3", "is not a whole number"),
            (
                "99999999999999999999999999999999999999999",
                "is not a whole number",
            ),
        ] {
            let e = step(raw).unwrap_err();
            assert!(e.contains(want), "{raw:?}: {e}");
        }
        let worker = whole_number(0u64, u64::MAX);
        assert_eq!(worker("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(worker("-1").unwrap_err(), "-1 is below 0");
        assert!(worker("18446744073709551616").is_err());
        let count = whole_number(1u64, i64::MAX as u64);
        assert!(
            count("9223372036854775808")
                .unwrap_err()
                .contains("not in 1..=")
        );
    }
}

/// Parser fuzzing (issue 8) of the numeric flags.
#[cfg(test)]
mod fuzz {
    use super::whole_number;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_whole_numbers(raw in any::<String>(), n in any::<i64>()) {
            let step = whole_number(1i64, 2_147_483_647);
            if let Ok(v) = step(&raw) {
                prop_assert!((1..=2_147_483_647).contains(&v));
            }
            let parsed = step(&n.to_string());
            if (1..=2_147_483_647).contains(&n) {
                prop_assert_eq!(parsed, Ok(n));
            } else {
                let e = parsed.unwrap_err();
                prop_assert!(e.contains("1..=2147483647"), "{}", e);
            }
            let worker = whole_number(0u64, u64::MAX);
            prop_assert_eq!(worker(&n.to_string()).is_ok(), n >= 0);
        }
    }
}
