//! The worker-id registries on real servers: ZooKeeper (lease and forever), etcd, the MySQL and
//! PostgreSQL tables (`reuse`: the table contract over both; `lease`: the lease contract over
//! ZooKeeper and etcd; `fence`: the fence contract over all six registries, the local one
//! included), from the library and from the CLI, and
//! `--max-lead` on ZooKeeper.
//!
//! One test binary; each former test file is a module of it (`cargo test --test registry -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod cli_etcd;
mod cli_workers;
mod fence;
mod lead_zk;
mod lease;
mod pooler;
mod region_snowflake;
mod reuse;
mod worker_etcd;
mod worker_mysql;
mod worker_postgres;
mod worker_zk;
