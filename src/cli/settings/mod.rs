//! Effective settings. Each setting is declared once in [`SETTINGS`] (its config key,
//! environment variable, flag, default and help), as ripgrep declares its flags; resolution reads
//! the declaration (flag > environment > config file > default, the origin kept), `leafctl config
//! show` prints what resolution recorded, and `config show --help` (so its man page) lists the
//! declarations.

use std::any::Any;
use std::path::PathBuf;
use std::str::FromStr;

use clap::ArgMatches;
use clap::parser::ValueSource;
use leafctl::config::{self, LoadedConfig, Origin};
use leafctl::segment::redact_url;
use leafctl::snowflake::{BitWidths, LEAF_EPOCH_MS, Layout, MAX_LEAD_MS, Preset, SeqStart};
use leafctl::worker::RegistryKind;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::usage;
use super::time::parse_instant;

pub use leafctl::config::Resolved;

/// One setting, declared once: where each source spells it and what it is.
#[derive(Debug)]
pub struct Setting {
    /// The config file key (`serve.listen`), also its name in `config show`.
    pub key: &'static str,
    /// The environment variable, if any.
    pub env: Option<&'static str>,
    /// The command-line flag as typed (`--listen`) and its argument's id, if any.
    pub flag: Option<(&'static str, &'static str)>,
    /// The default, as people read it; `None`: unset unless given.
    pub default: Option<&'static str>,
    /// What a value is, for messages (`IP:PORT`, `timeout in ms`).
    pub what: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Never shown: `config show` prints `***`.
    pub secret: bool,
    /// `config show` prints its own row; false for the parts shown in another's row (the
    /// custom layout's keys, shown as `snowflake.layout`).
    pub row: bool,
}

impl Setting {
    const fn new(key: &'static str, what: &'static str, help: &'static str) -> Setting {
        Setting {
            key,
            env: None,
            flag: None,
            default: None,
            what,
            help,
            secret: false,
            row: true,
        }
    }
    const fn env(mut self, var: &'static str) -> Setting {
        self.env = Some(var);
        self
    }
    const fn flag(mut self, flag: &'static str, id: &'static str) -> Setting {
        self.flag = Some((flag, id));
        self
    }
    const fn default(mut self, default: &'static str) -> Setting {
        self.default = Some(default);
        self
    }
    const fn secret(mut self) -> Setting {
        self.secret = true;
        self
    }
    const fn part_of_another_row(mut self) -> Setting {
        self.row = false;
        self
    }
}

pub const STATE_DIR: Setting =
    Setting::new("state_dir", "path", "directory for lock and state files")
        .env("LEAF_STATE_DIR")
        .flag("--state-dir", "state_dir")
        .default("$XDG_STATE_HOME/leafctl");
pub const PRESET: Setting = Setting::new(
    "snowflake.preset",
    "preset",
    "named snowflake layout (leaf, discord, sonyflake, baidu, ...)",
)
.env("LEAF_PRESET")
.flag("--preset", "preset")
.default("leaf")
.part_of_another_row();
pub const EPOCH: Setting = Setting::new(
    "snowflake.epoch",
    "epoch",
    "custom layout: epoch as Unix ms or RFC 3339",
)
.env("LEAF_EPOCH")
.flag("--epoch", "epoch")
.part_of_another_row();
pub const LAYOUT: Setting = Setting::new(
    "snowflake.layout",
    "layout",
    "custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use)",
)
.env("LEAF_LAYOUT")
.flag("--layout", "widths")
.default("leaf");
pub const UNIT_MS: Setting = Setting::new(
    "snowflake.unit_ms",
    "unit in ms",
    "custom layout: length of one time unit in ms",
)
.env("LEAF_UNIT_MS")
.flag("--unit-ms", "unit_ms")
.part_of_another_row();
pub const WORKER_ID: Setting = Setting::new(
    "snowflake.worker_id",
    "worker id",
    "worker id of this process (the local registry)",
)
.env("LEAF_WORKER_ID")
.flag("--worker-id", "worker_id");
pub const NAME: Setting = Setting::new(
    "snowflake.name",
    "name",
    "namespace of worker ids (Leaf's leaf.name)",
)
.env("LEAF_NAME")
.flag("--name", "name")
.default("leaf");
pub const SEQ_START: Setting = Setting::new(
    "snowflake.seq_start",
    "sequence start",
    "where each tick's sequence starts: random (Leaf) or zero",
)
.env("LEAF_SEQ_START")
.flag("--seq-start", "seq_start")
.default("random");
pub const MAX_LEAD: Setting = Setting::new(
    "snowflake.max_lead_ms",
    "lead in ms (a whole number from 0 to 60000)",
    "how far (ms) snowflake times may run ahead of the clock",
)
.env("LEAF_MAX_LEAD_MS")
.flag("--max-lead", "max_lead")
.default("0");
pub const DB_URL: Setting = Setting::new(
    "db.url",
    "database URL",
    "segment database: mysql://user@host:port/db, postgres://user@host:port/db or sqlite://PATH",
)
.env("LEAF_DB")
.flag("--db", "db")
.default("sqlite://$XDG_DATA_HOME/leafctl/leaf.db");
pub const REGISTRY: Setting = Setting::new(
    "snowflake.registry",
    "registry",
    "where worker ids come from: local, forever, lease, mysql, postgres or etcd",
)
.env("LEAF_REGISTRY")
.flag("--registry", "registry");
pub const ZK_HOSTS: Setting = Setting::new(
    "zk.hosts",
    "ZooKeeper hosts",
    "ZooKeeper worker registry, host:port[,host:port...]",
)
.env("LEAF_ZK")
.flag("--zk", "zk");
pub const ZK_AUTH: Setting = Setting::new(
    "zk.auth",
    "user:password",
    "ZooKeeper digest credentials; nodes get a creator-only ACL",
)
.env("LEAF_ZK_AUTH")
.secret();
pub const INSTANCE: Setting = Setting::new(
    "zk.instance",
    "IP:PORT",
    "this process's identity in a registry",
)
.env("LEAF_INSTANCE")
.flag("--instance", "instance")
.default("first non-loopback IPv4, port 8080");
pub const ZK_SESSION_TIMEOUT: Setting = Setting::new(
    "zk.session_timeout_ms",
    "timeout in ms",
    "ZooKeeper session timeout",
)
.env("LEAF_ZK_SESSION_TIMEOUT_MS")
.default("6000");
pub const ZK_MAX_CLOCK_SKEW: Setting = Setting::new(
    "zk.max_clock_skew_ms",
    "skew in ms",
    "largest clock difference to live peers (first registration, workers doctor)",
)
.env("LEAF_ZK_MAX_CLOCK_SKEW_MS")
.default("5000");
pub const ETCD_ENDPOINTS: Setting = Setting::new(
    "etcd.endpoints",
    "etcd endpoints",
    "etcd worker registry, http(s)://host:port[,...]",
)
.env("LEAF_ETCD")
.flag("--etcd", "etcd");
pub const ETCD_USER: Setting =
    Setting::new("etcd.user", "user name", "etcd user").env("LEAF_ETCD_USER");
