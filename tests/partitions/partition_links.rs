//! Network partitions on a real network (issue 17), part 2: segment mode cut off from its
//! database, a Galera node cut off, a bad link (loss and delay) between servers and their stores,
//! and the clients' host cut off rather than the server's. Every process runs on a host of a
//! private network of namespaces (`support::netns`); see RELIABILITY.md, "Network partitions".

use crate::support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use support::fault::{Load, Requests, Seen, Steady};
use support::galera::Galera;
use support::mariadb::{MariaDb, PASSWORD};
use support::netns::{Host, Net, Place};
use support::serve::{LEASE_REFUSALS, Server};
use support::zookeeper::ZkServer;
use support::{Sandbox, assert_unique, wait_until};

/// ZooKeeper session timeout of the snowflake server on the bad link.
const SESSION_MS: u64 = 4_000;
/// etcd lease TTL of the snowflake server on the bad link.
const TTL_MS: u64 = 4_000;
/// How soon after a heal a server must be issuing again by itself.
const RESUME_BOUND: Duration = Duration::from_secs(20);
const SEG: &str = "/api/segment/get/cut";
const SNOW: &str = "/api/snowflake/get/k";

/// The load on a server: two client threads (at a place each test names), a request every 10 ms
/// each (every 10th for 100 IDs), for at most 150 s.
const LOAD: Steady = Steady {
    pause: Duration::from_millis(10),
    limit: LOAD_LIMIT,
};

/// How long a test's load may run at most.
const LOAD_LIMIT: Duration = Duration::from_secs(150);

/// A sandbox whose leafctl uses database `url` (MySQL password from the environment).
fn db_cmd(sb: &Sandbox, url: &str, args: &[&str]) -> std::process::Command {
    let mut c = sb.leafctl_std();
    c.env("LEAF_DB", url)
        .env("LEAF_DB_PASSWORD", PASSWORD)
        .args(args);
    c
}

/// A segment server on `place` over the database `url` (tag `cut` added) under load, once it
/// has given 100 answers and 2 s more: its sandbox, the server and the load.
fn segment_server_under_load(place: &Place, url: &str) -> (Sandbox, Server, Load) {
    let sb = sandbox_with_cut_tag(place, url);
    let a = Server::start_at(place, db_cmd(&sb, url, &["serve", "--segment"]));
    let la = LOAD.from(place, a.addr, SEG);
    assert!(la.wait_for_answers(100, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_secs(2));
    (sb, a, la)
}

/// A sandbox that ran `db init` and `tag add cut --step 2000` on database `url` from `place`.
fn sandbox_with_cut_tag(place: &Place, url: &str) -> Sandbox {
    let sb = Sandbox::new();
    ok_at(place, db_cmd(&sb, url, &["db", "init"]));
    ok_at(
        place,
        db_cmd(&sb, url, &["tag", "add", "cut", "--step", "2000"]),
    );
    sb
}

/// Runs a leafctl command at `place`, which must succeed.
fn ok_at(place: &Place, cmd: std::process::Command) {
    support::run_ok(place.wrap(&cmd));
}

fn ms(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn describe(r: &Requests) -> String {
    format!(
        "{} requests, {} without an ID ({:.1}%), p50 {:?}, p99 {:?}, max {:?}",
        r.sent,
        r.failed,
        100.0 * r.failed as f64 / r.sent.max(1) as f64,
        r.p50,
        r.p99,
        r.max
    )
}

/// Asserts that every request was answered (the clients are local) and that every answer without
/// an ID was a 503 with one of `codes`.
fn only_refusals(seen: &Seen, codes: &[&str], what: &str) {
    assert_eq!(seen.failed, 0, "{what}: requests without an answer");
    assert!(
        seen.statuses.keys().all(|&s| s == 200 || s == 503)
            && seen.errors.keys().all(|c| codes.contains(&c.as_str())),
        "{what}: {:?} {:?}",
        seen.statuses,
        seen.errors
    );
}

/// The harness itself: two hosts talk; a cut stops it and a heal restores it; a degraded link
/// drops and delays; dropping the net removes every namespace it made.
#[test]
fn a_private_network_cuts_heals_degrades_and_cleans_up() {
    let net = Net::new();
    let a = net.host();
    let b = net.impaired_host();
    let names: Vec<String> = [a.ns(), b.ns()].iter().map(|s| s.to_string()).collect();
    let listener = b.within(|| TcpListener::bind(b.addr(7000)).expect("bind"));
    listener.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Echoes 4 bytes per connection until stopped.
    let echoer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let Ok((mut s, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = [0u8; 4];
                if s.read_exact(&mut buf).is_ok() {
                    let _ = s.write_all(&buf);
                }
            }
        })
    };
    let target = b.addr(7000);
    let echo = || {
        a.within(|| {
            let started = Instant::now();
            let mut s = TcpStream::connect_timeout(&target, Duration::from_secs(2))?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            s.write_all(b"ping")?;
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf)?;
            assert_eq!(&buf, b"ping");
            Ok::<Duration, std::io::Error>(started.elapsed())
        })
    };
    let fast = echo().expect("the hosts talk");
    b.cut();
    assert!(echo().is_err(), "a cut host is unreachable");
    b.heal();
    assert!(
        wait_until(Duration::from_secs(10), || echo().is_ok()),
        "a healed host is reachable again"
    );
    b.degrade(0, Duration::from_millis(200));
    let slow = echo().expect("a slow link still works");
    // A connect and an exchange: at least two round trips of 2 x 200 ms.
    assert!(slow >= Duration::from_millis(800), "{slow:?}");
    b.restore();
    let (forwarded, _) = b.link_counts();
    assert!(forwarded > 0);
    b.degrade(100, Duration::ZERO);
    assert!(echo().is_err(), "a link losing everything is cut");
    b.restore();
    assert!(wait_until(Duration::from_secs(10), || echo().is_ok()));
    b.degrade_inbound(100, Duration::ZERO);
    assert!(echo().is_err(), "nothing reaches the host: no answer");
    b.restore();
    assert!(wait_until(Duration::from_secs(10), || echo().is_ok()));
    let (_, dropped) = b.link_counts();
    assert!(dropped > 0);
    eprintln!("echo {fast:?} on a clean link, {slow:?} with 200 ms each way");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    echoer.join().unwrap();
    drop(net);
    for ns in names {
        assert!(
            !std::path::Path::new("/run/netns").join(&ns).exists(),
            "{ns} is left behind"
        );
    }
}

