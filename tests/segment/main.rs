//! Segment mode on a real MariaDB and a real PostgreSQL 15 (private servers started by `support`):
//! every tag command, concurrent processes, the database down and a failover that loses claims,
//! many tags, and several regions.
//!
//! One test binary; each former test file is a module of it (`cargo test --test segment -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod many_tags;
mod model;
mod region_segment;
mod segment_db_down;
mod segment_failover;
mod segment_mariadb;
mod segment_postgres;
