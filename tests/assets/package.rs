//! `scripts/package` builds a Debian package that holds the binary, every man page, the bash/zsh/fish
//! completions, the README with the book it links to (docs/, RELIABILITY.md) and the systemd unit (not
//! enabled), and the binary it installs runs.
//!
//! To keep the suite fast this packages the binary `cargo test` already built (the dev profile, via
//! LEAFCTL_PACKAGE_PROFILE and LEAFCTL_PACKAGE_NO_BUILD) in a temporary target directory; a plain
//! `scripts/package` builds and packages the release profile. Needs dpkg-deb (package dpkg) and gzip;
//! the script installs cargo-deb when it is missing and needs dpkg-shlibdeps (package dpkg-dev).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Worker 1, sequence 5, 1000 ms after Leaf's epoch (2010-11-04T01:42:55.657Z).
const KNOWN: u64 = (1000 << 22) | (1 << 12) | 5;

const UNIT: &str = "/usr/lib/systemd/system/leafctl.service";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(cmd: &mut Command) -> String {
    String::from_utf8(run(cmd).stdout).unwrap()
}

/// The Cargo profile that built this test's `leafctl` (target/debug is the dev profile's directory).
fn binary_profile() -> String {
    let exe = Path::new(env!("CARGO_BIN_EXE_leafctl"));
    let dir = exe.parent().unwrap().file_name().unwrap().to_str().unwrap();
    if dir == "debug" { "dev" } else { dir }.to_owned()
}

/// Files named `*.1` in man/, sorted.
fn man_pages() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".1"))
        .collect();
    v.sort();
    assert!(v.contains(&"leafctl.1".to_owned()), "man/ has no leafctl.1");
    v
}

