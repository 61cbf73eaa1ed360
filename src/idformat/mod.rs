//! Every time-ordered ID leafctl can read, for incidents: which format an ID is in, when it was
//! made and by whom, which layout a bare number most plausibly has, where IDs sit in log text,
//! and which ID range one worker filled around a moment.
//!
//! Snowflake-style 64-bit numbers are read under a [`Layout`] (a [`Preset`] or a custom one,
//! named by [`NamedLayout`]); 128-bit and text IDs by their shape: UUID versions 1, 6 and 7
//! (RFC 9562), ULID, KSUID and MongoDB's ObjectId ([`decode_text`]). [`guess`] ranks the layouts
//! a number could have; [`Scanner`] finds IDs in text; [`around`] turns an ID into the range of
//! IDs its worker made in a time window.

pub mod compact;
mod guess;
mod lookalike;
pub mod opaque;
mod range;
mod scan;
mod text;

use crate::snowflake::{Layout, Preset};

pub use guess::{
    Candidate, GuessOptions, LocalWorker, RECENT_MS, guess, implausible, local_workers,
};
pub use range::{Around, around, around_workers};
pub use scan::{DEFAULT_LOOKBACK_MS, ScanError, ScanSink, ScanStats, Scanner, scan_stream};
pub use text::{
    KSUID_EPOCH_S, decode_ksuid, decode_objectid, decode_text, decode_ulid, decode_uuid,
    format_ksuid, format_ulid, format_uuid, parse_ksuid, parse_objectid, parse_ulid, parse_uuid,
};

/// The shapes of text IDs, for messages that say what would fit.
const SHAPES: &str = "an ID is a number (snowflake, up to 2^63-1, decimal or 0x hex), a UUID \
                      (36 characters with hyphens or 32 hex digits), an ObjectId (24 hex digits), \
                      a ULID (26 characters of Crockford base32) or a KSUID (27 base62 characters)";

/// How far past now a time may lie before it is taken as a wrong layout rather than a clock a
/// little ahead (a day).
pub const FUTURE_SLACK_MS: i64 = 24 * 3600 * 1000;

/// Why a value could not be read as an ID. Each message names what was wrong and, where it can,
/// what would fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdFormatError {
    /// Nothing to read.
    #[error("empty value, not an ID")]
    Empty,
    /// A negative number.
    #[error("negative; IDs are never negative")]
    Negative,
    /// A number with the sign bit set or wider than 64 bits.
    #[error("over 2^63-1, so not a 64-bit ID")]
    Over63Bits,
    /// `0x` followed by something that is not hex.
    #[error("not a hex number")]
    BadHex,
    /// A value of no known shape.
    #[error("not a number, nor an ID of a known shape: {0}")]
    NotAnId(String),
    /// A character outside the format's alphabet.
    #[error("not {format}: {ch:?} at position {pos} is not one of its characters ({alphabet})")]
    BadChar {
        /// The format the value's shape suggested.
        format: &'static str,
        /// The character.
        ch: char,
        /// Its position, from 1.
        pos: usize,
        /// The characters the format allows.
        alphabet: &'static str,
    },
    /// A UUID of a version that holds no time.
    #[error(
        "{what} (version {version}) holds no time; only UUID versions 1, 6 and 7 say when they were made"
    )]
    UuidWithoutTime {
        /// The version nibble.
        version: u8,
        /// What kind of UUID it is.
        what: &'static str,
    },
    /// A 128-bit value of another variant than RFC 9562's.
    #[error(
        "a UUID of the {variant} variant; only RFC 9562 UUIDs (variant 10xx) have versions with a time"
    )]
    UuidVariant {
        /// The variant's name and bits.
        variant: &'static str,
    },
    /// A 26-character value above the largest ULID.
    #[error(
        "larger than the largest ULID, 7ZZZZZZZZZZZZZZZZZZZZZZZZZ (its time would overflow 48 bits)"
    )]
    UlidOverflow,
    /// A 27-character value above the largest KSUID.
    #[error(
        "larger than the largest KSUID, aWgEPTl1tmebfsQzFP4bxwgy80V (it would overflow 160 bits)"
    )]
    KsuidOverflow,
    /// A time the layout cannot have issued yet: usually the wrong layout.
    #[error("decodes to {time} under the {layout} layout, which is in the future; {fits}")]
    Future {
        /// The layout or format read with.
        layout: &'static str,
        /// The time, RFC 3339.
        time: String,
        /// The layouts under which the value gives a plausible time, as a sentence.
        fits: String,
    },
    /// A format whose IDs do not sort by time, so no ID range matches a time window.
    #[error("{format} IDs do not sort by time ({why}), so no ID range matches a time window")]
    NotSortable {
        /// The format.
        format: &'static str,
        /// Why not.
        why: &'static str,
    },
    /// A time no ID of the layout can have (see [`implausible`]): a small number, say.
    #[error("decodes to {time} under the {layout} layout, {why}; {fits}")]
    Implausible {
        /// The layout read with.
        layout: &'static str,
        /// The time, RFC 3339.
        time: String,
        /// Why the time cannot be right.
        why: String,
        /// What would fit, as a sentence.
        fits: String,
    },
    /// A time before the format existed.
    #[error("decodes to {time} as {layout}, before {layout} IDs existed ({since}); {fits}")]
    TooEarly {
        /// The format read with.
        layout: &'static str,
        /// The time, RFC 3339.
        time: String,
        /// When the format appeared.
        since: &'static str,
        /// What would fit, as a sentence.
        fits: String,
    },
}

