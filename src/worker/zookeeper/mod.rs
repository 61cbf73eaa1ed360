//! ZooKeeper worker ids: a session ([`session`]), leases under the fenced-lease protocol
//! ([`lease`]), Leaf's own forever tree ([`forever`]) with its local cache ([`cache`]), and the
//! admin view behind `leafctl workers` ([`admin`]).

pub(crate) mod admin;
pub mod cache;
pub mod error;
pub(crate) mod forever;
pub(crate) mod lease;
pub(crate) mod session;

use crate::worker::{RegistryKind, RegistrySettings, WorkerError};

/// ZooKeeper options from a registry's settings (forever or lease `kind`, for the message).
/// Leaf's own tree in the list of backends (`crate::registries`): one worker id per identity,
/// for ever; picked by `--registry forever` only (`--zk` alone leases).
pub const FOREVER: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: RegistryKind::ZkForever,
    store: Some("ZooKeeper"),
    flag: "--zk",
    implied_by: None,
    open: |s| {
        Ok(Box::new(forever::ZkForeverRegistry::new(options(
            s,
            RegistryKind::ZkForever,
        )?)))
    },
};

/// Recyclable leases through ZooKeeper in the list of backends (`crate::registries`): `--zk`
/// picks it.
pub const LEASE: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: RegistryKind::ZkLease,
    store: Some("ZooKeeper"),
    flag: "--zk",
    implied_by: Some(crate::worker::ImpliedBy {
        what: "ZooKeeper hosts",
        given: |s| s.zk_hosts.as_ref().map(|z| &z.origin),
    }),
    open: |s| {
        Ok(Box::new(lease::ZkLeaseRegistry::new(options(
            s,
            RegistryKind::ZkLease,
        )?)))
    },
};

pub(crate) fn options(
    settings: &RegistrySettings,
    kind: RegistryKind,
) -> Result<session::ZkOptions, WorkerError> {
    let Some(hosts) = &settings.zk_hosts else {
        return Err(WorkerError::setting(
            format!("the {kind} registry needs ZooKeeper"),
            "pass --zk HOST:PORT[,HOST:PORT...], set LEAF_ZK, or set zk.hosts",
        ));
    };
    let mut opts = session::ZkOptions::new(
        &hosts.value,
        &settings.checked_name()?,
        settings.identity()?,
        &settings.state_dir,
    );
    opts.auth = settings.zk_auth.clone();
    opts.session_timeout = settings.zk_session_timeout;
    opts.max_clock_skew_ms = settings.max_clock_skew_ms;
    opts.region = settings.region;
    opts.worker_bits = settings.layout.worker_bits();
    Ok(opts)
}
