//! The book: the README, then the pages of `docs/` in reading order (issue 47). Their console
//! examples run in that order, in one sandbox (`examples.rs`); this module checks that [`BOOK`] is
//! the book: every page of `docs/` is in it, `docs/README.md` lists the pages in its order, the
//! README's map links to each, and every relative link of every page points at a file that exists,
//! and at a heading of it that exists.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The pages in reading order. The examples depend on it: segment mode adds the tag `order` that
/// `serve`'s examples ask for.
pub const BOOK: &[&str] = &[
    "README.md",
    "docs/README.md",
    "docs/segment.md",
    "docs/snowflake.md",
    "docs/serve.md",
    "docs/decode.md",
    "docs/ids.md",
    "docs/regions.md",
    "docs/postgresql.md",
    "docs/operating.md",
    "docs/coming-from-leaf.md",
    "docs/seams.md",
];

/// Pages beside the book whose links are checked too.
const BESIDE: &[&str] = &["RELIABILITY.md"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A page of the book (a path from the repository's root), as it is now.
pub fn read(page: &str) -> String {
    std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The text of a page without its fenced blocks, and the headings outside them.
fn prose(text: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut headings = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if line.starts_with('#') {
            headings.push(line.trim_start_matches('#').trim().to_string());
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, headings)
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (a repeated one gets `-1`, `-2`, ... as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for h in prose(text).1 {
        let base = slug(&h);
        let mut a = base.clone();
        let mut n = 0;
        while seen.contains(&a) {
            n += 1;
            a = format!("{base}-{n}");
        }
        seen.insert(a);
    }
    seen
}

/// The targets of a page's links and images (`[text](target)`), in order, outside code.
fn links(text: &str) -> Vec<String> {
    let (prose, _) = prose(text);
    // Inline code spans (which may run across lines) are left out.
    let mut plain = String::new();
    let mut code = false;
    for c in prose.chars() {
        if c == '`' {
            code = !code;
        } else if !code {
            plain.push(c);
        }
    }
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').expect("a link's target ends");
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    out
}

/// `target` of a link on `page`, as a path from the repository's root, and its anchor.
fn resolve(page: &str, target: &str) -> (String, Option<String>) {
    let (file, anchor) = match target.split_once('#') {
        Some((f, a)) => (f, Some(a.to_string())),
        None => (target, None),
    };
    if file.is_empty() {
        return (page.to_string(), anchor);
    }
    let mut path = PathBuf::new();
    for c in Path::new(page).parent().unwrap().join(file).components() {
        match c {
            Component::ParentDir => assert!(path.pop(), "{page}: {target} leaves the repository"),
            Component::CurDir => {}
            c => path.push(c),
        }
    }
    (path.to_string_lossy().into_owned(), anchor)
}

#[test]
fn the_book_lists_every_page_of_docs_in_reading_order() {
    let listed: BTreeSet<String> = BOOK
        .iter()
        .filter(|p| p.starts_with("docs/"))
        .map(|p| p.to_string())
        .collect();
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            files.insert(format!("docs/{name}"));
        }
    }
    assert_eq!(
        files, listed,
        "the pages of docs/ and the book's list (tests/assets/book.rs) differ"
    );
    assert_eq!(listed.len(), BOOK.len() - 1, "a page is listed twice");
    // The index lists the pages in the book's order.
    let index: Vec<String> = links(&read("docs/README.md"))
        .iter()
        .map(|t| resolve("docs/README.md", t).0)
        .filter(|p| p.starts_with("docs/") && p.ends_with(".md"))
        .fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });
    assert_eq!(
        index,
        BOOK[2..].to_vec(),
        "docs/README.md lists the pages in another order than the book"
    );
    // The README's map links to every page.
    let readme: BTreeSet<String> = links(&read("README.md"))
        .iter()
        .map(|t| resolve("README.md", t).0)
        .collect();
    for page in &BOOK[1..] {
        assert!(
            readme.contains(*page),
            "the README's map does not link to {page}"
        );
    }
}

#[test]
fn every_link_of_the_book_points_at_a_file_and_heading_that_exist() {
    let mut checked = 0;
    for page in BOOK.iter().chain(BESIDE) {
        for target in links(&read(page)) {
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, anchor) = resolve(page, &target);
            assert!(
                root().join(&file).exists(),
                "{page}: the link to {target} points at {file}, which does not exist"
            );
            if let Some(anchor) = anchor {
                assert!(
                    file.ends_with(".md"),
                    "{page}: {target}: an anchor in a file that is not Markdown"
                );
                assert!(
                    anchors(&read(&file)).contains(&anchor),
                    "{page}: the link to {target}: {file} has no heading #{anchor}; it has {:?}",
                    anchors(&read(&file))
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} links found");
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        slug("Past 4,096 per millisecond: `--max-lead MS`"),
        "past-4096-per-millisecond---max-lead-ms"
    );
    assert_eq!(
        slug("`leafctl tag` and `leafctl db init`: administer biz_tags"),
        "leafctl-tag-and-leafctl-db-init-administer-biz_tags"
    );
    assert_eq!(slug("Leaf's own servers"), "leafs-own-servers");
    assert_eq!(
        links("[a `b`](x.md#y) `[c](d)` ![e](f.png)\n```\n[g](h)\n```\n"),
        vec!["x.md#y", "f.png"]
    );
    assert_eq!(
        resolve("docs/serve.md", "../README.md#install"),
        ("README.md".to_string(), Some("install".to_string()))
    );
    assert_eq!(resolve("docs/serve.md", "#errors").0, "docs/serve.md");
}
