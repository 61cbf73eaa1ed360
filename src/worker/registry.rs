//! A registry as a whole: its kind, the settings it is opened with, and everything `next`,
//! `serve` and `workers` do with it ([`Registry`]). Each backend (`local`, `zookeeper`, `etcd`
//! here, the databases' in `crate::db`) implements the whole surface in its own folder;
//! [`open`](super::open) is the one place a kind picks its backend.

use std::path::PathBuf;

use serde::Serialize;

use super::setting::{BackendSetting, SettingValues};
use super::{Identity, StoreMark, WorkerError, WorkerRecord, WorkerRegistry, WorkerScope};
use crate::resolved::Resolved;
use crate::snowflake::Layout;

/// Which registry hands out worker ids (`--registry`, `snowflake.registry`), and the mode of a
/// worker id a registry lists (`workers list`). Each backend declares its kind in its own folder
/// (`worker::local::KIND`, ...); the list of kinds is the list of backends
/// (`crate::registries`), which also reads a kind from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegistryKind {
    /// The name as typed after `--registry` and shown by `workers list` (`lease`).
    name: &'static str,
    /// A recent report counts as a sign of life of a worker id nobody holds
    /// ([`WorkerRecord::is_live`]).
    reports_are_signs_of_life: bool,
}

impl RegistryKind {
    /// The kind called `name`, whose worker ids are live exactly while held.
    pub const fn named(name: &'static str) -> RegistryKind {
        RegistryKind {
            name,
            reports_are_signs_of_life: false,
        }
    }

    /// The same kind, but a recent report counts as a sign of life: Leaf's forever nodes, which
    /// Leaf's own servers hold without any lock or ephemeral node.
    pub const fn reports_are_signs_of_life(mut self) -> RegistryKind {
        self.reports_are_signs_of_life = true;
        self
    }

    /// The name as typed after `--registry` and shown by `workers list`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// True when a recent report counts as a sign of life ([`Self::reports_are_signs_of_life`]).
    pub fn reports_count(self) -> bool {
        self.reports_are_signs_of_life
    }
}

impl std::fmt::Display for RegistryKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Written as its name (`workers list --output json`'s `mode`).
impl Serialize for RegistryKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

/// One registry backend as the rest of leafctl sees it, declared in its own folder
/// (`worker::local`, `worker::zookeeper`, `worker::etcd`, each database's in `crate::db`) and
/// gathered into the one list, `crate::registries::backends`: adding a registry is its folder
/// (its kind, settings and this constant there) and its line in that list.
#[derive(Clone, Copy)]
pub struct RegistryBackend {
    /// Its kind (`--registry NAME`, `workers list`'s mode).
    pub kind: RegistryKind,
    /// Where it keeps worker ids, for help texts and messages (`ZooKeeper`, `MySQL`, ...);
    /// `None` for the local registry, which keeps none but the operator's.
    pub store: Option<&'static str>,
    /// The option that picks it on the command line (`--zk`, `--registry mysql`, ...).
    pub flag: &'static str,
    /// The setting that picks it without `--registry`, if one does.
    pub implied_by: Option<ImpliedBy>,
    /// Its own settings, declared in its folder (gathered by `crate::registries::settings`);
    /// it reads them from [`RegistrySettings::values`].
    pub settings: &'static [&'static BackendSetting],
    /// Opens it on a registry's settings.
    pub open: fn(&RegistrySettings) -> Result<Box<dyn Registry>, WorkerError>,
}

impl std::fmt::Debug for RegistryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryBackend")
            .field("kind", &self.kind)
            .field("store", &self.store)
            .field("flag", &self.flag)
            .finish()
    }
}

/// A setting that picks a registry without `--registry` (`--zk`, `--etcd`, `--worker-id`): what
/// messages call it, and the backend's setting it is.
#[derive(Clone, Copy)]
pub struct ImpliedBy {
    /// What it is, for messages (`ZooKeeper hosts`).
    pub what: &'static str,
    /// The setting; given when [`RegistrySettings::values`] holds it.
    pub setting: &'static BackendSetting,
}

/// What a registry is opened with: the settings every registry shares, resolved by the caller
/// (the CLI: flag > environment > config file > default), and each backend's own settings as
/// data ([`SettingValues`], read by the backend's declarations). Each backend takes what it needs
/// and says which missing or wrong setting stops it.
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// Leaf's `leaf.name`: the namespace of worker ids.
    pub name: Resolved<String>,
    /// This process's `ip:port` as given (`--instance`), resolved only by registries that name
    /// their holders ([`RegistrySettings::identity`]).
    pub instance: Option<Resolved<String>>,
    /// The port an identity takes when none is given: the server's, else Leaf's 8080.
    pub default_port: u16,
    /// The state directory: lock and state files, the forever mode's cache.
    pub state_dir: PathBuf,
    /// The layout worker ids must fit, and how it was described (`leaf`, `custom`, ...).
    pub layout: Layout,
    /// The layout's name, for messages.
    pub layout_label: String,
    /// Fail at once instead of waiting while another process holds the worker id (local).
    pub no_wait: bool,
    /// Largest clock difference to live peers (ms): ZooKeeper's first registration, and
    /// `workers doctor` on every registry that compares clocks.
    pub max_clock_skew_ms: i64,
    /// The database URL (`--db`): where a table registry keeps worker ids.
    pub db_url: Resolved<String>,
    /// The database password (from `LEAF_DB_PASSWORD` or the config file).
    pub db_password: Option<String>,
    /// The worker ids this process may hold, resolved once from its region (`--region`,
    /// `--regions`): ZooKeeper, etcd and the state directory carry its mark from first use and
    /// refuse another scope's process; the local registry refuses a `--worker-id` outside it.
    pub scope: WorkerScope,
    /// The backends' own settings (`--zk`, `--etcd`, `--worker-id`, ...), each read by the
    /// backend that declares it.
    pub values: SettingValues,
}

