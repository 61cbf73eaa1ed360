//! Lines on stderr that never panic (the `stderr!` macro writes through here).

use std::io::{self, Write};

/// Writes one line to stderr (a note, a warning, an error): never panics. Returns whether the
/// line was written; a closed or full stderr leaves the exit code to the caller.
pub fn stderr_line(text: &str) -> bool {
    let mut err = io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.write_all(b"\n"))
        .and_then(|()| err.flush())
        .is_ok()
}
