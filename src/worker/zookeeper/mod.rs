//! ZooKeeper worker ids: a session ([`session`]), leases under the fenced-lease protocol
//! ([`lease`]), Leaf's own forever tree ([`forever`]) with its local cache ([`cache`]), and the
//! admin view behind `leafctl workers` ([`admin`]).

pub(crate) mod admin;
pub mod cache;
pub mod error;
pub(crate) mod forever;
pub(crate) mod lease;
pub(crate) mod session;

use std::time::Duration;

use crate::worker::setting::{BackendSetting, FlagScope, SettingDefault, SettingKind};
use crate::worker::{RegistryKind, RegistrySettings, WorkerError};

/// `--zk`, `LEAF_ZK`, `zk.hosts`: the ZooKeeper ensemble of both ZooKeeper registries.
pub const HOSTS: BackendSetting = BackendSetting::new(
    "zk.hosts",
    "ZooKeeper hosts",
    "ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth",
    SettingKind::Text,
)
.env("LEAF_ZK")
.flag("zk", "HOSTS", FlagScope::Everywhere);

/// `LEAF_ZK_AUTH`, `zk.auth`: digest credentials.
pub const AUTH: BackendSetting = BackendSetting::new(
    "zk.auth",
    "user:password",
    "ZooKeeper digest credentials; nodes get a creator-only ACL",
    SettingKind::Text,
)
.env("LEAF_ZK_AUTH")
.secret()
.check(|v, o, s| match v {
    super::setting::SettingValue::Text(t) if !t.contains(':') => Some((
        format!("ZooKeeper auth from {o} is not user:password"),
        format!(
            "set {} (or {}) to user:password",
            s.env.unwrap_or_default(),
            s.key
        ),
    )),
    _ => None,
});

/// `LEAF_ZK_SESSION_TIMEOUT_MS`, `zk.session_timeout_ms`: the session timeout asked for.
pub const SESSION_TIMEOUT: BackendSetting = BackendSetting::new(
    "zk.session_timeout_ms",
    "timeout in ms",
    "ZooKeeper session timeout",
    SettingKind::Whole {
        min: 0,
        max: u64::MAX,
    },
)
.env("LEAF_ZK_SESSION_TIMEOUT_MS")
.default(SettingDefault::Whole(6_000));

/// Both ZooKeeper registries' settings.
const SETTINGS: &[&BackendSetting] = &[&HOSTS, &AUTH, &SESSION_TIMEOUT];

/// Leaf's own tree's kind: `--registry forever`. A recent report is a sign of life: Leaf's own
/// servers hold a forever node without any lock or ephemeral node.
pub const FOREVER_KIND: RegistryKind = RegistryKind::named("forever").reports_are_signs_of_life();

/// ZooKeeper leases' kind: `--registry lease`.
pub const LEASE_KIND: RegistryKind = RegistryKind::named("lease");

/// Leaf's own tree in the list of backends (`crate::registries`): one worker id per identity,
/// for ever; picked by `--registry forever` only (`--zk` alone leases).
pub const FOREVER: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: FOREVER_KIND,
    store: Some("ZooKeeper"),
    flag: "--zk",
    implied_by: None,
    settings: SETTINGS,
    open: |s| {
        Ok(Box::new(forever::ZkForeverRegistry::new(options(
            s,
            FOREVER_KIND,
        )?)))
    },
};

/// Recyclable leases through ZooKeeper in the list of backends (`crate::registries`): `--zk`
/// picks it.
pub const LEASE: crate::worker::RegistryBackend = crate::worker::RegistryBackend {
    kind: LEASE_KIND,
    store: Some("ZooKeeper"),
    flag: "--zk",
    implied_by: Some(crate::worker::ImpliedBy {
        what: "ZooKeeper hosts",
        setting: &HOSTS,
    }),
    settings: SETTINGS,
    open: |s| {
        Ok(Box::new(lease::ZkLeaseRegistry::new(options(
            s, LEASE_KIND,
        )?)))
    },
};

/// ZooKeeper options from a registry's settings (forever or lease `kind`, for the message).
pub(crate) fn options(
    settings: &RegistrySettings,
    kind: RegistryKind,
) -> Result<session::ZkOptions, WorkerError> {
    let Some(hosts) = settings.values.text(&HOSTS) else {
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
    opts.auth = settings.values.text(&AUTH).map(|a| a.value);
    if let Some(timeout) = settings.values.whole(&SESSION_TIMEOUT) {
        opts.session_timeout = Duration::from_millis(timeout.value);
    }
    opts.max_clock_skew_ms = settings.max_clock_skew_ms;
    opts.scope = settings.scope;
    opts.worker_bits = settings.layout.worker_bits();
    Ok(opts)
}
