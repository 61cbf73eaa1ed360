//! Generated files kept in the repository: shell completions and man pages.

use std::path::Path;

use anyhow::Context as _;
use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;

/// Writes `completions/` and `man/` under `dir` from the CLI's own definition.
pub fn generate(dir: &Path) -> anyhow::Result<()> {
    let completions = dir.join("completions");
    let man = dir.join("man");
    for d in [&completions, &man] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let mut cmd = Cli::command();
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        clap_complete::generate_to(shell, &mut cmd, "leafctl", &completions)
            .with_context(|| format!("cannot write {shell} completions"))?;
    }
    man_pages(Cli::command(), &man).context("cannot write man pages")?;
    Ok(())
}

/// One page per command, as `clap_mangen::generate_to` writes them, except the text after the
/// options: a paragraph headed `Examples:` (or `Exit codes:`, ...) becomes its own section
/// (EXAMPLES, EXIT CODES) printed line for line, as written, so commands are neither re-wrapped
/// nor hyphenated; other paragraphs go under NOTES.
fn man_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    fn generate(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            generate(sub, dir)?;
        }
        let man = clap_mangen::Man::new(cmd.clone());
        let mut page = Vec::new();
        man.render_title(&mut page)?;
        man.render_name_section(&mut page)?;
        man.render_synopsis_section(&mut page)?;
        man.render_description_section(&mut page)?;
        if cmd.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut page)?;
        }
        if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
            man.render_subcommands_section(&mut page)?;
        }
        if let Some(after) = cmd.get_after_help() {
            page.extend_from_slice(after_help_roff(&after.to_string()).as_bytes());
        }
        if cmd.get_version().is_some() {
            man.render_version_section(&mut page)?;
        }
        std::fs::write(dir.join(man.get_filename()), page)
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    generate(cmd, dir)
}

/// Escapes text for roff: backslashes, a leading control character, and `-` (a plain hyphen,
/// not the typographic one man would print and a reader would copy).
fn roff_escape(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    if line.starts_with(['.', '\'']) {
        out.push_str("\\&");
    }
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    out
}

/// The `after_help` text as man sections (see [`man_pages`]).
fn after_help_roff(text: &str) -> String {
    let mut out = String::new();
    let mut notes = Vec::new();
    for paragraph in text.split("\n\n") {
        let mut lines = paragraph.lines();
        let Some(first) = lines.next() else { continue };
        match first.strip_suffix(':') {
            Some(heading) if !heading.contains(' ') || heading == "Exit codes" => {
                out.push_str(&format!(".SH \"{}\"\n.nf\n", heading.to_uppercase()));
                for line in lines {
                    out.push_str(&roff_escape(line));
                    out.push('\n');
                }
                out.push_str(".fi\n");
            }
            _ => notes.push(paragraph),
        }
    }
    if !notes.is_empty() {
        out.push_str(".SH NOTES\n");
        for paragraph in notes {
            out.push_str(".PP\n");
            for line in paragraph.lines() {
                out.push_str(&roff_escape(line));
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_become_a_section_kept_line_for_line() {
        let roff = after_help_roff(
            "Examples:\n  leafctl decode 1 | jq 'select(.worker == 7)'\n  .hidden\n\nSome prose -v.",
        );
        assert!(roff.starts_with(".SH \"EXAMPLES\"\n.nf\n"), "{roff}");
        assert!(
            roff.contains("  leafctl decode 1 | jq 'select(.worker == 7)'\n"),
            "{roff}"
        );
        assert!(
            roff.contains("\\&  .hidden") || roff.contains("  .hidden"),
            "{roff}"
        );
        assert!(
            roff.contains(".fi\n.SH NOTES\n.PP\nSome prose \\-v."),
            "{roff}"
        );
    }
}
