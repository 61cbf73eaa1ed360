//! PostgreSQL (`postgres://`, `postgresql://`): the URL, connection and TLS ([`conn`]), the
//! segment store ([`PostgresStore`]) and the worker-id registry ([`PostgresRegistry`]).

pub(crate) mod conn;
mod registry;
mod store;

pub use registry::{PostgresError, PostgresOptions, PostgresRegistry, WORKERID_DDL, init_schema};
pub use store::{POSTGRES_DDL, PostgresStore};