/// Segment mode on MariaDB, the server's host cut off from the database under load: it answers
/// from its two buffered segments (only IDs claimed before the cut), then `503 not_ready`, and
/// after the heal claims again by itself.
#[test]
fn a_segment_server_cut_off_from_mariadb_serves_its_buffers_then_503_then_recovers() {
    let net = Net::new();
    let (store, ha) = (net.host(), net.host());
    let db = MariaDb::start_at(&store, &[]);
    let (name, url) = db.fresh_db_url();
    let (_sb, a, la) = segment_server_under_load(&ha, &url);

    let (cut_at, cut) = (la.elapsed(), Instant::now());
    ha.cut();
    // A claim on its way at the cut is lost with it; whatever reached MariaDB is counted here.
    std::thread::sleep(Duration::from_millis(200));
    let max_at_cut = db.max_id(&name, "cut") as u64;
    // Issuing goes on from the buffers until they are empty, then only refusals (a batch
    // larger than what is left is claimed at once, and waits for the I/O timeout first).
    assert!(
        la.wait_for_refusal_after(cut_at, Duration::from_secs(60)),
        "no refusal {:?} after the cut",
        cut.elapsed()
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        db.max_id(&name, "cut") as u64,
        max_at_cut,
        "a claim during the cut"
    );
    let heal_at = la.elapsed();
    ha.heal();
    assert!(
        la.wait_for_ok_after(heal_at, RESUME_BOUND),
        "no ID within {RESUME_BOUND:?} of the heal; {}",
        a.stderr()
    );
    assert!(la.wait_for_answers(100, Duration::from_secs(30)));
    let seen = la.stop();

    let issued_for = seen
        .last_ok_in(cut_at, heal_at)
        .map_or(Duration::ZERO, |t| t - cut_at);
    let resumed = seen.first_ok_after(heal_at).unwrap() - heal_at;
    let refused_from = seen
        .timeline
        .iter()
        .find(|(t, st)| *t >= cut_at && *st != 200)
        .map(|(t, _)| *t - cut_at)
        .expect("a 503 once the buffers were empty");
    eprintln!(
        "[partition] segment mode cut off from MariaDB: issued from its buffers for {} after the \
         cut, 503 not_ready from {}; resumed {} after the heal; during the cut: {}; once empty: \
         {} ({:?})",
        ms(issued_for),
        ms(refused_from),
        ms(resumed),
        describe(&seen.requests_in(cut_at, heal_at)),
        describe(&seen.requests_in(cut_at + issued_for, heal_at)),
        seen.errors
    );
    // Only IDs claimed before the cut were handed out during it.
    for (t, _, hi) in &seen.id_spans {
        if *t >= cut_at && *t < heal_at {
            assert!(
                *hi < max_at_cut,
                "ID {hi} during the cut (max_id {max_at_cut})"
            );
        }
    }
    only_refusals(&seen, &["not_ready"], "segment");
    assert!(seen.count(503) > 0);
    assert!(resumed <= RESUME_BOUND);
    let mut ids = seen.ids;
    assert_unique(&mut ids);
    a.stop_cleanly();
}