pub const ETCD_PASSWORD: Setting = Setting::new(
    "etcd.password",
    "password",
    "etcd user's password (environment only)",
)
.env("LEAF_ETCD_PASSWORD")
.secret();
pub const ETCD_CA_FILE: Setting = Setting::new(
    "etcd.ca_file",
    "path",
    "CA certificates of https:// etcd endpoints",
)
.env("LEAF_ETCD_CA_FILE")
.default("the system's roots");
pub const ETCD_LEASE_TTL: Setting = Setting::new(
    "etcd.lease_ttl_ms",
    "TTL in ms",
    "TTL of the etcd lease behind a worker id (whole seconds, at least 2000)",
)
.env("LEAF_ETCD_LEASE_TTL_MS")
.default("10000");
pub const SERVE_LISTEN: Setting = Setting::new(
    "serve.listen",
    "IP:PORT",
    "address `leafctl serve` listens on",
)
.env("LEAF_SERVE_LISTEN")
.flag("--listen", "listen")
.default(DEFAULT_LISTEN);
pub const SERVE_SEGMENT: Setting = Setting::new(
    "serve.segment",
    "boolean (true or false)",
    "serve segment mode",
)
.env("LEAF_SERVE_SEGMENT")
.flag("--segment", "segment")
.default("false");
pub const SERVE_SNOWFLAKE: Setting = Setting::new(
    "serve.snowflake",
    "boolean (true or false)",
    "serve snowflake mode",
)
.env("LEAF_SERVE_SNOWFLAKE")
.flag("--snowflake", "snowflake")
.default("false");
pub const SERVE_TOKEN: Setting = Setting::new(
    "serve.token",
    "token",
    "bearer token every route but /healthz and /readyz requires",
)
.env("LEAF_SERVE_TOKEN")
.secret();
pub const SERVE_HEADER_TIMEOUT: Setting = Setting::new(
    "serve.header_timeout_ms",
    "timeout in ms",
    "a request's headers (and idle connections) within this many ms",
)
.env("LEAF_SERVE_HEADER_TIMEOUT_MS")
.default("10000");
pub const SERVE_MAX_CONNECTIONS: Setting = Setting::new(
    "serve.max_connections",
    "number of connections",
    "most connections open at once (also capped by the open-file limit)",
)
.env("LEAF_SERVE_MAX_CONNECTIONS")
.default("4096");
pub const SERVE_METRICS_TAGS: Setting = Setting::new(
    "serve.metrics_tags",
    "number of tags",
    "segment tags with their own /metrics series",
)
.env("LEAF_SERVE_METRICS_TAGS")
.default("100");
pub const DB_PASSWORD: Setting = Setting::new(
    "db.password",
    "password",
    "database password (prefer the environment)",
)
.env("LEAF_DB_PASSWORD")
.secret();
pub const DB_PASSWORD_FILE: Setting = Setting::new(
    "db.password_file",
    "path",
    "file holding the database password (its first line); else systemd's credential leaf-db-password ($CREDENTIALS_DIRECTORY)",
)
.env("LEAF_DB_PASSWORD_FILE");
pub const DB_REGISTRY_WAIT_TIMEOUT: Setting = Setting::new(
    "db.registry_wait_timeout_s",
    "seconds",
    "how long MySQL/PostgreSQL keep a silent registry holder's lock (6 or more)",
)
.env("LEAF_DB_REGISTRY_WAIT_TIMEOUT_S")
.default("30");

