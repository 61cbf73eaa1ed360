//! The TOML configuration file: its model and where it is looked for.
//!
//! Every setting can also come from a flag or an environment variable; the CLI resolves them in the
//! order flag > environment > file > built-in default and remembers which one won ([`Origin`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod leaf;
pub mod properties;

// A setting's value and origin sit below every area that takes settings (`db`, `worker`), in
// `crate::resolved`; the configuration file is one of the origins.
pub use crate::resolved::{Origin, Resolved};

/// Failures to find, read or parse the configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file named by `--config` or `$LEAF_CONFIG` is not there or unreadable.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys or wrong types.
    #[error("config file {path} is invalid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's explanation, with line and column.
        message: String,
    },
}

/// A configuration file's settings as TOML values, in the file's `[section]`s. Which keys it may
/// hold and of what type is the caller's [`Key`] list (the CLI's declarations of its settings);
/// an unknown key or a value of the wrong type is an error naming its line, so a typo does not
/// silently fall back to a default.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ConfigFile(toml::Table);

impl ConfigFile {
    /// The value of `key` (`section.key`, or a key outside any section), if the file sets it.
    pub fn get(&self, key: &str) -> Option<&toml::Value> {
        match key.split_once('.') {
            Some((section, key)) => self.0.get(section)?.as_table()?.get(key),
            None => self.0.get(key),
        }
    }

    /// Sets `key` (`section.key`, or a key outside any section).
    pub fn set(&mut self, key: &str, value: impl Into<toml::Value>) {
        match key.split_once('.') {
            Some((section, key)) => {
                let table = self
                    .0
                    .entry(section)
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let Some(table) = table.as_table_mut() {
                    table.insert(key.to_string(), value.into());
                }
            }
            None => {
                self.0.insert(key.to_string(), value.into());
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<toml::Value> {
        match key.split_once('.') {
            Some((section, key)) => self.0.get_mut(section)?.as_table_mut()?.remove(key),
            None => self.0.remove(key),
        }
    }

    /// The file as TOML text.
    pub fn to_toml(&self) -> String {
        // Strings, booleans and integers in tables: serialising them cannot fail.
        toml::to_string(&self.0).unwrap_or_default()
    }
}

/// A key a configuration file may hold (`section.key`, or a key outside any section) and the
/// check of its value.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// The key as written in the file.
    pub name: &'static str,
    /// `Err(why)` for a value of the wrong type or form.
    pub check: fn(&toml::Value) -> Result<(), String>,
}

/// Reads configuration text: TOML whose keys are among `keys`, each with a value its check
/// accepts. The message of an error names the line and column, never a secret's value.
pub fn parse(text: &str, keys: &[Key]) -> Result<ConfigFile, String> {
    use serde::de::DeserializeSeed;
    toml::Deserializer::parse(text)
        .and_then(|de| {
            Schema {
                keys,
                section: None,
            }
            .deserialize(de)
        })
        .map(ConfigFile)
        .map_err(|e| parse_message(text, &e))
}

/// Reads a table (the whole file, or one `[section]`) as `keys` allow.
#[derive(Clone, Copy)]
struct Schema<'a> {
    keys: &'a [Key],
    /// The section being read; `None` at the top of the file.
    section: Option<&'a str>,
}

impl Schema<'_> {
    /// The full key of `name` in this table.
    fn full(&self, name: &str) -> String {
        match self.section {
            Some(section) => format!("{section}.{name}"),
            None => name.to_string(),
        }
    }

