//! The 128-bit and text formats: UUID (RFC 9562), ULID, KSUID and MongoDB's ObjectId, read from
//! their usual text forms and written back for range bounds.

use super::{Decoded, Format, IdFormatError, Random};

/// 100-ns intervals between the Gregorian epoch of UUID versions 1 and 6 (1582-10-15) and the
/// Unix epoch (RFC 9562, section 5.1).
pub(crate) const GREGORIAN_TO_UNIX_100NS: i64 = 0x01B2_1DD2_1381_4000;
/// KSUID's epoch in Unix seconds (2014-05-13T16:53:20Z), from segmentio/ksuid.
pub const KSUID_EPOCH_S: i64 = 1_400_000_000;
/// Crockford's base32 alphabet, as ULID uses it.
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// The base62 alphabet of KSUID, in ASCII order so text sorts like the bytes.
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The value of a hex digit, or `None`.
#[inline]
pub(crate) fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The value of a Crockford base32 digit (either case), or `None`.
#[inline]
pub(crate) fn crockford_value(b: u8) -> Option<u8> {
    let up = b.to_ascii_uppercase();
    CROCKFORD.iter().position(|&c| c == up).map(|p| p as u8)
}

#[inline]
fn base62_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'Z' => Some(b - b'A' + 10),
        b'a'..=b'z' => Some(b - b'a' + 36),
        _ => None,
    }
}

fn bad_char(format: &'static str, alphabet: &'static str, s: &[u8], pos: usize) -> IdFormatError {
    IdFormatError::BadChar {
        format,
        ch: char::from(s[pos]),
        pos: pos + 1,
        alphabet,
    }
}

/// Reads a UUID from its 36-character form (`8-4-4-4-12` hex digits) or 32 bare hex digits.
pub fn parse_uuid(s: &[u8]) -> Result<u128, IdFormatError> {
    let mut v: u128 = 0;
    match s.len() {
        36 => {
            for (i, &b) in s.iter().enumerate() {
                if matches!(i, 8 | 13 | 18 | 23) {
                    if b != b'-' {
                        return Err(IdFormatError::NotAnId(format!(
                            "a 36-character UUID has '-' at positions 9, 14, 19 and 24, not {:?}",
                            char::from(b)
                        )));
                    }
                    continue;
                }
                let d = hex_value(b).ok_or_else(|| bad_char("a UUID", "0-9, a-f", s, i))?;
                v = (v << 4) | u128::from(d);
            }
        }
        32 => {
            for (i, &b) in s.iter().enumerate() {
                let d = hex_value(b).ok_or_else(|| bad_char("a UUID", "0-9, a-f", s, i))?;
                v = (v << 4) | u128::from(d);
            }
        }
        n => {
            return Err(IdFormatError::NotAnId(format!(
                "{n} characters; a UUID has 36 (with hyphens) or 32 hex digits"
            )));
        }
    }
    Ok(v)
}

/// What a UUID says: versions 1 and 6 a 60-bit time in 100 ns since 1582-10-15, a 14-bit clock
/// sequence and a 48-bit node; version 7 a 48-bit Unix time in ms and 74 random (or counter) bits.
/// Other versions hold no time, and other variants than RFC 9562's are not defined here.
pub fn decode_uuid(v: u128) -> Result<Decoded, IdFormatError> {
    let b = v.to_be_bytes();
    check_rfc_uuid(v)?;
    let version = b[6] >> 4;
    let u = |r: std::ops::Range<usize>| b[r].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    let clock_seq = (u64::from(b[8] & 0x3f) << 8) | u64::from(b[9]);
    let node = u(10..16);
    let gregorian = |ticks: u64| {
        let unix_100ns = ticks as i64 - GREGORIAN_TO_UNIX_100NS;
        unix_100ns.div_euclid(10_000)
    };
    let with_node = |version, ticks| Decoded {
        format: Format::Uuid(version),
        unix_ms: gregorian(ticks),
        worker: Some(node),
        sequence: Some(clock_seq),
        random: None,
    };
    match version {
        1 => Ok(with_node(
            1,
            ((u(6..8) & 0x0fff) << 48) | (u(4..6) << 32) | u(0..4),
        )),
        6 => Ok(with_node(
            6,
            (u(0..4) << 28) | (u(4..6) << 12) | (u(6..8) & 0x0fff),
        )),
        7 => {
            let rand_a = u128::from(u(6..8) & 0x0fff);
            let rand_b = v & ((1u128 << 62) - 1);
            Ok(Decoded {
                format: Format::Uuid(7),
                unix_ms: u(0..6) as i64,
                worker: None,
                sequence: None,
                random: Some(Random {
                    value: (rand_a << 62) | rand_b,
                    bits: 74,
                }),
            })
        }
        _ => Err(IdFormatError::UuidWithoutTime {
            version,
            what: without_time(version),
        }),
    }
}

