//! Small text helpers for messages.

use std::borrow::Cow;

/// At most `max_chars` characters of `s` for a message, with how much was left out: input
/// quoted back to its sender (a 60 KB path) is cut, never echoed whole.
pub(crate) fn excerpt(s: &str, max_chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max_chars) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => Cow::Owned(format!(
            "{}... ({} characters in all)",
            &s[..cut],
            s.chars().count()
        )),
    }
}

/// `a, b or c` (`a or b`, `a`): a list of alternatives for a message or help text.
pub(crate) fn or_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<S> = items.into_iter().collect();
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// The password written in a URL, if any (the user part ends at the last `@`).
pub(crate) fn url_password(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let (creds, _) = rest.rsplit_once('@')?;
    creds.split_once(':').map(|(_, p)| p.to_string())
}

/// Replaces the password in a message (server and driver errors can echo connection details).
pub(crate) fn scrub(text: String, password: Option<&str>) -> String {
    match password {
        Some(p) if p.len() >= 3 => text.replace(p, "***"),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_input_is_cut_short_input_kept() {
        assert_eq!(excerpt("order", 8), "order");
        assert_eq!(excerpt("abcdefghij", 4), "abcd... (10 characters in all)");
        assert_eq!(excerpt("ééééé", 2), "éé... (5 characters in all)");
    }
}
