//! Which tags a page of the status listing holds: the search, the order and the paging.

use std::collections::{BinaryHeap, HashSet};

use super::notable::NotableTag;
use crate::segment::SegmentGenerator;

/// Tags per page of the status listing unless the request says otherwise.
pub const DEFAULT_PER_PAGE: usize = 50;
/// Most tags a page holds (with a minute of history each, under 1 MB of JSON).
pub const MAX_PER_PAGE: usize = 200;
/// How deep a listing pages: the first 10,000 tags of it. Beyond, a search narrows it; each
/// page costs a pass over the tag names and memory for this many names at most.
pub const MAX_LISTING_DEPTH: usize = 10_000;

/// How the status listing is chosen: `?q=...&page=...&per_page=...&sort=busiest|name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagQuery {
    /// Only tags containing this text, in any case.
    pub search: Option<String>,
    /// The page, from 1.
    pub page: usize,
    /// Tags per page, 1..=[`MAX_PER_PAGE`].
    pub per_page: usize,
    /// The order.
    pub sort: TagSort,
}

impl Default for TagQuery {
    fn default() -> Self {
        TagQuery {
            search: None,
            page: 1,
            per_page: DEFAULT_PER_PAGE,
            sort: TagSort::Busiest,
        }
    }
}

/// The order of the status listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSort {
    /// Tags that need attention first, then by IDs per second, then by name.
    Busiest,
    /// By name.
    Name,
}

impl TagSort {
    /// As written in the query string.
    pub fn name(self) -> &'static str {
        match self {
            TagSort::Busiest => "busiest",
            TagSort::Name => "name",
        }
    }
}

impl TagQuery {
    /// Tags before this page in the listing.
    fn skip(&self) -> usize {
        self.page.saturating_sub(1).saturating_mul(self.per_page)
    }

    /// Checks the page stays within [`MAX_LISTING_DEPTH`]; the message says what to do.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_PER_PAGE).contains(&self.per_page) {
            return Err(format!(
                "per_page must be from 1 to {MAX_PER_PAGE}, not {}",
                self.per_page
            ));
        }
        if self.page == 0 {
            return Err("page counts from 1".into());
        }
        if self.skip().saturating_add(self.per_page) > MAX_LISTING_DEPTH {
            return Err(format!(
                "the status listing pages through the first {MAX_LISTING_DEPTH} tags; narrow it \
                 with a search (q=PART_OF_THE_TAG), or list every tag with `leafctl tag list`"
            ));
        }
        Ok(())
    }

    fn matches(&self, tag: &str) -> bool {
        match &self.search {
            None => true,
            Some(q) => contains_ignoring_case(tag, q),
        }
    }
}

/// Whether `hay` contains `needle`, ASCII letters compared in any case.
fn contains_ignoring_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// The smallest names a pass over every tag offers, kept in a bounded heap (memory for `keep`
/// names whatever the number of tags).
struct SmallestNames {
    keep: usize,
    heap: BinaryHeap<Box<str>>,
}

impl SmallestNames {
    /// Whether `tag` would be kept now (checked before anything costlier about it).
    fn wants(&self, tag: &str) -> bool {
        self.keep > 0
            && (self.heap.len() < self.keep || self.heap.peek().is_some_and(|top| tag < &**top))
    }

    fn offer(&mut self, tag: &str) {
        if !self.wants(tag) {
            return;
        }
        if self.heap.len() == self.keep {
            self.heap.pop();
        }
        self.heap.push(tag.into());
    }

    fn sorted(self) -> Vec<Box<str>> {
        self.heap.into_sorted_vec()
    }
}

/// The tags of one page of the listing, and how many tags match the search: the notable tags
/// first (when sorted by busiest), then the rest by name. The rest costs one pass over the
/// names, skipped when the notable tags fill the page and there is nothing to count.
pub(super) fn page_of_tags(
    g: &SegmentGenerator,
    notable: &[NotableTag],
    query: &TagQuery,
) -> (Vec<(String, f64)>, u64) {
    let (skip, take) = (query.skip(), query.per_page);
    let notable: Vec<&NotableTag> = match query.sort {
        TagSort::Busiest => notable.iter().filter(|t| query.matches(&t.tag)).collect(),
        TagSort::Name => Vec::new(),
    };
    let mut page: Vec<(String, f64)> = notable
        .iter()
        .skip(skip)
        .take(take)
        .map(|t| (t.tag.clone(), t.rate))
        .collect();
    if page.len() == take && query.search.is_none() {
        return (page, g.tag_count() as u64);
    }
    let listed: HashSet<&str> = notable.iter().map(|t| t.tag.as_str()).collect();
    let rest_skip = skip.saturating_sub(notable.len());
    let mut rest = SmallestNames {
        keep: rest_skip + (take - page.len()),
        heap: BinaryHeap::new(),
    };
    // Every matching tag counts (the notable ones are among them); the set of notable tags is
    // consulted only for a name the heap would take.
    let mut matched = 0u64;
    g.scan_tags(|tag, _| {
        if query.matches(tag) {
            matched += 1;
            if rest.wants(tag) && !listed.contains(tag) {
                rest.offer(tag);
            }
        }
    });
    page.extend(
        rest.sorted()
            .into_iter()
            .skip(rest_skip)
            .map(|t| (t.into_string(), 0.0)),
    );
    (page, matched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_ignore_case_and_listings_stay_within_their_depth() {
        assert!(contains_ignoring_case("Tenant-42", "tENANT"));
        assert!(contains_ignoring_case("x", ""));
        assert!(!contains_ignoring_case("abc", "abcd"));
        let q = |page, per_page| TagQuery {
            page,
            per_page,
            ..TagQuery::default()
        };
        assert!(q(1, 50).check().is_ok());
        assert!(q(200, 50).check().is_ok());
        assert!(q(201, 50).check().unwrap_err().contains("narrow it"));
        assert!(q(0, 50).check().is_err());
        assert!(q(1, 0).check().is_err() && q(1, MAX_PER_PAGE + 1).check().is_err());
        let mut names = SmallestNames {
            keep: 3,
            heap: BinaryHeap::new(),
        };
        for t in ["d", "a", "e", "c", "b", "f"] {
            names.offer(t);
        }
        let sorted: Vec<String> = names.sorted().into_iter().map(String::from).collect();
        assert_eq!(sorted, ["a", "b", "c"]);
    }
}
