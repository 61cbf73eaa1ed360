//! The seeded schedules (`support::nemesis::schedule`, `region_schedule`): one seed gives one
//! schedule, every fault and action is drawn, slots never overlap, and the long cut has its
//! batches.
use super::support::nemesis::*;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn one_seed_one_schedule_and_every_fault_is_drawn() {
    let can = Abilities {
        registry_restarts: true,
    };
    assert_eq!(schedule(7, 60, can), schedule(7, 60, can));
    assert_ne!(schedule(7, 60, can), schedule(8, 60, can));
    let s: Vec<Step> = schedule(1, 60, can)
        .into_iter()
        .filter(|x| !x.fault.is_action())
        .collect();
    assert!(s.len() >= 10, "{} faults in 60 s", s.len());
    assert!(s.iter().all(|x| x.at < Duration::from_secs(60)));
    // Overlap: some fault starts before an earlier one heals.
    assert!(s.windows(2).any(|w| w[1].at < w[0].at + w[0].hold));
    let all: std::collections::BTreeSet<&str> = (0..20)
        .flat_map(|seed| schedule(seed, 60, can))
        .filter(|x| !x.fault.is_action())
        .map(|x| x.fault.kind())
        .collect();
    assert_eq!(all.len(), 13, "{all:?}");
    let etcd = Abilities {
        registry_restarts: false,
    };
    assert!(
        (0..20)
            .flat_map(|seed| schedule(seed, 60, etcd))
            .all(|x| x.fault.kind() != "kill registry member")
    );
}

#[test]
fn every_run_has_one_cut_longer_than_a_claim_with_a_batch_early_and_late_in_it() {
    let can = Abilities {
        registry_restarts: true,
    };
    let long = |x: &Step| matches!(x.fault, Fault::CutServer(_)) && x.hold >= ms(LONG_CUT_MS.0);
    for seed in 0..20 {
        let s = schedule(seed, 60, can);
        let cuts: Vec<&Step> = s.iter().filter(|x| long(x)).collect();
        let [cut] = cuts[..] else {
            panic!("seed {seed}: {} long cuts", cuts.len());
        };
        let Fault::CutServer(server) = cut.fault else {
            unreachable!()
        };
        assert!(cut.hold <= ms(LONG_CUT_MS.1));
        assert!(cut.at + cut.hold < Duration::from_secs(60));
        // Alone on its link, for the whole cut and its heal.
        let until = cut.at + cut.hold + ms(cut.fault.heal_ms());
        assert!(
            !s.iter().any(|f| f != cut
                && f.fault.slot() == cut.fault.slot()
                && f.at < until
                && cut.at < f.at + f.hold + ms(f.fault.heal_ms())),
            "seed {seed}"
        );
        // Only the long cut's batches ask for the batch tag: one before the cut fills the
        // buffers, one early in it (its claim fails), two in its last seconds (refused at once).
        let of_batch_tag: Vec<&Step> = s
            .iter()
            .filter(|x| matches!(x.fault, Fault::Batch { tag: BATCH_TAG, server: b, .. } if b == server))
            .collect();
        assert_eq!(
            s.iter()
                .filter(|x| matches!(
                    x.fault,
                    Fault::Batch { tag: BATCH_TAG, .. }
                        | Fault::DropBatch { tag: BATCH_TAG, .. }
                        | Fault::Tag { tag: BATCH_TAG, .. }
                ))
                .count(),
            4,
            "seed {seed}"
        );
        let [warm, early, late, later] = of_batch_tag[..] else {
            panic!(
                "seed {seed}: {} batches of the batch tag",
                of_batch_tag.len()
            );
        };
        assert!(warm.at + ms(3_000) <= cut.at && cut.at <= warm.at + ms(6_000));
        assert!(cut.at >= ms(15_000), "seed {seed}: the servers settled");
        assert!(matches!(warm.fault, Fault::Batch { outage: false, count, .. } if count <= 500));
        assert!(
            early.at > cut.at && early.at <= cut.at + ms(1_500),
            "seed {seed}"
        );
        assert!(late.at >= cut.at + cut.hold - ms(3_000) && later.at < cut.at + cut.hold);
        assert_eq!(later.at, late.at + ms(300));
        // Nothing else on the server's process or link from the first batch to the heal.
        let slots = [Slot::Link(server), Slot::Process(server)];
        assert!(
            !s.iter().any(|f| f != cut
                && slots.contains(&f.fault.slot())
                && f.at < until
                && warm.at < f.at + f.hold + ms(f.fault.heal_ms())),
            "seed {seed}"
        );
    }
    // None where a run is too short for it.
    assert!(!schedule(1, 20, can).iter().any(long));
}