/// Every setting, in the order `config show` lists them.
pub const SETTINGS: [&Setting; 31] = [
    &STATE_DIR,
    &PRESET,
    &EPOCH,
    &LAYOUT,
    &UNIT_MS,
    &WORKER_ID,
    &NAME,
    &SEQ_START,
    &MAX_LEAD,
    &DB_URL,
    &REGISTRY,
    &ZK_HOSTS,
    &ZK_AUTH,
    &INSTANCE,
    &ZK_SESSION_TIMEOUT,
    &ZK_MAX_CLOCK_SKEW,
    &ETCD_ENDPOINTS,
    &ETCD_USER,
    &ETCD_PASSWORD,
    &ETCD_CA_FILE,
    &ETCD_LEASE_TTL,
    &SERVE_LISTEN,
    &SERVE_SEGMENT,
    &SERVE_SNOWFLAKE,
    &SERVE_TOKEN,
    &SERVE_HEADER_TIMEOUT,
    &SERVE_MAX_CONNECTIONS,
    &SERVE_METRICS_TAGS,
    &DB_PASSWORD,
    &DB_PASSWORD_FILE,
    &DB_REGISTRY_WAIT_TIMEOUT,
];

/// The settings as `config show --help` (and its man page) lists them.
pub fn settings_help() -> String {
    let mut text = String::from("Settings (config key: environment variable, flag; default):\n");
    for s in SETTINGS {
        let mut from = Vec::new();
        from.extend(s.env);
        from.extend(s.flag.map(|f| f.0));
        text.push_str(&format!(
            "  {:<28} {}{}\n      {}\n",
            s.key,
            from.join(", "),
            s.default
                .map(|d| format!("; default {d}"))
                .unwrap_or_default(),
            s.help
        ));
    }
    text
}

/// What resolution found for one setting, as `config show` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    /// The setting's key.
    pub key: &'static str,
    /// Its value as people read it (`***` for a secret); `None` when unset.
    pub value: Option<String>,
    /// Where it came from (`flag`, `env LEAF_DB`, `config file`, `default`, `unset`).
    pub source: String,
}

/// The layout chosen, and how it was described.
#[derive(Debug, Clone)]
pub struct LayoutChoice {
    pub layout: Layout,
    /// `leaf`, `sonyflake`, ... or `custom`.
    pub label: String,
}

/// Everything the commands need to know from flags, environment and config file.
#[derive(Debug, Clone)]
pub struct Settings {
    pub state_dir: Resolved<PathBuf>,
    pub layout: Resolved<LayoutChoice>,
    pub worker_id: Option<Resolved<u64>>,
    pub name: Resolved<String>,
    pub seq_start: Resolved<SeqStart>,
    pub db_url: Resolved<String>,
    pub db_password: Option<Resolved<String>>,
    pub db_registry_wait_timeout_s: Resolved<u64>,
    pub zk_hosts: Option<Resolved<String>>,
    pub zk_auth: Option<Resolved<String>>,
    pub instance: Option<Resolved<String>>,
    pub registry: Option<Resolved<RegistryKind>>,
    pub zk_session_timeout_ms: Resolved<u64>,
    pub zk_max_clock_skew_ms: Resolved<u64>,
    pub etcd_endpoints: Option<Resolved<String>>,
    pub etcd_user: Option<Resolved<String>>,
    pub etcd_password: Option<Resolved<String>>,
    pub etcd_ca_file: Option<Resolved<PathBuf>>,
    pub etcd_lease_ttl_ms: Resolved<u64>,
    pub serve_listen: Resolved<String>,
    pub serve_segment: Resolved<bool>,
    pub serve_snowflake: Resolved<bool>,
    pub serve_token: Option<Resolved<String>>,
    pub max_lead_ms: Resolved<u64>,
    pub serve_header_timeout_ms: Resolved<u64>,
    pub serve_max_connections: Resolved<usize>,
    pub serve_metrics_tags: Resolved<usize>,
    /// What each setting resolved to, in [`SETTINGS`] order (`config show`).
    pub shown: Vec<Shown>,
}

/// Default address of `leafctl serve` (Leaf's port, loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// MySQL's largest `wait_timeout` (seconds, on Linux).
const MAX_MYSQL_WAIT_TIMEOUT_S: u64 = 31_536_000;

/// The systemd credential (`LoadCredential=leaf-db-password:FILE`) read when no other password
/// is given.
pub const DB_PASSWORD_CREDENTIAL: &str = "leaf-db-password";

