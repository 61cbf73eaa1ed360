//! Effective settings: each value resolved flag > environment > config file > default, with its
//! origin kept so `leafctl config show` can say where it came from.

use std::path::PathBuf;
use std::str::FromStr;

use leafctl::config::{self, LoadedConfig, Origin};
use leafctl::snowflake::{BitWidths, LEAF_EPOCH_MS, Layout, MAX_LEAD_MS, Preset, SeqStart};
use leafctl::worker::RegistryKind;

use super::error::usage;
use super::time::parse_instant;

pub use leafctl::config::Resolved;

/// The flags a command was given that map to settings (absent ones are `None`).
#[derive(Debug, Default, Clone)]
pub struct FlagValues {
    pub state_dir: Option<PathBuf>,
    pub preset: Option<Preset>,
    pub epoch: Option<String>,
    pub widths: Option<BitWidths>,
    pub unit_ms: Option<u64>,
    pub worker_id: Option<u64>,
    pub name: Option<String>,
    pub seq_start: Option<SeqStart>,
    pub db: Option<String>,
    pub zk: Option<String>,
    pub etcd: Option<String>,
    pub instance: Option<String>,
    pub registry: Option<RegistryKind>,
    pub listen: Option<String>,
    /// `serve --segment` / `--snowflake` (absent flags are `None`, not `false`).
    pub serve_segment: Option<bool>,
    pub serve_snowflake: Option<bool>,
    pub max_lead_ms: Option<u64>,
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
    pub config: LoadedConfig,
    pub state_dir: Resolved<PathBuf>,
    pub layout: Resolved<LayoutChoice>,
    pub worker_id: Option<Resolved<u64>>,
    pub name: Resolved<String>,
    pub seq_start: Resolved<SeqStart>,
    pub db_url: Resolved<String>,
    pub db_password: Option<Resolved<String>>,
    /// The MySQL registry connection's `wait_timeout` in seconds
    /// (`LEAF_DB_REGISTRY_WAIT_TIMEOUT_S`, `db.registry_wait_timeout_s`).
    pub db_registry_wait_timeout_s: Resolved<u64>,
    /// ZooKeeper worker registry (`--zk`, `LEAF_ZK`, `zk.hosts`).
    pub zk_hosts: Option<Resolved<String>>,
    /// Digest credentials `user:password` (`LEAF_ZK_AUTH`, `zk.auth`); a secret.
    pub zk_auth: Option<Resolved<String>>,
    /// This process's `IP:PORT` (`--instance`, `LEAF_INSTANCE`, `zk.instance`).
    pub instance: Option<Resolved<String>>,
    /// Worker registry (`--registry`, `LEAF_REGISTRY`, `snowflake.registry`); unset means
    /// chosen from the other settings.
    pub registry: Option<Resolved<RegistryKind>>,
    /// ZooKeeper session timeout (ms).
    pub zk_session_timeout_ms: Resolved<u64>,
    /// Largest clock difference to live peers at first registration (ms).
    pub zk_max_clock_skew_ms: Resolved<u64>,
    /// etcd worker registry (`--etcd`, `LEAF_ETCD`, `etcd.endpoints`).
    pub etcd_endpoints: Option<Resolved<String>>,
    /// etcd user (`LEAF_ETCD_USER`, `etcd.user`).
    pub etcd_user: Option<Resolved<String>>,
    /// etcd password (`LEAF_ETCD_PASSWORD` only); a secret.
    pub etcd_password: Option<Resolved<String>>,
    /// CA certificates for `https://` etcd endpoints (`LEAF_ETCD_CA_FILE`, `etcd.ca_file`).
    pub etcd_ca_file: Option<Resolved<PathBuf>>,
    /// TTL of the etcd lease behind a worker id (ms).
    pub etcd_lease_ttl_ms: Resolved<u64>,
    /// `serve` listen address (`--listen`, `LEAF_SERVE_LISTEN`, `serve.listen`).
    pub serve_listen: Resolved<String>,
    /// `serve` segment mode (`--segment`, `LEAF_SERVE_SEGMENT`, `serve.segment`).
    pub serve_segment: Resolved<bool>,
    /// `serve` snowflake mode (`--snowflake`, `LEAF_SERVE_SNOWFLAKE`, `serve.snowflake`).
    pub serve_snowflake: Resolved<bool>,
    /// `serve` bearer token (`LEAF_SERVE_TOKEN`, `serve.token`); a secret.
    pub serve_token: Option<Resolved<String>>,
    /// How far (ms) snowflake times may run ahead of the clock (`--max-lead`,
    /// `LEAF_MAX_LEAD_MS`, `snowflake.max_lead_ms`); 0 (the default) never, at most
    /// [`leafctl::snowflake::MAX_LEAD_MS`].
    pub max_lead_ms: Resolved<u64>,
    /// `serve` header (and idle) timeout in ms (`LEAF_SERVE_HEADER_TIMEOUT_MS`,
    /// `serve.header_timeout_ms`).
    pub serve_header_timeout_ms: Resolved<u64>,
    /// `serve` connection cap (`LEAF_SERVE_MAX_CONNECTIONS`, `serve.max_connections`).
    pub serve_max_connections: Resolved<usize>,
    /// Segment tags with their own `/metrics` series (`LEAF_SERVE_METRICS_TAGS`,
    /// `serve.metrics_tags`).
    pub serve_metrics_tags: Resolved<usize>,
}

