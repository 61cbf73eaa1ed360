//! Opaque IDs (issue 48 item 2): segment mode issues dense IDs 1, 2, 3, ...; an opaque tag issues
//! them through a keyed permutation of a fixed range, so that an ID says nothing about how many
//! were issued before it, yet stays a number of the same shape and decodes back to its dense ID
//! with the key.
//!
//! The permutation is FF1 (NIST SP 800-38G, the standard format-preserving cipher) over AES-256,
//! from the `fpe` crate; nothing here is a cipher of its own. What is here: the numeral strings FF1
//! works on, held as one `u64` (so an encryption allocates nothing and converts no big integers;
//! the NIST samples and the crate's own numeral strings check them in the tests), and
//! cycle-walking, the standard way to narrow a permutation of [0, 10^N) or [0, 2^63) to a
//! subrange: encrypt again while the result lies outside it. Each value of the subrange comes back
//! into it after a few steps (1.11 on average for N digits, almost never a second one for 63 bits),
//! and decryption walks the same cycle backwards.
//!
//! The tweak is the tag's name, so two tags under one key permute differently; the key lives in a
//! file of 64 hex digits, and its check value ([`IdKey::check_value`]) is stored beside the tag so
//! that a wrong key is refused before it issues anything.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aes::Aes256Enc;
use aes::cipher::consts::{U16, U32};
use aes::cipher::{
    Array, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser,
};
use fpe::ff1::{FF1, NumeralString, Operations};

/// The fewest decimal digits an opaque width may have. FF1 needs a domain of at least 10^6 values
/// (SP 800-38G Rev. 1), which 6 digits only just meet; the narrowest width issued is a digit more.
pub const MIN_DIGITS: u8 = 7;

/// The most decimal digits an opaque width may have: 18 digits are the widest decimal field below
/// 2^63 (a 19-digit number may pass it).
pub const MAX_DIGITS: u8 = 18;

/// FF1's own minimum for radix 10 (a domain of 10^6); only the tests go below [`MIN_DIGITS`], to
/// permute a whole domain.
#[cfg(test)]
const FF1_MIN_DIGITS: u8 = 6;

/// The range an opaque tag's IDs fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpaqueWidth {
    /// Exactly N decimal digits, 7 <= N <= 18: a permutation of [10^(N-1), 10^N) by cycle-walking
    /// FF1 over N digits (radix 10), so every ID has N digits. Capacity 9*10^(N-1) dense IDs.
    Digits(u8),
    /// A zero-padded field of N digits, 7 <= N <= 18 (the sequence part of a periodic ID): a
    /// permutation of [0, 10^N) (FF1 radix 10, N digits, no walking). Capacity 10^N - 1 dense IDs:
    /// dense ID d is encrypted as the numeral string of d itself, so index 0 is never used (as the
    /// plain field's sequence starts at 1, the capacity is the same with and without the key) and
    /// the one value FF1 maps 0 to is never issued. Outputs are 0 to 10^N - 1, any of them.
    Padded(u8),
    /// The positive 63-bit range [1, 2^63): FF1 radix 2 over 63 bits, with cycle-walking so that 0
    /// is never an output. Capacity 2^63 - 1 dense IDs.
    Bits63,
}

impl OpaqueWidth {
    /// Reads a width as configured: `7` to `18` are that many decimal digits, `63` the positive
    /// 63-bit range.
    pub fn parse(text: &str) -> Result<OpaqueWidth, OpaqueError> {
        let bad = || OpaqueError::BadWidth {
            given: text.to_string(),
        };
        let n: u8 = text.trim().parse().map_err(|_| bad())?;
        match n {
            MIN_DIGITS..=MAX_DIGITS => Ok(OpaqueWidth::Digits(n)),
            63 => Ok(OpaqueWidth::Bits63),
            _ => Err(bad()),
        }
    }

    /// How many dense IDs (1 to this) the width holds, so a tag knows when it is exhausted. Plain
    /// arithmetic for 1 to 18 digits (0 beyond); [`Permutation`] refuses the widths `parse` would.
    pub fn capacity(self) -> u64 {
        match self {
            OpaqueWidth::Digits(n) => digit_power(n).map_or(0, |p| p - p / 10),
            OpaqueWidth::Padded(n) => digit_power(n).map_or(0, |p| p - 1),
            OpaqueWidth::Bits63 => (1 << 63) - 1,
        }
    }

