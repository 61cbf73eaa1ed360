//! Writing results: JSON and text documents, and one file per concern: the output formats
//! ([`format`]), streams of IDs and rows ([`ids`]), the progress bar ([`progress`]), tables
//! ([`table`]), times as people read them ([`times`]) and lines on stderr ([`stderr`]).

use std::io::{self, Write};

use serde::Serialize;

use super::error::{ClosedPipe, OutputFailed};

mod digits;
mod format;
mod ids;
mod progress;
pub mod stderr;
mod table;
mod times;

pub use digits::push_decimal;
pub use format::{OutputFormat, RowFormat};
pub use ids::*;
pub use progress::*;
pub use table::*;
pub use times::*;

/// Maps a write error to [`ClosedPipe`] when the reader went away, so the run ends quietly;
/// any other to [`OutputFailed`] (exit 3).
pub fn write_err(e: io::Error) -> anyhow::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ClosedPipe.into()
    } else {
        OutputFailed {
            message: format!("cannot write to standard output: {e}"),
        }
        .into()
    }
}

/// Why standard output cannot take IDs, found before any is claimed.
#[derive(Debug)]
pub enum StdoutProblem {
    /// Nobody reads the pipe any more.
    ReaderGone,
    /// Closed when leafctl started (`>&-`), or open for reading only.
    Closed,
    /// A write fails (`>/dev/full`: no space left).
    Fails(io::Error),
}

/// Descriptors 1 and 2 as the process found them when it started, before Rust's runtime put
/// `/dev/null` (opened read-write) in place of a closed one: afterwards a closed descriptor
/// and a `/dev/null` that a parent gave (Python's `subprocess.DEVNULL`, Node's `'ignore'`,
/// also read-write) cannot be told apart.
static CLOSED_AT_START: [std::sync::atomic::AtomicBool; 3] = [
    std::sync::atomic::AtomicBool::new(false),
    std::sync::atomic::AtomicBool::new(false),
    std::sync::atomic::AtomicBool::new(false),
];

/// Records which of descriptors 0-2 are closed. Run from `.init_array`, which the C runtime
/// calls before `main`, and so before Rust's runtime opens `/dev/null` in their place.
#[cfg(target_os = "linux")]
extern "C" fn record_closed_descriptors() {
    for (fd, closed) in CLOSED_AT_START.iter().enumerate() {
        // SAFETY: fcntl(2) with F_GETFD only reads the descriptor's flags.
        let open = unsafe { libc::fcntl(fd as libc::c_int, libc::F_GETFD) } != -1;
        closed.store(!open, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_CLOSED_DESCRIPTORS: extern "C" fn() = record_closed_descriptors;

/// Whether descriptor `fd` (0-2) was closed when leafctl started.
pub fn closed_at_start(fd: usize) -> bool {
    CLOSED_AT_START
        .get(fd)
        .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
}

/// Checks, before anything is claimed, that standard output can be written: not closed at
/// start ([`closed_at_start`]: `/dev/null` in either mode is a place to discard output), open
/// for writing, accepting an empty write (`/dev/full` refuses even that), and for a pipe,
/// still read.
pub fn check_stdout() -> Result<(), StdoutProblem> {
    if closed_at_start(1) {
        return Err(StdoutProblem::Closed);
    }
    #[cfg(unix)]
    {
        // SAFETY: fcntl(2) with F_GETFL on descriptor 1 only reads its flags.
        let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
        if flags == -1 || flags & libc::O_ACCMODE == libc::O_RDONLY {
            return Err(StdoutProblem::Closed);
        }
        // SAFETY: fstat(2) writes into the zeroed struct we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(1, &mut st) } == -1 {
            return Err(StdoutProblem::Closed);
        }
        // SAFETY: a write(2) of zero bytes from a valid (empty) buffer changes nothing.
        if unsafe { libc::write(1, b"".as_ptr().cast(), 0) } == -1 {
            let e = io::Error::last_os_error();
            return Err(if e.kind() == io::ErrorKind::BrokenPipe {
                StdoutProblem::ReaderGone
            } else {
                StdoutProblem::Fails(e)
            });
        }
        if st.st_mode & libc::S_IFMT == libc::S_IFIFO {
            let mut pfd = libc::pollfd {
                fd: 1,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: poll(2) on one pollfd we own, without waiting.
            let ready = unsafe { libc::poll(&mut pfd, 1, 0) };
            if ready == 1 && pfd.revents & libc::POLLERR != 0 {
                return Err(StdoutProblem::ReaderGone);
            }
        }
    }
    Ok(())
}

/// Prints a serialisable value as pretty JSON with a trailing newline.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    // Made whole first: a failed write is then told apart from a value that cannot be JSON.
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&text).map_err(write_err)?;
    out.flush().map_err(write_err)
}

/// Prints text to stdout, ending quietly on a closed pipe.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(write_err)?;
    if !text.ends_with('\n') {
        out.write_all(b"\n").map_err(write_err)?;
    }
    out.flush().map_err(write_err)
}
