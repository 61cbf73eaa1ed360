//! The one place a registry kind picks its backend: the databases' registries through their
//! list ([`crate::db::DATABASES`]), the others here.

use super::WorkerError;
use super::registry::{Registry, RegistryKind, RegistrySettings};

/// Opens the registry of `kind` on `settings`: the one place a kind picks its backend.
pub fn open(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<Box<dyn Registry>, WorkerError> {
    if let Some(registry) = crate::db::open_registry(kind, settings) {
        return registry;
    }
    Ok(match kind {
        RegistryKind::Local => Box::new(super::local::LocalRegistry::from_settings(settings)?),
        RegistryKind::ZkForever => Box::new(super::ZkForeverRegistry::new(
            super::zookeeper::options(settings, kind)?,
        )),
        RegistryKind::ZkLease => Box::new(super::ZkLeaseRegistry::new(super::zookeeper::options(
            settings, kind,
        )?)),
        RegistryKind::Etcd => Box::new(super::EtcdLeaseRegistry::new(super::etcd::options(
            settings,
        )?)),
        // A database's registry, opened above.
        other => {
            return Err(WorkerError::setting(
                format!("no database keeps the {other} registry"),
                "use another --registry",
            ));
        }
    })
}