/// The database password: `LEAF_DB_PASSWORD`/`db.password`, or the file of
/// `LEAF_DB_PASSWORD_FILE`/`db.password_file` (the stronger origin wins; the same origin twice is
/// refused as ambiguous), else systemd's credential [`DB_PASSWORD_CREDENTIAL`]. A file is read
/// whole; one trailing line break is dropped; an empty or unreadable file is a usage error.
fn password_from_file(
    given: Option<Resolved<String>>,
    file: Option<Resolved<PathBuf>>,
) -> anyhow::Result<Option<Resolved<String>>> {
    let (path, origin) = match (given, file) {
        (Some(p), Some(f)) if p.origin.rank() == f.origin.rank() => {
            return Err(usage(
                format!(
                    "the database password is given twice ({} and {}, both from {})",
                    DB_PASSWORD.key, DB_PASSWORD_FILE.key, f.origin
                ),
                "keep one: LEAF_DB_PASSWORD/db.password or LEAF_DB_PASSWORD_FILE/db.password_file",
            ));
        }
        (Some(p), Some(f)) if p.origin.rank() > f.origin.rank() => return Ok(Some(p)),
        (Some(p), None) => return Ok(Some(p)),
        (_, Some(f)) => (f.value, f.origin),
        (None, None) => match env_var("CREDENTIALS_DIRECTORY") {
            Some(dir) => {
                let path = PathBuf::from(dir).join(DB_PASSWORD_CREDENTIAL);
                if !path.is_file() {
                    return Ok(None);
                }
                (
                    path,
                    Origin::Env(format!("CREDENTIALS_DIRECTORY ({DB_PASSWORD_CREDENTIAL})")),
                )
            }
            None => return Ok(None),
        },
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        usage(
            format!(
                "cannot read the database password file {} (from {origin}): {e}",
                path.display()
            ),
            "check the path and that this user may read it (LEAF_DB_PASSWORD_FILE or db.password_file)",
        )
    })?;
    let value = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text)
        .to_string();
    if value.is_empty() {
        return Err(usage(
            format!("the database password file {} is empty", path.display()),
            "write the password into it (one line), or leave LEAF_DB_PASSWORD_FILE/db.password_file unset",
        ));
    }
    warn_if_readable_by_others(
        &path,
        "the database password",
        "a file only this user can read",
    );
    Ok(Some(Resolved { value, origin }))
}

/// Where the database password in use came from, in words for a hint (`None`: none given).
pub fn db_password_source(s: &Settings) -> Option<String> {
    match &s.db_password {
        Some(p) => Some(match &p.origin {
            Origin::Env(var) if var.starts_with("CREDENTIALS_DIRECTORY") => {
                format!("systemd's credential {DB_PASSWORD_CREDENTIAL}")
            }
            Origin::Env(var) => var.clone(),
            Origin::File => "the config file".to_string(),
            other => other.to_string(),
        }),
        None if url_has_password(&s.db_url.value) => {
            Some("the URL in --db/LEAF_DB/db.url".to_string())
        }
        None => None,
    }
}

/// Whether a URL carries a password (`scheme://user:password@host...`).
fn url_has_password(url: &str) -> bool {
    url.split_once("://")
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|authority| authority.rsplit_once('@'))
        .is_some_and(|(creds, _)| creds.contains(':'))
}

/// Reads an environment variable; an empty value counts as unset.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// How strong an origin is: flag > env > file > default.
pub fn rank(o: &Origin) -> u8 {
    o.rank()
}

/// A value as `config show` prints it.
trait Show {
    fn show(&self) -> String;
}

macro_rules! show_by_display {
    ($($t:ty),*) => { $(impl Show for $t { fn show(&self) -> String { self.to_string() } })* };
}
show_by_display!(String, u64, usize, bool, RegistryKind);

impl Show for PathBuf {
    fn show(&self) -> String {
        self.display().to_string()
    }
}

impl Show for SeqStart {
    fn show(&self) -> String {
        format!("{self:?}").to_lowercase()
    }
}

/// Reads each setting from its sources as [`SETTINGS`] declares them, and records what it found.
struct Resolver<'a> {
    matches: &'a ArgMatches,
    /// The config file as a table: a setting's value is found by its key.
    file: toml::Table,
    shown: Vec<Shown>,
}

