//! The fault suite (RELIABILITY.md): processes killed, frozen or given a wrong clock, MariaDB
//! restarted or locked, ZooKeeper killed or frozen, a 3-node ensemble losing members, every
//! registry frozen under load.
//!
//! One test binary; each former test file is a module of it (`cargo test --test faults -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod fault_clock;
mod fault_ensemble;
mod fault_kill;
mod fault_mariadb;
mod fault_pause;
mod fault_zk;
mod registry_frozen;
