use super::*;
use crate::segment::{Claim, HeadroomStatus, Increment};

fn claim(start: u64, end: u64, table_step: i64) -> Claim {
    Claim {
        start,
        end,
        table_step,
    }
}

#[test]
fn a_segment_hands_out_its_range_once() {
    let b = SegmentBuffer::new("t");
    assert!(b.try_take().is_none(), "empty before the first load");
    assert!(matches!(
        b.slow_path(Instant::now()).unwrap(),
        Slow::StartLoad
    ));
    let plan = b.plan_load(0);
    assert!(b.finish_load(plan, Ok(claim(10, 20, 10))).is_none());
    assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
    let ids: Vec<u64> = std::iter::from_fn(|| b.try_take().map(|x| x.0)).collect();
    assert_eq!(ids, (10..20).collect::<Vec<_>>());
    let v = b.view();
    assert_eq!(v.pos, 1);
    assert_eq!(
        v.segments[1],
        SegmentView {
            value: 20,
            max: 20,
            step: 10
        }
    );
}

/// A buffer that asked for its first load, and a thread waiting (up to 5 s) for it.
fn a_waiter_for_the_first_load() -> (
    std::sync::Arc<SegmentBuffer>,
    std::thread::JoinHandle<Result<Slow, SegmentError>>,
) {
    let b = std::sync::Arc::new(SegmentBuffer::new("t"));
    assert!(matches!(
        b.slow_path(Instant::now()).unwrap(),
        Slow::StartLoad
    ));
    let waiter = {
        let b = b.clone();
        std::thread::spawn(move || b.slow_path(Instant::now() + Duration::from_secs(5)))
    };
    std::thread::sleep(Duration::from_millis(50));
    (b, waiter)
}

#[test]
fn a_waiter_whose_segment_others_used_up_loads_again_instead_of_failing() {
    let (b, waiter) = a_waiter_for_the_first_load();
    b.finish_load(b.plan_load(0), Ok(claim(1, 3, 2)));
    // Another thread switches and takes the whole small segment.
    assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
    while b.try_take().is_some() {}
    // The waiter must not report a failure: no load failed.
    assert!(waiter.join().unwrap().is_ok());
    // A real failure does end a wait.
    let (b2, waiter) = a_waiter_for_the_first_load();
    b2.finish_load(
        b2.plan_load(0),
        Err(SegmentError::Unreachable {
            db: "db".into(),
            detail: "down".into(),
        }),
    );
    match waiter.join().unwrap() {
        Err(SegmentError::NotReady { cause, .. }) => {
            assert!(cause.unwrap().contains("cannot reach db"))
        }
        _ => panic!("expected NotReady"),
    }
}

/// Takes `n` IDs (switching to the loaded segment as needed).
fn take(b: &SegmentBuffer, n: u64) {
    for _ in 0..n {
        if b.try_take().is_none() {
            assert!(matches!(b.slow_path(Instant::now()).unwrap(), Slow::Retry));
            b.try_take().expect("an ID after the switch");
        }
    }
}

#[test]
fn the_step_follows_leafs_rules() {
    let b = SegmentBuffer::new("t");
    let p = b.plan_load(1_000);
    assert_eq!(p.increment, Increment::TableStep);
    b.finish_load(p, Ok(claim(1, 101, 100)));
    let p = b.plan_load(2_000);
    assert_eq!(
        p.increment,
        Increment::TableStep,
        "second claim sets the timestamp"
    );
    b.finish_load(p, Ok(claim(101, 201, 100)));
    let p = b.plan_load(2_000 + 60_000);
    assert_eq!(p.increment, Increment::Custom(200), "fast: doubles");
    b.finish_load(p, Ok(claim(201, 401, 100)));
    let p = b.plan_load(62_000 + 20 * 60_000);
    assert_eq!(p.increment, Increment::Custom(200), "15-30 min: keeps");
    b.finish_load(p, Ok(claim(401, 601, 100)));
    let t = 62_000 + 20 * 60_000;
    let p = b.plan_load(t + 31 * 60_000);
    assert_eq!(p.increment, Increment::Custom(100), "slow: halves");
    b.finish_load(p, Ok(claim(601, 701, 100)));
    let p = b.plan_load(t + 62 * 60_000);
    assert_eq!(
        p.increment,
        Increment::Custom(100),
        "never below the table step"
    );
}

