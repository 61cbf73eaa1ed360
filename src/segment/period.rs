//! Periodic tags (issue 48 item 3): numbers such as `20261206` `01` `000001`, the period (a day,
//! month or year in a named time zone), a fixed business code and a sequence that restarts every
//! period, zero-padded to a fixed width. Each period's sequence is claimed from its own row of
//! `leaf_alloc`, `TAG@PERIOD` (`order@20261206`), made on first use; the base row `TAG` holds the
//! step. Uniqueness never depends on clocks: a process whose clock is late issues from the earlier
//! period's row, whose claims are as exclusive as any row's; a period whose sequence would pass its
//! width is refused, never widened.

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

use super::SegmentError;
use crate::idformat::opaque::{IdKey, OpaqueWidth, Permutation};

/// The most digits a whole periodic ID may have: it fits a Java `long` (and every 18-digit
/// number is below 2^63).
pub const MAX_PERIODIC_DIGITS: u32 = 18;

/// The fewest digits an opaque sequence may have (FF1's minimum domain, with room).
pub const MIN_OPAQUE_SEQUENCE_DIGITS: u8 = crate::idformat::opaque::MIN_DIGITS;

/// How long a period lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Period {
    /// A calendar day: `YYYYMMDD`.
    Day,
    /// A calendar month: `YYYYMM`.
    Month,
    /// A calendar year: `YYYY`.
    Year,
}

impl Period {
    /// The digits of the period's number.
    pub fn digits(self) -> u32 {
        match self {
            Period::Day => 8,
            Period::Month => 6,
            Period::Year => 4,
        }
    }

    /// The name as `--period` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Month => "month",
            Period::Year => "year",
        }
    }

    fn parse(text: &str) -> Option<Period> {
        [Period::Day, Period::Month, Period::Year]
            .into_iter()
            .find(|p| p.as_str() == text)
    }

    /// The period's number at `at` in `zone` (`20261206`, `202612`, `2026`).
    pub fn number_at(self, at: DateTime<Utc>, zone: Tz) -> u64 {
        let local = at.with_timezone(&zone);
        let (y, m, d) = (
            u64::try_from(local.year()).unwrap_or(0),
            u64::from(local.month()),
            u64::from(local.day()),
        );
        match self {
            Period::Day => y * 10_000 + m * 100 + d,
            Period::Month => y * 100 + m,
            Period::Year => y,
        }
    }
}

/// A periodic tag's shape: its period, time zone, code and sequence width, and the key check of
/// an opaque sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodicShape {
    /// How long a period lasts.
    pub period: Period,
    /// The time zone periods are counted in (an IANA name, e.g. Asia/Shanghai).
    pub zone: Tz,
    /// The business code between the period and the sequence (decimal digits, maybe none).
    pub code: String,
    /// The sequence's digits.
    pub width: u8,
    /// With an opaque sequence, the check value of its key.
    pub key_check: Option<String>,
}

