//! Effective settings. Each setting is declared once ([`defs`], as [`decl`] says: its config key, environment
//! variable, flag, typed default, check and help), as ripgrep declares its flags; the command
//! line's arguments, the config file's keys and `config show --help` are made from the
//! declarations ([`derived`]); resolution ([`resolve`]) reads them (flag > environment > config
//! file > default, the origin kept), and `leafctl config show` prints what it recorded.

mod decl;
mod defs;
mod derived;
mod layout;
mod password;
mod resolve;

use std::path::PathBuf;

use clap::ArgMatches;
use leafctl::config::{LoadedConfig, Origin};
use leafctl::server::HttpOptions;
use leafctl::snowflake::SeqStart;
use leafctl::worker::RegistryKind;

pub use decl::scope;
use defs::*;
pub use derived::{Flags, file_keys, settings_help};
pub use layout::LayoutChoice;
use password::{password_from_file, warn_if_readable_by_others};
use resolve::Resolver;
pub use resolve::{Shown, env_var};

pub use leafctl::config::Resolved;

/// Everything the commands need to know from flags, environment and config file.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Directory for lock and state files.
    pub state_dir: Resolved<PathBuf>,
    /// The snowflake layout: a preset or a custom one.
    pub layout: Resolved<LayoutChoice>,
    /// The worker id given (the local registry).
    pub worker_id: Option<Resolved<u64>>,
    /// Namespace of worker ids.
    pub name: Resolved<String>,
    /// Where each tick's sequence starts.
    pub seq_start: Resolved<SeqStart>,
    /// The segment database's URL.
    pub db_url: Resolved<String>,
    /// The database password, from wherever it was given.
    pub db_password: Option<Resolved<String>>,
    /// How long MySQL/PostgreSQL keep a silent registry holder's lock.
    pub db_registry_wait_timeout_s: Resolved<u64>,
    /// The ZooKeeper worker registry.
    pub zk_hosts: Option<Resolved<String>>,
    /// ZooKeeper digest credentials.
    pub zk_auth: Option<Resolved<String>>,
    /// This process's identity in a worker-id registry.
    pub instance: Option<Resolved<String>>,
    /// Where worker ids come from, when given.
    pub registry: Option<Resolved<RegistryKind>>,
    /// ZooKeeper session timeout.
    pub zk_session_timeout_ms: Resolved<u64>,
    /// Largest clock difference to live peers.
    pub zk_max_clock_skew_ms: Resolved<u64>,
    /// The etcd worker registry.
    pub etcd_endpoints: Option<Resolved<String>>,
    /// etcd user.
    pub etcd_user: Option<Resolved<String>>,
    /// etcd user's password.
    pub etcd_password: Option<Resolved<String>>,
    /// CA certificates of https:// etcd endpoints.
    pub etcd_ca_file: Option<Resolved<PathBuf>>,
    /// TTL of the etcd lease behind a worker id.
    pub etcd_lease_ttl_ms: Resolved<u64>,
    /// Where `serve` listens.
    pub serve_listen: Resolved<String>,
    /// `serve` serves segment mode.
    pub serve_segment: Resolved<bool>,
    /// `serve` serves snowflake mode.
    pub serve_snowflake: Resolved<bool>,
    /// Bearer token `serve` requires.
    pub serve_token: Option<Resolved<String>>,
    /// How far snowflake times may run ahead of the clock.
    pub max_lead_ms: Resolved<u64>,
    /// How `serve` treats connections (its header timeout and connection cap).
    pub http: HttpOptions,
    /// Segment tags with their own /metrics series.
    pub serve_metrics_tags: Resolved<usize>,
    /// What each setting resolved to, in [`SETTINGS`] order (`config show`).
    pub shown: Vec<Shown>,
    /// The keys of the settings given on the command line.
    given: Vec<&'static str>,
}

