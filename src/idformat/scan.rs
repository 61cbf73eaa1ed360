//! Finding IDs inside any text (logs, JSON lines, CSV), fast enough to run over a whole log.
//!
//! The text is read in large blocks and looked at byte by byte through one table that says which
//! bytes can be part of an ID: every maximal run of letters and digits is a token, and only tokens
//! of the right length and alphabet are parsed at all (digits of the length the layout's IDs have
//! in the window, 24 or 32 hex digits, 8 hex digits and a hyphen starting a UUID, 26 Crockford
//! characters, 27 base62 ones). A token counts only when what it decodes to lies in the scan's
//! time window, which rules out most numbers and words that merely have the right shape. Nothing
//! is allocated per line or per ID, and memory stays that of one block whatever the input.

use std::io::{self, Read};

use super::lookalike::{in_base64, unix_nanos};
use super::{
    Decoded, FUTURE_SLACK_MS, NamedLayout, decode_ksuid, decode_objectid, decode_ulid, decode_uuid,
    parse_ksuid, parse_objectid, parse_ulid, parse_uuid,
};

/// How far back a scan looks for IDs by default: ten years. An older time is more likely a
/// number that is no ID (a timestamp in ns, an order number) than an ID.
pub const DEFAULT_LOOKBACK_MS: i64 = 10 * 365 * 24 * 3600 * 1000;

/// Size of one block read from the input.
const BLOCK: usize = 256 * 1024;

const ALNUM: u8 = 1;
const DIGIT: u8 = 2;
const HEX: u8 = 4;
const CROCK: u8 = 8;
/// Bytes that never occur inside an ID (not alphanumeric, not `-`): a block may end after one.
const BREAK: u8 = 16;

/// The class bits of every byte.
static CLASS: [u8; 256] = {
    let mut t = [BREAK; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut v = 0;
        if c.is_ascii_alphanumeric() {
            v |= ALNUM;
            if c.is_ascii_digit() {
                v |= DIGIT;
            }
            if c.is_ascii_hexdigit() {
                v |= HEX;
            }
            let up = c.to_ascii_uppercase();
            if !matches!(up, b'I' | b'L' | b'O' | b'U') {
                v |= CROCK;
            }
            t[b] = v;
        } else if c == b'-' {
            t[b] = 0;
        }
        b += 1;
    }
    t
};

/// Finds IDs in text: numbers under one snowflake layout, and UUIDs (versions 1, 6, 7), ULIDs,
/// KSUIDs and ObjectIds by their shape, each only when its time lies in the scan's window.
#[derive(Debug, Clone)]
pub struct Scanner {
    layout: NamedLayout,
    from_ms: i64,
    to_ms: i64,
    min_digits: usize,
    max_digits: usize,
    /// The shortest token worth a look.
    min_token: usize,
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

impl Scanner {
    /// A scanner for IDs made from [`DEFAULT_LOOKBACK_MS`] before `now_ms` to a day after it.
    pub fn new(layout: NamedLayout, now_ms: i64) -> Scanner {
        Scanner::with_window(layout, now_ms.saturating_sub(DEFAULT_LOOKBACK_MS), now_ms)
    }

    /// A scanner for IDs made from `since_ms` to a day after `now_ms`.
    pub fn with_window(layout: NamedLayout, since_ms: i64, now_ms: i64) -> Scanner {
        Scanner::between(layout, since_ms, now_ms.saturating_add(FUTURE_SLACK_MS))
    }

