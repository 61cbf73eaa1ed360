//! Compact strings of an ID for people who copy them (issue 48): base36 (`0-9a-z`) and
//! Crockford's base32 (`0-9A-Z` without `I L O U`), each followed by one check character.
//!
//! The check character is Luhn's mod-N algorithm over the digits' values (N = 36 or 32), written
//! in the same alphabet: so, unlike Crockford's own check symbols (`*~$=U`, four of which a URL
//! or a shell would mangle), it is safe in a URL path, a query and an unquoted shell word. It
//! catches every single mistyped character and every swap of two neighbouring characters but
//! one pair per alphabet (Luhn's blind spot, the two values whose doubled sums are equal).
//! Reading is forgiving where Crockford asks for it: any case, `I` and `L` read as `1`, `O` as
//! `0`, and hyphens ignored. An encoded ID is a name for the number, not a secret or a
//! signature: anyone can encode any number.

/// A compact string encoding of an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Digits and lowercase letters (`0-9a-z`), any case when read.
    Base36,
    /// Crockford's base32: digits and uppercase letters without `I L O U`.
    Crockford,
}

/// Why a compact string is not an ID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    /// Nothing to read (or a check character alone).
    #[error(
        "{encoding} string {text:?} is too short: it needs at least one digit and its check character"
    )]
    TooShort {
        /// The encoding's name.
        encoding: &'static str,
        /// What was read.
        text: String,
    },
    /// A character outside the alphabet.
    #[error(
        "{encoding} string {text:?} has {found:?} at position {position}, which is not a {encoding} digit ({alphabet})"
    )]
    BadCharacter {
        /// The encoding's name.
        encoding: &'static str,
        /// What was read.
        text: String,
        /// The character.
        found: char,
        /// Its position, from 1.
        position: usize,
        /// The digits the encoding has.
        alphabet: &'static str,
    },
    /// The check character does not match the digits: a character was mistyped.
    #[error(
        "{encoding} string {text:?} fails its check: its last character is {found:?}, its digits call for {expected:?}; a character was mistyped or two were swapped"
    )]
    CheckFailed {
        /// The encoding's name.
        encoding: &'static str,
        /// What was read.
        text: String,
        /// The check character given.
        found: char,
        /// The one the digits give.
        expected: char,
    },
    /// The digits are more than an ID holds.
    #[error("{encoding} string {text:?} is beyond the largest ID (2^63-1)")]
    TooLarge {
        /// The encoding's name.
        encoding: &'static str,
        /// What was read.
        text: String,
    },
}

impl Encoding {
    /// Every encoding, in the order help texts list them.
    pub const ALL: [Encoding; 2] = [Encoding::Base36, Encoding::Crockford];

    /// The name as typed after `--encode`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Base36 => "base36",
            Encoding::Crockford => "crockford",
        }
    }

    fn alphabet(self) -> &'static [u8] {
        match self {
            Encoding::Base36 => b"0123456789abcdefghijklmnopqrstuvwxyz",
            Encoding::Crockford => b"0123456789ABCDEFGHJKMNPQRSTVWXYZ",
        }
    }

    fn radix(self) -> u64 {
        self.alphabet().len() as u64
    }

    /// The value of character `c` when read, if it is a digit of this encoding.
    fn value(self, c: char) -> Option<u64> {
        let c = match self {
            Encoding::Base36 => c.to_ascii_lowercase(),
            Encoding::Crockford => match c.to_ascii_uppercase() {
                'I' | 'L' => '1',
                'O' => '0',
                other => other,
            },
        };
        let byte = u8::try_from(c).ok()?;
        self.alphabet()
            .iter()
            .position(|&a| a == byte)
            .map(|p| p as u64)
    }

    /// `id` in this encoding: its digits, most significant first, then the check character.
    pub fn encode(self, id: u64) -> String {
        let radix = self.radix();
        let mut digits = Vec::with_capacity(14);
        let mut rest = id;
        loop {
            digits.push(rest % radix);
            rest /= radix;
            if rest == 0 {
                break;
            }
        }
        digits.reverse();
        let check = luhn_check(&digits, radix);
        let alphabet = self.alphabet();
        digits
            .iter()
            .chain(std::iter::once(&check))
            .map(|&d| char::from(alphabet[d as usize]))
            .collect()
    }

    /// The ID `text` encodes, its check character verified.
    pub fn decode(self, text: &str) -> Result<u64, CompactError> {
        let encoding = self.name();
        let owned = || text.to_string();
        let mut values = Vec::with_capacity(text.len());
        for (i, c) in text.chars().enumerate() {
            if self == Encoding::Crockford && c == '-' {
                continue;
            }
            let v = self.value(c).ok_or_else(|| CompactError::BadCharacter {
                encoding,
                text: owned(),
                found: c,
                position: i + 1,
                alphabet: match self {
                    Encoding::Base36 => "0-9 and a-z",
                    Encoding::Crockford => {
                        "0-9 and A-Z but I, L, O and U (I and L read as 1, O as 0)"
                    }
                },
            })?;
            values.push(v);
        }
        let Some((&check, digits)) = values.split_last().filter(|(_, d)| !d.is_empty()) else {
            return Err(CompactError::TooShort {
                encoding,
                text: owned(),
            });
        };
        let radix = self.radix();
        let expected = luhn_check(digits, radix);
        if expected != check {
            let alphabet = self.alphabet();
            return Err(CompactError::CheckFailed {
                encoding,
                text: owned(),
                found: text.chars().last().unwrap_or_default(),
                expected: char::from(alphabet[expected as usize]),
            });
        }
        let mut id: u64 = 0;
        for &d in digits {
            id = id
                .checked_mul(radix)
                .and_then(|v| v.checked_add(d))
                .filter(|&v| v <= i64::MAX as u64)
                .ok_or_else(|| CompactError::TooLarge {
                    encoding,
                    text: owned(),
                })?;
        }
        Ok(id)
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Encoding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown encoding {s:?}: use base36 or crockford"))
    }
}