    /// Whether `id` lies in the width's range, so a value of another shape is refused before it
    /// is decrypted.
    pub fn contains(self, id: u64) -> bool {
        match self {
            OpaqueWidth::Digits(n) => digit_power(n).is_some_and(|p| (p / 10..p).contains(&id)),
            OpaqueWidth::Padded(n) => digit_power(n).is_some_and(|p| id < p),
            OpaqueWidth::Bits63 => (1..1 << 63).contains(&id),
        }
    }

    /// The range as words, for messages.
    fn range_text(self) -> String {
        match self {
            OpaqueWidth::Digits(n) => match digit_power(n) {
                Some(p) => format!("the numbers of {n} digits, {} to {}", p / 10, p - 1),
                None => format!("numbers of {n} digits, which this width cannot hold"),
            },
            OpaqueWidth::Padded(n) => match digit_power(n) {
                Some(p) => format!("0 to {}", p - 1),
                None => format!("numbers of {n} digits, which this width cannot hold"),
            },
            OpaqueWidth::Bits63 => format!("1 to {}", i64::MAX),
        }
    }

    /// FF1's radix and numeral count for the width.
    fn numerals(self) -> (u32, u32) {
        match self {
            OpaqueWidth::Digits(n) | OpaqueWidth::Padded(n) => (10, u32::from(n)),
            OpaqueWidth::Bits63 => (2, 63),
        }
    }

    /// The decimal digits, for the widths that have them.
    fn digits(self) -> Option<u8> {
        match self {
            OpaqueWidth::Digits(n) | OpaqueWidth::Padded(n) => Some(n),
            OpaqueWidth::Bits63 => None,
        }
    }
}

/// 10^n for 1 <= n <= 18, the widths a `u64` numeral string holds with room to spare.
fn digit_power(n: u8) -> Option<u64> {
    (1..=MAX_DIGITS)
        .contains(&n)
        .then(|| 10u64.pow(u32::from(n)))
}

impl fmt::Display for OpaqueWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpaqueWidth::Digits(n) => write!(f, "{n} digits"),
            OpaqueWidth::Padded(n) => write!(f, "{n}-digit field"),
            OpaqueWidth::Bits63 => f.write_str("63 bits"),
        }
    }
}

/// Why an opaque ID, its width or its key could not be had. Each message names what was wrong
/// and what to do.
#[derive(Debug, thiserror::Error)]
pub enum OpaqueError {
    /// A width that is not 7 to 18 digits or 63 bits.
    #[error(
        "{given:?} is not an opaque width: give 7 to 18 (IDs of exactly that many decimal digits) or 63 (the positive 63-bit range)"
    )]
    BadWidth {
        /// The width as given.
        given: String,
    },
    /// The key file could not be read.
    #[error(
        "cannot read the ID key file {}: {source}; it must hold the 256-bit key as 64 hex digits (`openssl rand -hex 32` makes one)",
        .path.display()
    )]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The key text is not 64 hex digits.
    #[error(
        "{} is not an ID key: {detail}; a key is 64 hex digits, 256 bits (`openssl rand -hex 32` makes one)",
        key_origin(.path)
    )]
    KeyFormat {
        /// The file the key was read from, if any.
        path: Option<PathBuf>,
        /// What is wrong with it (never the key itself).
        detail: String,
    },
    /// A dense ID the width has no opaque ID for: 0, or past the capacity.
    #[error(
        "dense ID {dense} has no opaque ID in this tag's width ({width}): it holds dense IDs 1 to {}; a tag that has used them all is exhausted, and a new tag of a wider width is needed",
        .width.capacity()
    )]
    Exhausted {
        /// The dense ID.
        dense: u64,
        /// The width.
        width: OpaqueWidth,
    },
    /// A value outside the width's range, which no dense ID maps to.
    #[error(
        "{id} is not an opaque ID of this tag's width ({width}): those are {}; is it another tag's ID?",
        .width.range_text()
    )]
    NotInDomain {
        /// The value.
        id: u64,
        /// The width.
        width: OpaqueWidth,
    },
    /// The one value of a padded field that no dense ID maps to (the image of index 0).
    #[error(
        "{id} was never issued: under this key and tag it is the one value of the {width} that no dense ID maps to; is it another tag's ID, or was the key changed?"
    )]
    NeverIssued {
        /// The value.
        id: u64,
        /// The width.
        width: OpaqueWidth,
    },
    /// FF1 refused a numeral string; the widths checked above make this unreachable.
    #[error("FF1 refused the {width} numeral string: {detail}; this is a bug in leafctl")]
    Cipher {
        /// The width.
        width: OpaqueWidth,
        /// The crate's words.
        detail: String,
    },
}

/// "the key file PATH" or "the key text", for messages.
fn key_origin(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("the key file {}", p.display()),
        None => "the key text".to_string(),
    }
}

