//! The worker-id registry choice, in one place for every command that needs a worker id
//! (`next --snowflake`, `serve`) or inspects registries (`workers`).

use std::time::Duration;

use leafctl::worker::{
    Identity, LocalRegistry, MysqlOptions, MysqlRegistry, WorkerRegistry, ZkForeverRegistry,
    ZkLeaseRegistry, ZkOptions,
};

/// The port a process names itself by when it has none of its own (`next`, `workers`): Leaf's
/// default server port.
pub const DEFAULT_INSTANCE_PORT: u16 = 8080;

use super::Context;
use super::error::usage;
use super::settings::rank;

/// Leaf's name must be usable as one ZooKeeper path segment and file name part.
pub fn checked_name(ctx: &Context) -> anyhow::Result<String> {
    let name = &ctx.settings.name.value;
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(usage(
            format!("invalid name {name:?}"),
            "use a non-empty name without '/' or spaces",
        ));
    }
    Ok(name.clone())
}

/// ZooKeeper options from the settings; `None` without `--zk` / `LEAF_ZK` / `zk.hosts`.
pub fn zk_options(ctx: &Context, default_port: u16) -> anyhow::Result<Option<ZkOptions>> {
    let s = &ctx.settings;
    let Some(hosts) = &s.zk_hosts else {
        return Ok(None);
    };
    let name = checked_name(ctx)?;
    let identity = identity(ctx, default_port)?;
    let mut opts = ZkOptions::new(&hosts.value, &name, identity, &s.state_dir.value);
    opts.auth = s.zk_auth.as_ref().map(|a| a.value.clone());
    opts.session_timeout = Duration::from_millis(s.zk_session_timeout_ms.value);
    opts.max_clock_skew_ms = s.zk_max_clock_skew_ms.value.min(i64::MAX as u64) as i64;
    Ok(Some(opts))
}

/// Picks the worker registry: `--registry`, else `--worker-id` (local) or `--zk` (`zk_default`
/// mode), the one given with the stronger origin.
///
/// `default_port` names this process in the registry when `--instance` is not given (Leaf's
/// identity is this host's IP and the server's port).
pub fn registry(
    ctx: &Context,
    zk_default: &str,
    no_wait: bool,
    default_port: u16,
) -> anyhow::Result<Box<dyn WorkerRegistry>> {
    let s = &ctx.settings;
    let mode = match (&s.registry, &s.worker_id, &s.zk_hosts) {
        (Some(r), _, _) => r.value.clone(),
        (None, Some(w), Some(z)) if rank(&w.origin) == rank(&z.origin) => {
            return Err(usage(
                format!(
                    "both a worker id ({}) and ZooKeeper hosts ({}) are set",
                    w.origin, z.origin
                ),
                "pass --registry local|lease|forever to say which to use",
            ));
        }
        (None, Some(w), Some(z)) if rank(&w.origin) > rank(&z.origin) => "local".into(),
        (None, Some(_), None) => "local".into(),
        (None, _, Some(_)) => zk_default.into(),
        (None, None, None) => {
            return Err(usage(
                "no worker id for snowflake mode",
                "pass --worker-id N (or LEAF_WORKER_ID / snowflake.worker_id), or --zk HOSTS to lease one",
            ));
        }
    };
    let layout = s.layout.value.layout;
    match mode.as_str() {
        "local" => {
            let worker = s.worker_id.as_ref().map(|w| w.value).ok_or_else(|| {
                usage(
                    "the local registry needs a worker id",
                    "pass --worker-id N, set LEAF_WORKER_ID, or set snowflake.worker_id in the config file",
                )
            })?;
            if worker > layout.max_worker() {
                return Err(usage(
                    format!(
                        "worker id {worker} is out of range for the {} layout (0..={})",
                        s.layout.value.label,
                        layout.max_worker()
                    ),
                    "pick a worker id the layout can hold",
                ));
            }
            Ok(Box::new(LocalRegistry {
                state_dir: s.state_dir.value.clone(),
                name: checked_name(ctx)?,
                worker,
                no_wait,
            }))
        }
        "forever" | "lease" => {
            let opts = zk_options(ctx, default_port)?.ok_or_else(|| {
                usage(
                    format!("the {mode} registry needs ZooKeeper"),
                    "pass --zk HOST:PORT[,HOST:PORT...], set LEAF_ZK, or set zk.hosts",
                )
            })?;
            if mode == "forever" {
                Ok(Box::new(ZkForeverRegistry::new(opts)))
            } else {
                Ok(Box::new(ZkLeaseRegistry::new(opts)))
            }
        }
        "mysql" => Ok(Box::new(MysqlRegistry::new(mysql_options(
            ctx,
            default_port,
        )?))),
        other => Err(usage(
            format!("unknown registry {other:?}"),
            "use local, forever, lease or mysql",
        )),
    }
}

/// This process's identity: `--instance IP:PORT`, `:PORT` for this host's address with that
/// port, or by default this host's first non-loopback IPv4 and `default_port`.
pub fn identity(ctx: &Context, default_port: u16) -> anyhow::Result<Identity> {
    let bad = |e: &dyn std::fmt::Display, origin: &leafctl::config::Origin| {
        usage(
            format!("{e} (from {origin})"),
            "give the instance as IP:PORT, e.g. --instance 10.0.0.5:8080, or :PORT for this host's address",
        )
    };
    match &ctx.settings.instance {
        Some(i) => match i.value.strip_prefix(':') {
            Some(port) => {
                let port = port.parse::<u16>().map_err(|_| {
                    bad(
                        &format!("invalid instance {:?}: expected IP:PORT or :PORT", i.value),
                        &i.origin,
                    )
                })?;
                Ok(Identity::local(port)?)
            }
            None => i.value.parse::<Identity>().map_err(|e| bad(&e, &i.origin)),
        },
        None => Ok(Identity::local(default_port)?),
    }
}

pub fn mysql_options(ctx: &Context, default_port: u16) -> anyhow::Result<MysqlOptions> {
    let s = &ctx.settings;
    if !(s.db_url.value.starts_with("mysql://") || s.db_url.value.starts_with("mariadb://")) {
        return Err(usage(
            format!(
                "the mysql registry needs a MySQL database, not {} (from {})",
                leafctl::segment::redact_url(&s.db_url.value),
                s.db_url.origin
            ),
            "pass --db mysql://user@host:port/database (password in LEAF_DB_PASSWORD)",
        ));
    }
    Ok(MysqlOptions {
        url: s.db_url.value.clone(),
        password: s.db_password.as_ref().map(|p| p.value.clone()),
        identity: identity(ctx, default_port)?,
    })
}
