//! `leafctl config show`: the effective configuration and where each value came from.

use clap::Subcommand;
use leafctl::config::Origin;
use leafctl::config::leaf::import_leaf_properties;
use leafctl::segment::redact_url;
use serde::Serialize;

use super::Context;
use super::error::usage;
use super::output::{OutputFormat, print_json, print_text, render, table};

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print every setting's effective value and its origin (flag, env, config file, default);
    /// secrets are redacted
    #[command(
        after_help = "Examples:\n  leafctl config show\n  LEAF_WORKER_ID=3 leafctl config show --output json"
    )]
    Show,
    /// Print the leaf.toml equivalent of Leaf's leaf.properties (the password is not copied)
    #[command(after_help = IMPORT_EXAMPLES)]
    ImportLeaf {
        /// Leaf's leaf.properties ("-" for standard input)
        file: std::path::PathBuf,
    },
}

const IMPORT_EXAMPLES: &str = "\
Examples:
  leafctl config import-leaf /opt/leaf/leaf.properties > leaf.toml
  LEAF_DB_PASSWORD=... leafctl --config leaf.toml serve
  leafctl config import-leaf leaf.properties --output json     {\"config\": {...}, \"notes\": [...]}

Understands leaf.name, leaf.segment.enable, leaf.jdbc.url/username, leaf.snowflake.enable,
leaf.snowflake.zk.address, leaf.snowflake.port (and leaf.snowflake.mode of NotFound9's fork).
leaf.jdbc.password is never copied: give it as LEAF_DB_PASSWORD. Leaf's ZooKeeper mode becomes the
forever registry, so the server keeps the worker id Leaf had for this host's IP and port.";

#[derive(Debug, Serialize)]
struct Row {
    key: &'static str,
    value: Option<String>,
    source: String,
}

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
                    eprintln!("note: {note}");
                }
            }
            print_text(imported.to_toml().trim_end())
        }
    }
}

fn show(ctx: &Context) -> anyhow::Result<()> {
    let s = &ctx.settings;
    let src = |o: &Origin| o.to_string();
    let mut rows = vec![
        Row {
            key: "config",
            value: s.config.path.as_ref().map(|p| p.display().to_string()),
            source: s
                .config
                .origin
                .as_ref()
                .map(|o| match o {
                    Origin::Default => "found".to_string(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "none found".into()),
        },
        Row {
            key: "state_dir",
            value: Some(s.state_dir.value.display().to_string()),
            source: src(&s.state_dir.origin),
        },
        Row {
            key: "snowflake.layout",
            value: Some(format!(
                "{} ({})",
                s.layout.value.label, s.layout.value.layout
            )),
            source: src(&s.layout.origin),
        },
        Row {
            key: "snowflake.worker_id",
            value: s.worker_id.as_ref().map(|w| w.value.to_string()),
            source: s
                .worker_id
                .as_ref()
                .map(|w| src(&w.origin))
                .unwrap_or_else(|| "unset".into()),
        },
        Row {
            key: "snowflake.name",
            value: Some(s.name.value.clone()),
            source: src(&s.name.origin),
        },
        Row {
            key: "snowflake.seq_start",
            value: Some(format!("{:?}", s.seq_start.value).to_lowercase()),
            source: src(&s.seq_start.origin),
        },
        Row {
            key: "snowflake.max_lead_ms",
            value: Some(s.max_lead_ms.value.to_string()),
            source: src(&s.max_lead_ms.origin),
        },
        Row {
            key: "db.url",
            value: Some(redact_url(&s.db_url.value)),
            source: src(&s.db_url.origin),
        },
    ];
    let opt = |r: &Option<crate::cli::settings::Resolved<String>>, secret: bool| Row {
        key: "",
        value: r.as_ref().map(|v| {
            if secret {
                "***".to_string()
            } else {
                v.value.clone()
            }
        }),
        source: r
            .as_ref()
            .map(|v| src(&v.origin))
            .unwrap_or_else(|| "unset".into()),
    };
    rows.push(Row {
        key: "snowflake.registry",
        ..opt(
            &s.registry.as_ref().map(|r| crate::cli::settings::Resolved {
                value: r.value.to_string(),
                origin: r.origin.clone(),
            }),
            false,
        )
    });
    rows.push(Row {
        key: "zk.hosts",
        ..opt(&s.zk_hosts, false)
    });
    rows.push(Row {
        key: "zk.auth",
        ..opt(&s.zk_auth, true)
    });
    rows.push(Row {
        key: "zk.instance",
        ..opt(&s.instance, false)
    });
    rows.push(Row {
        key: "zk.session_timeout_ms",
        value: Some(s.zk_session_timeout_ms.value.to_string()),
        source: src(&s.zk_session_timeout_ms.origin),
    });
    rows.push(Row {
        key: "zk.max_clock_skew_ms",
        value: Some(s.zk_max_clock_skew_ms.value.to_string()),
        source: src(&s.zk_max_clock_skew_ms.origin),
    });
    rows.push(Row {
        key: "etcd.endpoints",
        ..opt(&s.etcd_endpoints, false)
    });
    rows.push(Row {
        key: "etcd.user",
        ..opt(&s.etcd_user, false)
    });
    rows.push(Row {
        key: "etcd.password",
        ..opt(&s.etcd_password, true)
    });
    rows.push(Row {
        key: "etcd.ca_file",
        value: s
            .etcd_ca_file
            .as_ref()
            .map(|c| c.value.display().to_string()),
        source: s
            .etcd_ca_file
            .as_ref()
            .map(|c| src(&c.origin))
            .unwrap_or_else(|| "unset".into()),
    });
    rows.push(Row {
        key: "etcd.lease_ttl_ms",
        value: Some(s.etcd_lease_ttl_ms.value.to_string()),
        source: src(&s.etcd_lease_ttl_ms.origin),
    });
    rows.push(Row {
        key: "serve.listen",
        value: Some(s.serve_listen.value.clone()),
        source: src(&s.serve_listen.origin),
    });
    rows.push(Row {
        key: "serve.segment",
        value: Some(s.serve_segment.value.to_string()),
        source: src(&s.serve_segment.origin),
    });
    rows.push(Row {
        key: "serve.snowflake",
        value: Some(s.serve_snowflake.value.to_string()),
        source: src(&s.serve_snowflake.origin),
    });
    rows.push(Row {
        key: "serve.token",
        ..opt(&s.serve_token, true)
    });
    rows.push(Row {
        key: "serve.header_timeout_ms",
        value: Some(s.serve_header_timeout_ms.value.to_string()),
        source: src(&s.serve_header_timeout_ms.origin),
    });
    rows.push(Row {
        key: "serve.max_connections",
        value: Some(s.serve_max_connections.value.to_string()),
        source: src(&s.serve_max_connections.origin),
    });
    rows.push(Row {
        key: "serve.metrics_tags",
        value: Some(s.serve_metrics_tags.value.to_string()),
        source: src(&s.serve_metrics_tags.origin),
    });
    rows.push(Row {
        key: "db.password",
        value: s.db_password.as_ref().map(|_| "***".to_string()),
        source: s
            .db_password
            .as_ref()
            .map(|p| src(&p.origin))
            .unwrap_or_else(|| "unset".into()),
    });
    rows.push(Row {
        key: "db.registry_wait_timeout_s",
        value: Some(s.db_registry_wait_timeout_s.value.to_string()),
        source: src(&s.db_registry_wait_timeout_s.origin),
    });
    match ctx.output {
        OutputFormat::Json => print_json(&rows),
        OutputFormat::Text => {
            let mut t = table(&["key", "value", "source"]);
            for r in &rows {
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