impl Resolver<'_> {
    /// The value given for `s` on the command line, at the top level or in the subcommand.
    fn flag<T: Any + Clone + Send + Sync + 'static>(&self, s: &Setting) -> Option<T> {
        let (_, id) = s.flag?;
        let mut level = Some(self.matches);
        while let Some(m) = level {
            if m.try_contains_id(id).is_ok()
                && m.value_source(id) == Some(ValueSource::CommandLine)
                && let Ok(Some(v)) = m.try_get_one::<T>(id)
            {
                return Some(v.clone());
            }
            level = m.subcommand().map(|(_, sub)| sub);
        }
        None
    }

    /// The environment's value for `s`.
    fn env<T: FromStr>(&self, s: &Setting) -> anyhow::Result<Option<(T, &'static str)>>
    where
        T::Err: std::fmt::Display,
    {
        let Some(var) = s.env else { return Ok(None) };
        match env_var(var) {
            None => Ok(None),
            Some(raw) => raw.parse::<T>().map(|v| Some((v, var))).map_err(|e| {
                usage(
                    format!("{var}={raw:?} is not a valid {}: {e}", s.what),
                    format!("fix or unset {var}"),
                )
            }),
        }
    }

    /// The config file's value for `s`.
    fn file<T: DeserializeOwned>(&self, s: &Setting) -> anyhow::Result<Option<T>> {
        let value = match s.key.split_once('.') {
            Some((section, key)) => self
                .file
                .get(section)
                .and_then(|t| t.as_table())
                .and_then(|t| t.get(key)),
            None => self.file.get(s.key),
        };
        value
            .map(|v| v.clone().try_into::<T>())
            .transpose()
            .map_err(|e| {
                usage(
                    format!("{} in the config file: {e}", s.key),
                    "fix the file; `leafctl config show --help` lists the settings",
                )
            })
    }

    /// flag > environment > file, or `None` (not recorded for `config show`).
    fn find<T>(&self, s: &Setting) -> anyhow::Result<Option<Resolved<T>>>
    where
        T: FromStr + DeserializeOwned + Any + Clone + Send + Sync,
        T::Err: std::fmt::Display,
    {
        if let Some(value) = self.flag::<T>(s) {
            return Ok(Some(Resolved {
                value,
                origin: Origin::Flag,
            }));
        }
        if let Some((value, var)) = self.env::<T>(s)? {
            return Ok(Some(Resolved {
                value,
                origin: Origin::Env(var.into()),
            }));
        }
        Ok(self.file::<T>(s)?.map(|value| Resolved {
            value,
            origin: Origin::File,
        }))
    }

    /// Records a setting's row for `config show`.
    fn record(&mut self, s: &'static Setting, shown: Option<(String, &Origin)>) {
        if !s.row {
            return;
        }
        let (value, source) = match shown {
            Some((_, origin)) if s.secret => (Some("***".into()), origin.to_string()),
            Some((v, origin)) => (Some(v), origin.to_string()),
            None => (None, "unset".into()),
        };
        self.shown.push(Shown {
            key: s.key,
            value,
            source,
        });
    }

    /// flag > environment > file, or unset.
    fn optional<T>(&mut self, s: &'static Setting) -> anyhow::Result<Option<Resolved<T>>>
    where
        T: FromStr + DeserializeOwned + Any + Clone + Send + Sync + Show,
        T::Err: std::fmt::Display,
    {
        let r = self.find::<T>(s)?;
        self.record(s, r.as_ref().map(|r| (r.value.show(), &r.origin)));
        Ok(r)
    }

    /// flag > environment > file > `default`.
    fn with_default<T>(&mut self, s: &'static Setting, default: T) -> anyhow::Result<Resolved<T>>
    where
        T: FromStr + DeserializeOwned + Any + Clone + Send + Sync + Show,
        T::Err: std::fmt::Display,
    {
        let r = self.find::<T>(s)?.unwrap_or(Resolved {
            value: default,
            origin: Origin::Default,
        });
        self.record(s, Some((r.value.show(), &r.origin)));
        Ok(r)
    }
}

/// Where leafctl keeps data when no database URL is given.
pub fn default_sqlite_url() -> String {
    let dir = config::xdg_dir("XDG_DATA_HOME", ".local/share")
        .map(|d| d.join("leafctl"))
        .unwrap_or_else(|| PathBuf::from(".leafctl"));
    format!("sqlite://{}", dir.join("leaf.db").display())
}

/// Refuses a value outside what a setting allows, naming where it came from and what to give.
fn check<T: std::fmt::Display>(
    r: &Resolved<T>,
    ok: bool,
    problem: impl FnOnce(&T, &Origin) -> String,
    hint: impl Into<String>,
) -> anyhow::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(usage(problem(&r.value, &r.origin), hint))
    }
}

