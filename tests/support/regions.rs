//! A deployment split into regions (issue 37) on private networks of namespaces
//! ([`super::netns`]): each region a net of its own (a switch and its hosts) with its own
//! database (MariaDB in even regions, PostgreSQL in odd ones), its own worker registry
//! (ZooKeeper in even regions, etcd in odd ones) and two `leafctl serve --segment --snowflake`;
//! the regions joined by a WAN router whose link to each region can be delayed (a WAN delay
//! between regions, none within one) and cut (a region partition: nothing passes between the
//! region and the others, both ways, while everything inside each region still flows).
//!
//! [`Deployment::start`] builds it, with `--region r --regions N` given to every leafctl of
//! region r, or without region flags (the negative control: N independent Leaf deployments that
//! must collide). [`Collected`] gathers every ID of every region and [`Collected::check`] reads
//! them: IDs twice (per kind, across all regions), snowflake IDs whose worker field lies outside
//! their region's slice, segment IDs outside their region's block.
//!
//! Every process (database, registry, server) is stopped by its own handle when the deployment
//! is dropped, and the namespaces go with the nets, also while a panic unwinds.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use leafctl::region::Region;

use super::etcd::EtcdServer;
use super::fault::{Load, Seen};
use super::mariadb::{MariaDb, PASSWORD};
use super::netns::{Host, Net, Place, Uplink};
use super::postgres::Postgres;
use super::serve::Server;
use super::snowflake::worker_of;
use super::zookeeper::ZkServer;
use super::{Sandbox, stderr};

/// Leaf's worker field width: region slices are cut from it.
pub const WORKER_BITS: u32 = 10;
/// The WAN delay between two regions, one way (each region's link to the router adds half).
pub const WAN_DELAY: Duration = Duration::from_millis(50);
/// Segment steps of the tags: small, so each server claims many segments in a run.
pub const STEP: &str = "200";

/// A region's database.
pub enum Db {
    Maria(MariaDb),
    Pg(Postgres),
}

impl Db {
    pub fn kind(&self) -> &'static str {
        match self {
            Db::Maria(_) => "MariaDB",
            Db::Pg(_) => "PostgreSQL",
        }
    }

    /// Where it listens (host:port), for reachability probes.
    pub fn addr(&self) -> SocketAddr {
        match self {
            Db::Maria(m) => m.place.addr(m.port),
            Db::Pg(p) => p.place.addr(p.port),
        }
    }

    /// SIGSTOP.
    pub fn pause(&self) {
        match self {
            Db::Maria(m) => m.pause(),
            Db::Pg(p) => p.pause(),
        }
    }

    /// SIGCONT.
    pub fn resume(&self) {
        match self {
            Db::Maria(m) => m.resume(),
            Db::Pg(p) => p.resume(),
        }
    }

    /// SIGKILL, like a crash; waits until it is gone.
    pub fn kill(&self) {
        match self {
            Db::Maria(m) => m.kill(),
            Db::Pg(p) => p.kill(),
        }
    }

    /// Starts it again on its data directory and port (after crash recovery).
    pub fn restart(&self) {
        match self {
            Db::Maria(m) => m.restart(),
            Db::Pg(p) => p.restart(),
        }
    }
}

/// A region's worker registry.
pub enum Registry {
    Zk(ZkServer),
    Etcd(EtcdServer),
}

impl Registry {
    pub fn kind(&self) -> &'static str {
        match self {
            Registry::Zk(_) => "ZooKeeper",
            Registry::Etcd(_) => "etcd",
        }
    }

    /// SIGSTOP.
    pub fn pause(&self) {
        match self {
            Registry::Zk(z) => z.pause(),
            Registry::Etcd(e) => e.members[0].pause(),
        }
    }

    /// SIGCONT.
    pub fn resume(&self) {
        match self {
            Registry::Zk(z) => z.resume(),
            Registry::Etcd(e) => e.members[0].resume(),
        }
    }

    /// Whether [`Registry::kill`] and [`Registry::restart`] apply (ZooKeeper; the tests' etcd
    /// helper does not restart members).
    pub fn restarts(&self) -> bool {
        matches!(self, Registry::Zk(_))
    }

    /// SIGKILL (ZooKeeper only).
    pub fn kill(&self) {
        match self {
            Registry::Zk(z) => z.kill(),
            Registry::Etcd(_) => panic!("the etcd helper does not restart members"),
        }
    }

    /// Starts it again on its data and port (ZooKeeper only).
    pub fn restart(&self) {
        match self {
            Registry::Zk(z) => z.restart(),
            Registry::Etcd(_) => panic!("the etcd helper does not restart members"),
        }
    }

    /// `serve`'s flags for it.
    pub fn args(&self) -> Vec<String> {
        match self {
            Registry::Zk(z) => vec!["--zk".into(), z.hosts()],
            Registry::Etcd(e) => vec!["--etcd".into(), e.endpoints()],
        }
    }
}