    /// A scanner for IDs made from `since_ms` to `until_ms` (both inclusive; `--since` and
    /// `--until` of `decode --scan`, e.g. to find an account's ObjectId from 2012 in today's log).
    pub fn between(layout: NamedLayout, since_ms: i64, until_ms: i64) -> Scanner {
        let to_ms = until_ms;
        let l = layout.layout;
        let lo_ms = since_ms.max(l.epoch_ms());
        let hi_ms = to_ms.min(l.last_unix_ms());
        let (min_digits, max_digits) = match (l.ticks_at(lo_ms), l.ticks_at(hi_ms)) {
            (Ok(first), Ok(last)) if lo_ms <= hi_ms => {
                let lo = l.encode(first, 0, 0).unwrap_or(0);
                let hi = l
                    .encode(last, l.max_worker(), l.max_sequence())
                    .unwrap_or(i64::MAX as u64);
                (digits(lo), digits(hi).min(19))
            }
            // The layout cannot hold any time of the window: no number is one of its IDs.
            _ => (usize::MAX, 0),
        };
        Scanner {
            layout,
            from_ms: since_ms,
            to_ms,
            min_digits,
            max_digits,
            min_token: min_digits.min(8),
        }
    }

    /// The layout numbers are read under.
    pub fn layout(&self) -> &NamedLayout {
        &self.layout
    }

    /// The window IDs' times must lie in, Unix ms (inclusive).
    pub fn window(&self) -> (i64, i64) {
        (self.from_ms, self.to_ms)
    }

    /// How many decimal digits the layout's IDs have in the window.
    pub fn digit_range(&self) -> (usize, usize) {
        (self.min_digits, self.max_digits)
    }

    /// Calls `found(start, end, decoded)` for every ID in `text`, in order. With `skip_first`,
    /// a token at the very start of `text` is ignored (it continues one cut off before). Returns
    /// how many numbers of an ID's length were passed over, and how many of them were taken as
    /// Unix times in nanoseconds (see [`ScanStats::skipped`] and [`ScanStats::unix_times`]).
    pub fn find(
        &self,
        text: &[u8],
        skip_first: bool,
        mut found: impl FnMut(usize, usize, &Decoded),
    ) -> (u64, u64) {
        let mut skipped = 0;
        let mut unix_times = 0;
        let n = text.len();
        let mut i = 0;
        if skip_first {
            while i < n && CLASS[text[i] as usize] & ALNUM != 0 {
                i += 1;
            }
        }
        while i < n {
            if CLASS[text[i] as usize] & ALNUM == 0 {
                i += 1;
                continue;
            }
            let start = i;
            let mut mask = 0xff;
            while i < n {
                let c = CLASS[text[i] as usize];
                if c & ALNUM == 0 {
                    break;
                }
                mask &= c;
                i += 1;
            }
            if i - start < self.min_token {
                continue;
            }
            if let Some((end, d)) = self.token(text, start, i, mask) {
                if end - start == 19 && mask & DIGIT != 0 && self.nanos(text, start, end) {
                    unix_times += 1;
                    continue;
                }
                found(start, end, &d);
                i = end;
            } else if mask & DIGIT != 0
                && (self.min_digits..=self.max_digits).contains(&(i - start))
            {
                skipped += 1;
            }
        }
        (skipped, unix_times)
    }

    /// Whether the 19 digits `text[start..end]` (an ID in the window) are a Unix time in ns.
    #[inline]
    fn nanos(&self, text: &[u8], start: usize, end: usize) -> bool {
        let value = text[start..end].iter().fold(0u64, |a, &b| {
            a.wrapping_mul(10).wrapping_add(u64::from(b - b'0'))
        });
        unix_nanos(text, start, value, self.from_ms, self.to_ms)
    }