impl Settings {
    /// Resolves every setting from the command line's `matches`, the environment and the
    /// loaded config file.
    pub fn resolve(matches: &ArgMatches, config: LoadedConfig) -> anyhow::Result<Settings> {
        let table = toml::Table::try_from(&config.file).map_err(|e| {
            usage(
                format!("the config file cannot be read back: {e}"),
                "report this as a bug",
            )
        })?;
        let mut r = Resolver {
            matches,
            file: table,
            shown: Vec::new(),
        };
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
        let default_state = config::xdg_dir("XDG_STATE_HOME", ".local/state")
            .map(|d| d.join("leafctl"))
            .unwrap_or_else(|| PathBuf::from(".leafctl-state"));
        let state_dir = r.with_default(&STATE_DIR, default_state)?;
        let layout = resolve_layout(&mut r)?;
        let worker_id = r.optional::<u64>(&WORKER_ID)?;
        let name = r.with_default(&NAME, "leaf".to_string())?;
        let seq_start = r.with_default(&SEQ_START, SeqStart::Random)?;
        let max_lead_ms = r.with_default(&MAX_LEAD, 0u64)?;
        check(
            &max_lead_ms,
            max_lead_ms.value <= MAX_LEAD_MS,
            |v, o| format!("a lead of {v} ms (from {o}) is more than the {MAX_LEAD_MS} ms allowed"),
            format!(
                "give --max-lead (LEAF_MAX_LEAD_MS, snowflake.max_lead_ms) between 0 and {MAX_LEAD_MS}"
            ),
        )?;
        let db_url = r.find::<String>(&DB_URL)?.unwrap_or(Resolved {
            value: default_sqlite_url(),
            origin: Origin::Default,
        });
        r.record(&DB_URL, Some((redact_url(&db_url.value), &db_url.origin)));
        let registry = r.optional::<RegistryKind>(&REGISTRY)?;
        let zk_hosts = r.optional::<String>(&ZK_HOSTS)?;
        let zk_auth = r.optional::<String>(&ZK_AUTH)?;
        if let Some(a) = &zk_auth {
            check(
                a,
                a.value.contains(':'),
                |_, o| format!("ZooKeeper auth from {o} is not user:password"),
                "set LEAF_ZK_AUTH (or zk.auth) to user:password",
            )?;
        }
        let instance = r.optional::<String>(&INSTANCE)?;
        let zk_session_timeout_ms = r.with_default(&ZK_SESSION_TIMEOUT, 6_000u64)?;
        let zk_max_clock_skew_ms = r.with_default(
            &ZK_MAX_CLOCK_SKEW,
            leafctl::worker::DEFAULT_MAX_CLOCK_SKEW_MS as u64,
        )?;
        let etcd_endpoints = r.optional::<String>(&ETCD_ENDPOINTS)?;
        let etcd_user = r.optional::<String>(&ETCD_USER)?;
        let etcd_password = r.optional::<String>(&ETCD_PASSWORD)?;
        let etcd_ca_file = r.optional::<PathBuf>(&ETCD_CA_FILE)?;
        let etcd_lease_ttl_ms = r.with_default(
            &ETCD_LEASE_TTL,
            leafctl::worker::DEFAULT_ETCD_LEASE_TTL.as_millis() as u64,
        )?;
        check(
            &etcd_lease_ttl_ms,
            etcd_lease_ttl_ms.value >= 2_000,
            |v, o| format!("etcd lease TTL {v} ms (from {o}) is below etcd's minimum"),
            "use at least 2000 ms (etcd.lease_ttl_ms or LEAF_ETCD_LEASE_TTL_MS)",
        )?;
        let serve_listen = r.with_default(&SERVE_LISTEN, DEFAULT_LISTEN.to_string())?;
        let serve_segment = r.with_default(&SERVE_SEGMENT, false)?;
        let serve_snowflake = r.with_default(&SERVE_SNOWFLAKE, false)?;
        let serve_token = r.optional::<String>(&SERVE_TOKEN)?;
        if config.file.serve.token.is_some()
            && let Some(path) = &config.path
        {
            warn_if_readable_by_others(path, "the serve token", "LEAF_SERVE_TOKEN");
        }
        let serve_header_timeout_ms = r.with_default(
            &SERVE_HEADER_TIMEOUT,
            leafctl::server::DEFAULT_HEADER_TIMEOUT.as_millis() as u64,
        )?;
        check(
            &serve_header_timeout_ms,
            serve_header_timeout_ms.value > 0,
            |_, o| format!("serve header timeout 0 ms (from {o}) would close every connection"),
            "use at least 1 ms (serve.header_timeout_ms or LEAF_SERVE_HEADER_TIMEOUT_MS)",
        )?;
        let serve_max_connections = r.with_default(
            &SERVE_MAX_CONNECTIONS,
            leafctl::server::DEFAULT_MAX_CONNECTIONS,
        )?;
        check(
            &serve_max_connections,
            serve_max_connections.value > 0,
            |_, o| format!("serve.max_connections 0 (from {o}) would refuse every client"),
            "use at least 1 (serve.max_connections or LEAF_SERVE_MAX_CONNECTIONS)",
        )?;
        let serve_metrics_tags =
            r.with_default(&SERVE_METRICS_TAGS, leafctl::server::DEFAULT_METRICS_TAGS)?;
        let db_password = r.optional::<String>(&DB_PASSWORD)?;
        if config.file.db.password.is_some()
            && let Some(path) = &config.path
        {
            warn_if_readable_by_others(path, "the database password", "LEAF_DB_PASSWORD");
        }
        let db_password_file = r.optional::<PathBuf>(&DB_PASSWORD_FILE)?;
        let db_password = password_from_file(db_password, db_password_file)?;
        let db_registry_wait_timeout_s = r.with_default(
            &DB_REGISTRY_WAIT_TIMEOUT,
            leafctl::worker::DEFAULT_REGISTRY_WAIT_TIMEOUT.as_secs(),
        )?;
        let min_wait = leafctl::worker::MIN_REGISTRY_WAIT_TIMEOUT.as_secs();
        check(
            &db_registry_wait_timeout_s,
            (min_wait..=MAX_MYSQL_WAIT_TIMEOUT_S).contains(&db_registry_wait_timeout_s.value),
            |v, o| {
                format!(
                    "registry wait_timeout {v} s (from {o}) is not in {min_wait}..={MAX_MYSQL_WAIT_TIMEOUT_S}"
                )
            },
            format!(
                "use at least {min_wait} s, twice the registry's 3 s report \
                 (db.registry_wait_timeout_s or LEAF_DB_REGISTRY_WAIT_TIMEOUT_S)"
            ),
        )?;
        // In `SETTINGS` order, as `config show` lists them.
        let order = |key: &str| {
            SETTINGS
                .iter()
                .position(|s| s.key == key)
                .map_or(0, |i| i + 1)
        };
        r.shown.sort_by_key(|row| order(row.key));
        Ok(Settings {
            state_dir,
            layout,
            worker_id,
            name,
            seq_start,
            db_url,
            db_password,
            db_registry_wait_timeout_s,
            zk_hosts,
            zk_auth,
            instance,
            registry,
            zk_session_timeout_ms,
            zk_max_clock_skew_ms,
            etcd_endpoints,
            etcd_user,
            etcd_password,
            etcd_ca_file,
            etcd_lease_ttl_ms,
            serve_listen,
            serve_segment,
            serve_snowflake,
            serve_token,
            max_lead_ms,
            serve_header_timeout_ms,
            serve_max_connections,
            serve_metrics_tags,
            shown: r.shown,
        })
    }
}

