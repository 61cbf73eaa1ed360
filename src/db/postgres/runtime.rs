//! The one small tokio runtime every PostgreSQL connection of the process runs on.

use std::future::Future;
use std::sync::OnceLock;

/// The runtime every PostgreSQL connection of the process runs on: one worker thread drives
/// the connections' sockets; statements are awaited by the calling thread.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("leafctl-postgres")
            .enable_all()
            .build()
            .expect("start the PostgreSQL client's runtime (a thread and an epoll instance)")
    })
}

/// Runs `fut` on the runtime and waits for it, from any thread: a plain thread blocks on it;
/// one that drives another tokio runtime (a server's handler) waits on a channel, since tokio
/// forbids `block_on` there.
pub(super) fn run<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> T {
    let rt = runtime();
    if tokio::runtime::Handle::try_current().is_err() {
        return rt.block_on(fut);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    // The runtime is static and never shut down: the task always sends.
    rx.recv()
        .expect("the PostgreSQL runtime dropped a statement")
}
