//! PostgreSQL (`postgres://`, `postgresql://`): the URL, connection, TLS and errors, the
//! segment store ([`PostgresStore`]) and the worker-id registry ([`PostgresRegistry`]).

pub(super) mod conn;
mod error;
mod lease_store;
mod registry;
mod store;
pub(super) mod url;

pub(crate) use error::tls_advice;
pub use registry::{PostgresError, PostgresOptions, PostgresRegistry, WORKERID_DDL, init_schema};
pub use store::{POSTGRES_DDL, POSTGRES_REGION_DDL, PostgresStore};
pub(crate) use url::JDBC;

/// Opens the segment store the URL names ([`super::DbAddress::open_store`]).
pub(crate) fn open_store(
    url: &str,
    password: Option<&str>,
    mode: super::OpenMode,
) -> Result<Box<dyn crate::segment::AllocStore>, crate::segment::SegmentError> {
    super::with_schema(PostgresStore::open(url, password)?, mode)
}

/// Opens the worker-id registry on a registry's settings ([`crate::worker::open`]).
pub(crate) fn open_registry(
    settings: &crate::worker::RegistrySettings,
) -> Result<Box<dyn crate::worker::Registry>, crate::worker::WorkerError> {
    Ok(Box::new(PostgresRegistry::new(
        PostgresOptions::from_settings(settings)?,
    )))
}