    /// Whether the token `text[start..end]` (letters and digits, `mask` the AND of their
    /// classes) is an ID, or starts one (a UUID's first group); returns where the ID ends.
    #[inline]
    fn token(&self, text: &[u8], start: usize, end: usize, mask: u8) -> Option<(usize, Decoded)> {
        let len = end - start;
        let tok = &text[start..end];
        if mask & DIGIT != 0 && len >= self.min_digits && len <= self.max_digits {
            let id = tok.iter().fold(0u64, |a, &b| {
                a.wrapping_mul(10).wrapping_add(u64::from(b - b'0'))
            });
            if len < 19 || id <= i64::MAX as u64 {
                let d = self.layout.decode(id).ok()?;
                return self.in_window(d).map(|d| (end, d));
            }
            return None;
        }
        let d = match len {
            8 if mask & HEX != 0
                && text.get(end) == Some(&b'-')
                && start + 36 <= text.len()
                && time_uuid(text[start + 14], text[start + 19]) =>
            {
                let after = text.get(start + 36).copied().unwrap_or(b' ');
                if CLASS[after as usize] & ALNUM != 0 {
                    return None;
                }
                let d = decode_uuid(parse_uuid(&text[start..start + 36]).ok()?).ok()?;
                return self.in_window(d).map(|d| (start + 36, d));
            }
            32 if mask & HEX != 0 && time_uuid(tok[12], tok[16]) => {
                decode_uuid(parse_uuid(tok).ok()?).ok()?
            }
            24 if mask & HEX != 0 => decode_objectid(&parse_objectid(tok).ok()?),
            26 if mask & CROCK != 0 && !in_base64(text, start, end) => {
                decode_ulid(parse_ulid(tok).ok()?)
            }
            27 if !in_base64(text, start, end) => decode_ksuid(&parse_ksuid(tok).ok()?),
            _ => return None,
        };
        self.in_window(d).map(|d| (end, d))
    }

    #[inline]
    fn in_window(&self, d: Decoded) -> Option<Decoded> {
        (d.unix_ms >= self.from_ms && d.unix_ms <= self.to_ms).then_some(d)
    }
}

/// True when a UUID's version digit says 1, 6 or 7 and its variant digit says RFC 9562 (8, 9, a,
/// b): only those hold a time, so other hex tokens (random trace ids, v4 UUIDs) are not parsed.
#[inline]
fn time_uuid(version: u8, variant: u8) -> bool {
    matches!(version, b'1' | b'6' | b'7')
        && matches!(variant, b'8' | b'9' | b'a' | b'b' | b'A' | b'B')
}

/// Where [`scan_stream`] sends what it read.
pub trait ScanSink {
    /// Input with no ID in it (between IDs, newlines included), in order.
    fn text(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// An ID: its text, its line (from 1), its byte column (from 1) and what it says.
    fn id(&mut self, bytes: &[u8], line: u64, column: u64, decoded: &Decoded) -> io::Result<()>;
    /// Called before a read that may wait for input: show what was written so far.
    fn flush(&mut self) -> io::Result<()>;
    /// False when the sink ignores line and column (they are then passed as 0, and counting
    /// lines is skipped).
    fn wants_positions(&self) -> bool {
        true
    }
}

/// Counts of one scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Bytes read.
    pub bytes: u64,
    /// Lines read (a last line without a newline counts).
    pub lines: u64,
    /// IDs found.
    pub ids: u64,
    /// Numbers of the length the layout's IDs have that were not read as IDs: their time under
    /// the layout lies outside the window (IDs of another layout, or numbers that are no IDs).
    pub skipped: u64,
    /// Numbers of 19 digits taken as Unix times in nanoseconds rather than IDs (their time as
    /// such lies in the window, near its end or after a key that names a time).
    pub unix_times: u64,
}

/// A failure of [`scan_stream`]: reading the input or writing to the sink.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The input could not be read.
    #[error("cannot read the input: {0}")]
    Read(io::Error),
    /// The sink could not write.
    #[error("cannot write: {0}")]
    Write(io::Error),
}

/// Where the current line started, for columns.
struct Cursor {
    /// Line number of the position reached.
    line: u64,
    /// Bytes of the current line that lay in earlier blocks.
    carried: u64,
    /// Offset in the current block where the line starts (0 when it started earlier).
    line_start: usize,
}

impl Cursor {
    /// Moves over `bytes` (which start at `offset` in the block).
    #[inline]
    fn advance(&mut self, bytes: &[u8], offset: usize) {
        let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
        if newlines > 0 {
            self.line += newlines as u64;
            self.carried = 0;
            let last = bytes.iter().rposition(|&b| b == b'\n').unwrap_or(0);
            self.line_start = offset + last + 1;
        }
    }
}