/// The two kinds of ID every server issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Segment,
    Snowflake,
}

impl Kind {
    pub const BOTH: [Kind; 2] = [Kind::Segment, Kind::Snowflake];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Segment => "segment",
            Kind::Snowflake => "snowflake",
        }
    }

    /// The HTTP path of this kind for `key` (a tag, or a snowflake key).
    pub fn path(self, key: &str) -> String {
        match self {
            Kind::Segment => segment_path(key),
            Kind::Snowflake => snowflake_path(key),
        }
    }
}

/// One region: its net, its link to the WAN, its stores and its servers.
pub struct Site {
    /// The region's number.
    pub index: u32,
    pub db_host: Host,
    pub registry_host: Host,
    pub serve_hosts: Vec<Host>,
    pub db: Db,
    pub db_url: String,
    pub registry: Registry,
    /// The region's leafctl home (its `tag` commands).
    pub sandbox: Sandbox,
    /// Its servers (empty until [`Deployment::serve`]), each with its own home.
    pub servers: Vec<(Server, Sandbox)>,
    /// `--region r --regions N`, or nothing for the negative control.
    region_args: Vec<String>,
    /// Its link to the WAN router and its net: last, so they go after every process in them.
    pub uplink: Uplink,
    pub net: Net,
}

impl Site {
    /// `leafctl` with this region's database and region flags (run it with [`Site::run`]).
    pub fn leafctl(&self, home: &Sandbox) -> Command {
        let mut c = home.leafctl_std();
        c.env("LEAF_DB", &self.db_url)
            .env("LEAF_DB_PASSWORD", PASSWORD)
            .args(&self.region_args);
        c
    }

