//! What merely looks like an ID to [`super::Scanner`]: runs of base64 text that parse as a KSUID
//! or ULID, and Unix times in nanoseconds that read as snowflake IDs.

/// Shortest alphanumeric run across a `/` that makes a token part of base64 text rather than a
/// URL path (path segments are words and IDs; base64 runs on).
const BASE64_NEIGHBOUR: usize = 16;

/// The longest prefix word a base64url-alphabet run may carry before an ID (`evt_`, `order-`):
/// prefixed IDs stay IDs.
const PREFIX_WORD: usize = 24;

/// Whether the letters-and-digits token `text[start..end]` is a piece of a base64url token (a
/// JWT's signature, a URL-safe key: letters, digits, `-` and `_`), issue 45 #5: the run of that
/// alphabet around it goes on after it, or before it in more than a prefix word of lowercase
/// letters ending in `-` or `_` (`evt_ID`, `order-ID` stay IDs). Random base64url breaks into
/// base62 runs at its `-` and `_`, and 27-character ones parse as KSUIDs.
fn in_base64url(text: &[u8], start: usize, end: usize) -> bool {
    let url_safe = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
    if text.get(end).is_some_and(|b| matches!(b, b'-' | b'_')) {
        return true;
    }
    let before = text[..start]
        .iter()
        .rev()
        .take_while(|b| url_safe(b))
        .count();
    if before == 0 {
        return false;
    }
    let prefix = &text[start - before..start];
    let word = |b: &u8| b.is_ascii_lowercase() || matches!(b, b'-' | b'_');
    !(before <= PREFIX_WORD && prefix.iter().all(word) && prefix[0].is_ascii_lowercase())
}

/// Whether the letters-and-digits token `text[start..end]` is a piece of base64 text (a key, a
/// signature, an image inline) rather than a ULID or KSUID of its own: it touches `+`, or is
/// followed by `=` (base64's own character and its padding; `key=ID` stays an ID), or across a
/// `/` it runs on into
/// another long letters-and-digits run (a URL path's segments are short words or IDs between
/// words). About 4% of base64's 27-character runs parse as a KSUID in the window otherwise.
pub(super) fn in_base64(text: &[u8], start: usize, end: usize) -> bool {
    let before = start.checked_sub(1).map(|i| text[i]);
    let after = text.get(end).copied();
    if before == Some(b'+') || matches!(after, Some(b'+' | b'=')) {
        return true;
    }
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    let run_before = |at: usize| text[..at].iter().rev().take_while(|b| alnum(b)).count();
    let run_after = |at: usize| text[at..].iter().take_while(|b| alnum(b)).count();
    if (before == Some(b'/') && run_before(start - 1) >= BASE64_NEIGHBOUR)
        || (after == Some(b'/') && run_after(end + 1) >= BASE64_NEIGHBOUR)
    {
        return true;
    }
    if in_base64url(text, start, end) {
        return true;
    }
    // A line of base64 alone, as PEM and MIME wrap it (64 or 76 columns): the token is a piece
    // of it wherever it sits.
    let b64 = |b: &u8| alnum(b) || matches!(b, b'+' | b'/' | b'=');
    let line_start = start
        - text[..start]
            .iter()
            .rev()
            .take(BASE64_LINE)
            .take_while(|b| b64(b))
            .count();
    let line_end = end
        + text[end..]
            .iter()
            .take(BASE64_LINE)
            .take_while(|b| b64(b))
            .count();
    // Indentation before it counts as the line's start (YAML's `!!binary` blocks).
    let indent = text[..line_start]
        .iter()
        .rev()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let at_line_start = line_start == indent || text[line_start - indent - 1] == b'\n';
    let at_line_end = line_end == text.len() || matches!(text[line_end], b'\n' | b'\r');
    at_line_start && at_line_end && line_end - line_start >= BASE64_LINE
}

/// Length from which a line of nothing but base64 characters is taken for wrapped base64.
const BASE64_LINE: usize = 60;

/// A month: a 19-digit number whose reading as Unix nanoseconds lies this close to the end of the
/// scan's window is taken as a time (a log line's own timestamp), not an ID.
const NANOS_NEAR_END_MS: i64 = 31 * 24 * 3600 * 1000;

/// Whether the 19-digit number `value` at `text[start..]` is a Unix time in nanoseconds rather
/// than an ID: read as one it lies in the window `from_ms..=to_ms`, and either within a month of
/// the window's end (where the times of the log that holds it lie) or after a key that names a
/// time (`"ts":`, `time=`, `timeUnixNano`, `elapsed_ns`). Leaf IDs made in one week about 2.5
/// years before the window's end read as such times too; they are counted, and the scan says so.
pub(super) fn unix_nanos(text: &[u8], start: usize, value: u64, from_ms: i64, to_ms: i64) -> bool {
    let ms = (value / 1_000_000) as i64;
    if ms < from_ms || ms > to_ms {
        return false;
    }
    ms >= to_ms - NANOS_NEAR_END_MS || time_key_before(text, start)
}

/// Whether the key just before `text[start..]` (past quotes, `:`, `=` and blanks) names a time.
fn time_key_before(text: &[u8], start: usize) -> bool {
    let before = &text[..start];
    let gap = before
        .iter()
        .rev()
        .take(4)
        .take_while(|b| matches!(b, b'"' | b'\'' | b':' | b'=' | b' ' | b'\t'))
        .count();
    let key_end = start - gap;
    if gap == 0 {
        return false;
    }
    let key_len = before[..key_end]
        .iter()
        .rev()
        .take(40)
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let key = before[key_end - key_len..key_end].to_ascii_lowercase();
    key == b"ts"
        || key == b"t"
        || key.ends_with(b"_ts")
        || key.ends_with(b"ns")
        || key.ends_with(b"nano")
        || key.ends_with(b"nanos")
        || key.windows(4).any(|w| w == b"time")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_150_000_000; // 2025-11-26T09:40:00Z

    /// Issue 36, item 14: a log line's own time in nanoseconds is no snowflake ID.
    #[test]
    fn nanosecond_times_are_recognised() {
        let to = NOW + 86_400_000;
        let from = NOW - 10 * 365 * 86_400_000;
        let ns: u64 = 1_764_150_000_123_456_789;
        let line = b"at 1764150000123456789 done";
        assert!(unix_nanos(line, 3, ns, from, to));
        // A year old: only after a key that names a time.
        let old: u64 = 1_732_614_000_123_456_789;
        assert!(!unix_nanos(b"id 1732614000123456789", 3, old, from, to));
        for (text, at) in [
            (&b"{\"ts\":1732614000123456789}"[..], 6),
            (b"time=1732614000123456789", 5),
            (b"\"timeUnixNano\": \"1732614000123456789\"", 17),
        ] {
            assert!(
                unix_nanos(text, at, old, from, to),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // Outside the window as ns (a Leaf ID of today reads as 2036): an ID.
        assert!(!unix_nanos(
            b"ts=2100000000000000000",
            3,
            2_100_000_000_000_000_000,
            from,
            to
        ));
    }
}
