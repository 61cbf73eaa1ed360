//! The answer to a request: the route matched, authorized, handled at once where nothing
//! blocks or else on a blocking thread, then counted in `/metrics` and logged.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header;
use hyper::{Request, Response, StatusCode};
use subtle::ConstantTimeEq;

use super::LeafService;
use super::body::Body;
use super::conn::{HeaderWait, mono_ns};
use super::error::ApiError;
use super::reply::{healthz, one_id, status_page};
use super::request::wants_status_json;
use super::route::{Route, route_of};

/// A longer path is refused with a JSON 414: every route's path is far shorter (a tag of 128
/// four-byte characters is 1,536 bytes percent-encoded).
const MAX_PATH_BYTES: usize = 16 * 1024;

/// What a route does with a request: answered already, or work for a blocking thread (a
/// database claim, a wait for a segment or the next tick) that owns everything it needs.
pub(super) enum Step {
    /// One ID, answered 200 with its digits ([`one_id`]).
    Id(u64),
    /// Answered: a response or an error.
    Done(Result<Response<Body>, ApiError>),
    /// Work for a blocking thread.
    Blocking(BlockingWork),
    /// Snowflake IDs that the non-blocking try could not issue: one, or a batch
    /// ([`LeafService::snowflake_in_turn`]).
    SnowflakeInTurn(u64, Option<crate::idformat::compact::Encoding>),
}

/// What a request answered later waits for.
enum Work {
    /// Its own work on a blocking thread.
    Blocking(BlockingWork),
    /// Snowflake IDs in turn ([`LeafService::snowflake_in_turn`]).
    Snowflake(u64, Option<crate::idformat::compact::Encoding>),
}

/// What a blocking thread runs for a request.
type BlockingWork = Box<dyn FnOnce(&LeafService) -> Result<Response<Body>, ApiError> + Send>;

impl Step {
    /// `work` to run on a blocking thread.
    pub(super) fn blocking(
        work: impl FnOnce(&LeafService) -> Result<Response<Body>, ApiError> + Send + 'static,
    ) -> Step {
        Step::Blocking(Box::new(work))
    }
}

impl From<Result<Response<Body>, ApiError>> for Step {
    fn from(result: Result<Response<Body>, ApiError>) -> Step {
        Step::Done(result)
    }
}

/// The answer to one request (see [`LeafService::answer`]): ready at once, or work running on a
/// blocking thread. Small (two words), as hyper moves it around: a single ID's response is made
/// when the answer is polled.
pub(crate) enum Answer {
    /// One ID, its response made when polled.
    Id(u64),
    /// Taken by the first poll.
    Ready(Option<Box<Response<Body>>>),
    /// Work on a blocking thread, counted and logged when it is done.
    Later(std::pin::Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>>),
}

impl std::future::Future for Answer {
    type Output = Response<Body>;
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Response<Body>> {
        match self.get_mut() {
            Answer::Id(id) => std::task::Poll::Ready(one_id(*id)),
            Answer::Ready(r) => match r.take() {
                Some(r) => std::task::Poll::Ready(*r),
                // Polled after it completed: hyper never does that.
                None => std::task::Poll::Pending,
            },
            Answer::Later(f) => f.as_mut().poll(cx),
        }
    }
}

/// What the access log says of a request answered later (kept only when that log is on).
struct Logged {
    method: hyper::Method,
    path: String,
}

impl LeafService {
    /// Answers one request. Leaf's routes take any method, as Leaf does; the request body is
    /// never read.
    pub async fn respond<B>(self: &Arc<Self>, req: Request<B>) -> Response<Full<Bytes>> {
        let answer = self.answer(&req, None);
        drop(req);
        let (parts, body) = answer.await.into_parts();
        // A streamed answer (`/cache`, `/db`) is gathered here; one cut short by a failure
        // ends where it broke.
        let bytes = match http_body_util::BodyExt::collect(body).await {
            Ok(b) => b.to_bytes(),
            Err(e) => {
                tracing::warn!("an answer broke off: {e}");
                Bytes::new()
            }
        };
        Response::from_parts(parts, Full::new(bytes))
    }