#[test]
fn the_step_stops_doubling_at_a_million() {
    let b = SegmentBuffer::new("t");
    b.finish_load(b.plan_load(0), Ok(claim(0, 600_000, 600_000)));
    b.finish_load(b.plan_load(1), Ok(claim(600_000, 1_200_000, 600_000)));
    let p = b.plan_load(2);
    assert_eq!(p.increment, Increment::Custom(600_000));
}
#[test]
fn slow_claims_at_a_high_rate_get_segments_that_cover_them() {
    let b = SegmentBuffer::new("t");
    b.finish_load(b.plan_load(0), Ok(claim(1, 1_001, 1_000)));
    // A burst on a far database: the first claim took 20 ms, and 100 IDs went in 1 ms
    // (100 a ms). Leaf's second claim would be the table's 1,000, gone in 10 ms, before the
    // next claim is back; 8 claim times at the rate are 16,000.
    b.record_claim(Duration::from_millis(20), true);
    take(&b, 100);
    let p = b.plan_load(1);
    assert_eq!(p.increment, Increment::Custom(16_000));
    b.finish_load(p, Ok(claim(1_001, 17_001, 1_000)));
    assert_eq!(
        b.view().step_reason,
        "8 claim times at the rate: the claims are slow for it"
    );
    // Claims of 500 ms at 6,000 IDs a ms: 24 million, past the largest step, to the bound.
    b.record_claim(Duration::from_millis(500), true);
    take(&b, 6_000);
    let p = b.plan_load(2);
    assert_eq!(p.increment, Increment::Custom(MAX_COVERING_STEP));
    b.finish_load(p, Ok(claim(17_001, 10_017_001, 1_000)));
    // A near database (claims of 1 ms) at a slow rate: Leaf's rule alone.
    b.record_claim(Duration::from_millis(1), true);
    take(&b, 20_000);
    let p = b.plan_load(60_002);
    assert_eq!(
        p.increment,
        Increment::Custom(4_000),
        "Leaf's own step, doubled at each claim since the table's (1,000, 2,000, 4,000)"
    );
}

/// Issue 36 item 12: a loaded tag about to run out of its range is `low`, one rule for the
/// status page, `/metrics` and readiness; a failure or a used-up tag still says so first.
#[test]
fn a_loaded_tag_running_out_of_its_range_is_low() {
    let loaded = |max: u64| {
        let mut v = SegmentBufferView::unloaded("t");
        v.init_ok = true;
        v.step = 1000;
        v.min_step = 1000;
        v.segments[0] = SegmentView {
            value: max - 1000,
            max,
            step: 1000,
        };
        v
    };
    let far = loaded(1_000_000);
    assert_eq!(far.headroom().map(|h| h.status), Some(HeadroomStatus::Ok));
    assert_eq!(far.health(false), TagHealth::Ok);
    // 500,000 IDs left at a step of 1,000: 500 claims, under LOW_CLAIMS.
    let near = loaded((i64::MAX - 500_000) as u64);
    assert_eq!(near.headroom().map(|h| h.claims_left), Some(500));
    assert_eq!(near.health(false), TagHealth::Low);
    assert_eq!(TagHealth::Low.name(), "low");
    assert!(!TagHealth::Low.needs_attention());
    // Less than one step left is low too, until the tag is used up.
    assert_eq!(loaded(i64::MAX as u64 - 10).health(false), TagHealth::Low);
    let mut used_up = loaded(i64::MAX as u64);
    used_up.exhausted = true;
    assert_eq!(used_up.health(false), TagHealth::Exhausted);
    let mut failing = near.clone();
    failing.last_error = Some("cannot reach the database".into());
    assert_eq!(failing.health(false), TagHealth::Failing);
    assert_eq!(near.health(true), TagHealth::WentBackwards);
    let unloaded = SegmentBufferView::unloaded("t");
    assert_eq!(unloaded.headroom(), None);
    assert_eq!(unloaded.health(false), TagHealth::Idle);
}
