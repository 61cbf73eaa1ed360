//! The end of a run: every server issuing again after the last heal, the clients' history
//! gathered, the servers stopped gracefully, and the problems counted and shown by rule.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::RECOVERY_BOUND;
use crate::support;
use crate::support::nemesis::{Record, Seen};
use crate::support::serve::Server;
use crate::support::wait_until;
use crate::world::{Events, Served};

/// What the end of a run found once every fault healed: the problems so far (steps that failed
/// to apply, the events' own, servers not issuing within [`RECOVERY_BOUND`]), the longest
/// recovery, and the whole history (the clients' and the events' records, by time).
pub struct AfterHeal {
    pub problems: Vec<String>,
    pub recovery: Duration,
    pub history: Vec<Record>,
}

/// After the schedule's last heal: waits for every server to issue both kinds again (within
/// [`RECOVERY_BOUND`]), stops the clients and gathers their history.
pub fn after_heal(
    served: &[Served],
    panicked: &[String],
    ev: &Events,
    started: Instant,
    stop: &AtomicBool,
    clients: Vec<JoinHandle<Vec<Record>>>,
) -> AfterHeal {
    let healed = started.elapsed();
    ev.note("every fault healed".into());
    // Every server issues both kinds again within the bound.
    let mut recovery = Duration::ZERO;
    let mut problems: Vec<String> = panicked
        .iter()
        .map(|p| format!("applying a step failed: {p}"))
        .collect();
    problems.extend(ev.problems.lock().unwrap().drain(..));
    for (i, s) in served.iter().enumerate() {
        let ok = wait_until(RECOVERY_BOUND, || s.issuing());
        recovery = recovery.max(started.elapsed() - healed);
        if !ok {
            let log = s.server.lock().unwrap().as_ref().map(Server::stderr);
            problems.push(format!(
                "serve {i} was not issuing both kinds {RECOVERY_BOUND:?} after the last heal; \
                 its log:\n{}",
                log.unwrap_or_default()
            ));
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut history: Vec<Record> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("client thread"))
        .collect();
    history.extend(ev.records.lock().unwrap().drain(..));
    history.sort_by_key(|r| (r.sent, r.done));
    AfterHeal {
        problems,
        recovery,
        history,
    }
}

/// Stops every server gracefully; a server that did not end well is a problem.
pub fn stop_all_gracefully(served: &[Served], problems: &mut Vec<String>) {
    for s in served {
        if let Some(Err(e)) = s.stop_gracefully() {
            problems.push(e);
        }
    }
}

/// What the events and the servers saw, for the checker: no `/cache` or `workers list` samples
/// and a fence of 0 (the single-region run adds its own); the operator's tag changes.
pub fn seen_by(ev: &Events, served: &[Served]) -> Seen {
    Seen {
        silences: ev.silences.lock().unwrap().clone(),
        disturbed: ev.disturbed.lock().unwrap().clone(),
        registry_faults: ev.registry_faults.lock().unwrap().clone(),
        caches: Vec::new(),
        workers: Vec::new(),
        lives: served
            .iter()
            .flat_map(|s| s.lives.lock().unwrap().clone())
            .collect(),
        tag_changes: ev.tag_changes.lock().unwrap().clone(),
        fence: Duration::ZERO,
    }
}

/// How many problems each rule found.
pub fn problems_by_rule(problems: &[String]) -> std::collections::BTreeMap<&str, usize> {
    let mut by_rule: std::collections::BTreeMap<&str, usize> = Default::default();
    for p in problems {
        *by_rule.entry(support::nemesis::rule_of(p)).or_default() += 1;
    }
    by_rule
}

/// The problems a failed run shows: the first of each rule, then the next ones, eight in all
/// (or one per rule), one `- ` line each.
pub fn shown(problems: &[String], by_rule: &std::collections::BTreeMap<&str, usize>) -> String {
    let mut shown: Vec<&String> = Vec::new();
    for rule in by_rule.keys() {
        if let Some(p) = problems
            .iter()
            .find(|p| support::nemesis::rule_of(p) == *rule)
        {
            shown.push(p);
        }
    }
    for p in problems {
        if shown.len() >= 8.max(by_rule.len()) {
            break;
        }
        if !shown.iter().any(|s| std::ptr::eq(*s, p)) {
            shown.push(p);
        }
    }
    shown.iter().map(|p| format!("- {p}\n")).collect()
}
