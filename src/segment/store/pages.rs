//! Reading the table a page at a time: which tags (prefix or glob filters), page sizes, and the
//! iterators over rows, tags and tombstones that no caller holds whole.

use super::*;

/// One page of a listing to read ([`PageQuery::Rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowsPage<'a> {
    /// Which tags; a database may apply it loosely (see [`TagFilter::like_pattern`]).
    pub filter: &'a TagFilter,
    /// The tag the page starts after (`None`: the first page).
    pub after: Option<&'a str>,
    /// The most rows the page holds.
    pub limit: usize,
}

/// Rows a page of [`RowPages`] holds.
pub const ROWS_PER_PAGE: usize = 1000;
/// Tags a page of [`TagPages`] holds.
pub const TAGS_PER_PAGE: usize = 10_000;

/// Which tags a listing returns (`leafctl tag list --prefix/--match`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TagFilter {
    /// Every tag.
    #[default]
    All,
    /// Tags that start with this text (compared byte for byte).
    Prefix(String),
    /// Tags that match a glob: `*` stands for any run of characters, `?` for one character,
    /// and `\` takes the next character as it is. The whole tag must match.
    Glob(String),
}

/// The escape character of the `LIKE` patterns [`TagFilter::like_pattern`] makes: one that
/// needs no escaping inside an SQL string literal on MySQL, SQLite or PostgreSQL.
pub(crate) const LIKE_ESCAPE: char = '!';

impl TagFilter {
    /// Whether `tag` passes the filter.
    pub fn matches(&self, tag: &str) -> bool {
        match self {
            TagFilter::All => true,
            TagFilter::Prefix(p) => tag.starts_with(p.as_str()),
            TagFilter::Glob(g) => glob_matches(&glob_tokens(g), tag),
        }
    }

    /// A `LIKE` pattern (escape character `LIKE_ESCAPE` (`!`)) that every tag passing the filter
    /// matches, for the database to narrow a listing; `None` for every tag. It may let through
    /// more than the filter (`LIKE` ignores case on MySQL's usual collations), never less.
    pub fn like_pattern(&self) -> Option<String> {
        let mut out = String::new();
        let literal = |out: &mut String, c: char| {
            if matches!(c, '%' | '_') || c == LIKE_ESCAPE {
                out.push(LIKE_ESCAPE);
            }
            out.push(c);
        };
        match self {
            TagFilter::All => return None,
            TagFilter::Prefix(p) => {
                p.chars().for_each(|c| literal(&mut out, c));
                out.push('%');
            }
            TagFilter::Glob(g) => {
                for token in glob_tokens(g) {
                    match token {
                        GlobToken::Any => out.push('%'),
                        GlobToken::One => out.push('_'),
                        GlobToken::Char(c) => literal(&mut out, c),
                    }
                }
            }
        }
        Some(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GlobToken {
    Any,
    One,
    Char(char),
}

fn glob_tokens(glob: &str) -> Vec<GlobToken> {
    let mut tokens = Vec::new();
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' => GlobToken::Any,
            '?' => GlobToken::One,
            // A trailing backslash stands for itself.
            '\\' => GlobToken::Char(chars.next().unwrap_or('\\')),
            c => GlobToken::Char(c),
        });
    }
    tokens
}

/// Glob matching by the classic two-pointer walk: linear in the tag for each `*`, no recursion.
fn glob_matches(tokens: &[GlobToken], tag: &str) -> bool {
    let text: Vec<char> = tag.chars().collect();
    let (mut t, mut p) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(GlobToken::Any) => {
                star = Some((p, t));
                p += 1;
            }
            Some(GlobToken::One) => {
                t += 1;
                p += 1;
            }
            Some(GlobToken::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p.min(tokens.len())..]
        .iter()
        .all(|k| *k == GlobToken::Any)
}

/// The tag count and a checksum of the names (see [`AllocStore::tags_fingerprint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagsFingerprint {
    /// How many tags.
    pub count: u64,
    /// An order-independent checksum of their names.
    pub checksum: u64,
}

