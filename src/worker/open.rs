//! The one place a registry kind picks its backend.

use super::WorkerError;
use super::registry::{Registry, RegistryKind, RegistrySettings};
use crate::db::mysql::{MysqlOptions, MysqlRegistry};
use crate::db::postgres::{PostgresOptions, PostgresRegistry};

/// Opens the registry of `kind` on `settings`: the one place a kind picks its backend.
pub fn open(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<Box<dyn Registry>, WorkerError> {
    Ok(match kind {
        RegistryKind::Local => Box::new(super::local::LocalRegistry::from_settings(settings)?),
        RegistryKind::ZkForever => Box::new(super::ZkForeverRegistry::new(
            super::zookeeper::options(settings, kind)?,
        )),
        RegistryKind::ZkLease => Box::new(super::ZkLeaseRegistry::new(super::zookeeper::options(
            settings, kind,
        )?)),
        RegistryKind::Mysql => Box::new(MysqlRegistry::new(MysqlOptions::from_settings(settings)?)),
        RegistryKind::Postgres => Box::new(PostgresRegistry::new(PostgresOptions::from_settings(
            settings,
        )?)),
        RegistryKind::Etcd => Box::new(super::EtcdLeaseRegistry::new(super::etcd::options(
            settings,
        )?)),
    })
}