    /// Runs `leafctl ARGS` on the region's database host; panics with its stderr unless it
    /// succeeds. Returns its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let mut c = self.leafctl(&self.sandbox);
        c.args(args);
        let out = self.db_host.wrap(&c).output().expect("run leafctl");
        assert!(
            out.status.success(),
            "region {}: leafctl {} {args:?}: {}",
            self.index,
            self.region_args.join(" "),
            stderr(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `--region r --regions N` (empty for the negative control).
    pub fn region_args(&self) -> &[String] {
        &self.region_args
    }
}

/// R regions joined by a WAN.
pub struct Deployment {
    /// Whether every leafctl was given its region.
    pub with_regions: bool,
    /// Whether the regions were split by hand instead ([`Deployment::by_hand`]).
    pub by_hand: bool,
    pub count: u32,
    /// The regions (dropped before the WAN: servers first, then stores, then the nets).
    pub sites: Vec<Site>,
    /// The WAN router's net (its switch namespace routes between the regions).
    wan: Net,
}

impl Deployment {
    /// Builds `count` regions (each: a net, a database host, a registry host and two serve
    /// hosts), links them to a WAN router (no delay yet), and starts each region's database and
    /// registry. `with_regions`: whether every leafctl of region r gets `--region r --regions N`.
    pub fn start(count: u32, with_regions: bool) -> Deployment {
        Deployment::start_with(count, with_regions, false)
    }

    /// [`Deployment::start`], with the serve hosts linked through this process when `impaired`
    /// ([`Net::impaired_host`]: their links can be made lossy or slow).
    pub fn start_with(count: u32, with_regions: bool, impaired: bool) -> Deployment {
        assert!((2..=8).contains(&count), "2 to 8 regions");
        let wan = Net::new();
        let nets: Vec<(Net, Uplink)> = (0..count)
            .map(|_| {
                let net = Net::new();
                let uplink = wan.wan_link(&net);
                (net, uplink)
            })
            .collect();
        let sites = std::thread::scope(|s| {
            let handles: Vec<_> = nets
                .into_iter()
                .enumerate()
                .map(|(r, (net, uplink))| {
                    s.spawn(move || {
                        Site::start(r as u32, count, with_regions, impaired, net, uplink)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        Deployment {
            with_regions,
            by_hand: false,
            count,
            sites,
            wan,
        }
    }

    /// The positive control: regions split by hand, without region flags, by the rules of
    /// [`Region`]: [`Deployment::add_tags`] starts each tag at its region's block (`tag add
    /// --start`, 1 in region 0) and [`Deployment::serve`] gives server `i` of region `r` the
    /// worker id `slice.start + i` of its region's slice (`--worker-id`, the local registry,
    /// instead of the region's registry). What the region flags must do, done by hand: the same
    /// reading must find nothing.
    pub fn by_hand(count: u32) -> Deployment {
        let mut d = Deployment::start_with(count, false, false);
        d.by_hand = true;
        d
    }

    /// Sets the WAN delay between every two regions to `one_way` (half on each region's link).
    pub fn wan_delay(&self, one_way: Duration) {
        for s in &self.sites {
            s.uplink.delay(one_way / 2);
        }
    }

    /// Cuts region `r` off from every other region, both ways.
    pub fn cut(&self, r: usize) {
        self.sites[r].uplink.cut();
    }

    /// Reconnects region `r`.
    pub fn heal(&self, r: usize) {
        self.sites[r].uplink.heal();
    }

    /// Cuts every region off from every other.
    pub fn cut_all(&self) {
        for r in 0..self.sites.len() {
            self.cut(r);
        }
    }

    /// Reconnects every region.
    pub fn heal_all(&self) {
        for r in 0..self.sites.len() {
            self.heal(r);
        }
    }

    /// Adds `tags` (step [`STEP`]) in every region: `db init`, then `tag add` for each, with
    /// the region's flags.
    pub fn add_tags(&self, tags: &[&str]) {
        for s in &self.sites {
            s.run(&["db", "init"]);
            let start = self.region(s).segment_block().start.max(1).to_string();
            for t in tags {
                if self.by_hand {
                    s.run(&["tag", "add", t, "--step", STEP, "--start", &start]);
                } else {
                    s.run(&["tag", "add", t, "--step", STEP]);
                }
            }
        }
    }

    /// Starts two `serve --segment --snowflake` in every region (each on a host of its own,
    /// with the region's database and registry, its own `--instance`, and the region's flags);
    /// waits until each answers both kinds for `tag`. Returns the IDs of those first answers
    /// (to be checked with the rest).
    pub fn serve(&mut self, tag: &str) -> Vec<Issued> {
        let mut first = Vec::new();
        let (count, by_hand) = (self.count, self.by_hand);
        for s in &mut self.sites {
            let slice = Region::new(s.index, count)
                .expect("a region")
                .worker_slice(WORKER_BITS)
                .expect("a slice");
            for (i, h) in s.serve_hosts.iter().enumerate() {
                let home = Sandbox::new();
                let mut c = s.leafctl(&home);
                c.args(["serve", "--segment", "--snowflake"]);
                if by_hand {
                    c.args(["--worker-id", &(slice.start + i as u64).to_string()]);
                } else {
                    c.args(s.registry.args());
                }
                c.args(["--instance", &format!("{}:8080", h.ip)]);
                let server = Server::start_at(h, c);
                for kind in Kind::BOTH {
                    let path = kind.path(tag);
                    let r = server.get(&path);
                    assert_eq!(
                        r.status,
                        200,
                        "region {} server at {}: {path}: {r:?}; {}",
                        s.index,
                        h.ip,
                        server.stderr()
                    );
                    first.push(Issued {
                        region: s.index,
                        server: i,
                        kind,
                        tag: tag.to_string(),
                        seen: Seen {
                            ids: vec![r.id()],
                            ..Seen::default()
                        },
                    });
                }
                s.servers.push((server, home));
            }
        }
        first
    }

    /// The region of `site`.
    pub fn region(&self, site: &Site) -> Region {
        Region::new(site.index, self.count).expect("a region")
    }

    /// Every server with its region and host: (region, server index in the region, server).
    pub fn servers(&self) -> Vec<(u32, usize, &Server)> {
        self.sites
            .iter()
            .flat_map(|s| {
                s.servers
                    .iter()
                    .enumerate()
                    .map(move |(i, (srv, _))| (s.index, i, srv))
            })
            .collect()
    }

    /// Whether a TCP connection from region `from`'s first serve host to region `to`'s database
    /// is made within `limit`, and how long it took.
    pub fn probe(&self, from: usize, to: usize, limit: Duration) -> Result<Duration, String> {
        let addr = self.sites[to].db.addr();
        let place: &Place = &self.sites[from].serve_hosts[0];
        place.within(|| {
            let t = Instant::now();
            TcpStream::connect_timeout(&addr, limit)
                .map(|_| t.elapsed())
                .map_err(|e| format!("region {from} to region {to}'s database at {addr}: {e}"))
        })
    }

    /// A one-line description: each region's stores and servers.
    pub fn describe(&self) -> String {
        self.sites
            .iter()
            .map(|s| {
                format!(
                    "region {} (198.18.{}.0/24): {} + {}, {} serve",
                    s.index,
                    s.net.subnet(),
                    s.db.kind(),
                    s.registry.kind(),
                    s.servers.len()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        // Servers before their stores: each stopped by its own handle.
        for s in &mut self.sites {
            for (mut server, _) in s.servers.drain(..) {
                server.kill();
            }
        }
    }
}

impl Site {
    fn start(
        index: u32,
        count: u32,
        with_regions: bool,
        impaired: bool,
        net: Net,
        uplink: Uplink,
    ) -> Site {
        let db_host = net.host();
        let registry_host = net.host();
        let serve_host = || {
            if impaired {
                net.impaired_host()
            } else {
                net.host()
            }
        };
        let serve_hosts = vec![serve_host(), serve_host()];
        for h in [&db_host, &registry_host].into_iter().chain(&serve_hosts) {
            h.route_wan(net.gateway());
        }
        let (db, db_url) = if index.is_multiple_of(2) {
            let m = MariaDb::start_at(&db_host, &[]);
            let url = m.url(&m.fresh_db());
            (Db::Maria(m), url)
        } else {
            let p = Postgres::start_at(&db_host);
            let url = p.url(&p.fresh_db());
            (Db::Pg(p), url)
        };
        let registry = if index.is_multiple_of(2) {
            Registry::Zk(ZkServer::start_at(&registry_host, 2181))
        } else {
            Registry::Etcd(EtcdServer::cluster_at(&[&registry_host]))
        };
        let region_args = if with_regions {
            vec![
                "--region".into(),
                index.to_string(),
                "--regions".into(),
                count.to_string(),
            ]
        } else {
            Vec::new()
        };
        Site {
            index,
            net,
            uplink,
            db_host,
            registry_host,
            serve_hosts,
            db,
            db_url,
            registry,
            sandbox: Sandbox::new(),
            servers: Vec::new(),
            region_args,
        }
    }
}

pub fn segment_path(tag: &str) -> String {
    format!("/api/segment/get/{tag}")
}

pub fn snowflake_path(key: &str) -> String {
    format!("/api/snowflake/get/{key}")
}

/// Steady load on every server of a deployment, both kinds: one client thread per server and
/// kind, in the server's namespace (its own region: no client crosses the WAN), a request every
/// `pause` (every 10th a batch of 20), each thread bounded by `limit` and `max_requests`.
pub struct Loads {
    /// (region, server in the region, kind, tag, load).
    loads: Vec<(u32, usize, Kind, String, Load)>,
}

impl Loads {
    /// Server `i` of each region asks for `tags[i % tags.len()]` (both kinds).
    pub fn start(
        d: &Deployment,
        tags: &[&str],
        pause: Duration,
        limit: Duration,
        max_requests: u64,
    ) -> Loads {
        let mut loads = Vec::new();
        for (r, i, server) in d.servers() {
            let tag = tags[i % tags.len()];
            for kind in Kind::BOTH {
                let path = kind.path(tag);
                let load = Load::start_bounded_at(
                    server.place(),
                    server.addr,
                    &path,
                    1,
                    20,
                    pause,
                    limit,
                    max_requests,
                );
                loads.push((r, i, kind, tag.to_string(), load));
            }
        }
        Loads { loads }
    }

    /// Waits (at most `limit`) until every loop has had `n` more answers.
    pub fn wait_for_answers(&self, n: u64, limit: Duration) -> bool {
        let targets: Vec<u64> = self.loads.iter().map(|(.., l)| l.answers() + n).collect();
        super::wait_until(limit, || {
            self.loads
                .iter()
                .zip(&targets)
                .all(|((.., l), &t)| l.answers() >= t)
        })
    }

    /// Now, on each loop's own clock (in the order of [`Loads::stop`]'s result), to mark the
    /// start and end of a fault.
    pub fn marks(&self) -> Vec<Duration> {
        self.loads.iter().map(|(.., l)| l.elapsed()).collect()
    }

    /// Stops every loop: what each saw, with its region, server and kind.
    pub fn stop(self) -> Vec<Issued> {
        self.loads
            .into_iter()
            .map(|(region, server, kind, tag, l)| Issued {
                region,
                server,
                kind,
                tag,
                seen: l.stop(),
            })
            .collect()
    }
}

/// What one loop (one server, one kind) saw.
pub struct Issued {
    pub region: u32,
    pub server: usize,
    pub kind: Kind,
    /// The tag (segment) or key (snowflake) asked for: segment IDs are unique per tag.
    pub tag: String,
    pub seen: Seen,
}

impl Issued {
    /// IDs answered within `[from, to)` of this loop's clock ([`Loads::marks`]).
    pub fn ok_in(&self, from: Duration, to: Duration) -> usize {
        let r = self.seen.requests_in(from, to);
        r.sent - r.failed
    }

    pub fn what(&self) -> String {
        format!(
            "region {} server {} {}",
            self.region,
            self.server,
            self.kind.name()
        )
    }
}

/// Every ID of every region, and what reading them found.
#[derive(Debug, Default)]
pub struct Findings {
    /// IDs collected per kind (all regions).
    pub ids: BTreeMap<&'static str, usize>,
    /// Per kind: how many IDs were issued more than once (each extra copy counted once).
    pub twice: BTreeMap<&'static str, usize>,
    /// Snowflake IDs whose worker field lies outside their region's slice.
    pub outside_slice: usize,
    /// Segment IDs outside their region's block.
    pub outside_block: usize,
    /// Worker ids used by more than one region.
    pub shared_workers: Vec<u64>,
    /// A few examples of each problem.
    pub examples: Vec<String>,
    /// Per region and kind: IDs collected.
    pub per_region: BTreeMap<(u32, &'static str), usize>,
}

impl Findings {
    pub fn clean(&self) -> bool {
        self.twice.values().all(|&n| n == 0)
            && self.outside_slice == 0
            && self.outside_block == 0
            && self.shared_workers.is_empty()
    }

    pub fn total_twice(&self) -> usize {
        self.twice.values().sum()
    }
}

/// Reads every ID of `issued` (regions of `count`): duplicates per kind across all regions, and
/// each ID against its own region's slice or block.
pub fn check(issued: &[Issued], count: u32) -> Findings {
    let mut f = Findings::default();
    // Segment IDs are unique per tag; snowflake IDs across every key.
    let mut first: HashMap<(Kind, &str, u64), (u32, usize)> = HashMap::new();
    let mut workers: BTreeMap<u64, std::collections::BTreeSet<u32>> = BTreeMap::new();
    for i in issued {
        let region = Region::new(i.region, count).expect("a region");
        let slice = region.worker_slice(WORKER_BITS).expect("a slice");
        let block = region.segment_block();
        *f.ids.entry(i.kind.name()).or_default() += i.seen.ids.len();
        *f.per_region.entry((i.region, i.kind.name())).or_default() += i.seen.ids.len();
        f.twice.entry(i.kind.name()).or_default();
        let scope = match i.kind {
            Kind::Segment => i.tag.as_str(),
            Kind::Snowflake => "",
        };
        for &id in &i.seen.ids {
            if let Some(&(r0, s0)) = first.get(&(i.kind, scope, id)) {
                *f.twice.get_mut(i.kind.name()).unwrap() += 1;
                if f.examples.len() < 12 {
                    f.examples.push(format!(
                        "{} ID {id} ({}) issued twice: by region {r0} server {s0} and by region \
                         {} server {}",
                        i.kind.name(),
                        i.tag,
                        i.region,
                        i.server
                    ));
                }
            } else {
                first.insert((i.kind, scope, id), (i.region, i.server));
            }
            match i.kind {
                Kind::Snowflake => {
                    let w = worker_of(id);
                    workers.entry(w).or_default().insert(i.region);
                    if !slice.contains(&w) {
                        f.outside_slice += 1;
                        if f.examples.len() < 12 {
                            f.examples.push(format!(
                                "snowflake ID {id} of region {} has worker {w}, outside its \
                                 slice {slice:?}",
                                i.region
                            ));
                        }
                    }
                }
                Kind::Segment => {
                    if !block.contains(&(id as i64)) {
                        f.outside_block += 1;
                        if f.examples.len() < 12 {
                            f.examples.push(format!(
                                "segment ID {id} of region {} is outside its block {block:?}",
                                i.region
                            ));
                        }
                    }
                }
            }
        }
    }
    f.shared_workers = workers
        .into_iter()
        .filter(|(_, regions)| regions.len() > 1)
        .map(|(w, _)| w)
        .collect();
    f
}
