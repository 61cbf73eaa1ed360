//! Leaf's snowflake layout as the tests read IDs: the layout itself, the worker id and time of an
//! ID, and the wall clock now.
#![allow(dead_code)]

use leafctl::snowflake::{Clock, Layout, Preset, SystemClock};

/// Leaf's layout (41 bits of ms since Leaf's epoch, 10 bits of worker id, 12 of sequence), which
/// every snowflake test uses unless it says otherwise.
pub fn leaf() -> Layout {
    Layout::preset(Preset::Leaf)
}

/// The worker id of a Leaf-layout ID.
pub fn worker_of(id: u64) -> u64 {
    leaf().decode(id).unwrap().worker
}

/// The time (Unix ms) of a Leaf-layout ID.
pub fn time_of(id: u64) -> i64 {
    let l = leaf();
    l.unix_ms(l.decode(id).unwrap().ticks)
}

/// The wall clock now, in Unix ms, read as the library's `SystemClock` reads it.
pub fn now_ms() -> i64 {
    SystemClock.now_ms()
}
