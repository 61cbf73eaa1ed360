//! The configuration sample of the book (docs/operating.md, "Configuration") is a file leafctl
//! accepts, with every key it documents.

use crate::support;

use support::{Sandbox, config_row};

#[test]
fn the_books_config_sample_parses() {
    let page = include_str!("../../docs/operating.md");
    let start = page
        .find("```toml\n")
        .expect("a toml block in docs/operating.md")
        + "```toml\n".len();
    let len = page[start..].find("```").expect("the block ends");
    let sample = &page[start..start + len];
    let sb = Sandbox::new();
    let path = sb.path().join("sample.toml");
    std::fs::write(&path, sample).unwrap();
    let out = support::run_ok(
        sb.leafctl()
            .args(["config", "show", "--output", "json", "--config"])
            .arg(&path)
            .env("LEAF_DB_PASSWORD", "not-shown")
            .env_remove("LEAF_STATE_DIR"),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let value = |k: &str| config_row(&rows, k)["value"].clone();
    assert_eq!(value("snowflake.worker_id"), "1");
    assert_eq!(value("state_dir"), "/var/lib/leafctl");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not-shown"));
}

/// The book documents every setting as leafctl declares it (`config show --help` lists the
/// declarations): each key appears in the configuration sample with its environment variable,
/// and the sample documents no key leafctl does not have.
#[test]
fn the_books_config_sample_documents_every_declared_setting() {
    let page = include_str!("../../docs/operating.md");
    let start = page.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let sample = &page[start..start + page[start..].find("```").expect("its end")];
    let out = support::run_ok(Sandbox::new().leafctl().args(["config", "show", "--help"]));
    let help = String::from_utf8_lossy(&out.stdout);
    let declared: Vec<(String, Option<String>)> = help
        .lines()
        .skip_while(|l| !l.starts_with("Settings ("))
        .skip(1)
        .filter(|l| l.starts_with("  ") && !l.starts_with("      "))
        .map(|l| {
            let mut words = l.split_whitespace();
            let key = words.next().unwrap_or_default().to_string();
            let env = words
                .next()
                .filter(|w| w.starts_with("LEAF_"))
                .map(|w| w.trim_end_matches([',', ';']).to_string());
            (key, env)
        })
        .collect();
    assert!(declared.len() >= 25, "{help}");
    // Sample lines are `key = value   # ENV, --flag (...)`, in `[section]`s.
    let mut section = String::new();
    let mut documented = Vec::new();
    for line in sample.lines() {
        let line = line.trim_start_matches("# ").trim();
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_string();
        } else if let Some((key, rest)) = line.split_once(" = ") {
            let full = if section.is_empty() {
                key.trim().to_string()
            } else {
                format!("{section}.{}", key.trim())
            };
            documented.push((full, rest.to_string()));
        }
    }
    for (key, env) in &declared {
        // The etcd password is only ever read from the environment.
        if key == "etcd.password" {
            assert!(page.contains("LEAF_ETCD_PASSWORD"));
            continue;
        }
        let line = documented
            .iter()
            .find(|(k, _)| k == key)
            .unwrap_or_else(|| {
                panic!("{key} is not in the configuration sample of docs/operating.md")
            });
        if let Some(env) = env {
            assert!(
                line.1.contains(env.as_str()),
                "{key}: docs/operating.md names {env}: {}",
                line.1
            );
        }
    }
    for (key, _) in &documented {
        assert!(
            declared.iter().any(|(k, _)| k == key),
            "docs/operating.md documents {key}, which leafctl does not declare"
        );
    }
}