/// Reads `reader` to its end in blocks of 256 KiB and passes its text and the IDs `scanner`
/// finds in it to `sink`, in order. Blocks end after a line (or, for a line longer than a block,
/// after a byte that cannot be part of an ID), so no ID is cut in two.
pub fn scan_stream<R: Read, S: ScanSink>(
    mut reader: R,
    scanner: &Scanner,
    sink: &mut S,
) -> Result<ScanStats, ScanError> {
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0;
    let mut stats = ScanStats::default();
    let mut cur = Cursor {
        line: 1,
        carried: 0,
        line_start: 0,
    };
    let mut skip_first = false;
    let mut last_byte = b'\n';
    loop {
        sink.flush().map_err(ScanError::Write)?;
        let n = read_some(&mut reader, &mut buf[filled..])?;
        let eof = n == 0;
        filled += n;
        stats.bytes += n as u64;
        let Some(cut) = block_end(&buf, filled, eof) else {
            continue;
        };
        let block = &buf[..cut];
        if let Some(&b) = block.last() {
            last_byte = b;
        }
        scan_block(block, scanner, sink, &mut cur, skip_first, &mut stats)?;
        // The next block continues the current line.
        cur.carried += (cut - cur.line_start) as u64;
        cur.line_start = 0;
        skip_first = cut == filled
            && !eof
            && block
                .last()
                .is_some_and(|&b| CLASS[b as usize] & BREAK == 0);
        buf.copy_within(cut..filled, 0);
        filled -= cut;
        if eof {
            break;
        }
    }
    stats.lines = cur.line - u64::from(last_byte == b'\n');
    sink.flush().map_err(ScanError::Write)?;
    Ok(stats)
}

/// One read into `buf` (again when interrupted): how many bytes, 0 at the end.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> Result<usize, ScanError> {
    loop {
        match reader.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ScanError::Read(e)),
        }
    }
}

/// Where the block of `buf[..filled]` to scan ends: after its last line, or for a line longer
/// than the buffer after its last byte that cannot be part of an ID; `None` to read more first.
fn block_end(buf: &[u8], filled: usize, eof: bool) -> Option<usize> {
    if eof {
        Some(filled)
    } else if let Some(p) = buf[..filled].iter().rposition(|&b| b == b'\n') {
        Some(p + 1)
    } else if filled == buf.len() {
        match buf.iter().rposition(|&b| CLASS[b as usize] & BREAK != 0) {
            Some(p) => Some(p + 1),
            None => Some(filled),
        }
    } else {
        None
    }
}

