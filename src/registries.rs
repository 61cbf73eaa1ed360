//! The one list of registry backends, and what is derived from it: the kind a name or a setting
//! picks, how each opens, and every help text and message that names them. Each backend is
//! declared in its own folder (`worker::local`, `worker::zookeeper`, `worker::etcd`, and each
//! database's `leaf_workerid_alloc` in [`crate::db::DATABASES`]); this list sits above both
//! `db` and `worker` (each backend implements `worker`'s protocol; `worker` never reaches up
//! into `db`).
//!
//! Adding a registry (Consul, Kubernetes leases):
//! 1. its folder, implementing [`Registry`] (and the lease protocol's store), with a
//!    `RegistryBackend` constant naming its kind, store, flag, the setting that implies it, its
//!    own settings (`BackendSetting` constants declared in the folder, read back from
//!    [`RegistrySettings::values`]) and how it opens;
//!    (its [`RegistryKind`] is a constant there too: its name, and whether a report alone is a
//!    sign of life);
//! 2. its line in [`backends`] below (a database's registry: its entry in `DATABASES`);
//! 3. its test fixture in `tests/support` and the contract tests (`tests/registry/lease.rs`,
//!    `fence.rs`).
//!
//! No front end lists a backend's settings: the CLI adds [`settings`] to its table, so each one
//! has its flag, environment variable, config key, `config show` row, help and man page entry.
//!
//! The test below fails when a kind has no backend, and when a backend's store is missing from
//! the package description or the library's documentation; `tests/assets` checks every flag
//! is in the help and man pages.

use crate::db::DbAddress;
use crate::resolved::Origin;
use crate::segment::{RegionToRecord, SegmentError};
use crate::worker::setting::BackendSetting;
use crate::worker::{self, Registry, RegistryBackend, RegistryKind, RegistrySettings, WorkerError};

/// Every registry backend, in the order help texts list them.
pub fn backends() -> impl Iterator<Item = RegistryBackend> {
    [
        worker::backends::LOCAL,
        worker::backends::ZK_FOREVER,
        worker::backends::ZK_LEASE,
    ]
    .into_iter()
    .chain(crate::db::registry_databases().map(|(_, r)| r.backend))
    .chain([worker::backends::ETCD])
}

/// The backend of `kind`.
pub fn backend(kind: RegistryKind) -> Result<RegistryBackend, WorkerError> {
    backends().find(|b| b.kind == kind).ok_or_else(|| {
        WorkerError::setting(
            format!("no backend keeps the {kind} registry in this build"),
            format!("use --registry {}", kind_choices()),
        )
    })
}

/// The kind called `name` (`--registry NAME`, `snowflake.registry`); the refusal names them all.
pub fn kind_named(name: &str) -> Result<RegistryKind, String> {
    backends()
        .map(|b| b.kind)
        .find(|k| k.name() == name)
        .ok_or_else(|| format!("unknown registry {name:?}: use {}", kind_names()))
}

/// Every kind's name: `local, forever, lease, mysql, postgres or etcd`.
pub fn kind_names() -> String {
    crate::text::or_list(backends().map(|b| b.kind.name()))
}

/// Every kind's name, `|`-separated: `local|forever|lease|mysql|postgres|etcd` (made once:
/// clap takes it as a value name).
pub fn kind_choices() -> &'static str {
    static CHOICES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CHOICES.get_or_init(|| {
        let names: Vec<&str> = backends().map(|b| b.kind.name()).collect();
        names.join("|")
    })
}

/// Opens the registry of `kind` on `settings`: the one place a kind picks its backend.
pub fn open(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<Box<dyn Registry>, WorkerError> {
    (backend(kind)?.open)(settings)
}

/// The region check of a registry kept in a database (`leaf_workerid_alloc`), whose region mark
/// is the database's own (`leaf_region`, checked as a segment store's): made once before the
/// first lease, from the database the settings name. `Some`: the database records no region yet,
/// and this one is to be recorded once the command succeeded ([`RegionToRecord::record`]).
/// Nothing for a registry whose store keeps its own mark (ZooKeeper, etcd, the state directory:
/// checked and recorded as it opens), nor for a database that is not `kind`'s (its opening
/// refuses it).
pub fn check_region_in_db(
    kind: RegistryKind,
    settings: &RegistrySettings,
) -> Result<Option<RegionToRecord>, SegmentError> {
    let db = DbAddress::parse(&settings.db_url.value);
    match db {
        Ok(db) if db.registry() == Some(kind) => {
            db.check_region(settings.db_password.as_deref(), settings.scope.region())
        }
        _ => Ok(None),
    }
}

/// Where `kind` keeps worker ids (`ZooKeeper`, `MySQL`, ...), for messages; `None` for the
/// local registry.
pub fn store_of(kind: RegistryKind) -> Option<&'static str> {
    backend(kind).ok().and_then(|b| b.store)
}