impl Settings {
    /// Resolves every setting from the command line's `matches`, the environment and the
    /// loaded config file.
    pub fn resolve(matches: &ArgMatches, config: LoadedConfig) -> anyhow::Result<Settings> {
        let mut r = Resolver::new(matches, &config.file);
        r.shown.push(Shown {
            key: "config",
            value: config.path.as_ref().map(|p| p.display().to_string()),
            source: config
                .origin
                .as_ref()
                .map(|o| match o {
                    Origin::Default => "found".to_string(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "none found".into()),
        });
        // Resolved in this order: the first setting refused is the one reported.
        let mut s = Settings {
            state_dir: r.value(&STATE_DIR)?,
            layout: layout::resolve(&mut r)?,
            worker_id: r.get(&WORKER_ID)?,
            name: r.value(&NAME)?,
            seq_start: r.value(&SEQ_START)?,
            max_lead_ms: r.value(&MAX_LEAD)?,
            db_url: r.value(&DB_URL)?,
            registry: r.get(&REGISTRY)?,
            zk_hosts: r.get(&ZK_HOSTS)?,
            zk_auth: r.get(&ZK_AUTH)?,
            instance: r.get(&INSTANCE)?,
            zk_session_timeout_ms: r.value(&ZK_SESSION_TIMEOUT)?,
            zk_max_clock_skew_ms: r.value(&ZK_MAX_CLOCK_SKEW)?,
            etcd_endpoints: r.get(&ETCD_ENDPOINTS)?,
            etcd_user: r.get(&ETCD_USER)?,
            etcd_password: r.get(&ETCD_PASSWORD)?,
            etcd_ca_file: r.get(&ETCD_CA_FILE)?,
            etcd_lease_ttl_ms: r.value(&ETCD_LEASE_TTL)?,
            serve_listen: r.value(&SERVE_LISTEN)?,
            serve_segment: r.value(&SERVE_SEGMENT)?,
            serve_snowflake: r.value(&SERVE_SNOWFLAKE)?,
            serve_token: r.get(&SERVE_TOKEN)?,
            http: HttpOptions {
                header_timeout: std::time::Duration::from_millis(
                    r.value(&SERVE_HEADER_TIMEOUT)?.value,
                ),
                max_connections: r.value(&SERVE_MAX_CONNECTIONS)?.value,
                ..HttpOptions::default()
            },
            serve_metrics_tags: r.value(&SERVE_METRICS_TAGS)?,
            db_password: password_from_file(r.get(&DB_PASSWORD)?, r.get(&DB_PASSWORD_FILE)?)?,
            db_registry_wait_timeout_s: r.value(&DB_REGISTRY_WAIT_TIMEOUT)?,
            shown: Vec::new(),
            given: Vec::new(),
        };
        // A secret in a file others may read: say so.
        if let Some(path) = &config.path {
            for info in SETTINGS.iter().map(|d| d.info()) {
                if info.secret && config.file.get(info.key).is_some() {
                    warn_if_readable_by_others(
                        path,
                        info.key,
                        info.env.unwrap_or("the environment"),
                    );
                }
            }
        }
        // In `SETTINGS` order, as `config show` lists them.
        let order = |key: &str| {
            SETTINGS
                .iter()
                .position(|s| s.info().key == key)
                .map_or(0, |i| i + 1)
        };
        r.shown.sort_by_key(|row| order(row.key));
        s.shown = r.shown;
        s.given = r.given;
        Ok(s)
    }

    /// Where the database password in use came from, in words for a hint (`None`: none given).
    pub fn db_password_source(&self) -> Option<String> {
        password::source(self.db_password.as_ref(), &self.db_url.value)
    }

    /// The flags given on the command line of the settings of `scopes` (a mask of [`scope`]
    /// bits), as typed (`--worker-id`), in [`SETTINGS`] order.
    pub fn flags_given(&self, scopes: u8) -> Vec<String> {
        SETTINGS
            .iter()
            .map(|s| s.info())
            .filter(|info| self.given.contains(&info.key))
            .filter_map(|info| info.flag)
            .filter(|flag| flag.scope & scopes != 0)
            .map(|flag| format!("--{}", flag.long))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves `config show` under the config file `text` (and this process's environment).
    fn resolve(text: &str) -> anyhow::Result<Settings> {
        use clap::CommandFactory;
        let matches = crate::cli::Cli::command().get_matches_from(["leafctl", "config", "show"]);
        let file = leafctl::config::parse(text, &file_keys()).map_err(anyhow::Error::msg)?;
        let loaded = LoadedConfig {
            file,
            path: None,
            origin: None,
        };
        Settings::resolve(&matches, loaded)
    }

    fn instance(text: &str) -> Option<String> {
        resolve(text).unwrap().instance.map(|r| r.value)
    }

    #[test]
    fn the_identity_is_read_under_its_former_key_too() {
        assert_eq!(
            instance("[snowflake]\ninstance = \"10.0.0.1:1\"\n").as_deref(),
            Some("10.0.0.1:1")
        );
        assert_eq!(
            instance("[zk]\ninstance = \"10.0.0.2:1\"\n").as_deref(),
            Some("10.0.0.2:1")
        );
        assert_eq!(
            instance("[zk]\ninstance = \"old:1\"\n[snowflake]\ninstance = \"new:1\"\n").as_deref(),
            Some("new:1")
        );
        let s = resolve("[zk]\ninstance = \"10.0.0.2:1\"\n").unwrap();
        let row = s.shown.iter().find(|r| r.key == INSTANCE.info.key).unwrap();
        assert_eq!(row.source, "config file");
    }

    /// A config file setting `info`'s key to `value` (TOML).
    fn file_setting(info: &decl::Info, value: &str) -> String {
        match info.key.split_once('.') {
            Some((section, key)) => format!("[{section}]\n{key} = {value}\n"),
            None => format!("{} = {value}\n", info.key),
        }
    }

    #[test]
    fn checks_refuse_what_a_setting_does_not_allow() {
        for (info, value, problem) in [
            (
                &SERVE_HEADER_TIMEOUT.info,
                "0",
                "would close every connection",
            ),
            (
                &SERVE_MAX_CONNECTIONS.info,
                "0",
                "would refuse every client",
            ),
            (&ETCD_LEASE_TTL.info, "1000", "below etcd's minimum"),
            (&DB_REGISTRY_WAIT_TIMEOUT.info, "5", "is not in 6..="),
            (&ZK_AUTH.info, "\"nocolon\"", "is not user:password"),
            (&MAX_LEAD.info, "60001", "more than the 60000 ms allowed"),
        ] {
            let text = file_setting(info, value);
            let e = resolve(&text).unwrap_err().to_string();
            assert!(e.contains(problem), "{text}: {e}");
            let e = resolve(&text).unwrap_err();
            let hint = e.downcast_ref::<crate::cli::error::CliError>();
            let hint = hint.and_then(|c| c.hint.clone()).unwrap_or_default();
            assert!(hint.contains(info.key), "{text}: {hint}");
        }
        // What serve is given is what resolution found.
        let s = resolve(&file_setting(&SERVE_MAX_CONNECTIONS.info, "9")).unwrap();
        assert_eq!(s.http.max_connections, 9);
        let text = file_setting(&SERVE_HEADER_TIMEOUT.info, "250");
        let row = resolve(&text).unwrap().shown;
        let row = row.iter().find(|r| r.key == SERVE_HEADER_TIMEOUT.info.key);
        assert_eq!(row.and_then(|r| r.value.as_deref()), Some("250"));
    }

    #[test]
    fn the_file_is_read_by_the_declared_types() {
        let e = resolve("[snowflake]\nlayout = \"41,10\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("41,10,12"), "{e}");
        let e = resolve("[etcd]\npassword = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `password`"), "{e}");
        let s = resolve("[snowflake]\nlayout = \"40,11,12\"\n").unwrap();
        assert_eq!(s.layout.value.label, "custom");
        assert_eq!(s.layout.origin, Origin::File);
    }
}
