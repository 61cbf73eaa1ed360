//! Regions on a private network (issue 37, item 4): IDs unique across regions with no
//! coordination between them, proven with the regions cut off from each other.
//!
//! Each region is a net of namespaces of its own (`support::regions`): its own database (MariaDB
//! in even regions, PostgreSQL in odd ones), its own registry (ZooKeeper in even regions, etcd in
//! odd ones) and two `leafctl serve --segment --snowflake --region r --regions N`. The regions
//! are joined by a WAN router with a 50 ms delay between regions (none within one; the delay is
//! applied in user space by `support::netns`, as this kernel has no `sch_netem`). Clients in each
//! server's namespace ask every server for both kinds of ID, bounded in count and time, while
//! the regions are cut off from each other (default 60 s with two regions, 120 s with three;
//! `LEAF_REGION_CUT_S` sets it, for runs of many minutes): every region keeps issuing both kinds
//! throughout (no ID path makes a cross-region call), then the WAN heals and they issue more.
//! Every ID of every region is collected: none twice, every snowflake ID's worker field in its
//! region's slice, every segment ID in its region's block.
//!
//! The negative control deploys two regions without region flags (two independent Leafs): the
//! same reading must find IDs issued twice, or the check could not fail.

use crate::support;

use std::time::{Duration, Instant};

use support::fault::Load;
use support::regions::{Deployment, Findings, Issued, Loads, WAN_DELAY, check};

/// The tags added in every region (server i of a region asks for `TAGS[i % 2]`).
const TAGS: [&str; 2] = ["order", "pay"];
/// Each client's pause between requests.
const PAUSE: Duration = Duration::from_millis(40);
/// Each client's bound in count.
const MAX_REQUESTS: u64 = 20_000;
/// How long the loads run on the healed WAN before the cut, and after the heal.
const SETTLE: Duration = Duration::from_secs(8);
/// The negative control's cut.
const CONTROL_CUT: Duration = Duration::from_secs(20);
/// A connection across a cut WAN is given this long (it must not be made).
const PROBE: Duration = Duration::from_millis(1_500);

/// The cut's length: `LEAF_REGION_CUT_S` seconds, or `default_s`.
fn cut_length(default_s: u64) -> Duration {
    let s = std::env::var("LEAF_REGION_CUT_S")
        .ok()
        .map(|v| {
            v.trim()
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("LEAF_REGION_CUT_S is whole seconds, got {v:?}"))
        })
        .unwrap_or(default_s);
    Duration::from_secs(s)
}

/// Asserts that region `from` reaches region `to` across the WAN, and that the WAN delay is
/// applied: a TCP connection's handshake crosses it twice.
fn assert_reachable(d: &Deployment, from: usize, to: usize) {
    let took = d
        .probe(from, to, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("the WAN is up, but {e}"));
    assert!(
        took >= 2 * WAN_DELAY,
        "region {from} reached region {to} in {took:?}: the WAN delay ({WAN_DELAY:?} each way) \
         is not applied"
    );
}

/// Asserts that region `from` does not reach region `to` (the cut is real).
fn assert_cut_off(d: &Deployment, from: usize, to: usize) {
    if let Ok(took) = d.probe(from, to, PROBE) {
        panic!("region {from} reached region {to} in {took:?} across a cut WAN");
    }
}

/// One stretch of the run on the loads' clocks, one mark per loop.
struct Stretch {
    what: String,
    from: Vec<Duration>,
    to: Vec<Duration>,
}

/// Every loop (every region, server and kind) answered IDs throughout `s`: in its first and in
/// its last third.
fn issued_throughout(issued: &[Issued], s: &Stretch) {
    let stopped = stopped_in(issued, s);
    assert!(
        stopped.is_empty(),
        "an ID path needs another region: {stopped:#?}"
    );
}

/// The loops that did not answer IDs throughout `s` (none in its first or in its last third),
/// each with what it saw.
fn stopped_in(issued: &[Issued], s: &Stretch) -> Vec<String> {
    let mut stopped = Vec::new();
    for (k, i) in issued.iter().enumerate() {
        let (from, to) = (s.from[k], s.to[k]);
        let third = (to - from) / 3;
        let (early, late) = (i.ok_in(from, from + third), i.ok_in(to - third, to));
        let all = i.seen.requests_in(from, to);
        eprintln!(
            "[regions] {}: {}: {} requests, {} without an ID ({:?})",
            s.what,
            i.what(),
            all.sent,
            all.failed,
            i.seen.errors
        );
        if early == 0 || late == 0 {
            stopped.push(format!(
                "{}: {} stopped issuing ({early} answers with IDs in the first third, {late} in \
                 the last; {} requests without an answer; errors {:?})",
                s.what,
                i.what(),
                all.failed,
                i.seen.errors
            ));
        }
    }
    stopped
}