/// A snowflake layout with the name it goes by: a preset's name, or `custom`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedLayout {
    /// `leaf`, `discord`, ... or `custom`.
    pub name: &'static str,
    /// The bit layout.
    pub layout: Layout,
    /// The preset it is, if any.
    pub preset: Option<Preset>,
}

impl NamedLayout {
    /// A preset's layout under its name.
    pub fn preset(p: Preset) -> NamedLayout {
        NamedLayout {
            name: p.name(),
            layout: p.layout(),
            preset: Some(p),
        }
    }

    /// A custom layout, named `custom`; one equal to a preset's is named after it.
    pub fn custom(layout: Layout) -> NamedLayout {
        Preset::ALL
            .into_iter()
            .find(|p| p.layout() == layout)
            .map(NamedLayout::preset)
            .unwrap_or(NamedLayout {
                name: "custom",
                layout,
                preset: None,
            })
    }

    /// What the worker field holds in this generator's own word (`machine`, `shard`, `worker`).
    pub fn worker_name(&self) -> &'static str {
        self.preset.map_or("worker", Preset::worker_name)
    }

    /// Reads one snowflake ID (the time is not checked; see [`Decoded::check_time`]).
    pub fn decode(&self, id: u64) -> Result<Decoded, IdFormatError> {
        let parts = self
            .layout
            .decode(id)
            .map_err(|_| IdFormatError::Over63Bits)?;
        Ok(Decoded {
            format: Format::Snowflake(*self),
            unix_ms: self.layout.unix_ms(parts.ticks),
            worker: (self.layout.worker_bits() > 0).then_some(parts.worker),
            sequence: Some(parts.sequence),
            random: None,
        })
    }
}

/// The format an ID was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A 64-bit number under a snowflake layout.
    Snowflake(NamedLayout),
    /// A UUID of version 1, 6 or 7.
    Uuid(u8),
    /// A ULID.
    Ulid,
    /// A KSUID.
    Ksuid,
    /// A MongoDB ObjectId.
    ObjectId,
}