impl RegistrySettings {
    /// This process's identity ([`Identity::from_setting`]).
    pub fn identity(&self) -> Result<Identity, WorkerError> {
        Identity::from_setting(self.instance.as_ref(), self.default_port)
    }

    /// The name, checked: one ZooKeeper path segment, etcd key part and file name part.
    pub fn checked_name(&self) -> Result<String, WorkerError> {
        let name = &self.name.value;
        if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
            return Err(WorkerError::setting(
                format!("invalid name {name:?}"),
                "use a non-empty name without '/' or spaces",
            ));
        }
        Ok(name.clone())
    }
}

/// The average of the peers' clock offsets (ms), for a [`ClockReport`]; none without peers.
pub(crate) fn average(v: &[i64]) -> Option<i64> {
    if v.is_empty() {
        None
    } else {
        Some((v.iter().map(|&t| t as i128).sum::<i128>() / v.len() as i128) as i64)
    }
}

/// How this host's clock compares with a registry's and its live holders' (`workers doctor`).
#[derive(Debug, Clone, Serialize)]
pub struct ClockReport {
    /// The store asked (`ZooKeeper`, `etcd`).
    pub store: &'static str,
    /// Our clock minus the store's (ms), estimated from one round trip; `None` where the store
    /// does not report its clock (etcd).
    pub store_offset_ms: Option<i64>,
    /// One request's round trip (ms).
    pub round_trip_ms: i64,
    /// Live peers compared.
    pub peers: usize,
    /// Our clock minus the peers' average (ms), when there are peers.
    pub peer_offset_ms: Option<i64>,
    /// The threshold used.
    pub max_skew_ms: i64,
    /// True when every offset is within the threshold.
    pub ok: bool,
}

/// A registry's whole surface: acquiring a worker id ([`WorkerRegistry`]) and inspecting and
/// repairing the ones it holds (`leafctl workers`). Inspection connects when called.
pub trait Registry: WorkerRegistry {
    /// Its kind.
    fn kind(&self) -> RegistryKind;

    /// Where its worker ids live, for messages (`/snowflake/{name}`, `leaf_workerid_alloc`).
    fn place(&self) -> String;

    /// Every worker id it knows, with its holder and status.
    fn list(&self, now_ms: i64) -> Result<Vec<WorkerRecord>, WorkerError> {
        let _ = now_ms;
        Err(self.cannot("list worker ids"))
    }

    /// What [`Registry::reclaim`] would do with `record`, in words; `None` when the id is free
    /// already and reclaiming it would change nothing (the dry run and `--yes` then agree).
    fn reclaim_plan(&self, record: &WorkerRecord) -> Option<String> {
        Some(format!("forget worker id {}", record.worker))
    }

    /// Why a held record is live, in words (`workers reclaim` refusing it).
    fn held_because(&self, record: &WorkerRecord) -> &'static str {
        let _ = record;
        "its holder's session or lease is alive"
    }

    /// Frees a worker id; returns what was deleted (nothing: it was already free).
    fn reclaim(&self, record: &WorkerRecord) -> Result<Vec<String>, WorkerError> {
        let _ = record;
        Err(self.cannot("reclaim worker ids"))
    }

    /// The scope mark this registry's store keeps (ZooKeeper, etcd), read without recording
    /// anything; `None` for a registry whose mark lives elsewhere (a database's) or nowhere.
    fn mark(&self) -> Result<Option<StoreMark>, WorkerError> {
        Ok(None)
    }

    /// Compares this host's clock with the store's and the live holders'; `None` for a
    /// registry that keeps no clocks to compare with (the database tables, the local file),
    /// whose other checks (`workers doctor`'s region check) still run.
    fn clock_report(&self, now_ms: &dyn Fn() -> i64) -> Result<Option<ClockReport>, WorkerError> {
        let _ = now_ms;
        Ok(None)
    }

    /// A holder `record` of this registry that issues with another worker id than the one its
    /// record is listed under, outside what `scope`'s `slice` allows: Leaf's own servers on a
    /// ZooKeeper forever node, which know no scopes. `(the id it issues with, why)`; `None`
    /// for every other record and registry (`workers doctor`).
    fn foreign_issuer(
        &self,
        record: &WorkerRecord,
        scope: &WorkerScope,
        slice: &std::ops::Range<u64>,
        now_ms: i64,
    ) -> Option<(u64, String)> {
        let _ = (record, scope, slice, now_ms);
        None
    }

    /// The error of an inspection this kind does not offer.
    fn cannot(&self, what: &str) -> WorkerError {
        WorkerError::setting(
            format!("the {} registry cannot {what}", self.kind()),
            "inspect a registry with --zk HOST:PORT, --etcd ENDPOINTS or --db mysql://... (or postgres://...)",
        )
    }
}