fn report(label: &str, f: &Findings) {
    eprintln!(
        "[regions] {label}: IDs {:?}, per region and kind {:?}; issued twice {:?}; snowflake IDs \
         outside their slice {}, segment IDs outside their block {}; worker ids used by more than \
         one region {:?}",
        f.ids, f.per_region, f.twice, f.outside_slice, f.outside_block, f.shared_workers
    );
    for e in &f.examples {
        eprintln!("[regions]   {e}");
    }
}

/// The run: `count` regions with region flags, the WAN delayed, cut for `cut` (with three or
/// more regions: region 0 alone for the first half, then every region from every other), healed.
fn regions_cut_off_issue_no_id_twice(count: u32, cut: Duration) {
    let started = Instant::now();
    run_cut_off(Deployment::start(count, true), cut, started);
}

/// [`regions_cut_off_issue_no_id_twice`] on a deployment built already (since `started`).
fn run_cut_off(mut d: Deployment, cut: Duration, started: Instant) {
    let count = d.count;
    d.add_tags(&TAGS);
    let mut issued = d.serve(TAGS[0]);
    d.wan_delay(WAN_DELAY);
    eprintln!(
        "[regions] {} (ready after {:?})",
        d.describe(),
        started.elapsed()
    );
    let n = count as usize;
    for a in 0..n {
        for b in 0..n {
            if a != b {
                assert_reachable(&d, a, b);
            }
        }
    }
    let limit = SETTLE * 2 + cut + Duration::from_secs(120);
    let loads = Loads::start(&d, &TAGS, PAUSE, limit, MAX_REQUESTS);
    assert!(
        loads.wait_for_answers(20, Duration::from_secs(60)),
        "the loads did not get going"
    );
    std::thread::sleep(SETTLE);

    let mut stretches = Vec::new();
    if n >= 3 {
        // Region 0 alone: the others still reach each other.
        let from = loads.marks();
        d.cut(0);
        for b in 1..n {
            assert_cut_off(&d, 0, b);
            assert_cut_off(&d, b, 0);
        }
        assert_reachable(&d, 1, 2);
        std::thread::sleep((cut / 2).saturating_sub(PROBE * 2 * (n as u32 - 1)));
        stretches.push(Stretch {
            what: "region 0 cut off".into(),
            from,
            to: loads.marks(),
        });
    }
    let from = loads.marks();
    let cut_at = Instant::now();
    d.cut_all();
    for a in 0..n {
        for b in 0..n {
            if a != b {
                assert_cut_off(&d, a, b);
            }
        }
    }
    let whole = if n >= 3 { cut - cut / 2 } else { cut };
    std::thread::sleep(whole.saturating_sub(cut_at.elapsed()));
    stretches.push(Stretch {
        what: "every region cut off".into(),
        from,
        to: loads.marks(),
    });
    d.heal_all();
    for a in 0..n {
        assert_reachable(&d, a, (a + 1) % n);
    }
    let healed = loads.marks();
    assert!(
        loads.wait_for_answers(20, Duration::from_secs(60)),
        "the loads stopped after the heal"
    );
    std::thread::sleep(SETTLE);
    stretches.push(Stretch {
        what: "after the heal".into(),
        from: healed,
        to: loads.marks(),
    });
    let stopped = loads.stop();
    for s in &stretches {
        issued_throughout(&stopped, s);
    }
    let frames: Vec<_> = d.sites.iter().map(|s| s.uplink.counts()).collect();
    issued.extend(stopped);
    let f = check(&issued, count);
    report(&format!("{count} regions, cut for {cut:?}"), &f);
    eprintln!(
        "[regions] WAN frames (forwarded, dropped) per region link: {frames:?}; run took {:?}",
        started.elapsed()
    );
    assert!(
        f.ids.values().all(|&k| k > 0),
        "both kinds were issued: {:?}",
        f.ids
    );
    assert!(
        f.clean(),
        "{count} regions: IDs issued twice {:?}, {} snowflake IDs outside their region's worker \
         slice, {} segment IDs outside their region's block, worker ids shared by regions {:?}: \
         {:#?}",
        f.twice,
        f.outside_slice,
        f.outside_block,
        f.shared_workers,
        f.examples
    );
}

