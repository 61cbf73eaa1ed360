//! `leafctl serve` as a child process on a free loopback port (or on a host of a private network,
//! [`super::netns`]), and a minimal HTTP/1.1 client (one connection per request, bounded by
//! timeouts) to talk to it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Sandbox;
use super::netns::Place;

/// The codes of a snowflake server's refusals while it cannot vouch for its worker id.
pub const LEASE_REFUSALS: &[&str] = &["lease_lost", "registry_slow"];

/// A running `leafctl serve`, killed when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Where it runs; requests through [`Server::get`] are made from there.
    place: Place,
}

/// One HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// A header's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The body as one decimal ID per line.
    pub fn ids(&self) -> Vec<u64> {
        assert_eq!(self.status, 200, "expected IDs, got {self:?}");
        super::parse_ids(self.body.as_bytes())
    }

    /// The body as exactly one ID (Leaf's format: digits, no newline).
    pub fn id(&self) -> u64 {
        assert_eq!(self.status, 200, "expected an ID, got {self:?}");
        assert!(
            !self.body.is_empty() && self.body.bytes().all(|b| b.is_ascii_digit()),
            "not a bare ID: {:?}",
            self.body
        );
        self.body.parse().expect("ID")
    }

    /// Asserts a snowflake refusal for want of a vouched-for worker id: `503` with
    /// `Retry-After: 1`, `lease_lost` (the lease is gone) or `registry_slow` (the registry did
    /// not confirm the time fence within the server's bound).
    pub fn assert_lease_refusal(&self) {
        let code = self.json()["code"].as_str().unwrap_or_default().to_string();
        assert!(LEASE_REFUSALS.contains(&code.as_str()), "{self:?}");
        self.assert_error(503, &code);
        assert_eq!(self.header("retry-after"), Some("1"), "{self:?}");
    }

    /// Asserts an error body `{"error", "code"}` with this status and code.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        let j = self.json();
        assert_eq!(j["code"], code, "{self:?}");
        let msg = j["error"].as_str().unwrap_or_default();
        assert!(msg.len() > 10, "the error says what was wrong: {self:?}");
        assert!(
            self.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "{self:?}"
        );
    }
}

/// The entry of Leaf's `/cache` or `/db` list (an array of objects) whose `key` is `key`.
pub fn entry<'a>(list: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    list.as_array()
        .and_then(|all| all.iter().find(|e| e["key"] == key))
        .unwrap_or_else(|| panic!("no entry {key:?} in {list}"))
}

/// Sends one request and reads the whole response (`Connection: close`).
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    http_within(addr, method, path, headers, Duration::from_secs(30))
}

/// [`http`] giving up when the answer takes longer than `read_timeout` (connecting still
/// waits up to 5 s): a client that must see an error, not a late answer, when cut off.
pub fn http_within(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    read_timeout: Duration,
) -> std::io::Result<Response> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(read_timeout))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("Content-Length: 0\r\n\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| {
            invalid(format!(
                "no HTTP response: {:?}",
                String::from_utf8_lossy(&raw)
            ))
        })?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| invalid(head.clone()))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body).map_err(invalid)?;
    }
    Ok(Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// A chunked body (`Transfer-Encoding: chunked`) as its bytes; an error when it breaks off
/// before its last (empty) chunk, as a server does when an answer fails halfway.
pub fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("the chunked body broke off (no last chunk)")?;
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|e| format!("bad chunk size {size_text:?}: {e}"))?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if raw.len() < size + 2 {
            return Err("the chunked body broke off inside a chunk".into());
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// `leafctl serve` as a test starts it: the one way to put its command together. The test files
/// each had a `fn serve` of their own (issue 47); what differed between them are the parts of this
/// builder: leafctl's options ahead of `serve` ([`Serve::before`]: a registry given as `--zk HOSTS
/// --name NAME`), the environment ([`Serve::env`]: a database URL and password, a session
/// timeout, a log level), `serve`'s own arguments ([`Serve::args`]), and where it runs
/// ([`Serve::start`] on loopback, [`Serve::start_at`] on a host of a private network). Arguments
/// keep the order they were given in; one builder starts as many servers as a test needs.
#[derive(Clone)]
pub struct Serve<'a> {
    sandbox: &'a Sandbox,
    before: Vec<String>,
    env: Vec<(String, String)>,
    args: Vec<String>,
}

