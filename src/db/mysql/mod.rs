//! MySQL and MariaDB (`mysql://`, `mariadb://`): the URL ([`url`]), the segment store
//! ([`MysqlStore`]) and the worker-id registry ([`MysqlRegistry`]).

mod conn;
mod error;
mod lease_store;
mod registry;
mod store;
pub(crate) mod url;

pub use registry::{MysqlError, MysqlOptions, MysqlRegistry, WORKERID_DDL, init_schema};
pub use store::{MYSQL_DDL, MysqlStore};