/// The 256-bit key, read from a file of 64 hex digits (surrounding whitespace and a trailing
/// newline allowed). Its `Debug` shows the check value, never the key.
#[derive(Clone)]
pub struct IdKey {
    bytes: [u8; 32],
}

/// A key file larger than this is not a key (and a device file is not read to its end).
const KEY_FILE_LIMIT: u64 = 4096;

impl IdKey {
    /// Reads a key as written: 64 hex digits in either case, with surrounding whitespace.
    pub fn from_hex(text: &str) -> Result<IdKey, OpaqueError> {
        parse_key(text).map_err(|detail| OpaqueError::KeyFormat { path: None, detail })
    }

    /// Reads the key from its file; errors name the file.
    pub fn from_file(path: &Path) -> Result<IdKey, OpaqueError> {
        let key_file = |source| OpaqueError::KeyFile {
            path: path.to_path_buf(),
            source,
        };
        let format = |detail: String| OpaqueError::KeyFormat {
            path: Some(path.to_path_buf()),
            detail,
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(KEY_FILE_LIMIT + 1).read_to_end(&mut bytes))
            .map_err(key_file)?;
        if bytes.len() as u64 > KEY_FILE_LIMIT {
            return Err(format(format!(
                "it is over {KEY_FILE_LIMIT} bytes long, not a key file"
            )));
        }
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| format("it is not text (not UTF-8)".to_string()))?;
        parse_key(text).map_err(format)
    }

    /// A key check value stored beside the tag so a wrong key is refused before anything is
    /// issued: the first 8 bytes (16 lowercase hex digits) of AES-256 of the all-zero block (the
    /// usual KCV, extended).
    pub fn check_value(&self) -> String {
        let mut block = Array::from([0u8; 16]);
        self.cipher().encrypt_block(&mut block);
        block[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    fn cipher(&self) -> Aes256Enc {
        Aes256Enc::new(&Array::from(self.bytes))
    }
}

impl fmt::Debug for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdKey")
            .field("check_value", &self.check_value())
            .finish_non_exhaustive()
    }
}

/// The key of 64 hex digits; the error says what is wrong without repeating the key.
fn parse_key(text: &str) -> Result<IdKey, String> {
    let hex = text.trim();
    if let Some((pos, ch)) = hex
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        return Err(format!(
            "{ch:?} at position {} is not a hex digit (0-9, a-f)",
            pos + 1
        ));
    }
    if hex.len() != 64 {
        return Err(if hex.is_empty() {
            "it is empty".to_string()
        } else {
            format!("it has {} hex digits, not 64", hex.len())
        });
    }
    let mut bytes = [0u8; 32];
    for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        let digit = |c| super::text::hex_value(c).unwrap_or(0); // all checked above
        *byte = (digit(pair[0]) << 4) | digit(pair[1]);
    }
    Ok(IdKey { bytes })
}

/// AES-256 with its key schedule shared: FF1 clones its block cipher for every round (11 times a
/// call), and a clone of this is a reference count, not a copy of the round keys. It encrypts
/// with `Aes256Enc` itself.
#[derive(Clone)]
struct SharedAes(Arc<Aes256Enc>);

impl BlockSizeUser for SharedAes {
    type BlockSize = U16;
}

impl KeySizeUser for SharedAes {
    type KeySize = U32;
}

impl KeyInit for SharedAes {
    fn new(key: &Key<Self>) -> SharedAes {
        SharedAes(Arc::new(Aes256Enc::new(key)))
    }
}

impl BlockCipherEncrypt for SharedAes {
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        self.0.encrypt_with_backend(f)
    }
}

/// One tag's permutation: key, width and a tweak (the tag's name, so two tags with one key permute
/// differently). Cheap to clone and to call: the cipher is keyed once, and a call allocates
/// nothing.
#[derive(Clone)]
pub struct Permutation {
    ff1: Arc<FF1<SharedAes>>,
    tweak: Arc<[u8]>,
    width: OpaqueWidth,
    /// The fewest digits accepted: [`MIN_DIGITS`], or FF1's own minimum in the tests.
    min_digits: u8,
}

impl fmt::Debug for Permutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permutation")
            .field("width", &self.width)
            .field("tweak", &String::from_utf8_lossy(&self.tweak))
            .finish_non_exhaustive()
    }
}

impl Permutation {
    /// The permutation of `width` under `key` and `tweak`. A width [`OpaqueWidth::parse`] would
    /// refuse (fewer than 7 or more than 18 digits) is refused by every call with `BadWidth`.
    pub fn new(key: &IdKey, width: OpaqueWidth, tweak: &[u8]) -> Permutation {
        Permutation::build(key, width, tweak, MIN_DIGITS)
    }

