//! The status page (`GET /`): what each tag and the worker lease are doing, at a glance.
//!
//! Once a second the [`Sampler`] reads the request counters (atomics the request path bumps
//! anyway) and asks the segment generator which tags issued IDs since its last look
//! ([`SegmentGenerator::drain_moved`]), keeping a minute of figures for those tags only: its
//! work follows what moves, not how many tags there are. The report is served as JSON
//! (`?format=json` or `Accept: application/json`) one page of tags at a time, searched, sorted
//! and paged on the server ([`TagQuery`]), and drawn by [`PAGE`], one HTML file with an inline
//! script and stylesheet that fetches the JSON every few seconds.
//!
//! The files: `sampler` (the minute of readings), `notable` (the tags to show first),
//! `query` (search, order and paging), `report` (the report's types) and `build` (the
//! report built from them).
//!
//! [`SegmentGenerator::drain_moved`]: crate::segment::SegmentGenerator::drain_moved

mod build;
mod notable;
mod query;
mod report;
mod sampler;

pub(crate) use build::Inputs;
pub(crate) use notable::notable_tags;
pub use query::{DEFAULT_PER_PAGE, MAX_LISTING_DEPTH, MAX_PER_PAGE, TagQuery, TagSort};
pub use report::{
    AttentionCounts, BufferFill, SegmentStatus, ServerStatus, SnowflakeStatus, StatusReport,
    TagStatus,
};
pub(crate) use sampler::{RequestCounts, Sampler};

/// The page: static HTML with an inline stylesheet and script (no external asset, no
/// framework). It fetches `/?format=json` every 3 s, asks once for the bearer token when the
/// server wants one (kept in this tab's sessionStorage only), and writes every value with
/// `textContent`, so a tag is never read as HTML.
pub const PAGE: &str = include_str!("status.html");
