//! Time sources for the generator: the system clock, and a fake one for tests.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the generator reads the time and how it waits; a trait so tests can move time by hand.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch (negative before 1970).
    fn now_ms(&self) -> i64;
    /// Blocks for about `ms` milliseconds.
    fn sleep_ms(&self, ms: u64);
    /// Blocks until `now_ms() >= target_ms`, without spinning for more than a fraction of a ms.
    fn sleep_until_ms(&self, target_ms: i64);
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

fn now_micros() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_micros().div_euclid(1000)
    }

    fn sleep_ms(&self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn sleep_until_ms(&self, target_ms: i64) {
        // Sleep most of the way, then yield for the last stretch, so a tick is not lost to
        // oversleeping. The kernel's default timer slack (50 µs) would make every sleep overshoot,
        // so it is lowered to 1 µs for the duration of the wait only.
        const YIELD_WINDOW_US: i64 = 100;
        let target_us = target_ms.saturating_mul(1000);
        let _slack = PreciseTimers::enable();
        loop {
            let remaining = target_us - now_micros();
            if remaining <= 0 {
                return;
            }
            if remaining > YIELD_WINDOW_US {
                std::thread::sleep(Duration::from_micros((remaining - YIELD_WINDOW_US) as u64));
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Lowers this thread's timer slack while alive and restores it on drop (Linux; elsewhere a no-op).
struct PreciseTimers {
    #[cfg(target_os = "linux")]
    previous_ns: Option<libc::c_ulong>,
}

impl PreciseTimers {
    fn enable() -> PreciseTimers {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: PR_GET/SET_TIMERSLACK only read or set a per-thread integer.
            let previous = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
            let previous_ns = if previous > 1_000 {
                let ok = unsafe {
                    libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0)
                };
                (ok == 0).then_some(previous as libc::c_ulong)
            } else {
                None
            };
            PreciseTimers { previous_ns }
        }
        #[cfg(not(target_os = "linux"))]
        PreciseTimers {}
    }
}

impl Drop for PreciseTimers {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(ns) = self.previous_ns {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) };
        }
    }
}

/// A clock that only moves when told to; sleeping advances it by the time slept.
///
/// ```
/// use leafctl::snowflake::{Clock, FakeClock};
/// let clock = FakeClock::new(1_000);
/// clock.sleep_ms(5);
/// assert_eq!(clock.now_ms(), 1_005);
/// clock.set_ms(900); // the clock jumps back
/// assert_eq!(clock.now_ms(), 900);
/// ```
#[derive(Debug)]
pub struct FakeClock {
    now: AtomicI64,
    slept_ms: AtomicI64,
}

impl FakeClock {
    /// A fake clock reading `now_ms`.
    pub fn new(now_ms: i64) -> Self {
        FakeClock {
            now: AtomicI64::new(now_ms),
            slept_ms: AtomicI64::new(0),
        }
    }
    /// Sets the time, forwards or backwards.
    pub fn set_ms(&self, now_ms: i64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }
    /// Moves the time by `delta_ms` (negative moves it back).
    pub fn advance_ms(&self, delta_ms: i64) {
        self.now.fetch_add(delta_ms, Ordering::SeqCst);
    }
    /// Total milliseconds callers have slept on this clock.
    pub fn slept_ms(&self) -> i64 {
        self.slept_ms.load(Ordering::SeqCst)
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
    fn sleep_ms(&self, ms: u64) {
        self.slept_ms.fetch_add(ms as i64, Ordering::SeqCst);
        self.now.fetch_add(ms as i64, Ordering::SeqCst);
    }
    fn sleep_until_ms(&self, target_ms: i64) {
        let now = self.now.load(Ordering::SeqCst);
        if target_ms > now {
            self.sleep_ms((target_ms - now) as u64);
        }
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
    fn sleep_ms(&self, ms: u64) {
        (**self).sleep_ms(ms)
    }
    fn sleep_until_ms(&self, target_ms: i64) {
        (**self).sleep_until_ms(target_ms)
    }
}