    /// The names this table may hold, for the message about one it may not.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for k in self.keys {
            let name = match (self.section, k.name.split_once('.')) {
                (Some(s), Some((section, name))) if s == section => name,
                (None, Some((section, _))) => section,
                (None, None) => k.name,
                _ => continue,
            };
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        names
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Schema<'_> {
    type Value = toml::Table;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<toml::Table, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Schema<'_> {
    type Value = toml::Table;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of settings")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<toml::Table, A::Error> {
        let mut table = toml::Table::new();
        while let Some(name) = map.next_key_seed(KnownKey(self))? {
            let full = self.full(&name);
            let value = match self.keys.iter().find(|k| k.name == full) {
                Some(key) => map.next_value_seed(Checked(key))?,
                None => toml::Value::Table(map.next_value_seed(Schema {
                    keys: self.keys,
                    section: Some(&name),
                })?),
            };
            table.insert(name, value);
        }
        Ok(table)
    }
}

/// A key of a table, refused (at its place in the file) unless the schema has it.
struct KnownKey<'a>(Schema<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for KnownKey<'_> {
    type Value = String;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<String, D::Error> {
        let name = String::deserialize(de)?;
        let names = self.0.names();
        if names.contains(&name) {
            return Ok(name);
        }
        // In serde's words (as a struct with `deny_unknown_fields` says it).
        let expected = match names.as_slice() {
            [] => "there are no fields".to_string(),
            [one] => format!("expected `{one}`"),
            [a, b] => format!("expected `{a}` or `{b}`"),
            more => format!(
                "expected one of {}",
                more.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Err(serde::de::Error::custom(format!(
            "unknown field `{name}`, {expected}"
        )))
    }
}

/// A value, refused (at its place in the file) unless its key's check accepts it.
struct Checked<'a>(&'a Key);

impl<'de> serde::de::DeserializeSeed<'de> for Checked<'_> {
    type Value = toml::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<toml::Value, D::Error> {
        let value = toml::Value::deserialize(de)?;
        (self.0.check)(&value).map_err(serde::de::Error::custom)?;
        Ok(value)
    }
}

/// A configuration file as found, with where it came from.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// Its contents (all `None` when there was no file).
    pub file: ConfigFile,
    /// The file's path, if one was read.
    pub path: Option<PathBuf>,
    /// How the path was chosen.
    pub origin: Option<Origin>,
}

/// Home-relative XDG directory: `$VAR`, else `$HOME/fallback`.
pub fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() && Path::new(&v).is_absolute() => Some(PathBuf::from(v)),
        _ => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(fallback)),
    }
}

/// Finds and reads the configuration file (its keys as `keys` allow): `explicit` (from `--config` or `$LEAF_CONFIG`, which must
/// exist), else `./leaf.toml`, else `$XDG_CONFIG_HOME/leafctl/leaf.toml`, else none.
pub fn load(
    explicit: Option<(PathBuf, Origin)>,
    keys: &[Key],
) -> Result<LoadedConfig, ConfigError> {
    let (path, origin) = match explicit {
        Some(found) => found,
        None => {
            let candidates = [
                Some(PathBuf::from("leaf.toml")),
                xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("leafctl").join("leaf.toml")),
            ];
            match candidates.into_iter().flatten().find(|p| p.is_file()) {
                Some(p) => (p, Origin::Default),
                None => return Ok(LoadedConfig::default()),
            }
        }
    };
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let file = parse(&text, keys).map_err(|message| ConfigError::Parse {
        path: path.clone(),
        message,
    })?;
    Ok(LoadedConfig {
        file,
        path: Some(path),
        origin: Some(origin),
    })
}

/// Keys whose values are secrets (`db.password`, `zk.auth`, `serve.token`), and `db.url`,
/// which may carry a password.
const SECRET_KEYS: [&str; 4] = ["password", "auth", "token", "url"];

