//! ZooKeeper worker ids: a session ([`session`]), leases under the fenced-lease protocol
//! ([`lease`]), Leaf's own forever tree ([`forever`]) with its local cache ([`cache`]), and the
//! admin view behind `leafctl workers` ([`admin`]).

pub(crate) mod admin;
pub mod cache;
pub(crate) mod forever;
pub(crate) mod lease;
pub(crate) mod session;
