//! Effective settings. Each setting is declared once ([`defs`], as [`decl`] says: its config key, environment
//! variable, flag, typed default, check and help), as ripgrep declares its flags; the command
//! line's arguments, the config file's keys and `config show --help` are made from the
//! declarations ([`derived`]); resolution ([`resolve`]) reads them (flag > environment > config
//! file > default, the origin kept), and `leafctl config show` prints what it recorded.

mod decl;
mod defs;
mod derived;
mod key;
mod layout;
mod password;
mod resolve;

use clap::ArgMatches;
use leafctl::config::{LoadedConfig, Origin};
use leafctl::region::{Region, RegionError};
use leafctl::server::HttpOptions;
use leafctl::worker::setting::SettingValues;

pub use decl::scope;
use defs::*;
pub use derived::{Flags, file_keys, settings_help};
pub use layout::LayoutChoice;
use password::{password_from_file, warn_if_readable_by_others};
use resolve::Resolver;
pub use resolve::{Shown, env_var};

pub use leafctl::config::Resolved;

/// Everything the commands need to know from flags, environment and config file: each
/// setting's value ([`Values`], which this dereferences to) and those made of several.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The settings that are values of their own.
    values: Values,
    /// The snowflake layout: a preset or a custom one.
    pub layout: Resolved<LayoutChoice>,
    /// How `serve` treats connections (its header timeout and connection cap).
    pub http: HttpOptions,
    /// The database password, from wherever it was given.
    pub db_password: Option<Resolved<String>>,
    /// The registry backends' own settings (`--zk`, `etcd.*`, `--worker-id`, ...), as each
    /// backend reads them ([`leafctl::worker::RegistrySettings::values`]).
    pub registry_values: SettingValues,
    /// This deployment's region (`--region` with `--regions`); none when neither is given.
    pub region: Option<Region>,
    /// The region count alone (`--regions N`, checked to be 2 to 8): what `decode` reads an
    /// ID's region with; the other commands need `--region` too ([`Settings::region`]).
    pub region_count: Option<u32>,
    /// What each setting resolved to, in the order of [`all`] (`config show`).
    pub shown: Vec<Shown>,
    /// The keys of the settings given on the command line.
    given: Vec<&'static str>,
}

impl std::ops::Deref for Settings {
    type Target = Values;
    fn deref(&self) -> &Values {
        &self.values
    }
}