    /// The same, down to FF1's minimum of 6 digits, so a test can permute a whole domain.
    #[cfg(test)]
    fn new_small(key: &IdKey, width: OpaqueWidth, tweak: &[u8]) -> Permutation {
        Permutation::build(key, width, tweak, FF1_MIN_DIGITS)
    }

    fn build(key: &IdKey, width: OpaqueWidth, tweak: &[u8], min_digits: u8) -> Permutation {
        let (radix, _) = width.numerals();
        let ff1 = match FF1::<SharedAes>::new(&key.bytes, radix) {
            Ok(ff1) => ff1,
            // FF1 takes radixes 2 to 2^16; 2 and 10 are the only ones asked for.
            Err(e) => unreachable!("{e}"),
        };
        Permutation {
            ff1: Arc::new(ff1),
            tweak: Arc::from(tweak),
            width,
            min_digits,
        }
    }

    /// The width, so a caller can tell how many IDs the tag holds and what they look like.
    pub fn width(&self) -> OpaqueWidth {
        self.width
    }

    /// The opaque ID of dense ID `dense` (1-based); `Exhausted` when dense is 0 or above the
    /// capacity.
    pub fn encode(&self, dense: u64) -> Result<u64, OpaqueError> {
        self.check_width()?;
        if dense == 0 || dense > self.width.capacity() {
            return Err(OpaqueError::Exhausted {
                dense,
                width: self.width,
            });
        }
        match self.width {
            OpaqueWidth::Digits(_) => {
                let low = self.low();
                let mut x = self.encrypt(low + (dense - 1))?;
                while x < low {
                    x = self.encrypt(x)?;
                }
                Ok(x)
            }
            OpaqueWidth::Padded(_) => self.encrypt(dense),
            OpaqueWidth::Bits63 => {
                let mut x = self.encrypt(dense)?;
                while x == 0 {
                    x = self.encrypt(x)?;
                }
                Ok(x)
            }
        }
    }

    /// The dense ID back; `NotInDomain` for a value outside the width's range (and `NeverIssued`
    /// for the one value of a padded field that no dense ID maps to).
    pub fn decode(&self, opaque: u64) -> Result<u64, OpaqueError> {
        self.check_width()?;
        if !self.width.contains(opaque) {
            return Err(OpaqueError::NotInDomain {
                id: opaque,
                width: self.width,
            });
        }
        match self.width {
            OpaqueWidth::Digits(_) => {
                let low = self.low();
                let mut x = self.decrypt(opaque)?;
                while x < low {
                    x = self.decrypt(x)?;
                }
                Ok(x - low + 1)
            }
            OpaqueWidth::Padded(_) => match self.decrypt(opaque)? {
                0 => Err(OpaqueError::NeverIssued {
                    id: opaque,
                    width: self.width,
                }),
                x => Ok(x),
            },
            OpaqueWidth::Bits63 => {
                let mut x = self.decrypt(opaque)?;
                while x == 0 {
                    x = self.decrypt(x)?;
                }
                Ok(x)
            }
        }
    }