/// Default address of `leafctl serve` (Leaf's port, loopback only).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// MySQL's largest `wait_timeout` (seconds, on Linux).
const MAX_MYSQL_WAIT_TIMEOUT_S: u64 = 31_536_000;

/// Reads an environment variable; an empty value counts as unset.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn parse_env<T: FromStr>(var: &str, what: &str) -> anyhow::Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    match env_var(var) {
        None => Ok(None),
        Some(raw) => raw.parse::<T>().map(Some).map_err(|e| {
            usage(
                format!("{var}={raw:?} is not a valid {what}: {e}"),
                format!("fix or unset {var}"),
            )
        }),
    }
}

/// flag > env > file, or `None`.
fn pick<T: FromStr>(
    flag: Option<T>,
    var: &str,
    what: &str,
    file: Option<T>,
) -> anyhow::Result<Option<Resolved<T>>>
where
    T::Err: std::fmt::Display,
{
    if let Some(value) = flag {
        return Ok(Some(Resolved {
            value,
            origin: Origin::Flag,
        }));
    }
    if let Some(value) = parse_env(var, what)? {
        return Ok(Some(Resolved {
            value,
            origin: Origin::Env(var.into()),
        }));
    }
    Ok(file.map(|value| Resolved {
        value,
        origin: Origin::File,
    }))
}

fn or_default<T>(r: Option<Resolved<T>>, default: T) -> Resolved<T> {
    r.unwrap_or(Resolved {
        value: default,
        origin: Origin::Default,
    })
}

/// How strong an origin is: flag > env > file > default.
pub fn rank(o: &Origin) -> u8 {
    o.rank()
}

/// Parses a preset name the way the CLI and the environment spell it.
fn parse_preset(s: &str) -> Result<Preset, String> {
    <Preset as clap::ValueEnum>::from_str(s, true).map_err(|_| {
        let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

#[derive(Debug, Clone, Copy)]
struct PresetArg(Preset);
impl FromStr for PresetArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_preset(s).map(PresetArg)
    }
}

#[derive(Debug, Clone, Copy)]
struct SeqStartArg(SeqStart);
impl FromStr for SeqStartArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(SeqStartArg)
    }
}

