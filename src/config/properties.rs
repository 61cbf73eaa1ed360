//! Java's `.properties` text (Leaf's `leaf.properties`), read as Java reads it.

use std::collections::BTreeMap;

/// Parses Java properties text: `key=value`, `key: value` or `key value` lines, `#`/`!` comments,
/// a trailing `\` continuing a line, and the escapes `\t \n \r \f \\ \uXXXX` (and any other escaped
/// character as itself). A later key wins, as in Java.
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut logical = first.trim_start().to_string();
        if logical.is_empty() || logical.starts_with('#') || logical.starts_with('!') {
            continue;
        }
        while ends_with_continuation(&logical) {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_key_value(&logical);
        map.insert(unescape(key), unescape(value));
    }
    map
}

/// An odd number of trailing backslashes continues the line.
fn ends_with_continuation(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

fn split_key_value(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' => return (&line[..i], line[i + 1..].trim_start()),
            c if c.is_whitespace() => {
                let rest = line[i..].trim_start();
                let rest = rest
                    .strip_prefix(['=', ':'])
                    .map(str::trim_start)
                    .unwrap_or(rest);
                return (&line[..i], rest);
            }
            _ => {}
        }
    }
    (line, "")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => out.push(ch),
                    _ => {
                        out.push_str("\\u");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_properties_syntax() {
        let p = parse_properties(
            "# comment\n! also\n  a=1\nb : two words\nc three\nd\\=x=y\ne=line \\\n   continued\nf=\\u00e9\\t\na=2\n",
        );
        assert_eq!(p["a"], "2");
        assert_eq!(p["b"], "two words");
        assert_eq!(p["c"], "three");
        assert_eq!(p["d=x"], "y");
        assert_eq!(p["e"], "line continued");
        assert_eq!(p["f"], "é\t");
    }
}

/// Parser fuzzing (issue 8): what Java's rules write, this reads back.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// Writes a key or value so that `parse_properties` reads it back unchanged (Java's rules).
    fn escape(s: &str, key: bool) -> String {
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{c}' => out.push_str("\\f"),
                '=' | ':' | '#' | '!' => {
                    out.push('\\');
                    out.push(c);
                }
                c if c.is_whitespace() && (key || i == 0) => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out
    }

    proptest! {
        #[test]
        fn fuzz_written_properties_read_back(
            map in proptest::collection::btree_map("[a-z.]{1,12}|.{1,8}", ".{0,20}", 0..8)
        ) {
            let map: BTreeMap<String, String> = map
                .into_iter()
                .filter(|(k, _)| !k.is_empty())
                .collect();
            let mut text = String::from("# written by the test\n");
            for (k, v) in &map {
                text.push_str(&format!("{}={}\n", escape(k, true), escape(v, false)));
            }
            prop_assert_eq!(parse_properties(&text), map, "{}", text);
        }
    }
}
