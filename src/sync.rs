//! The atomics and locks of the two concurrent pieces every ID passes through (the segment
//! buffer's hot path and the snowflake generator's position word and its lock around the time fence), taken from `std`
//! in every normal build and from [`loom`](https://docs.rs/loom) when built with `--cfg loom`,
//! so the model checks in `scripts/test` explore the real code's interleavings.
//!
//! Run them with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --lib loom_`
//! (`scripts/test` does, in its own target directory).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