impl<'a> Serve<'a> {
    /// `leafctl serve` in `sandbox` (its own HOME and state, no inherited `LEAF_*` setting).
    pub fn new(sandbox: &'a Sandbox) -> Serve<'a> {
        Serve {
            sandbox,
            before: Vec::new(),
            env: Vec::new(),
            args: Vec::new(),
        }
    }

    /// `leafctl serve --snowflake` in `sandbox`.
    pub fn snowflake(sandbox: &'a Sandbox) -> Serve<'a> {
        Serve::new(sandbox).args(["--snowflake"])
    }

    /// Options of leafctl itself, given ahead of `serve` (after those given so far).
    pub fn before<I, S>(mut self, args: I) -> Serve<'a>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.before
            .extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// Arguments of `serve`, after those given so far.
    pub fn args<I, S>(mut self, args: I) -> Serve<'a>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// An environment variable of the server's process.
    pub fn env(mut self, key: impl AsRef<str>, value: impl AsRef<str>) -> Serve<'a> {
        self.env
            .push((key.as_ref().to_string(), value.as_ref().to_string()));
        self
    }

    /// Environment variables of the server's process, set in this order.
    pub fn envs<I, K, V>(self, vars: I) -> Serve<'a>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        vars.into_iter().fold(self, |s, (k, v)| s.env(k, v))
    }

    /// The command: `leafctl BEFORE... serve ARGS...` in the sandbox, with the environment.
    pub fn command(&self) -> Command {
        let mut cmd = self.sandbox.leafctl_std();
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.args(&self.before).arg("serve").args(&self.args);
        cmd
    }

    /// Starts the server on a free loopback port ([`Server::start`]).
    pub fn start(&self) -> Server {
        Server::start(self.command())
    }

    /// Starts the server at `place` ([`Server::start_at`]).
    pub fn start_at(&self, place: &Place) -> Server {
        Server::start_at(place, self.command())
    }
}

impl Server {
    /// Starts `cmd` (`leafctl ... serve ...`, without --listen) on a free loopback port and waits
    /// for it to say where it listens; panics with its stderr if it exits instead.
    pub fn start(cmd: Command) -> Server {
        Server::try_start(cmd).unwrap_or_else(|e| panic!("leafctl serve did not start: {e}"))
    }

    /// Like [`Server::start`], but returns the server's stderr if it exits before listening.
    pub fn try_start(cmd: Command) -> Result<Server, String> {
        Server::try_start_at(&Place::local(), cmd)
    }

    /// Starts `cmd` at `place` (in its namespace, on a free port of its address).
    pub fn start_at(place: &Place, cmd: Command) -> Server {
        Server::try_start_at(place, cmd)
            .unwrap_or_else(|e| panic!("leafctl serve did not start at {place:?}: {e}"))
    }

    /// Like [`Server::start_at`], but returns the server's stderr if it exits before listening.
    pub fn try_start_at(place: &Place, mut cmd: Command) -> Result<Server, String> {
        cmd.args(["--listen", &place.hostport(0)]);
        let mut cmd = place.wrap(&cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn leafctl serve");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Some(rest) = line.split("listening on http://").nth(1) {
                        let addr = rest.split(':').take(2).collect::<Vec<_>>().join(":");
                        let _ = tx.send(addr);
                    }
                    lines.lock().unwrap().push(line);
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(addr) => {
                    let addr = addr.parse().expect("listen address");
                    return Ok(Server {
                        child,
                        addr,
                        stderr: lines,
                        place: place.clone(),
                    });
                }
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        std::thread::sleep(Duration::from_millis(200));
                        return Err(format!(
                            "exited with {status}: {}",
                            lines.lock().unwrap().join("\n")
                        ));
                    }
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(format!(
                            "no listening line within 60 s: {}",
                            lines.lock().unwrap().join("\n")
                        ));
                    }
                }
            }
        }
    }

    /// Where the server runs.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[])
    }

    /// Any request (from the server's place); panics if the server does not answer.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
        self.try_request(method, path, headers)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}; stderr: {}", self.stderr()))
    }

    /// Any request (from the server's place), or the error that kept it from being answered.
    pub fn try_request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> std::io::Result<Response> {
        self.place.within(|| http(self.addr, method, path, headers))
    }

    /// Asks for one ID at `path` every `every` until an answer is not an ID (at most 30 s):
    /// the IDs answered until then, and that answer.
    pub fn ids_until_refused(&self, path: &str, every: Duration) -> (Vec<u64>, Response) {
        let started = Instant::now();
        let mut ids = Vec::new();
        loop {
            assert!(started.elapsed() < Duration::from_secs(30), "still issuing");
            let r = self.get(path);
            if r.status != 200 {
                return (ids, r);
            }
            ids.push(r.id());
            std::thread::sleep(every);
        }
    }

    /// Waits (at most `limit`, asking every 200 ms) until `path` is answered with 200 again,
    /// as a server that lost its worker id does once it holds one again.
    pub fn wait_until_issuing(&self, path: &str, limit: Duration) {
        let started = Instant::now();
        loop {
            assert!(started.elapsed() < limit, "no new lease; {}", self.stderr());
            if http(self.addr, "GET", path, &[]).expect("answer").status == 200 {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether `/cache` shows `tag` with its next segment loaded (segment mode).
    pub fn next_ready(&self, tag: &str) -> bool {
        let cache = self.get("/cache").json();
        cache
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["key"] == tag && e["nextReady"] == true)
    }

    /// Everything the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Sends SIGTERM and waits (at most 20 s) for the exit.
    pub fn terminate(mut self) -> (ExitStatus, String) {
        signal(self.child.id(), libc::SIGTERM);
        let status = wait_bounded(&mut self.child, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(100));
        (status, self.stderr())
    }

    /// Sends SIGTERM, waits as [`Server::terminate`] does, and asserts a clean exit (status 0;
    /// the panic shows the status and the server's log). Returns the log.
    pub fn stop_cleanly(self) -> String {
        let (status, log) = self.terminate();
        assert!(status.success(), "exited with {status}: {log}");
        log
    }

    /// Waits (at most `limit`) for the server to exit by itself: its status, `None` if it
    /// still runs.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends a signal to a process.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid this test started and a valid signal number.
    let rc = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig})");
}

fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit within {limit:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `per_thread` requests from each of `threads` threads against the servers in turn,
/// collecting every ID answered (bounded in count; each request has its own timeouts).
pub fn hammer(addrs: &[SocketAddr], threads: usize, per_thread: usize, path: &str) -> Vec<u64> {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let addr = addrs[t % addrs.len()];
            let path = path.to_string();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for i in 0..per_thread {
                    // Mix single IDs and batches.
                    let p = if i % 10 == 9 {
                        format!("{path}?count=100")
                    } else {
                        path.clone()
                    };
                    let r = http(addr, "GET", &p, &[]).expect("request");
                    ids.extend(r.ids());
                }
                ids
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("hammer thread"))
        .collect()
}

/// One answer of a [`load`] loop: when the request was sent, its status (0: no answer) and the
/// ID it carried.
pub type Answer = (Instant, u16, Option<u64>);

/// One request loop against one server: bounded in count (200,000) and stopped by `stop`;
/// every answer is kept with the time its request was sent.
pub fn load(
    addr: SocketAddr,
    path: &str,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Vec<Answer>> {
    let path = path.to_string();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) && seen.len() < 200_000 {
            let at = Instant::now();
            match http(addr, "GET", &path, &[]) {
                Ok(r) if r.status == 200 => seen.push((at, 200, Some(r.id()))),
                Ok(r) => seen.push((at, r.status, None)),
                Err(_) => seen.push((at, 0, None)),
            }
        }
        seen
    })
}

/// A request loop that keeps only the IDs: `GET path` from `addr` every `pause` until `stop` is
/// set or `limit` has passed, every ID of each 200 kept (`path` may ask for a batch) and any
/// other answer or error passed over. Unlike [`load`] (every answer with its time, one ID each)
/// and [`super::fault::Load`] (its own threads, stop and batches): `fault_pause` runs one of
/// these on each of two servers sharing a worker id and stops both with one flag (issue 47
/// moved it here from that file).
pub fn ids_until_stopped(
    addr: SocketAddr,
    path: &str,
    stop: Arc<std::sync::atomic::AtomicBool>,
    pause: Duration,
    limit: Duration,
) -> std::thread::JoinHandle<Vec<u64>> {
    let path = path.to_string();
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut ids = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) && started.elapsed() < limit {
            if let Ok(r) = http(addr, "GET", &path, &[])
                && r.status == 200
            {
                ids.extend(r.ids());
            }
            std::thread::sleep(pause);
        }
        ids
    })
}

/// Two [`load`] threads on each of `servers`, all asking for `path` until `stop`.
pub fn two_loads_each(
    servers: &[Server],
    path: &str,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<Vec<Answer>>> {
    servers
        .iter()
        .flat_map(|s| {
            [
                load(s.addr, path, stop.clone()),
                load(s.addr, path, stop.clone()),
            ]
        })
        .collect()
}
