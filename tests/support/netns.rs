//! Private networks of Linux network namespaces, for partition tests (needs root and iproute2).
//!
//! A [`Net`] is a switch (a bridge in a namespace of its own) and hosts, each a namespace with
//! one link to the switch and an address in 198.18.0.0/15 (RFC 2544's benchmarking range, never
//! routed). Nothing is added to the machine's own namespace: the links are created directly in
//! their namespaces, so interface names only have to be unique inside one switch, and the only
//! global names are the namespaces' (`lfnet-PID-N-...`, unique per process and per net). Dropping
//! the net (also while a panic unwinds) deletes every namespace, and with them their links;
//! a new net first deletes the namespaces of test processes that no longer run (a crashed run).
//! Two nets never meet, so their subnets may coincide across test processes.
//!
//! A process runs on a host through `ip netns exec` ([`Place::wrap`]), and a thread of the test
//! (a client) joins a host's namespace with `setns` ([`Place::within`], [`Place::enter`]), so a
//! server's own clients use its namespace's loopback and still reach it when its link is cut.
//! [`Place::local`] is the machine's loopback, what the tests used before there were nets.
//!
//! [`Host::cut`] sets the switch's end of the host's link down (the host keeps its address and
//! sees no carrier: packets vanish, connections hang until their timeouts, as behind a dead
//! switch port); [`Host::heal`] sets it up again. A host made with [`Net::impaired_host`] is
//! linked through a TAP pair whose frames this process forwards, dropping and delaying them on
//! request ([`Host::degrade`]): netem's loss and delay, in user space, because a kernel without
//! `sch_netem` (like this project's CI VMs) has no `tc ... netem`.
//!
//! Nets can be joined into a wide-area network ([`Net::wan_link`]): a router (the switch
//! namespace of a net of its own) with one link to each net's switch, each link running through
//! this process like an impaired host's, so a WAN delay ([`Uplink::delay`]) applies only to
//! traffic between nets (none within one), and [`Uplink::cut`] drops every frame between one net
//! and all the others, both ways, while everything inside each net still flows.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const PREFIX: &str = "lfnet-";

/// Where a process runs and listens: a namespace (or the machine's own) and its address.
#[derive(Clone, Debug)]
pub struct Place {
    /// The network namespace (`ip netns` name); `None` for the machine's own.
    pub ns: Option<String>,
    /// The address services bind to there.
    pub ip: IpAddr,
}

impl Place {
    /// The machine's loopback: 127.0.0.1 in the test's own namespace.
    pub fn local() -> Place {
        Place {
            ns: None,
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        }
    }

    /// `ip:port`.
    pub fn addr(&self, port: u16) -> SocketAddr {
        SocketAddr::new(self.ip, port)
    }

    /// `ip:port` as text (for connect strings and URLs).
    pub fn hostport(&self, port: u16) -> String {
        self.addr(port).to_string()
    }

    /// A command running `program` here.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        match &self.ns {
            None => Command::new(program),
            Some(ns) => {
                let mut c = Command::new(ip_tool());
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
        }
    }

    /// `cmd` (program, arguments, environment, directory) run here instead.
    pub fn wrap(&self, cmd: &Command) -> Command {
        let mut c = self.command(cmd.get_program());
        c.args(cmd.get_args());
        super::copy_env(cmd, &mut c);
        c
    }

    /// Moves the calling thread into this namespace (for a thread of its own, e.g. a client
    /// loop: it stays there). Nothing to do for [`Place::local`].
    pub fn enter(&self) {
        if let Some(ns) = &self.ns {
            enter_ns(ns);
        }
    }

    /// Runs `f` in this namespace (on a thread of its own when that is not the test's).
    pub fn within<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        match &self.ns {
            None => f(),
            Some(ns) => std::thread::scope(|s| {
                s.spawn(|| {
                    enter_ns(ns);
                    f()
                })
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
            }),
        }
    }

    /// True when something here accepts TCP connections on `port` of this place's address.
    pub fn listening(&self, port: u16) -> bool {
        let addr = self.addr(port);
        self.within(|| TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok())
    }
}

