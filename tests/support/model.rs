//! A model of the segment command surface (issue 45): sequences of what operators and clients
//! do, drawn by proptest and run against real stores, with the invariants that must hold where
//! the capabilities meet (tombstones x regions, batches x the end of a range, a refusal x what
//! it records, hand-back x restarts).
//!
//! The operations are the library calls each command makes, in the order it makes them
//! (`tag add` = open in the process's region, then `segment::add_tag`; `region add` =
//! `prepare_old_region`, open the new store in the new region, `seed_tags`; `serve` = a
//! `SegmentGenerator` over its own connection, stopped by `hand_back` or dropped as a crash).
//! Processes are separate connections ([`Connect`]), so each has bounds of its own.
//!
//! The model holds, per tag name across every store and region, the IDs issued so far, and
//! checks after every step:
//! 1. no ID is issued twice, ever, except the repeats an operator asked for with
//!    `--reuse-removed-ids` (IDs at or above the reused start are forgiven once);
//! 2. a refused command (anything but `serve`, whose loader works in the background) changes
//!    nothing in any store: rows, tombstones and recorded regions are as before;
//! 3. a server refuses a batch only when its buffers plus what the table has left are fewer than
//!    asked, and then says how many are left; a single ID only when both are empty;
//! 4. what a server says of a tag (its view's `ids_left`, its health) agrees with its buffers
//!    and the table;
//! 5. when `region check` of every database of the deployments it covers says the regions are
//!    set up right, using every region (each name added where missing, then IDs taken) repeats
//!    no ID. (A check that leaves out a database of a deployment says nothing of that one.)
//!
//! `docs/seams.md` lists every meeting of two capabilities and what checks it: this model or a
//! named test. A new capability adds its rows there.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use leafctl::db::regions;
use leafctl::region::Region;
use leafctl::segment::AllocStoreExt;
use leafctl::segment::{
    AllocStore, Increment, NewTag, RegionToRecord, RemovedPages, SegmentError, SegmentGenerator,
    StartAt, TagHealth, add_tag, bump_tag, enter_region, recorded_region,
};
use leafctl::server::LeafService;
use proptest::prelude::*;

/// Opens a new connection to one database of the case: a process of its own.
pub type Connect = Box<dyn Fn() -> Box<dyn AllocStore> + Send + Sync>;

/// Databases per case: enough for an old deployment and two regions added beside it.
pub const STORES: usize = 3;
/// Servers per case.
pub const SERVERS: usize = 2;
/// Tag names: few, so that names meet across stores and removals.
const TAGS: [&str; 2] = ["a", "b"];
/// The end of region 0's block of 2 regions (2^52): where a region's block ends.
const BLOCK_END: i64 = 1 << 52;

/// Where `tag add` starts a tag.
#[derive(Debug, Clone, Copy)]
pub enum Start {
    /// No `--start`: 1, the block's start, or above a tombstone.
    Default,
    /// `--start N` for a small N.
    Low(i64),
    /// `--start 2^63-1-k`: within a few steps of the end of the range.
    NearTop(i64),
    /// `--start 2^52-k`: within a few steps of the end of region 0's block (of 2).
    NearBlockEnd(i64),
    /// `--start N --reuse-removed-ids`.
    Reuse(i64),
}

/// Which region a process is given.
#[derive(Debug, Clone, Copy)]
pub enum RegionFlags {
    /// None.
    None,
    /// The one its database records (the right flags), none if it records none.
    Recorded,
    /// `--region I --regions N`, right or wrong.
    Given(u32, u32),
}

