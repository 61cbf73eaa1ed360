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
    clap_mangen::generate_to(Cli::command(), &man).context("cannot write man pages")?;
    Ok(())
}