    /// Answers one request: what needs no blocking thread (every single-ID answer from a
    /// loaded segment or the current tick) is answered before this returns. The answer keeps
    /// nothing of the request, so the caller drops it at once: the connection's read buffer,
    /// which its path and headers share, is then free again when hyper next reads into it.
    /// `wait` is the connection's header deadline ([`run`](super::run)): cleared while an
    /// answer is coming, restarted when it is handed over.
    pub(crate) fn answer<B>(
        self: &Arc<Self>,
        req: &Request<B>,
        wait: Option<&Arc<HeaderWait>>,
    ) -> Answer {
        let started = mono_ns();
        let path = req.uri().path();
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        let route = route_of(path);
        let step = match route {
            // A path too long for any route gets the same JSON errors as everything else
            // (hyper answers past its own, larger, limit, with an empty body).
            _ if path.len() > MAX_PATH_BYTES => Step::Done(Err(ApiError::new(
                StatusCode::URI_TOO_LONG,
                "path_too_long",
                format!(
                    "the path has {} bytes; at most {MAX_PATH_BYTES}",
                    path.len()
                ),
            ))),
            Route::Healthz => Step::Done(Ok(healthz())),
            Route::Readyz => Step::Done(Ok(self.readyz())),
            // The page holds no data (it fetches the JSON with the token), so it is served to
            // anyone; the JSON is guarded like every other route.
            Route::Status if !wants_status_json(req) => Step::Done(Ok(status_page())),
            _ => match self.authorize(req) {
                Err(e) => Step::Done(Err(e)),
                Ok(()) => self.route(route, path, req),
            },
        };
        match step {
            Step::Id(id) => {
                let now = self.count_and_log(route, started, 200, req.method(), req.uri().path());
                if let Some(w) = wait {
                    w.answered(now);
                }
                Answer::Id(id)
            }
            Step::Done(result) => {
                let response = result.unwrap_or_else(ApiError::response);
                let status = response.status().as_u16();
                let now =
                    self.count_and_log(route, started, status, req.method(), req.uri().path());
                if let Some(w) = wait {
                    w.answered(now);
                }
                Answer::Ready(Some(Box::new(response)))
            }
            Step::Blocking(work) => self.later(route, started, req, wait, Work::Blocking(work)),
            Step::SnowflakeInTurn(n, encode) => {
                self.later(route, started, req, wait, Work::Snowflake(n, encode))
            }
        }
    }

    /// The answer that waits for `work`; no header deadline runs meanwhile.
    #[cold]
    fn later<B>(
        self: &Arc<Self>,
        route: Route,
        started: u64,
        req: &Request<B>,
        wait: Option<&Arc<HeaderWait>>,
        work: Work,
    ) -> Answer {
        let logged =
            tracing::enabled!(target: "leafctl::access", tracing::Level::INFO).then(|| Logged {
                method: req.method().clone(),
                path: req.uri().path().to_owned(),
            });
        if let Some(w) = wait {
            w.answering();
        }
        let wait = wait.cloned();
        let this = self.clone();
        Answer::Later(Box::pin(async move {
            let result = match work {
                Work::Blocking(work) => {
                    let worker = this.clone();
                    blocking(move || work(&worker)).await
                }
                Work::Snowflake(n, encode) => this.snowflake_in_turn(n, encode).await,
            };
            let (method, path) = match &logged {
                Some(l) => (&l.method, l.path.as_str()),
                None => (&hyper::Method::GET, ""),
            };
            let response = result.unwrap_or_else(ApiError::response);
            let status = response.status().as_u16();
            let now = this.count_and_log(route, started, status, method, path);
            if let Some(w) = wait {
                w.answered(now);
            }
            response
        }))
    }

    /// Counts and logs an answered request; the time ([`mono_ns`]) it was done.
    fn count_and_log(
        &self,
        route: Route,
        started: u64,
        status: u16,
        method: &hyper::Method,
        path: &str,
    ) -> u64 {
        let now = mono_ns();
        let elapsed_ns = now.saturating_sub(started);
        self.metrics.request_ns(route, status, elapsed_ns);
        tracing::info!(
            target: "leafctl::access",
            "{} {} {} {:.3}ms",
            method,
            path,
            status,
            elapsed_ns as f64 / 1e6
        );
        now
    }

    /// Whether the request carries the bearer token, when the server requires one (compared in
    /// constant time).
    fn authorize<B>(&self, req: &Request<B>) -> Result<(), ApiError> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .and_then(|v| {
                // The scheme is case-insensitive (RFC 9110 11.1); one or more spaces follow it.
                let (scheme, rest) = v.split_at_checked(6)?;
                (scheme.eq_ignore_ascii_case(b"bearer") && rest.first() == Some(&b' '))
                    .then(|| rest.trim_ascii_start())
            })
            .unwrap_or_default();
        if bool::from(given.ct_eq(token.as_bytes())) {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server requires Authorization: Bearer TOKEN",
            ))
        }
    }
}

/// Runs work that may block (a database claim, a wait for a segment) off the event loop.
pub(super) async fn blocking(
    work: impl FnOnce() -> Result<Response<Body>, ApiError> + Send + 'static,
) -> Result<Response<Body>, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the request's worker failed: {e}"),
        ))
    })
}
