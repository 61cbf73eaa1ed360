//! The yardstick for `scripts/bench serve`: the smallest hyper server that answers every request
//! with a constant 19-digit number, on the same runtime settings as `leafctl serve`. Whatever it
//! reaches is what the HTTP stack alone allows on this machine.
//!
//! `cargo run --release --example hyper_baseline -- 127.0.0.1:18081`

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18081".into());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("hyper_baseline: listening on http://{addr}");
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(|_req: Request<hyper::body::Incoming>| async {
                    let mut r =
                        Response::new(Full::new(Bytes::from_static(b"2124556629465632814")));
                    r.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("text/plain;charset=UTF-8"),
                    );
                    Ok::<_, Infallible>(r)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
