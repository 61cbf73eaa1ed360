//! leafctl: Meituan Leaf's distributed ID generator as a Rust library.
//!
//! - [`snowflake`]: `time | worker | sequence` IDs, their layouts and a thread-safe generator.
//! - [`segment`]: Leaf's segment mode: ranges claimed in the `leaf_alloc` table and a
//!   double-buffered generator.
//! - [`db`]: the databases that table lives in (MySQL/MariaDB, PostgreSQL or SQLite), one folder
//!   each, with the worker-id registries of those that keep worker ids.
//! - [`server`]: `leafctl serve`, Leaf's HTTP API on these generators, mountable in any hyper server.
//! - [`idformat`]: reading any time-ordered ID (snowflake layouts, UUID v1/v6/v7, ULID, KSUID,
//!   ObjectId): guessing a number's layout, finding IDs in log text, the IDs around one.
//! - [`region`]: several independent regions whose IDs never collide: which worker ids and
//!   which segment IDs each region owns, and the check that a store belongs to its region.
//! - [`worker`]: where worker ids come from (local lock and state file, ZooKeeper forever/lease,
//!   MySQL, PostgreSQL, etcd) and how they stay safe across processes, hosts and clock changes.
#![warn(missing_docs)]

/// Builder methods that each set one field and return the builder, one line apiece:
/// `/// doc` then `name(arg: Type) => field = value;` makes
/// `pub fn name(mut self, arg: Type) -> Self { self.field = value; self }`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $t:ty) => $field:ident = $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $arg: $t) -> Self {
                self.$field = $value;
                self
            }
        )*
    };
}

pub mod config;
pub mod db;
pub mod idformat;
pub mod region;
pub mod registries;
pub mod resolved;
pub mod segment;
pub mod server;
pub mod snowflake;
mod sync;
mod text;
pub mod worker;
