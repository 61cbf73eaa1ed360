//! `leafctl serve` over real servers: segment and snowflake routes on MariaDB, ZooKeeper and etcd,
//! the route contract over every segment store and registry (`routes`), the status page in a real
//! browser, TLS and credentials, and what operators tripped over.
//!
//! One test binary; each former test file is a module of it (`cargo test --test serve -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod operator_trips;
mod routes;
mod security;
mod serve_etcd;
mod serve_mariadb;
mod serve_zk;
mod status_page;