/// Resolves `--preset` against the custom layout flags; the one from the stronger origin wins and
/// a tie (both on the command line, say) is a usage error.
fn resolve_layout(
    flags: &FlagValues,
    file: &config::SnowflakeSection,
) -> anyhow::Result<Resolved<LayoutChoice>> {
    let preset = pick(
        flags.preset.map(PresetArg),
        "LEAF_PRESET",
        "preset",
        file.preset.map(PresetArg),
    )?;
    let epoch = pick(
        flags.epoch.clone(),
        "LEAF_EPOCH",
        "epoch",
        file.epoch.clone(),
    )?;
    let widths = pick(
        flags.widths,
        "LEAF_LAYOUT",
        "layout",
        match &file.layout {
            Some(s) => Some(s.parse::<BitWidths>().map_err(|e| {
                usage(
                    format!("snowflake.layout in the config file: {e}"),
                    "write it as \"41,10,12\"",
                )
            })?),
            None => None,
        },
    )?;
    let unit = pick(flags.unit_ms, "LEAF_UNIT_MS", "unit in ms", file.unit_ms)?;

    let custom_rank = [
        epoch.as_ref().map(|r| rank(&r.origin)),
        widths.as_ref().map(|r| rank(&r.origin)),
        unit.as_ref().map(|r| rank(&r.origin)),
    ]
    .into_iter()
    .flatten()
    .max();
    let preset_rank = preset.as_ref().map(|r| rank(&r.origin));

    match (preset, custom_rank) {
        (Some(p), Some(c)) if rank(&p.origin) == c => Err(usage(
            "a preset and a custom layout (--epoch/--layout/--unit-ms) were both given",
            "use either --preset NAME or --epoch/--layout/--unit-ms",
        )),
        (Some(p), c) if c.is_none() || preset_rank > c => Ok(Resolved {
            value: LayoutChoice {
                layout: p.value.0.layout(),
                label: p.value.0.name().into(),
            },
            origin: p.origin,
        }),
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
            Ok(Resolved {
                value: LayoutChoice {
                    layout,
                    label: "custom".into(),
                },
                origin,
            })
        }
        (None, None) => Ok(Resolved {
            value: LayoutChoice {
                layout: Preset::Leaf.layout(),
                label: "leaf".into(),
            },
            origin: Origin::Default,
        }),
        (Some(_), None) => unreachable!("handled by the arm above"),
    }
}

/// Where leafctl keeps data when no database URL is given.
pub fn default_sqlite_url() -> String {
    let dir = config::xdg_dir("XDG_DATA_HOME", ".local/share")
        .map(|d| d.join("leafctl"))
        .unwrap_or_else(|| PathBuf::from(".leafctl"));
    format!("sqlite://{}", dir.join("leaf.db").display())
}

