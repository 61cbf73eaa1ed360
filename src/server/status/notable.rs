//! The tags worth showing first, found without visiting the others.

use std::collections::{HashMap, HashSet};

use super::sampler::Sampler;
use crate::segment::{SegmentBufferView, SegmentGenerator, TagHealth};

/// The tags worth showing first, in order: those that need attention (went backwards, failing,
/// used up, then by name), then those that issued IDs in the last minute, busiest first (and
/// those that did since the sampler last looked). Found without visiting the other tags; the
/// status page and `/metrics` both start from it.
pub(crate) fn notable_tags(g: &SegmentGenerator, sampler: &Sampler) -> Vec<NotableTag> {
    let mut rates: HashMap<String, f64> = sampler.busiest().into_iter().collect();
    for tag in g.moved_tags() {
        rates.entry(tag).or_insert(0.0);
    }
    let mut troubled: Vec<NotableTag> = g
        .troubled()
        .into_iter()
        .map(|view| NotableTag {
            health: g.health(&view),
            rate: rates.get(&view.tag).copied().unwrap_or(0.0),
            tag: view.tag.clone(),
            view: Some(view),
        })
        .collect();
    troubled.sort_by(|a, b| a.health.cmp(&b.health).then_with(|| a.tag.cmp(&b.tag)));
    let seen: HashSet<String> = troubled.iter().map(|t| t.tag.clone()).collect();
    let mut busy: Vec<NotableTag> = rates
        .into_iter()
        .filter(|(tag, _)| !seen.contains(tag))
        .map(|(tag, rate)| NotableTag {
            tag,
            health: TagHealth::Ok,
            rate,
            view: None,
        })
        .collect();
    busy.sort_by(|a, b| b.rate.total_cmp(&a.rate).then_with(|| a.tag.cmp(&b.tag)));
    troubled.extend(busy);
    troubled
}

/// One of [`notable_tags`].
#[derive(Debug, Clone)]
pub(crate) struct NotableTag {
    pub tag: String,
    pub health: TagHealth,
    /// IDs per second over the last minute.
    pub rate: f64,
    /// Its snapshot, when it was taken to judge it.
    pub view: Option<SegmentBufferView>,
}
