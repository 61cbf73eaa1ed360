//! The checker: reads a run's whole history and what was seen beside it, and says what broke
//! which rule ([`check`], [`check_regions`]; [`rule_of`] names the rule of a problem). Pure, so
//! it is tested on histories made up to break each rule (`tests/nemesis/checker.rs`).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::*;

/// The longest a request can take (the client's connect and read timeouts).
const LONGEST_REQUEST: Duration = Duration::from_secs(40);

/// What the checker found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub problems: Vec<String>,
    pub ids: BTreeMap<Mode, usize>,
    /// Segment IDs per tag.
    pub ids_by_tag: BTreeMap<&'static str, usize>,
    /// IDs answered a second (or later) time, in all.
    pub twice: usize,
    pub answers: usize,
    pub refusals: BTreeMap<String, usize>,
    pub no_answer: usize,
    pub dropped: usize,
    /// Segment batches asked for more IDs than the server's buffer held (by its last sample).
    pub beyond_buffer: usize,
    /// Single-ID 503s judged against a `/cache` sample (the rest had none recent enough, or
    /// followed a change of their tag).
    pub refusals_judged: usize,
    /// Of those, the ones refused while the buffer held IDs (one problem per burst).
    pub refused_while_buffered: usize,
    /// Segment refusals judged by the buffers they carry (`buffered`, `issued`): every one
    /// of a known tag; of those, single IDs refused while IDs were buffered, and refusals that
    /// found more IDs handed out than were answered (IDs lost).
    pub refusals_carrying_buffers: usize,
    pub single_refused_with_buffered: usize,
    pub refusals_finding_ids_lost: usize,
    /// IDs seen leaving a process's buffers between two of its `/cache` samples (judged: no
    /// change of their tag near), and of those the ones no request of that process answered.
    pub ids_left_buffers: u64,
    pub ids_left_buffers_unanswered: u64,
    /// `workers list` samples judged (all of them), and of those the ones judged with a
    /// registry fault's longer fence.
    pub worker_samples: usize,
    pub worker_samples_after_registry_faults: usize,
    /// The most worker ids held at once, and the distinct ones ever seen held.
    pub most_held: usize,
    pub worker_ids_seen: usize,
    /// Identities the servers ran under.
    pub identities: usize,
}

