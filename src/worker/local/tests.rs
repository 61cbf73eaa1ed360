use super::*;
use std::fs;

use crate::snowflake::FakeClock;
use crate::worker::files::StateError;

/// A fresh state directory and a clock at 10 s.
fn fresh() -> (tempfile::TempDir, Arc<FakeClock>) {
    (
        tempfile::tempdir().unwrap(),
        Arc::new(FakeClock::new(10_000)),
    )
}

/// Worker `worker` of `leaf` in `dir`, without waiting for another holder, on `clock`, for a
/// generator that may lead the clock by `lead_ms`.
fn lease(
    dir: &tempfile::TempDir,
    clock: &Arc<FakeClock>,
    worker: u64,
    lead_ms: u64,
) -> Result<LocalWorkerLease, WorkerError> {
    LocalWorkerLease::acquire(dir.path(), "leaf", worker, true, clock.clone(), lead_ms)
}

/// A holder of worker 7 (leading by `lead_ms`) that reserved up to `unix_ms`, then crashed:
/// dropped without `finish`.
fn crash_after_extending(
    dir: &tempfile::TempDir,
    clock: &Arc<FakeClock>,
    lead_ms: u64,
    unix_ms: i64,
) {
    let a = lease(dir, clock, 7, lead_ms).unwrap();
    a.extend(unix_ms).unwrap();
}

/// The next holder of worker 7 (leading by `lead_ms`), which must resume after `unix_ms`.
fn successor(
    dir: &tempfile::TempDir,
    clock: &Arc<FakeClock>,
    lead_ms: u64,
    unix_ms: i64,
) -> LocalWorkerLease {
    let b = lease(dir, clock, 7, lead_ms).unwrap();
    assert_eq!(b.resume_after_ms(), Some(unix_ms));
    b
}

/// The state error a refused [`lease`] answers.
fn refusal(r: Result<LocalWorkerLease, WorkerError>) -> StateError {
    match r {
        Err(WorkerError::State(e)) => e,
        other => panic!("expected a state error: {other:?}"),
    }
}

#[test]
fn second_holder_is_refused_with_no_wait() {
    let (dir, clock) = fresh();
    let _a = lease(&dir, &clock, 7, 0).unwrap();
    let b = lease(&dir, &clock, 7, 0);
    assert!(matches!(
        b,
        Err(WorkerError::State(StateError::InUse { worker: 7, .. }))
    ));
    assert!(lease(&dir, &clock, 8, 0).is_ok());
}

#[test]
fn clean_finish_records_the_exact_time() {
    let (dir, clock) = fresh();
    {
        let a = lease(&dir, &clock, 7, 0).unwrap();
        assert_eq!(a.resume_after_ms(), None);
        let fence = a.extend(10_000).unwrap();
        assert!(fence > 10_000 && fence <= 10_000 + RESERVATION_WINDOW_MS);
        a.finish(Some(10_002)).unwrap();
    }
    successor(&dir, &clock, 0, 10_002);
    assert_eq!(
        clock.slept_ms(),
        0,
        "a clean record is never waited on here"
    );
}

#[test]
fn crashed_reservation_is_waited_out() {
    let (dir, clock) = fresh();
    crash_after_extending(&dir, &clock, 0, 10_000);
    successor(&dir, &clock, 0, 10_000 + RESERVATION_WINDOW_MS - 1);
    assert_eq!(clock.now_ms(), 10_000 + RESERVATION_WINDOW_MS);
}

#[test]
fn clock_far_behind_a_reservation_is_refused() {
    let (dir, clock) = fresh();
    crash_after_extending(&dir, &clock, 0, 10_000);
    clock.set_ms(5_000);
    let e = refusal(lease(&dir, &clock, 7, 0));
    assert!(matches!(e, StateError::ClockBehind { .. }), "{e:?}");
}

#[test]
fn a_try_extension_answers_inside_the_record_and_never_writes() {
    let (dir, clock) = fresh();
    let a = lease(&dir, &clock, 7, 0).unwrap();
    assert!(
        a.try_extend(10_000).is_none(),
        "nothing recorded yet: the record must be written first"
    );
    let fence = a.extend(10_000).unwrap();
    let on_disk = read_state(a.state_path()).unwrap().unwrap();
    assert_eq!(fence, on_disk.issued_below_ms);
    // Inside what the state file records, the answer comes from memory and matches
    // extend's: early in the window, so the renewer is not woken and writes nothing. Its
    // rounds hold the state for a moment, and a try meeting one declines: ask again.
    let tried = (0..1000)
        .find_map(|_| {
            a.try_extend(10_001).or_else(|| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                None
            })
        })
        .unwrap()
        .unwrap();
    assert!(tried > 10_001 && tried < fence, "{tried} vs {on_disk:?}");
    assert_eq!(a.extend(10_001).unwrap(), tried);
    assert_eq!(read_state(a.state_path()).unwrap().unwrap(), on_disk);
    // From the record on, only the blocking extension may write.
    assert!(a.try_extend(fence).is_none());
    a.finish(Some(fence)).unwrap();
    assert!(
        matches!(
            a.try_extend(fence),
            Some(Err(SnowflakeError::FenceFailed(_)))
        ),
        "a lease given back answers with the same error as extend"
    );
}

