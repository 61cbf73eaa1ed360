//! The configuration sample in the README is a file leafctl accepts, with every key it documents.

mod support;

use support::{Sandbox, config_row, stderr};

#[test]
fn the_readme_config_sample_parses() {
    let readme = include_str!("../README.md");
    let start = readme
        .find("```toml\n")
        .expect("a toml block in the README")
        + "```toml\n".len();
    let len = readme[start..].find("```").expect("the block ends");
    let sample = &readme[start..start + len];
    let sb = Sandbox::new();
    let path = sb.path().join("sample.toml");
    std::fs::write(&path, sample).unwrap();
    let out = sb
        .leafctl()
        .args(["config", "show", "--output", "json", "--config"])
        .arg(&path)
        .env("LEAF_DB_PASSWORD", "not-shown")
        .env_remove("LEAF_STATE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let value = |k: &str| config_row(&rows, k)["value"].clone();
    assert_eq!(value("snowflake.worker_id"), "1");
    assert_eq!(value("state_dir"), "/var/lib/leafctl");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("not-shown"));
}
