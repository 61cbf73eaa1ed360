//! The checker on made-up histories: each rule can fail.
use super::support::nemesis::*;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn answer(index: usize, incarnation: u32, mode: Mode, at: u64, ids: &[u64]) -> Record {
    Record {
        source: Source::Server { index, incarnation },
        mode,
        tag: TAGS[0],
        count: ids.len().max(1) as u64,
        sent: ms(at),
        done: ms(at + 5),
        outcome: Outcome::Ids(ids.to_vec()),
    }
}

fn none() -> Seen {
    Seen::default()
}

fn clean() -> Vec<Record> {
    vec![
        answer(0, 0, Mode::Segment, 0, &[1, 2]),
        answer(1, 0, Mode::Segment, 1, &[201]),
        answer(0, 0, Mode::Snowflake, 2, &[10 << 22]),
        answer(0, 0, Mode::Segment, 10, &[3]),
        answer(1, 0, Mode::Segment, 11, &[202, 203]),
        answer(0, 1, Mode::Snowflake, 20, &[11 << 22]),
    ]
}

#[test]
fn a_clean_history_passes_and_is_counted() {
    let v = check(&clean(), &none());
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.ids[&Mode::Segment], 6);
    assert_eq!(v.ids[&Mode::Snowflake], 2);
    assert_eq!(v.answers, 6);
}

#[test]
fn an_id_twice_is_found_with_the_history_around_it() {
    let mut h = clean();
    h.push(answer(2, 0, Mode::Segment, 30, &[202]));
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert!(v.problems[0].contains("Segment ID 202 of tag nem answered twice"));
    assert!(v.problems[0].contains(">>"), "{}", v.problems[0]);
    // The same number in the other mode is not a duplicate.
    let mut h = clean();
    h.push(answer(2, 0, Mode::Snowflake, 30, &[202]));
    assert!(check(&h, &none()).problems.is_empty());
    // A `next` run counts with the servers.
    let mut h = clean();
    h.push(Record {
        source: Source::Next { run: 0 },
        mode: Mode::Segment,
        tag: TAGS[0],
        count: 1,
        sent: ms(40),
        done: ms(50),
        outcome: Outcome::Exited {
            code: Some(0),
            ids: vec![3],
            wanted: 1,
            stderr: String::new(),
        },
    });
    assert!(check(&h, &none()).problems[0].contains("ID 3 of tag nem answered twice"));
}

#[test]
fn ids_going_down_within_one_incarnation_are_found_but_not_across_a_restart() {
    let mut h = clean();
    h.push(answer(0, 1, Mode::Snowflake, 30, &[(11 << 22) - 1]));
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert!(v.problems[0].contains("not ascending"));
    // Overlapping requests may be answered in either order.
    let mut h = clean();
    h.push(Record {
        sent: ms(19),
        done: ms(40),
        ..answer(0, 1, Mode::Snowflake, 19, &[(11 << 22) - 5])
    });
    assert!(check(&h, &none()).problems.is_empty());
    // A new incarnation starts its own sequence (its uniqueness is checked above).
    let mut h = clean();
    h.push(answer(0, 2, Mode::Snowflake, 30, &[9 << 22]));
    assert!(check(&h, &none()).problems.is_empty());
    // Segment IDs may go down: a batch past the buffer is claimed above it.
    let mut h = clean();
    h.push(answer(0, 0, Mode::Segment, 30, &[0]));
    assert!(check(&h, &none()).problems.is_empty());
}

#[test]
fn unknown_refusals_and_silence_while_running_are_found() {
    let refused = |mode, status, code: &str| Record {
        outcome: Outcome::Refused {
            status,
            code: code.into(),
            buffers: None,
        },
        ..answer(0, 0, mode, 30, &[])
    };
    for (mode, status, code, ok) in [
        (Mode::Segment, 503, "not_ready", true),
        (Mode::Snowflake, 503, "lease_lost", true),
        (Mode::Snowflake, 503, "clock_backwards", true),
        (Mode::Segment, 503, "lease_lost", false),
        (Mode::Segment, 500, "internal", false),
        (Mode::Snowflake, 503, "not-json", false),
    ] {
        let mut h = clean();
        h.push(refused(mode, status, code));
        let v = check(&h, &none());
        assert_eq!(v.problems.is_empty(), ok, "{code}: {:?}", v.problems);
    }
    let mut h = clean();
    h.push(Record {
        outcome: Outcome::NoAnswer("refused".into()),
        ..answer(0, 0, Mode::Segment, 30, &[])
    });
    assert_eq!(check(&h, &none()).problems.len(), 1);
    let down = Silence {
        server: 0,
        from: ms(25),
        to: ms(28),
    };
    let quiet = |s: Silence| Seen {
        silences: vec![s],
        ..none()
    };
    assert!(check(&h, &quiet(down)).problems.is_empty());
    let other = Silence { server: 1, ..down };
    assert_eq!(check(&h, &quiet(other)).problems.len(), 1);
}

