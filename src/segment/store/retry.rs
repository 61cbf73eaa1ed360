//! Write conflicts (an InnoDB deadlock, a Galera certification failure): how often a statement
//! is tried again and how long it backs off first.

use super::*;

/// How often a claim is tried when it loses a write conflict (error 1213: an InnoDB deadlock,
/// or a Galera certification failure, a normal answer on a multi-writer cluster) before the
/// conflict is reported.
pub const CONFLICT_TRIES: u32 = 10;
/// The backoff before retry `n` is drawn from `[cap/2, cap]`, with `cap` doubling from this
/// bound up to [`CONFLICT_BACKOFF_MAX`]: about 0.8 s of waiting in all, at most.
const CONFLICT_BACKOFF_MIN: Duration = Duration::from_millis(2);
const CONFLICT_BACKOFF_MAX: Duration = Duration::from_millis(250);

/// The jittered wait after the `tries`-th conflict: claimants that collided once spread out
/// instead of colliding again in step.
pub(crate) fn conflict_backoff(tries: u32) -> Duration {
    let cap = CONFLICT_BACKOFF_MIN
        .saturating_mul(1 << tries.min(16))
        .min(CONFLICT_BACKOFF_MAX);
    let half = cap / 2;
    // A fresh RandomState is randomly keyed: enough randomness for a jitter, no extra crate.
    let draw = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), tries);
    let span = u64::try_from(half.as_micros()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_micros(draw % span)
}

/// How one try of a claim (or a tag command) ended, when it did not succeed.
pub(crate) enum Attempt {
    /// Lost a write conflict: nothing was claimed, and trying again is the answer.
    Conflict(String),
    /// The host in use cannot take it (gone, read-only, outside the primary component):
    /// another host of the list might. Nothing was claimed, or a claim of unknown outcome
    /// (its answer lost) is abandoned: a gap, never a duplicate.
    HostDown(SegmentError, usize),
    /// Anything else: reported as it is.
    Failed(SegmentError),
}

impl From<SegmentError> for Attempt {
    fn from(e: SegmentError) -> Attempt {
        Attempt::Failed(e)
    }
}

/// A claim (or a tag command) tried until it ends: a lost write conflict is tried again after
/// a jittered wait (up to [`CONFLICT_TRIES`] times), a host that cannot serve hands over to the
/// next host of the list (`advance`; each other host once per try), anything else is the
/// answer. `once` makes one try on the host in use.
pub(crate) fn with_retries<T>(
    db: &str,
    tag: &str,
    hosts: usize,
    mut once: impl FnMut() -> Result<T, Attempt>,
    mut advance: impl FnMut(usize, &SegmentError) -> Result<(), SegmentError>,
) -> Result<T, SegmentError> {
    let mut tries = 0;
    let mut hops = 0;
    loop {
        tries += 1;
        match once() {
            Ok(claim) => return Ok(claim),
            Err(Attempt::Failed(e)) => return Err(e),
            Err(Attempt::HostDown(e, host)) => {
                if hops + 1 >= hosts {
                    return Err(e);
                }
                hops += 1;
                tries -= 1;
                advance(host, &e)?;
            }
            Err(Attempt::Conflict(detail)) if tries >= CONFLICT_TRIES => {
                return Err(SegmentError::Conflict {
                    tag: tag.into(),
                    db: db.to_string(),
                    tries,
                    detail,
                });
            }
            Err(Attempt::Conflict(detail)) => {
                let wait = conflict_backoff(tries);
                tracing::debug!(
                    "a write for tag {tag:?} lost a write conflict ({detail}); try {tries} of \
                     {CONFLICT_TRIES}, retrying in {} ms",
                    wait.as_millis()
                );
                std::thread::sleep(wait);
            }
        }
    }
}

/// A bump tried until it ends: `read` gives the tag's max_id (`None`: unknown tag), `set`
/// moves it from the value read to `to` in one compare-and-set statement (`false`: a claim
/// moved it meanwhile, so look again). Never moves a tag down. `E` is the stores' error, or an
/// [`Attempt`] when the whole bump is one try of [`with_retries`].
pub(crate) fn bump_with_retries<E: From<SegmentError>>(
    db: &str,
    tag: &str,
    to: i64,
    mut read: impl FnMut() -> Result<Option<i64>, E>,
    mut set: impl FnMut(i64) -> Result<bool, E>,
) -> Result<i64, E> {
    for _ in 0..CONFLICT_TRIES {
        let Some(max_id) = read()? else {
            return Err(unknown_tag(tag, db).into());
        };
        check_bump(tag, max_id, to)?;
        if max_id == to || set(max_id)? {
            return Ok(max_id);
        }
    }
    Err(SegmentError::Conflict {
        tag: tag.into(),
        db: db.to_string(),
        tries: CONFLICT_TRIES,
        detail: "the tag was claimed from between every read and update".into(),
    }
    .into())
}
