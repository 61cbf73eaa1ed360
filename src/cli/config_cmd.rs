//! `leafctl config show`: the effective configuration and where each value came from.

use clap::Subcommand;
use leafctl::config::leaf::import_leaf_properties;

use super::Context;
use super::error::usage;
use super::output::{OutputFormat, print_json, print_text, render, table};

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print every setting's effective value and its origin (flag, env, config file, default);
    /// secrets are redacted
    #[command(after_help = show_help())]
    Show,
    /// Print the leaf.toml equivalent of Leaf's leaf.properties (the password is not copied)
    #[command(after_help = IMPORT_EXAMPLES)]
    ImportLeaf {
        /// Leaf's leaf.properties ("-" for standard input)
        file: std::path::PathBuf,
    },
}

/// `config show --help`: examples, then every setting as `settings::SETTINGS` declares it.
fn show_help() -> String {
    format!(
        "Examples:\n  leafctl config show\n  LEAF_WORKER_ID=3 leafctl config show --output json\n\n{}",
        super::settings::settings_help()
    )
}

const IMPORT_EXAMPLES: &str = "\"
Examples:
  leafctl config import-leaf /opt/leaf/leaf.properties > leaf.toml
  LEAF_DB_PASSWORD=... leafctl --config leaf.toml serve
  leafctl config import-leaf leaf.properties --output json     {\"config\": {...}, \"notes\": [...]}

Understands leaf.name, leaf.segment.enable, leaf.jdbc.url/username, leaf.snowflake.enable,
leaf.snowflake.zk.address, leaf.snowflake.port, server.port (and leaf.snowflake.mode of NotFound9's
fork). Like Leaf's server, the config listens on all interfaces (0.0.0.0, port leaf.snowflake.port,
else server.port, else 8080).
leaf.jdbc.password is never copied: give it as LEAF_DB_PASSWORD. Leaf's ZooKeeper mode becomes the
forever registry, so the server keeps the worker id Leaf had for this host's IP and port.";

pub fn run(ctx: &Context, cmd: ConfigCommand) -> anyhow::Result<()> {
    match cmd {
        ConfigCommand::Show => show(ctx),
        ConfigCommand::ImportLeaf { file } => import_leaf(ctx, &file),
    }
}

fn import_leaf(ctx: &Context, file: &std::path::Path) -> anyhow::Result<()> {
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| {
        usage(
            format!("cannot read {}: {e}", file.display()),
            "give the path of Leaf's leaf.properties (or - for standard input)",
        )
    })?;
    let imported = import_leaf_properties(&text).map_err(|e| {
        usage(
            format!("{}: {e}", file.display()),
            "fix the property, or write leaf.toml by hand (see `leafctl config show`)",
        )
    })?;
    match ctx.output {
        OutputFormat::Json => print_json(&serde_json::json!({
            "config": imported.config,
            "notes": imported.notes,
        })),
        OutputFormat::Text => {
            if !ctx.quiet {
                for note in &imported.notes {
                    super::error::note(note);
                }
            }
            print_text(imported.to_toml().trim_end())
        }
    }
}

/// Prints what resolution recorded for each setting (see `settings::SETTINGS`).
fn show(ctx: &Context) -> anyhow::Result<()> {
    let rows = &ctx.settings.shown;
    match ctx.output {
        OutputFormat::Json => print_json(rows),
        OutputFormat::Text => {
            let mut t = table(&["key", "value", "source"]);
            for r in rows {
                t.add_row(vec![
                    r.key.to_string(),
                    r.value.clone().unwrap_or_else(|| "-".into()),
                    r.source.clone(),
                ]);
            }
            print_text(&render(t))
        }
    }
}