impl Format {
    /// The name printed for it: the layout's name, `uuidv7`, `ulid`, `ksuid`, `objectid`.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Snowflake(l) => l.name,
            Format::Uuid(1) => "uuidv1",
            Format::Uuid(6) => "uuidv6",
            Format::Uuid(_) => "uuidv7",
            Format::Ulid => "ulid",
            Format::Ksuid => "ksuid",
            Format::ObjectId => "objectid",
        }
    }

    /// What [`Decoded::worker`] holds, in the format's own word.
    pub fn worker_name(&self) -> &'static str {
        match self {
            Format::Snowflake(l) => l.worker_name(),
            Format::Uuid(_) => "node",
            Format::ObjectId => "process",
            Format::Ulid | Format::Ksuid => "worker",
        }
    }

    /// What [`Decoded::sequence`] holds, in the format's own word.
    pub fn sequence_name(&self) -> &'static str {
        match self {
            Format::Snowflake(_) => "sequence",
            Format::Uuid(_) => "clock_seq",
            Format::ObjectId => "counter",
            Format::Ulid | Format::Ksuid => "sequence",
        }
    }

    /// True when the worker field is shown in hex (a UUID's node, an ObjectId's process value).
    pub fn worker_in_hex(&self) -> bool {
        matches!(self, Format::Uuid(_) | Format::ObjectId)
    }

    /// The earliest time an ID of this format can plausibly hold: a layout's epoch, or roughly
    /// when the format was published (an older time means the value is something else).
    pub fn earliest(&self) -> (i64, &'static str) {
        match self {
            Format::Snowflake(l) => (l.layout.epoch_ms(), "its epoch"),
            // RFC 4122's predecessors: time-based UUIDs are from the 1990s.
            Format::Uuid(1) => (631_152_000_000, "1990"),
            Format::Uuid(_) => (1_577_836_800_000, "2020"),
            Format::Ulid => (1_451_606_400_000, "2016"),
            Format::Ksuid => (1_483_228_800_000, "2017"),
            Format::ObjectId => (1_230_768_000_000, "2009"),
        }
    }
}

/// The random part of an ID that has one (a UUIDv7's 74 bits, a ULID's 80, a KSUID's 128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Random {
    /// The bits, right-aligned.
    pub value: u128,
    /// How many bits.
    pub bits: u32,
}

impl Random {
    /// Lowercase hex, zero-padded to the field's width.
    pub fn hex(&self) -> String {
        let digits = self.bits.div_ceil(4) as usize;
        format!("{:0digits$x}", self.value)
    }
}

/// What an ID says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// The format it was read in.
    pub format: Format,
    /// When it was made, Unix ms (formats with seconds or 100 ns are given in whole ms).
    pub unix_ms: i64,
    /// The worker, machine, shard, node or process field, when the format has one.
    pub worker: Option<u64>,
    /// The sequence, clock sequence or counter, when the format has one.
    pub sequence: Option<u64>,
    /// The random part, when the format has one.
    pub random: Option<Random>,
}

impl Decoded {
    /// Accepts a time between the format's earliest plausible one and a day after `now_ms`;
    /// otherwise an error naming the layouts under which the same number fits (for snowflakes).
    pub fn check_time(&self, raw_number: Option<u64>, now_ms: i64) -> Result<(), IdFormatError> {
        let (earliest, since) = self.format.earliest();
        let fits = || match raw_number {
            Some(id) => fits_sentence(id, now_ms),
            None => "check that the value is the ID itself".to_string(),
        };
        if self.unix_ms > now_ms.saturating_add(FUTURE_SLACK_MS) {
            return Err(IdFormatError::Future {
                layout: self.format.name(),
                time: rfc3339(self.unix_ms),
                fits: fits(),
            });
        }
        if self.unix_ms < earliest && !matches!(self.format, Format::Snowflake(_)) {
            return Err(IdFormatError::TooEarly {
                layout: self.format.name(),
                time: rfc3339(self.unix_ms),
                since,
                fits: fits(),
            });
        }
        Ok(())
    }
}

