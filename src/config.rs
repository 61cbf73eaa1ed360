//! The TOML configuration file: its model and where it is looked for.
//!
//! Every setting can also come from a flag or an environment variable; the CLI resolves them in the
//! order flag > environment > file > built-in default and remembers which one won ([`Origin`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::snowflake::{Preset, SeqStart};

pub mod leaf;
pub mod properties;

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

/// Where a setting's effective value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// A command-line flag.
    Flag,
    /// An environment variable (named).
    Env(String),
    /// The configuration file.
    File,
    /// leafctl's built-in default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag => f.write_str("flag"),
            Origin::Env(var) => write!(f, "env {var}"),
            Origin::File => f.write_str("config file"),
            Origin::Default => f.write_str("default"),
        }
    }
}

impl Origin {
    /// How strong an origin is: flag > environment > file > default.
    pub fn rank(&self) -> u8 {
        match self {
            Origin::Flag => 3,
            Origin::Env(_) => 2,
            Origin::File => 1,
            Origin::Default => 0,
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<T> {
    /// The effective value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

/// The whole file. Unknown keys are errors, so a typo does not silently fall back to a default.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Directory for lock and state files (default `$XDG_STATE_HOME/leafctl`).
    pub state_dir: Option<PathBuf>,
    /// `[snowflake]` settings.
    #[serde(default)]
    pub snowflake: SnowflakeSection,
    /// `[db]` settings.
    #[serde(default)]
    pub db: DbSection,
    /// `[zk]` settings: the ZooKeeper worker registry.
    #[serde(default)]
    pub zk: ZkSection,
    /// `[serve]` settings: `leafctl serve`.
    #[serde(default)]
    pub serve: ServeSection,
    /// `[etcd]` settings: the etcd worker registry.
    #[serde(default)]
    pub etcd: EtcdSection,
}

/// `[etcd]`: where worker ids are leased in etcd, mirroring `--etcd`, `LEAF_ETCD_USER` and
/// `LEAF_ETCD_CA_FILE`. The password only comes from `LEAF_ETCD_PASSWORD`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EtcdSection {
    /// Endpoints `http(s)://host:port[,...]` (`host:port` means plain HTTP).
    pub endpoints: Option<String>,
    /// User name when etcd has authentication enabled (password in `LEAF_ETCD_PASSWORD`).
    pub user: Option<String>,
    /// PEM file with the CA certificate(s) for `https://` endpoints (default: the system's roots).
    pub ca_file: Option<PathBuf>,
    /// TTL of the etcd lease behind a worker id, in ms, rounded up to whole seconds (default 10000).
    pub lease_ttl_ms: Option<u64>,
}

/// `[serve]`: the HTTP service, mirroring `serve --listen/--segment/--snowflake` and
/// `LEAF_SERVE_TOKEN`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// Address to listen on, `IP:PORT` (default `127.0.0.1:8080`).
    pub listen: Option<String>,
    /// Serve segment mode (Leaf's `leaf.segment.enable`).
    pub segment: Option<bool>,
    /// Serve snowflake mode (Leaf's `leaf.snowflake.enable`).
    pub snowflake: Option<bool>,
    /// Bearer token every route but `/healthz` and `/readyz` requires (prefer
    /// `LEAF_SERVE_TOKEN`).
    pub token: Option<String>,
    /// A request's headers must arrive within this many ms, which also closes idle connections
    /// (default 10000).
    pub header_timeout_ms: Option<u64>,
    /// Most connections open at once (default 4096; also capped by the open-file limit).
    pub max_connections: Option<usize>,
    /// Most segment tags with series of their own in `/metrics` (default 100; totals cover
    /// every tag).
    pub metrics_tags: Option<usize>,
}

/// `[zk]`: where worker ids are registered in ZooKeeper, mirroring `--zk`, `--instance` and
/// `LEAF_ZK_AUTH`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZkSection {
    /// Connect string `host:port[,host:port...]`.
    pub hosts: Option<String>,
    /// Digest credentials `user:password` (prefer `LEAF_ZK_AUTH`).
    pub auth: Option<String>,
    /// This process's identity `IP:PORT` (default: first non-loopback IPv4 and port 8080).
    pub instance: Option<String>,
    /// Session timeout in ms (default 6000).
    pub session_timeout_ms: Option<u64>,
    /// Largest clock difference to live peers accepted at first registration, in ms (default 5000).
    pub max_clock_skew_ms: Option<u64>,
}

