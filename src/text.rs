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

/// The password written in a URL, if any: after `user:` in the user part (which ends at the
/// last `@`), else the value of a `password` query parameter (the MySQL driver reads one).
pub(crate) fn url_password(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    if let Some((creds, _)) = rest.rsplit_once('@')
        && let Some((_, p)) = creds.split_once(':')
    {
        return Some(p.to_string());
    }
    let after = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    let (_, query) = after.split_once('?')?;
    query.split('&').find_map(|pair| {
        pair.split_once('=')
            .filter(|(key, _)| key.eq_ignore_ascii_case("password"))
            .map(|(_, value)| value.to_string())
    })
}

/// `url` with every password [`url_password`] finds in it replaced by `with` (`Some("***")`, for
/// messages), or left out (`None`, for a command to print: the password then comes from the
/// environment or a file).
pub(crate) fn url_hiding_password(url: &str, with: Option<&str>) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (user, after) = match rest.rsplit_once('@') {
        Some((creds, after)) => match (creds.split_once(':'), with) {
            (Some((user, _)), Some(with)) => (Some(format!("{user}:{with}")), after),
            (Some((user, _)), None) => (Some(user.to_string()), after),
            (None, _) => (Some(creds.to_string()), after),
        },
        None => (None, rest),
    };
    let after = match after.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<String> = query
                .split('&')
                .filter_map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        with.map(|with| format!("{key}={with}"))
                    }
                    _ => Some(pair.to_string()),
                })
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => after.to_string(),
    };
    match user {
        Some(user) => format!("{scheme}://{user}@{after}"),
        None => format!("{scheme}://{after}"),
    }
}

/// Replaces the password in a message (server and driver errors can echo connection details).
pub(crate) fn scrub(text: String, password: Option<&str>) -> String {
    match password {
        Some(p) if p.len() >= 3 => text.replace(p, "***"),
        _ => text,
    }
}

/// The Debian package's extended description (`Cargo.toml`), its line continuations joined:
/// what tests check names every database and registry store.
#[cfg(test)]
pub(crate) fn package_description() -> String {
    include_str!("../Cargo.toml")
        .split("extended-description")
        .nth(1)
        .and_then(|d| d.split("\"\"\"").nth(1))
        .unwrap_or_default()
        .replace("\\\n", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A password is found and hidden where a URL can hold one: in the user part, and as a
    /// `password` query parameter (any case), which the MySQL driver reads.
    #[test]
    fn url_passwords_are_found_and_hidden_in_the_user_part_and_the_query() {
        let both = "mysql://u:pw1@h:1/d?tls=true&password=pw2";
        assert_eq!(url_password(both).as_deref(), Some("pw1"));
        assert_eq!(
            url_password("mysql://u@h/d?PassWord=pw2&x=1").as_deref(),
            Some("pw2")
        );
        assert_eq!(url_password("mysql://u@h/d?tls=true"), None);
        assert_eq!(
            url_hiding_password(both, Some("***")),
            "mysql://u:***@h:1/d?tls=true&password=***"
        );
        assert_eq!(url_hiding_password(both, None), "mysql://u@h:1/d?tls=true");
        assert_eq!(
            url_hiding_password("mysql://u@h/d?password=pw", None),
            "mysql://u@h/d"
        );
        assert_eq!(
            url_hiding_password("mysql://h/d?password=pw", Some("***")),
            "mysql://h/d?password=***"
        );
        assert_eq!(
            url_hiding_password("sqlite:///tmp/a.db", None),
            "sqlite:///tmp/a.db"
        );
        assert_eq!(url_hiding_password("no url", None), "no url");
    }

    #[test]
    fn long_input_is_cut_short_input_kept() {
        assert_eq!(excerpt("order", 8), "order");
        assert_eq!(excerpt("abcdefghij", 4), "abcd... (10 characters in all)");
        assert_eq!(excerpt("ééééé", 2), "éé... (5 characters in all)");
    }
}
