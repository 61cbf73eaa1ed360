//! What a user reads and installs: every example of `--help`, the man pages, the README and the
//! pages of `docs/` runs as shown, every link between those pages holds, and `scripts/package` builds
//! a Debian package that works.
//!
//! One test binary; each former test file is a module of it (`cargo test --test assets -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod book;
mod examples;
mod package;
