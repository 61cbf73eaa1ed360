//! The worker-id registry choice, in one place for every command that needs a worker id
//! (`next --snowflake`, `serve`) or inspects registries (`workers`).

use std::time::Duration;

use leafctl::worker::{
    EtcdLeaseRegistry, EtcdOptions, Identity, LocalRegistry, MysqlOptions, MysqlRegistry,
    WorkerRegistry, ZkForeverRegistry, ZkLeaseRegistry, ZkOptions,
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

/// etcd options from the settings; `None` without `--etcd` / `LEAF_ETCD` / `etcd.endpoints`.
pub fn etcd_options(ctx: &Context, default_port: u16) -> anyhow::Result<Option<EtcdOptions>> {
    let s = &ctx.settings;
    let Some(endpoints) = &s.etcd_endpoints else {
        return Ok(None);
    };
    let name = checked_name(ctx)?;
    let identity = identity(ctx, default_port)?;
    let mut opts = EtcdOptions::new(&endpoints.value, &name, identity);
    if opts.endpoints.is_empty() {
        return Err(usage(
            format!(
                "no etcd endpoint in {:?} (from {})",
                endpoints.value, endpoints.origin
            ),
            "pass --etcd http://HOST:PORT[,http://HOST:PORT...]",
        ));
    }
    opts.user = s.etcd_user.as_ref().map(|u| u.value.clone());
    opts.password = s.etcd_password.as_ref().map(|p| p.value.clone());
    if opts.user.is_none() && opts.password.is_some() {
        return Err(usage(
            "LEAF_ETCD_PASSWORD is set but no etcd user",
            "set etcd.user in the config file or LEAF_ETCD_USER",
        ));
    }
    opts.ca_file = s.etcd_ca_file.as_ref().map(|c| c.value.clone());
    opts.lease_ttl = Duration::from_millis(s.etcd_lease_ttl_ms.value.div_ceil(1_000) * 1_000);
    opts.max_clock_skew_ms = s.zk_max_clock_skew_ms.value.min(i64::MAX as u64) as i64;
    Ok(Some(opts))
}

/// Picks the worker registry: `--registry`, else `--worker-id` (local), `--zk` (`zk_default`
/// mode) or `--etcd`, the one given with the strongest origin.
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
    let mode = match &s.registry {
        Some(r) => r.value.clone(),
        None => implied_mode(ctx, zk_default)?,
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
        "etcd" => {
            let opts = etcd_options(ctx, default_port)?.ok_or_else(|| {
                usage(
                    "the etcd registry needs etcd endpoints",
                    "pass --etcd http://HOST:PORT[,...], set LEAF_ETCD, or set etcd.endpoints",
                )
            })?;
            Ok(Box::new(EtcdLeaseRegistry::new(opts)))
        }
        other => Err(usage(
            format!("unknown registry {other:?}"),
            "use local, forever, lease, mysql or etcd",
        )),
    }
}

/// The registry the other settings imply without `--registry`: `--worker-id` (local), `--zk`
/// (`zk_default`) or `--etcd`, whichever has the strongest origin; a tie is a usage error.
fn implied_mode(ctx: &Context, zk_default: &str) -> anyhow::Result<String> {
    let s = &ctx.settings;
    let mut given = Vec::new();
    if let Some(w) = &s.worker_id {
        given.push(("local", "a worker id", &w.origin));
    }
    if let Some(z) = &s.zk_hosts {
        given.push((zk_default, "ZooKeeper hosts", &z.origin));
    }
    if let Some(e) = &s.etcd_endpoints {
        given.push(("etcd", "etcd endpoints", &e.origin));
    }
    let Some(best) = given.iter().map(|g| rank(g.2)).max() else {
        return Err(usage(
            "no worker id for snowflake mode",
            "pass --worker-id N (or LEAF_WORKER_ID / snowflake.worker_id), or --zk HOSTS or --etcd ENDPOINTS to lease one",
        ));
    };
    let top: Vec<_> = given.iter().filter(|g| rank(g.2) == best).collect();
    match top.as_slice() {
        [one] => Ok(one.0.to_string()),
        _ => Err(usage(
            format!(
                "both {} are set",
                top.iter()
                    .map(|g| format!("{} ({})", g.1, g.2))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            "pass --registry local|lease|forever|etcd to say which to use",
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
        wait_timeout: Some(Duration::from_secs(s.db_registry_wait_timeout_s.value)),
    })
}
