//! Parsing instants given on the command line.

use chrono::{DateTime, NaiveDate, Utc};

/// Parses `now`, Unix milliseconds, RFC 3339 (`2026-11-21T10:00:00Z`, `...+08:00`) or a date
/// (`2026-11-21`, midnight UTC) into Unix ms.
pub fn parse_instant(s: &str) -> Result<i64, String> {
    parse_bound(s, false)
}

/// The same for the end of a range: a bare date means its last millisecond (the whole day).
pub fn parse_instant_end(s: &str) -> Result<i64, String> {
    parse_bound(s, true)
}

fn parse_bound(s: &str, end: bool) -> Result<i64, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("now") {
        return Ok(Utc::now().timestamp_millis());
    }
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        let start = t.and_utc().timestamp_millis();
        return Ok(if end {
            start + 24 * 3_600_000 - 1
        } else {
            start
        });
    }
    Err("expected now, Unix ms, RFC 3339 (2026-11-21T10:00:00Z) or a date (2026-11-21)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_parse() {
        assert_eq!(parse_instant("1288834974657"), Ok(1_288_834_974_657));
        assert_eq!(
            parse_instant("2010-11-04T01:42:54.657Z"),
            Ok(1_288_834_974_657)
        );
        assert_eq!(
            parse_instant("2016-05-20T00:00:00+08:00"),
            Ok(1_463_673_600_000)
        );
        assert_eq!(parse_instant("2015-01-01"), Ok(1_420_070_400_000));
        assert!(parse_instant("yesterday-ish").is_err());
        // As the end of a range, a date is the whole day; other forms are exact.
        assert_eq!(parse_instant_end("2015-01-01"), Ok(1_420_156_799_999));
        assert_eq!(parse_instant_end("1288834974657"), Ok(1_288_834_974_657));
    }
}
