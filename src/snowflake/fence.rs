//! What bounds the times a generator may issue at.

use super::SnowflakeError;
#[cfg(doc)]
use super::SnowflakeGeneratorBuilder;

/// An upper bound on the time of IDs a generator may issue, held by whatever guarantees that no one
/// else issues IDs for this worker id (a lease, a state file, a database row).
///
/// The generator issues an ID at Unix time `t` only while `t < fence`. When it needs to go past the
/// fence it calls [`TimeFence::extend`] (or, when it must not block, [`TimeFence::try_extend`]),
/// under its lock, before any ID at `t` is returned; an error there stops issuing. With a lead
/// ([`SnowflakeGeneratorBuilder::max_lead_ms`]) `t` may be ahead of the clock: the fence records
/// it like any other time.
pub trait TimeFence: Send + Sync {
    /// Makes IDs at `unix_ms` safe to issue and returns the new fence, which must be `> unix_ms`.
    ///
    /// For a time ahead of the clock a fence may also answer "not yet" by returning a value
    /// `<= unix_ms` (it cannot record times ahead just now); the generator then waits for the
    /// clock to reach `unix_ms` and asks again. For a time the clock has reached, such an answer
    /// is an error ([`SnowflakeError::FenceReached`]).
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError>;

    /// [`TimeFence::extend`] for a caller that must not block (an async server's event loop):
    /// `None` when the answer needs I/O or waiting for a lock, else what `extend` would return.
    /// A fence whose record already covers `unix_ms` answers from memory. The default is always
    /// `None`, which only sends every extension to the blocking path.
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        let _ = unix_ms;
        None
    }
}

impl<T: TimeFence + ?Sized> TimeFence for std::sync::Arc<T> {
    fn extend(&self, unix_ms: i64) -> Result<i64, SnowflakeError> {
        (**self).extend(unix_ms)
    }
    fn try_extend(&self, unix_ms: i64) -> Option<Result<i64, SnowflakeError>> {
        (**self).try_extend(unix_ms)
    }
}
