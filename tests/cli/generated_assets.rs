//! The checked-in shell completions and man pages match the CLI; regenerate them with
//! `cargo run --quiet -- generate-assets .` when this fails.

use std::path::Path;

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn completions_and_man_pages_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    assert_cmd::Command::cargo_bin("leafctl")
        .unwrap()
        .args(["generate-assets"])
        .arg(tmp.path())
        .assert()
        .success();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for sub in ["completions", "man"] {
        let fresh = files(&tmp.path().join(sub));
        assert!(!fresh.is_empty(), "nothing generated in {sub}");
        if files(&repo.join(sub)) != fresh {
            stale.push(format!(
                "{sub}/ has other files than the CLI generates: {:?}",
                fresh
            ));
            continue;
        }
        for f in fresh {
            let a = std::fs::read(tmp.path().join(sub).join(&f)).unwrap();
            let b = std::fs::read(repo.join(sub).join(&f)).unwrap();
            if a != b {
                stale.push(format!("{sub}/{f}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}; run `cargo run --quiet -- generate-assets .` and commit"
    );
}

/// The maintainer's `generate-assets` is not offered to users by completions or man pages.
#[test]
fn generate_assets_stays_out_of_completions_and_man_pages() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["completions", "man"] {
        for name in files(&repo.join(sub)) {
            let text = std::fs::read_to_string(repo.join(sub).join(&name)).unwrap();
            assert!(!text.contains("generate-assets"), "{sub}/{name}");
        }
    }
}

/// Issue 47, item 1: every registry backend of the one list (`leafctl::registries`) is in the
/// help and the man page of `next`: its name among `--registry`'s values, its flag among the
/// options. A backend added to the list without its settings and help fails here (the package
/// description and the library's docs are checked beside the list, in `registries.rs`).
#[test]
fn every_registry_backend_is_in_the_help_and_the_man_page() {
    let help = assert_cmd::Command::cargo_bin("leafctl")
        .unwrap()
        .args(["next", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let man = std::fs::read_to_string(repo.join("man/leafctl-next.1"))
        .unwrap()
        .replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "");
    let mut seen = 0;
    for backend in leafctl::registries::backends() {
        let name = backend.kind.name();
        for (what, text) in [("next --help", &help), ("man/leafctl-next.1", &man)] {
            let values = text
                .split("--registry <")
                .nth(1)
                .and_then(|v| v.split('>').next())
                .unwrap_or_default();
            assert!(
                values.split('|').any(|v| v == name),
                "{what}: --registry <{values}> lacks {name}"
            );
            let flag = backend.flag.split(' ').next().unwrap_or_default();
            assert!(text.contains(flag), "{what} lacks {flag} ({name})");
        }
        seen += 1;
    }
    assert_eq!(seen, leafctl::registries::kind_choices().split('|').count());
}

/// Issue 47, item 1: every setting a registry backend declares in its own folder is in the one
/// table of settings: `config show --help` and its man page list its key and environment
/// variable, and its flag is among `next`'s options.
#[test]
fn every_registry_backend_setting_is_in_the_settings_help_and_man_page() {
    let help = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("leafctl")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (config_help, next_help) = (
        help(&["config", "show", "--help"]),
        help(&["next", "--help"]),
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let man = std::fs::read_to_string(repo.join("man/leafctl-config-show.1"))
        .unwrap()
        .replace("\\-", "-");
    let settings = leafctl::registries::settings();
    assert!(settings.len() >= 10, "{}", settings.len());
    for setting in settings {
        for (what, text) in [("config show --help", &config_help), ("its man page", &man)] {
            // The names' line: the key, then the variable and flag (help lines may name a key).
            let named = text.lines().any(|l| {
                l.split_whitespace().next() == Some(setting.key)
                    && setting.env.is_none_or(|var| l.contains(var))
            });
            assert!(named, "{what} lacks {} with {:?}", setting.key, setting.env);
        }
        if let Some(flag) = setting.flag {
            let flag = format!("--{} <{}>", flag.long, flag.value_name);
            assert!(next_help.contains(&flag), "next --help lacks {flag}");
        }
    }
}