#[test]
fn next_runs_must_end_with_their_ids_or_an_error_message() {
    let run = |code, ids: Vec<u64>, stderr: &str| Record {
        source: Source::Next { run: 1 },
        mode: Mode::Segment,
        tag: TAGS[0],
        count: 2,
        sent: ms(60),
        done: ms(70),
        outcome: Outcome::Exited {
            code,
            ids,
            wanted: 2,
            stderr: stderr.into(),
        },
    };
    for (r, ok) in [
        (run(Some(0), vec![500, 501], ""), true),
        (run(Some(0), vec![500], ""), false),
        (
            run(Some(3), vec![500], "error: the database did not answer\n"),
            true,
        ),
        (run(Some(3), vec![], "thread panicked"), false),
        (run(None, vec![], ""), false),
    ] {
        let mut h = clean();
        h.push(r);
        assert_eq!(check(&h, &none()).problems.is_empty(), ok);
    }
}

fn tagged(tag: &'static str, index: usize, incarnation: u32, at: u64, ids: &[u64]) -> Record {
    Record {
        tag,
        ..answer(index, incarnation, Mode::Segment, at, ids)
    }
}

#[test]
fn an_id_twice_across_a_removal_and_re_add_is_found_per_tag_name() {
    let mut h = clean();
    h.push(tagged(TAGS[1], 0, 0, 10, &[1, 2, 3]));
    // The tag removed and added again: its IDs start over.
    h.push(tagged(TAGS[1], 1, 0, 50, &[3]));
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert!(v.problems[0].contains("Segment ID 3 of tag nem_a answered twice"));
    assert_eq!(rule_of(&v.problems[0]), "an ID twice");
    assert_eq!(v.ids_by_tag[TAGS[1]], 4);
    // The same number in another tag is another ID.
    let mut h = clean();
    h.push(tagged(TAGS[1], 0, 0, 10, &[1, 2, 3]));
    h.push(tagged(TAGS[2], 1, 0, 50, &[3]));
    assert!(check(&h, &none()).problems.is_empty());
    // IDs a client read before dropping the connection count too.
    let mut h = clean();
    h.push(Record {
        outcome: Outcome::Dropped(vec![202]),
        count: 500,
        ..answer(2, 0, Mode::Segment, 30, &[])
    });
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(v.dropped, 1);
    // Many duplicates are counted, the first twenty shown.
    let mut h = clean();
    let ids: Vec<u64> = (1000..1100).collect();
    h.push(tagged(TAGS[1], 0, 0, 10, &ids));
    h.push(tagged(TAGS[1], 0, 0, 20, &ids));
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 21, "{:?}", v.problems.last());
    assert!(v.problems[20].contains("80 more"));
    assert_eq!(v.twice, 100);
}

#[test]
fn a_removed_tag_may_be_unknown_but_the_main_tag_may_not_and_a_200_has_its_count() {
    let refused = |tag, status, code: &str| Record {
        outcome: Outcome::Refused {
            status,
            code: code.into(),
            buffers: None,
        },
        ..tagged(tag, 0, 0, 30, &[])
    };
    for (r, ok) in [
        (refused(TAGS[1], 404, "unknown_tag"), true),
        (refused(TAGS[0], 404, "unknown_tag"), false),
        // A re-added tag below its old IDs: the guard's refusal is a problem.
        (refused(TAGS[1], 503, "went_backwards"), false),
        (refused(TAGS[2], 503, "not_ready"), true),
    ] {
        let mut h = clean();
        h.push(r);
        assert_eq!(check(&h, &none()).problems.is_empty(), ok);
    }
    let mut h = clean();
    h.push(Record {
        count: 20,
        ..answer(0, 0, Mode::Segment, 30, &[7, 8])
    });
    let v = check(&h, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "a 200 with the wrong count");
}