/// Resolves `--preset` against the custom layout flags; the one from the stronger origin wins and
/// a tie (both on the command line, say) is a usage error. Shown as one row, `snowflake.layout`.
fn resolve_layout(r: &mut Resolver<'_>) -> anyhow::Result<Resolved<LayoutChoice>> {
    let preset = r.find::<Preset>(&PRESET)?;
    let epoch = r.find::<String>(&EPOCH)?;
    // The file writes the widths as text ("41,10,12"), the flag and the environment parse it.
    let widths = match (r.flag::<BitWidths>(&LAYOUT), r.env::<BitWidths>(&LAYOUT)?) {
        (Some(value), _) => Some(Resolved {
            value,
            origin: Origin::Flag,
        }),
        (None, Some((value, var))) => Some(Resolved {
            value,
            origin: Origin::Env(var.into()),
        }),
        (None, None) => match r.file::<String>(&LAYOUT)? {
            Some(text) => Some(Resolved {
                value: text.parse::<BitWidths>().map_err(|e| {
                    usage(
                        format!("snowflake.layout in the config file: {e}"),
                        "write it as \"41,10,12\"",
                    )
                })?,
                origin: Origin::File,
            }),
            None => None,
        },
    };
    let unit = r.find::<u64>(&UNIT_MS)?;

    let custom_rank = [
        epoch.as_ref().map(|r| rank(&r.origin)),
        widths.as_ref().map(|r| rank(&r.origin)),
        unit.as_ref().map(|r| rank(&r.origin)),
    ]
    .into_iter()
    .flatten()
    .max();
    let preset_rank = preset.as_ref().map(|r| rank(&r.origin));

    let chosen = match (preset, custom_rank) {
        (Some(p), Some(c)) if rank(&p.origin) == c => {
            return Err(usage(
                "a preset and a custom layout (--epoch/--layout/--unit-ms) were both given",
                "use either --preset NAME or --epoch/--layout/--unit-ms",
            ));
        }
        (Some(p), c) if c.is_none() || preset_rank > c => Resolved {
            value: LayoutChoice {
                layout: p.value.layout(),
                label: p.value.name().into(),
            },
            origin: p.origin,
        },
        (_, Some(_)) => {
            let origins = [
                epoch.as_ref().map(|r| r.origin.clone()),
                widths.as_ref().map(|r| r.origin.clone()),
                unit.as_ref().map(|r| r.origin.clone()),
            ];
            let origin = origins
                .into_iter()
                .flatten()
                .max_by_key(rank)
                .unwrap_or(Origin::Default);
            let epoch_ms = match epoch {
                Some(e) => parse_instant(&e.value).map_err(|err| {
                    usage(
                        format!("invalid epoch {:?}: {err}", e.value),
                        "give Unix ms or RFC 3339, e.g. 2015-01-01T00:00:00Z",
                    )
                })?,
                None => LEAF_EPOCH_MS,
            };
            let w = widths.map(|w| w.value).unwrap_or(BitWidths {
                time: 41,
                worker: 10,
                seq: 12,
            });
            let unit_ms = unit.map(|u| u.value).unwrap_or(1);
            let layout =
                Layout::custom(epoch_ms, w.time, w.worker, w.seq, unit_ms).map_err(|e| {
                    usage(
                        e.to_string(),
                        "time+worker+sequence bits must add up to 63, e.g. --layout 41,10,12",
                    )
                })?;
            Resolved {
                value: LayoutChoice {
                    layout,
                    label: "custom".into(),
                },
                origin,
            }
        }
        (None, None) => Resolved {
            value: LayoutChoice {
                layout: Preset::Leaf.layout(),
                label: "leaf".into(),
            },
            origin: Origin::Default,
        },
        (Some(_), None) => unreachable!("handled by the arm above"),
    };
    r.record(
        &LAYOUT,
        Some((
            format!("{} ({})", chosen.value.label, chosen.value.layout),
            &chosen.origin,
        )),
    );
    Ok(chosen)
}