#[test]
fn two_regions_cut_off_from_each_other_issue_no_id_twice() {
    regions_cut_off_issue_no_id_twice(2, cut_length(60));
}

#[test]
fn three_regions_cut_off_from_each_other_issue_no_id_twice() {
    regions_cut_off_issue_no_id_twice(3, cut_length(120));
}

/// The positive control: two regions split by hand (each tag started at its region's block,
/// each server given a worker id of its region's slice), without region flags, pass the same
/// run and the same reading, with a shorter cut: the harness finds no collision where there is
/// none, so the region tests' failures are the region flags' own.
#[test]
fn two_regions_split_by_hand_pass_the_same_checks() {
    let started = Instant::now();
    run_cut_off(Deployment::by_hand(2), CONTROL_CUT, started);
}

/// The negative control: two regions deployed without region flags are two independent Leafs,
/// each starting its tags at 1 and its worker ids at 0. Within a bounded run the same reading
/// finds segment IDs issued twice and worker ids used by both: the check can fail.
///
/// Then the control of the cut: a server in region 0 whose database is region 1's (an ID path
/// across the WAN) is caught by the check that every server issued throughout the cut, while
/// the servers of both regions on their own stores pass it through the same cut.
#[test]
fn two_regions_without_region_flags_issue_ids_twice_and_a_cross_region_path_is_caught() {
    let mut d = Deployment::start(2, false);
    d.add_tags(&TAGS);
    let mut issued = d.serve(TAGS[0]);
    d.wan_delay(WAN_DELAY);
    let loads = Loads::start(&d, &TAGS, PAUSE, Duration::from_secs(60), 300);
    assert!(
        loads.wait_for_answers(100, Duration::from_secs(60)),
        "the loads did not get going"
    );
    issued.extend(loads.stop());
    let f = check(&issued, 2);
    report("2 regions without region flags", &f);
    assert!(
        f.twice["segment"] > 0,
        "two independent Leafs issued no segment ID twice: the check cannot catch collisions"
    );
    assert!(
        !f.shared_workers.is_empty(),
        "two independent registries handed out no common worker id"
    );
    assert!(!f.clean());

    // A segment server on region 0's host using region 1's database, for a tag of its own (a
    // small first segment: its buffer runs dry within seconds at this rate).
    d.sites[1].run(&["tag", "add", "cross", "--step", "200"]);
    let home = support::Sandbox::new();
    let mut c = d.sites[1].leafctl(&home);
    c.args(["serve", "--segment"]);
    let cross = support::serve::Server::start_at(&d.sites[0].serve_hosts[0], c);
    let cross_load = Load::start_bounded_at(
        cross.place(),
        cross.addr,
        "/api/segment/get/cross",
        1,
        100,
        Duration::from_millis(10),
        Duration::from_secs(120),
        20_000,
    );
    let loads = Loads::start(&d, &TAGS, PAUSE, Duration::from_secs(120), MAX_REQUESTS);
    assert!(loads.wait_for_answers(20, Duration::from_secs(60)));
    assert!(cross_load.wait_for_answers(20, Duration::from_secs(60)));
    let (from, cross_from) = (loads.marks(), cross_load.elapsed());
    d.cut(0);
    std::thread::sleep(CONTROL_CUT);
    let (to, cross_to) = (loads.marks(), cross_load.elapsed());
    d.heal(0);
    let local = loads.stop();
    let cross_seen = vec![Issued {
        region: 0,
        server: 2,
        kind: support::regions::Kind::Segment,
        tag: "cross".into(),
        seen: cross_load.stop(),
    }];
    let what = "region 0 cut off".to_string();
    let local_stopped = stopped_in(
        &local,
        &Stretch {
            what: what.clone(),
            from,
            to,
        },
    );
    let cross_stopped = stopped_in(
        &cross_seen,
        &Stretch {
            what,
            from: vec![cross_from],
            to: vec![cross_to],
        },
    );
    eprintln!("[regions] control of the cut: {cross_stopped:?}");
    assert!(
        local_stopped.is_empty(),
        "servers on their own region's stores: {local_stopped:#?}"
    );
    assert_eq!(
        cross_stopped.len(),
        1,
        "a server whose database is across the cut WAN was not caught: it issued throughout \
         the {CONTROL_CUT:?} cut"
    );
    cross.stop_cleanly();
}
