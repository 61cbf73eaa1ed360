//! Every setting, declared once: its config key, environment variable, flag, typed default,
//! check and help ([`Setting`]), and the field of [`Values`] that holds what it resolved to.
//! Adding a setting is one line of the table here (and its line in the configuration sample of
//! docs/operating.md). A registry backend's own settings (`--zk`, `etcd.*`, `--worker-id`, ...)
//! are declared in the backend's folder and gathered here ([`all`]) from the library's list of
//! backends (`leafctl::registries::settings`).

use std::path::PathBuf;

use clap::builder::{EnumValueParser, ValueParser};
use leafctl::db::redact_url;
use leafctl::region::MAX_REGIONS;
use leafctl::snowflake::{BitWidths, MAX_LEAD_MS, Preset, SeqStart};
use leafctl::worker::RegistryKind;

use super::decl::scope::{GLOBAL, LAYOUT, SERVE, SNOWFLAKE};
use leafctl::config::Resolved;

use super::decl::{Declared, Default, Gathered, Info, Setting};
use super::resolve::Resolver;
use crate::cli::parse::{parse_registry, whole_number};

/// Where leafctl keeps data when no database URL is given.
pub fn default_sqlite_url() -> String {
    let dir = leafctl::config::xdg_dir("XDG_DATA_HOME", ".local/share")
        .map(|d| d.join("leafctl"))
        .unwrap_or_else(|| PathBuf::from(".leafctl"));
    format!("sqlite://{}", dir.join("leaf.db").display())
}

/// Default address of `leafctl serve` (Leaf's port, loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Every setting, in the order `config show` lists them: the table's own ([`SETTINGS`]), with
/// the registry backends' own settings gathered after `snowflake.registry`.
pub fn all() -> &'static [&'static dyn Declared] {
    static ALL: std::sync::LazyLock<Vec<&'static dyn Declared>> = std::sync::LazyLock::new(|| {
        let mut all: Vec<&'static dyn Declared> = Vec::new();
        for s in SETTINGS {
            all.push(s);
            if s.info().key == REGISTRY.info.key {
                all.extend(gathered().iter().map(|g| g as &dyn Declared));
            }
        }
        all
    });
    &ALL
}

/// The registry backends' own settings as declarations of this table.
pub fn gathered() -> &'static [Gathered] {
    static GATHERED: std::sync::LazyLock<Vec<Gathered>> = std::sync::LazyLock::new(|| {
        leafctl::registries::settings()
            .into_iter()
            .map(Gathered::new)
            .collect()
    });
    &GATHERED
}

/// Declares each setting as a constant (`NAME: Type = declaration;`) and lists them all in
/// [`SETTINGS`], in the order given (the order of `config show`). A setting that is a value of
/// its own names its field in [`Values`] (`NAME: Type, value field = ...` when it has a default,
/// `optional field` when it may be unset); the others are combined by [`super::Settings`].
macro_rules! settings {
    ($($name:ident: $t:ty $(, $kind:ident $field:ident)? = $declaration:expr;)*) => {
        $(
            #[doc = concat!("The setting `", stringify!($name), "`.")]
            pub const $name: Setting<$t> = $declaration;
        )*
        /// Every setting, in the order `config show` lists them.
        pub const SETTINGS: [&dyn Declared; [$(stringify!($name)),*].len()] = [$(&$name),*];

        /// What resolution found for each setting that is a value of its own.
        #[derive(Debug, Clone)]
        pub struct Values {
            $($(
                #[doc = concat!("What [`", stringify!($name), "`] resolved to.")]
                pub $field: field_type!($kind, $t),
            )?)*
        }

        impl Values {
            /// Resolves each in the order declared: the first one refused is the one reported.
            pub(super) fn resolve(r: &mut Resolver<'_>) -> anyhow::Result<Values> {
                Ok(Values {
                    $($($field: resolve_as!($kind, r, $name),)?)*
                })
            }
        }
    };
}

/// The type of a [`Values`] field: a setting with a default is always resolved.
macro_rules! field_type {
    (value, $t:ty) => { Resolved<$t> };
    (optional, $t:ty) => { Option<Resolved<$t>> };
}

/// How a [`Values`] field is resolved.
macro_rules! resolve_as {
    (value, $r:ident, $setting:ident) => {
        $r.value(&$setting)?
    };
    (optional, $r:ident, $setting:ident) => {
        $r.get(&$setting)?
    };
}

