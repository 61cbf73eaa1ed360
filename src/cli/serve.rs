//! `leafctl serve`: the library's HTTP service with the command line's settings.

use std::net::SocketAddr;
use std::sync::Arc;

use leafctl::segment::{HandBack, SegmentGenerator};
use leafctl::server::{self, LeafService, LeafServiceBuilder};
use leafctl::worker::{SupervisedGenerator, WorkerError};

use super::Context;
use super::db::{DbExample, examples_with};
use super::error::{CliError, usage};
use super::settings::{self, scope};

/// `serve`'s examples, the database URL from [`leafctl::db::DATABASES`].
pub fn examples() -> String {
    let with_db =
        "  LEAF_DB_PASSWORD=... leafctl serve --segment --db {url} --listen 0.0.0.0:8080\n";
    examples_with(EXAMPLES, &[DbExample::First(with_db)], EXPLAINED)
}

/// `serve`'s first examples, before one with a database URL.
const EXAMPLES: &str = "\
Examples:
  leafctl serve --segment                               embedded SQLite, 127.0.0.1:8080
  curl localhost:8080/api/segment/get/order             one ID (tag from `leafctl tag add order`)
  curl 'localhost:8080/api/segment/get/order?count=1000'    1000 IDs, one per line, ascending
";

/// `serve`'s examples after the one with a database URL, and what `serve --help` says after them.
const EXPLAINED: &str = "  leafctl serve --snowflake --zk zk1:2181,zk2:2181      lease a worker id, replace it if lost
  leafctl serve --snowflake --zk zk1:2181 --registry forever    Leaf's own ZooKeeper tree
  LEAF_ETCD_USER=leaf LEAF_ETCD_PASSWORD=... leafctl serve --snowflake --etcd https://etcd1:2379
  leafctl serve --snowflake --worker-id 7
  LEAF_SERVE_TOKEN=... leafctl serve --segment --snowflake --worker-id 7
  leafctl config import-leaf leaf.properties > leaf.toml && leafctl --config leaf.toml serve

Routes (any method, as in Leaf):
  /api/segment/get/TAG[?count=N]    /api/snowflake/get/KEY[?count=N]   text/plain IDs
  /decodeSnowflakeId?snowflakeId=ID  /cache  /db                        Leaf's JSON (HTML for browsers)
  /metrics (Prometheus)  /healthz (process up)  /readyz (200 when every enabled mode can issue)
  /  a live status page for a browser (rates, buffers, errors, the lease); /?format=json its data

