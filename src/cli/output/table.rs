//! Tables in leafctl's house style: boxed on a terminal, tab-separated elsewhere.

use std::io::{self, IsTerminal};

/// A table in leafctl's house style.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_header(header.iter().copied());
    t
}

/// Narrowest terminal width a table is fitted to; a terminal that reports less (0, say) gets
/// [`FALLBACK_WIDTH`].
const MIN_WIDTH: u16 = 20;
const FALLBACK_WIDTH: u16 = 80;

/// Draws a [`table`]: no word is broken over lines (IDs, max_ids and times are copied from
/// here); text wraps at its spaces to fit the terminal, and a table wider than the terminal
/// stays whole.
/// A terminal reporting a width under 20 columns (some report 0) is taken as 80 wide.
/// Off a terminal (a pipe, a file) there is no box: a header line and one line per row, the
/// cells separated by tabs (a tab, line break or backslash in a cell written \t, \n, \\).
pub fn render(t: comfy_table::Table) -> String {
    if io::stdout().is_terminal() {
        boxed(t)
    } else {
        plain(&t)
    }
}

/// A table as tab-separated lines, header first, for a pipe or a file.
pub fn plain(t: &comfy_table::Table) -> String {
    let mut lines = Vec::new();
    for row in t.header().into_iter().chain(t.row_iter()) {
        let cells: Vec<String> = row
            .cell_iter()
            .map(|c| {
                let mut out = String::new();
                for ch in c.content().chars() {
                    match ch {
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\\' => out.push_str("\\\\"),
                        ch => out.push(ch),
                    }
                }
                out
            })
            .collect();
        lines.push(cells.join("\t"));
    }
    lines.join("\n")
}

/// A table drawn with its box, fitted to the terminal.
pub fn boxed(mut t: comfy_table::Table) -> String {
    if t.width().is_some_and(|w| w < MIN_WIDTH) {
        t.set_width(FALLBACK_WIDTH);
    }
    let mut unbreakable: Vec<u16> = Vec::new();
    for row in t.header().into_iter().chain(t.row_iter()) {
        for (i, cell) in row.cell_iter().enumerate() {
            let content = cell.content();
            if unbreakable.len() <= i {
                unbreakable.resize(i + 1, 0);
            }
            let longest_word = content
                .split_whitespace()
                .map(|word| word.chars().count())
                .max()
                .unwrap_or(0);
            let w = u16::try_from(longest_word).unwrap_or(u16::MAX);
            unbreakable[i] = unbreakable[i].max(w);
        }
    }
    for (i, w) in unbreakable.into_iter().enumerate() {
        if w > 0
            && let Some(column) = t.column_mut(i)
        {
            // The bound counts the cell's padding too (one space each side).
            column.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(w.saturating_add(2)),
            ));
        }
    }
    t.to_string()
}