#[test]
fn the_seed_draws_what_users_do_beside_the_faults() {
    let can = Abilities {
        registry_restarts: true,
    };
    // Every kind of action within 20 seeds of 60 s.
    let all: std::collections::BTreeSet<&str> = (0..20)
        .flat_map(|seed| schedule(seed, 60, can))
        .filter(|x| x.fault.is_action())
        .map(|x| x.fault.kind())
        .collect();
    assert_eq!(all.len(), 10, "{all:?}");
    for seed in 0..20 {
        let s = schedule(seed, 60, can);
        assert!(s.windows(2).all(|w| w[0].at <= w[1].at), "in time order");
        assert!(s.iter().all(|x| x.at < Duration::from_secs(60)));
        // Batches of every size, 1..=100,000: some single, some past any buffer.
        let sizes: Vec<u64> = s
            .iter()
            .filter_map(|x| match x.fault {
                Fault::Batch { count, .. } | Fault::DropBatch { count, .. } => Some(count),
                _ => None,
            })
            .collect();
        assert!(sizes.iter().all(|c| (1..=100_000).contains(c)));
        assert!(sizes.len() >= 20, "seed {seed}: {} batches", sizes.len());
        // The operator's commands fit the tag's state: remove only a present tag, add
        // only a missing one, re-add only one removed before; never the main tag.
        let mut present = [false; TAGS.len()];
        present[..ADDED_AT_START].fill(true);
        let mut removed = [false; TAGS.len()];
        for x in &s {
            if let Fault::Tag { tag, op } = x.fault {
                assert_ne!(tag, 0, "the main tag is never touched");
                match op {
                    TagOp::Add => assert!(!present[tag] && !removed[tag]),
                    TagOp::ReAdd => assert!(!present[tag] && removed[tag]),
                    TagOp::Remove => assert!(present[tag]),
                    _ => assert!(present[tag], "seed {seed}: {op:?} on a removed tag"),
                }
                present[tag] = !matches!(op, TagOp::Remove);
                removed[tag] |= matches!(op, TagOp::Remove);
            }
        }
        // A restart never overlaps a fault on the same server's process.
        for r in s
            .iter()
            .filter(|x| matches!(x.fault, Fault::Restart { .. }))
        {
            let until = r.at + Duration::from_millis(r.fault.heal_ms());
            assert!(!s.iter().any(|f| {
                f != r
                    && f.fault.slot() == r.fault.slot()
                    && f.at < until
                    && r.at < f.at + f.hold + Duration::from_millis(f.fault.heal_ms())
            }));
        }
    }
    // CI's seeds see more identities (3 servers, then one per restart as a new identity)
    // than the layout has worker ids, and batches inside outages.
    for seed in [1, 2] {
        let s = schedule(seed, 60, can);
        let new = s
            .iter()
            .filter(|x| {
                matches!(
                    x.fault,
                    Fault::Restart {
                        new_identity: true,
                        ..
                    }
                )
            })
            .count() as u64;
        assert!(3 + new > WORKER_IDS, "seed {seed}: {} identities", 3 + new);
        assert!(
            s.iter()
                .any(|x| matches!(x.fault, Fault::Batch { outage: true, .. })),
            "seed {seed}"
        );
    }
    // Sizes are log-uniform: each decade about as likely.
    let mut rng = Rng::new(5);
    let mut decades = [0u32; 5];
    for _ in 0..10_000 {
        let c = batch_size(&mut rng, 1, 100_000);
        decades[(c.ilog10() as usize).min(4)] += 1;
    }
    assert!(
        decades.iter().all(|&n| (1_500..2_500).contains(&n)),
        "{decades:?}"
    );
}

/// The multi-region schedule: one seed one schedule, region partitions among its faults
/// (and nothing of the single-region world: no Galera node, no registry kill), bounded by
/// the run's length, with server and region numbers in range.
#[test]
fn the_region_schedule_cuts_regions_and_stays_in_its_world() {
    assert_eq!(region_schedule(3, 60, 4, 2), region_schedule(3, 60, 4, 2));
    assert_ne!(region_schedule(3, 60, 4, 2), region_schedule(4, 60, 4, 2));
    let runs: Vec<Step> = (0..20)
        .flat_map(|seed| region_schedule(seed, 60, 6, 3))
        .collect();
    assert!(runs.iter().all(|x| x.at < Duration::from_secs(60)));
    let kinds: std::collections::BTreeSet<&str> = runs.iter().map(|x| x.fault.kind()).collect();
    for k in [
        "partition region",
        "partition serve",
        "pause registry member",
        "kill registry member",
        "kill galera node",
        "batch",
        "tag remove",
        "tag re-add",
        "tag bump",
        "region add",
    ] {
        assert!(kinds.contains(k), "{k} never drawn: {kinds:?}");
    }
    // Batches ask for the tags the operator removes and re-adds too.
    assert!(
        runs.iter()
            .any(|x| matches!(x.fault, Fault::Batch { tag: 1.., .. }))
    );
    for x in &runs {
        match x.fault {
            Fault::CutRegion(r)
            | Fault::PauseDb(r)
            | Fault::KillDb(r)
            | Fault::PauseRegistry(r) => assert!(r < 3, "{}", x.fault),
            // A registry is killed only where it is ZooKeeper (even regions).
            Fault::KillRegistry(r) => assert!(r == 0 || r == 2, "{}", x.fault),
            Fault::KillServer(i)
            | Fault::PauseServer(i)
            | Fault::CutServer(i)
            | Fault::LossyServer { server: i, .. }
            | Fault::SlowServer { server: i, .. }
            | Fault::ClockStep { server: i, .. }
            | Fault::Batch { server: i, .. }
            | Fault::Restart { server: i, .. } => assert!(i < 6, "{}", x.fault),
            // The operator never touches the main tag, and adds regions above region 0.
            Fault::RegionTag { region, tag, .. } => {
                assert!(region < 3 && (1..TAGS.len()).contains(&tag), "{}", x.fault)
            }
            Fault::RegionAdd { region } => assert!((1..3).contains(&region), "{}", x.fault),
            other => panic!("not of the multi-region world: {other}"),
        }
    }
    // Every region is cut off in some seed, and cuts of two regions overlap in some.
    for r in 0..3 {
        assert!(runs.iter().any(|x| x.fault == Fault::CutRegion(r)));
    }
    let overlapping = (0..20).any(|seed| {
        let cuts: Vec<Step> = region_schedule(seed, 60, 6, 3)
            .into_iter()
            .filter(|x| matches!(x.fault, Fault::CutRegion(_)))
            .collect();
        cuts.iter().enumerate().any(|(i, a)| {
            cuts[i + 1..]
                .iter()
                .any(|b| b.fault != a.fault && b.at < a.at + a.hold)
        })
    });
    assert!(overlapping, "no two regions are ever cut at once");
}
