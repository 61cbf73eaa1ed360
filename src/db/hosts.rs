//! Which host of a URL's host list a store uses, written once for every database: the first
//! that answers, the next when the one in use fails, the earlier ones again after a while.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a store stays on a later host of its list before trying the earlier ones again
/// (a restarted node is used again within this).
pub const FAILBACK_AFTER: Duration = Duration::from_secs(10);

/// The host in use among `len`, with its pool `P` (anything cheap to clone that reaches it).
pub(crate) struct HostChoice<P> {
    len: usize,
    active: Mutex<Active<P>>,
    /// The store's name, for the log.
    name: String,
}

struct Active<P> {
    host: usize,
    pool: P,
    /// When it was chosen, or when earlier hosts were last tried again.
    since: Instant,
}

impl<P: Clone> HostChoice<P> {
    /// Opens the first of `len` hosts that `connect` reaches; the last error if none does
    /// (`None` only for an empty list).
    pub fn open<E>(
        name: &str,
        len: usize,
        mut connect: impl FnMut(usize) -> Result<P, E>,
    ) -> Result<HostChoice<P>, Option<E>> {
        let mut last = None;
        for host in 0..len {
            match connect(host) {
                Ok(pool) => {
                    return Ok(HostChoice {
                        len,
                        active: Mutex::new(Active {
                            host,
                            pool,
                            since: Instant::now(),
                        }),
                        name: name.to_string(),
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last)
    }

    /// How many hosts the list has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The host in use and its pool.
    pub fn current(&self) -> (usize, P) {
        let a = self.active.lock().unwrap_or_else(|p| p.into_inner());
        (a.host, a.pool.clone())
    }

    /// Moves from host `failed` (if still in use) to the next host of the list that `connect`
    /// reaches; the error of the last one tried if none does. Nothing to do with one host, or
    /// when another caller moved on already.
    pub fn advance<E>(
        &self,
        failed: usize,
        why: &dyn std::fmt::Display,
        mut connect: impl FnMut(usize) -> Result<P, E>,
    ) -> Result<(), E> {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if active.host != failed || self.len == 1 {
            return Ok(());
        }
        let mut last = None;
        for k in 1..self.len {
            let host = (failed + k) % self.len;
            match connect(host) {
                Ok(pool) => {
                    tracing::warn!(
                        "{}: host {} failed ({why}); using host {} of the list",
                        self.name,
                        failed + 1,
                        host + 1
                    );
                    *active = Active {
                        host,
                        pool,
                        since: Instant::now(),
                    };
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        match last {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// On a later host for [`FAILBACK_AFTER`]: tries the earlier ones, and moves back to the
    /// first that `connect` reaches.
    pub fn fail_back<E>(&self, mut connect: impl FnMut(usize) -> Result<P, E>) {
        let host = {
            let mut a = self.active.lock().unwrap_or_else(|p| p.into_inner());
            if a.host == 0 || a.since.elapsed() < FAILBACK_AFTER {
                return;
            }
            a.since = Instant::now();
            a.host
        };
        for earlier in 0..host {
            if let Ok(pool) = connect(earlier) {
                let mut a = self.active.lock().unwrap_or_else(|p| p.into_inner());
                if a.host == host {
                    tracing::info!(
                        "{}: host {} answers again; using it",
                        self.name,
                        earlier + 1
                    );
                    *a = Active {
                        host: earlier,
                        pool,
                        since: Instant::now(),
                    };
                }
                return;
            }
        }
    }
}