/// Segment mode on a 3-node Galera cluster, its URL listing the nodes: the node the server uses
/// is cut off (from the server and from the other two nodes). The server moves to the next node
/// and goes on; the cut-off node rejoins after the heal; no ID twice.
#[test]
fn a_segment_server_whose_galera_node_is_cut_off_moves_on_to_another_node() {
    let net = Net::new();
    let nodes = [net.host(), net.host(), net.host()];
    let ha = net.host();
    let cluster = Galera::start_at(&[&nodes[0], &nodes[1], &nodes[2]]);
    let name = cluster.nodes[0].fresh_db();
    let url = cluster.url_list(&[0, 1, 2], &name);
    let (_sb, a, la) = segment_server_under_load(&ha, &url);

    let (cut_at, cut) = (la.elapsed(), Instant::now());
    nodes[0].cut();
    assert!(
        wait_until(Duration::from_secs(30), || cluster.size_seen_by(1) == 2),
        "node 0 was not evicted"
    );
    let evicted = cut.elapsed();
    // The server claims on another node (max_id moves there) while node 0 is away.
    let before = cluster.nodes[1].max_id(&name, "cut");
    assert!(
        wait_until(Duration::from_secs(60), || cluster.nodes[1]
            .max_id(&name, "cut")
            > before),
        "no claim on another node; {}",
        a.stderr()
    );
    let moved = cut.elapsed();
    std::thread::sleep(Duration::from_secs(10).saturating_sub(cut.elapsed()));
    let heal_at = la.elapsed();
    let healed = Instant::now();
    nodes[0].heal();
    assert!(
        wait_until(Duration::from_secs(90), || cluster.size_seen_by(0) == 3
            && cluster.status(0, "wsrep_local_state_comment") == "Synced"),
        "node 0 did not rejoin"
    );
    let rejoined = healed.elapsed();
    assert!(la.wait_for_answers(100, Duration::from_secs(30)));
    let end = la.elapsed();
    let seen = la.stop();
    eprintln!(
        "[partition] Galera node cut off under segment mode: evicted after {}, the server \
         claimed on another node after {}; longest gap without an ID {}; during the cut: {}; \
         node rejoined (Synced) {} after the heal ({:?})",
        ms(evicted),
        ms(moved),
        ms(seen.longest_gap(cut_at, end)),
        describe(&seen.requests_in(cut_at, heal_at)),
        ms(rejoined),
        seen.errors
    );
    only_refusals(&seen, &["not_ready"], "segment on Galera");
    assert!(seen.longest_gap(cut_at, end) < Duration::from_secs(15));
    let max_id = cluster.nodes[0].max_id(&name, "cut") as u64;
    assert!(seen.ids.iter().all(|&id| id < max_id));
    let mut ids = seen.ids;
    assert_unique(&mut ids);
    a.stop_cleanly();
}

/// One server on a bad link, and the route its load asks for.
struct OnBadLink<'a> {
    what: &'static str,
    server: &'a Server,
    path: &'static str,
    /// The error codes its refusals may carry.
    codes: &'static [&'static str],
}

/// The 20 s bad link of issue 17: 30% of the frames lost and 200 ms of delay, each way.
fn thirty_percent_loss_and_200_ms_for_20_s(hd: &Host) -> String {
    hd.degrade(30, Duration::from_millis(200));
    std::thread::sleep(Duration::from_secs(20));
    "30% loss, 200 ms each way, 20 s".into()
}