/// One thing an operator or a client does.
#[derive(Debug, Clone)]
pub enum Op {
    /// `tag add` (in the database's recorded region).
    Add {
        store: usize,
        tag: usize,
        start: Start,
        step: i64,
    },
    /// `tag remove --yes`.
    Remove { store: usize, tag: usize },
    /// `tag set-step`.
    SetStep { store: usize, tag: usize, step: i64 },
    /// `tag bump --to max_id + by`.
    Bump { store: usize, tag: usize, by: i64 },
    /// `next TAG -n count`, with region flags.
    Next {
        store: usize,
        tag: usize,
        count: u64,
        flags: RegionFlags,
    },
    /// `serve` started on a database (stopping the server there first, gracefully).
    ServeStart {
        server: usize,
        store: usize,
        flags: RegionFlags,
    },
    /// `GET /api/segment/get/TAG`, `k` times.
    Singles { server: usize, tag: usize, k: u32 },
    /// `GET /api/segment/get/TAG?count=N`.
    Batch {
        server: usize,
        tag: usize,
        count: u64,
    },
    /// A graceful stop: the unused IDs go back to the table.
    Stop { server: usize },
    /// A crash: nothing goes back.
    Kill { server: usize },
    /// `region add --from FROM --db TO --region I --regions N`.
    RegionAdd {
        from: usize,
        to: usize,
        index: u32,
        count: u32,
    },
    /// `region check` over the first `stores` databases.
    RegionCheck { stores: usize },
}

fn start_strategy() -> impl Strategy<Value = Start> {
    prop_oneof![
        4 => Just(Start::Default),
        1 => (1i64..4).prop_map(Start::Low),
        2 => prop::sample::select(vec![1i64, 3, 500, 1500]).prop_map(Start::NearTop),
        2 => prop::sample::select(vec![0i64, 1, 3, 500]).prop_map(Start::NearBlockEnd),
        1 => (1i64..3).prop_map(Start::Reuse),
    ]
}

fn flags_strategy() -> impl Strategy<Value = RegionFlags> {
    prop_oneof![
        2 => Just(RegionFlags::None),
        4 => Just(RegionFlags::Recorded),
        1 => (0u32..2).prop_map(|i| RegionFlags::Given(i, 2)),
    ]
}

fn step() -> impl Strategy<Value = i64> {
    prop::sample::select(vec![1i64, 5, 100, 1000])
}

fn count() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![1u64, 2, 3, 7, 100, 499, 500, 1000, 1600])
}

/// One operation, weighted toward the ones that meet others.
pub fn op_strategy() -> impl Strategy<Value = Op> {
    let store = 0..STORES;
    let tag = 0..TAGS.len();
    let server = 0..SERVERS;
    prop_oneof![
        5 => (store.clone(), tag.clone(), start_strategy(), step())
            .prop_map(|(store, tag, start, step)| Op::Add { store, tag, start, step }),
        2 => (store.clone(), tag.clone()).prop_map(|(store, tag)| Op::Remove { store, tag }),
        1 => (store.clone(), tag.clone(), step())
            .prop_map(|(store, tag, step)| Op::SetStep { store, tag, step }),
        1 => (store.clone(), tag.clone(), prop::sample::select(vec![0i64, 1, 1000]))
            .prop_map(|(store, tag, by)| Op::Bump { store, tag, by }),
        4 => (store.clone(), tag.clone(), count(), flags_strategy())
            .prop_map(|(store, tag, count, flags)| Op::Next { store, tag, count, flags }),
        2 => (server.clone(), store.clone(), flags_strategy())
            .prop_map(|(server, store, flags)| Op::ServeStart { server, store, flags }),
        3 => (server.clone(), tag.clone(), prop::sample::select(vec![1u32, 3, 600]))
            .prop_map(|(server, tag, k)| Op::Singles { server, tag, k }),
        3 => (server.clone(), tag.clone(), count())
            .prop_map(|(server, tag, count)| Op::Batch { server, tag, count }),
        1 => server.clone().prop_map(|server| Op::Stop { server }),
        1 => server.prop_map(|server| Op::Kill { server }),
        2 => (store.clone(), store, prop::sample::select(vec![(1u32, 2u32), (1, 3), (2, 3)]))
            .prop_map(|(from, to, (index, count))| Op::RegionAdd { from, to, index, count }),
        1 => (2usize..=STORES).prop_map(|stores| Op::RegionCheck { stores }),
    ]
}