/// Reads the whole history:
/// - no ID twice: segment IDs per tag name over the whole run (a tag removed and added again
///   included), snowflake IDs over all servers (one ID is one worker id, time and sequence);
/// - each server incarnation's snowflake IDs ascending (an answer given before a request was
///   sent holds only lower IDs than that request's);
/// - every answer an ID or a refusal with a known code (`404 unknown_tag` too for the tags an
///   operator removes), no answer only while that server was down or frozen, every `next` run
///   its count of IDs or a non-zero exit with a message;
/// - a single ID is never refused (503) while its server's buffer holds IDs for that tag
///   ([`check_buffers`]);
/// - an ID that leaves a server's buffers is answered by it ([`check_buffers_answered`]);
/// - worker ids held never exceed live servers plus those waiting out their fence
///   ([`check_workers`]).
pub fn check(history: &[Record], seen: &Seen) -> Verdict {
    let mut v = Verdict::default();
    let mut order: Vec<usize> = (0..history.len()).collect();
    order.sort_by_key(|&i| (history[i].sent, history[i].done));
    let line_of: HashMap<usize, usize> = order.iter().enumerate().map(|(l, &i)| (i, l)).collect();
    let around = |i: usize| -> String {
        let l = line_of[&i];
        order[l.saturating_sub(3)..(l + 4).min(order.len())]
            .iter()
            .map(|&j| {
                let mark = if j == i { ">>" } else { "  " };
                format!("    {mark} {}\n", history[j])
            })
            .collect()
    };
    // No ID twice: per tag name for segment IDs, over everything for snowflake IDs. Each ID
    // twice is counted; the first `SHOWN` of each space are shown with their history.
    const SHOWN: usize = 20;
    let mut seen_ids: HashMap<(Mode, &'static str), HashMap<u64, usize>> = HashMap::new();
    let mut twice: BTreeMap<(Mode, &'static str), usize> = BTreeMap::new();
    for (i, r) in history.iter().enumerate() {
        let space = match r.mode {
            Mode::Segment => (Mode::Segment, r.tag),
            Mode::Snowflake => (Mode::Snowflake, ""),
        };
        let ids = r.ids();
        *v.ids.entry(r.mode).or_default() += ids.len();
        if r.mode == Mode::Segment && !ids.is_empty() {
            *v.ids_by_tag.entry(r.tag).or_default() += ids.len();
        }
        let map = seen_ids.entry(space).or_default();
        for &id in ids {
            if let Some(&first) = map.get(&id) {
                let n = twice.entry(space).or_default();
                *n += 1;
                v.twice += 1;
                if *n > SHOWN {
                    continue;
                }
                let what = match r.mode {
                    Mode::Segment => format!("Segment ID {id} of tag {}", r.tag),
                    Mode::Snowflake => format!("Snowflake ID {id}"),
                };
                v.problems.push(format!(
                    "{what} answered twice:\n  first:\n{}  again:\n{}",
                    around(first),
                    around(i)
                ));
            } else {
                map.insert(id, i);
            }
        }
    }
    for ((mode, tag), n) in twice {
        if n > SHOWN {
            v.problems.push(format!(
                "{mode:?} IDs {tag} answered twice: {} more beyond the {SHOWN} shown ({n} in all)",
                n - SHOWN
            ));
        }
    }
    for mode in [Mode::Segment, Mode::Snowflake] {
        v.ids.entry(mode).or_default();
    }
    // Snowflake IDs ascending per server incarnation. (Not segment IDs: a batch larger than
    // what the buffer holds is claimed past it, so a later single ID can be lower.)
    let mut runs: BTreeMap<(Source, Mode), Vec<usize>> = BTreeMap::new();
    for (i, r) in history.iter().enumerate() {
        if matches!(r.source, Source::Server { .. })
            && r.mode == Mode::Snowflake
            && matches!(r.outcome, Outcome::Ids(_))
            && !r.ids().is_empty()
        {
            runs.entry((r.source, r.mode)).or_default().push(i);
        }
    }
    for ((source, mode), members) in &runs {
        let mut by_sent = members.clone();
        by_sent.sort_by_key(|&i| history[i].sent);
        let mut by_done = members.clone();
        by_done.sort_by_key(|&i| history[i].done);
        let (mut k, mut high, mut high_at) = (0, 0u64, None);
        for &i in &by_sent {
            while k < by_done.len() && history[by_done[k]].done < history[i].sent {
                let j = by_done[k];
                let top = history[j].ids().iter().copied().max().unwrap_or(0);
                if top >= high {
                    (high, high_at) = (top, Some(j));
                }
                k += 1;
            }
            let low = history[i].ids().iter().copied().min().unwrap_or(0);
            if let Some(j) = high_at
                && low <= high
            {
                v.problems.push(format!(
                    "{source:?} {mode:?}: ID {low} answered after {high} (not ascending):\n{}{}",
                    around(j),
                    around(i)
                ));
            }
        }
    }
    // Every answer an ID or a clear refusal.
    for (i, r) in history.iter().enumerate() {
        match &r.outcome {
            Outcome::Ids(ids) => {
                v.answers += 1;
                if ids.is_empty() {
                    v.problems
                        .push(format!("a 200 without an ID:\n{}", around(i)));
                } else if matches!(r.source, Source::Server { .. }) && ids.len() as u64 != r.count {
                    v.problems.push(format!(
                        "a 200 with {} IDs for a request of {}:\n{}",
                        ids.len(),
                        r.count,
                        around(i)
                    ));
                }
            }
            Outcome::Refused { status, code, .. } => {
                v.answers += 1;
                *v.refusals.entry(format!("{status} {code}")).or_default() += 1;
                let known = match r.mode {
                    Mode::Segment => SEGMENT_REFUSALS,
                    Mode::Snowflake => SNOWFLAKE_REFUSALS,
                };
                // A tag an operator removes is unknown until it is added again.
                let removable = r.mode == Mode::Segment && r.tag != TAGS[0];
                let ok = (*status == 503 && known.contains(&code.as_str()))
                    || (removable && *status == 404 && code == "unknown_tag");
                if !ok {
                    v.problems.push(format!(
                        "an answer that is neither an ID nor a known refusal:\n{}",
                        around(i)
                    ));
                }
            }
            Outcome::NoAnswer(_) => {
                v.no_answer += 1;
                let Source::Server { index, .. } = r.source else {
                    continue;
                };
                let excused = seen.silences.iter().any(|s| {
                    s.server == index
                        && r.sent <= s.to + Duration::from_millis(500)
                        && r.done >= s.from
                });
                if !excused {
                    v.problems.push(format!(
                        "serve {index} left a request unanswered while it ran:\n{}",
                        around(i)
                    ));
                }
            }
            Outcome::Dropped(_) => v.dropped += 1,
            Outcome::Exited {
                code,
                ids,
                wanted,
                stderr,
            } => match code {
                Some(0) if ids.len() == *wanted => {}
                Some(0) => v.problems.push(format!(
                    "`next` exited 0 with {} of {wanted} IDs:\n{}",
                    ids.len(),
                    around(i)
                )),
                Some(_) if stderr.lines().any(|l| l.starts_with("error:")) => {}
                Some(c) => v.problems.push(format!(
                    "`next` exited {c} without an error message ({stderr:?}):\n{}",
                    around(i)
                )),
                None => v.problems.push(format!(
                    "`next` neither finished nor failed within its bound:\n{}",
                    around(i)
                )),
            },
        }
    }
    check_buffers(history, seen, &mut v, &around);
    check_refusal_buffers(history, seen, &mut v, &around);
    check_buffers_answered(history, seen, &mut v);
    check_workers(seen, &mut v);
    v
}

/// A segment request's process and tag: a server, its incarnation, the tag.
type Key = (usize, u32, &'static str);

/// The indexes of `history`'s segment requests to servers, by process and tag, in history order.
fn segment_requests(history: &[Record]) -> HashMap<Key, Vec<usize>> {
    let mut requests: HashMap<Key, Vec<usize>> = HashMap::new();
    for (i, r) in history.iter().enumerate() {
        if let (Source::Server { index, incarnation }, Mode::Segment) = (r.source, r.mode) {
            requests
                .entry((index, incarnation, r.tag))
                .or_default()
                .push(i);
        }
    }
    requests
}

/// Every refusal of a segment request carries its tag's buffers as the refusal found them
/// (`buffered`, `issued`: see the error table of docs/serve.md), and each is judged by them, with no
/// sample needed:
/// - a single ID refused with 503 while `buffered` was above 0 is a problem;
/// - IDs lost: `issued` counts every ID the process handed out for the tag (from its buffers
///   and batch claims), so it can be no more than the IDs answered to requests of that process
///   and tag sent before the refusal ended, plus the whole count of those without a complete
///   answer (no answer, dropped). More is IDs taken and never answered (a failed batch that
///   took the buffer's rest, say): a problem.
///
/// The first rule leaves out a refusal within [`TAG_CHANGE_SHADOW`] after its tag was removed
/// or added (the server drops a removed tag's buffers then). The second needs no such shadow:
/// a tag's new buffers count from 0 while the answers of its old ones still count, which can
/// only hide a loss, never invent one. One problem per process and tag and rule; all are
/// counted.
fn check_refusal_buffers(
    history: &[Record],
    seen: &Seen,
    v: &mut Verdict,
    around: &dyn Fn(usize) -> String,
) {
    let requests = segment_requests(history);
    let mut reported: std::collections::HashSet<(Key, bool)> = Default::default();
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            let Outcome::Refused {
                status,
                buffers: Some((buffered, issued)),
                ..
            } = r.outcome
            else {
                continue;
            };
            let changed = seen
                .tag_changes
                .iter()
                .any(|&(at, tag)| tag == r.tag && at <= r.done && r.sent <= at + TAG_CHANGE_SHADOW);
            v.refusals_carrying_buffers += 1;
            if status == 503 && r.count == 1 && buffered > 0 && !changed {
                v.single_refused_with_buffered += 1;
                if reported.insert((*key, true)) {
                    v.problems.push(format!(
                        "serve {}#{} refused a single ID of {} (503) while its buffers held {buffered} IDs, as the refusal itself says:\n{}",
                        key.0,
                        key.1,
                        key.2,
                        around(i)
                    ));
                }
            }
            let (mut answered, mut unknown) = (0u64, 0u64);
            for &j in list {
                let o = &history[j];
                if j == i || o.sent > r.done {
                    continue;
                }
                match &o.outcome {
                    Outcome::Ids(ids) => answered += ids.len() as u64,
                    Outcome::NoAnswer(_) | Outcome::Dropped(_) => unknown += o.count,
                    _ => {}
                }
            }
            if issued > answered + unknown {
                v.refusals_finding_ids_lost += 1;
                if reported.insert((*key, false)) {
                    v.problems.push(format!(
                        "serve {}#{} handed out {issued} IDs of {} by its own count when it refused a request ({} IDs, {status}), but answered {answered} to requests sent before then (and up to {unknown} more to requests without a complete answer): {} IDs taken and never answered (lost):\n{}",
                        key.0,
                        key.1,
                        key.2,
                        r.count,
                        issued - answered - unknown,
                        around(i)
                    ));
                }
            }
        }
    }
}

/// IDs lost, by ID rather than by count: every ID a `/cache` sample of a process showed
/// buffered and the process's next sample of that tag no longer shows left the buffers, so it
/// was handed out: some request of that process and tag answered it, or it is one of those
/// without a complete answer (no answer; a batch the client dropped, less the IDs it read)
/// sent before the later sample ended. More unanswered IDs than that is a problem (a failed
/// batch that took the buffers' IDs with it, say). The count rule of
/// [`check_refusal_buffers`] cannot see such a loss while a batch of the same tag waits beside
/// the refusal (its whole count may hold the IDs); this rule can, once the batch's answer
/// shows which IDs it got. Unjudged: a pair of samples within [`TAG_CHANGE_SHADOW`] of a
/// change of their tag (a server drops a removed tag's buffers). One problem per process and
/// tag; every unanswered ID is counted.
fn check_buffers_answered(history: &[Record], seen: &Seen, v: &mut Verdict) {
    let requests = segment_requests(history);
    let samples = samples_by_process(seen);
    let mut keys: Vec<&Key> = samples.keys().collect();
    keys.sort();
    for key in keys {
        let list = &samples[key];
        let mine = requests.get(key).map(Vec::as_slice).unwrap_or(&[]);
        let answered: std::collections::HashSet<u64> = mine
            .iter()
            .flat_map(|&i| history[i].ids().iter().copied())
            .collect();
        let mut reported = false;
        for pair in list.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            let changed = seen.tag_changes.iter().any(|&(at, tag)| {
                tag == key.2 && at <= after.done && before.sent <= at + TAG_CHANGE_SHADOW
            });
            if changed {
                continue;
            }
            let left = without(&before.ranges, &after.ranges);
            v.ids_left_buffers += left.iter().map(|r| r.end - r.start).sum::<u64>();
            let unanswered: Vec<u64> = left
                .into_iter()
                .flatten()
                .filter(|id| !answered.contains(id))
                .collect();
            if unanswered.is_empty() {
                continue;
            }
            let unknown: u64 = mine
                .iter()
                .map(|&i| &history[i])
                .filter(|o| o.sent <= after.done)
                .map(|o| match &o.outcome {
                    Outcome::NoAnswer(_) => o.count,
                    Outcome::Dropped(ids) => o.count.saturating_sub(ids.len() as u64),
                    _ => 0,
                })
                .sum();
            let lost = (unanswered.len() as u64).saturating_sub(unknown);
            if lost == 0 {
                continue;
            }
            v.ids_left_buffers_unanswered += lost;
            if !reported {
                reported = true;
                let shown: Vec<String> = unanswered.iter().take(5).map(u64::to_string).collect();
                v.problems.push(format!(
                    "serve {}#{}: {} IDs of {} left its buffers between its /cache samples at {:.3}s ({:?}) and {:.3}s ({:?}) and no request of it was answered with them (requests without a complete answer could hold {unknown}): IDs buffered and never answered ({}, ...)",
                    key.0,
                    key.1,
                    unanswered.len(),
                    key.2,
                    before.sent.as_secs_f64(),
                    before.ranges,
                    after.sent.as_secs_f64(),
                    after.ranges,
                    shown.join(", ")
                ));
            }
        }
    }
}