/// Server 0's buffer for the main tag held IDs 10..20 at 100 ms; IDs 10..15 were answered,
/// then a batch of 5,000 failed (503), after which `/cache` showed the buffer empty (the
/// batch took and lost the rest, as on main before issue 33), then a single ID was refused
/// at 120 ms.
fn buffered() -> (Vec<Record>, Seen) {
    let refused = |at, count| Record {
        outcome: Outcome::Refused {
            status: 503,
            code: "not_ready".into(),
            buffers: None,
        },
        count,
        ..answer(0, 0, Mode::Segment, at, &[])
    };
    let mut h = clean();
    h.push(answer(0, 0, Mode::Segment, 102, &[10, 11, 12, 13, 14]));
    h.push(refused(110, 5_000));
    h.push(refused(120, 1));
    let seen = Seen {
        caches: vec![
            CacheSample {
                server: 0,
                incarnation: 0,
                sent: ms(99),
                done: ms(100),
                tag: TAGS[0],
                ranges: vec![(10, 15), (15, 20)],
            },
            CacheSample {
                server: 0,
                incarnation: 0,
                sent: ms(115),
                done: ms(116),
                tag: TAGS[0],
                ranges: vec![],
            },
        ],
        ..none()
    };
    (h, seen)
}

/// Issue 46, item 4: each segment refusal carries its tag's buffers (`buffered`,
/// `issued`) and is judged by them, with no `/cache` sample: server 0 answered 3 IDs of the
/// main tag in `clean()`.
#[test]
fn every_refusal_is_judged_by_the_buffers_it_carries() {
    let refused = |at, count, buffers| Record {
        outcome: Outcome::Refused {
            status: 503,
            code: "not_ready".into(),
            buffers: Some(buffers),
        },
        count,
        ..answer(0, 0, Mode::Segment, at, &[])
    };
    // Everything handed out was answered, or went to a request without a complete answer.
    let mut h = clean();
    h.push(refused(30, 5_000, (0, 3)));
    h.push(Record {
        outcome: Outcome::Dropped(vec![]),
        count: 4,
        ..answer(0, 0, Mode::Segment, 40, &[])
    });
    h.push(refused(50, 1, (0, 7)));
    let v = check(&h, &none());
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.refusals_carrying_buffers, 2);
    // A failed batch that took the buffer's rest (the planted mutation): found at its own
    // refusal, and counted again at the next.
    let mut drained = clean();
    drained.push(refused(30, 5_000, (0, 200)));
    drained.push(refused(40, 1, (0, 200)));
    let v = check(&drained, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "IDs lost");
    assert!(
        v.problems[0].contains("197 IDs taken and never answered"),
        "{}",
        v.problems[0]
    );
    assert_eq!(v.refusals_finding_ids_lost, 2);
    // A single ID refused while the refusal itself says IDs were buffered.
    let mut held = clean();
    held.push(refused(30, 1, (150, 3)));
    let v = check(&held, &none());
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "refused while buffered");
    assert_eq!(v.single_refused_with_buffered, 1);
    // A single ID refused shortly after its tag changed is not judged by what was buffered
    // (the server drops the buffers of a removed tag); lost IDs still are.
    let changed = Seen {
        tag_changes: vec![(ms(20), TAGS[0])],
        ..none()
    };
    assert!(check(&held, &changed).problems.is_empty());
    let v = check(&drained, &changed);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "IDs lost");
}

/// Server 0 answered IDs 1-4 of the main tag, then its `/cache` showed 5..15 buffered; at
/// 3,000 ms, `after` shows what the buffers held.
fn left_buffers(after: Vec<(u64, u64)>) -> (Vec<Record>, Seen) {
    let sample = |at: u64, ranges: Vec<(u64, u64)>| CacheSample {
        server: 0,
        incarnation: 0,
        sent: ms(at),
        done: ms(at + 1),
        tag: TAGS[0],
        ranges,
    };
    let h = vec![answer(0, 0, Mode::Segment, 10, &[1, 2, 3, 4])];
    let seen = Seen {
        caches: vec![sample(1_000, vec![(5, 15)]), sample(3_000, after)],
        ..none()
    };
    (h, seen)
}