/// Refuses the nil and max UUIDs (no time) and the variants RFC 9562 does not define.
fn check_rfc_uuid(v: u128) -> Result<(), IdFormatError> {
    if v == 0 {
        return Err(IdFormatError::UuidWithoutTime {
            version: 0,
            what: "the nil UUID",
        });
    }
    if v == u128::MAX {
        return Err(IdFormatError::UuidWithoutTime {
            version: 15,
            what: "the max UUID",
        });
    }
    let variant = v.to_be_bytes()[8] >> 4;
    if variant & 0b1100 != 0b1000 {
        return Err(IdFormatError::UuidVariant {
            variant: match variant {
                0..=7 => "NCS (0xxx)",
                12 | 13 => "Microsoft (110x)",
                _ => "reserved (111x)",
            },
        });
    }
    Ok(())
}

/// What a UUID of `version` (none of 1, 6 and 7) is, for the error saying it holds no time.
fn without_time(version: u8) -> &'static str {
    match version {
        2 => "a DCE Security UUID, whose time has its low 32 bits replaced by a local id",
        3 | 5 => "a name-based (hash) UUID",
        4 => "a random UUID",
        8 => "a vendor-specific UUID, whose layout RFC 9562 leaves open",
        _ => "a UUID of an unassigned version",
    }
}

/// Formats a UUID in its 36-character lowercase form.
pub fn format_uuid(v: u128) -> String {
    let h = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// An error unless `s` has `len` bytes; `what` says what the format has ("a ULID has 26").
fn expect_len(s: &[u8], len: usize, what: &str) -> Result<(), IdFormatError> {
    if s.len() == len {
        Ok(())
    } else {
        Err(IdFormatError::NotAnId(format!(
            "{} characters; {what}",
            s.len()
        )))
    }
}

/// Reads a ULID: 26 Crockford base32 characters (either case), at most
/// `7ZZZZZZZZZZZZZZZZZZZZZZZZZ` (the spec rejects larger ones as overflowing 128 bits).
pub fn parse_ulid(s: &[u8]) -> Result<u128, IdFormatError> {
    expect_len(s, 26, "a ULID has 26")?;
    let mut v: u128 = 0;
    for (i, &b) in s.iter().enumerate() {
        let d = crockford_value(b).ok_or_else(|| {
            bad_char(
                "a ULID",
                "Crockford's base32: 0-9 and A-Z without I, L, O, U",
                s,
                i,
            )
        })?;
        if i == 0 && d > 7 {
            return Err(IdFormatError::UlidOverflow);
        }
        v = (v << 5) | u128::from(d);
    }
    Ok(v)
}

/// What a ULID says: 48 bits of Unix ms, then 80 random bits.
pub fn decode_ulid(v: u128) -> Decoded {
    Decoded {
        format: Format::Ulid,
        unix_ms: (v >> 80) as i64,
        worker: None,
        sequence: None,
        random: Some(Random {
            value: v & ((1u128 << 80) - 1),
            bits: 80,
        }),
    }
}

/// Formats a ULID in its canonical uppercase form.
pub fn format_ulid(v: u128) -> String {
    (0..26)
        .map(|i| char::from(CROCKFORD[((v >> (125 - 5 * i)) & 31) as usize]))
        .collect()
}

/// Reads a KSUID: 27 base62 characters standing for 20 bytes, at most
/// `aWgEPTl1tmebfsQzFP4bxwgy80V` (2^160 - 1).
pub fn parse_ksuid(s: &[u8]) -> Result<[u8; 20], IdFormatError> {
    expect_len(s, 27, "a KSUID has 27")?;
    // A 192-bit accumulator in 32-bit limbs, most significant first.
    let mut limbs = [0u64; 6];
    for (i, &b) in s.iter().enumerate() {
        let d =
            base62_value(b).ok_or_else(|| bad_char("a KSUID", "base62: 0-9, A-Z, a-z", s, i))?;
        let mut carry = u64::from(d);
        for limb in limbs.iter_mut().rev() {
            let x = *limb * 62 + carry;
            *limb = x & 0xffff_ffff;
            carry = x >> 32;
        }
    }
    if limbs[0] != 0 {
        return Err(IdFormatError::KsuidOverflow);
    }
    let mut out = [0u8; 20];
    for (i, limb) in limbs[1..].iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&(*limb as u32).to_be_bytes());
    }
    Ok(out)
}