/// The `/cache` samples of each process and tag, in the order they were taken.
fn samples_by_process(seen: &Seen) -> HashMap<Key, Vec<&CacheSample>> {
    let mut samples: HashMap<Key, Vec<&CacheSample>> = HashMap::new();
    for c in &seen.caches {
        samples
            .entry((c.server, c.incarnation, c.tag))
            .or_default()
            .push(c);
    }
    for list in samples.values_mut() {
        list.sort_by_key(|c| c.done);
    }
    samples
}

/// The IDs of the ranges `from` (each `[start, end)`) that none of `less` holds.
fn without(from: &[(u64, u64)], less: &[(u64, u64)]) -> Vec<std::ops::Range<u64>> {
    let mut out: Vec<std::ops::Range<u64>> = from.iter().map(|&(a, b)| a..b).collect();
    for &(c, d) in less {
        out = out
            .into_iter()
            .flat_map(|r| [r.start..r.end.min(c), r.start.max(d)..r.end])
            .filter(|r| r.start < r.end)
            .collect();
    }
    out
}

/// A single-ID request refused with 503 while its server's buffer held IDs for that tag.
///
/// Each such refusal is judged against every `/cache` sample of the same process (server and
/// incarnation) taken at most [`CACHE_SAMPLE_AGE`] before the refusal was sent (a failed batch
/// that emptied the buffer leaves the later ones empty). Of the IDs a sample showed buffered,
/// those answered since (by any request of that process and tag that ended after the sample
/// began and began before the refusal ended) were used, and a request without a complete
/// answer (no answer, dropped by the client) may have used up to its whole count; a batch
/// answered with more IDs than the last reading before it showed buffered must have been claimed
/// on its own (issue 33), so buffered IDs in its answer do not count as used (a segment loaded
/// in the 300 ms between that reading and the batch could make this wrong; not seen). What is
/// left after that was still buffered when the single ID was refused: one ID left by any sample is a
/// problem (tolerance: none beyond those unknowns; one problem is reported per burst of such
/// refusals, all are counted). A refusal of a batch never counts as use: a failed batch must
/// issue nothing and lose nothing. Unjudged: a refusal with no recent sample showing IDs, and one
/// within [`TAG_CHANGE_SHADOW`] after its tag was removed or added.
fn check_buffers(
    history: &[Record],
    seen: &Seen,
    v: &mut Verdict,
    around: &dyn Fn(usize) -> String,
) {
    let mut requests = segment_requests(history);
    for list in requests.values_mut() {
        list.sort_by_key(|&i| history[i].sent);
    }
    let samples = samples_by_process(seen);
    let last_sample = |key: &Key, before: Duration| -> Option<&CacheSample> {
        let list = samples.get(key)?;
        let n = list.partition_point(|c| c.done <= before);
        let c = *list.get(n.checked_sub(1)?)?;
        (before - c.done <= CACHE_SAMPLE_AGE).then_some(c)
    };
    // Batches asked for more than the buffer held.
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            if r.count > 1
                && let Some(c) = last_sample(key, r.sent)
                && r.count > c.held()
            {
                v.beyond_buffer += 1;
            }
        }
    }
    // One problem per burst: refusals within CACHE_SAMPLE_AGE of a reported one are counted only.
    let mut reported: HashMap<Key, Duration> = HashMap::new();
    for (key, list) in &requests {
        for &i in list {
            let r = &history[i];
            let Outcome::Refused { status: 503, .. } = r.outcome else {
                continue;
            };
            if r.count != 1 {
                continue;
            }
            let changed = seen
                .tag_changes
                .iter()
                .any(|&(at, tag)| tag == r.tag && at <= r.done && r.sent <= at + TAG_CHANGE_SHADOW);
            let Some(list_of_samples) = samples.get(key) else {
                continue;
            };
            let upto = list_of_samples.partition_point(|c| c.done <= r.sent);
            let recent: Vec<&CacheSample> = list_of_samples[..upto]
                .iter()
                .rev()
                .take_while(|c| r.sent - c.done <= CACHE_SAMPLE_AGE)
                .copied()
                .filter(|c| c.held() > 0)
                .collect();
            if changed || recent.is_empty() {
                continue;
            }
            v.refusals_judged += 1;
            // The oldest reading first: a buffer emptied by a failed batch shows empty in the
            // readings after it, full in the ones before.
            for c in recent.into_iter().rev() {
                let (mut used, mut unknown, mut taken) = (0u64, 0u64, 0u32);
                let from = list.partition_point(|&j| history[j].sent + LONGEST_REQUEST < c.sent);
                for &j in &list[from..] {
                    let o = &history[j];
                    if o.sent > r.done {
                        break;
                    }
                    if j == i || o.done < c.sent {
                        continue;
                    }
                    match &o.outcome {
                        // A batch asking for more than its server buffered (by the last reading
                        // before it) must be claimed on its own: buffered IDs in its answer
                        // were taken from the single IDs, not used.
                        Outcome::Ids(_)
                            if o.count > 1
                                && last_sample(key, o.sent).is_some_and(|b| o.count > b.held()) =>
                        {
                            taken += 1;
                        }
                        Outcome::Ids(ids) => {
                            used += ids
                                .iter()
                                .filter(|&&id| c.ranges.iter().any(|&(a, b)| a <= id && id < b))
                                .count() as u64;
                        }
                        Outcome::NoAnswer(_) | Outcome::Dropped(_) => unknown += o.count,
                        _ => {}
                    }
                }
                let left = c.held().saturating_sub(used + unknown);
                if left == 0 {
                    continue;
                }
                v.refused_while_buffered += 1;
                if reported
                    .get(key)
                    .is_none_or(|&at| r.sent > at + CACHE_SAMPLE_AGE)
                {
                    reported.insert(*key, r.sent);
                    v.problems.push(format!(
                        "serve {}#{} refused a single ID of {} although its buffer held {left} of \
                         the {} IDs its /cache showed {:.3}s before ({:?}; {used} of them \
                         answered since, up to {unknown} more to requests without a complete \
                         answer{}):\n{}",
                        key.0,
                        key.1,
                        key.2,
                        c.held(),
                        (r.sent - c.done).as_secs_f64(),
                        c.ranges,
                        if taken > 0 {
                            format!(
                                "; {taken} batch(es) larger than the buffer answered meanwhile, \
                                 whose buffered IDs do not count"
                            )
                        } else {
                            String::new()
                        },
                        around(i)
                    ));
                }
                break;
            }
        }
    }
}