/// IDs lost, by ID: what leaves the buffers between two `/cache` samples is answered.
#[test]
fn ids_that_leave_the_buffers_unanswered_are_found_by_id() {
    // Answered as they left: no problem.
    let (mut h, seen) = left_buffers(vec![(12, 15)]);
    h.push(answer(0, 0, Mode::Segment, 2_000, &[5, 6, 7, 8, 9, 10, 11]));
    let v = check(&h, &seen);
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!((v.ids_left_buffers, v.ids_left_buffers_unanswered), (7, 0));
    // Three gone unanswered.
    let (mut h, seen) = left_buffers(vec![(12, 15)]);
    h.push(answer(0, 0, Mode::Segment, 2_000, &[5, 6, 7, 8]));
    let v = check(&h, &seen);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "buffered IDs lost");
    assert!(
        v.problems[0].contains("3 IDs of nem left its buffers")
            && v.problems[0].contains("9, 10, 11"),
        "{}",
        v.problems[0]
    );
    // ... unless requests without a complete answer could hold them: one without an answer
    // (3 IDs), or a dropped batch of 5 whose client read one of them.
    let mut lost = h.clone();
    lost.push(Record {
        count: 3,
        outcome: Outcome::NoAnswer("timed out".into()),
        ..answer(0, 0, Mode::Segment, 2_500, &[])
    });
    // (The server was frozen then, so no answer is no problem of its own.)
    let frozen = Seen {
        silences: vec![Silence {
            server: 0,
            from: ms(2_400),
            to: ms(2_600),
        }],
        ..seen.clone()
    };
    let v = check(&lost, &frozen);
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    let mut dropped = h.clone();
    dropped.push(Record {
        count: 5,
        outcome: Outcome::Dropped(vec![9]),
        ..answer(0, 0, Mode::Segment, 2_500, &[])
    });
    assert!(check(&dropped, &seen).problems.is_empty());
    // ... or the tag changed near (a server drops a removed tag's buffers).
    let changed = Seen {
        tag_changes: vec![(ms(2_000), TAGS[0])],
        ..seen.clone()
    };
    assert!(check(&h, &changed).problems.is_empty());
    // The case the count rule cannot see: a batch refused at once took the buffers (5..15)
    // and said so (issued 14), while a batch sent before it waited for its own claim and was
    // answered later, above them. Its count covers the loss; its IDs do not.
    let (mut h, seen) = left_buffers(vec![]);
    let probe: Vec<u64> = (15..45).collect();
    h.push(Record {
        done: ms(2_900),
        ..answer(0, 0, Mode::Segment, 2_000, &probe)
    });
    h.push(Record {
        count: 30,
        outcome: Outcome::Refused {
            status: 503,
            code: "not_ready".into(),
            buffers: Some((0, 14)),
        },
        ..answer(0, 0, Mode::Segment, 2_300, &[])
    });
    let v = check(&h, &seen);
    let rules: Vec<&str> = v.problems.iter().map(|p| rule_of(p)).collect();
    assert_eq!(rules, ["buffered IDs lost"], "{:?}", v.problems);
    assert!(v.problems[0].contains("10 IDs of nem"), "{}", v.problems[0]);
}