/// Moves the calling thread into the named network namespace.
fn enter_ns(ns: &str) {
    let path = Path::new("/run/netns").join(ns);
    let f = File::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    // SAFETY: setns(2) on a namespace file descriptor this thread owns; only the calling
    // thread's network namespace changes.
    let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(
        rc,
        0,
        "setns into {ns}: {}",
        std::io::Error::last_os_error()
    );
}

/// iproute2's `ip`.
pub fn ip_tool() -> PathBuf {
    ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect(
            "iproute2's `ip` is missing: the network-partition tests need it \
             (apt-get install iproute2; scripts/test installs it)",
        )
}

/// Runs `ip ARGS`, panicking with its stderr when it fails.
fn ip(args: &[&str]) {
    super::run_ok(Command::new(ip_tool()).args(args).stdin(Stdio::null()));
}

/// Deletes a namespace name (best effort: used on cleanup).
fn delete_ns(ns: &str) {
    let _ = Command::new(ip_tool())
        .args(["netns", "delete", ns])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Deletes the namespaces left by test processes that are gone (a run killed before its nets
/// were dropped).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            delete_ns(&name);
        }
    }
}

/// Fails loudly unless this process may build networks (root, iproute2, `ip netns`).
fn preflight() {
    // SAFETY: geteuid(2) has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "the network-partition tests need root (they create network namespaces, veth pairs \
         and a bridge with `ip netns`); run them as root, as scripts/test does in CI"
    );
    let _ = ip_tool();
}

/// One private network: a switch and the hosts on it. Everything goes when it is dropped.
pub struct Net {
    name: String,
    switch: String,
    subnet: u8,
    namespaces: Mutex<Vec<String>>,
    hosts: AtomicU32,
    relays: Mutex<Vec<Relay>>,
}

impl Net {
    /// An empty network (a bridge in a namespace of its own).
    pub fn new() -> Net {
        preflight();
        sweep_stale();
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let n = COUNT.fetch_add(1, Ordering::SeqCst);
        let name = format!("{PREFIX}{}-{n}", std::process::id());
        let switch = format!("{name}-sw");
        let net = Net {
            name,
            switch: switch.clone(),
            subnet: (n % 256) as u8,
            namespaces: Mutex::new(Vec::new()),
            hosts: AtomicU32::new(0),
            relays: Mutex::new(Vec::new()),
        };
        net.add_ns(&switch);
        ip(&["-n", &switch, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &switch, "link", "set", "br0", "up"]);
        net
    }

    /// Creates a namespace (replacing a stale one of the same name) and records it for the drop.
    fn add_ns(&self, ns: &str) {
        if Path::new("/run/netns").join(ns).exists() {
            delete_ns(ns);
        }
        let out = Command::new(ip_tool())
            .args(["netns", "add", ns])
            .stdin(Stdio::null())
            .output()
            .expect("run ip netns add");
        assert!(
            out.status.success(),
            "`ip netns add {ns}` failed ({}): the network-partition tests need root and a \
             kernel with network namespaces",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        self.namespaces.lock().unwrap().push(ns.to_string());
        ip(&["-n", ns, "link", "set", "lo", "up"]);
    }

    fn next_host(&self) -> (String, String, Ipv4Addr) {
        let k = self.hosts.fetch_add(1, Ordering::SeqCst);
        assert!(k < 250, "too many hosts on one net");
        let ns = format!("{}-h{k}", self.name);
        self.add_ns(&ns);
        (
            ns,
            format!("p{k}"),
            Ipv4Addr::new(198, 18, self.subnet, k as u8 + 1),
        )
    }

    /// Addresses the host's end of its link and brings both ends up.
    fn finish_host(&self, ns: String, port: String, ip4: Ipv4Addr) -> Place {
        ip(&["-n", &self.switch, "link", "set", &port, "master", "br0"]);
        ip(&["-n", &self.switch, "link", "set", &port, "up"]);
        ip(&[
            "-n",
            &ns,
            "addr",
            "add",
            &format!("{ip4}/24"),
            "dev",
            "eth0",
        ]);
        ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        Place {
            ns: Some(ns),
            ip: IpAddr::V4(ip4),
        }
    }

    /// A new host: a namespace linked to the switch by a veth pair.
    pub fn host(&self) -> Host {
        let (ns, port, ip4) = self.next_host();
        ip(&[
            "link",
            "add",
            "eth0",
            "netns",
            &ns,
            "type",
            "veth",
            "peer",
            "name",
            &port,
            "netns",
            &self.switch,
        ]);
        let place = self.finish_host(ns, port.clone(), ip4);
        Host {
            place,
            port,
            switch: self.switch.clone(),
            impairment: None,
        }
    }

    /// The third octet of this net's addresses (198.18.S.0/24).
    pub fn subnet(&self) -> u8 {
        self.subnet
    }

    /// The address a router of a WAN has on this net ([`Net::wan_link`]): 198.18.S.254.
    pub fn gateway(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, self.subnet, 254)
    }