/// What a KSUID says: 32 bits of seconds since 2014-05-13T16:53:20Z, then a 128-bit payload.
pub fn decode_ksuid(raw: &[u8; 20]) -> Decoded {
    let secs = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
    let mut payload = [0u8; 16];
    payload.copy_from_slice(&raw[4..]);
    Decoded {
        format: Format::Ksuid,
        unix_ms: (KSUID_EPOCH_S + i64::from(secs)) * 1000,
        worker: None,
        sequence: None,
        random: Some(Random {
            value: u128::from_be_bytes(payload),
            bits: 128,
        }),
    }
}

/// Formats 20 bytes as a KSUID's 27 base62 characters.
pub fn format_ksuid(raw: &[u8; 20]) -> String {
    let mut limbs: Vec<u64> = raw
        .chunks(4)
        .map(|c| u64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let mut digits = [b'0'; 27];
    for d in digits.iter_mut().rev() {
        let mut rem = 0u64;
        for limb in limbs.iter_mut() {
            let x = (rem << 32) | *limb;
            *limb = x / 62;
            rem = x % 62;
        }
        *d = BASE62[rem as usize];
    }
    String::from_utf8_lossy(&digits).into_owned()
}

/// Reads a MongoDB ObjectId: 24 hex digits standing for 12 bytes.
pub fn parse_objectid(s: &[u8]) -> Result<[u8; 12], IdFormatError> {
    expect_len(s, 24, "an ObjectId has 24 hex digits")?;
    let mut out = [0u8; 12];
    for (i, pair) in s.chunks(2).enumerate() {
        let hi = hex_value(pair[0]).ok_or_else(|| bad_char("an ObjectId", "0-9, a-f", s, 2 * i))?;
        let lo =
            hex_value(pair[1]).ok_or_else(|| bad_char("an ObjectId", "0-9, a-f", s, 2 * i + 1))?;
        out[i] = (hi << 4) | lo;
    }
    Ok(out)
}

/// What an ObjectId says: 4 bytes of Unix seconds, a 5-byte value random per process (the
/// "process" field here), and a 3-byte counter.
pub fn decode_objectid(raw: &[u8; 12]) -> Decoded {
    let u = |r: std::ops::Range<usize>| raw[r].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    Decoded {
        format: Format::ObjectId,
        unix_ms: u(0..4) as i64 * 1000,
        worker: Some(u(4..9)),
        sequence: Some(u(9..12)),
        random: None,
    }
}

/// Decodes an ID in any of the text forms, recognised by shape: a UUID (36 characters with
/// hyphens, 32 hex digits, `urn:uuid:` or `{...}` around it), an ObjectId (24 hex digits, also as
/// `ObjectId("...")`), a ULID (26 characters) or a KSUID (27 characters).
pub fn decode_text(s: &[u8]) -> Result<Decoded, IdFormatError> {
    let s = s.trim_ascii();
    let unwrapped = strip_wrapper(s);
    let all_hex = unwrapped.iter().all(|b| hex_value(*b).is_some());
    match unwrapped.len() {
        36 => decode_uuid(parse_uuid(unwrapped)?),
        32 if all_hex => decode_uuid(parse_uuid(unwrapped)?),
        24 if all_hex => Ok(decode_objectid(&parse_objectid(unwrapped)?)),
        24 => Err(IdFormatError::NotAnId(
            "24 characters but not all hex digits, so not an ObjectId".into(),
        )),
        26 => Ok(decode_ulid(parse_ulid(unwrapped)?)),
        27 => Ok(decode_ksuid(&parse_ksuid(unwrapped)?)),
        n => Err(IdFormatError::NotAnId(format!(
            "{n} characters; {}",
            super::SHAPES
        ))),
    }
}

/// The ID inside `urn:uuid:...`, `{...}` or `ObjectId("...")`, or `s` itself.
fn strip_wrapper(s: &[u8]) -> &[u8] {
    let lower_starts =
        |s: &[u8], p: &[u8]| s.len() >= p.len() && s[..p.len()].eq_ignore_ascii_case(p);
    if lower_starts(s, b"urn:uuid:") {
        return &s[9..];
    }
    if s.len() >= 2 && s[0] == b'{' && s[s.len() - 1] == b'}' {
        return &s[1..s.len() - 1];
    }
    if lower_starts(s, b"objectid(") && s.ends_with(b")") {
        let inner = &s[9..s.len() - 1];
        if inner.len() >= 2
            && matches!(inner[0], b'"' | b'\'')
            && inner[inner.len() - 1] == inner[0]
        {
            return &inner[1..inner.len() - 1];
        }
        return inner;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rfc3339(ms: i64) -> String {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    /// RFC 9562, Appendix A: the same instant, "Tuesday, February 22, 2022 2:22:22.00 PM
    /// GMT-05:00", as versions 1 (A.1), 6 (A.5) and 7 (A.6).
    #[test]
    fn rfc9562_appendix_a_vectors() {
        let v1 = decode_text(b"C232AB00-9414-11EC-B3C8-9F6BDECED846").unwrap();
        assert_eq!(v1.format, Format::Uuid(1));
        assert_eq!(rfc3339(v1.unix_ms), "2022-02-22T19:22:22.000Z");
        assert_eq!(v1.sequence, Some(0x33C8), "clock_seq");
        assert_eq!(v1.worker, Some(0x9F6B_DECE_D846), "node");

        let v6 = decode_text(b"1EC9414C-232A-6B00-B3C8-9F6BDECED846").unwrap();
        assert_eq!(v6.format, Format::Uuid(6));
        assert_eq!(v6.unix_ms, v1.unix_ms);
        assert_eq!((v6.sequence, v6.worker), (v1.sequence, v1.worker));

        let v7 = decode_text(b"017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap();
        assert_eq!(v7.format, Format::Uuid(7));
        assert_eq!(v7.unix_ms, 0x017F_22E2_79B0);
        assert_eq!(v7.unix_ms, 1_645_557_742_000);
        // rand_a 0xCC3, rand_b 0x18C4DC0C0C07398F (the variant bits taken off).
        assert_eq!(
            v7.random,
            Some(Random {
                value: (0xCC3u128 << 62) | 0x18C4_DC0C_0C07_398F,
                bits: 74
            })
        );
        // The same v7 in lowercase, without hyphens, as a URN and in braces.
        for form in [
            "017f22e279b07cc398c4dc0c0c07398f",
            "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
        ] {
            assert_eq!(decode_text(form.as_bytes()).unwrap(), v7, "{form}");
        }
        assert_eq!(
            format_uuid(parse_uuid(b"017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap()),
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
        );
    }

    /// RFC 9562 A.2 (v3), A.3 (v4), A.4 (v5) and B.1 (v8) hold no time.
    #[test]
    fn uuids_without_time_say_so() {
        for (uuid, version) in [
            ("5df41881-3aed-3515-88a7-2f4a814cf09e", 3),
            ("919108f7-52d1-4320-9bac-f847db4148a8", 4),
            ("2ed6657d-e927-568b-95e1-2665a8aea6a2", 5),
            ("2489e9ad-2ee2-8e00-8ec9-32d5f69181c0", 8),
        ] {
            match decode_text(uuid.as_bytes()) {
                Err(IdFormatError::UuidWithoutTime { version: v, .. }) => assert_eq!(v, version),
                other => panic!("{uuid}: {other:?}"),
            }
        }
        let e = decode_text(b"919108f7-52d1-4320-9bac-f847db4148a8").unwrap_err();
        assert!(e.to_string().contains("versions 1, 6 and 7"), "{e}");
        assert!(matches!(
            decode_text(b"00000000-0000-0000-0000-000000000000"),
            Err(IdFormatError::UuidWithoutTime { .. })
        ));
        // A Microsoft-variant GUID (variant bits 110).
        assert!(matches!(
            decode_text(b"017f22e2-79b0-7cc3-c8c4-dc0c0c07398f"),
            Err(IdFormatError::UuidVariant { .. })
        ));
    }

    /// The ULID spec's README (ulid/spec) and ulid/javascript: `ulid(1469918176385)` starts with
    /// `01ARYZ6S41`; monotonic ULIDs of one millisecond count the random part up by one
    /// (`01BX5ZZKBKACTAV9WEVGEMMVRZ` then `...VS0`); the largest is `7ZZZZZZZZZZZZZZZZZZZZZZZZZ`,
    /// time 2^48 - 1, and anything larger must be rejected.
    #[test]
    fn ulid_spec_vectors() {
        let u = decode_text(b"01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap();
        assert_eq!((u.format, u.unix_ms), (Format::Ulid, 1_469_918_176_385));
        let a = decode_text(b"01BX5ZZKBKACTAV9WEVGEMMVRZ").unwrap();
        let b = decode_text(b"01bx5zzkbkactav9wevgemmvs0").unwrap();
        assert_eq!(a.unix_ms, b.unix_ms);
        assert_eq!(
            a.random.unwrap().value + 1,
            b.random.unwrap().value,
            "monotonic increment"
        );
        let max = decode_text(b"7ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap();
        assert_eq!(max.unix_ms, 281_474_976_710_655);
        assert_eq!(
            decode_text(b"8ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
            Err(IdFormatError::UlidOverflow)
        );
        assert!(matches!(
            decode_text(b"01ARYZ6S41TSV4RRFFQ69G5FAU"),
            Err(IdFormatError::BadChar {
                ch: 'U',
                pos: 26,
                ..
            })
        ));
        let v = parse_ulid(b"01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap();
        assert_eq!(format_ulid(v), "01ARYZ6S41TSV4RRFFQ69G5FAV");
    }

    /// segmentio/ksuid's README, "Inspect the components of a KSUID" and "Generate a KSUID and
    /// inspect its components": the text, raw bytes, timestamp and payload of two KSUIDs; and
    /// the largest KSUID.
    #[test]
    fn ksuid_readme_vectors() {
        let k = decode_text(b"0ujtsYcgvSTl8PAuAdqWYSMnLOv").unwrap();
        assert_eq!(k.format, Format::Ksuid);
        // Timestamp 107608047 = 2017-10-09 21:00:47 -0700 PDT.
        assert_eq!(k.unix_ms, (1_400_000_000 + 107_608_047) * 1000);
        assert_eq!(rfc3339(k.unix_ms), "2017-10-10T04:00:47.000Z");
        assert_eq!(
            k.random.unwrap().value,
            0xB5A1_CD34_B5F9_9D11_54FB_6853_345C_9735
        );
        let raw = parse_ksuid(b"0ujtsYcgvSTl8PAuAdqWYSMnLOv").unwrap();
        assert_eq!(
            raw.iter().map(|b| format!("{b:02X}")).collect::<String>(),
            "0669F7EFB5A1CD34B5F99D1154FB6853345C9735"
        );
        assert_eq!(format_ksuid(&raw), "0ujtsYcgvSTl8PAuAdqWYSMnLOv");
        let k2 = decode_text(b"0ujzPyRiIAffKhBux4PvQdDqMHY").unwrap();
        assert_eq!(k2.unix_ms, (1_400_000_000 + 107_610_780) * 1000);
        assert_eq!(
            k2.random.unwrap().value,
            0x73FC_1AA3_B244_6246_D6E8_9FCD_909E_8FE8
        );
        assert_eq!(format_ksuid(&[0xff; 20]), "aWgEPTl1tmebfsQzFP4bxwgy80V");
        assert_eq!(
            parse_ksuid(b"aWgEPTl1tmebfsQzFP4bxwgy80V").unwrap(),
            [0xff; 20]
        );
        assert_eq!(
            parse_ksuid(b"aWgEPTl1tmebfsQzFP4bxwgy80W"),
            Err(IdFormatError::KsuidOverflow)
        );
    }

    /// MongoDB's manual, ObjectId: `ObjectId("507f191e810c19729de860ea").getTimestamp()` returns
    /// `ISODate("2012-10-17T20:46:22Z")`.
    #[test]
    fn objectid_manual_vector() {
        let o = decode_text(b"507f191e810c19729de860ea").unwrap();
        assert_eq!(o.format, Format::ObjectId);
        assert_eq!(rfc3339(o.unix_ms), "2012-10-17T20:46:22.000Z");
        assert_eq!(
            o.worker,
            Some(0x81_0c19_729d),
            "the per-process random value"
        );
        assert_eq!(o.sequence, Some(0xe8_60ea), "the counter");
        assert_eq!(
            decode_text(b"ObjectId(\"507f191e810c19729de860ea\")").unwrap(),
            o
        );
    }

    #[test]
    fn other_shapes_are_named() {
        let e = decode_text(b"abc").unwrap_err().to_string();
        assert!(e.contains("3 characters") && e.contains("ULID"), "{e}");
        let e = decode_text(b"zz7f191e810c19729de860ea")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ObjectId"), "{e}");
    }
}
