//! The "still held?" of a store whose claim lives as long as a keep-alive (an etcd lease): the
//! claim counts as lost once no keep-alive was confirmed for 2/3 of the TTL, counted from when
//! the confirmed keep-alive was *sent* (the store restarts the TTL only on receiving it), so it
//! cannot expire, and the id go to someone else, before issuing has stopped.
//!
//! Times are milliseconds on any monotonic scale the caller chooses (real stores: since the
//! lease was granted; the simulation: its own time), so the same rules run in both.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether a keep-alive-bound claim is still good. Read without locks.
#[derive(Debug)]
pub(crate) struct KeepAliveFence {
    /// When the last confirmed keep-alive (or the grant) was sent.
    confirmed_ms: AtomicU64,
    /// The claim may be used until this time.
    fence_ms: AtomicU64,
    lost: AtomicBool,
    reason: Mutex<String>,
}

impl KeepAliveFence {
    /// A claim granted by a request sent at `sent_ms` with a TTL of `ttl_ms`.
    pub(crate) fn new(sent_ms: u64, ttl_ms: u64) -> KeepAliveFence {
        let f = KeepAliveFence {
            confirmed_ms: AtomicU64::new(0),
            fence_ms: AtomicU64::new(0),
            lost: AtomicBool::new(false),
            reason: Mutex::new(String::new()),
        };
        f.confirm(sent_ms, ttl_ms);
        f
    }

    /// A keep-alive sent at `sent_ms` was answered with a TTL of `ttl_ms`.
    pub(crate) fn confirm(&self, sent_ms: u64, ttl_ms: u64) {
        let fence = sent_ms.saturating_add(ttl_ms.saturating_mul(2) / 3);
        self.confirmed_ms.fetch_max(sent_ms, Ordering::SeqCst);
        self.fence_ms.fetch_max(fence, Ordering::SeqCst);
    }

    /// The claim is lost for good (a failed keep-alive, a key gone); the first reason stays.
    pub(crate) fn lose(&self, why: String) {
        // The reason is in place before the flag says lost, so a reader that sees the flag never
        // reads an empty reason.
        let mut reason = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        if !self.lost.load(Ordering::SeqCst) {
            tracing::warn!("lease lost: {why}");
            *reason = why;
            self.lost.store(true, Ordering::SeqCst);
        }
    }

    /// `Err(reason)` once the claim could be granted to someone else.
    pub(crate) fn check(&self, now_ms: u64) -> Result<(), String> {
        if !self.lost.load(Ordering::SeqCst) {
            if now_ms < self.fence_ms.load(Ordering::SeqCst) {
                return Ok(());
            }
            let since = now_ms.saturating_sub(self.confirmed_ms.load(Ordering::SeqCst));
            self.lose(format!("no keep-alive confirmed for {since} ms"));
        }
        Err(self
            .reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fence_is_two_thirds_of_the_ttl_after_the_confirmed_send() {
        let h = KeepAliveFence::new(0, 9_000);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 6_000);
        h.confirm(1_000, 9_000);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 7_000);
        // An older confirmation never moves the fence back.
        h.confirm(0, 9_000);
        assert_eq!(h.fence_ms.load(Ordering::SeqCst), 7_000);
        assert!(h.check(6_999).is_ok());
        assert!(h.check(7_000).is_err());
    }

    #[test]
    fn a_lost_claim_stays_lost_with_its_first_reason() {
        let h = KeepAliveFence::new(0, 10_000);
        h.lose("first".into());
        h.lose("second".into());
        h.confirm(1, 10_000);
        assert_eq!(h.check(2), Err("first".to_string()));
    }
}
