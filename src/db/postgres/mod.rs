//! PostgreSQL (`postgres://`, `postgresql://`): the URL, connection, TLS and errors, the
//! segment store ([`PostgresStore`]) and the worker-id registry ([`PostgresRegistry`]).

mod conn;
mod error;
mod lease_store;
mod registry;
mod store;
mod url;

pub use registry::{PostgresError, PostgresOptions, PostgresRegistry, WORKERID_DDL, init_schema};
pub use store::{POSTGRES_DDL, PostgresStore};
