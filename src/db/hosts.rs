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

/// Connects to the first of `len` hosts that `connect` reaches, trying them in the list's order
/// starting at `from` (wrapping around): the host's index with what `connect` made, or the last
/// error (`None` only for an empty list). Every way a database picks a host starts here.
pub(crate) fn first_answering<P, E>(
    len: usize,
    from: usize,
    mut connect: impl FnMut(usize) -> Result<P, E>,
) -> Result<(usize, P), Option<E>> {
    let mut last = None;
    for k in 0..len {
        let host = (from + k) % len;
        match connect(host) {
            Ok(p) => return Ok((host, p)),
            Err(e) => last = Some(e),
        }
    }
    Err(last)
}

impl<P: Clone> HostChoice<P> {
    /// Opens the first of `len` hosts that `connect` reaches; the last error if none does
    /// (`None` only for an empty list).
    pub fn open<E>(
        name: &str,
        len: usize,
        connect: impl FnMut(usize) -> Result<P, E>,
    ) -> Result<HostChoice<P>, Option<E>> {
        let (host, pool) = first_answering(len, 0, connect)?;
        Ok(HostChoice {
            len,
            active: Mutex::new(Active {
                host,
                pool,
                since: Instant::now(),
            }),
            name: name.to_string(),
        })
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
        // The other hosts, from the one after the failed one round to the one before it.
        let others = self.len - 1;
        match first_answering(others, 0, |k| connect((failed + 1 + k) % self.len)) {
            Ok((k, pool)) => {
                let host = (failed + 1 + k) % self.len;
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
                Ok(())
            }
            Err(Some(e)) => Err(e),
            Err(None) => Ok(()),
        }
    }

    /// On a later host for [`FAILBACK_AFTER`]: tries the earlier ones, and moves back to the
    /// first that `connect` reaches.
    pub fn fail_back<E>(&self, connect: impl FnMut(usize) -> Result<P, E>) {
        let host = {
            let mut a = self.active.lock().unwrap_or_else(|p| p.into_inner());
            if a.host == 0 || a.since.elapsed() < FAILBACK_AFTER {
                return;
            }
            a.since = Instant::now();
            a.host
        };
        if let Ok((earlier, pool)) = first_answering(host, 0, connect) {
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
        }
    }
}
