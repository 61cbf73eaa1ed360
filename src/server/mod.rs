//! `leafctl serve`: Leaf's HTTP API on the library's generators, plus batches, metrics, health
//! checks, a bearer token and graceful shutdown.
//!
//! [`LeafService`] answers requests. [`run`] serves it over HTTP/1.1 (hyper) until a shutdown
//! future resolves; a Rust service that has its own hyper or axum server can mount the routes
//! instead by calling [`LeafService::respond`] from its handler.
//!
//! ```no_run
//! use std::sync::Arc;
//! use leafctl::db::{open_store, OpenMode};
//! use leafctl::segment::SegmentGenerator;
//! use leafctl::server::{self, HttpOptions, LeafService};
//!
//! let store = open_store("sqlite:///tmp/leaf.db", None, OpenMode::CreateSchema)?;
//! let segment = SegmentGenerator::builder(store).build()?;
//! let service = Arc::new(LeafService::builder().segment(segment).build());
//! let listener = std::net::TcpListener::bind("127.0.0.1:8080")?;
//! server::run(listener, service.clone(), &HttpOptions::default(), server::shutdown_signal())?;
//! service.finish()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod answer;
mod body;
mod conn;
mod error;
mod handlers;
mod listing;
mod metrics;
mod readiness;
mod reply;
mod request;
mod route;
mod status;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

pub use metrics::{DEFAULT_METRICS_TAGS, Metrics};
pub use route::Route;
pub use status::{
    AttentionCounts, BufferFill, DEFAULT_PER_PAGE, MAX_LISTING_DEPTH, MAX_PER_PAGE, SegmentStatus,
    ServerStatus, SnowflakeStatus, StatusReport, TagQuery, TagSort, TagStatus,
};

use crate::segment::{LoadObserver, SegmentGenerator};
use crate::snowflake::{Layout, Preset};
use crate::worker::{SupervisedGenerator, WorkerError};

/// Largest `?count=` a get route accepts.
pub const MAX_BATCH: u64 = 100_000;

/// Failures to run the HTTP server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The async runtime or the listening socket could not be set up.
    #[error("cannot start the HTTP server: {0}")]
    Start(#[source] std::io::Error),
}

/// Answers Leaf's routes and leafctl's own; see the module documentation.
pub struct LeafService {
    segment: Option<Arc<SegmentGenerator>>,
    snowflake: Option<Arc<SupervisedGenerator>>,
    layout: Layout,
    token: Option<String>,
    metrics: Arc<Metrics>,
    started: std::time::Instant,
    /// Connections open now (counted by [`run`]).
    open_connections: std::sync::atomic::AtomicU64,
    /// Taken by a single-ID snowflake request that has to wait on a blocking thread (see
    /// `handlers.rs`), so that such requests wait one at a time.
    snowflake_turn: Arc<tokio::sync::Mutex<()>>,
}

/// Sets up a [`LeafService`].
pub struct LeafServiceBuilder {
    segment: Option<SegmentGenerator>,
    snowflake: Option<SupervisedGenerator>,
    layout: Option<Layout>,
    token: Option<String>,
    metrics: Option<Arc<Metrics>>,
}

