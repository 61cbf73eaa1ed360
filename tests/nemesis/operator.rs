//! The operator's hands: `leafctl tag` commands retried until they succeed or say why not
//! ([`operate`], [`operate_by`]), and `region add` re-run across the WAN ([`region_add`]).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::OPERATOR_BOUND;
use crate::clients::bounded_output;
use crate::support::mariadb::PASSWORD;
use crate::support::nemesis::{TAGS, TagOp};
use crate::support::netns::Host;
use crate::support::regions::Deployment;
use crate::support::{Sandbox, stderr};
use crate::world::Events;

/// Runs `cmd` (a `leafctl` command, wrapped for its host) to the end, killed after 20 s.
pub fn bounded(mut cmd: Command) -> std::process::Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn leafctl");
    let (code, stdout, stderr) = bounded_output(child, Duration::from_secs(20));
    use std::os::unix::process::ExitStatusExt;
    std::process::Output {
        status: std::process::ExitStatus::from_raw(code.map_or(9, |c| c << 8)),
        stdout,
        stderr,
    }
}

/// Runs `leafctl tag ...` at the operator's host until it succeeds (bounded by
/// `OPERATOR_BOUND`): each failure must say `error:` (a problem otherwise), and one still
/// failing at the bound is a problem. A bump reads the tag's `max_id` first.
pub fn operate(ops: &Host, url: &str, tag: &'static str, op: TagOp, ev: &Events) {
    let sb = Sandbox::new();
    let leafctl = |args: &[&str]| -> std::process::Output {
        let mut c = sb.leafctl_std();
        c.env("LEAF_DB", url)
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(args);
        bounded(ops.wrap(&c))
    };
    operate_by(&leafctl, tag, op, ev, false);
}

/// [`operate`] with `leafctl` running each command. `lenient` (the multi-region operator, whose
/// model of a region's tags is approximate): a re-add is `--if-not-exists`, and the removal of
/// a tag that is not there is done already.
pub fn operate_by(
    leafctl: &dyn Fn(&[&str]) -> std::process::Output,
    tag: &'static str,
    op: TagOp,
    ev: &Events,
    lenient: bool,
) {
    if matches!(op, TagOp::Add | TagOp::ReAdd | TagOp::Remove) {
        ev.tag_changes.lock().unwrap().push((ev.now(), tag));
    }
    let deadline = Instant::now() + OPERATOR_BOUND;
    loop {
        let out = match op {
            TagOp::Add | TagOp::ReAdd if lenient => {
                leafctl(&["tag", "add", tag, "--step", "100", "--if-not-exists"])
            }
            TagOp::Add | TagOp::ReAdd => leafctl(&["tag", "add", tag, "--step", "100"]),
            TagOp::Remove => leafctl(&["tag", "remove", tag, "--yes"]),
            TagOp::SetStep(n) => leafctl(&["tag", "set-step", tag, &n.to_string()]),
            TagOp::Bump { by } => {
                let shown = leafctl(&["tag", "show", tag, "--output", "json"]);
                let max = serde_json::from_slice::<serde_json::Value>(&shown.stdout)
                    .ok()
                    .and_then(|j| match &j["max_id"] {
                        serde_json::Value::String(s) => s.parse::<u64>().ok(),
                        v => v.as_u64(),
                    });
                match max {
                    Some(m) => leafctl(&["tag", "bump", tag, "--to", &(m + by).to_string()]),
                    None => shown,
                }
            }
        };
        let said = stderr(&out);
        if out.status.success() {
            let line = String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            ev.note(format!("  tag {tag}: {line}"));
            return;
        }
        // An `error:` line, or with `--output json` one JSON object naming the error.
        let named = |l: &str| {
            l.starts_with("error:")
                || serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| {
                    v["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty())
                })
        };
        if !said.lines().any(named) {
            ev.problems.lock().unwrap().push(format!(
                "`leafctl tag` ({op:?} {tag}) failed without an error line: {:?} {said:?}",
                out.status
            ));
            return;
        }
        let first = said.lines().find(|l| l.starts_with("error:")).unwrap_or("");
        if lenient && out.status.code() == Some(2) && first.contains("unknown tag") {
            ev.note(format!(
                "  tag {tag} ({op:?}): not there, nothing to do: {first}"
            ));
            return;
        }
        ev.note(format!("  tag {tag} ({op:?}) failed: {first}"));
        if Instant::now() > deadline {
            ev.problems.lock().unwrap().push(format!(
                "`leafctl tag` ({op:?} {tag}) still failed after {OPERATOR_BOUND:?}: {first}"
            ));
            return;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// How long the multi-region operator retries `region add` across the WAN: past the longest
/// region cut (30 s) and its heal.
const REGION_ADD_BOUND: Duration = Duration::from_secs(75);

/// Re-runs `region add --from` region 0's database `--db` region `r`'s, from region `r`'s
/// database host, until it succeeds or is refused for what the databases hold (a named error
/// that is no failure to reach a database: noted; `region add` checks both before it records
/// or seeds anything). A failure without an error line, or one to reach a database still at
/// `REGION_ADD_BOUND`, is a problem.
pub fn region_add(deployment: &Deployment, r: usize, ev: &Events) {
    let (old, site) = (&deployment.sites[0], &deployment.sites[r]);
    let home = Sandbox::new();
    let deadline = Instant::now() + REGION_ADD_BOUND;
    for tag in &TAGS[1..] {
        ev.tag_changes.lock().unwrap().push((ev.now(), tag));
    }
    loop {
        let mut c = site.leafctl(&home);
        c.args(["region", "add", "--from", &old.db_url, "--db", &site.db_url]);
        c.args(["--output", "json"]);
        let out = bounded(site.db_host.wrap(&c));
        let said = stderr(&out);
        if out.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            ev.note(format!(
                "  region add {r}: {} tag(s) added, {} tombstone(s) carried, used up {}",
                v["tags_added"], v["tombstones_carried"], v["tags_used_up"]
            ));
            return;
        }
        let error = said
            .lines()
            .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string));
        let Some(error) = error else {
            ev.problems.lock().unwrap().push(format!(
                "`leafctl region add` to region {r} failed without an error: {:?} {said:?}",
                out.status
            ));
            return;
        };
        let unreachable = [
            "cannot reach",
            "does not respond",
            "timed out",
            "connection",
        ]
        .iter()
        .any(|w| error.to_lowercase().contains(w));
        if !unreachable {
            ev.note(format!("  region add {r} refused: {error}"));
            return;
        }
        ev.note(format!("  region add {r} failed: {error}"));
        if Instant::now() > deadline {
            ev.problems.lock().unwrap().push(format!(
                "`leafctl region add` to region {r} still failed after {REGION_ADD_BOUND:?}: {error}"
            ));
            return;
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}
