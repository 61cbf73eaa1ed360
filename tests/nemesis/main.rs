//! The nemesis: every fault at once from a seeded schedule, on a private network of namespaces
//! (needs root). Minutes long; scripts/test runs it alone.
//!
//! One test binary; each former test file is a module of it (`cargo test --test nemesis -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod nemesis;