impl LeafServiceBuilder {
    setters! {
        /// Enables segment mode on this generator.
        segment(generator: SegmentGenerator) => segment = Some(generator);
        /// Enables snowflake mode on this generator (its layout also decodes IDs).
        snowflake(generator: SupervisedGenerator) => snowflake = Some(generator);
        /// The layout `/decodeSnowflakeId` decodes with (default: the snowflake generator's, else
        /// Leaf's).
        layout(layout: Layout) => layout = Some(layout);
        /// Requires `Authorization: Bearer TOKEN` on every route but `/healthz` and `/readyz`.
        token(token: Option<String>) => token = token.filter(|t| !t.is_empty());
        /// Metrics made beforehand (see [`LeafServiceBuilder::load_observer`]).
        metrics(metrics: Arc<Metrics>) => metrics = Some(metrics);
    }
    /// Builds the service.
    pub fn build(self) -> LeafService {
        let segment = self.segment.map(Arc::new);
        let snowflake = self.snowflake.map(Arc::new);
        let layout = self
            .layout
            .or_else(|| snowflake.as_ref().map(|s| *s.layout()))
            .unwrap_or_else(|| Layout::preset(Preset::Leaf));
        let metrics = self.metrics.unwrap_or_else(|| Arc::new(Metrics::new()));
        metrics.attach(segment.clone(), snowflake.clone());
        LeafService {
            segment,
            snowflake,
            layout,
            token: self.token,
            metrics,
            started: std::time::Instant::now(),
            open_connections: std::sync::atomic::AtomicU64::new(0),
            snowflake_turn: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}

impl LeafServiceBuilder {
    /// Metrics to pass to [`LeafServiceBuilder::metrics`], and the observer to give the segment
    /// generator's builder ([`crate::segment::SegmentGeneratorBuilder::on_load`]) so that its
    /// claims are counted.
    pub fn load_observer() -> (Arc<Metrics>, LoadObserver) {
        let metrics = Arc::new(Metrics::new());
        let m = metrics.clone();
        (metrics, Arc::new(move |e| m.segment_load(e)))
    }
}

impl LeafService {
    /// A builder with no mode enabled.
    pub fn builder() -> LeafServiceBuilder {
        LeafServiceBuilder {
            segment: None,
            snowflake: None,
            layout: None,
            token: None,
            metrics: None,
        }
    }

    /// The segment generator, if segment mode is enabled.
    pub fn segment(&self) -> Option<&SegmentGenerator> {
        self.segment.as_deref()
    }

    /// The snowflake generator, if snowflake mode is enabled.
    pub fn snowflake(&self) -> Option<&SupervisedGenerator> {
        self.snowflake.as_deref()
    }

    /// Reads the counters for the status page's rates: call once a second ([`run`] does).
    /// Visits only the tags that issued IDs since the last call.
    pub fn sample(&self) {
        self.metrics.sample();
    }

    /// Gives the segment IDs that never went out back to the table
    /// ([`SegmentGenerator::hand_back`], at most [`HAND_BACK_TIME`]); call once the server has
    /// stopped answering. `None` without segment mode.
    pub fn hand_back_segments(&self) -> Option<crate::segment::HandBack> {
        self.segment.as_ref().map(|s| s.hand_back(HAND_BACK_TIME))
    }

    /// Records the last snowflake time and gives the worker id back; call once the server has
    /// stopped.
    pub fn finish(&self) -> Result<(), WorkerError> {
        match &self.snowflake {
            Some(s) => s.finish(),
            None => Ok(()),
        }
    }
}

/// How long a stopping server spends giving unused segment IDs back to the table
/// ([`LeafService::hand_back_segments`]); what is left then is skipped.
pub const HAND_BACK_TIME: Duration = Duration::from_secs(10);
/// How long a connection waits for a request's headers unless [`HttpOptions`] says otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of [`HttpOptions::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// File descriptors [`run`] keeps out of the connection cap for the process's own use (database
/// and registry connections, state files, the listening socket).
pub const RESERVED_FDS: u64 = 64;

/// Declares an options struct with each field's default beside it: `pub field: Type = default,`
/// makes the field, and the struct's `Default` gives each its default.
macro_rules! options_with_defaults {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$doc:meta])* pub $field:ident: $t:ty = $default:expr,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$doc])* pub $field: $t,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)*
                }
            }
        }
    };
}