/// Runs `sh <script> <args>` as on a host where systemd runs (`[ -d /run/systemd/system ]` holds),
/// with fake deb-systemd-helper, deb-systemd-invoke and systemctl first on PATH, and returns what they
/// were asked to do, one call per line. The helper answers as for a unit that was never installed
/// before: `debian-installed` no, `was-enabled` yes (its default).
fn run_maintainer_script(script: &Path, args: &[&str], fake_bin: &Path) -> String {
    let log = fake_bin.join("calls.log");
    std::fs::create_dir_all(fake_bin).unwrap();
    let text = std::fs::read_to_string(script).unwrap();
    let script = fake_bin.join("script");
    std::fs::write(&script, text.replace("[ -d /run/systemd/system ]", "true")).unwrap();
    for tool in ["deb-systemd-helper", "deb-systemd-invoke", "systemctl"] {
        let path = fake_bin.join(tool);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{tool} $*\" >> '{}'\n\
                 case \"$*\" in *debian-installed*) exit 1;; esac\nexit 0\n",
                log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = std::fs::remove_file(&log);
    let path = format!(
        "{}:{}",
        fake_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    run(Command::new("sh").arg(&script).args(args).env("PATH", path));
    std::fs::read_to_string(&log).unwrap_or_default()
}

#[test]
fn debian_package_installs_binary_man_pages_completions_and_a_disabled_unit() {
    // dpkg-deb comes with dpkg; a missing one is a failure, not a skip.
    let dpkg_deb = Command::new("dpkg-deb").arg("--version").output();
    assert!(
        dpkg_deb.as_ref().is_ok_and(|o| o.status.success()),
        "dpkg-deb is needed (apt-get install dpkg): {dpkg_deb:?}"
    );
    let arch = stdout(Command::new("dpkg").arg("--print-architecture"))
        .trim()
        .to_owned();

    // Build the package, in a target directory of its own: cargo-deb deletes target/debian/leafctl_*.deb
    // before it writes one (wherever to), and keeps its temporary files in the target directory. That
    // directory holds only the binary `cargo test` built, where cargo-deb looks for the profile's.
    let tmp = tempfile::tempdir().unwrap();
    let exe = Path::new(env!("CARGO_BIN_EXE_leafctl"));
    let target = tmp.path().join("target");
    let profile_dir = target.join(exe.parent().unwrap().file_name().unwrap());
    std::fs::create_dir_all(&profile_dir).unwrap();
    std::os::unix::fs::symlink(exe, profile_dir.join("leafctl")).unwrap();
    let started = std::time::Instant::now();
    let printed = stdout(
        Command::new(repo().join("scripts/package"))
            .arg("--fast")
            .env("CARGO_TARGET_DIR", &target)
            .env("LEAFCTL_PACKAGE_PROFILE", binary_profile())
            .env("LEAFCTL_PACKAGE_NO_BUILD", "1"),
    );
    eprintln!("scripts/package took {:?}", started.elapsed());
    let deb = target.join(format!("debian/leafctl_{VERSION}_{arch}.deb"));
    assert_eq!(
        printed.lines().last().map(PathBuf::from),
        Some(deb.clone()),
        "scripts/package should print the path of the .deb last; it printed:\n{printed}"
    );
    assert!(deb.is_file(), "{} was not written", deb.display());

    // Control fields.
    let info = stdout(Command::new("dpkg-deb").arg("--info").arg(&deb));
    let field = |name: &str| -> Option<String> {
        info.lines()
            .find_map(|l| l.trim_start().strip_prefix(&format!("{name}: ")))
            .map(str::to_owned)
    };
    assert_eq!(field("Package").as_deref(), Some("leafctl"), "{info}");
    assert_eq!(field("Version").as_deref(), Some(VERSION), "{info}");
    assert_eq!(
        field("Architecture").as_deref(),
        Some(arch.as_str()),
        "{info}"
    );
    let depends = field("Depends").unwrap_or_default();
    assert!(depends.contains("libc6"), "Depends: {depends:?}\n{info}");

    // Contents: path -> mode, from lines like `-rwxr-xr-x root/root 123 2024-01-01 00:00 ./usr/bin/leafctl`.
    let contents = stdout(Command::new("dpkg-deb").arg("--contents").arg(&deb));
    let entries: Vec<(String, String)> = contents
        .lines()
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let path = fields.last().unwrap().trim_start_matches('.');
            (path.trim_end_matches('/').to_owned(), fields[0].to_owned())
        })
        .collect();
    let files: BTreeSet<&str> = entries
        .iter()
        .filter(|(_, mode)| mode.starts_with('-'))
        .map(|(p, _)| p.as_str())
        .collect();
    let mode = |path: &str| {
        entries
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, m)| m.as_str())
    };
    let mut expected: Vec<String> = vec![
        "/usr/bin/leafctl".into(),
        "/usr/share/bash-completion/completions/leafctl".into(),
        "/usr/share/zsh/vendor-completions/_leafctl".into(),
        "/usr/share/fish/vendor_completions.d/leafctl.fish".into(),
        UNIT.into(),
    ];
    expected.extend(
        man_pages()
            .iter()
            .map(|m| format!("/usr/share/man/man1/{m}.gz")),
    );
    let missing: Vec<&String> = expected
        .iter()
        .filter(|p| !files.contains(p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "missing from the package: {missing:?}\n{contents}"
    );
    assert_eq!(mode("/usr/bin/leafctl"), Some("-rwxr-xr-x"), "{contents}");
    assert_eq!(mode(UNIT), Some("-rw-r--r--"), "{contents}");
    let stray: Vec<&&str> = files
        .iter()
        .filter(|p| {
            p.starts_with("/usr/local") || p.starts_with("/etc/systemd") || p.contains(".wants/")
        })
        .collect();
    assert!(stray.is_empty(), "unexpected in the package: {stray:?}");

    // Unpack into a temporary root and check what lands there.
    let root = tmp.path().join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let at = |p: &str| root.join(p.trim_start_matches('/'));
    for m in man_pages() {
        let unzipped = run(Command::new("gzip")
            .arg("-dc")
            .arg(at(&format!("/usr/share/man/man1/{m}.gz"))))
        .stdout;
        assert!(
            unzipped == std::fs::read(repo().join("man").join(&m)).unwrap(),
            "{m} in the package differs from man/{m}"
        );
    }
    for (src, dest) in [
        (
            "leafctl.bash",
            "/usr/share/bash-completion/completions/leafctl",
        ),
        ("_leafctl", "/usr/share/zsh/vendor-completions/_leafctl"),
        (
            "leafctl.fish",
            "/usr/share/fish/vendor_completions.d/leafctl.fish",
        ),
    ] {
        assert!(
            std::fs::read(at(dest)).unwrap()
                == std::fs::read(repo().join("completions").join(src)).unwrap(),
            "{dest} differs from completions/{src}"
        );
    }

    // The README and the book its map links to, beside it as in the repository.
    let mut docs = vec!["README.md".to_string(), "RELIABILITY.md".to_string()];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        docs.push(format!("docs/{name}"));
    }
    for doc in &docs {
        let dest = format!("/usr/share/doc/leafctl/{doc}");
        assert!(
            std::fs::read(at(&dest)).ok() == Some(std::fs::read(repo().join(doc)).unwrap()),
            "{dest} is missing from the package or differs from {doc}\n{contents}"
        );
    }

    // The unit is contrib/leafctl.service running the packaged binary.
    let unit = std::fs::read_to_string(at(UNIT)).unwrap();
    let contrib = std::fs::read_to_string(repo().join("contrib/leafctl.service")).unwrap();
    let body = |s: &str| s[s.find("\n[Unit]").expect("[Unit] section")..].to_owned();
    assert_eq!(
        body(&unit),
        body(&contrib).replace(
            "\nExecStart=/usr/local/bin/leafctl ",
            "\nExecStart=/usr/bin/leafctl "
        ),
        "the packaged unit should be contrib/leafctl.service with ExecStart=/usr/bin/leafctl"
    );
    assert!(!unit.contains("/usr/local"), "{unit}");
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let exec_bin = exec.split_whitespace().next().unwrap();
    assert!(
        files.contains(exec_bin),
        "ExecStart runs {exec_bin}, which the package does not hold"
    );

    // Neither enabled nor started: run the postinst as dpkg does on a first install, with the systemd
    // helpers faked (cargo-deb writes maintainer scripts only when maintainer-scripts is set).
    let control = tmp.path().join("control");
    run(Command::new("dpkg-deb").arg("-e").arg(&deb).arg(&control));
    let postinst = control.join("postinst");
    assert!(postinst.is_file(), "no postinst (systemd integration)");
    let fake = tmp.path().join("fake-bin");
    let calls = run_maintainer_script(&postinst, &["configure"], &fake);
    for call in calls.lines() {
        let words: Vec<&str> = call.split_whitespace().collect();
        assert!(
            !words.iter().any(|w| {
                [
                    "enable",
                    "start",
                    "restart",
                    "try-restart",
                    "reload-or-restart",
                ]
                .contains(w)
            }),
            "postinst must neither enable nor start leafctl on install: {call}\nall calls:\n{calls}"
        );
    }
    assert!(
        calls.contains("deb-systemd-helper update-state leafctl.service"),
        "postinst should record the unit's state (for purge); calls:\n{calls}"
    );

    // The installed binary runs, without any server.
    let bin = at("/usr/bin/leafctl");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let leafctl = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("LEAF_")) {
            cmd.env_remove(k);
        }
        cmd.args(args)
            .current_dir(&home)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_DATA_HOME", home.join("data"));
        stdout(&mut cmd)
    };
    assert_eq!(leafctl(&["--version"]), format!("leafctl {VERSION}\n"));
    let decoded: serde_json::Value = serde_json::from_str(&leafctl(&[
        "decode",
        "--output",
        "json",
        &KNOWN.to_string(),
    ]))
    .unwrap();
    assert_eq!(
        decoded,
        serde_json::json!([{
            "id": KNOWN.to_string(),
            "layout": "leaf",
            "time": "2010-11-04T01:42:55.657Z",
            "timestamp_ms": leafctl::snowflake::LEAF_EPOCH_MS + 1000,
            "worker": 1,
            "sequence": 5
        }])
    );
}
