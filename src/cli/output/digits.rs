//! Decimal digits written straight into a buffer, two at a time.

/// "00" to "99", for writing two digits at a time.
pub(super) const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `n`.
#[inline]
pub fn push_decimal(buf: &mut Vec<u8>, n: u64) {
    let start = buf.len();
    buf.extend_from_slice(&[b'0'; 20]);
    let len = put_decimal(&mut buf[start..], n);
    buf.truncate(start + len);
}

/// Writes the decimal digits of `n` at the start of `out` (at least 20 bytes) and returns how
/// many there are: two digits per division, straight into `out` (a scratch array copied in
/// afterwards would stall the copy on store forwarding).
#[inline]
pub fn put_decimal(out: &mut [u8], mut n: u64) -> usize {
    let len = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let out = &mut out[..len];
    let mut i = len;
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        out[..2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        out[0] = b'0' + n as u8;
    }
    len
}

/// Appends `n` (0..=99) as two digits.
#[inline]
pub(super) fn push_two(buf: &mut Vec<u8>, n: u32) {
    let r = (n % 100) as usize * 2;
    buf.extend_from_slice(&DIGIT_PAIRS[r..r + 2]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_std() {
        let mut values: Vec<u64> = (0..=1000)
            .chain([12345, u64::MAX, i64::MAX as u64])
            .collect();
        for p in 1..20 {
            let t = 10u64.pow(p);
            values.extend([t - 1, t, t + 1, t / 10 * 9 + 7]);
        }
        let mut b = b"x".to_vec();
        for n in values {
            b.truncate(1);
            push_decimal(&mut b, n);
            assert_eq!(&b[1..], n.to_string().as_bytes(), "{n}");
        }
    }
}
