//! Watching over each connection: the header timeout and graceful shutdown, at a cost per
//! connection rather than per request.
//!
//! hyper's own header timeout allocates a timer entry and registers it with the runtime's timer
//! for every request (and polls its read path once more each time to start it; tokio answers
//! that from its readiness flags, without a system call), and hyper-util's graceful shutdown
//! polls a channel on every wake-up. Here each connection has one timer, a
//! watchdog that the runtime wakes at most once per timeout period, and a flag read on each poll.
//!
//! The header timeout keeps hyper's meaning: the wait for a request's headers starts when the
//! connection is accepted and again when an answer is handed to hyper (the clock reading the
//! latency metric takes anyway), and it stops when hyper has parsed a request's headers and
//! calls the service. While a request is being answered (a blocking claim, say) there is no
//! deadline. When the watchdog finds the deadline passed, the connection is closed without an
//! answer, as hyper closes it.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The monotonic clock (`CLOCK_MONOTONIC`, that of [`std::time::Instant`]) in nanoseconds.
pub(crate) fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the struct passed; CLOCK_MONOTONIC always exists on
    // Linux, so it cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// One connection's header deadline, set by its service and read by its watchdog.
#[derive(Debug)]
pub(crate) struct HeaderWait {
    /// [`mono_ns`] by which the next request's headers must have arrived; 0 while a request is
    /// being answered.
    deadline: AtomicU64,
    timeout_ns: u64,
}

impl HeaderWait {
    /// The wait for the first request's headers, starting now.
    pub(crate) fn new(timeout: Duration) -> HeaderWait {
        let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        HeaderWait {
            deadline: AtomicU64::new(mono_ns().saturating_add(timeout_ns).max(1)),
            timeout_ns,
        }
    }

    /// A request's headers have arrived and its answer will come later: no deadline until then.
    pub(crate) fn answering(&self) {
        self.deadline.store(0, Ordering::Relaxed);
    }

    /// An answer was handed over at `now` ([`mono_ns`]): the wait for the next request starts.
    pub(crate) fn answered(&self, now: u64) {
        self.deadline.store(
            now.saturating_add(self.timeout_ns).max(1),
            Ordering::Relaxed,
        );
    }
}

/// Tells every open connection to finish its request in flight and close.
#[derive(Debug, Default)]
pub(crate) struct Closing {
    closing: AtomicBool,
    /// The task of each open connection that has been polled, by connection number.
    wakers: Mutex<HashMap<u64, Waker>>,
    next: AtomicU64,
}

impl Closing {
    /// Asks every connection, open now or accepted later, to close once idle.
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let wakers = self.wakers.lock().unwrap_or_else(|p| p.into_inner());
        for w in wakers.values() {
            w.wake_by_ref();
        }
    }
}

/// A connection's entry in [`Closing`], removed when the connection ends.
struct Registration {
    closing: Arc<Closing>,
    id: u64,
    waker: Option<Waker>,
}

impl Registration {
    /// Makes sure [`Closing::close`] wakes the task polling with `waker` (no lock unless the
    /// task's waker changed, which for a spawned task happens only on its first poll). Whether
    /// it changed.
    #[inline]
    fn update(&mut self, waker: &Waker) -> bool {
        if self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            return false;
        }
        self.waker = Some(waker.clone());
        self.closing
            .wakers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(self.id, waker.clone());
        true
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.waker.is_some() {
            self.closing
                .wakers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&self.id);
        }
    }
}

/// How a supervised connection ended.
pub(crate) enum Ended<E> {
    /// The connection itself finished (the client closed it, an error, a graceful close).
    Finished(Result<(), E>),
    /// A request's headers had not arrived by the deadline: closed without an answer.
    HeaderTimeout,
}

