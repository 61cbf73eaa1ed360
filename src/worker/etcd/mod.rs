//! etcd worker ids: a connection ([`session`]), leases under the fenced-lease protocol
//! ([`lease`]), and the admin view behind `leafctl workers --etcd` ([`admin`]).

pub(crate) mod admin;
pub(crate) mod conn;
pub mod error;
pub(crate) mod keys;
pub(crate) mod lease;
pub(crate) mod options;
pub(crate) mod session;
pub(crate) mod txn;

use std::time::Duration;

use crate::worker::{RegistrySettings, WorkerError};

/// etcd options from a registry's settings.
/// Recyclable leases through etcd in the list of backends (`crate::registries`): `--etcd`
/// picks it.
pub const BACKEND: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: crate::worker::RegistryKind::Etcd,
    store: Some("etcd"),
    flag: "--etcd",
    implied_by: Some(crate::worker::ImpliedBy {
        what: "etcd endpoints",
        given: |s| s.etcd_endpoints.as_ref().map(|e| &e.origin),
    }),
    open: |s| Ok(Box::new(lease::EtcdLeaseRegistry::new(options(s)?))),
};

pub(crate) fn options(settings: &RegistrySettings) -> Result<options::EtcdOptions, WorkerError> {
    let Some(endpoints) = &settings.etcd_endpoints else {
        return Err(WorkerError::setting(
            "the etcd registry needs etcd endpoints",
            "pass --etcd http://HOST:PORT[,...], set LEAF_ETCD, or set etcd.endpoints",
        ));
    };
    let mut opts = options::EtcdOptions::new(
        &endpoints.value,
        &settings.checked_name()?,
        settings.identity()?,
    );
    if opts.endpoints.is_empty() {
        return Err(WorkerError::setting(
            format!(
                "no etcd endpoint in {:?} (from {})",
                endpoints.value, endpoints.origin
            ),
            "pass --etcd http://HOST:PORT[,http://HOST:PORT...]",
        ));
    }
    opts.user = settings.etcd_user.clone();
    opts.password = settings.etcd_password.clone();
    if opts.user.is_none() && opts.password.is_some() {
        return Err(WorkerError::setting(
            "LEAF_ETCD_PASSWORD is set but no etcd user",
            "set etcd.user in the config file or LEAF_ETCD_USER",
        ));
    }
    opts.ca_file = settings.etcd_ca_file.clone();
    let ttl_ms = u64::try_from(settings.etcd_lease_ttl.as_millis()).unwrap_or(u64::MAX);
    opts.lease_ttl = Duration::from_millis(ttl_ms.div_ceil(1_000).saturating_mul(1_000));
    opts.max_clock_skew_ms = settings.max_clock_skew_ms;
    opts.region = settings.region;
    Ok(opts)
}