#[test]
fn fences_never_pass_the_durable_reservation() {
    let (dir, clock) = fresh();
    let a = lease(&dir, &clock, 7, 0).unwrap();
    let mut t = 10_000;
    for _ in 0..50 {
        let fence = a.extend(t).unwrap();
        assert!(fence > t, "the fence covers the time asked for");
        let on_disk = read_state(a.state_path()).unwrap().unwrap();
        assert!(!on_disk.clean);
        assert!(
            on_disk.issued_below_ms >= fence,
            "fence {fence} beyond the disk's {on_disk:?}"
        );
        t = fence;
    }
    // The last time issued is below the last fence.
    a.finish(Some(t - 1)).unwrap();
    let on_disk = read_state(a.state_path()).unwrap().unwrap();
    assert_eq!((on_disk.issued_below_ms, on_disk.clean), (t, true));
}

#[test]
fn corrupt_state_is_an_error() {
    let (dir, clock) = fresh();
    fs::write(dir.path().join("snowflake-leaf-7.json"), "{not json").unwrap();
    let e = refusal(lease(&dir, &clock, 7, 0));
    assert!(matches!(e, StateError::Corrupt { .. }), "{e:?}");
}

#[test]
fn a_leading_runs_crash_is_waited_out_down_to_the_next_runs_lead() {
    let (dir, clock) = fresh();
    {
        let a = lease(&dir, &clock, 7, 5_000).unwrap();
        // Issuing 4 s ahead of the clock: the reservation covers it before IDs go out.
        let fence = a.extend(14_000).unwrap();
        assert!(fence > 14_000);
        let on_disk = read_state(a.state_path()).unwrap().unwrap();
        assert!(on_disk.issued_below_ms >= fence && on_disk.max_lead_ms == 5_000);
        // Crash: no finish().
    }
    // Reserved at once: the lead past the clock, plus the window.
    let recorded = 10_000 + 5_000 + RESERVATION_WINDOW_MS;
    // The same lead: the record is within it after at most the reservation window.
    let b = successor(&dir, &clock, 5_000, recorded - 1);
    assert_eq!(clock.now_ms(), recorded - 5_000);
    drop(b);
    // Without a lead: the whole record is waited out (it is the previous run's lead).
    clock.set_ms(10_000);
    successor(&dir, &clock, 0, recorded - 1);
    assert_eq!(clock.now_ms(), recorded);
}

#[test]
fn a_clean_record_ahead_of_the_clock_is_continued_within_the_lead() {
    let (dir, clock) = fresh();
    {
        let a = lease(&dir, &clock, 7, 5_000).unwrap();
        a.extend(12_000).unwrap();
        a.finish(Some(12_345)).unwrap();
    }
    let on_disk = read_state(&dir.path().join("snowflake-leaf-7.json"))
        .unwrap()
        .unwrap();
    assert_eq!((on_disk.issued_below_ms, on_disk.clean), (12_346, true));
    let b = successor(&dir, &clock, 5_000, 12_345);
    assert_eq!(
        clock.slept_ms(),
        0,
        "no wait: the generator continues within its lead"
    );
    drop(b);
    successor(&dir, &clock, 0, 12_345);
    assert_eq!(
        clock.now_ms(),
        12_346,
        "without a lead: waits until the record passes"
    );
}

#[test]
fn a_record_further_ahead_than_its_run_could_put_it_is_refused() {
    let (dir, clock) = fresh();
    crash_after_extending(&dir, &clock, 2_000, 12_000);
    // The clock went back 5 s: the record is 8 s ahead, the previous run allowed 3 s.
    clock.set_ms(5_000);
    let e = refusal(lease(&dir, &clock, 7, 2_000));
    assert!(
        matches!(
            e,
            StateError::ClockBehind {
                behind_ms: 8_000,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(clock.slept_ms(), 0);
    // A lead that covers it continues at once (the IDs stay within this run's lead).
    successor(&dir, &clock, 10_000, 12_000 + RESERVATION_WINDOW_MS - 1);
}

/// A lock this process released stays taken while a child process started meanwhile (by any
/// thread) still shares its open file, until the child runs its program or exits. Taking the
/// worker id again at once with `no_wait` then waits for that moment (up to 1 s) instead of
/// being refused as if another process held it. The child here keeps the lock's file open for
/// 300 ms, as a child that is slow to start would.
#[test]
fn a_lock_released_while_a_child_shares_its_file_is_taken_again_with_no_wait() {
    use std::os::unix::process::CommandExt;
    let (dir, clock) = fresh();
    let first = lease(&dir, &clock, 4, 0).unwrap();
    let lock_path = dir.path().join("snowflake-leaf-4.lock");
    let fd: i32 = fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| fs::read_link(e.path()).is_ok_and(|p| p == lock_path))
        .and_then(|e| e.file_name().to_str()?.parse().ok())
        .expect("the lease's lock file is open");
    let mut command = std::process::Command::new("sleep");
    command.arg("0.3");
    // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on `fd` in the child.
    unsafe {
        command.pre_exec(move || {
            libc::fcntl(fd, libc::F_SETFD, 0);
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    first.finish(None).unwrap();
    drop(first);
    let again = lease(&dir, &clock, 4, 0);
    let _ = child.wait();
    let again = again.unwrap_or_else(|e| panic!("refused after its own release: {e}"));
    again.finish(None).unwrap();
}