/// The parser's explanation with its line and column, but without the excerpt of the file that
/// `toml` prints (which would show a password on the offending line), and with the values of
/// secret keys masked where the explanation quotes them (`invalid type: integer ...`).
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    let mut message = e.message().trim_end().to_string();
    for secret in secret_values(text) {
        message = message.replace(&secret, "***");
    }
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// Values written after a secret key anywhere in the text (also in inline tables), raw and
/// unquoted, plus the password part of a URL; longest first, at least 3 characters.
fn secret_values(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for key in SECRET_KEYS {
        let mut rest = text;
        while let Some(at) = rest.find(key) {
            let after = &rest[at + key.len()..];
            rest = after;
            let Some(value) = after
                .trim_start_matches([' ', '\t', '"', '\''])
                .strip_prefix('=')
            else {
                continue;
            };
            let value = value.lines().next().unwrap_or("").trim();
            let unquoted = value
                .split([',', '}'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\'']);
            for v in [value, unquoted] {
                found.push(v.to_string());
                // mysql://user:password@host/...
                if let Some((_, creds)) = v.split_once("://")
                    && let Some((creds, _)) = creds.rsplit_once('@')
                    && let Some((_, password)) = creds.split_once(':')
                {
                    found.push(password.to_string());
                }
            }
        }
    }
    found.retain(|v| v.chars().count() >= 3);
    found.sort_by_key(|v| std::cmp::Reverse(v.len()));
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snowflake::{Preset, SeqStart};

    /// The keys of these tests, with their types.
    pub(super) fn keys() -> Vec<Key> {
        fn key<T: serde::de::DeserializeOwned>(name: &'static str) -> Key {
            Key {
                name,
                check: |v| {
                    v.clone()
                        .try_into::<T>()
                        .map(drop)
                        .map_err(|e| e.message().to_string())
                },
            }
        }
        let strings = [
            "state_dir",
            "snowflake.name",
            "db.url",
            "db.password",
            "zk.auth",
            "serve.token",
            "serve.listen",
        ];
        let mut keys: Vec<Key> = strings.into_iter().map(key::<String>).collect();
        keys.extend([
            key::<Preset>("snowflake.preset"),
            key::<u64>("snowflake.worker_id"),
            key::<SeqStart>("snowflake.seq_start"),
            key::<u64>("etcd.lease_ttl_ms"),
            key::<usize>("serve.max_connections"),
        ]);
        keys
    }

    /// Loads `text` as the file given by --config.
    fn load_text(text: &str) -> Result<LoadedConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("leaf.toml");
        std::fs::write(&p, text).unwrap();
        load(Some((p, Origin::Flag)), &keys())
    }

    fn parse_error(text: &str) -> String {
        load_text(text).unwrap_err().to_string()
    }

    #[test]
    fn parse_errors_name_the_place_but_never_show_a_secret() {
        for (text, place) in [
            ("[db]\npassword=\"hunter22\n", "line 2"),
            ("[db]\npassword=hunter22\n", "line 2"),
            ("[db]\npassword = 12345678\n", "line 2"),
            ("[zk]\nauth = [\"leaf:hunter22\"]\n", "line 2"),
            ("[serve]\ntoken = 1234567890\n", "line 2"),
            ("[serve]\ntoken = \"hunter22\"\nbogus = 1\n", "line 3"),
            ("db = { password = 12345678, url = 5 }\n", "line 1"),
            (
                "[db]\nurl = \"mysql://u:hunter22@h/d\"\nurl2 = 1\n",
                "line 3",
            ),
        ] {
            let e = parse_error(text);
            assert!(e.contains(place), "{text:?}: {e}");
            for secret in ["hunter22", "12345678", "1234567890"] {
                assert!(!e.contains(secret), "{text:?} leaked: {e}");
            }
        }
        // Unknown keys and values of the wrong type are refused at their place.
        for (text, said) in [
            (
                "[snowflake]\nworker_id = \"x\"\n",
                "line 2, column 13: invalid type",
            ),
            (
                "[snowflake]\nworkr_id = 3\n",
                "line 2, column 1: unknown field `workr_id`",
            ),
            (
                "[snowflake]\npreset = \"nope\"\n",
                "line 2, column 10: unknown variant",
            ),
        ] {
            let e = parse_error(text);
            assert!(e.contains(said), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_full_file_parses() {
        let c = load_text(
            "state_dir = \"/tmp/x\"\n[snowflake]\npreset = \"discord\"\nworker_id = 3\nseq_start = \"zero\"\n[db]\nurl = \"sqlite:///tmp/a.db\"\n",
        )
        .unwrap();
        assert_eq!(c.file.get("snowflake.preset"), Some(&"discord".into()));
        assert_eq!(c.file.get("snowflake.worker_id"), Some(&3.into()));
        assert_eq!(c.file.get("snowflake.seq_start"), Some(&"zero".into()));
    }

    #[test]
    fn a_missing_explicit_file_is_an_error() {
        let r = load(
            Some((PathBuf::from("/nonexistent/leaf.toml"), Origin::Flag)),
            &keys(),
        );
        assert!(matches!(r, Err(ConfigError::Read { .. })));
    }
}

/// Parser fuzzing (issue 8): arbitrary text as a config file never panics, and a malformed
/// secret line is never echoed. `PROPTEST_CASES=100000 cargo test --release --lib fuzz_`.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// The ways a hand-edited secret line goes wrong.
    fn malformed(key: &str, secret: &str, form: usize) -> String {
        match form {
            0 => format!("{key} = \"{secret}"),
            1 => format!("{key} = {secret}"),
            2 => format!("{key} = \"{secret}\" trailing"),
            3 => format!("{key} = ['{secret}']"),
            4 => format!("{key} = {{ x = \"{secret}\" }}"),
            5 => format!("{key} = '{secret}"),
            6 => format!("{key} = \"\"\"{secret}"),
            7 => format!("{key} = 1{secret}"),
            _ => format!("{key}={secret}\"\""),
        }
    }

    proptest! {
        #[test]
        fn fuzz_arbitrary_text_never_panics(text in any::<String>()) {
            let _ = parse(&text, &super::tests::keys());
        }

        #[test]
        fn fuzz_a_malformed_secret_is_never_echoed(
            section in prop::sample::select(vec![("db", "password"), ("zk", "auth"), ("serve", "token"), ("db", "url")]),
            secret in "[A-Za-z0-9]{8,16}",
            form in 0usize..9,
            before in "(\\[snowflake\\]\nworker_id = [0-9]{1,3}\n)?",
            after in "([a-z_]{1,8} = [0-9a-z\"]{0,6}\n){0,2}",
        ) {
            let text = format!("{before}[{}]\n{}\n{after}", section.0, malformed(section.1, &secret, form));
            if let Err(m) = parse(&text, &super::tests::keys()) {
                prop_assert!(!m.contains(&secret), "{:?} -> {}", text, m);
            }
        }

        #[test]
        fn fuzz_a_written_config_reads_back(
            worker in proptest::option::of(any::<u64>()),
            name in proptest::option::of(".{0,20}"),
            url in proptest::option::of(".{0,40}"),
            ttl in proptest::option::of(any::<u64>()),
            listen in proptest::option::of(".{0,20}"),
            max in proptest::option::of(0usize..1_000_000),
        ) {
            let mut c = ConfigFile::default();
            // TOML integers are i64: larger numbers are no value a file can hold.
            let worker = worker.filter(|w| i64::try_from(*w).is_ok());
            let ttl = ttl.filter(|t| i64::try_from(*t).is_ok());
            for (key, value) in [
                ("snowflake.worker_id", worker.map(|w| toml::Value::from(w as i64))),
                ("snowflake.name", name.map(toml::Value::from)),
                ("db.url", url.map(toml::Value::from)),
                ("etcd.lease_ttl_ms", ttl.map(|t| toml::Value::from(t as i64))),
                ("serve.listen", listen.map(toml::Value::from)),
                ("serve.max_connections", max.map(|m| toml::Value::from(m as i64))),
            ] {
                if let Some(value) = value {
                    c.set(key, value);
                }
            }
            let text = c.to_toml();
            let back = parse(&text, &super::tests::keys()).unwrap();
            prop_assert_eq!(back.to_toml(), text);
        }
    }
}