/// Luhn's mod-N check value of `digits` (most significant first): the value that, appended,
/// makes the whole string's Luhn sum a multiple of `radix`.
fn luhn_check(digits: &[u64], radix: u64) -> u64 {
    let mut sum = 0;
    // From the right, the digit next to the check character is doubled first.
    for (i, &d) in digits.iter().rev().enumerate() {
        let addend = if i % 2 == 0 { d * 2 } else { d };
        sum += addend / radix + addend % radix;
    }
    (radix - sum % radix) % radix
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ID comes back as it went, from the smallest to 2^63-1, in any case; the strings
    /// are short and use only their alphabet.
    #[test]
    fn ids_come_back_as_they_went() {
        let ids = [
            0u64,
            1,
            35,
            36,
            1_000_000,
            2_125_018_011_969_523_729,
            i64::MAX as u64,
        ];
        for e in Encoding::ALL {
            for id in ids {
                let s = e.encode(id);
                assert!(s.len() <= 14, "{e} {id}: {s}");
                assert!(s.bytes().all(|b| e.alphabet().contains(&b)), "{e}: {s}");
                assert_eq!(e.decode(&s), Ok(id), "{e} {id}: {s}");
                assert_eq!(e.decode(&s.to_ascii_uppercase()), Ok(id), "{e}: {s}");
                assert_eq!(e.decode(&s.to_ascii_lowercase()), Ok(id), "{e}: {s}");
            }
        }
        assert_eq!(Encoding::Base36.encode(35), "z1");
        // Crockford read as people type it: O for 0, l or I for 1, hyphens between groups.
        let s = Encoding::Crockford.encode(1024 + 1);
        assert_eq!(&s[..3], "101");
        let typed = format!("l-O{}", &s[2..]).replace('1', "I");
        assert_eq!(Encoding::Crockford.decode(&typed), Ok(1025), "{typed}");
        assert_eq!(
            Encoding::Crockford.decode(&Encoding::Crockford.encode(32).replace('1', "l")),
            Ok(32)
        );
    }

    /// The check character catches every single mistyped character, on many IDs, and every
    /// swap of two neighbours but Luhn's one blind pair per alphabet.
    #[test]
    fn a_mistyped_character_is_caught() {
        for e in Encoding::ALL {
            let alphabet = e.alphabet();
            let mut swaps_missed = 0;
            for n in 0..300u64 {
                let id = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 1;
                let s: Vec<u8> = e.encode(id).into_bytes();
                for i in 0..s.len() {
                    for &c in alphabet {
                        if c == s[i] {
                            continue;
                        }
                        let mut typo = s.clone();
                        typo[i] = c;
                        let typo = String::from_utf8(typo).unwrap();
                        assert!(e.decode(&typo).is_err(), "{e}: {typo} for {id}");
                    }
                    if i + 1 < s.len() && s[i] != s[i + 1] {
                        let mut swapped = s.clone();
                        swapped.swap(i, i + 1);
                        if e.decode(std::str::from_utf8(&swapped).unwrap()).is_ok() {
                            swaps_missed += 1;
                        }
                    }
                }
            }
            assert!(swaps_missed < 30, "{e}: {swaps_missed} swaps not caught");
        }
        match Encoding::Base36.decode("zc") {
            Err(CompactError::CheckFailed {
                found, expected, ..
            }) => assert_eq!((found, expected), ('c', '1')),
            other => panic!("{other:?}"),
        }
    }

    /// Not an ID: a character outside the alphabet (Crockford's `U` and a shell's `*`), nothing
    /// but a check character, more than 63 bits.
    #[test]
    fn what_is_not_an_id_says_why() {
        assert!(matches!(
            Encoding::Crockford.decode("1U"),
            Err(CompactError::BadCharacter {
                found: 'U',
                position: 2,
                ..
            })
        ));
        assert!(matches!(
            Encoding::Base36.decode("12*"),
            Err(CompactError::BadCharacter { found: '*', .. })
        ));
        assert!(matches!(
            Encoding::Base36.decode("z"),
            Err(CompactError::TooShort { .. })
        ));
        assert!(matches!(
            Encoding::Base36.decode(""),
            Err(CompactError::TooShort { .. })
        ));
        // 2^63 in base36 is 1y2p0ij32e8e8; with its check character, still too large.
        let too_large = "1y2p0ij32e8e8";
        let digits: Vec<u64> = too_large
            .chars()
            .map(|c| Encoding::Base36.value(c).unwrap())
            .collect();
        let check = luhn_check(&digits, 36);
        let text = format!(
            "{too_large}{}",
            char::from(Encoding::Base36.alphabet()[check as usize])
        );
        assert!(matches!(
            Encoding::Base36.decode(&text),
            Err(CompactError::TooLarge { .. })
        ));
    }
}