impl PeriodicShape {
    /// A shape from `tag add`'s options, checked: a zone leafctl knows, a code of digits, a width
    /// of at least 1 (7 for an opaque sequence), the whole ID at most 18 digits, and room in a
    /// tag name for the period rows.
    pub fn new(
        tag: &str,
        period: Period,
        zone: &str,
        code: &str,
        width: u8,
        key_check: Option<String>,
    ) -> Result<PeriodicShape, SegmentError> {
        let bad = |reason: String| SegmentError::BadShape {
            tag: tag.into(),
            reason,
        };
        let zone: Tz = zone.parse().map_err(|_| {
            bad(format!(
                "{zone:?} is not a time zone leafctl knows; give an IANA name such as Asia/Shanghai or UTC"
            ))
        })?;
        if !code.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(format!(
                "the code {code:?} is not made of decimal digits"
            )));
        }
        let min_width = if key_check.is_some() {
            MIN_OPAQUE_SEQUENCE_DIGITS
        } else {
            1
        };
        if width < min_width {
            return Err(bad(format!(
                "a sequence of {width} digits is too narrow{}; give --width {min_width} or more",
                if key_check.is_some() {
                    " to permute (FF1 needs a domain of at least a million)"
                } else {
                    ""
                }
            )));
        }
        let total = period.digits() + code.len() as u32 + u32::from(width);
        if total > MAX_PERIODIC_DIGITS {
            return Err(bad(format!(
                "its IDs would have {total} digits ({} of the period, {} of the code, {width} of the sequence), more than the {MAX_PERIODIC_DIGITS} a Java long holds",
                period.digits(),
                code.len()
            )));
        }
        let row = tag.chars().count() + 1 + period.digits() as usize;
        if row > super::MAX_TAG_CHARS {
            return Err(bad(format!(
                "its period rows (TAG@PERIOD) would be {row} characters long, more than the {} a tag may have; give it a shorter name",
                super::MAX_TAG_CHARS
            )));
        }
        Ok(PeriodicShape {
            period,
            zone,
            code: code.to_string(),
            width,
            key_check,
        })
    }

    /// The spec words after `period=`: `day tz=Asia/Shanghai code=01 width=6`.
    pub fn spec(&self) -> String {
        let mut s = format!("period={} tz={}", self.period.as_str(), self.zone.name());
        if !self.code.is_empty() {
            s.push_str(&format!(" code={}", self.code));
        }
        s.push_str(&format!(" width={}", self.width));
        if let Some(k) = &self.key_check {
            s.push_str(&format!(" key={k}"));
        }
        s
    }

    /// The shape a spec's words describe, if they are one.
    pub fn from_words(tag: &str, words: &[(&str, &str)]) -> Option<PeriodicShape> {
        let get = |k: &str| words.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let known = ["period", "tz", "code", "width", "key"];
        if words.iter().any(|(k, _)| !known.contains(k)) {
            return None;
        }
        let period = Period::parse(get("period")?)?;
        let width: u8 = get("width")?.parse().ok()?;
        let key = get("key").map(str::to_string);
        PeriodicShape::new(
            tag,
            period,
            get("tz")?,
            get("code").unwrap_or(""),
            width,
            key,
        )
        .ok()
    }

    /// How many digits the sequence part shifts the rest by.
    fn sequence_scale(&self) -> u64 {
        10u64.pow(u32::from(self.width))
    }

    /// One past the last sequence of a period, as a max_id: claims of a period row stop there.
    pub fn ceiling(&self) -> i64 {
        i64::try_from(self.sequence_scale()).unwrap_or(i64::MAX)
    }

    /// The period row of `tag` for period `number`: `tag@number`.
    pub fn row(tag: &str, number: u64) -> String {
        format!("{tag}@{number}")
    }

    /// The ID of sequence value `sequence` (already permuted, if opaque) in period `number`.
    pub fn compose(&self, number: u64, sequence: u64) -> u64 {
        let code: u64 = self.code.parse().unwrap_or(0);
        let code_scale = 10u64.pow(self.code.len() as u32);
        (number * code_scale + code) * self.sequence_scale() + sequence
    }

    /// An ID split into its period number and sequence value (as issued), or why it is not one
    /// of this shape.
    pub fn split(&self, tag: &str, id: u64) -> Result<(u64, u64), SegmentError> {
        let digits = self.period.digits() + self.code.len() as u32 + u32::from(self.width);
        let text = id.to_string();
        let not_ours = |why: &str| SegmentError::NotOfShape {
            tag: tag.into(),
            id,
            reason: why.to_string(),
        };
        if text.len() != digits as usize {
            return Err(not_ours(&format!("its IDs have {digits} digits")));
        }
        let pd = self.period.digits() as usize;
        let (period, rest) = text.split_at(pd);
        let (code, sequence) = rest.split_at(self.code.len());
        if code != self.code {
            return Err(not_ours(&format!("its IDs carry the code {}", self.code)));
        }
        let number = period
            .parse()
            .map_err(|_| not_ours("its period is a number"))?;
        let sequence = sequence
            .parse()
            .map_err(|_| not_ours("its sequence is a number"))?;
        Ok((number, sequence))
    }
}

/// How one period of a periodic tag issues: its row, and the permutation of an opaque sequence.
#[derive(Debug, Clone)]
pub struct PeriodIssuing {
    /// The period's number.
    pub number: u64,
    /// The period's row of `leaf_alloc`.
    pub row: String,
    permutation: Option<Permutation>,
}

impl PeriodIssuing {
    /// Period `number` of `tag` (shape `shape`), with `key` for an opaque sequence (checked
    /// against the shape's by the caller).
    pub fn new(
        tag: &str,
        shape: &PeriodicShape,
        number: u64,
        key: Option<&IdKey>,
    ) -> PeriodIssuing {
        let row = PeriodicShape::row(tag, number);
        let permutation =
            key.map(|k| Permutation::new(k, OpaqueWidth::Padded(shape.width), row.as_bytes()));
        PeriodIssuing {
            number,
            row,
            permutation,
        }
    }

