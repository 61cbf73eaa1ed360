//! The went-backwards guard: a claim that comes back below one the generator made before (the
//! table restored, or failed over to a replica that lost claims) is refused, for that tag only,
//! until the tag is bumped past it.

use super::*;
use crate::segment::Refusal;

/// A generator over `t` (from 991, step 10) and `u` (from 1), with 991 and 992 of `t` taken
/// and its next segment loaded (`max_id` 1011), then the table rewound to 1 for `t`.
fn rewound() -> (Arc<MemoryStore>, SegmentGenerator) {
    let store = table(&[("t", 991, 10), ("u", 1, 10)]);
    let g = builder(&store).build().unwrap();
    assert_eq!(
        (g.next_id("t").unwrap(), g.next_id("t").unwrap()),
        (991, 992)
    );
    until_next_ready(&g, "t");
    assert_eq!(max_id(&store, "t"), 1011);
    store.rewind("t", 1);
    (store, g)
}

/// The buffered IDs go out; the claim after them, starting at 1 below the mark 1011, is
/// refused with both values, and keeps being refused (the tag's health says so, another tag
/// goes on) until `bump` moves the tag past it; then issuing resumes at the bump.
#[test]
fn a_claim_below_an_earlier_one_is_refused_until_the_tag_is_bumped() {
    let (store, g) = rewound();
    let ids: Vec<u64> = (0..18).map(|_| g.next_id("t").unwrap()).collect();
    assert_eq!(
        ids,
        (993..1011).collect::<Vec<_>>(),
        "claimed before the rewind"
    );
    match g.next_id("t") {
        Err(SegmentError::WentBackwards {
            tag, start, mark, ..
        }) => assert_eq!((tag.as_str(), start, mark), ("t", 1, 1011)),
        other => panic!("expected WentBackwards, got {other:?}"),
    }
    assert!(g.guard().refuses("t"));
    assert!(g.guard().refused_total() >= 1);
    assert_eq!(
        g.guard().refusals(),
        [Refusal {
            tag: "t".into(),
            start: 1,
            mark: 1011
        }]
    );
    let v = g.view("t").unwrap();
    assert_eq!(g.health(&v), TagHealth::WentBackwards);
    until_troubled(&g, &["t"]);
    assert!(matches!(
        g.next_id("t"),
        Err(SegmentError::WentBackwards { .. })
    ));
    assert_eq!(g.next_id("u").unwrap(), 1, "another tag goes on");
    assert!(!g.guard().refuses("u"));
    store.bump("t", 2000).unwrap();
    assert_eq!(next_id_once_ready(&g, "t"), 2000, "resumed at the bump");
    assert!(!g.guard().refuses("t"));
    let v = g.view("t").unwrap();
    assert_eq!(g.health(&v), TagHealth::Ok);
    until_troubled(&g, &[]);
}

/// A batch larger than the buffers claims on its own; below the mark, it is refused the same
/// way and costs the buffers nothing; the tag shows as went-backwards though no load failed.
#[test]
fn a_batch_claim_below_an_earlier_one_is_refused_and_costs_the_buffers_nothing() {
    let (store, g) = rewound();
    match g.next_ids("t", 100) {
        Err(SegmentError::WentBackwards { start, mark, .. }) => {
            assert_eq!((start, mark), (1, 1011))
        }
        other => panic!("expected WentBackwards, got {other:?}"),
    }
    let v = g.view("t").unwrap();
    assert_eq!(v.issued, 2, "nothing taken");
    assert!(v.last_error.is_none(), "no load failed");
    assert_eq!(g.health(&v), TagHealth::WentBackwards);
    assert_eq!(g.troubled().len(), 1);
    assert_eq!(g.next_id("t").unwrap(), 993, "the buffers are as they were");
    store.bump("t", 5000).unwrap();
    assert_eq!(
        flat(g.next_ids("t", 100).unwrap()),
        (5000..5100).collect::<Vec<_>>()
    );
    assert!(!g.guard().refuses("t"));
    assert!(g.troubled().is_empty());
}
