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
