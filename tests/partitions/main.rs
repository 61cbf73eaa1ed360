//! Network partitions on a private network of Linux namespaces (needs root and iproute2): servers
//! cut off from their registry or database, clusters split, lossy and slow links, and several
//! regions cut off from each other.
//!
//! One test binary; each former test file is a module of it (`cargo test --test partitions -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod partition_links;
mod partition_registry;
mod regions_netns;