    /// Makes this net's switch namespace a router and links it to `other`'s switch through this
    /// process (a TAP device at each end, frames forwarded by two threads, as
    /// [`Net::impaired_host`]'s link): the router gets `other`'s [`Net::gateway`] address, and
    /// forwards between every net linked so. Hosts of `other` reach the other nets once they
    /// route through the gateway ([`Host::route_wan`]). The link starts without delay or loss.
    pub fn wan_link(&self, other: &Net) -> Uplink {
        static LINKS: AtomicU32 = AtomicU32::new(0);
        let k = LINKS.fetch_add(1, Ordering::SeqCst);
        let router_if = format!("wan{k}");
        let inner = Arc::new(open_tap(&self.switch, &router_if));
        let outer = Arc::new(open_tap(&other.switch, "up0"));
        let control = Arc::new(Impairment::default());
        let relay = Relay::start(inner, outer, control.clone());
        self.relays.lock().unwrap().push(relay);
        ip(&["-n", &other.switch, "link", "set", "up0", "master", "br0"]);
        ip(&["-n", &other.switch, "link", "set", "up0", "up"]);
        ip(&[
            "-n",
            &self.switch,
            "addr",
            "add",
            &format!("{}/24", other.gateway()),
            "dev",
            &router_if,
        ]);
        ip(&["-n", &self.switch, "link", "set", &router_if, "up"]);
        super::run_ok(
            Command::new(ip_tool())
                .args(["netns", "exec", &self.switch, "sysctl", "-qw"])
                .arg("net.ipv4.ip_forward=1")
                .stdin(Stdio::null()),
        );
        Uplink {
            control,
            delay: Mutex::new(Duration::ZERO),
            cut: AtomicBool::new(false),
        }
    }

    /// A new host whose link runs through this process (a TAP device at each end and two
    /// threads forwarding frames), so it can be degraded with [`Host::degrade`].
    pub fn impaired_host(&self) -> Host {
        let (ns, port, ip4) = self.next_host();
        let inner = Arc::new(open_tap(&ns, "eth0"));
        let outer = Arc::new(open_tap(&self.switch, &port));
        let control = Arc::new(Impairment::default());
        let relay = Relay::start(inner, outer, control.clone());
        self.relays.lock().unwrap().push(relay);
        let place = self.finish_host(ns, port.clone(), ip4);
        Host {
            place,
            port,
            switch: self.switch.clone(),
            impairment: Some(control),
        }
    }
}

impl Default for Net {
    fn default() -> Net {
        Net::new()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for r in self
            .relays
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            r.stop();
        }
        let names = std::mem::take(&mut *self.namespaces.lock().unwrap_or_else(|p| p.into_inner()));
        for ns in names.iter().rev() {
            delete_ns(ns);
        }
    }
}

/// One host of a [`Net`]: a [`Place`] (it derefs to one) and its link to the switch.
#[derive(Clone)]
pub struct Host {
    pub place: Place,
    /// The switch's end of the link (an interface in the switch's namespace).
    port: String,
    switch: String,
    impairment: Option<Arc<Impairment>>,
}

impl std::ops::Deref for Host {
    type Target = Place;
    fn deref(&self) -> &Place {
        &self.place
    }
}

impl Host {
    /// The host's namespace.
    pub fn ns(&self) -> &str {
        self.place.ns.as_deref().expect("a host has a namespace")
    }