/// `[snowflake]`: the ID layout and the local worker id.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SnowflakeSection {
    /// A named layout.
    pub preset: Option<Preset>,
    /// Custom epoch: Unix ms or RFC 3339.
    pub epoch: Option<String>,
    /// Custom widths `TIME,WORKER,SEQ`.
    pub layout: Option<String>,
    /// Custom tick length in ms.
    pub unit_ms: Option<u64>,
    /// The local worker id.
    pub worker_id: Option<u64>,
    /// Leaf's `leaf.name`: the namespace of worker ids.
    pub name: Option<String>,
    /// Where each tick's sequence starts.
    pub seq_start: Option<SeqStart>,
    /// Where worker ids come from: `local`, `forever`, `lease` or `mysql`.
    pub registry: Option<String>,
    /// How far (ms) issued times may run ahead of the clock when a millisecond's sequence numbers
    /// are used up (0: never, Leaf's behaviour; at most 60000).
    pub max_lead_ms: Option<u64>,
}

/// `[db]`: the segment store.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DbSection {
    /// `mysql://user@host:port/db`, `postgres://user@host:port/db` or `sqlite://PATH`.
    pub url: Option<String>,
    /// The database password (prefer `LEAF_DB_PASSWORD`).
    pub password: Option<String>,
    /// A file holding the database password (its first line), like `LEAF_DB_PASSWORD_FILE`.
    pub password_file: Option<std::path::PathBuf>,
    /// The MySQL worker registry's session `wait_timeout` in seconds: how long a worker id stays
    /// locked by a holder MySQL no longer hears from (default 30, at least 6).
    pub registry_wait_timeout_s: Option<u64>,
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

/// Finds and reads the configuration file: `explicit` (from `--config` or `$LEAF_CONFIG`, which must
/// exist), else `./leaf.toml`, else `$XDG_CONFIG_HOME/leafctl/leaf.toml`, else none.
pub fn load(explicit: Option<(PathBuf, Origin)>) -> Result<LoadedConfig, ConfigError> {
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
    let file: ConfigFile = toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.clone(),
        message: parse_message(&text, &e),
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

    fn parse_error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("leaf.toml");
        std::fs::write(&p, text).unwrap();
        load(Some((p, Origin::Flag))).unwrap_err().to_string()
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
        let e = parse_error("[snowflake]\nworker_id = \"x\"\n");
        assert!(
            e.contains("line 2, column 13") && e.contains("invalid type"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("leaf.toml");
        std::fs::write(&p, "[snowflake]\nworkr_id = 3\n").unwrap();
        let err = load(Some((p, Origin::Flag))).unwrap_err();
        assert!(err.to_string().contains("workr_id"), "{err}");
    }

    #[test]
    fn a_full_file_parses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("leaf.toml");
        std::fs::write(
            &p,
            "state_dir = \"/tmp/x\"\n[snowflake]\npreset = \"discord\"\nworker_id = 3\nseq_start = \"zero\"\n[db]\nurl = \"sqlite:///tmp/a.db\"\n",
        )
        .unwrap();
        let c = load(Some((p, Origin::Flag))).unwrap();
        assert_eq!(c.file.snowflake.preset, Some(Preset::Discord));
        assert_eq!(c.file.snowflake.worker_id, Some(3));
        assert_eq!(c.file.snowflake.seq_start, Some(SeqStart::Zero));
    }

    #[test]
    fn a_missing_explicit_file_is_an_error() {
        let r = load(Some((
            PathBuf::from("/nonexistent/leaf.toml"),
            Origin::Flag,
        )));
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
            if let Err(e) = toml::from_str::<ConfigFile>(&text) {
                let _ = parse_message(&text, &e);
            }
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
            if let Err(e) = toml::from_str::<ConfigFile>(&text) {
                let m = parse_message(&text, &e);
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
            c.snowflake.worker_id = worker;
            c.snowflake.name = name;
            c.db.url = url;
            c.etcd.lease_ttl_ms = ttl;
            c.serve.listen = listen;
            c.serve.max_connections = max;
            let text = toml::to_string(&c).unwrap();
            let back: ConfigFile = toml::from_str(&text).unwrap();
            prop_assert_eq!(toml::to_string(&back).unwrap(), text);
        }
    }
}
