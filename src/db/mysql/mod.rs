//! MySQL and MariaDB (`mysql://`, `mariadb://`): the URL, the segment store
//! ([`MysqlStore`]) and the worker-id registry ([`MysqlRegistry`]).

mod conn;
mod error;
mod lease_store;
mod registry;
mod store;
pub(crate) mod url;

pub(crate) use error::tls_advice;
pub use registry::{MysqlError, MysqlOptions, MysqlRegistry, WORKERID_DDL, init_schema};
pub use store::{MYSQL_DDL, MYSQL_REGION_DDL, MysqlStore};
pub(crate) use url::JDBC;

/// Opens the segment store the URL names ([`super::DbAddress::open_store`]).
pub(crate) fn open_store(
    url: &str,
    password: Option<&str>,
    mode: super::OpenMode,
) -> Result<Box<dyn crate::segment::AllocStore>, crate::segment::SegmentError> {
    super::with_schema(MysqlStore::open(url, password)?, mode)
}

/// Opens the worker-id registry on a registry's settings ([`crate::worker::open`]).
pub(crate) fn open_registry(
    settings: &crate::worker::RegistrySettings,
) -> Result<Box<dyn crate::worker::Registry>, crate::worker::WorkerError> {
    Ok(Box::new(MysqlRegistry::new(MysqlOptions::from_settings(
        settings,
    )?)))
}
