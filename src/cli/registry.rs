//! Which worker-id registry a command uses: the kind (`--registry`, or the one the other settings
//! imply) and the settings it is opened with. What each kind needs and does is the library's
//! (`leafctl::registries::open`).

use leafctl::config::Origin;
use leafctl::worker::{IssueOptions, Registry, RegistryBackend, RegistryKind, RegistrySettings};

use super::Context;
use super::error::usage;

/// The port a process names itself by when it has none of its own (`next`, `workers`): Leaf's
/// default server port.
pub const DEFAULT_INSTANCE_PORT: u16 = 8080;

/// The registry settings of this run: the shared ones, and every backend's own as resolved
/// (each backend reads its own). `default_port` names this process when `--instance` is not
/// given (Leaf's identity is this host's IP and the server's port); `no_wait` makes the local
/// registry fail at once when another process holds the worker id.
pub fn settings(ctx: &Context, no_wait: bool, default_port: u16) -> RegistrySettings {
    let s = &ctx.settings;
    RegistrySettings {
        name: s.name.clone(),
        instance: s.instance.clone(),
        default_port,
        state_dir: s.state_dir.value.clone(),
        layout: s.layout.value.layout,
        layout_label: s.layout.value.label.clone(),
        no_wait,
        max_clock_skew_ms: s.zk_max_clock_skew_ms.value.min(i64::MAX as u64) as i64,
        db_url: s.db_url.clone(),
        db_password: s.db_password.as_ref().map(|p| p.value.clone()),
        scope: s.worker_scope(),
        values: s.registry_values.clone(),
    }
}

/// How `next --snowflake` and `serve --snowflake` issue: the layout, sequence start and lead of
/// the settings, on the system clock.
pub fn issue_options(ctx: &Context) -> IssueOptions {
    let s = &ctx.settings;
    IssueOptions::new(s.layout.value.layout)
        .seq_start(s.seq_start.value)
        .max_lead_ms(s.max_lead_ms.value)
        .scope(s.worker_scope())
}

/// The registry `next --snowflake` and `serve --snowflake` acquire from: `--registry`, else
/// the one the other settings imply.
pub fn registry(
    ctx: &Context,
    no_wait: bool,
    default_port: u16,
) -> anyhow::Result<Box<dyn Registry>> {
    let kind = match &ctx.settings.registry {
        Some(r) => r.value,
        None => implied_kind(ctx)?,
    };
    let settings = settings(ctx, no_wait, default_port);
    // Recorded once the command succeeded (`serve`: started), as a segment store's region.
    if let Some(r) = leafctl::registries::check_region_in_db(kind, &settings)? {
        ctx.region_to_record.set(Some(r));
    }
    Ok(leafctl::registries::open(kind, &settings)?)
}

/// The registry `workers` inspects: the one a setting names (ZooKeeper or etcd; the stronger
/// origin when both are), else an explicitly given database's table.
pub fn inspected(ctx: &Context) -> anyhow::Result<Box<dyn Registry>> {
    let s = &ctx.settings;
    let settings = settings(ctx, false, DEFAULT_INSTANCE_PORT);
    // The local registry keeps no worker ids to inspect but the operator's.
    let named: Vec<_> = leafctl::registries::named_by(&settings)
        .into_iter()
        .filter(|(b, _, _)| b.store.is_some())
        .collect();
    let kind = match strongest(&named, |flags| {
        format!("pass only one of {flags} to say which registry to inspect")
    })? {
        Some(kind) => kind,
        None if s.db_url.origin != Origin::Default => leafctl::db::db_registry(&s.db_url.value)
            .ok_or_else(|| {
                usage(
                    format!(
                        "{} keeps no worker ids (no leaf_workerid_alloc in a database of its kind)",
                        leafctl::db::url_without_password(&s.db_url.value)
                    ),
                    format!(
                        "pass --db {} for leaf_workerid_alloc, --zk HOST:PORT or --etcd ENDPOINTS",
                        table_urls()
                    ),
                )
            })?,
        None => {
            return Err(usage(
                "no registry to inspect",
                format!(
                    "pass --zk HOST:PORT (or set LEAF_ZK / zk.hosts), --etcd ENDPOINTS (or LEAF_ETCD / etcd.endpoints), or --db {} for leaf_workerid_alloc",
                    table_urls()
                ),
            ));
        }
    };
    Ok(leafctl::registries::open(kind, &settings)?)
}

/// The registry the other settings imply without `--registry`: the one a setting names
/// (`--worker-id`: local, `--zk`: a lease, `--etcd`), whichever has the strongest origin (a tie
/// is a usage error); else a database given that keeps worker ids.
fn implied_kind(ctx: &Context) -> anyhow::Result<RegistryKind> {
    let s = &ctx.settings;
    let named = leafctl::registries::named_by(&settings(ctx, false, DEFAULT_INSTANCE_PORT));
    let db_registry = leafctl::db::db_registry(&s.db_url.value);
    if named.is_empty()
        && s.db_url.origin != Origin::Default
        && let Some(kind) = db_registry
    {
        // A database that keeps worker ids given, and nothing else: its leaf_workerid_alloc.
        return Ok(kind);
    }
    let pick = strongest(&named, |_| {
        format!(
            "pass --registry {} to say which to use",
            leafctl::registries::kind_choices()
        )
    })?;
    pick.ok_or_else(|| {
        let kinds: Vec<&str> = leafctl::db::registry_databases()
            .map(|(_, r)| r.backend.kind.name())
            .collect();
        usage(
            "no worker id for snowflake mode",
            format!(
                "pass --worker-id N (or LEAF_WORKER_ID / snowflake.worker_id); --zk HOSTS or --etcd ENDPOINTS to lease one; or --db {} for one of its leaf_workerid_alloc (--registry {})",
                table_urls(),
                kinds.join("|")
            ),
        )
    })
}

/// The kind the setting of the strongest origin among `named` picks (`None`: none named); a
/// tie is a usage error naming the tied settings, with `tie_hint` of their flags as the hint.
fn strongest(
    named: &[(RegistryBackend, &'static str, Origin)],
    tie_hint: impl Fn(&str) -> String,
) -> anyhow::Result<Option<RegistryKind>> {
    let Some(best) = named.iter().map(|n| n.2.rank()).max() else {
        return Ok(None);
    };
    let top: Vec<_> = named.iter().filter(|n| n.2.rank() == best).collect();
    match top.as_slice() {
        [one] => Ok(Some(one.0.kind)),
        _ => {
            let said: Vec<String> = top.iter().map(|n| format!("{} ({})", n.1, n.2)).collect();
            let flags: Vec<&str> = top.iter().map(|n| n.0.flag).collect();
            Err(usage(
                format!("both {} are set", said.join(" and ")),
                tie_hint(&flags.join(" and ")),
            ))
        }
    }
}

/// The URLs of the databases that keep worker ids, for a hint: `mysql://... / postgres://...`.
fn table_urls() -> String {
    let urls: Vec<String> = leafctl::db::registry_databases()
        .map(|(d, _)| format!("{}://...", d.schemes[0]))
        .collect();
    urls.join(" / ")
}
