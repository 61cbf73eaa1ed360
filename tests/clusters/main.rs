//! Segment mode on real high-availability databases: a 3-node MariaDB Galera cluster and a 3-node
//! Patroni PostgreSQL cluster, each losing a node under load.
//!
//! One test binary; each former test file is a module of it (`cargo test --test clusters -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod segment_galera;
mod segment_patroni;
