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