/// A fault on the link between the servers' host `hd` and their stores, under load: `fault`
/// degrades the link and returns after the time it lasts, saying what it was. No ID twice (per
/// route: two registries are two worker-id spaces); the error rate and latency before and during
/// it are printed; every server answers nothing but IDs again within [`RESUME_BOUND`] of the
/// link's restoration, for 4 s.
fn bad_link(hd: &Host, servers: &[OnBadLink<'_>], fault: impl FnOnce(&Host) -> String) {
    let loads: Vec<Load> = servers
        .iter()
        .map(|s| LOAD.from(&hd.place, s.server.addr, s.path))
        .collect();
    for l in &loads {
        assert!(l.wait_for_answers(100, Duration::from_secs(30)));
    }
    std::thread::sleep(Duration::from_secs(3));

    let bad_from: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    let what = fault(hd);
    let bad_to: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    hd.restore();
    let (forwarded, dropped) = hd.link_counts();
    // Recovered: 4 s of nothing but IDs, on every route.
    let restored_at: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    let quiet = Duration::from_secs(4);
    // Whether each route had its quiet 4 s (checked below, after the numbers are printed).
    let quiet_seen: Vec<bool> = loads
        .iter()
        .zip(&restored_at)
        .map(|(l, from)| {
            wait_until(RESUME_BOUND + quiet, || {
                let since = l.last_refused().map_or(*from, |r| r.max(*from));
                // Strictly after, so the last 4 s checked below cannot hold that refusal.
                l.elapsed() > since + quiet
                    && l.last_ok()
                        .is_some_and(|t| t + Duration::from_millis(500) >= l.elapsed())
            })
        })
        .collect();
    let ends: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    let seen: Vec<Seen> = loads.into_iter().map(Load::stop).collect();

    eprintln!(
        "[partition] bad link ({what}; {dropped} of {} frames dropped):",
        forwarded + dropped
    );
    // From when on every answer was an ID (zero if none was refused after the restoration).
    let recovered: Vec<Duration> = seen
        .iter()
        .zip(&restored_at)
        .map(|(s, from)| {
            s.timeline
                .iter()
                .filter(|(t, st)| *st != 200 && *t >= *from)
                .map(|(t, _)| *t - *from)
                .next_back()
                .unwrap_or_default()
        })
        .collect();
    for (i, s) in servers.iter().enumerate() {
        eprintln!(
            "  {}: before {}\n  {}: during {}\n  {}: refusals {:?}; only IDs from {} after the \
             link was restored",
            s.what,
            describe(&seen[i].requests_in(Duration::ZERO, bad_from[i])),
            s.what,
            describe(&seen[i].requests_in(bad_from[i], bad_to[i])),
            s.what,
            seen[i].errors,
            ms(recovered[i])
        );
    }
    for (i, s) in servers.iter().enumerate() {
        only_refusals(&seen[i], s.codes, s.what);
        assert!(
            recovered[i] <= RESUME_BOUND,
            "{}: refusals {:?} after the link's restoration: {:?}; {}",
            s.what,
            recovered[i],
            seen[i].errors,
            s.server.stderr()
        );
        // The last 4 s: IDs only, and plenty.
        let tail = ends[i] - quiet;
        let refused_at: Vec<String> = seen[i]
            .timeline
            .iter()
            .filter(|(t, st)| *st != 200 && *t >= restored_at[i])
            .map(|(t, st)| format!("{st} at +{}", ms(*t - restored_at[i])))
            .collect();
        assert!(
            quiet_seen[i],
            "{}: no 4 s of IDs only within {:?} of the restoration (answers other than IDs \
             after it: {refused_at:?}); {}",
            s.what,
            RESUME_BOUND + quiet,
            s.server.stderr()
        );
        assert!(seen[i].requests_in(tail, ends[i]).sent > 50, "{}", s.what);
        assert!(
            seen[i]
                .timeline
                .iter()
                .all(|(t, st)| *t < tail || *st == 200),
            "{}: an answer other than IDs in the last 4 s (restored at {}, ended at {}; answers \
             other than IDs after the restoration: {refused_at:?}): {:?}; {}",
            s.what,
            ms(restored_at[i]),
            ms(ends[i]),
            seen[i].errors,
            s.server.stderr()
        );
    }
    for s in seen {
        let mut ids = s.ids;
        assert_unique(&mut ids);
    }
}

/// A bad link between servers and their stores: segment mode on MariaDB and a snowflake etcd
/// lease in one `serve`, a snowflake server on the MySQL registry (same MariaDB) in another.
#[test]
fn a_bad_link_to_mariadb_and_etcd_never_duplicates_and_recovers() {
    let net = Net::new();
    let store = net.host();
    let hd = net.impaired_host();
    let db = MariaDb::start_at(&store, &[]);
    let etcd = support::etcd::EtcdServer::cluster_at(&[&store]);
    let (_, url) = db.fresh_db_url();
    let sb = sandbox_with_cut_tag(&hd, &url);
    let mut c = db_cmd(&sb, &url, &["serve", "--segment", "--snowflake"]);
    c.args(["--etcd", &etcd.endpoints(), "--name", "bad"])
        .env("LEAF_ETCD_LEASE_TTL_MS", TTL_MS.to_string());
    let both = Server::start_at(&hd, c);
    let sb2 = Sandbox::new();
    let mut c = db_cmd(
        &sb2,
        &url,
        &["serve", "--snowflake", "--registry", "mysql", "--instance"],
    );
    c.arg(format!("{}:8080", hd.ip));
    let mysql = Server::start_at(&hd, c);
    bad_link(
        &hd,
        &[
            OnBadLink {
                what: "segment (MariaDB)",
                server: &both,
                path: SEG,
                codes: &["not_ready"],
            },
            OnBadLink {
                what: "snowflake (etcd lease)",
                server: &both,
                path: SNOW,
                codes: LEASE_REFUSALS,
            },
            OnBadLink {
                what: "snowflake (MySQL registry)",
                server: &mysql,
                path: SNOW,
                codes: LEASE_REFUSALS,
            },
        ],
        thirty_percent_loss_and_200_ms_for_20_s,
    );
    for s in [both, mysql] {
        s.stop_cleanly();
    }
}

/// A snowflake server on a ZooKeeper lease at `hd`, its ZooKeeper at `store`, under `fault`.
///
/// What these tests guard: the lease writes `reserved_until` with a version-checked `setData`.
/// When ZooKeeper applies a write but its answer is lost (the client gives the operation up after
/// 2/5 of the session timeout), the node's version moves on and the lease's does not. Before the
/// one lease protocol (src/worker/lease), every later renewal then failed with BADVERSION while
/// the session lived, so the server never issued a snowflake ID again. Now the record carries the
/// writer's session id (`holder`) and the protocol adopts a change that is its own write
/// (`Written::Changed { own: true }`), so the server issues again once the link is whole.
fn zookeeper_lease_on_a_bad_link(fault: impl FnOnce(&Host) -> String) {
    let net = Net::new();
    let store = net.host();
    let hd = net.impaired_host();
    let zk = ZkServer::start_at(&store, 2181);
    let sb = Sandbox::new();
    let mut c = sb.leafctl_std();
    c.args(["serve", "--snowflake", "--zk", &zk.hosts(), "--name", "bad"])
        .env("LEAF_ZK_SESSION_TIMEOUT_MS", SESSION_MS.to_string());
    let s = Server::start_at(&hd, c);
    bad_link(
        &hd,
        &[OnBadLink {
            what: "snowflake (ZooKeeper lease)",
            server: &s,
            path: SNOW,
            codes: LEASE_REFUSALS,
        }],
        fault,
    );
    s.stop_cleanly();
}

/// The bad link for a snowflake server on a ZooKeeper lease: no duplicate, and it issues again
/// after the heal (see [`zookeeper_lease_on_a_bad_link`]; the test below makes the lost answer
/// certain rather than likely).
#[test]
fn a_bad_link_to_zookeeper_leaves_a_leased_server_able_to_issue_again() {
    zookeeper_lease_on_a_bad_link(thirty_percent_loss_and_200_ms_for_20_s);
}

/// A one-way slow link, four times: the frames towards the server's host come later and later,
/// up to 1.8 s (longer than the client waits for an answer, 2/5 of the session timeout), for
/// 2.8 s, while what it sends arrives at once; then 3 s clean, so the client reconnects to the
/// same session. A renewal sent while the answers are 1.8 s late is applied by ZooKeeper and its
/// answer comes too late. Once the link is whole again, the server must issue again by itself.
#[test]
fn a_zookeeper_lease_renewal_whose_answer_comes_too_late_does_not_stop_the_server_for_good() {
    zookeeper_lease_on_a_bad_link(|hd| {
        // In steps, so the connection does not go silent at once; short, so the client reconnects
        // to the same session afterwards.
        for _ in 0..4 {
            for step in 1..=4 {
                hd.degrade_inbound(0, Duration::from_millis(450 * step));
                std::thread::sleep(Duration::from_millis(400));
            }
            std::thread::sleep(Duration::from_millis(1_200));
            hd.restore();
            std::thread::sleep(Duration::from_secs(3));
        }
        "4 times: the frames towards the server's host later and later, up to 1.8 s, for 2.8 s, \
         then 3 s clean"
            .into()
    });
}

/// The clients' host is cut off, not the server's: clients outside (another host) see
/// connection errors and no answer during the cut, a second client host goes on, and after the
/// heal the cut-off clients get IDs again, never one handed out before (segment and snowflake).
#[test]
fn clients_cut_off_from_their_server_see_connection_errors_and_never_an_id_twice() {
    let net = Net::new();
    let (hs, hc, hother) = (net.host(), net.host(), net.host());
    let sb = Sandbox::new();
    sb.run_ok(["tag", "add", "cut", "--step", "2000"]);
    let mut c = sb.leafctl_std();
    c.args(["serve", "--segment", "--snowflake", "--worker-id", "5"]);
    let s = Server::start_at(&hs, c);
    // The cut-off clients give up on an answer after 2 s: a request on its way at the cut would
    // otherwise wait (30 s) for TCP to resend it after the heal, and see no error.
    let impatient = |path| {
        let each = (2, 100, Duration::from_millis(10));
        Load::start_impatient_at(&hc, s.addr, path, each, LOAD_LIMIT, Duration::from_secs(2))
    };
    let loads = [
        impatient(SEG),
        impatient(SNOW),
        LOAD.from(&hother, s.addr, SEG),
        LOAD.from(&hother, s.addr, SNOW),
    ];
    for l in &loads {
        assert!(l.wait_for_answers(100, Duration::from_secs(30)));
    }
    std::thread::sleep(Duration::from_secs(1));

    // The cut is in force once `cut` returns (a busy machine may take a while to apply it):
    // the window of "no answer" starts there, not when it was asked for.
    hc.cut();
    let cut_at: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    std::thread::sleep(Duration::from_secs(8));
    let heal_at: Vec<Duration> = loads.iter().map(Load::elapsed).collect();
    hc.heal();
    for l in &loads[..2] {
        assert!(
            l.wait_for_ok_after(heal_at[0], RESUME_BOUND),
            "the cut-off clients got no ID after the heal"
        );
        assert!(l.wait_for_answers(100, Duration::from_secs(30)));
    }
    let seen: Vec<Seen> = loads.into_iter().map(Load::stop).collect();

    let resumed = seen[..2]
        .iter()
        .zip(&heal_at)
        .map(|(s, h)| s.first_ok_after(*h).unwrap() - *h)
        .max()
        .unwrap();
    eprintln!(
        "[partition] clients' host cut off: {} and {} requests failed (connection errors) on the \
         cut-off host, none on the other ({} and {} requests answered there during the cut); IDs again {} after \
         the heal",
        seen[0].failed,
        seen[1].failed,
        seen[2].requests_in(cut_at[2], heal_at[2]).sent,
        seen[3].requests_in(cut_at[3], heal_at[3]).sent,
        ms(resumed)
    );
    for (i, s) in seen.iter().enumerate() {
        assert!(
            s.statuses.keys().all(|&st| st == 200),
            "client {i}: {:?}",
            s.errors
        );
        if i < 2 {
            assert!(s.failed > 0, "the cut-off clients saw no error");
            // Nothing reaches a cut-off host (an answer on its way at the cut may arrive after
            // the heal, when TCP sends it again).
            let inside = s
                .timeline
                .iter()
                .filter(|(t, _)| *t > cut_at[i] + Duration::from_millis(100) && *t < heal_at[i])
                .count();
            assert_eq!(inside, 0, "client {i}: answers while cut off");
        } else {
            assert_eq!(s.failed, 0, "the other host's clients saw an error");
            assert!(s.requests_in(cut_at[i], heal_at[i]).sent > 100);
        }
    }
    assert!(resumed <= RESUME_BOUND);
    let mut segment: Vec<u64> = seen[0].ids.iter().chain(&seen[2].ids).copied().collect();
    assert_unique(&mut segment);
    let mut snowflake: Vec<u64> = seen[1].ids.iter().chain(&seen[3].ids).copied().collect();
    assert_unique(&mut snowflake);
    s.stop_cleanly();
}
