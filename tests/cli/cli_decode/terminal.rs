//! (Part of the cli_decode test binary.) Black-box tests of `leafctl decode` at a terminal: the bordered table, rows shown as they
//! arrive, and numbers never split however narrow the terminal.

use crate::support::{Sandbox, assert_contains_all, on_a_terminal_of};

/// Worker 1, sequence 5, 1000 ms after Leaf's epoch (2010-11-04T01:42:55.657Z).
const KNOWN: u64 = (1000 << 22) | (1 << 12) | 5;

/// `leafctl ARGS` under a pseudo-terminal of 200 columns, with `stdin` as standard input.
fn on_a_terminal(sb: &Sandbox, args: &str, stdin: Option<&std::path::Path>) -> String {
    on_a_terminal_of(sb, 200, &format!("'{{bin}}' {args}"), stdin)
}

#[test]
fn a_terminal_gets_the_bordered_table() {
    let sb = Sandbox::new();
    let shown = on_a_terminal(&sb, &format!("decode {KNOWN} {}", KNOWN + 1), None);
    assert_contains_all(&shown, &["┌", "└"]);
    let header = shown.lines().find(|l| l.contains("time (UTC)")).unwrap();
    assert_contains_all(header, &["id", "age", "worker", "sequence"]);
    let row = shown
        .lines()
        .find(|l| l.contains(&KNOWN.to_string()))
        .unwrap_or_else(|| panic!("no row for {KNOWN} in {shown}"));
    assert_contains_all(row, &["2010-11-04T01:42:55.657Z", "ago"]);
    assert!(!shown.contains('\t'));

    // --output tsv on a terminal: the stable form, no table.
    let tsv = on_a_terminal(&sb, &format!("decode --output tsv {KNOWN}"), None);
    assert!(!tsv.contains('│'), "{tsv}");
    assert!(
        tsv.contains(&format!("{KNOWN}\t2010-11-04T01:42:55.657Z\t")),
        "{tsv}"
    );

    // Many IDs as arguments on a terminal: tab-separated lines after a note.
    let args: Vec<String> = (0..1100u64).map(|i| (KNOWN + i).to_string()).collect();
    let shown = on_a_terminal(&sb, &format!("decode {}", args.join(" ")), None);
    assert!(
        shown.contains("printing tab-separated lines"),
        "{}",
        &shown[..500]
    );
    let rows = shown
        .lines()
        .filter(|l| l.contains("\t2010-11-04T"))
        .count();
    assert_eq!(rows, 1100);

    // IDs read from stdin on a terminal: aligned rows as they are read, in constant memory.
    let file = sb.path().join("many.txt");
    let many: String = (0..1500u64).map(|i| format!("{}\n", KNOWN + i)).collect();
    std::fs::write(&file, many).unwrap();
    let shown = on_a_terminal(&sb, "decode", Some(&file));
    assert!(!shown.contains('│') && !shown.contains('\t'));
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("  2010-11-04T"))
        .collect();
    assert_eq!(rows.len(), 1500);
    assert!(
        rows[0].starts_with(&format!("{KNOWN:>19}  2010-11-04T01:42:55.657Z")),
        "{}",
        rows[0]
    );
}

/// `tail -f app.log | grep ... | leafctl decode` at a terminal: each row shows as soon as its
/// ID is read, not when the input ends (issue 18 #1).
#[test]
fn rows_read_from_a_stream_show_at_a_terminal_as_they_arrive() {
    let sb = Sandbox::new();
    let shown = on_a_terminal_of(
        &sb,
        120,
        &format!(
            "(echo {KNOWN}; sleep 1.5; echo MARKER > /dev/tty; echo {}) | '{{bin}}' decode",
            KNOWN + 1
        ),
        None,
    );
    let first = shown
        .find(&KNOWN.to_string())
        .unwrap_or_else(|| panic!("{shown}"));
    let marker = shown.find("MARKER").unwrap_or_else(|| panic!("{shown}"));
    let second = shown.find(&(KNOWN + 1).to_string()).unwrap();
    assert!(
        first < marker,
        "the first row waited for more input: {shown}"
    );
    assert!(marker < second, "{shown}");
    let header = shown.lines().find(|l| l.contains("time (UTC)")).unwrap();
    assert!(header.trim_start().starts_with("id"), "{header}");
}

/// Tables never split a number over lines, however narrow the terminal, and a terminal that
/// reports a width of 0 gets a sane table (issue 18 #2).
#[test]
fn numbers_in_tables_are_never_split() {
    let sb = Sandbox::new();
    sb.leafctl()
        .args([
            "tag",
            "add",
            "order-numbers-for-the-shop",
            "--start",
            "9223372036854000000",
            "--desc",
            "a description long enough to need wrapping on a narrow terminal of sixty columns",
        ])
        .assert()
        .success();
    for cols in [60, 0] {
        let shown = on_a_terminal_of(&sb, cols, "'{bin}' tag list", None);
        assert!(
            shown.contains("9223372036854000000"),
            "{cols} columns:\n{shown}"
        );
        assert!(
            shown.contains("order-numbers-for-the-shop"),
            "{cols} columns:\n{shown}"
        );
        let widest = shown.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(
            widest >= 40,
            "one character per column at width {cols}:\n{shown}"
        );
        let ids: Vec<String> = (0..3).map(|i| (KNOWN + i).to_string()).collect();
        let shown = on_a_terminal_of(
            &sb,
            cols,
            &format!("'{{bin}}' decode {}", ids.join(" ")),
            None,
        );
        for id in &ids {
            assert!(shown.contains(id.as_str()), "{cols} columns:\n{shown}");
        }
        assert!(
            shown.contains("2010-11-04T01:42:55.657Z"),
            "{cols} columns:\n{shown}"
        );
    }
}