#[test]
fn a_single_id_refused_while_the_buffer_held_ids_is_found() {
    let (h, seen) = buffered();
    let v = check(&h, &seen);
    // The IDs the batch took are found twice: buffered when the single ID was refused, and
    // gone from the buffers unanswered.
    let rules: Vec<&str> = v.problems.iter().map(|p| rule_of(p)).collect();
    assert_eq!(
        rules,
        ["refused while buffered", "buffered IDs lost"],
        "{:?}",
        v.problems
    );
    assert!(
        v.problems[0].contains("buffer held 5 of the 10 IDs"),
        "{}",
        v.problems[0]
    );
    assert!(
        v.problems[1].contains("5 IDs of nem left its buffers"),
        "{}",
        v.problems[1]
    );
    assert_eq!(v.ids_left_buffers_unanswered, 5);
    assert_eq!((v.refusals_judged, v.refused_while_buffered), (1, 1));
    // The batch took the buffer and claimed the rest, answered after the cut healed (as on
    // main): its buffered IDs were taken from the single IDs, so the refusal is a problem.
    let mut slow = h.clone();
    slow.retain(|r| r.count != 5_000);
    let ids: Vec<u64> = (15..20).chain(1_000..5_995).collect();
    slow.push(Record {
        done: ms(150),
        ..answer(0, 0, Mode::Segment, 105, &ids)
    });
    let v2 = check(&slow, &seen);
    assert_eq!(v2.problems.len(), 1, "{:?}", v2.problems);
    assert!(v2.problems[0].contains("1 batch(es) larger than the buffer"));
    // A batch that fit in the buffer used those IDs.
    let mut fit = h.clone();
    fit.retain(|r| r.count != 5_000);
    fit.push(answer(0, 0, Mode::Segment, 105, &[15, 16, 17, 18, 19]));
    assert!(check(&fit, &seen).problems.is_empty());
    // A burst of refusals is one problem, every refusal counted.
    let mut burst = h.clone();
    let again = Record {
        sent: ms(130),
        done: ms(131),
        ..h.last().unwrap().clone()
    };
    burst.push(again);
    let v2 = check(&burst, &seen);
    let refused: Vec<&String> = v2
        .problems
        .iter()
        .filter(|p| rule_of(p) == "refused while buffered")
        .collect();
    assert_eq!(refused.len(), 1, "{:?}", v2.problems);
    assert_eq!(v2.refused_while_buffered, 2);
    assert_eq!(
        v.beyond_buffer, 1,
        "the batch of 5,000 asked past 10 buffered IDs"
    );
    // Every buffered ID answered before the refusal: used up, no problem.
    let mut all = h.clone();
    all.push(answer(1, 0, Mode::Segment, 103, &[500]));
    all.push(answer(0, 0, Mode::Segment, 104, &[15, 16, 17, 18, 19]));
    assert!(check(&all, &seen).problems.is_empty());
    // A request without a complete answer may have used them.
    for outcome in [
        Outcome::NoAnswer("timed out".into()),
        Outcome::Dropped(vec![]),
    ] {
        let mut lost = h.clone();
        lost.push(Record {
            outcome,
            count: 5,
            ..answer(0, 0, Mode::Segment, 105, &[])
        });
        // (The server was frozen then, so no answer is no problem of its own.)
        let frozen = Seen {
            silences: vec![Silence {
                server: 0,
                from: ms(104),
                to: ms(111),
            }],
            ..seen.clone()
        };
        let v = check(&lost, &frozen);
        assert!(v.problems.is_empty(), "{:?}", v.problems);
    }
    // Not judged: another process of the server, a sample too old, a batch refused, a
    // tag removed or added shortly before. (The IDs gone unanswered are still found by the
    // rule that follows them by ID, where two samples of one process show them go.)
    let unjudged = |v: Verdict| {
        v.problems
            .iter()
            .all(|p| rule_of(p) != "refused while buffered")
    };
    let mut other = seen.clone();
    other.caches[0].incarnation = 1;
    assert!(check(&h, &other).problems.is_empty());
    let mut old = seen.clone();
    old.caches[0].sent = ms(0);
    old.caches[0].done = ms(1);
    let mut late = h.clone();
    for r in late.iter_mut().filter(|r| r.sent >= ms(110)) {
        r.sent += Duration::from_secs(6);
        r.done += Duration::from_secs(6);
    }
    assert!(unjudged(check(&late, &old)));
    let mut batch = h.clone();
    batch.last_mut().unwrap().count = 2;
    assert_eq!(check(&batch, &seen).refusals_judged, 0);
    let changed = Seen {
        tag_changes: vec![(ms(50), TAGS[0])],
        ..seen.clone()
    };
    assert!(check(&h, &changed).problems.is_empty());
    let elsewhere = Seen {
        tag_changes: vec![(ms(50), TAGS[1])],
        ..seen.clone()
    };
    let v = check(&h, &elsewhere);
    let rules: Vec<&str> = v.problems.iter().map(|p| rule_of(p)).collect();
    assert_eq!(rules, ["refused while buffered", "buffered IDs lost"]);
}

fn life(server: usize, incarnation: u32, from: u64, to: Option<u64>) -> Life {
    Life {
        server,
        incarnation,
        identity: format!("198.19.0.{}:8080", server * 10 + incarnation as usize),
        from: ms(from),
        to: to.map(ms),
    }
}

fn listed(at: u64, held: &[u64]) -> WorkerSample {
    WorkerSample {
        sent: ms(at),
        done: ms(at + 50),
        held: held.to_vec(),
    }
}