/// Passes one block's text and IDs to `sink`, in order, counting them in `stats`; `cur` follows
/// the lines (and columns, when the sink wants positions).
fn scan_block<S: ScanSink>(
    block: &[u8],
    scanner: &Scanner,
    sink: &mut S,
    cur: &mut Cursor,
    skip_first: bool,
    stats: &mut ScanStats,
) -> Result<(), ScanError> {
    let positions = sink.wants_positions();
    let mut pos = 0;
    let mut failed = None;
    let (skipped, unix_times) = scanner.find(block, skip_first, |start, end, d| {
        if failed.is_some() {
            return;
        }
        let before = &block[pos..start];
        let (line, column) = if positions {
            cur.advance(before, pos);
            (cur.line, cur.carried + (start - cur.line_start) as u64 + 1)
        } else {
            (0, 0)
        };
        let r = sink
            .text(before)
            .and_then(|()| sink.id(&block[start..end], line, column, d));
        if let Err(e) = r {
            failed = Some(e);
        }
        stats.ids += 1;
        pos = end;
    });
    stats.skipped += skipped;
    stats.unix_times += unix_times;
    if let Some(e) = failed {
        return Err(ScanError::Write(e));
    }
    let rest = &block[pos..];
    cur.advance(
        if positions { rest } else { block },
        if positions { pos } else { 0 },
    );
    sink.text(rest).map_err(ScanError::Write)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idformat::Format;
    use crate::snowflake::Preset;

    const NOW: i64 = 1_780_000_000_000; // 2026-05-28

    fn leaf_id(ms: i64, worker: u64, seq: u64) -> u64 {
        let l = Preset::Leaf.layout();
        l.encode(l.ticks_at(ms).unwrap(), worker, seq).unwrap()
    }

    /// Records every call, to check what the scan passed on.
    #[derive(Default)]
    struct Record {
        text: Vec<u8>,
        ids: Vec<(String, u64, u64, &'static str)>,
    }

    impl ScanSink for Record {
        fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.text.extend_from_slice(bytes);
            Ok(())
        }
        fn id(&mut self, bytes: &[u8], line: u64, column: u64, d: &Decoded) -> io::Result<()> {
            self.text.extend_from_slice(bytes);
            self.ids.push((
                String::from_utf8_lossy(bytes).into_owned(),
                line,
                column,
                d.format.name(),
            ));
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn scan(input: &[u8]) -> Record {
        let mut r = Record::default();
        let s = Scanner::new(NamedLayout::preset(Preset::Leaf), NOW);
        // Reads of a few bytes at a time, so blocks end everywhere.
        let reader = io::Read::chain(&input[..input.len() / 2], &input[input.len() / 2..]);
        scan_stream(reader, &s, &mut r).unwrap();
        assert_eq!(r.text, input, "the text passes through unchanged");
        r
    }

    /// Base64 of `n` pseudo-random bytes (a fixed LCG), wrapped at 76 columns like PEM.
    fn base64_text(n: usize) -> Vec<u8> {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let bytes: Vec<u8> = (0..n)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (x >> 56) as u8
            })
            .collect();
        let mut out = Vec::new();
        for (i, c) in bytes.chunks(3).enumerate() {
            let v = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for k in 0..4 {
                out.push(if k > c.len() {
                    b'='
                } else {
                    ABC[(v >> (18 - 6 * k) & 63) as usize]
                });
            }
            if (i + 1) % 19 == 0 {
                out.push(b'\n');
            }
        }
        out
    }

    /// Issue 36, item 14: base64 text is no source of KSUIDs or ULIDs, while a KSUID in a URL
    /// path, after `key=` or in JSON is still found.
    #[test]
    fn base64_text_yields_no_ksuids() {
        let text = base64_text(3 << 20);
        let s = Scanner::new(NamedLayout::preset(Preset::Leaf), NOW);
        let mut hits = Vec::new();
        s.find(&text, false, |a, b, d| {
            if matches!(d.format, Format::Ksuid | Format::Ulid) {
                hits.push(String::from_utf8_lossy(&text[a..b]).into_owned());
            }
        });
        // What the shape alone would find: every 26/27-character run that parses as a ULID or
        // KSUID with a time in the window (the hits before the base64 rule).
        let mut shaped = 0;
        for tok in text.split(|b| CLASS[*b as usize] & ALNUM == 0) {
            let d = match tok.len() {
                27 => parse_ksuid(tok).ok().map(|k| decode_ksuid(&k)),
                26 => parse_ulid(tok).ok().map(decode_ulid),
                _ => None,
            };
            shaped += usize::from(d.is_some_and(|d| s.in_window(d).is_some()));
        }
        println!(
            "base64: {} bytes, {shaped} ULID/KSUID-shaped runs in the window, {} found",
            text.len(),
            hits.len()
        );
        assert!(shaped > 50, "the text exercises the problem: {shaped}");
        assert!(
            hits.is_empty(),
            "{} false hits in {} bytes of base64: {:?}",
            hits.len(),
            text.len(),
            &hits[..hits.len().min(5)]
        );
        // segment's documented KSUID, 2017-10-10.
        let k = "0ujtsYcgvSTl8PAuAdqWYSMnLOv";
        for line in [
            format!("GET /api/v1/users/{k}/profile 200"),
            format!("user={k} logged in"),
            format!("{{\"id\":\"{k}\"}}"),
        ] {
            let mut found = 0;
            s.find(line.as_bytes(), false, |_, _, d| {
                found += usize::from(d.format == Format::Ksuid);
            });
            assert_eq!(found, 1, "{line}");
        }
    }

    /// Issue 45 #5: log lines carrying JWTs (base64url: random signatures that break into
    /// base62 runs at `-` and `_`) yield no KSUIDs or ULIDs, while prefixed KSUIDs (`evt_ID`,
    /// `order-ID`) are still found.
    #[test]
    fn base64url_tokens_yield_no_ksuids_and_prefixed_ids_stay() {
        const URL_SAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut token = |n: usize| -> String {
            (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    URL_SAFE[(x >> 58) as usize] as char
                })
                .collect()
        };
        let mut text = String::new();
        for _ in 0..20_000 {
            text.push_str(&format!(
                "INFO authorization=\"Bearer eyJhbGciOiJIUzI1NiJ9.{}.{}\" ok\n",
                token(48),
                token(43)
            ));
        }
        let s = Scanner::new(NamedLayout::preset(Preset::Leaf), NOW);
        let mut hits = Vec::new();
        s.find(text.as_bytes(), false, |a, b, d| {
            if matches!(d.format, Format::Ksuid | Format::Ulid) {
                hits.push(text[a..b].to_string());
            }
        });
        let shaped = text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter_map(|tok| parse_ksuid(tok.as_bytes()).ok())
            .filter(|k| s.in_window(decode_ksuid(k)).is_some())
            .count();
        assert!(shaped > 10, "the text exercises the problem: {shaped}");
        assert!(
            hits.is_empty(),
            "{} false hits: {:?}",
            hits.len(),
            &hits[..hits.len().min(5)]
        );
        let k = "0ujtsYcgvSTl8PAuAdqWYSMnLOv";
        for line in [
            format!("event evt_{k} sent"),
            format!("see order-{k}"),
            format!("id={k}"),
        ] {
            let mut found = 0;
            s.find(line.as_bytes(), false, |_, _, d| {
                found += usize::from(d.format == Format::Ksuid);
            });
            assert_eq!(found, 1, "{line}");
        }
    }

    #[test]
    fn ids_of_every_kind_are_found_with_their_lines_and_columns() {
        let id = leaf_id(NOW - 60_000, 7, 3);
        let input = format!(
            "2026-05-28 INFO order {id} created\n\
             {{\"req\":\"019e6a4e-a700-7c3d-8e4f-0123456789ab\",\"n\":123456789012345678901}}\n\
             ulid=01KSN4X9R08Q6N8D5R4T3W2Y1Z,mongo=6836a5c0a1b2c3d4e5f60718\n\
             trace 4bf92f3577b34da6a3ce929d0e0e4736 phone 4915112345678 too-old {}\n",
            leaf_id(NOW - 12 * 365 * 86_400_000, 1, 1)
        );
        let r = scan(input.as_bytes());
        let got: Vec<(&str, u64, u64, &str)> = r
            .ids
            .iter()
            .map(|(s, l, c, f)| (s.as_str(), *l, *c, *f))
            .collect();
        let id = id.to_string();
        assert_eq!(
            got,
            vec![
                (id.as_str(), 1, 23, "leaf"),
                ("019e6a4e-a700-7c3d-8e4f-0123456789ab", 2, 9, "uuidv7"),
                ("01KSN4X9R08Q6N8D5R4T3W2Y1Z", 3, 6, "ulid"),
                ("6836a5c0a1b2c3d4e5f60718", 3, 39, "objectid"),
            ]
        );
    }

    #[test]
    fn numbers_inside_longer_tokens_are_not_ids() {
        let id = leaf_id(NOW, 1, 1);
        for input in [
            format!("x{id}"),
            format!("{id}9"),
            format!("{id}abc"),
            format!("0x{id}"),
        ] {
            assert!(scan(input.as_bytes()).ids.is_empty(), "{input}");
        }
        for input in [format!("-{id}-"), format!("id={id};"), format!("\"{id}\"")] {
            assert_eq!(scan(input.as_bytes()).ids.len(), 1, "{input}");
        }
    }

    #[test]
    fn long_lines_and_blocks_keep_line_numbers() {
        let id = leaf_id(NOW - 1000, 2, 2).to_string();
        let mut input = Vec::new();
        for i in 0..30_000u64 {
            if i % 1000 == 0 {
                input.extend_from_slice(format!("line {i} {id}\n").as_bytes());
            } else {
                input.extend_from_slice(b"just some text without ids, padding padding\n");
            }
        }
        // A line longer than a block, with an ID at its end.
        input.extend(std::iter::repeat_n(b'a', BLOCK + 100));
        input.extend_from_slice(format!(" {id}\nlast {id}").as_bytes());
        let r = scan(&input);
        assert_eq!(r.ids.len(), 32);
        for (k, (_, line, col, _)) in r.ids.iter().take(30).enumerate() {
            assert_eq!(*line, k as u64 * 1000 + 1);
            assert_eq!(*col, format!("line {} ", k * 1000).len() as u64 + 1);
        }
        assert_eq!((r.ids[30].1, r.ids[30].2), (30_001, BLOCK as u64 + 102));
        assert_eq!((r.ids[31].1, r.ids[31].2), (30_002, 6));
    }

    #[test]
    fn a_token_longer_than_a_block_is_skipped_whole() {
        let mut input = vec![b'1'; BLOCK * 2 + 5];
        input.push(b'\n');
        assert!(scan(&input).ids.is_empty());
    }

    #[test]
    fn the_window_follows_the_layout() {
        let s = Scanner::new(NamedLayout::preset(Preset::Leaf), NOW);
        assert_eq!(s.digit_range(), (18, 19));
        let d = Scanner::new(NamedLayout::preset(Preset::Sonyflake), NOW);
        assert!(d.digit_range().0 >= 16, "{:?}", d.digit_range());
        let ids: Vec<Format> = {
            let mut v = Vec::new();
            s.find(b"0190163d-8694-739b-aea5-966c26f8ad91", false, |_, _, d| {
                v.push(d.format)
            });
            v
        };
        assert_eq!(ids, vec![Format::Uuid(7)]);
    }
}