impl Settings {
    /// Resolves every setting.
    pub fn resolve(flags: &FlagValues, config: LoadedConfig) -> anyhow::Result<Settings> {
        let file = &config.file;
        let default_state = config::xdg_dir("XDG_STATE_HOME", ".local/state")
            .map(|d| d.join("leafctl"))
            .unwrap_or_else(|| PathBuf::from(".leafctl-state"));
        let state_dir = or_default(
            pick(
                flags.state_dir.clone().map(PathStr),
                "LEAF_STATE_DIR",
                "path",
                file.state_dir.clone().map(PathStr),
            )?
            .map(|r| Resolved {
                value: r.value.0,
                origin: r.origin,
            }),
            default_state,
        );
        let layout = resolve_layout(flags, &file.snowflake)?;
        let worker_id = pick(
            flags.worker_id,
            "LEAF_WORKER_ID",
            "worker id",
            file.snowflake.worker_id,
        )?;
        let name = or_default(
            pick(
                flags.name.clone(),
                "LEAF_NAME",
                "name",
                file.snowflake.name.clone(),
            )?,
            "leaf".to_string(),
        );
        let seq_start = or_default(
            pick(
                flags.seq_start.map(SeqStartArg),
                "LEAF_SEQ_START",
                "sequence start",
                file.snowflake.seq_start.map(SeqStartArg),
            )?
            .map(|r| Resolved {
                value: r.value.0,
                origin: r.origin,
            }),
            SeqStart::Random,
        );
        let db_url = or_default(
            pick(
                flags.db.clone(),
                "LEAF_DB",
                "database URL",
                file.db.url.clone(),
            )?,
            default_sqlite_url(),
        );
        let db_password = pick(
            None,
            "LEAF_DB_PASSWORD",
            "password",
            file.db.password.clone(),
        )?;
        let db_registry_wait_timeout_s = or_default(
            pick(
                None,
                "LEAF_DB_REGISTRY_WAIT_TIMEOUT_S",
                "seconds",
                file.db.registry_wait_timeout_s,
            )?,
            leafctl::worker::DEFAULT_REGISTRY_WAIT_TIMEOUT.as_secs(),
        );
        let min_wait = leafctl::worker::MIN_REGISTRY_WAIT_TIMEOUT.as_secs();
        if !(min_wait..=MAX_MYSQL_WAIT_TIMEOUT_S).contains(&db_registry_wait_timeout_s.value) {
            return Err(usage(
                format!(
                    "registry wait_timeout {} s (from {}) is not in {min_wait}..={MAX_MYSQL_WAIT_TIMEOUT_S}",
                    db_registry_wait_timeout_s.value, db_registry_wait_timeout_s.origin
                ),
                format!(
                    "use at least {min_wait} s, twice the registry's 3 s report \
                     (db.registry_wait_timeout_s or LEAF_DB_REGISTRY_WAIT_TIMEOUT_S)"
                ),
            ));
        }
        if file.db.password.is_some()
            && let Some(path) = &config.path
        {
            warn_if_readable_by_others(path, "the database password", "LEAF_DB_PASSWORD");
        }
        let zk_hosts = pick(
            flags.zk.clone(),
            "LEAF_ZK",
            "ZooKeeper hosts",
            file.zk.hosts.clone(),
        )?;
        let zk_auth = pick(None, "LEAF_ZK_AUTH", "user:password", file.zk.auth.clone())?;
        if let Some(a) = &zk_auth
            && !a.value.contains(':')
        {
            return Err(usage(
                format!("ZooKeeper auth from {} is not user:password", a.origin),
                "set LEAF_ZK_AUTH (or zk.auth) to user:password",
            ));
        }
        let instance = pick(
            flags.instance.clone(),
            "LEAF_INSTANCE",
            "IP:PORT",
            file.zk.instance.clone(),
        )?;
        let file_registry = match &file.snowflake.registry {
            Some(r) => Some(r.parse::<RegistryKind>().map_err(|e| {
                usage(
                    format!("snowflake.registry in the config file: {e}"),
                    format!("use {}", RegistryKind::names()),
                )
            })?),
            None => None,
        };
        let registry = pick(flags.registry, "LEAF_REGISTRY", "registry", file_registry)?;
        let etcd_endpoints = pick(
            flags.etcd.clone(),
            "LEAF_ETCD",
            "etcd endpoints",
            file.etcd.endpoints.clone(),
        )?;
        let etcd_user = pick(None, "LEAF_ETCD_USER", "user name", file.etcd.user.clone())?;
        let etcd_password = pick(None, "LEAF_ETCD_PASSWORD", "password", None)?;
        let etcd_ca_file = pick(
            None,
            "LEAF_ETCD_CA_FILE",
            "path",
            file.etcd.ca_file.clone().map(PathStr),
        )?
        .map(|r| Resolved {
            value: r.value.0,
            origin: r.origin,
        });
        let etcd_lease_ttl_ms = or_default(
            pick(
                None,
                "LEAF_ETCD_LEASE_TTL_MS",
                "TTL in ms",
                file.etcd.lease_ttl_ms,
            )?,
            leafctl::worker::DEFAULT_ETCD_LEASE_TTL.as_millis() as u64,
        );
        if etcd_lease_ttl_ms.value < 2_000 {
            return Err(usage(
                format!(
                    "etcd lease TTL {} ms (from {}) is below etcd's minimum",
                    etcd_lease_ttl_ms.value, etcd_lease_ttl_ms.origin
                ),
                "use at least 2000 ms (etcd.lease_ttl_ms or LEAF_ETCD_LEASE_TTL_MS)",
            ));
        }
        let zk_session_timeout_ms = or_default(
            pick(
                None,
                "LEAF_ZK_SESSION_TIMEOUT_MS",
                "timeout in ms",
                file.zk.session_timeout_ms,
            )?,
            6_000,
        );
        let zk_max_clock_skew_ms = or_default(
            pick(
                None,
                "LEAF_ZK_MAX_CLOCK_SKEW_MS",
                "skew in ms",
                file.zk.max_clock_skew_ms,
            )?,
            leafctl::worker::DEFAULT_MAX_CLOCK_SKEW_MS as u64,
        );
        let serve = &file.serve;
        let serve_listen = or_default(
            pick(
                flags.listen.clone(),
                "LEAF_SERVE_LISTEN",
                "IP:PORT",
                serve.listen.clone(),
            )?,
            DEFAULT_LISTEN.to_string(),
        );
        let serve_segment = or_default(
            pick(
                flags.serve_segment,
                "LEAF_SERVE_SEGMENT",
                "boolean (true or false)",
                serve.segment,
            )?,
            false,
        );
        let serve_snowflake = or_default(
            pick(
                flags.serve_snowflake,
                "LEAF_SERVE_SNOWFLAKE",
                "boolean (true or false)",
                serve.snowflake,
            )?,
            false,
        );
        let serve_token = pick(None, "LEAF_SERVE_TOKEN", "token", serve.token.clone())?;
        if serve.token.is_some()
            && let Some(path) = &config.path
        {
            warn_if_readable_by_others(path, "the serve token", "LEAF_SERVE_TOKEN");
        }
        let max_lead_ms = or_default(
            pick(
                flags.max_lead_ms,
                "LEAF_MAX_LEAD_MS",
                "lead in ms (a whole number from 0 to 60000)",
                file.snowflake.max_lead_ms,
            )?,
            0,
        );
        if max_lead_ms.value > MAX_LEAD_MS {
            return Err(usage(
                format!(
                    "a lead of {} ms (from {}) is more than the {MAX_LEAD_MS} ms allowed",
                    max_lead_ms.value, max_lead_ms.origin
                ),
                format!(
                    "give --max-lead (LEAF_MAX_LEAD_MS, snowflake.max_lead_ms) between 0 and {MAX_LEAD_MS}"
                ),
            ));
        }
        let serve_header_timeout_ms = or_default(
            pick(
                None,
                "LEAF_SERVE_HEADER_TIMEOUT_MS",
                "timeout in ms",
                serve.header_timeout_ms,
            )?,
            leafctl::server::DEFAULT_HEADER_TIMEOUT.as_millis() as u64,
        );
        if serve_header_timeout_ms.value == 0 {
            return Err(usage(
                format!(
                    "serve header timeout 0 ms (from {}) would close every connection",
                    serve_header_timeout_ms.origin
                ),
                "use at least 1 ms (serve.header_timeout_ms or LEAF_SERVE_HEADER_TIMEOUT_MS)",
            ));
        }
        let serve_max_connections = or_default(
            pick(
                None,
                "LEAF_SERVE_MAX_CONNECTIONS",
                "number of connections",
                serve.max_connections,
            )?,
            leafctl::server::DEFAULT_MAX_CONNECTIONS,
        );
        if serve_max_connections.value == 0 {
            return Err(usage(
                format!(
                    "serve.max_connections 0 (from {}) would refuse every client",
                    serve_max_connections.origin
                ),
                "use at least 1 (serve.max_connections or LEAF_SERVE_MAX_CONNECTIONS)",
            ));
        }
        let serve_metrics_tags = or_default(
            pick(
                None,
                "LEAF_SERVE_METRICS_TAGS",
                "number of tags",
                serve.metrics_tags,
            )?,
            leafctl::server::DEFAULT_METRICS_TAGS,
        );
        Ok(Settings {
            config,
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
        })
    }
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

#[derive(Debug, Clone)]
struct PathStr(PathBuf);
impl FromStr for PathStr {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(PathStr(PathBuf::from(s)))
    }
}