Errors are never an ID: JSON {\"error\", \"code\"} with 400 bad_request, 401 unauthorized,
404 unknown_tag / mode_disabled / not_found, 503 not_ready / clock_backwards / lease_lost
(with Retry-After). SIGTERM or SIGINT: stop accepting, finish in-flight requests, give unused segment
IDs back to the table (where nobody claimed after them), record the last snowflake time and give the
worker id back, exit 0. -v logs each request.";

/// `serve`'s flags: its own settings' (`--listen`, `--segment`, `--snowflake`) and the snowflake
/// ones, made from their declarations; resolution reads their values.
pub type ServeArgs = settings::Flags<{ scope::SERVE | scope::SNOWFLAKE | scope::LAYOUT }>;

/// `leafctl serve`: the modes asked for started behind the bound port, served until SIGTERM or
/// SIGINT (or the lease keeper giving up), then the segments and the worker id handed back.
pub fn run(ctx: &Context) -> anyhow::Result<()> {
    let s = &ctx.settings;
    let (segment, snowflake) = (s.serve_segment.value, s.serve_snowflake.value);
    if !segment && !snowflake {
        return Err(usage(
            "no mode to serve",
            "pass --segment and/or --snowflake (or set serve.segment / serve.snowflake, LEAF_SERVE_SEGMENT / LEAF_SERVE_SNOWFLAKE)",
        ));
    }
    let addr = listen_address(ctx)?;
    // Idle clients must not run the process out of file descriptors at a low default soft
    // limit (often 1024): take the hard limit; the connection cap stays below it.
    let fds = server::raise_open_file_limit();
    tracing::debug!("open-file limit: {fds:?}");
    // Bind first: a taken port fails before a worker id is leased.
    let listener = std::net::TcpListener::bind(addr).map_err(|e| CliError {
        usage: false,
        message: format!("cannot listen on {addr}: {e}"),
        hint: Some("pick another --listen port, or stop what is using it (ss -ltnp)".into()),
    })?;
    let local = listener.local_addr().unwrap_or(addr);

    let (service, modes) = start_modes(ctx, (segment, snowflake), local.port())?;
    let service = Arc::new(service);
    let listening = format!(
        "leafctl serve: listening on http://{local}: {}",
        modes.join(", ")
    );
    let options = s.http.clone();
    let shutdown = shutdown(service.clone(), ctx.quiet, listening);
    let served = server::run(listener, service.clone(), &options, shutdown);
    let gave_up = service
        .snowflake()
        .and_then(|g| g.gave_up())
        .map(|g| CliError {
            usage: false,
            message: format!("leafctl serve stopped: {g}"),
            hint: Some(g.hint),
        });
    // Give unused segment IDs and the worker id back whatever happened to the server.
    let handed = service.hand_back_segments();
    let finished = service.finish();
    if let Some(h) = handed
        && !ctx.quiet
    {
        report_hand_back(h);
    }
    served?;
    if let Some(e) = gave_up {
        return Err(e.into());
    }
    stopped(ctx, finished)
}

/// Says how many unused segment IDs went back to the table at the stop, and how many could not
/// (nothing when there were none).
fn report_hand_back(h: HandBack) {
    if h.returned + h.wasted > 0 {
        super::error::progress(&format!(
            "leafctl serve: gave {} unused IDs of {} tags back to the table; {} could not go back and are skipped{}",
            h.returned,
            h.tags,
            h.wasted,
            h.error.map(|e| format!(" ({e})")).unwrap_or_default()
        ));
    }
}

/// The address `--listen` (or its setting) gives, or a usage error naming where it came from.
fn listen_address(ctx: &Context) -> anyhow::Result<SocketAddr> {
    let listen = &ctx.settings.serve_listen;
    listen.value.parse().map_err(|_| {
        usage(
            format!(
                "invalid listen address {:?} (from {})",
                listen.value, listen.origin
            ),
            "give IP:PORT, e.g. --listen 127.0.0.1:8080 or --listen 0.0.0.0:8080",
        )
    })
}

/// What ends the serving: SIGTERM or SIGINT, or the lease keeper giving up acquiring a worker
/// id (refused in a way no retry mends; then `serve` exits 1 with that refusal). The
/// `listening` line is said only once the signals lead to the graceful stop: a supervisor that
/// stops the server as soon as it says it listens must not kill it instead.
async fn shutdown(service: Arc<LeafService>, quiet: bool, listening: String) {
    let signals = server::shutdown_signals();
    if !quiet {
        super::error::progress(&listening);
    }
    let gave_up = async {
        loop {
            if service.snowflake().is_some_and(|g| g.gave_up().is_some()) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    };
    tokio::select! {
        () = signals => {}
        () = gave_up => {}
    }
}

/// The end of a stop: a warning when the last issued time could not be recorded, then
/// `stopped`.
fn stopped(ctx: &Context, finished: Result<(), WorkerError>) -> anyhow::Result<()> {
    // The last issued time could not be recorded (the registry paused or cut off as the server
    // stops): the reservation recorded before the IDs went out stays, so the worker id's next
    // holder waits it out and no ID repeats. A stop on SIGTERM is still a clean one (exit 0).
    if let Err(e) = finished
        && !ctx.quiet
    {
        super::error::warning(&format!(
            "could not record the last issued time at the stop ({e}); the worker id's reservation stays recorded, so its next holder waits it out"
        ));
    }
    if !ctx.quiet {
        super::error::progress("leafctl serve: stopped");
    }
    Ok(())
}

/// The service `serve` runs: the modes asked for (`segment`, `snowflake`), each started (a
/// region given to a database that records none is recorded then), with what the listening
/// line says of each. `port` is the one listened on (the default identity's port).
fn start_modes(
    ctx: &Context,
    (segment, snowflake): (bool, bool),
    port: u16,
) -> anyhow::Result<(LeafService, Vec<String>)> {
    let s = &ctx.settings;
    let (metrics, observer) = LeafServiceBuilder::load_observer();
    metrics.set_tag_limit(s.serve_metrics_tags.value);
    let mut builder = LeafService::builder()
        .metrics(metrics)
        .layout(s.layout.value.layout)
        .token(s.serve_token.as_ref().map(|t| t.value.clone()));
    let mut modes = Vec::new();
    if segment {
        let store = super::db::open(ctx)?;
        let generator = SegmentGenerator::builder(Arc::from(store))
            .on_load(observer)
            .id_key(s.id_key()?)
            .build()?;
        // Started: a region given to a database that records none is recorded now.
        ctx.record_region(generator.store())?;
        let tags = generator.tag_count();
        modes.push(format!(
            "segment on {} ({tags} tag{})",
            generator.describe(),
            if tags == 1 { "" } else { "s" }
        ));
        builder = builder.segment(generator);
    }
    if snowflake {
        // A server never waits for a local worker id another process holds: it fails at once.
        let registry = super::registry::registry(ctx, true, port)?;
        let generator = SupervisedGenerator::start(registry, super::registry::issue_options(ctx))?;
        // Started: a region given to a registry database that records none is recorded now.
        ctx.record_region_in_db()?;
        let status = generator.status();
        modes.push(format!(
            "snowflake worker id {} ({})",
            status.worker.unwrap_or_default(),
            status.lease.unwrap_or_default()
        ));
        builder = builder.snowflake(generator);
    }
    Ok((builder.build(), modes))
}