/// "it fits discord, instagram (see --guess)" or "no known layout gives it a plausible time".
fn fits_sentence(id: u64, now_ms: i64) -> String {
    let fits: Vec<&str> = Preset::ALL
        .into_iter()
        .map(NamedLayout::preset)
        .filter(|l| {
            l.decode(id)
                .is_ok_and(|d| implausible(&d, Some(id), now_ms).is_none())
        })
        .map(|l| l.name)
        .collect();
    if fits.is_empty() {
        "no known layout gives it a plausible time; give its layout with --epoch/--layout".into()
    } else {
        format!(
            "is --preset right? It gives a past time as {} (--guess ranks them)",
            fits.join(", ")
        )
    }
}

/// Formats Unix ms as RFC 3339 UTC with milliseconds, for messages.
pub fn rfc3339(unix_ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(unix_ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("{unix_ms} ms"),
    }
}

/// Reads a 64-bit ID as typed: decimal or `0x` hex, at most 2^63-1, without surrounding
/// whitespace. Plain decimals take a fast path.
#[inline]
pub fn parse_number(s: &[u8]) -> Result<u64, IdFormatError> {
    if !s.is_empty() && s.len() <= 19 && s.iter().all(u8::is_ascii_digit) {
        let v = s
            .iter()
            .fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
        return if v > i64::MAX as u64 {
            Err(IdFormatError::Over63Bits)
        } else {
            Ok(v)
        };
    }
    if s.is_empty() {
        return Err(IdFormatError::Empty);
    }
    if s[0] == b'-' {
        return Err(IdFormatError::Negative);
    }
    let value = if s.len() > 2 && (s.starts_with(b"0x") || s.starts_with(b"0X")) {
        let hex = &s[2..];
        if hex.len() > 32 || !hex.iter().all(|b| b.is_ascii_hexdigit()) {
            return Err(IdFormatError::BadHex);
        }
        hex.iter().fold(0u128, |a, &b| {
            (a << 4) | u128::from(text::hex_value(b).unwrap_or(0))
        })
    } else if s.iter().all(u8::is_ascii_digit) {
        // More than 19 digits: over 2^63-1 whatever they are.
        return Err(IdFormatError::Over63Bits);
    } else {
        return Err(IdFormatError::NotAnId(SHAPES.to_string()));
    };
    if value > i64::MAX as u128 {
        return Err(IdFormatError::Over63Bits);
    }
    Ok(value as u64)
}

/// True when `s` is typed as a number (digits, or `0x` and hex digits, or a leading `-`), so it
/// is read as a snowflake rather than a text ID.
pub fn looks_numeric(s: &[u8]) -> bool {
    let s = s.strip_prefix(b"-").unwrap_or(s);
    (!s.is_empty() && s.iter().all(u8::is_ascii_digit))
        || s.starts_with(b"0x")
        || s.starts_with(b"0X")
}

/// How [`decode_value`] read a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// In its own format, or under the layout given.
    AsGiven,
    /// The layout was only a default and gave an implausible time, so the most plausible other
    /// layout was used.
    Guessed {
        /// The default layout's name.
        instead_of: &'static str,
        /// Why its reading cannot be right ("in the future", ...).
        why: String,
        /// How many layouts were plausible.
        plausible: usize,
    },
    /// The layout was only a default and was used, but [`guess`] ranks another layout's
    /// reading first (a Mastodon ID read as a Leaf ID from 2011): worth a note.
    Doubted {
        /// The layout ranked first.
        likelier: &'static str,
        /// Its reading's time, Unix ms.
        unix_ms: i64,
    },
}

/// One value as [`decode_value`] read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    /// What it says.
    pub decoded: Decoded,
    /// The number, when it was typed as one (decimal or `0x` hex).
    pub number: Option<u64>,
    /// Whether the layout given was used.
    pub reading: Reading,
}