/// Worker ids held never exceed the servers that can hold one: each `workers list` sample may
/// show one id per process alive during it, plus one per process that ended within the fence
/// before it (a killed holder's claim lives until its session or lease expires), plus one per
/// server whose lease was disturbed within the fence (it may have taken a new id while its
/// old claim expires). A registry fault postpones expiry (a new ZooKeeper leader renews the
/// sessions it inherits; they expire one timeout later): a sample within the fence after one is
/// judged with the fence reaching back from the fault's start (claims that were still live when
/// it began may live until one fence after it healed). No sample is excused.
fn check_workers(seen: &Seen, v: &mut Verdict) {
    let identities: std::collections::HashSet<&str> =
        seen.lives.iter().map(|l| l.identity.as_str()).collect();
    v.identities = identities.len();
    let mut ever: std::collections::HashSet<u64> = Default::default();
    for s in &seen.workers {
        v.most_held = v.most_held.max(s.held.len());
        ever.extend(s.held.iter().copied());
    }
    v.worker_ids_seen = ever.len();
    if seen.fence.is_zero() {
        return;
    }
    let fence = seen.fence;
    // The most ids that could be held at once so far: with the lowest free id taken at each
    // claim, id K is held only after K+1 ids were held at once.
    let mut peak = 0usize;
    let mut reported_span = false;
    let mut workers: Vec<&WorkerSample> = seen.workers.iter().collect();
    workers.sort_by_key(|s| s.sent);
    for s in workers {
        let plain_since = s.sent.saturating_sub(fence);
        let faults: Vec<(Duration, Duration)> = seen
            .registry_faults
            .iter()
            .copied()
            .filter(|&(from, to)| from <= s.done && plain_since <= to)
            .collect();
        // Claims live at a fault's start may outlive it by a fence.
        let since = faults
            .iter()
            .map(|&(from, _)| from.saturating_sub(fence))
            .fold(plain_since, Duration::min);
        let alive = seen
            .lives
            .iter()
            .filter(|l| l.from <= s.done && l.to.is_none_or(|t| t >= s.sent))
            .count();
        let fenced = seen
            .lives
            .iter()
            .filter(|l| l.to.is_some_and(|t| t >= since && t < s.sent))
            .count();
        let mut disturbed: Vec<usize> = seen
            .disturbed
            .iter()
            .filter(|d| d.from <= s.done && since <= d.to)
            .map(|d| d.server)
            .collect();
        disturbed.sort_unstable();
        disturbed.dedup();
        let allowed = alive + fenced + disturbed.len();
        peak = peak.max(allowed);
        let highest = s.held.iter().copied().max();
        if let Some(k) = highest
            && k as usize >= peak
            && !reported_span
        {
            reported_span = true;
            v.problems.push(format!(
                "worker ids held: id {k} at {:.3}s, but never more than {peak} server process(es) \
                 were alive or within their fence at once: a new identity took an id above a \
                 free one (ids used must not grow with restarts under new identities)",
                s.sent.as_secs_f64()
            ));
        }
        v.worker_samples += 1;
        if !faults.is_empty() {
            v.worker_samples_after_registry_faults += 1;
        }
        if s.held.len() > allowed {
            v.problems.push(format!(
                "the registry listed {} worker ids held ({:?}) at {:.3}s-{:.3}s, but only {alive} \
                 server process(es) ran then, {fenced} ended within the fence ({:.1} s) before \
                 and {} had their lease disturbed: a claim outlived its holder",
                s.held.len(),
                s.held,
                s.sent.as_secs_f64(),
                s.done.as_secs_f64(),
                fence.as_secs_f64(),
                disturbed.len()
            ));
        }
    }
}

