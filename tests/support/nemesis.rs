//! The nemesis (issues 28 and 33): a seeded schedule of overlapping faults and of what users and
//! operators do (batches of every size, tags added, removed, re-added, bumped and re-stepped,
//! graceful restarts, restarts under a new identity, clients dropping mid-batch), the history of
//! every answer the clients saw with what was sampled beside it (each server's `/cache`, the
//! registry's `workers list`), and the checker that reads all of it afterwards. The topology and
//! the hands that apply the steps are in `tests/nemesis/`; everything here is pure, so the
//! checker itself is tested on histories made up to break each rule.
//!
//! One file per concern, each re-exported here (`support::nemesis::*`):
//! - `faults.rs`: what can be done to a run ([`Fault`], [`TagOp`], [`Slot`], the [`TAGS`]);
//! - `schedule.rs`: the seeded draw of when ([`Rng`], [`Step`], [`schedule`],
//!   [`region_schedule`], [`kinds`]);
//! - `actions.rs`: what users and operators do beside the faults ([`batch_size`],
//!   [`WORKER_IDS`]);
//! - `history.rs`: what a run leaves to be checked ([`Record`], [`Outcome`], [`Seen`]);
//! - `checker.rs`: the rules ([`check`], [`check_regions`], [`rule_of`]).
#![allow(dead_code)]
// The re-exports below are unused in the test binaries that do not run the nemesis.
#![allow(unused_imports)]

mod actions;
mod checker;
mod faults;
mod history;
mod schedule;

pub use actions::*;
pub use checker::*;
pub use faults::*;
pub use history::*;
pub use schedule::*;