/// Reads one value as typed: a number under `opts.configured`, anything else by its shape, and
/// checks that the time is plausible (see [`Decoded::check_time`]). When the layout is only a
/// default (`opts.configured_explicitly` false), the rule [`guess`] ranks by decides: a number
/// implausible under the default (see [`implausible`]) is read under the most plausible other
/// layout instead, or is an error when none is plausible (as `--guess` says); one whose reading
/// lies outside the recent window is kept, but marked [`Reading::Doubted`] when `guess` ranks
/// another layout first.
pub fn decode_value(raw: &[u8], opts: &GuessOptions) -> Result<Value, IdFormatError> {
    let s = raw.trim_ascii();
    // The usual case, a plain decimal ID, in one pass.
    if !s.is_empty() && s.len() <= 19 {
        let mut id = 0u64;
        let mut digits = true;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                digits = false;
                break;
            }
            id = id * 10 + u64::from(d);
        }
        if digits && id <= i64::MAX as u64 {
            let d = opts.configured.decode(id)?;
            let fast = if opts.configured_explicitly {
                d.unix_ms <= opts.now_ms.saturating_add(FUTURE_SLACK_MS)
            } else {
                implausible(&d, Some(id), opts.now_ms).is_none() && !doubtful(&d, id, opts.now_ms)
            };
            if fast {
                return Ok(as_given(d, Some(id)));
            }
        }
    }
    if s.is_empty() {
        return Err(IdFormatError::Empty);
    }
    if !looks_numeric(s) {
        let d = decode_text(s)?;
        d.check_time(None, opts.now_ms)?;
        return Ok(as_given(d, None));
    }
    let id = parse_number(s)?;
    let d = opts.configured.decode(id)?;
    if opts.configured_explicitly {
        d.check_time(Some(id), opts.now_ms)?;
        return Ok(as_given(d, Some(id)));
    }
    if implausible(&d, Some(id), opts.now_ms).is_none() && !doubtful(&d, id, opts.now_ms) {
        return Ok(as_given(d, Some(id)));
    }
    let ranked = guess(s, opts)?;
    let Some(best) = ranked.iter().find(|c| c.plausible) else {
        // No layout fits; the error says why the default does not.
        d.check_time(Some(id), opts.now_ms)?;
        return Err(IdFormatError::Implausible {
            layout: opts.configured.name,
            time: rfc3339(d.unix_ms),
            why: implausible(&d, Some(id), opts.now_ms).unwrap_or_default(),
            fits: fits_sentence(id, opts.now_ms),
        });
    };
    if let Some(why) = implausible(&d, Some(id), opts.now_ms) {
        return Ok(Value {
            decoded: best.decoded,
            number: Some(id),
            reading: Reading::Guessed {
                instead_of: opts.configured.name,
                why,
                plausible: ranked.iter().filter(|c| c.plausible).count(),
            },
        });
    }
    let reading = match best.decoded.format {
        Format::Snowflake(l) if l.layout != opts.configured.layout => Reading::Doubted {
            likelier: l.name,
            unix_ms: best.decoded.unix_ms,
        },
        _ => Reading::AsGiven,
    };
    Ok(Value {
        decoded: d,
        number: Some(id),
        reading,
    })
}

/// Whether a plausible reading of `id` under the default layout is clearly not one of its IDs,
/// so [`guess`] is asked which layout is likelier: an old time with a sequence Leaf's generator
/// hardly reaches (it starts each ms below 100), while the number reads as a Mastodon ID of its
/// time. Cheap, so a stream of IDs is not ranked one by one.
fn doubtful(d: &Decoded, id: u64, now_ms: i64) -> bool {
    d.sequence.is_some_and(|s| s >= guess::BUSY_FROM)
        && now_ms - d.unix_ms > RECENT_MS
        && NamedLayout::preset(Preset::Mastodon)
            .decode(id)
            .is_ok_and(|m| implausible(&m, Some(id), now_ms).is_none())
}