options_with_defaults! {
    /// How the HTTP server treats connections.
    #[derive(Debug, Clone)]
    pub struct HttpOptions {
        /// Runtime worker threads (default: the number of CPUs).
        pub threads: usize = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
        /// A connection is closed when a request's headers have not fully arrived this long after
        /// the server started waiting for them (default 10 s). That wait starts when the connection
        /// is accepted and again after each answer, so this bounds both a client trickling its
        /// headers and an idle (keep-alive) connection.
        pub header_timeout: Duration = DEFAULT_HEADER_TIMEOUT,
        /// Most connections open at once (default 4096), further capped by the process's open-file
        /// limit less [`RESERVED_FDS`]. At the cap the server stops accepting until a connection
        /// closes (new clients wait in the kernel's queue), so idle clients can never exhaust the
        /// file descriptors the database, registry and state files need; the header timeout bounds
        /// how long such a wait lasts.
        pub max_connections: usize = DEFAULT_MAX_CONNECTIONS,
        /// How long shutdown waits for in-flight requests (default 5 s).
        pub drain_timeout: Duration = Duration::from_secs(5),
    }
}

/// Raises this process's soft limit on open files to its hard limit (as Go's runtime does), so
/// the connection cap rather than the default soft limit (often 1024) bounds a server. Returns
/// the soft limit in force afterwards, `None` if it cannot be read.
pub fn raise_open_file_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    Some(lim.rlim_cur)
}

/// The connection cap [`run`] applies: `configured`, at most the open-file limit less
/// [`RESERVED_FDS`], and at least 1.
fn connection_cap(configured: usize) -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed.
    let fds = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur
    } else {
        u64::MAX
    };
    let by_fds = usize::try_from(fds.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
    // Shutdown waits for all the permits at once, which takes a u32.
    let most = tokio::sync::Semaphore::MAX_PERMITS.min(u32::MAX as usize);
    configured.min(by_fds).clamp(1, most)
}

/// [`LeafService::answer`]'s answer as hyper's service wants it.
struct Answered(answer::Answer);

impl Future for Answered {
    type Output = Result<hyper::Response<body::Body>, Infallible>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(Ok)
    }
}

/// Resolves on SIGTERM or SIGINT (for [`run`]'s `shutdown`). The handlers are installed when it
/// is first polled; see [`shutdown_signals`] to install them at a known point.
pub async fn shutdown_signal() {
    shutdown_signals().await
}

/// Installs the SIGTERM and SIGINT handlers now (call it inside the runtime, e.g. first thing
/// in the future given to [`run`]) and returns what resolves on either. A server that announces
/// itself after this call cannot be killed by a signal sent on seeing the announcement (before,
/// a SIGTERM in the few milliseconds between the announcement and the first poll took the
/// default action, and the process died without its graceful stop).
pub fn shutdown_signals() -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => Box::pin(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }),
        _ => {
            tracing::warn!("cannot install signal handlers; stop the server with SIGKILL");
            Box::pin(std::future::pending::<()>())
        }
    }
}

/// Serves `service` on `listener` until `shutdown` resolves, then stops accepting and lets
/// in-flight requests finish (at most [`HttpOptions::drain_timeout`]). Blocks the calling thread.
pub fn run(
    listener: std::net::TcpListener,
    service: Arc<LeafService>,
    options: &HttpOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads.max(1))
        .thread_name("leafctl-http")
        .enable_all()
        .build()
        .map_err(ServerError::Start)?;
    listener.set_nonblocking(true).map_err(ServerError::Start)?;
    let cap = connection_cap(options.max_connections);
    if cap < options.max_connections {
        tracing::info!(
            "at most {cap} connections at once (the open-file limit less {RESERVED_FDS})"
        );
    }
    runtime.block_on(accept_until(listener, service, options, cap, shutdown))
}