    fn check_width(&self) -> Result<(), OpaqueError> {
        match self.width.digits() {
            Some(n) if !(self.min_digits..=MAX_DIGITS).contains(&n) => Err(OpaqueError::BadWidth {
                given: self.width.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// The smallest N-digit number, 10^(N-1), where a `Digits` width's range starts.
    fn low(&self) -> u64 {
        self.width
            .digits()
            .and_then(digit_power)
            .map_or(0, |p| p / 10)
    }

    fn numerals(&self, value: u64) -> Numerals {
        let (radix, len) = self.width.numerals();
        Numerals { value, len, radix }
    }

    fn encrypt(&self, x: u64) -> Result<u64, OpaqueError> {
        self.ff1
            .encrypt(&self.tweak, &self.numerals(x))
            .map(|n| n.value)
            .map_err(|e| self.cipher_error(e))
    }

    fn decrypt(&self, x: u64) -> Result<u64, OpaqueError> {
        self.ff1
            .decrypt(&self.tweak, &self.numerals(x))
            .map(|n| n.value)
            .map_err(|e| self.cipher_error(e))
    }

    fn cipher_error(&self, e: fpe::ff1::NumeralStringError) -> OpaqueError {
        OpaqueError::Cipher {
            width: self.width,
            detail: e.to_string(),
        }
    }
}

/// An FF1 numeral string held as its value: its `len` numerals of `radix`, most significant
/// first, are the digits of `value` in that radix. FF1 reads each half as the number NUM(X) and
/// writes results back as digits, so a number is what it needs; the crate's own numeral strings
/// hold a vector of numerals and do the arithmetic in big integers, on every call.
///
/// It holds up to 18 decimal digits or 63 bits, so a half is at most 9 digits or 32 bits: below
/// 2^32, which keeps every sum and every reduction below in a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Numerals {
    value: u64,
    len: u32,
    radix: u32,
}

/// radix^len, for the lengths a [`Numerals`] has.
fn power(radix: u32, len: u32) -> u64 {
    u64::from(radix).pow(len)
}

impl NumeralString for Numerals {
    type Ops = Numerals;

    fn is_valid(&self, radix: u32) -> bool {
        radix == self.radix
            && u64::from(radix)
                .checked_pow(self.len)
                .is_some_and(|limit| self.value < limit)
            && u64::from(radix)
                .checked_pow(self.len - self.len / 2)
                .is_some_and(|half| half <= 1 << 32)
    }

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    /// A = the first floor(n/2) numerals, B = the rest (FF1 step 2).
    fn split(&self) -> (Numerals, Numerals) {
        let u = self.len / 2;
        let v = self.len - u;
        let low = power(self.radix, v);
        (
            Numerals {
                value: self.value / low,
                len: u,
                radix: self.radix,
            },
            Numerals {
                value: self.value % low,
                len: v,
                radix: self.radix,
            },
        )
    }

    /// A || B (FF1 step 7).
    fn concat(a: Numerals, b: Numerals) -> Numerals {
        Numerals {
            value: a.value * power(a.radix, b.len) + b.value,
            len: a.len + b.len,
            radix: a.radix,
        }
    }
}

/// The `b` low bytes of a `u64`, big-endian: STR^b_256 of a value below 2^(8b).
struct BeBytes {
    bytes: [u8; 8],
    len: usize,
}

impl AsRef<[u8]> for BeBytes {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[8 - self.len..]
    }
}

impl Operations for Numerals {
    type Bytes = BeBytes;

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    /// STR^b_256(NUM_radix(X)). A half is below 2^32, and b = ceil(v * log2(radix) / 8) is then
    /// at most 4, so it fits the 8 bytes of a `u64`.
    fn to_be_bytes(&self, _radix: u32, b: usize) -> BeBytes {
        BeBytes {
            bytes: self.value.to_be_bytes(),
            len: b,
        }
    }

    /// (NUM(X) + NUM(S)) mod radix^m, as m numerals (FF1 step 6vi-vii); X has m numerals.
    fn add_mod_exp(self, other: impl Iterator<Item = u8>, radix: u32, m: usize) -> Numerals {
        let modulus = power(radix, m as u32);
        let y = reduce(other, modulus);
        Numerals {
            value: (self.value % modulus + y) % modulus,
            len: m as u32,
            radix,
        }
    }

    /// (NUM(X) - NUM(S)) mod radix^m, as m numerals (decryption's step 6vi-vii).
    fn sub_mod_exp(self, other: impl Iterator<Item = u8>, radix: u32, m: usize) -> Numerals {
        let modulus = power(radix, m as u32);
        let y = reduce(other, modulus);
        Numerals {
            value: (self.value % modulus + modulus - y) % modulus,
            len: m as u32,
            radix,
        }
    }
}

/// NUM(S) mod `modulus` for the big-endian bytes S, with `modulus` at most 2^32: four bytes at a
/// time, the remainder so far (below 2^32) shifted up 32 bits still fits a `u64`.
fn reduce(bytes: impl Iterator<Item = u8>, modulus: u64) -> u64 {
    let mut acc = 0u64;
    let mut word = 0u64;
    let mut count = 0u32;
    for byte in bytes {
        word = (word << 8) | u64::from(byte);
        count += 1;
        if count == 4 {
            acc = ((acc << 32) | word) % modulus;
            word = 0;
            count = 0;
        }
    }
    if count > 0 {
        acc = ((acc << (8 * count)) | word) % modulus;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use fpe::ff1::FlexibleNumeralString;

    /// NIST's FF1-AES256 sample key (FF1samples.pdf, samples 7 to 9).
    const NIST_KEY: &str = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94";
    /// A test key: bytes 0 to 31.
    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn key(hex: &str) -> IdKey {
        IdKey::from_hex(hex).unwrap()
    }

    fn ff1(hex: &str, radix: u32) -> FF1<SharedAes> {
        FF1::new(&key(hex).bytes, radix).unwrap()
    }

    /// `value` as `len` numerals of `radix`, most significant first, as the crate's strings hold.
    fn digits(value: u64, len: u32, radix: u32) -> Vec<u16> {
        (0..len)
            .rev()
            .map(|i| (value / u64::from(radix).pow(i) % u64::from(radix)) as u16)
            .collect()
    }

    #[test]
    fn nist_ff1_aes256_samples_through_the_u64_numerals() {
        // FF1samples.pdf, sample 7: radix 10, PT 0123456789, no tweak -> 6657667009.
        // Sample 8: the same with tweak 39383736353433323130 -> 1001623463.
        let f = ff1(NIST_KEY, 10);
        let pt = Numerals {
            value: 123_456_789,
            len: 10,
            radix: 10,
        };
        let tweak = b"9876543210";
        for (tweak, ct) in [(&b""[..], 6_657_667_009), (&tweak[..], 1_001_623_463)] {
            let got = f.encrypt(tweak, &pt).unwrap();
            assert_eq!(got.value, ct, "tweak {tweak:?}");
            assert_eq!(got.len, 10);
            assert_eq!(f.decrypt(tweak, &got).unwrap(), pt);
        }
    }

    #[test]
    fn the_u64_numerals_agree_with_the_crates_own() {
        // The crate's FlexibleNumeralString (its big-integer reference) on the widths used.
        let f10 = ff1(KEY, 10);
        let f2 = ff1(KEY, 2);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..200u32 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let (f, radix, len) = match i % 4 {
                0 => (&f10, 10, 7),
                1 => (&f10, 10, 12),
                2 => (&f10, 10, 18),
                _ => (&f2, 2, 63),
            };
            let value = x % power(radix, len);
            let tweak = if i % 3 == 0 { &b""[..] } else { &b"orders"[..] };
            let ours = f.encrypt(tweak, &Numerals { value, len, radix }).unwrap();
            let theirs: Vec<u16> = f
                .encrypt(
                    tweak,
                    &FlexibleNumeralString::from(digits(value, len, radix)),
                )
                .unwrap()
                .into();
            assert_eq!(
                digits(ours.value, len, radix),
                theirs,
                "{len} numerals of {radix}, {value}"
            );
            let back: Vec<u16> = f
                .decrypt(tweak, &FlexibleNumeralString::from(theirs))
                .unwrap()
                .into();
            assert_eq!(back, digits(value, len, radix));
        }
    }

    #[test]
    fn a_whole_6_digit_domain_is_permuted_and_decodes_back() {
        // The walking width, the one whose bijection is this module's and not FF1's: every dense
        // ID of Digits(6) maps to a distinct 6-digit value, and decodes back to it. About a
        // million FF1 calls.
        let k = key(KEY);
        let p = Permutation::new_small(&k, OpaqueWidth::Digits(6), b"orders");
        let width = p.width();
        assert_eq!(width.capacity(), 900_000);
        let mut seen = vec![0u64; 1_000_000 / 64];
        for dense in 1..=width.capacity() {
            let id = p.encode(dense).unwrap();
            assert!(width.contains(id), "{dense} -> {id}, outside {width}");
            let (word, bit) = ((id / 64) as usize, id % 64);
            assert_eq!(seen[word] >> bit & 1, 0, "{id} issued twice");
            seen[word] |= 1 << bit;
            // 900,000 distinct values of a 900,000-value range: a bijection already. Decoding
            // is checked on every 64th (the debug build spends ~28 us on an FF1 call).
            if dense % 64 == 0 {
                assert_eq!(p.decode(id).unwrap(), dense, "{id}");
            }
        }
        // A padded field permutes [0, 10^6) by FF1 alone; the value index 0 maps to is the one
        // never issued, and says so.
        let padded = Permutation::new_small(&k, OpaqueWidth::Padded(6), b"orders");
        assert_eq!(padded.width().capacity(), 999_999);
        let unused = padded.encrypt(0).unwrap();
        let e = padded.decode(unused).unwrap_err();
        assert!(matches!(e, OpaqueError::NeverIssued { .. }), "{e}");
        for dense in (1..=1000).chain(999_000..=999_999) {
            let id = padded.encode(dense).unwrap();
            assert!(id < 1_000_000 && id != unused, "{dense} -> {id}");
            assert_eq!(padded.decode(id).unwrap(), dense);
        }
    }

    #[test]
    fn outputs_have_the_widths_shape_and_the_ends_are_refused() {
        let k = key(KEY);
        for n in [MIN_DIGITS, 12, MAX_DIGITS] {
            let p = Permutation::new(&k, OpaqueWidth::Digits(n), b"t");
            let cap = p.width().capacity();
            assert_eq!(cap, 9 * 10u64.pow(u32::from(n) - 1));
            for dense in (1..=2000).chain(cap - 2000..=cap) {
                let id = p.encode(dense).unwrap();
                assert_eq!(id.to_string().len(), usize::from(n), "{dense} -> {id}");
                assert_eq!(p.decode(id).unwrap(), dense);
            }
            for dense in [0, cap + 1] {
                assert!(matches!(
                    p.encode(dense),
                    Err(OpaqueError::Exhausted { dense: d, .. }) if d == dense
                ));
            }
            for id in [0, 10u64.pow(u32::from(n) - 1) - 1, 10u64.pow(u32::from(n))] {
                let e = p.decode(id).unwrap_err();
                assert!(matches!(e, OpaqueError::NotInDomain { .. }), "{e}");
            }
        }
        let padded = Permutation::new(&k, OpaqueWidth::Padded(8), b"t");
        assert_eq!(padded.width().capacity(), 99_999_999);
        for dense in (1..=2000).chain(99_997_999..=99_999_999) {
            let id = padded.encode(dense).unwrap();
            assert!(id < 100_000_000, "{dense} -> {id}");
            assert_eq!(padded.decode(id).unwrap(), dense);
        }
        assert!(matches!(
            padded.encode(100_000_000),
            Err(OpaqueError::Exhausted { .. })
        ));
        assert!(matches!(
            padded.decode(100_000_000),
            Err(OpaqueError::NotInDomain { .. })
        ));
        let bits = Permutation::new(&k, OpaqueWidth::Bits63, b"t");
        let cap = bits.width().capacity();
        assert_eq!(cap, i64::MAX as u64);
        for dense in (1..=2000).chain(cap - 2000..=cap) {
            let id = bits.encode(dense).unwrap();
            assert!((1..1 << 63).contains(&id), "{dense} -> {id}");
            assert_eq!(bits.decode(id).unwrap(), dense);
        }
        assert!(matches!(bits.encode(0), Err(OpaqueError::Exhausted { .. })));
        assert!(matches!(
            bits.encode(1 << 63),
            Err(OpaqueError::Exhausted { .. })
        ));
        for id in [0, 1 << 63, u64::MAX] {
            assert!(matches!(
                bits.decode(id),
                Err(OpaqueError::NotInDomain { .. })
            ));
        }
        // A width parse would refuse is refused by the permutation too.
        let e = Permutation::new(&k, OpaqueWidth::Digits(6), b"t")
            .encode(1)
            .unwrap_err();
        assert!(matches!(e, OpaqueError::BadWidth { .. }), "{e}");
        let e = Permutation::new(&k, OpaqueWidth::Padded(19), b"t")
            .decode(1)
            .unwrap_err();
        assert!(matches!(e, OpaqueError::BadWidth { .. }), "{e}");
    }

    #[test]
    fn a_permutation_is_shared_between_threads() {
        fn shareable<T: Clone + Send + Sync>(_: &T) {}
        let p = Permutation::new(&key(KEY), OpaqueWidth::Digits(12), b"orders");
        shareable(&p);
        let ids = std::thread::scope(|s| {
            let q = p.clone();
            s.spawn(move || first(&q, 10)).join().unwrap()
        });
        assert_eq!(ids, first(&p, 10));
    }

    /// The first `n` opaque IDs of a permutation.
    fn first(p: &Permutation, n: u64) -> Vec<u64> {
        (1..=n).map(|d| p.encode(d).unwrap()).collect()
    }

    #[test]
    fn key_and_tweak_choose_the_permutation_and_it_is_fixed() {
        let (k, other) = (key(KEY), key(NIST_KEY));
        for width in [
            OpaqueWidth::Digits(12),
            OpaqueWidth::Padded(8),
            OpaqueWidth::Bits63,
        ] {
            let p = Permutation::new(&k, width, b"orders");
            let ids = first(&p, 50);
            assert_eq!(first(&p.clone(), 50), ids);
            assert_eq!(first(&Permutation::new(&k, width, b"orders"), 50), ids);
            assert_ne!(first(&Permutation::new(&other, width, b"orders"), 50), ids);
            assert_ne!(first(&Permutation::new(&k, width, b"invoices"), 50), ids);
            assert_ne!(first(&Permutation::new(&k, width, b""), 50), ids);
        }
        // Known answers, computed once: a change of the construction (numerals, walking, index
        // of the first dense ID, tweak) changes them.
        let known = [
            (
                OpaqueWidth::Digits(12),
                [474_115_207_059, 462_711_104_330, 346_621_539_218],
            ),
            (OpaqueWidth::Padded(8), [85_349_035, 86_416_537, 57_905_633]),
            (
                OpaqueWidth::Bits63,
                [
                    3_225_222_220_399_814_638,
                    7_400_252_126_391_554_832,
                    8_660_677_480_539_914_496,
                ],
            ),
        ];
        for (width, ids) in known {
            let p = Permutation::new(&k, width, b"orders");
            assert_eq!(
                [
                    p.encode(1).unwrap(),
                    p.encode(2).unwrap(),
                    p.encode(1000).unwrap()
                ],
                ids,
                "{width}"
            );
        }
    }

    #[test]
    fn widths_parse_and_print() {
        assert_eq!(OpaqueWidth::parse("7").unwrap(), OpaqueWidth::Digits(7));
        assert_eq!(OpaqueWidth::parse("18").unwrap(), OpaqueWidth::Digits(18));
        assert_eq!(OpaqueWidth::parse("63").unwrap(), OpaqueWidth::Bits63);
        for bad in ["6", "19", "64", "0", "", "twelve", "-12", "12.0"] {
            let e = OpaqueWidth::parse(bad).unwrap_err().to_string();
            assert!(e.contains("7 to 18") && e.contains("63"), "{bad}: {e}");
        }
        assert_eq!(OpaqueWidth::Digits(12).to_string(), "12 digits");
        assert_eq!(OpaqueWidth::Bits63.to_string(), "63 bits");
        assert_eq!(OpaqueWidth::Padded(12).to_string(), "12-digit field");
        assert!(OpaqueWidth::Digits(7).contains(1_000_000));
        assert!(!OpaqueWidth::Digits(7).contains(999_999));
        assert!(OpaqueWidth::Padded(7).contains(0));
        assert!(!OpaqueWidth::Bits63.contains(0));
        assert_eq!(OpaqueWidth::Digits(18).capacity(), 900_000_000_000_000_000);
        assert_eq!(OpaqueWidth::Padded(18).capacity(), 999_999_999_999_999_999);
    }

    #[test]
    fn keys_are_64_hex_digits_and_never_printed() {
        let k = IdKey::from_hex(&format!("  {KEY}\n")).unwrap();
        assert_eq!(k.bytes[31], 0x1f);
        assert_eq!(key(&KEY.to_uppercase()).bytes, k.bytes);
        let short = IdKey::from_hex(&KEY[..63]).unwrap_err().to_string();
        assert!(short.contains("63 hex digits, not 64"), "{short}");
        let long = IdKey::from_hex(&format!("{KEY}0")).unwrap_err().to_string();
        assert!(long.contains("65 hex digits, not 64"), "{long}");
        let bad = IdKey::from_hex(&format!("{}g", &KEY[..63]))
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("'g' at position 64 is not a hex digit"),
            "{bad}"
        );
        assert!(
            !bad.contains(&KEY[..63]),
            "the message repeats the key: {bad}"
        );
        let empty = IdKey::from_hex("\n").unwrap_err().to_string();
        assert!(empty.contains("empty"), "{empty}");
        let debug = format!("{k:?}");
        assert!(
            !debug.contains(KEY) && !debug.contains(&KEY[..16]),
            "{debug}"
        );
        // AES-256 of the zero block under this key is f29000b62a499fd0a9f39a6add2e7780 (as
        // `openssl enc -aes-256-ecb -nopad` gives it); a different key has a different one.
        assert_eq!(k.check_value(), "f29000b62a499fd0");
        assert_eq!(k.check_value().len(), 16);
        assert_ne!(key(NIST_KEY).check_value(), k.check_value());
    }

    #[test]
    fn key_files_are_read_and_named_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.key");
        std::fs::write(&good, format!("{KEY}\n")).unwrap();
        assert_eq!(IdKey::from_file(&good).unwrap().bytes, key(KEY).bytes);
        let missing = dir.path().join("missing.key");
        let e = IdKey::from_file(&missing).unwrap_err();
        assert!(matches!(e, OpaqueError::KeyFile { .. }), "{e}");
        assert!(e.to_string().contains("missing.key"), "{e}");
        let bad = dir.path().join("bad.key");
        std::fs::write(&bad, &KEY[..40]).unwrap();
        let e = IdKey::from_file(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.key") && e.contains("40 hex digits"), "{e}");
        std::fs::write(&bad, [0xff, 0xfe]).unwrap();
        let e = IdKey::from_file(&bad).unwrap_err().to_string();
        assert!(e.contains("not text"), "{e}");
    }
}