/// Drives `conn` until it ends, closing it when [`HeaderWait`]'s deadline passes and calling
/// `graceful` on it once [`Closing::close`] is called.
pub(crate) async fn supervise<C, E>(
    mut conn: C,
    graceful: impl Fn(Pin<&mut C>),
    wait: &HeaderWait,
    closing: &Arc<Closing>,
) -> Ended<E>
where
    C: Future<Output = Result<(), E>> + Unpin,
{
    let mut registration = Registration {
        closing: closing.clone(),
        id: closing.next.fetch_add(1, Ordering::Relaxed),
        waker: None,
    };
    let mut told = false;
    let watchdog = tokio::time::sleep(Duration::from_nanos(wait.timeout_ns));
    tokio::pin!(watchdog);
    // The watchdog must be polled after each (re)setting, and whenever the task's waker
    // changes, for its wake-up to reach this task; in between, whether it went off is a load.
    let mut watchdog_polled = false;
    std::future::poll_fn(|cx: &mut Context<'_>| {
        if registration.update(cx.waker()) {
            watchdog_polled = false;
        }
        if !told && closing.closing.load(Ordering::SeqCst) {
            graceful(Pin::new(&mut conn));
            told = true;
        }
        if let Poll::Ready(r) = Pin::new(&mut conn).poll(cx) {
            return Poll::Ready(Ended::Finished(r));
        }
        loop {
            if !watchdog_polled {
                // Outside the task's budget: a Pending here always means the timer is set
                // and will wake this task (a budget-exhausted Pending would not).
                let mut once = tokio::task::unconstrained(watchdog.as_mut());
                if Pin::new(&mut once).poll(cx).is_pending() {
                    watchdog_polled = true;
                    return Poll::Pending;
                }
            } else if !watchdog.is_elapsed() {
                return Poll::Pending;
            }
            // The watchdog went off: the deadline has passed, or it moved on since it was set.
            let now = mono_ns();
            let deadline = wait.deadline.load(Ordering::Relaxed);
            if deadline != 0 && deadline <= now {
                return Poll::Ready(Ended::HeaderTimeout);
            }
            // Any deadline set from now on is at least a timeout away.
            let next = if deadline != 0 {
                deadline - now
            } else {
                wait.timeout_ns
            };
            watchdog
                .as_mut()
                .reset(tokio::time::Instant::now() + Duration::from_nanos(next));
            watchdog_polled = false;
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A connection that never finishes on its own: it ends when told to close gracefully.
    struct Idle {
        graceful: bool,
    }

    impl Future for Idle {
        type Output = Result<(), ()>;
        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
            if self.graceful {
                Poll::Ready(Ok(()))
            } else {
                Poll::Pending
            }
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_clock_is_instants_clock() {
        let a = Instant::now();
        let n = mono_ns();
        let b = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let m = mono_ns();
        let c = Instant::now();
        let between = m - n;
        assert!(between >= 20_000_000, "{between}");
        assert!(u128::from(between) <= (c - a).as_nanos(), "{between}");
        assert!(b >= a);
    }

    /// How long an idle connection under `wait` lasts; it must end at the header timeout.
    async fn until_header_timeout(wait: &HeaderWait) -> Duration {
        let closing = Arc::new(Closing::default());
        let start = Instant::now();
        let ended = supervise(Idle { graceful: false }, |_| {}, wait, &closing).await;
        assert!(matches!(ended, Ended::HeaderTimeout));
        start.elapsed()
    }

    #[test]
    fn an_idle_connection_is_closed_at_the_deadline_and_not_before() {
        runtime().block_on(async {
            let took = until_header_timeout(&HeaderWait::new(Duration::from_millis(300))).await;
            assert!(took >= Duration::from_millis(290), "{took:?}");
            assert!(took < Duration::from_millis(1500), "{took:?}");
        });
    }

    #[test]
    fn no_deadline_while_answering_and_a_new_one_after_each_answer() {
        runtime().block_on(async {
            let wait = Arc::new(HeaderWait::new(Duration::from_millis(300)));
            let w = wait.clone();
            let answers = tokio::spawn(async move {
                // Headers in at 100 ms, a slow answer (longer than the timeout) until 700 ms.
                tokio::time::sleep(Duration::from_millis(100)).await;
                w.answering();
                tokio::time::sleep(Duration::from_millis(600)).await;
                w.answered(mono_ns());
            });
            let took = until_header_timeout(&wait).await;
            answers.await.unwrap();
            // 700 ms + 300 ms.
            assert!(took >= Duration::from_millis(990), "{took:?}");
            assert!(took < Duration::from_millis(2500), "{took:?}");
        });
    }

    #[test]
    fn closing_tells_open_connections() {
        runtime().block_on(async {
            let wait = HeaderWait::new(Duration::from_secs(60));
            let closing = Arc::new(Closing::default());
            let c = closing.clone();
            let closer = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                c.close();
            });
            let start = Instant::now();
            let ended = supervise(
                Idle { graceful: false },
                |mut conn: Pin<&mut Idle>| conn.graceful = true,
                &wait,
                &closing,
            )
            .await;
            closer.await.unwrap();
            assert!(matches!(ended, Ended::Finished(Ok(()))));
            assert!(start.elapsed() < Duration::from_secs(5));
            assert!(
                closing.wakers.lock().unwrap().is_empty(),
                "a closed connection stays registered"
            );
        });
    }
}
