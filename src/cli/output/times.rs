//! Times as people read them: RFC 3339 with milliseconds, and ages (`3d 4h ago`).

use super::digits::{DIGIT_PAIRS, push_decimal, push_two};

/// Formats Unix ms as RFC 3339 UTC with milliseconds and `Z`.
pub fn rfc3339_ms(unix_ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(unix_ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("{unix_ms} ms"),
    }
}

/// A short human age: `3d 4h ago`, `12s ago`, `in 5m`.
pub fn age(unix_ms: i64, now_ms: i64) -> String {
    let mut buf = Vec::with_capacity(16);
    push_age(&mut buf, unix_ms, now_ms);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Appends [`age`] without allocating.
pub fn push_age(buf: &mut Vec<u8>, unix_ms: i64, now_ms: i64) {
    let diff = now_ms.saturating_sub(unix_ms);
    // Less than a second ahead (a time stored in whole seconds, a clock a little ahead) is no
    // future: "0s ago", never "in 0s".
    let (secs, future) = ((diff / 1000).unsigned_abs(), diff <= -1000);
    if future {
        buf.extend_from_slice(b"in ");
    }
    let two = |buf: &mut Vec<u8>, a: u64, ua: &[u8], b: u64, ub: &[u8]| {
        push_decimal(buf, a);
        buf.extend_from_slice(ua);
        buf.push(b' ');
        push_decimal(buf, b);
        buf.extend_from_slice(ub);
    };
    if secs < 60 {
        push_decimal(buf, secs);
        buf.push(b's');
    } else if secs < 3600 {
        two(buf, secs / 60, b"m", secs % 60, b"s");
    } else if secs < 86_400 {
        two(buf, secs / 3600, b"h", (secs % 3600) / 60, b"m");
    } else if secs < 86_400 * 365 {
        two(buf, secs / 86_400, b"d", (secs % 86_400) / 3600, b"h");
    } else {
        two(
            buf,
            secs / (86_400 * 365),
            b"y",
            (secs % (86_400 * 365)) / 86_400,
            b"d",
        );
    }
    if !future {
        buf.extend_from_slice(b" ago");
    }
}

/// Appends a signed decimal.
#[inline]
pub fn push_signed(buf: &mut Vec<u8>, n: i64) {
    if n < 0 {
        buf.push(b'-');
    }
    push_decimal(buf, n.unsigned_abs());
}

/// Formats Unix ms exactly as [`rfc3339_ms`] does, without allocating. The date of the last day
/// and the text of the last second formatted are kept, so IDs from one second (usual in a log)
/// only add their milliseconds, and IDs from one day only their time of day.
#[derive(Debug, Default)]
pub struct Rfc3339Ms {
    second: Option<i64>,
    day: Option<i64>,
    /// `YYYY-MM-DDThh:mm:ss` of `second`; the first 11 bytes are the date of `day`.
    prefix: [u8; 19],
}

impl Rfc3339Ms {
    /// Appends `2010-11-04T01:42:54.657Z` for `unix_ms`.
    #[inline]
    pub fn push(&mut self, buf: &mut Vec<u8>, unix_ms: i64) {
        let (sec, milli) = (unix_ms.div_euclid(1000), unix_ms.rem_euclid(1000) as u32);
        if self.second != Some(sec) && !self.set_second(sec) {
            // Outside years 0..=9999: the general formatter.
            buf.extend_from_slice(rfc3339_ms(unix_ms).as_bytes());
            return;
        }
        buf.extend_from_slice(&self.prefix);
        buf.push(b'.');
        buf.push(b'0' + (milli / 100) as u8);
        push_two(buf, milli % 100);
        buf.push(b'Z');
    }

    fn set_second(&mut self, sec: i64) -> bool {
        let (days, tod) = (sec.div_euclid(86_400), sec.rem_euclid(86_400) as u32);
        if self.day != Some(days) && !self.set_day(days) {
            self.second = None;
            return false;
        }
        let pair = |n: u32| {
            let r = n as usize * 2;
            [DIGIT_PAIRS[r], DIGIT_PAIRS[r + 1]]
        };
        let (hh, mm, ss) = (pair(tod / 3600), pair(tod / 60 % 60), pair(tod % 60));
        self.prefix[11..].copy_from_slice(&[hh[0], hh[1], b':', mm[0], mm[1], b':', ss[0], ss[1]]);
        self.second = Some(sec);
        true
    }

    #[cold]
    fn set_day(&mut self, days: i64) -> bool {
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            self.day = None;
            return false;
        }
        let y = y as u32;
        let digit = |n: u32| b'0' + n as u8;
        self.prefix[..11].copy_from_slice(&[
            digit(y / 1000),
            digit(y / 100 % 10),
            digit(y / 10 % 10),
            digit(y % 10),
            b'-',
            digit(m / 10),
            digit(m % 10),
            b'-',
            digit(d / 10),
            digit(d % 10),
            b'T',
        ]);
        self.day = Some(days);
        true
    }
}

/// (year, month, day) of a count of days since 1970-01-01 in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u64;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe as i64 + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_times_match_chrono() {
        let mut f = Rfc3339Ms::default();
        let mut check = |ms: i64| {
            let mut b = Vec::new();
            f.push(&mut b, ms);
            assert_eq!(String::from_utf8(b).unwrap(), rfc3339_ms(ms), "{ms}");
        };
        for ms in [
            0,
            1,
            999,
            -1,
            -1000,
            -1001,
            951_782_400_000,     // 2000-02-29
            1_288_834_974_657,   // Leaf's epoch
            4_102_444_799_999,   // 2099-12-31T23:59:59.999
            -62_167_219_200_000, // 0000-01-01
            -62_167_219_200_001, // year -1: the general formatter
            253_402_300_799_999, // 9999-12-31T23:59:59.999
            253_402_300_800_000, // year 10000: the general formatter
        ] {
            check(ms);
        }
        // A pseudo-random walk over four centuries, and runs within one second (the cache).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = (x % 12_622_780_800_000) as i64 - 2_208_988_800_000; // 1900..2300
            check(ms);
            check(ms + 1);
            check(ms.div_euclid(1000) * 1000 + 999);
        }
    }

    #[test]
    fn pushed_ages_match_the_formatter() {
        let mut b = Vec::new();
        push_age(&mut b, 0, 3_600_000 * 26);
        assert_eq!(b, b"1d 2h ago");
        b.clear();
        push_age(&mut b, 10_000, 0);
        assert_eq!(b, b"in 10s");
        assert_eq!(age(0, 400 * 86_400_000), "1y 35d ago");
        assert_eq!(age(0, 61_000), "1m 1s ago");
        assert_eq!(age(0, 7_260_000), "2h 1m ago");
        let mut s = Vec::new();
        push_signed(&mut s, -42);
        push_signed(&mut s, i64::MIN);
        assert_eq!(s, b"-42-9223372036854775808");
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(0, 5_000), "5s ago");
        assert_eq!(age(0, 3_600_000 * 26), "1d 2h ago");
        assert_eq!(age(10_000, 0), "in 10s");
        // Issue 36, item 10: moments ago is never "in 0s".
        assert_eq!(age(1_000, 500), "0s ago");
        assert_eq!(age(1_000, 0), "in 1s");
        assert_eq!(rfc3339_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
    }
}
