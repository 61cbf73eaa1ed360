//! The keys of the registry: ranges under a prefix, and the worker id a key names.

/// The key range end that selects every key starting with `prefix`.
pub(crate) fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// The worker id a key under `prefix` names.
pub(crate) fn id_of(prefix: &str, key: &[u8]) -> Option<u64> {
    std::str::from_utf8(key)
        .ok()?
        .strip_prefix(prefix)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_next_key() {
        assert_eq!(prefix_end("/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end("a\u{7f}"), b"a\x80".to_vec());
    }

    #[test]
    fn ids_come_from_keys_under_the_prefix() {
        assert_eq!(
            id_of("/leafctl/x/leases/", b"/leafctl/x/leases/17"),
            Some(17)
        );
        assert_eq!(id_of("/leafctl/x/leases/", b"/leafctl/x/leases/a"), None);
        assert_eq!(id_of("/leafctl/x/leases/", b"/leafctl/y/leases/1"), None);
    }
}
