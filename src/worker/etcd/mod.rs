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

use crate::worker::setting::{BackendSetting, FlagScope, SettingDefault, SettingKind};
use crate::worker::{RegistrySettings, WorkerError};

/// `--etcd`, `LEAF_ETCD`, `etcd.endpoints`: the etcd cluster that leases worker ids.
pub const ENDPOINTS: BackendSetting = BackendSetting::new(
    "etcd.endpoints",
    "etcd endpoints",
    "etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from \
     etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from \
     etcd.ca_file or LEAF_ETCD_CA_FILE",
    SettingKind::Text,
)
.env("LEAF_ETCD")
.flag("etcd", "ENDPOINTS", FlagScope::Everywhere);

/// `LEAF_ETCD_USER`, `etcd.user`.
pub const USER: BackendSetting =
    BackendSetting::new("etcd.user", "user name", "etcd user", SettingKind::Text)
        .env("LEAF_ETCD_USER");

/// `LEAF_ETCD_PASSWORD`: the etcd user's password, from the environment only.
pub const PASSWORD: BackendSetting = BackendSetting::new(
    "etcd.password",
    "password",
    "etcd user's password (environment only)",
    SettingKind::Text,
)
.env("LEAF_ETCD_PASSWORD")
.env_only()
.secret();

/// `LEAF_ETCD_CA_FILE`, `etcd.ca_file`: the CA certificates of `https://` endpoints.
pub const CA_FILE: BackendSetting = BackendSetting::new(
    "etcd.ca_file",
    "path",
    "CA certificates of https:// etcd endpoints",
    SettingKind::Path,
)
.env("LEAF_ETCD_CA_FILE")
.default(SettingDefault::Described("the system's roots"));

/// `LEAF_ETCD_LEASE_TTL_MS`, `etcd.lease_ttl_ms`: the TTL of the lease behind a worker id.
pub const LEASE_TTL: BackendSetting = BackendSetting::new(
    "etcd.lease_ttl_ms",
    "TTL in ms",
    "TTL of the etcd lease behind a worker id (whole seconds, at least 2000)",
    SettingKind::Whole {
        min: 0,
        max: u64::MAX,
    },
)
.env("LEAF_ETCD_LEASE_TTL_MS")
.default(SettingDefault::Whole(
    options::DEFAULT_ETCD_LEASE_TTL.as_millis() as u64,
))
.check(|v, o, s| {
    let v = v.whole()?;
    (v < 2_000).then(|| {
        (
            format!("etcd lease TTL {v} ms (from {o}) is below etcd's minimum"),
            format!("use at least 2000 ms ({})", s.names()),
        )
    })
});

/// etcd's kind: `--registry etcd`.
pub const KIND: crate::worker::RegistryKind = crate::worker::RegistryKind::named("etcd");

/// Recyclable leases through etcd in the list of backends (`crate::registries`): `--etcd`
/// picks it.
pub const BACKEND: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: KIND,
    store: Some("etcd"),
    flag: "--etcd",
    implied_by: Some(crate::worker::ImpliedBy {
        what: "etcd endpoints",
        setting: &ENDPOINTS,
    }),
    settings: &[&ENDPOINTS, &USER, &PASSWORD, &CA_FILE, &LEASE_TTL],
    open: |s| Ok(Box::new(lease::EtcdLeaseRegistry::new(options(s)?))),
};

/// etcd options from a registry's settings.
pub(crate) fn options(settings: &RegistrySettings) -> Result<options::EtcdOptions, WorkerError> {
    let Some(endpoints) = settings.values.text(&ENDPOINTS) else {
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
    opts.user = settings.values.text(&USER).map(|u| u.value);
    opts.password = settings.values.text(&PASSWORD).map(|p| p.value);
    if opts.user.is_none() && opts.password.is_some() {
        return Err(WorkerError::setting(
            "LEAF_ETCD_PASSWORD is set but no etcd user",
            "set etcd.user in the config file or LEAF_ETCD_USER",
        ));
    }
    opts.ca_file = settings.values.path(&CA_FILE);
    let ttl_ms = settings
        .values
        .whole(&LEASE_TTL)
        .map_or(options::DEFAULT_ETCD_LEASE_TTL.as_millis() as u64, |t| {
            t.value
        });
    opts.lease_ttl = Duration::from_millis(ttl_ms.div_ceil(1_000).saturating_mul(1_000));
    opts.max_clock_skew_ms = settings.max_clock_skew_ms;
    opts.scope = settings.scope;
    Ok(opts)
}