    /// Cuts the host off: the switch's end of its link goes down.
    pub fn cut(&self) {
        ip(&["-n", &self.switch, "link", "set", &self.port, "down"]);
    }

    /// Reconnects the host.
    pub fn heal(&self) {
        ip(&["-n", &self.switch, "link", "set", &self.port, "up"]);
    }

    /// Routes the whole test range (198.18.0.0/15) through `gateway`, a WAN router's address on
    /// this host's net ([`Net::gateway`]), so the host reaches the hosts of the other nets.
    pub fn route_wan(&self, gateway: Ipv4Addr) {
        ip(&[
            "-n",
            self.ns(),
            "route",
            "add",
            "198.18.0.0/15",
            "via",
            &gateway.to_string(),
        ]);
    }

    /// Drops `loss_percent` of the frames in each direction at random and delays the others by
    /// `delay` (each way), like `tc qdisc add ... netem loss L% delay D` at both ends of the link.
    pub fn degrade(&self, loss_percent: u32, delay: Duration) {
        self.degrade_way(OUTBOUND, loss_percent, delay);
        self.degrade_way(INBOUND, loss_percent, delay);
    }

    /// The same for the frames towards the host only (what it sends passes): a one-way fault.
    pub fn degrade_inbound(&self, loss_percent: u32, delay: Duration) {
        self.degrade_way(INBOUND, loss_percent, delay);
    }

    fn degrade_way(&self, way: usize, loss_percent: u32, delay: Duration) {
        let c = self
            .impairment
            .as_ref()
            .expect("degrade needs a host made by Net::impaired_host");
        c.ways[way]
            .loss_ppm
            .store(loss_percent.min(100) * 10_000, Ordering::SeqCst);
        c.ways[way]
            .delay_us
            .store(delay.as_micros() as u64, Ordering::SeqCst);
    }

    /// Ends [`Host::degrade`]: every frame passes at once again, both ways.
    pub fn restore(&self) {
        self.degrade(0, Duration::ZERO);
    }

    /// (frames forwarded, frames dropped) by the impaired link so far.
    pub fn link_counts(&self) -> (u64, u64) {
        let c = self.impairment.as_ref().expect("an impaired host");
        (
            c.forwarded.load(Ordering::SeqCst),
            c.dropped.load(Ordering::SeqCst),
        )
    }
}

/// One net's link to a WAN router ([`Net::wan_link`]): every frame between the net and the
/// other nets passes it, and nothing else.
pub struct Uplink {
    control: Arc<Impairment>,
    delay: Mutex<Duration>,
    cut: AtomicBool,
}

impl Uplink {
    /// Delays every frame by `each_way` in each direction (what `tc qdisc add ... netem delay`
    /// on both ends would do): between two nets so linked a packet takes `2 * each_way` one way.
    /// Kept through cuts and heals.
    pub fn delay(&self, each_way: Duration) {
        *self.delay.lock().unwrap() = each_way;
        self.apply();
    }

    /// Cuts the net off from every other net, both ways: every frame on the link is dropped (a
    /// black hole: no refusal, connections hang until their timeouts).
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.apply();
    }

    /// Ends [`Uplink::cut`]: frames pass again, with the delay set.
    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
        self.apply();
    }

    /// Whether the link is cut now.
    pub fn is_cut(&self) -> bool {
        self.cut.load(Ordering::SeqCst)
    }

    /// (frames forwarded, frames dropped) by the link so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.control.forwarded.load(Ordering::SeqCst),
            self.control.dropped.load(Ordering::SeqCst),
        )
    }

    fn apply(&self) {
        let delay = *self.delay.lock().unwrap();
        let loss_ppm = if self.is_cut() { 1_000_000 } else { 0 };
        for way in &self.control.ways {
            way.loss_ppm.store(loss_ppm, Ordering::SeqCst);
            way.delay_us
                .store(delay.as_micros() as u64, Ordering::SeqCst);
        }
    }
}

/// Frames from the host to the switch, and from the switch to the host.
const OUTBOUND: usize = 0;
const INBOUND: usize = 1;

/// Loss and delay of one direction of an impaired link.
#[derive(Default)]
struct Way {
    loss_ppm: AtomicU32,
    delay_us: AtomicU64,
}