/// A sequence of operations, up to `max` long.
pub fn ops_strategy(max: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op_strategy(), 1..max)
}

/// What a database holds, compared before and after a refused command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    region: Option<Region>,
    rows: Vec<(String, i64, i64)>,
    tombstones: Vec<(String, i64)>,
}

struct Server {
    store: usize,
    /// The service `serve` runs, over its generator: what its routes answer is checked too.
    service: Arc<LeafService>,
}

impl Server {
    fn generator(&self) -> &SegmentGenerator {
        self.service
            .segment()
            .expect("the model's servers serve segment IDs")
    }
}

/// The model's state while a case runs.
pub struct Model {
    dbs: Vec<Connect>,
    servers: Vec<Option<Server>>,
    /// The deployment each database belongs to (an index of one of its databases): its own
    /// until `region add` joins it to another, or `region check` passes over it with others.
    deployment: [usize; STORES],
    /// Per deployment and tag name, every ID issued, across its databases and regions.
    issued: HashMap<(usize, String), HashSet<u64>>,
    /// What was done, for the failure message.
    log: Vec<String>,
    /// Answers the servers' routes in this process (`LeafService::respond`).
    runtime: tokio::runtime::Runtime,
    /// Tags (per store) that a graceful stop's hand-back opened again after they were used
    /// up: a server that found them used up may keep refusing them (see [`Model::stop`]).
    reopened: HashSet<(usize, String)>,
}

/// Runs `ops` against the databases `dbs` (fresh for the case; [`STORES`] of them) and panics,
/// naming the step, at the first broken invariant.
pub fn run(ops: &[Op], dbs: Vec<Connect>) {
    assert_eq!(dbs.len(), STORES);
    let mut model = Model {
        dbs,
        servers: (0..SERVERS).map(|_| None).collect(),
        deployment: std::array::from_fn(|s| s),
        issued: HashMap::new(),
        log: Vec::new(),
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime"),
        reopened: HashSet::new(),
    };
    for op in ops {
        model.log.push(format!("{op:?}"));
        model.step(op);
    }
    for s in 0..SERVERS {
        model.stop(s, true);
    }
}

impl Model {
    fn fail(&self, what: impl std::fmt::Display) -> ! {
        panic!("{what}\nafter:\n  {}", self.log.join("\n  "));
    }

    fn snapshot(&self, store: usize) -> Snapshot {
        let db = (self.dbs[store])();
        let rows = db
            .list()
            .unwrap_or_else(|e| self.fail(format!("listing store {store}: {e}")))
            .into_iter()
            .map(|r| (r.tag, r.max_id, r.step))
            .collect();
        let mut tombstones = Vec::new();
        for page in RemovedPages::new(&*db) {
            let page =
                page.unwrap_or_else(|e| self.fail(format!("tombstones of store {store}: {e}")));
            tombstones.extend(page.into_iter().map(|t| (t.tag, t.max_id)));
        }
        Snapshot {
            region: recorded_region(&*db)
                .unwrap_or_else(|e| self.fail(format!("region of store {store}: {e}"))),
            rows,
            tombstones,
        }
    }

    fn snapshots(&self) -> Vec<Snapshot> {
        (0..STORES).map(|s| self.snapshot(s)).collect()
    }

    /// A process's connection to `store`, opened as the CLI opens it with `flags`, and the
    /// region to record once its command succeeded.
    fn open(
        &self,
        store: usize,
        flags: RegionFlags,
    ) -> Result<(Box<dyn AllocStore>, Option<RegionToRecord>), SegmentError> {
        let mut db = (self.dbs[store])();
        let region = match flags {
            RegionFlags::None => None,
            RegionFlags::Recorded => recorded_region(&*db)?,
            RegionFlags::Given(i, n) => Some(Region::new(i, n)?),
        };
        let to_record = enter_region(&mut *db, region)?;
        Ok((db, to_record))
    }