/// Warns when a config file that holds a secret can be read by other users.
fn warn_if_readable_by_others(path: &std::path::Path, what: &str, var: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o044 != 0
    {
        tracing::warn!(
            "{} holds {what} and is readable by other users; run `chmod 600 {}` or use {var}",
            path.display(),
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of the config file's schema is declared once in `SETTINGS`, and every
    /// declared key is one the file may hold (etcd.password: the environment only).
    #[test]
    fn every_config_key_is_declared_once() {
        let filled = toml::to_string(&full_config()).unwrap_or_default();
        let table: toml::Table = toml::from_str(&filled).unwrap();
        let mut keys = Vec::new();
        for (k, v) in &table {
            match v.as_table() {
                Some(t) => keys.extend(t.keys().map(|sub| format!("{k}.{sub}"))),
                None => keys.push(k.clone()),
            }
        }
        keys.sort();
        let mut declared: Vec<String> = SETTINGS
            .iter()
            .map(|s| s.key.to_string())
            .filter(|k| k != "etcd.password")
            .collect();
        declared.sort();
        assert_eq!(keys, declared);
        let mut unique = declared.clone();
        unique.dedup();
        assert_eq!(unique.len(), declared.len(), "a key declared twice");
    }

    /// A config file with every key set (the schema's keys, from serde).
    fn full_config() -> config::ConfigFile {
        let text = "state_dir = \"/s\"\n\
            [snowflake]\npreset = \"leaf\"\nepoch = \"0\"\nlayout = \"41,10,12\"\nunit_ms = 1\n\
            worker_id = 1\nname = \"n\"\nseq_start = \"zero\"\nmax_lead_ms = 0\nregistry = \"local\"\n\
            [db]\nurl = \"sqlite:///x\"\npassword = \"p\"\npassword_file = \"/run/pw\"\nregistry_wait_timeout_s = 30\n\
            [zk]\nhosts = \"h:1\"\nauth = \"a:b\"\ninstance = \"1.2.3.4:5\"\nsession_timeout_ms = 6000\nmax_clock_skew_ms = 5000\n\
            [etcd]\nendpoints = \"h:2\"\nuser = \"u\"\nca_file = \"/ca\"\nlease_ttl_ms = 10000\n\
            [serve]\nlisten = \"127.0.0.1:1\"\nsegment = true\nsnowflake = true\ntoken = \"t\"\n\
            header_timeout_ms = 1\nmax_connections = 1\nmetrics_tags = 1\n";
        toml::from_str(text).unwrap()
    }

    /// The defaults the declarations show people are the ones resolution uses.
    #[test]
    fn declared_defaults_are_the_resolved_ones() {
        use clap::CommandFactory;
        let matches = super::super::Cli::command().get_matches_from(["leafctl", "config", "show"]);
        let loaded = LoadedConfig {
            file: config::ConfigFile::default(),
            path: None,
            origin: None,
        };
        let settings = Settings::resolve(&matches, loaded).unwrap();
        let mut checked = 0;
        for s in SETTINGS.iter().filter(|s| s.row) {
            let row = settings.shown.iter().find(|r| r.key == s.key).unwrap();
            match s.default {
                // Prose (a directory under $XDG_..., "the system's roots"): shown as such only.
                Some(d) if d.contains(' ') || d.contains('$') => {}
                Some(d) if s.key == "snowflake.layout" => {
                    assert!(row.value.as_deref().unwrap().starts_with(d))
                }
                Some(d) => {
                    assert_eq!(row.value.as_deref(), Some(d), "{}", s.key);
                    assert_eq!(row.source, "default", "{}", s.key);
                    checked += 1;
                }
                None => assert_eq!(row.source, "unset", "{}", s.key),
            }
        }
        assert!(checked >= 12, "{checked}");
    }

    #[test]
    fn every_flag_a_setting_names_is_an_argument_of_the_command_line() {
        use clap::CommandFactory;
        let cmd = super::super::Cli::command();
        let mut ids: Vec<String> = cmd
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        for sub in cmd.get_subcommands() {
            ids.extend(sub.get_arguments().map(|a| a.get_id().to_string()));
        }
        for s in SETTINGS {
            if let Some((flag, id)) = s.flag {
                assert!(ids.iter().any(|i| i == id), "{} names {flag} ({id})", s.key);
            }
        }
    }
}
