//! leafctl: Meituan Leaf's distributed ID generator as a Rust library.
//!
//! - [`snowflake`]: `time | worker | sequence` IDs, their layouts and a thread-safe generator.
//! - [`segment`]: Leaf's segment mode: ranges claimed in the `leaf_alloc` table (MySQL or SQLite)
//!   and a double-buffered generator.
//! - [`state`]: the local lock and state file that keeps one worker id's IDs unique across runs.
#![warn(missing_docs)]

pub mod config;
pub mod segment;
pub mod snowflake;
pub mod state;