/// The accept loop on the server's runtime: each connection served on a task of its own while
/// a slot of `cap` is free, until `shutdown`; then the drain.
async fn accept_until(
    listener: std::net::TcpListener,
    service: Arc<LeafService>,
    options: &HttpOptions,
    cap: usize,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    // A connection without a request's headers closes after this (idle ones too).
    let headers_within = options.header_timeout;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(ServerError::Start)?;
    // Connections are told to close by `closing`, and the header timeout is kept by each
    // connection's watchdog (see conn.rs), not by hyper's timer.
    let closing = Arc::new(conn::Closing::default());
    let mut http = http1::Builder::new();
    http.keep_alive(true);
    let slots = Arc::new(tokio::sync::Semaphore::new(cap));
    spawn_sampler(service.clone());
    let mut warned_full = false;
    tokio::pin!(shutdown);
    loop {
        // A free slot first: at the cap, new clients wait in the kernel's accept queue.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                if !warned_full {
                    warn_full(cap, headers_within);
                    warned_full = true;
                }
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break, // never closed
                    },
                    _ = &mut shutdown => break,
                }
            }
        };
        tokio::select! {
            accepted = listener.accept() => {
                match accepted {
                    Ok((stream, peer)) => serve_connection(
                        stream, peer, &service, &http, headers_within, &closing, slot,
                    ),
                    Err(e) => {
                        // Out of file descriptors, say: back off instead of spinning.
                        tracing::warn!("accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    drain(&closing, &slots, cap, options.drain_timeout).await;
    Ok(())
}

/// Said once when the connection cap is reached.
fn warn_full(cap: usize, headers_within: Duration) {
    tracing::warn!(
        "{cap} connections open: not accepting more until one closes \
         (idle ones close after {headers_within:?})"
    );
}

/// The status page's rates: the counters read once a second, off the request path.
fn spawn_sampler(service: Arc<LeafService>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            service.sample();
        }
    });
}

/// Serves one accepted connection on a task of its own, counted in `open_connections` and
/// holding `slot` until it closes (see conn.rs for its header watchdog and graceful close).
fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: std::net::SocketAddr,
    service: &Arc<LeafService>,
    http: &http1::Builder,
    headers_within: Duration,
    closing: &Arc<conn::Closing>,
    slot: tokio::sync::OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let wait = Arc::new(conn::HeaderWait::new(headers_within));
    let svc = service.clone();
    let answering = wait.clone();
    let conn = http.serve_connection(
        TokioIo::new(stream),
        // Answered inside the call where possible, so the request (which shares the
        // connection's read buffer) is gone before hyper reads on. (`req` is dropped as the
        // closure returns.)
        service_fn(move |req| Answered(svc.answer(&req, Some(&answering)))),
    );
    let counted = service.clone();
    let closing = closing.clone();
    counted
        .open_connections
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tokio::spawn(async move {
        let graceful = |c: std::pin::Pin<&mut _>| http1::Connection::graceful_shutdown(c);
        match conn::supervise(conn, graceful, &wait, &closing).await {
            conn::Ended::Finished(Ok(())) => {}
            conn::Ended::Finished(Err(e)) => tracing::debug!("connection from {peer}: {e}"),
            conn::Ended::HeaderTimeout => {
                tracing::debug!("connection from {peer}: read header from client timeout")
            }
        }
        counted
            .open_connections
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        drop(slot);
    });
}

/// The stop: tells every connection to close and waits (at most `timeout`) until all have,
/// each holding a slot of `slots` until then.
async fn drain(
    closing: &conn::Closing,
    slots: &tokio::sync::Semaphore,
    cap: usize,
    timeout: Duration,
) {
    tracing::info!("shutting down: finishing in-flight requests");
    closing.close();
    let all = u32::try_from(cap).unwrap_or(u32::MAX);
    tokio::select! {
        _ = slots.acquire_many(all) => {}
        _ = tokio::time::sleep(timeout) => {
            tracing::warn!("in-flight requests did not finish within {timeout:?}; closing");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_stays_below_the_open_file_limit() {
        let fds = raise_open_file_limit().expect("getrlimit");
        let cap = connection_cap(usize::MAX);
        assert!(
            cap as u64 <= fds.saturating_sub(RESERVED_FDS).max(1),
            "{cap} vs {fds}"
        );
        assert!(cap <= tokio::sync::Semaphore::MAX_PERMITS);
        assert_eq!(connection_cap(10), 10);
        assert_eq!(connection_cap(0), 1);
    }
}
