//! The one place a registry kind picks its backend: the databases' registries through their
//! list ([`crate::db::DATABASES`]), the others here. It sits above both `db` and `worker`
//! (each backend implements `worker`'s protocol; `worker` never reaches up into `db`).

use crate::worker::{self, Registry, RegistryKind, RegistrySettings, WorkerError};

/// Opens the registry of `kind` on `settings`: the one place a kind picks its backend.
pub fn open(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<Box<dyn Registry>, WorkerError> {
    if let Some(registry) = crate::db::open_registry(kind, settings) {
        return registry;
    }
    Ok(match kind {
        RegistryKind::Local => Box::new(worker::LocalRegistry::from_settings(settings)?),
        RegistryKind::ZkForever => Box::new(worker::ZkForeverRegistry::new(
            worker::zookeeper_options(settings, kind)?,
        )),
        RegistryKind::ZkLease => Box::new(worker::ZkLeaseRegistry::new(worker::zookeeper_options(
            settings, kind,
        )?)),
        RegistryKind::Etcd => Box::new(worker::EtcdLeaseRegistry::new(worker::etcd_options(
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