settings! {
    STATE_DIR: PathBuf, value state_dir =
        Info::new("state_dir", "path", "Directory for lock and state files")
            .env("LEAF_STATE_DIR")
            .flag("state-dir", "DIR", GLOBAL, ValueParser::path_buf)
            .of(Default::Computed("$XDG_STATE_HOME/leafctl", || {
                leafctl::config::xdg_dir("XDG_STATE_HOME", ".local/state")
                    .map(|d| d.join("leafctl"))
                    .unwrap_or_else(|| PathBuf::from(".leafctl-state"))
            }));
    PRESET: Preset = Info::new(
        "snowflake.preset",
        "preset",
        "Named snowflake layout (leaf, discord, sonyflake, baidu, ...)",
    )
    .env("LEAF_PRESET")
    .flag("preset", "PRESET", LAYOUT, || {
        ValueParser::new(EnumValueParser::<Preset>::new())
    })
    .part_of_another_row()
    .of(Default::Value(|| Preset::Leaf));
    EPOCH: String = Info::new(
        "snowflake.epoch",
        "epoch",
        "Custom layout: epoch as Unix ms or RFC 3339",
    )
    .env("LEAF_EPOCH")
    .flag("epoch", "MS|RFC3339", LAYOUT, ValueParser::string)
    .part_of_another_row()
    .of(Default::Unset);
    LAYOUT_WIDTHS: BitWidths = Info::new(
        "snowflake.layout",
        "layout",
        "Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use)",
    )
    .env("LEAF_LAYOUT")
    .flag("layout", "TIME,WORKER,SEQ", LAYOUT, || {
        ValueParser::new(|s: &str| s.parse::<BitWidths>().map_err(|e| e.to_string()))
    })
    .of(Default::Described("leaf"));
    UNIT_MS: u64 = Info::new(
        "snowflake.unit_ms",
        "unit in ms",
        "Custom layout: length of one time unit in ms",
    )
    .env("LEAF_UNIT_MS")
    .number_flag("unit-ms", "N", LAYOUT, || {
        ValueParser::new(whole_number(1u64, u64::MAX))
    })
    .part_of_another_row()
    .of(Default::Unset);
    REGION: u64, optional region_index = Info::new(
        "region",
        "region number",
        "This deployment's region, 0 to N-1 (with --regions N): its worker ids and segment IDs are \
         its own, recorded in its stores",
    )
    .env("LEAF_REGION")
    .number_flag("region", "R", GLOBAL, || {
        ValueParser::new(whole_number(0u64, u64::from(MAX_REGIONS) - 1))
    })
    .of(Default::Unset);
    REGIONS: u64, optional region_count = Info::new(
        "regions",
        "region count",
        "How many regions the deployment has (2 to 8, the same in every region; with --region)",
    )
    .env("LEAF_REGIONS")
    .number_flag("regions", "N", GLOBAL, || {
        ValueParser::new(whole_number(2u64, u64::from(MAX_REGIONS)))
    })
    .of(Default::Unset);
    NAME: String, value name = Info::new(
        "snowflake.name",
        "name",
        "Namespace of worker ids (Leaf's leaf.name)",
    )
    .env("LEAF_NAME")
    .flag("name", "NAME", GLOBAL, ValueParser::string)
    .of(Default::Value(|| "leaf".to_string()));
    SEQ_START: SeqStart, value seq_start = Info::new(
        "snowflake.seq_start",
        "sequence start",
        "Where each tick's sequence starts: random in [0,100) like Leaf, or zero",
    )
    .env("LEAF_SEQ_START")
    .flag("seq-start", "random|zero", SNOWFLAKE, || {
        ValueParser::new(|s: &str| s.parse::<SeqStart>())
    })
    .of(Default::Value(|| SeqStart::Random));
    MAX_LEAD: u64, value max_lead_ms = Info::new(
        "snowflake.max_lead_ms",
        "lead in ms (a whole number from 0 to 60000)",
        "Let ID times run up to MS ahead of the clock when a millisecond's 4,096 sequence numbers are \
         used up, instead of waiting (0-60000; the registry records them first)",
    )
    .env("LEAF_MAX_LEAD_MS")
    .number_flag("max-lead", "MS", SNOWFLAKE, || {
        ValueParser::new(whole_number(0u64, MAX_LEAD_MS))
    })
    .of(Default::Value(|| 0))
    .check(|v, o, info| (*v > MAX_LEAD_MS).then(|| (
        format!("a lead of {v} ms (from {o}) is more than the {MAX_LEAD_MS} ms allowed"),
        format!(
            "give --max-lead ({}, {}) between 0 and {MAX_LEAD_MS}",
            info.env.unwrap_or_default(),
            info.key
        ),
    )));
    DB_URL: String, value db_url = Info::new("db.url", "database URL", "")
    .help_made(|| {
        format!(
            "Segment database: {}; the password comes from LEAF_DB_PASSWORD or db.password",
            leafctl::db::url_forms()
        )
    })
    .env("LEAF_DB")
    .flag("db", "URL", GLOBAL, ValueParser::string)
    .of(Default::Computed(
        "sqlite://$XDG_DATA_HOME/leafctl/leaf.db",
        default_sqlite_url,
    ))
    .shown_as(|url| redact_url(url));
    REGISTRY: RegistryKind, optional registry = Info::new("snowflake.registry", "registry", "")
    .help_made(|| format!("Where the worker id comes from: {}", leafctl::registries::kind_names()))
    .env("LEAF_REGISTRY")
    .flag("registry", "", SNOWFLAKE, || ValueParser::new(parse_registry))
    .value_made(leafctl::registries::kind_choices)
    .of(Default::DescribedMade(|| {
        let (kinds, schemes): (Vec<&str>, Vec<String>) = leafctl::db::registry_databases()
            .map(|(d, r)| (r.backend.kind.name(), format!("{}://", d.schemes[0])))
            .unzip();
        format!(
            "local with --worker-id, lease with --zk, etcd with --etcd, {} with a {} --db alone",
            kinds.join(" or "),
            schemes.join(" or ")
        )
    }));
    INSTANCE: String, optional instance = Info::new(
        "snowflake.instance",
        "IP:PORT",
        "This process's identity in the worker-id registry, whichever it is",
    )
    .env("LEAF_INSTANCE")
    .flag("instance", "IP:PORT", GLOBAL, ValueParser::string)
    .old_key("zk.instance")
    .of(Default::Described("first non-loopback IPv4, port 8080"));
    ZK_MAX_CLOCK_SKEW: u64, value zk_max_clock_skew_ms = Info::new(
        "zk.max_clock_skew_ms",
        "skew in ms",
        "Largest clock difference to live peers (first registration, workers doctor)",
    )
    .env("LEAF_ZK_MAX_CLOCK_SKEW_MS")
    .of(Default::Value(|| {
        leafctl::worker::DEFAULT_MAX_CLOCK_SKEW_MS as u64
    }));
    SERVE_LISTEN: String, value serve_listen = Info::new(
        "serve.listen",
        "IP:PORT",
        "Address `leafctl serve` listens on; port 0 picks a free one (printed at start)",
    )
    .env("LEAF_SERVE_LISTEN")
    .flag("listen", "IP:PORT", SERVE, ValueParser::string)
    .of(Default::Value(|| DEFAULT_LISTEN.to_string()));
    SERVE_SEGMENT: bool, value serve_segment = Info::new(
        "serve.segment",
        "boolean (true or false)",
        "Serve segment mode: IDs of the tags in --db",
    )
    .env("LEAF_SERVE_SEGMENT")
    .switch("segment", SERVE)
    .of(Default::Value(|| false));
    SERVE_SNOWFLAKE: bool, value serve_snowflake = Info::new(
        "serve.snowflake",
        "boolean (true or false)",
        "",
    )
    .help_made(|| {
        format!(
            "Serve snowflake mode, with a worker id from {}",
            leafctl::registries::flags()
        )
    })
    .env("LEAF_SERVE_SNOWFLAKE")
    .switch("snowflake", SERVE)
    .of(Default::Value(|| false));
    SERVE_TOKEN: String, optional serve_token = Info::new(
        "serve.token",
        "token",
        "Bearer token every route but /healthz and /readyz requires",
    )
    .env("LEAF_SERVE_TOKEN")
    .secret()
    .of(Default::Unset);
    SERVE_HEADER_TIMEOUT: u64 = Info::new(
        "serve.header_timeout_ms",
        "timeout in ms",
        "A request's headers (and idle connections) within this many ms",
    )
    .env("LEAF_SERVE_HEADER_TIMEOUT_MS")
    .of(Default::Value(|| {
        leafctl::server::DEFAULT_HEADER_TIMEOUT.as_millis() as u64
    }))
    .check(|v, o, info| (*v == 0).then(|| (
        format!("serve header timeout 0 ms (from {o}) would close every connection"),
        format!("use at least 1 ms ({})", info.names()),
    )));
    SERVE_MAX_CONNECTIONS: usize = Info::new(
        "serve.max_connections",
        "number of connections",
        "Most connections open at once (also capped by the open-file limit)",
    )
    .env("LEAF_SERVE_MAX_CONNECTIONS")
    .of(Default::Value(|| leafctl::server::DEFAULT_MAX_CONNECTIONS))
    .check(|v, o, info| (*v == 0).then(|| (
        format!("{} 0 (from {o}) would refuse every client", info.key),
        format!("use at least 1 ({})", info.names()),
    )));
    SERVE_METRICS_TAGS: usize, value serve_metrics_tags = Info::new(
        "serve.metrics_tags",
        "number of tags",
        "Segment tags with their own /metrics series",
    )
    .env("LEAF_SERVE_METRICS_TAGS")
    .of(Default::Value(|| leafctl::server::DEFAULT_METRICS_TAGS));
    ID_KEY_FILE: PathBuf, optional id_key_file = Info::new(
        "ids.key_file",
        "path",
        "File holding the key of opaque tags (64 hex digits); else systemd's credential \
         leaf-id-key",
    )
    .env("LEAF_ID_KEY_FILE")
    .flag("key-file", "FILE", GLOBAL, ValueParser::path_buf)
    .of(Default::Unset);
    DB_PASSWORD: String = Info::new(
        "db.password",
        "password",
        "Database password (prefer the environment)",
    )
    .env("LEAF_DB_PASSWORD")
    .secret()
    .of(Default::Unset);
    DB_PASSWORD_FILE: PathBuf = Info::new(
        "db.password_file",
        "path",
        "File holding the database password (its first line); else systemd's credential \
         leaf-db-password ($CREDENTIALS_DIRECTORY)",
    )
    .env("LEAF_DB_PASSWORD_FILE")
    .of(Default::Unset);
}