    /// [`Model::open`] for a command that succeeds or fails as `run` does: the region is
    /// recorded only when it succeeded.
    fn with_open<T>(
        &mut self,
        store: usize,
        flags: RegionFlags,
        run: impl FnOnce(&mut Self, &dyn AllocStore) -> Result<T, SegmentError>,
    ) -> Result<T, SegmentError> {
        let (db, to_record) = self.open(store, flags)?;
        let out = run(self, &*db)?;
        if let Some(r) = to_record {
            r.record(&*db)?;
        }
        Ok(out)
    }

    /// Joins `other`'s deployment to `store`'s: from now on an ID of either must not repeat an
    /// ID of both (what each issued before is what the databases record of it, and a past ID
    /// of one that the other repeats is no promise of `region add` or `region check`, which
    /// see max_ids and tombstones, not history: the union is taken as it is).
    fn join(&mut self, store: usize, other: usize) {
        let (keep, gone) = (self.deployment[store], self.deployment[other]);
        if keep == gone {
            return;
        }
        for d in self.deployment.iter_mut() {
            if *d == gone {
                *d = keep;
            }
        }
        let moved: Vec<(String, HashSet<u64>)> = self
            .issued
            .keys()
            .filter(|(d, _)| *d == gone)
            .cloned()
            .collect::<Vec<_>>()
            .into_iter()
            .filter_map(|k| self.issued.remove(&k).map(|ids| (k.1, ids)))
            .collect();
        for (tag, ids) in moved {
            self.issued.entry((keep, tag)).or_default().extend(ids);
        }
    }

    /// Whether `region add` from `from` to `to` as `region` makes `to` part of `from`'s
    /// deployment: `to` belongs to no other deployment of several databases, and no database of
    /// `from`'s records `region` already (else the operator added one region twice, which
    /// `region check` reports and the tool cannot see from two databases).
    fn joins(&self, from: usize, to: usize, region: Region) -> bool {
        let alone = self
            .deployment
            .iter()
            .enumerate()
            .all(|(s, d)| s == to || *d != self.deployment[to]);
        let taken = (0..STORES).any(|s| {
            s != to
                && self.deployment[s] == self.deployment[from]
                && recorded_region(&*(self.dbs[s])()).ok().flatten() == Some(region)
        });
        alone && !taken
    }

    fn record(&mut self, store: usize, tag: &str, ids: impl IntoIterator<Item = u64>) {
        let key = (self.deployment[store], tag.to_string());
        let seen = self.issued.entry(key).or_default();
        let mut twice = Vec::new();
        for id in ids {
            if !seen.insert(id) {
                twice.push(id);
            }
        }
        if !twice.is_empty() {
            twice.sort_unstable();
            twice.truncate(5);
            self.fail(format!("tag {tag:?}: IDs issued twice: {twice:?}"));
        }
    }

    fn step(&mut self, op: &Op) {
        let serve = matches!(
            op,
            Op::ServeStart { .. }
                | Op::Singles { .. }
                | Op::Batch { .. }
                | Op::Stop { .. }
                | Op::Kill { .. }
        );
        if serve {
            self.serve_step(op);
            return;
        }
        // Running servers' loaders may claim meanwhile: wait until they are idle so a snapshot
        // compares only what the command did.
        self.settle_all();
        let before = self.snapshots();
        let outcome = self.command(op);
        if let Err(e) = outcome {
            self.settle_all();
            let after = self.snapshots();
            if after != before {
                self.fail(format!(
                    "a refused command changed a store: {e}\nbefore: {before:?}\nafter:  {after:?}"
                ));
            }
        }
    }