impl Settings {
    /// Resolves every setting from the command line's `matches`, the environment and the
    /// loaded config file.
    /// `count_alone`: `--regions` may come without `--region` (`decode`).
    pub fn resolve(
        matches: &ArgMatches,
        config: LoadedConfig,
        count_alone: bool,
    ) -> anyhow::Result<Settings> {
        let mut r = Resolver::new(matches, &config.file);
        r.shown.push(config_row(&config));
        // Resolved in this order: the first setting refused is the one reported.
        let mut s = Settings {
            values: Values::resolve(&mut r)?,
            layout: layout::resolve(&mut r)?,
            http: HttpOptions {
                header_timeout: std::time::Duration::from_millis(
                    r.value(&SERVE_HEADER_TIMEOUT)?.value,
                ),
                max_connections: r.value(&SERVE_MAX_CONNECTIONS)?.value,
                ..HttpOptions::default()
            },
            db_password: password_from_file(r.get(&DB_PASSWORD)?, r.get(&DB_PASSWORD_FILE)?)?,
            registry_values: registry_values(&mut r)?,
            region: None,
            region_count: None,
            shown: Vec::new(),
            given: Vec::new(),
        };
        (s.region, s.region_count) = region_and_count(&s.values, count_alone)?;
        warn_of_secrets_in_file(&config);
        // In the order of `all`, as `config show` lists them.
        let order = |key: &str| {
            all()
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
    /// bits), as typed (`--worker-id`), in the order of [`all`].
    pub fn flags_given(&self, scopes: u8) -> Vec<String> {
        all()
            .iter()
            .map(|s| s.info())
            .filter(|info| self.given.contains(&info.key))
            .filter_map(|info| info.flag)
            .filter(|flag| flag.scope & scopes != 0)
            .map(|flag| format!("--{}", flag.long))
            .collect()
    }

    /// The flags a command suggested next must carry to open the same stores: ` --db URL`
    /// (without its password) when the database came from the command line, and ` --region R
    /// --regions N` when the region did, each quoted for a shell. From the environment or the
    /// config file they are found again.
    pub fn flags_for_next(&self) -> String {
        self.db_flag_for_next() + &self.region_flags_for_next()
    }

    /// ` --db URL` (without its password, quoted for a shell) when the database came from the
    /// command line, else empty: [`Settings::flags_for_next`]'s first part.
    pub fn db_flag_for_next(&self) -> String {
        if !self.given.contains(&"db.url") {
            return String::new();
        }
        let url = leafctl::db::url_without_password(&self.db_url.value);
        format!(" --db {}", leafctl::segment::tag_for_shell(&url))
    }

    /// Where this process's segment stores keep their claims: its region's block, resolved once
    /// (what a store opened with the settings is confined to).
    pub fn bounds(&self) -> leafctl::segment::Bounds {
        leafctl::segment::Bounds::of(self.region)
    }

    /// The worker ids this process may hold: its region's, resolved once for every registry.
    pub fn worker_scope(&self) -> leafctl::worker::WorkerScope {
        leafctl::worker::WorkerScope::of(self.region)
    }

    /// ` --region R --regions N` when the region came from the command line, else empty:
    /// [`Settings::flags_for_next`]'s second part.
    pub fn region_flags_for_next(&self) -> String {
        match self.region {
            Some(r) if self.given.contains(&"region") || self.given.contains(&"regions") => {
                format!(" --region {} --regions {}", r.index(), r.count())
            }
            _ => String::new(),
        }
    }
}

/// The registry backends' own settings, each resolved as the backend declares it.
fn registry_values(r: &mut Resolver<'_>) -> anyhow::Result<SettingValues> {
    let mut values = SettingValues::default();
    for g in gathered() {
        if let Some(value) = r.gathered(g)? {
            values.set(g.setting, value);
        }
    }
    Ok(values)
}

/// `config show`'s first row: the config file read, and how it was found.
fn config_row(config: &LoadedConfig) -> Shown {
    Shown {
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
    }
}

/// This deployment's region and the region count from `--region` and `--regions` (values
/// bounded by their flags' parsers and checks; the pair is checked here). `count_alone`: the
/// count may come without the region (`decode`, `workers`), and is still checked.
fn region_and_count(
    values: &Values,
    count_alone: bool,
) -> anyhow::Result<(Option<Region>, Option<u32>)> {
    let number =
        |v: &Option<Resolved<u64>>| v.as_ref().map(|r| r.value.min(u32::MAX as u64) as u32);
    let (index, count) = (number(&values.region_index), number(&values.region_count));
    let region = match Region::from_settings(index, count) {
        // `decode`/`workers` with `--regions N` read regions; the count is still checked.
        Err(RegionError::HalfGiven { .. }) if count_alone && index.is_none() => {
            count.map(|n| Region::new(0, n)).transpose()?;
            None
        }
        other => other?,
    };
    Ok((region, count))
}

/// A secret in a config file others may read: says so, for each such key.
fn warn_of_secrets_in_file(config: &LoadedConfig) {
    if let Some(path) = &config.path {
        for info in all().iter().map(|d| d.info()) {
            if info.secret && config.file.get(info.key).is_some() {
                warn_if_readable_by_others(path, info.key, info.env.unwrap_or("the environment"));
            }
        }
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
        Settings::resolve(&matches, loaded, false)
    }

    fn instance(text: &str) -> Option<String> {
        resolve(text).unwrap().instance.clone().map(|r| r.value)
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

    /// The declaration of a registry backend's own setting `key`, as this table gathered it.
    fn gathered_info(key: &str) -> &'static decl::Info {
        let g = gathered().iter().find(|g| g.info.key == key);
        &g.unwrap_or_else(|| panic!("no backend declares {key}"))
            .info
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
            (
                gathered_info("etcd.lease_ttl_ms"),
                "1000",
                "below etcd's minimum",
            ),
            (
                gathered_info("db.registry_wait_timeout_s"),
                "5",
                "is not in 6..=",
            ),
            (
                gathered_info("zk.auth"),
                "\"nocolon\"",
                "is not user:password",
            ),
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