/// Scanner fuzzing: any bytes scan without panicking, every ID found lies inside the input on
/// token boundaries, and the text passes through whole.
#[cfg(test)]
mod fuzz {
    use super::*;
    use crate::snowflake::Preset;
    use proptest::prelude::*;

    struct Collect(Vec<u8>, usize);
    impl ScanSink for Collect {
        fn text(&mut self, b: &[u8]) -> io::Result<()> {
            self.0.extend_from_slice(b);
            Ok(())
        }
        fn id(&mut self, b: &[u8], line: u64, col: u64, _: &Decoded) -> io::Result<()> {
            assert!(line >= 1 && col >= 1);
            self.0.extend_from_slice(b);
            self.1 += 1;
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    proptest! {
        #[test]
        fn fuzz_scanning_any_text(bytes in proptest::collection::vec(any::<u8>(), 0..2000), words in proptest::collection::vec("[0-9a-fA-Z\\- \n]{0,40}", 0..30), preset in 0usize..8) {
            let layout = NamedLayout::preset(Preset::ALL[preset]);
            let s = Scanner::new(layout, 1_780_000_000_000);
            for input in [bytes.clone(), words.concat().into_bytes()] {
                let mut c = Collect(Vec::new(), 0);
                let stats = scan_stream(&input[..], &s, &mut c).unwrap();
                prop_assert_eq!(&c.0, &input);
                prop_assert_eq!(stats.ids as usize, c.1);
                s.find(&input, false, |start, end, _| {
                    assert!(start < end && end <= input.len());
                    assert!(start == 0 || CLASS[input[start - 1] as usize] & ALNUM == 0);
                    assert!(end == input.len() || CLASS[input[end] as usize] & ALNUM == 0);
                });
            }
        }
    }
}