fn as_given(decoded: Decoded, number: Option<u64>) -> Value {
    Value {
        decoded,
        number,
        reading: Reading::AsGiven,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_in_decimal_and_hex() {
        assert_eq!(parse_number(b"42"), Ok(42));
        assert_eq!(parse_number(b"0x2a"), Ok(42));
        assert_eq!(parse_number(b"9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(
            parse_number(b"9223372036854775808"),
            Err(IdFormatError::Over63Bits)
        );
        assert_eq!(parse_number(b"-1"), Err(IdFormatError::Negative));
        assert!(
            parse_number(b"12a")
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert_eq!(parse_number(b"0xzz"), Err(IdFormatError::BadHex));
        assert_eq!(
            parse_number(b"99999999999999999999999999999999999999999"),
            Err(IdFormatError::Over63Bits)
        );
    }

    #[test]
    fn a_default_layout_gives_way_to_a_plausible_one() {
        let now = 1_800_000_000_000; // 2027-01-15
        let instagram = NamedLayout::preset(Preset::Instagram);
        let id = instagram
            .layout
            .encode(instagram.layout.ticks_at(now - 1000).unwrap(), 1, 2)
            .unwrap();
        let leaf = NamedLayout::preset(Preset::Leaf);
        let mut opts = GuessOptions {
            now_ms: now,
            configured: leaf,
            configured_explicitly: false,
            local: Vec::new(),
        };
        let v = decode_value(id.to_string().as_bytes(), &opts).unwrap();
        let (d, how) = (v.decoded, v.reading);
        // Leaf reads an Instagram ID of now (its time shifted one bit less) as about 2042.
        assert!(
            matches!(
                how,
                Reading::Guessed {
                    instead_of: "leaf",
                    ..
                }
            ),
            "{how:?}"
        );
        assert_eq!(d.format.name(), "instagram");
        assert_eq!(d.unix_ms, now - 1000);
        opts.configured_explicitly = true;
        let e = decode_value(id.to_string().as_bytes(), &opts).unwrap_err();
        assert!(
            matches!(e, IdFormatError::Future { layout: "leaf", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("instagram"), "{e}");
    }
}

/// Parser fuzzing: arbitrary bytes never panic any reader, and what parses formats back to
/// itself. `PROPTEST_CASES=100000 cargo test --release --lib idformat::fuzz` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_any_bytes_read_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..64), s in "[0-9A-Za-z{}:\\-]{0,40}") {
            for input in [&bytes[..], s.as_bytes()] {
                let _ = decode_text(input);
                let _ = parse_number(input);
                let _ = parse_uuid(input);
                let _ = parse_ulid(input);
                let _ = parse_ksuid(input);
                let _ = parse_objectid(input);
                let opts = GuessOptions {
                    now_ms: 1_800_000_000_000,
                    configured: NamedLayout::preset(Preset::Leaf),
                    configured_explicitly: false,
                    local: Vec::new(),
                };
                let _ = decode_value(input, &opts);
                let _ = guess(input, &opts);
            }
        }

        #[test]
        fn fuzz_text_ids_round_trip(v in any::<u128>(), raw in proptest::array::uniform20(any::<u8>())) {
            prop_assert_eq!(parse_uuid(format_uuid(v).as_bytes()), Ok(v));
            let ulid = v >> 2; // at most 7ZZZ...
            prop_assert_eq!(parse_ulid(format_ulid(ulid).as_bytes()), Ok(ulid));
            prop_assert_eq!(decode_ulid(ulid).unix_ms, (ulid >> 80) as i64);
            prop_assert_eq!(parse_ksuid(format_ksuid(&raw).as_bytes()), Ok(raw));
            if let Ok(d) = decode_uuid(v) {
                prop_assert!(matches!(d.format, Format::Uuid(1 | 6 | 7)));
            }
        }
    }
}
