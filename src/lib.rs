//! leafctl: Meituan Leaf's distributed ID generator as a Rust library.
//!
//! - [`snowflake`]: `time | worker | sequence` IDs, their layouts and a thread-safe generator.
//! - [`segment`]: Leaf's segment mode: ranges claimed in the `leaf_alloc` table (MySQL or SQLite)
//!   and a double-buffered generator.
//! - [`server`]: `leafctl serve`, Leaf's HTTP API on these generators, mountable in any hyper server.
//! - [`state`]: the local lock and state file that keeps one worker id's IDs unique across runs.
//! - [`worker`]: where worker ids come from (local, ZooKeeper forever/lease, MySQL) and how they
//!   stay safe across processes, hosts and clock changes.
#![warn(missing_docs)]

pub mod config;
mod mysql_url;
pub mod segment;
pub mod server;
pub mod snowflake;
pub mod state;
mod sync;
pub mod worker;
