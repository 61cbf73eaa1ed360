//! Reading stdin line by line, in constant memory, for `decode` and `decode --guess`.

use std::io::{self, BufRead};

/// Longest input line kept; an ID is at most 21 characters, so a longer line is reported by its
/// beginning and the rest is skipped (memory stays constant whatever the input).
pub(super) const MAX_LINE: usize = 256;

/// Calls `on_line(ctx, line, longer_than_kept, line_number)` for every line of `reader` (without
/// its `\n`). Lines are taken straight from the read buffer; only a line split across two reads
/// is copied (at most [`MAX_LINE`] bytes of it). `on_wait` runs before any read that may wait, so
/// what has been decoded so far can be flushed while the input is slow.
pub(super) fn for_each_line<C>(
    reader: impl io::Read,
    ctx: &mut C,
    mut on_wait: impl FnMut(&mut C) -> anyhow::Result<()>,
    mut on_line: impl FnMut(&mut C, &[u8], bool, u64) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut reader = io::BufReader::with_capacity(1 << 16, reader);
    let mut partial: Vec<u8> = Vec::with_capacity(MAX_LINE);
    let mut partial_long = false;
    let keep = |partial: &mut Vec<u8>, long: &mut bool, bytes: &[u8]| {
        let room = MAX_LINE - partial.len();
        if bytes.len() > room {
            *long = true;
        }
        partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
    };
    let mut n = 0u64;
    loop {
        if reader.buffer().is_empty() {
            on_wait(ctx)?;
        }
        let avail = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow::Error::new(e).context("cannot read standard input")),
        };
        if avail.is_empty() {
            if !partial.is_empty() || partial_long {
                n += 1;
                on_line(ctx, &partial, partial_long, n)?;
            }
            return Ok(());
        }
        let mut rest = avail;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            n += 1;
            if partial.is_empty() && !partial_long {
                on_line(ctx, &rest[..i], false, n)?;
            } else {
                keep(&mut partial, &mut partial_long, &rest[..i]);
                on_line(ctx, &partial, partial_long, n)?;
                partial.clear();
                partial_long = false;
            }
            rest = &rest[i + 1..];
        }
        keep(&mut partial, &mut partial_long, rest);
        let used = avail.len();
        reader.consume(used);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line `for_each_line` gives for `input`: (bytes, longer than kept).
    pub(super) fn lines_of(input: &[u8]) -> Vec<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        // Reads of a few bytes at a time, so lines are split across reads.
        let reader = io::Read::chain(&input[..input.len() / 3], &input[input.len() / 3..]);
        for_each_line(
            io::BufReader::with_capacity(7, reader),
            &mut out,
            |_| Ok(()),
            |out, line, long, n| {
                assert_eq!(n as usize, out.len() + 1, "numbered in order");
                out.push((line.to_vec(), long));
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn stdin_lines_that_are_not_utf8_are_values_not_a_failure() {
        use leafctl::idformat::parse_number;
        let lines: Vec<Vec<u8>> = lines_of(b"1\n\xff\xfe\n\n  \r\n2\r\n3")
            .into_iter()
            .map(|(l, _)| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(parse_number(&lines[0]), Ok(1));
        assert!(
            parse_number(&lines[1])
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert_eq!(parse_number(&lines[2]), Ok(2));
        assert_eq!(parse_number(&lines[3]), Ok(3));
    }

    #[test]
    fn lines_split_across_reads_and_long_lines_are_kept_whole_or_cut() {
        let long = vec![b'7'; MAX_LINE + 100];
        let mut input = b"123456789012345678\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\n42");
        let lines = lines_of(&input);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], (b"123456789012345678".to_vec(), false));
        assert_eq!((lines[1].0.len(), lines[1].1), (MAX_LINE, true));
        assert_eq!(lines[2], (b"42".to_vec(), false));
    }
}

/// Parser fuzzing (issue 8): arbitrary input never panics, and stdin lines stay within bounds.
/// `PROPTEST_CASES=100000 cargo test --release --bin leafctl fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fuzz_arbitrary_text_never_panics(raw in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = super::super::parse_window(&raw);
            let lines = tests::lines_of(&bytes);
            prop_assert!(lines.len() <= bytes.iter().filter(|&&b| b == b'\n').count() + 1);
            for (line, _) in &lines {
                prop_assert!(line.len() <= MAX_LINE);
            }
        }
    }
}