    /// A command that is not `serve`; an error is its refusal.
    fn command(&mut self, op: &Op) -> Result<(), SegmentError> {
        match *op {
            Op::Add {
                store,
                tag,
                start,
                step,
            } => {
                let start = match start {
                    Start::Default => StartAt::Default,
                    Start::Low(n) => StartAt::Given(n),
                    Start::NearTop(k) => StartAt::Given(i64::MAX - k),
                    Start::NearBlockEnd(k) => StartAt::Given(BLOCK_END - k),
                    Start::Reuse(n) => StartAt::Reuse(n),
                };
                self.with_open(store, RegionFlags::Recorded, |_, db| {
                    add_tag(
                        db,
                        &NewTag {
                            start,
                            ..NewTag::new(TAGS[tag], step)
                        },
                    )
                })?;
                if let StartAt::Reuse(s) = start {
                    // The operator says the IDs from here on were never used: forgiven once.
                    let s = u64::try_from(s).unwrap_or(0);
                    let key = (self.deployment[store], TAGS[tag].to_string());
                    if let Some(seen) = self.issued.get_mut(&key) {
                        seen.retain(|id| *id < s);
                    }
                }
                Ok(())
            }
            Op::Remove { store, tag } => self.with_open(store, RegionFlags::Recorded, |_, db| {
                db.remove(TAGS[tag]).map(drop)
            }),
            Op::SetStep { store, tag, step } => {
                self.with_open(store, RegionFlags::Recorded, |_, db| {
                    db.set_step(TAGS[tag], step)
                })
            }
            Op::Bump { store, tag, by } => self.with_open(store, RegionFlags::Recorded, |_, db| {
                let Some(row) = db.get(TAGS[tag])? else {
                    return db.bump(TAGS[tag], 1).map(drop);
                };
                bump_tag(db, TAGS[tag], row.max_id.saturating_add(by)).map(drop)
            }),
            Op::Next {
                store,
                tag,
                count,
                flags,
            } => {
                let n = i64::try_from(count).unwrap_or(i64::MAX);
                self.with_open(store, flags, |model, db| {
                    let claim = db.claim(TAGS[tag], Increment::Custom(n))?;
                    model.record(store, TAGS[tag], claim.start..claim.end);
                    Ok(())
                })
            }
            Op::RegionAdd {
                from,
                to,
                index,
                count,
            } => {
                if from == to {
                    return Ok(());
                }
                let region = Region::new(index, count)?;
                let joins = self.joins(from, to, region);
                let old = (self.dbs[from])();
                let prepared = regions::prepare_old_region(&*old, region)?;
                let (new, to_record) = self.open(to, RegionFlags::Given(index, count))?;
                regions::check_carry(&*old, prepared.region, &*new)?;
                prepared.record(&*old)?;
                if let Some(r) = to_record {
                    r.record(&*new)?;
                }
                regions::seed_tags(&*old, &*new, |_| {})?;
                if joins {
                    self.join(from, to);
                }
                Ok(())
            }
            Op::RegionCheck { stores } => {
                let mut dbs = Vec::new();
                for s in 0..stores {
                    let db = (self.dbs[s])();
                    dbs.push(regions::RegionDb::read(&*db)?);
                }
                let findings = regions::check_regions(&dbs);
                if findings
                    .iter()
                    .any(|f| f.severity == regions::Severity::Error)
                {
                    return Ok(());
                }
                // A check of some of a deployment's databases says nothing of the others (a
                // region added twice, once to a database left out, is the operator's to find
                // by checking them all): only a check of whole deployments promises anything.
                let partial = (stores..STORES)
                    .any(|o| (0..stores).any(|c| self.deployment[o] == self.deployment[c]));
                if partial {
                    self.log.push(format!(
                        "  region check of {stores} passed, over part of a deployment only"
                    ));
                    return Ok(());
                }
                self.log
                    .push(format!("  region check of {stores} said: set up right"));
                for s in 1..stores {
                    self.join(0, s);
                }
                self.use_every_region(stores);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// What an operator does after `region check` said yes: every name the deployment ever
    /// issued is added where missing, and each region takes a few IDs of it.
    fn use_every_region(&mut self, stores: usize) {
        let names: Vec<String> = self
            .issued
            .keys()
            .filter(|(d, _)| *d == self.deployment[0])
            .map(|(_, name)| name.clone())
            .collect();
        for s in 0..stores {
            for name in &names {
                let Ok((db, _)) = self.open(s, RegionFlags::Recorded) else {
                    continue;
                };
                let _ = add_tag(&*db, &NewTag::new(name, 10));
                if let Ok(claim) = db.claim(name, Increment::Custom(3)) {
                    self.log.push(format!(
                        "  store {s} issued {name} {}..{}",
                        claim.start, claim.end
                    ));
                    self.record(s, name, claim.start..claim.end);
                }
            }
        }
    }

    fn serve_step(&mut self, op: &Op) {
        match *op {
            Op::ServeStart {
                server,
                store,
                flags,
            } => {
                self.stop(server, true);
                let Ok((db, to_record)) = self.open(store, flags) else {
                    return;
                };
                let generator = SegmentGenerator::builder(Arc::<dyn AllocStore>::from(db))
                    .wait_timeout(Duration::from_secs(3))
                    .build()
                    .unwrap_or_else(|e| self.fail(format!("serve did not start: {e}")));
                if let Some(r) = to_record
                    && r.record(generator.store()).is_err()
                {
                    return;
                }
                let service = Arc::new(LeafService::builder().segment(generator).build());
                self.servers[server] = Some(Server { store, service });
            }
            Op::Singles { server, tag, k } => {
                let name = TAGS[tag];
                for i in 0..k {
                    let Some(left) = self.left(server, name) else {
                        return;
                    };
                    let Some(s) = &self.servers[server] else {
                        return;
                    };
                    match s.generator().next_id(name) {
                        Ok(id) => self.record(s.store, name, [id]),
                        Err(SegmentError::UnknownTag { .. }) => return,
                        Err(e) if stale_region(s.generator(), &e) => return,
                        Err(e) => {
                            let reopened = matches!(e, SegmentError::Exhausted { .. })
                                && self.reopened.contains(&(s.store, name.to_string()));
                            if left > 0 && !reopened {
                                self.fail(format!(
                                    "single ID {i} of tag {name:?} refused while {left} were left \
                                     (buffers and table): {e}"
                                ));
                            }
                            return;
                        }
                    }
                }
                self.check_view(server, name);
            }
            Op::Batch { server, tag, count } => {
                let name = TAGS[tag];
                let Some(left) = self.left(server, name) else {
                    return;
                };
                let Some(s) = &self.servers[server] else {
                    return;
                };
                match s.generator().next_ids(name, count) {
                    Ok(ranges) => {
                        let ids: Vec<u64> = ranges.into_iter().flatten().collect();
                        if ids.len() as u64 != count {
                            self.fail(format!("a batch of {count} gave {}", ids.len()));
                        }
                        let store = s.store;
                        self.record(store, name, ids);
                    }
                    Err(SegmentError::UnknownTag { .. }) => {}
                    Err(e) if stale_region(s.generator(), &e) => {}
                    Err(e) => {
                        if left >= count {
                            self.fail(format!(
                                "a batch of {count} of tag {name:?} refused while {left} were left \
                                 (buffers and table): {e}"
                            ));
                        }
                        if !e.to_string().contains(&format!("{left} ")) {
                            self.fail(format!(
                                "a batch of {count} of tag {name:?} refused without saying that \
                                 {left} are left: {e}"
                            ));
                        }
                    }
                }
                self.check_view(server, name);
            }
            Op::Stop { server } => self.stop(server, true),
            Op::Kill { server } => self.stop(server, false),
            _ => {}
        }
    }

    fn stop(&mut self, server: usize, graceful: bool) {
        if let Some(s) = self.servers[server].take() {
            if graceful {
                // A hand-back into a table that was used up opens it again: another server
                // that found the tag used up keeps saying so (a known seam, left for later:
                // it asks the table again only when restarted).
                let store = s.store;
                let used_up: Vec<String> = TAGS
                    .iter()
                    .filter(|t| self.table_left(store, t) == Some(0))
                    .map(|t| t.to_string())
                    .collect();
                s.generator().hand_back(Duration::from_secs(5));
                for t in used_up {
                    if self.table_left(store, &t).is_some_and(|l| l > 0) {
                        self.reopened.insert((store, t));
                    }
                }
            }
            drop(s);
        }
    }

    /// IDs the table of `store` has left for `name` (its row's max_id to the bounds' end).
    fn table_left(&self, store: usize, name: &str) -> Option<u64> {
        let db = (self.dbs[store])();
        let row = db.get(name).ok()??;
        u64::try_from(db.bounds().ids_left(row.max_id)).ok()
    }

    /// Waits until every server's loader is idle (bounded).
    fn settle_all(&self) {
        for s in self.servers.iter().flatten() {
            settle(s.generator());
        }
    }

    /// What server `server` can still hand out for `name`: its buffers plus what the table has
    /// left inside its bounds; `None` when there is no server, or no such tag in its table.
    fn left(&self, server: usize, name: &str) -> Option<u64> {
        let s = self.servers[server].as_ref()?;
        settle(s.generator());
        let row = s.generator().store().get(name).ok()??;
        let table = u64::try_from(s.generator().store().bounds().ids_left(row.max_id)).unwrap_or(0);
        let buffered = s.generator().view(name).map_or(0, |v| buffered(&v));
        Some(table + buffered)
    }

    /// What the server says of a tag agrees with its buffers and the table.
    fn check_view(&self, server: usize, name: &str) {
        let Some(s) = &self.servers[server] else {
            return;
        };
        settle(s.generator());
        let Some(view) = s.generator().view(name) else {
            return;
        };
        let Some(headroom) = view.headroom() else {
            return;
        };
        let Some(left) = self.left(server, name) else {
            return;
        };
        // A server knows the table as its own last claim left it: when nobody claimed since,
        // what it says is exact; else it may say more than is left, never fewer than it holds.
        let said = u64::try_from(headroom.ids_left).unwrap_or(0);
        let newest = view.segments.iter().map(|s| s.max).max().unwrap_or(0);
        let table_at = s
            .generator()
            .store()
            .get(name)
            .ok()
            .flatten()
            .map(|r| r.max_id);
        let exact = table_at.is_some_and(|m| u64::try_from(m).ok() == Some(newest));
        if (exact && said != left) || said < buffered(&view) {
            self.fail(format!(
                "server {server} says tag {name:?} has {said} IDs left, but its buffers and the \
                 table hold {left} (view {view:?})"
            ));
        }
        let exhausted = s.generator().health(&view) == TagHealth::Exhausted;
        if exact && exhausted != (left == 0) {
            self.fail(format!(
                "server {server} calls tag {name:?} {:?} with {left} IDs left",
                s.generator().health(&view)
            ));
        }
        if exact {
            self.check_routes(s, server, name, left);
        }
    }

    /// What the server's routes say of a tag agrees with the model: `/metrics`' IDs left (when
    /// it reports the tag) and `/readyz`'s list of used-up tags.
    fn check_routes(&self, s: &Server, server: usize, name: &str, left: u64) {
        let (_, metrics) = self.get(s, "/metrics");
        let series = format!("tag=\"{name}\"");
        let reported = metrics
            .lines()
            .filter(|l| l.starts_with("segment_range_ids_left{") && l.contains(&series))
            .find_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok());
        if let Some(said) = reported
            && said != left
        {
            self.fail(format!(
                "server {server}'s /metrics says tag {name:?} has {said} IDs left; the model \
                 {left}:\n{metrics}"
            ));
        }
        self.check_status_json(s, server, name, left);
        // `{"ready":true,"segment":"ok (used up, no IDs left: \"a\"; \"b\")"}`
        let (status, readyz) = self.get(s, "/readyz");
        let segment = serde_json::from_str::<serde_json::Value>(&readyz)
            .ok()
            .and_then(|v| v["segment"].as_str().map(str::to_string))
            .unwrap_or_default();
        let used_up: Vec<&str> = segment
            .split_once("no IDs left: ")
            .map(|(_, rest)| rest.trim_end_matches(')').split("; ").collect())
            .unwrap_or_default();
        if used_up.contains(&format!("{name:?}").as_str()) != (left == 0) {
            self.fail(format!(
                "server {server}'s /readyz ({status}) says {readyz:?} of tag {name:?} with {left} \
                 IDs left"
            ));
        }
    }

    /// The status page's data (`/?format=json`, searched for the tag) agrees with the model: the
    /// tag's `ids_left` and its state `exhausted` exactly when nothing is left (issue 45's gap:
    /// the model read `/metrics` and `/readyz` only).
    fn check_status_json(&self, s: &Server, server: usize, name: &str, left: u64) {
        let (status, body) = self.get(s, &format!("/?format=json&q={name}&sort=name"));
        let report: serde_json::Value = match serde_json::from_str(&body) {
            Ok(v) => v,
            Err(e) => self.fail(format!(
                "server {server}'s status JSON ({status}): {e}: {body}"
            )),
        };
        let rows = report["segment"]["tags"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // Called only for a tag the server has loaded: its status page lists it.
        let Some(row) = rows.iter().find(|r| r["tag"] == name) else {
            self.fail(format!(
                "server {server}'s status JSON ({status}) does not list tag {name:?}: {body}"
            ));
        };
        let said = row["ids_left"].as_str().and_then(|n| n.parse::<u64>().ok());
        if said.is_some_and(|n| n != left) {
            self.fail(format!(
                "server {server}'s status JSON says tag {name:?} has {said:?} IDs left; the model \
                 {left}: {row}"
            ));
        }
        if (row["state"] == "exhausted") != (left == 0) {
            self.fail(format!(
                "server {server}'s status JSON calls tag {name:?} {} with {left} IDs left: {row}",
                row["state"]
            ));
        }
    }

    /// A GET of `path` from the server's service, in this process: its status and body.
    fn get(&self, s: &Server, path: &str) -> (u16, String) {
        let request = hyper::Request::get(path).body(()).expect("a request");
        self.runtime.block_on(async {
            let answer = s.service.respond(request).await;
            let status = answer.status().as_u16();
            let body = http_body_util::BodyExt::collect(answer.into_body())
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            (status, String::from_utf8_lossy(&body).into_owned())
        })
    }
}

/// IDs a server's buffers hold for a tag: the current segment's rest and the loaded next one.
fn buffered(view: &leafctl::segment::SegmentBufferView) -> u64 {
    let left = |s: &leafctl::segment::SegmentView| s.max.saturating_sub(s.value);
    let current = left(&view.segments[view.pos & 1]);
    let next = if view.next_ready {
        left(&view.segments[1 - (view.pos & 1)])
    } else {
        0
    };
    current + next
}

/// Waits (up to 5 s) until no load of the generator is queued or running.
fn settle(generator: &SegmentGenerator) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && generator.views().iter().any(|v| v.loading) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The proptest configuration of a run: `cases` cases and shrinking bounded in time. Proptest's
/// own variables still apply (`PROPTEST_CASES` for more cases, `PROPTEST_RNG_SEED` to fix the
/// seed); a failure prints the shrunk operations, which become an ordinary test.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        max_shrink_time: 120_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Whether `e` is the refusal of a server started before its database recorded a region
/// (`region add` since) whose claim left that region's block: it issued nothing, and must be
/// restarted with the region; the database must indeed record one its store was not given.
fn stale_region(generator: &SegmentGenerator, e: &SegmentError) -> bool {
    let store = generator.store();
    // A background load's refusal reaches a request as "not ready", naming its cause.
    let said = matches!(e, SegmentError::RegionRecordedSince { .. })
        || e.to_string().contains("since this process opened it");
    said && store.bounds().region().is_none() && recorded_region(store).ok().flatten().is_some()
}