/// Loss and delay of an impaired link ([`OUTBOUND`], [`INBOUND`]), and what it did.
#[derive(Default)]
struct Impairment {
    ways: [Way; 2],
    forwarded: AtomicU64,
    dropped: AtomicU64,
    stop: AtomicBool,
}

/// Opens a TAP device `name` in namespace `ns` (non-blocking, no packet information header).
fn open_tap(ns: &str, name: &str) -> File {
    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        _pad: [u8; 22],
    }
    let place = Place {
        ns: Some(ns.to_string()),
        ip: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    place.within(|| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags_nonblocking()
            .open("/dev/net/tun")
            .expect("open /dev/net/tun (a kernel with CONFIG_TUN)");
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF with a properly sized, initialised struct ifreq on an open tun fd.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), libc::TUNSETIFF, &mut req) };
        assert_eq!(
            rc,
            0,
            "TUNSETIFF {name} in {ns}: {}",
            std::io::Error::last_os_error()
        );
        f
    })
}

trait NonBlocking {
    fn custom_flags_nonblocking(&mut self) -> &mut Self;
}

impl NonBlocking for std::fs::OpenOptions {
    fn custom_flags_nonblocking(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}

/// Frames waiting for their time, and a wake-up for the writer.
#[derive(Default)]
struct Queue {
    frames: Mutex<VecDeque<(Instant, Vec<u8>)>>,
    ready: Condvar,
}

/// The threads forwarding an impaired link's frames, two per direction.
struct Relay {
    control: Arc<Impairment>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Forwards between `host` (the host's end) and `switch` (the switch's end).
    fn start(host: Arc<File>, switch: Arc<File>, control: Arc<Impairment>) -> Relay {
        let mut threads = Vec::new();
        for (from, to, way) in [
            (host.clone(), switch.clone(), OUTBOUND),
            (switch, host, INBOUND),
        ] {
            let queue: Arc<Queue> = Arc::default();
            let (c, q) = (control.clone(), queue.clone());
            threads.push(std::thread::spawn(move || read_frames(&from, &c, way, &q)));
            let (c, q) = (control.clone(), queue);
            threads.push(std::thread::spawn(move || write_frames(&to, &c, &q)));
        }
        Relay { control, threads }
    }

    fn stop(self) {
        self.control.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Reads frames from `from`, drops some, and queues the others with the time they are due.
fn read_frames(from: &File, c: &Impairment, way: usize, queue: &Queue) {
    let seed = way as u64 + 1;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut rng = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ nanos) | 1;
    let mut buf = vec![0u8; 65_536];
    while !c.stop.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd: from.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 100) };
        loop {
            let n = match (&*from).read(&mut buf) {
                Ok(n) if n > 0 => n,
                _ => break,
            };
            // xorshift64: an independent draw per frame, as netem's loss is.
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if ((rng % 1_000_000) as u32) < c.ways[way].loss_ppm.load(Ordering::SeqCst) {
                c.dropped.fetch_add(1, Ordering::SeqCst);
                continue;
            }
            let delay = c.ways[way].delay_us.load(Ordering::SeqCst);
            let due = Instant::now() + Duration::from_micros(delay);
            queue
                .frames
                .lock()
                .unwrap()
                .push_back((due, buf[..n].to_vec()));
            queue.ready.notify_one();
        }
    }
}

/// Writes queued frames to `to` once they are due, in order.
fn write_frames(to: &File, c: &Impairment, queue: &Queue) {
    let mut frames = queue.frames.lock().unwrap();
    while !c.stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        let wait = match frames.front() {
            None => Duration::from_millis(100),
            Some((due, _)) if *due > now => *due - now,
            Some(_) => {
                let (_, frame) = frames.pop_front().expect("a frame");
                drop(frames);
                // A link that is down refuses the write: the frame is lost, as on a wire.
                let _ = (&*to).write(&frame);
                c.forwarded.fetch_add(1, Ordering::SeqCst);
                frames = queue.frames.lock().unwrap();
                continue;
            }
        };
        frames = queue.ready.wait_timeout(frames, wait).unwrap().0;
    }
}