/// The rule a problem broke (its kind, for the summary's counts).
pub fn rule_of(problem: &str) -> &'static str {
    const RULES: [(&str, &str); 14] = [
        ("answered twice", "an ID twice"),
        ("taken and never answered", "IDs lost"),
        ("buffered and never answered", "buffered IDs lost"),
        ("not ascending", "snowflake IDs not ascending"),
        ("neither an ID nor", "an unknown refusal"),
        ("a 200 with", "a 200 with the wrong count"),
        ("unanswered while it ran", "no answer while running"),
        ("refused a single ID", "refused while buffered"),
        ("worker ids held:", "worker ids above the lowest free"),
        ("worker ids held", "worker ids beyond live and fenced"),
        ("`next`", "a `next` run"),
        ("SIGTERM", "a graceful stop"),
        ("`leafctl tag`", "an operator's command"),
        ("region: serve", "an ID outside its region's share"),
    ];
    RULES
        .iter()
        .find(|(k, _)| problem.contains(k))
        .map_or("other", |(_, r)| r)
}

/// The region rules of a multi-region run (regions of `count`, server `i` in region
/// `region_of[i]`, Leaf's 10-bit worker field): every snowflake ID a server answered has its
/// worker field inside its region's slice, every segment ID lies inside its region's block.
/// (No ID twice across regions is [`check`]'s rule: segment IDs per tag name, snowflake IDs over
/// all servers, every region's included.) One problem per server and kind, with a count.
pub fn check_regions(history: &[Record], region_of: &[u32], count: u32) -> Vec<String> {
    use leafctl::region::Region;
    let mut outside: BTreeMap<(usize, &'static str), (usize, u64)> = BTreeMap::new();
    for r in history {
        let Source::Server { index, .. } = r.source else {
            continue;
        };
        let region = Region::new(region_of[index], count).expect("a region");
        for &id in r.ids() {
            let (inside, what) = match r.mode {
                Mode::Snowflake => {
                    let worker = (id >> 12) & 0x3FF;
                    (
                        region.worker_slice(10).expect("a slice").contains(&worker),
                        "snowflake IDs outside the region's worker slice",
                    )
                }
                Mode::Segment => (
                    region.segment_block().contains(&(id as i64)),
                    "segment IDs outside the region's block",
                ),
            };
            if !inside {
                let e = outside.entry((index, what)).or_insert((0, id));
                e.0 += 1;
            }
        }
    }
    outside
        .into_iter()
        .map(|((server, what), (n, example))| {
            format!(
                "region: serve {server} (region {} of {count}) answered {n} {what} (e.g. {example})",
                region_of[server]
            )
        })
        .collect()
}