    /// The sequence value issued for dense sequence `dense` (itself, or its permutation).
    pub fn sequence(&self, tag: &str, dense: u64) -> Result<u64, SegmentError> {
        match &self.permutation {
            None => Ok(dense),
            Some(p) => p.encode(dense).map_err(|e| super::opaque_error(tag, e)),
        }
    }

    /// The dense sequence of an issued sequence value.
    pub fn dense(&self, tag: &str, sequence: u64) -> Result<u64, SegmentError> {
        match &self.permutation {
            None => Ok(sequence),
            Some(p) => p.decode(sequence).map_err(|e| super::opaque_error(tag, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(period: Period, code: &str, width: u8) -> PeriodicShape {
        PeriodicShape::new("order", period, "Asia/Shanghai", code, width, None).unwrap()
    }

    #[test]
    fn the_period_is_counted_in_the_tags_time_zone() {
        // 2026-12-06T16:30Z is already 2026-12-07 in Shanghai (UTC+8).
        let at = DateTime::parse_from_rfc3339("2026-12-06T16:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let sh: Tz = "Asia/Shanghai".parse().unwrap();
        assert_eq!(Period::Day.number_at(at, sh), 20261207);
        assert_eq!(Period::Day.number_at(at, chrono_tz::UTC), 20261206);
        assert_eq!(Period::Month.number_at(at, sh), 202612);
        assert_eq!(Period::Year.number_at(at, sh), 2026);
    }

    #[test]
    fn ids_compose_and_split_as_the_issue_shows() {
        let s = shape(Period::Day, "", 6);
        assert_eq!(s.compose(20261206, 1), 20261206000001);
        assert_eq!(s.split("order", 20261206000001).unwrap(), (20261206, 1));
        let coded = shape(Period::Day, "01", 6);
        assert_eq!(coded.compose(20261206, 42), 2026120601000042);
        assert_eq!(
            coded.split("order", 2026120601000042).unwrap(),
            (20261206, 42)
        );
        assert!(
            coded.split("order", 2026120602000042).is_err(),
            "another code"
        );
        assert!(coded.split("order", 202612060100004).is_err(), "too short");
        assert_eq!(s.ceiling(), 1_000_000);
    }

    #[test]
    fn shapes_that_do_not_fit_are_refused() {
        let new = |code: &str, width: u8, key: Option<&str>| {
            PeriodicShape::new(
                "order",
                Period::Day,
                "UTC",
                code,
                width,
                key.map(str::to_string),
            )
        };
        assert!(new("", 10, None).is_ok(), "18 digits");
        assert!(new("1", 10, None).is_err(), "19 digits");
        assert!(new("x1", 4, None).is_err(), "not digits");
        assert!(
            new("", 6, Some("0011223344556677")).is_err(),
            "an opaque sequence of 6"
        );
        assert!(new("", 7, Some("0011223344556677")).is_ok());
        assert!(PeriodicShape::new("o", Period::Day, "Mars/Olympus", "", 6, None).is_err());
        let long = "t".repeat(120);
        assert!(PeriodicShape::new(&long, Period::Day, "UTC", "", 6, None).is_err());
    }

    #[test]
    fn a_spec_reads_back() {
        let s = PeriodicShape::new(
            "order",
            Period::Month,
            "Europe/Berlin",
            "07",
            8,
            Some("00112233aabbccdd".into()),
        )
        .unwrap();
        let spec = s.spec();
        let words: Vec<(&str, &str)> = spec
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .collect();
        assert_eq!(PeriodicShape::from_words("order", &words), Some(s));
    }

    #[test]
    fn an_opaque_sequence_permutes_within_its_width_per_period() {
        let key = IdKey::from_hex(&"ab".repeat(32)).unwrap();
        let s = PeriodicShape::new("order", Period::Day, "UTC", "", 7, Some(key.check_value()))
            .unwrap();
        let a = PeriodIssuing::new("order", &s, 20261206, Some(&key));
        let b = PeriodIssuing::new("order", &s, 20261207, Some(&key));
        let mut seen = std::collections::HashSet::new();
        for d in 1..=2000 {
            let q = a.sequence("order", d).unwrap();
            assert!(q < 10_000_000);
            assert_eq!(a.dense("order", q).unwrap(), d);
            assert!(seen.insert(q));
        }
        let same: usize = (1..=100)
            .filter(|&d| a.sequence("order", d).unwrap() == b.sequence("order", d).unwrap())
            .count();
        assert!(same < 5, "each period permutes its own way ({same} alike)");
    }
}
