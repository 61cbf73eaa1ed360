//! The command line with no server: bad input, `decode` (real IDs, a terminal, `--scan`), `next
//! --snowflake`, the book's configuration sample (docs/operating.md) and the generated completions and
//! man pages.
//! Part of `scripts/test --quick`.
//!
//! One test binary; each former test file is a module of it (`cargo test --test cli -- MODULE::`).

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod cli_decode;
mod cli_snowflake;
mod compact;
mod decode_scan;
mod generated_assets;
mod readme_config;
mod start_matrix;