/// A table read page by page in the database's order of tags: each item is one page, or the
/// error that ended the reading. The next page starts after the last tag the database sent.
pub struct Pages<'a, S: AllocStore + ?Sized, T> {
    store: &'a S,
    fetch: FetchPage<S, T>,
    tag_of: fn(&T) -> &str,
    filter: TagFilter,
    size: usize,
    after: Option<String>,
    done: bool,
}

/// How [`Pages`] reads one page: the store, the filter, the tag it starts after.
type FetchPage<S, T> = fn(&S, &TagFilter, Option<&str>) -> Result<Vec<T>, SegmentError>;

/// The rows of a table, [`ROWS_PER_PAGE`] at a time ([`PageQuery::Rows`]), filtered
/// exactly by a [`TagFilter`].
pub type RowPages<'a, S> = Pages<'a, S, LeafAlloc>;
/// The tags of a table, [`TAGS_PER_PAGE`] at a time ([`PageQuery::Tags`]).
pub type TagPages<'a, S> = Pages<'a, S, String>;
/// The tombstones of a table, [`ROWS_PER_PAGE`] at a time ([`PageQuery::Removed`]).
pub type RemovedPages<'a, S> = Pages<'a, S, Tombstone>;

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, Tombstone> {
    /// Every tombstone of `store`.
    pub fn new(store: &'a S) -> Self {
        Pages {
            store,
            fetch: |s, _, after| s.removed_page(after, ROWS_PER_PAGE),
            tag_of: |t| &t.tag,
            filter: TagFilter::All,
            size: ROWS_PER_PAGE,
            after: None,
            done: false,
        }
    }
}

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, LeafAlloc> {
    /// The rows of `store` that pass `filter`.
    pub fn new(store: &'a S, filter: TagFilter) -> Self {
        Pages {
            store,
            fetch: |s, filter, after| {
                s.rows_page(&RowsPage {
                    filter,
                    after,
                    limit: ROWS_PER_PAGE,
                })
            },
            tag_of: |r| &r.tag,
            filter,
            size: ROWS_PER_PAGE,
            after: None,
            done: false,
        }
    }

    /// The same, from the row after tag `after` on (resuming a listing).
    pub fn after(store: &'a S, filter: TagFilter, after: String) -> Self {
        Pages {
            after: Some(after),
            ..Self::new(store, filter)
        }
    }
}

impl<'a, S: AllocStore + ?Sized> Pages<'a, S, String> {
    /// Every tag of `store`.
    pub fn new(store: &'a S) -> Self {
        Pages {
            store,
            fetch: |s, _, after| s.tags_page(after, TAGS_PER_PAGE),
            tag_of: |t| t,
            filter: TagFilter::All,
            size: TAGS_PER_PAGE,
            after: None,
            done: false,
        }
    }
}

impl<S: AllocStore + ?Sized, T> Pages<'_, S, T> {
    /// Where the next page would start (`None` once the last page was read): to resume with
    /// [`RowPages::after`].
    pub fn cursor(&self) -> Option<String> {
        (!self.done).then(|| self.after.clone()).flatten()
    }
}

impl<S: AllocStore + ?Sized, T> Iterator for Pages<'_, S, T> {
    type Item = Result<Vec<T>, SegmentError>;
    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut page = match (self.fetch)(self.store, &self.filter, self.after.as_deref()) {
                Ok(page) => page,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            self.done = page.len() < self.size;
            // The next page starts after the last tag the database sent, filtered or not.
            match page.last() {
                Some(last) => self.after = Some((self.tag_of)(last).to_string()),
                None => self.done = true,
            }
            let (filter, tag_of) = (&self.filter, self.tag_of);
            page.retain(|r| filter.matches(tag_of(r)));
            if !page.is_empty() {
                return Some(Ok(page));
            }
        }
        None
    }
}