/// The stores that keep worker ids, each once: `ZooKeeper, MySQL, PostgreSQL or etcd`.
pub fn stores() -> String {
    or_list_once(backends().filter_map(|b| b.store))
}

/// The options that pick a registry, each once: `--worker-id, --zk, --registry mysql,
/// --registry postgres or --etcd`.
pub fn flags() -> String {
    or_list_once(backends().map(|b| b.flag))
}

/// The names of the kinds whose worker ids can be listed and reclaimed (all but `local`, which
/// keeps none but the operator's), `|`-separated: `forever|lease|mysql|postgres|etcd` (made
/// once: clap takes it as a value name).
pub fn modes() -> &'static str {
    static MODES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MODES.get_or_init(|| {
        let names: Vec<&str> = backends()
            .filter(|b| b.store.is_some())
            .map(|b| b.kind.name())
            .collect();
        names.join("|")
    })
}

/// The backends `settings` name without `--registry` (`--worker-id`, `--zk`, `--etcd`), each
/// with what messages call its setting and where it came from.
pub fn named_by(settings: &RegistrySettings) -> Vec<(RegistryBackend, &'static str, Origin)> {
    backends()
        .filter_map(|b| {
            let implied = b.implied_by?;
            let origin = settings.values.origin(implied.setting)?.clone();
            Some((b, implied.what, origin))
        })
        .collect()
}

/// Every backend's own settings, each once (backends may share one: the databases' wait
/// timeout), in the order of the backends: what a front end adds to its table of settings and
/// resolves into [`RegistrySettings::values`].
pub fn settings() -> Vec<&'static BackendSetting> {
    let mut all: Vec<&'static BackendSetting> = Vec::new();
    for setting in backends().flat_map(|b| b.settings.iter().copied()) {
        if !all.iter().any(|s| s.key == setting.key) {
            all.push(setting);
        }
    }
    all
}

/// `a, b or c` of `items` in their order, each said once however often it comes.
fn or_list_once(items: impl Iterator<Item = &'static str>) -> String {
    let mut once: Vec<&str> = Vec::new();
    for item in items {
        if !once.contains(&item) {
            once.push(item);
        }
    }
    crate::text::or_list(once)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every backend has a name of its own, read back as its kind, and the list and help texts
    /// derive from the backends.
    #[test]
    fn every_kind_has_one_backend_and_help_texts_name_them_all() {
        for b in backends() {
            let named = backends().filter(|o| o.kind.name() == b.kind.name());
            assert_eq!(named.count(), 1, "{}", b.kind);
            assert_eq!(kind_named(b.kind.name()), Ok(b.kind));
        }
        assert_eq!(kind_choices(), "local|forever|lease|mysql|postgres|etcd");
        assert_eq!(
            kind_named("zk").unwrap_err(),
            "unknown registry \"zk\": use local, forever, lease, mysql, postgres or etcd"
        );
        assert_eq!(stores(), "ZooKeeper, MySQL, PostgreSQL or etcd");
        assert_eq!(
            flags(),
            "--worker-id, --zk, --registry mysql, --registry postgres or --etcd"
        );
        assert_eq!(modes(), "forever|lease|mysql|postgres|etcd");
    }

    /// A backend's store is named in the package description and the library's documentation:
    /// adding a registry without saying so fails here.
    #[test]
    fn every_store_is_in_the_package_description_and_the_docs() {
        let lib = include_str!("lib.rs");
        let description = crate::text::package_description();
        for store in backends().filter_map(|b| b.store) {
            assert!(lib.contains(store), "lib.rs docs lack {store}");
            assert!(
                description.contains(store),
                "the package description lacks {store}"
            );
        }
    }
}
