//! Everything that runs on one machine with no server of its own: the snowflake generator and
//! `--max-lead` on the local registry, local faults (a read-only or full state directory, garbled
//! files), segment mode on the embedded SQLite and `serve` over HTTP on SQLite. Part of
//! `scripts/test --quick`.
//!
//! One test binary; each former test file is a module of it (`cargo test --test local -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod fault_local;
mod lead_local;
mod model;
mod opaque;
mod periodic;
mod seams;
mod segment_sqlite;
mod serve_http;
mod snowflake_lead;
mod snowflake_props;
mod snowflake_threads;
