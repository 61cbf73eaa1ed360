//! What a user reads and installs: every example of `--help`, the man pages and the README runs as
//! shown, and `scripts/package` builds a Debian package that works.
//!
//! One test binary; each former test file is a module of it (`cargo test --test assets -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod examples;
mod package;