#[test]
fn worker_ids_beyond_live_and_fenced_servers_are_found() {
    // Three servers; server 2 restarted at 20 s under a new identity.
    let seen = Seen {
        lives: vec![
            life(0, 0, 0, None),
            life(1, 0, 0, None),
            life(2, 0, 0, Some(20_000)),
            life(2, 1, 20_500, None),
        ],
        workers: vec![listed(10_000, &[0, 1, 2]), listed(22_000, &[0, 1, 2, 3])],
        fence: Duration::from_secs(7),
        ..none()
    };
    let v = check(&clean(), &seen);
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(
        (v.worker_samples, v.most_held, v.worker_ids_seen),
        (2, 4, 4)
    );
    assert_eq!(v.identities, 4);
    // Long after the fence, the dead process's id is still held: a leak.
    let mut leak = seen.clone();
    leak.workers.push(listed(40_000, &[0, 1, 2, 3]));
    let v = check(&clean(), &leak);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "worker ids beyond live and fenced");
    // A disturbed lease (server 0 cut off) may hold a second id meanwhile.
    let cut = Seen {
        disturbed: vec![Silence {
            server: 0,
            from: ms(35_000),
            to: ms(38_000),
        }],
        ..leak.clone()
    };
    assert!(check(&clean(), &cut).problems.is_empty());
    // A registry fault postpones expiry: a claim still live when it began (server 2's
    // first, fenced until 27 s) may live until a fence after it healed (36 s + 7 s)...
    let registry = Seen {
        registry_faults: vec![(ms(25_000), ms(36_000))],
        ..leak.clone()
    };
    let v = check(&clean(), &registry);
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(
        (v.worker_samples, v.worker_samples_after_registry_faults),
        (3, 1)
    );
    // ...but a fault that began after the claim had expired excuses nothing (issue 46:
    // such samples were excused before).
    let late = Seen {
        registry_faults: vec![(ms(30_000), ms(36_000))],
        ..leak.clone()
    };
    let v = check(&clean(), &late);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "worker ids beyond live and fenced");
    // A new identity taking an id above every free one (a database registry that never
    // recycles): ids grow with identities, not with servers alive at once.
    let growing = Seen {
        workers: vec![listed(10_000, &[0, 1, 2]), listed(22_000, &[0, 1, 3])],
        ..seen.clone()
    };
    assert!(
        check(&clean(), &growing).problems.is_empty(),
        "4 could be held at 22 s"
    );
    let growing = Seen {
        workers: vec![listed(10_000, &[0, 1, 2]), listed(40_000, &[0, 1, 7])],
        ..seen.clone()
    };
    let v = check(&clean(), &growing);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert_eq!(rule_of(&v.problems[0]), "worker ids above the lowest free");
    // Without a fence the rule is not checked.
    let unchecked = Seen {
        fence: Duration::ZERO,
        ..leak
    };
    assert!(check(&clean(), &unchecked).problems.is_empty());
}

/// The region rules: an ID outside its region's worker slice or segment block is found, one
/// problem per server and kind; IDs inside pass. (An ID of two regions is `check`'s rule.)
#[test]
fn ids_outside_their_regions_share_are_found() {
    // Two regions, servers 0-1 in region 0, 2-3 in region 1 (Leaf's layout: worker bits at
    // 12..22; region 1 of 2 owns workers 512..1024 and segment IDs from 2^52).
    let region_of = [0, 0, 1, 1];
    let flake = |worker: u64, seq: u64| (5u64 << 22) | (worker << 12) | seq;
    let block1 = 1u64 << 52;
    let inside = vec![
        answer(0, 0, Mode::Segment, 0, &[1, 2]),
        answer(2, 0, Mode::Segment, 1, &[block1, block1 + 1]),
        answer(1, 0, Mode::Snowflake, 2, &[flake(511, 0)]),
        answer(3, 0, Mode::Snowflake, 3, &[flake(512, 0), flake(1023, 1)]),
    ];
    assert!(check_regions(&inside, &region_of, 2).is_empty());
    assert!(check(&inside, &none()).problems.is_empty());
    let mut outside = inside.clone();
    outside.push(answer(3, 0, Mode::Segment, 4, &[1, 2, 3]));
    outside.push(answer(3, 0, Mode::Segment, 5, &[4]));
    outside.push(answer(0, 0, Mode::Snowflake, 6, &[flake(512, 7)]));
    let p = check_regions(&outside, &region_of, 2);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p.iter()
            .all(|x| rule_of(x) == "an ID outside its region's share")
    );
    assert!(
        p.iter()
            .any(|x| x.contains("serve 3 (region 1 of 2) answered 4 segment IDs")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("serve 0 (region 0 of 2) answered 1 snowflake IDs")),
        "{p:?}"
    );
}
