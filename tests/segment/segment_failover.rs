//! Segment mode across a failover that loses claims: an asynchronous primary/replica pair
//! (GTID), replication stopped, claims on the primary, the primary killed and the replica
//! promoted. The claims the replica never received are the table going backwards: the guard
//! refuses to issue from them until `leafctl tag bump` moves the tag past them.

use crate::support;

use std::time::Duration;

use support::env::Env;
use support::serve::Server;
use support::{assert_unique, parse_ids, wait_until};

/// `next` remembers (in its state directory) the highest max_id it claimed; after the failover
/// the replica hands out a claim below it, which is refused with the tag, both values and the
/// causes; `tag bump` repairs the tag; issuing resumes with no ID twice.
#[test]
fn next_refuses_a_claim_the_failover_lost_until_the_tag_is_bumped() {
    let env = Env::replicated();
    env.ok(&["tag", "add", "f", "--step", "10"]);
    let mut ids = parse_ids(&env.ok(&["next", "f", "-n", "5"]).stdout);
    assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    env.db.sync();

    env.db.stop_replication();
    ids.extend(parse_ids(&env.ok(&["next", "f", "-n", "5"]).stdout));
    assert_eq!(ids.last(), Some(&10), "claimed on the primary");
    env.db.fail_over();

    // The same URL: the primary is gone, so the replica (now writable) answers, with max_id 6.
    support::segment_contract::lost_claims_are_refused_until_bumped(&|args| env.run(args), ids);
}

/// A server that claimed from the range the failover lost answers 503 `went_backwards` for
/// that tag only (another tag goes on), names it in /readyz, counts it in /metrics, and issues
/// again after `tag bump`: no ID twice.
#[test]
fn serve_refuses_the_lost_range_for_that_tag_only() {
    let env = Env::replicated();
    env.ok(&["tag", "add", "f", "--step", "10"]);
    env.ok(&["tag", "add", "other", "--step", "10"]);
    env.db.sync();
    env.db.stop_replication();
    let mut cmd = env.cmd(&["serve", "--segment"]);
    cmd.env("LEAF_LOG", "leafctl=warn");
    let server = Server::start(cmd);
    // Both segments of f claimed on the primary: [1, 11) and the preloaded next one ([11, 21),
    // or larger when the claims are slow for the rate: see `SegmentBuffer::plan_load`).
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(server.get("/api/segment/get/f").id());
    }
    assert!(wait_until(Duration::from_secs(10), || server.next_ready("f")));
    let claimed = env.db.primary.max_id("leaf", "f");
    assert!(claimed >= 21, "{claimed}");
    env.db.fail_over();

    // Drain f: its buffers run out; the next claim (on the replica, from 1) is refused.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let refused = loop {
        let r = server.get("/api/segment/get/f");
        if r.status != 200 {
            break r;
        }
        ids.push(r.id());
        assert!(std::time::Instant::now() < deadline, "never refused");
    };
    refused.assert_error(503, "went_backwards");
    assert!(refused.header("retry-after").is_none(), "{refused:?}");
    assert!(refused.body.contains("went backwards"), "{refused:?}");
    // The other tag is served (from the replica).
    let other = server.get("/api/segment/get/other");
    assert_eq!(other.status, 200, "{other:?}");
    let ready = server.get("/readyz");
    assert_eq!(ready.status, 503);
    assert!(
        ready.body.contains("tag \\\"f\\\" went backwards") && ready.body.contains("tag bump f"),
        "{}",
        ready.body
    );
    let metrics = server.get("/metrics").body;
    let count: u64 = metrics
        .lines()
        .find(|l| l.starts_with("leaf_segment_claims_went_backwards_total"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(count >= 1, "{metrics}");

    let to = claimed.max(1000);
    env.ok(&["tag", "bump", "f", "--to", &to.to_string()]);
    let resumed = wait_until(Duration::from_secs(30), || {
        let r = server.get("/api/segment/get/f");
        if r.status == 200 {
            ids.push(r.id());
            true
        } else {
            false
        }
    });
    assert!(resumed, "f never resumed after the bump");
    assert!(*ids.last().unwrap() >= to as u64);
    assert_unique(&mut ids);
    assert_eq!(server.get("/readyz").status, 200);
}
