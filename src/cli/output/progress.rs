//! The progress bar of long runs, and how it leaves the screen on Ctrl-C.

use std::io::{self, IsTerminal};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on stderr, shown only when stderr is a terminal, the run is long, and not `-q`.
pub fn progress(total: u64, quiet: bool) -> ProgressBar {
    const LONG_RUN: u64 = 1_000_000;
    // IDs printed to the terminal the bar would be drawn on would interleave with its frames.
    if quiet || total < LONG_RUN || !io::stderr().is_terminal() || io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = progress_style() {
        bar.set_style(style);
    }
    clear_line_on_interrupt();
    bar
}

/// On Ctrl-C (or SIGTERM) while a bar is drawn, erases its line before the process ends, so no
/// frame is left on the screen; the signal then takes its usual course (exit status 130/143).
fn clear_line_on_interrupt() {
    #[cfg(unix)]
    {
        extern "C" fn on_signal(sig: libc::c_int) {
            const CLEAR: &[u8] = b"\r\x1b[2K";
            // SAFETY: write(2), signal(2) and raise(3) are async-signal-safe; the buffer is a
            // static byte string.
            unsafe {
                libc::write(2, CLEAR.as_ptr().cast(), CLEAR.len());
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // SAFETY: installs a handler that only calls async-signal-safe functions.
            unsafe {
                libc::signal(libc::SIGINT, handler);
                libc::signal(libc::SIGTERM, handler);
            }
        });
    }
}

/// The style of every progress bar: `7,498,744/30,000,000 IDs (3.77 M IDs/s, eta 6s)`.
fn progress_style() -> Result<ProgressStyle, indicatif::style::TemplateError> {
    Ok(ProgressStyle::with_template(
        "{spinner} {elapsed_precise} {wide_bar} {human_pos}/{human_len} ({rate}, eta {eta})",
    )?
    .with_key(
        "rate",
        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&human_rate(state.per_sec()));
        },
    ))
}

/// A rate the way people read it: three significant digits and a unit prefix
/// (`512 IDs/s`, `12.3 k IDs/s`, `3.77 M IDs/s`); `- IDs/s` before there is a rate.
pub fn human_rate(per_sec: f64) -> String {
    const PREFIX: [&str; 5] = ["", " k", " M", " G", " T"];
    if !per_sec.is_finite() || per_sec < 0.0 {
        return "- IDs/s".into();
    }
    let (mut v, mut i) = (per_sec, 0);
    // 999.5 and up would round to 1000: show it with the next prefix instead.
    while v >= 999.5 && i < PREFIX.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        return format!("{v:.0} IDs/s");
    }
    let decimals = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:.decimals$}{} IDs/s", PREFIX[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_people_say_them() {
        for (rate, shown) in [
            (3_766_305.451_5, "3.77 M IDs/s"),
            (0.0, "0 IDs/s"),
            (0.4, "0 IDs/s"),
            (512.3, "512 IDs/s"),
            (999.4, "999 IDs/s"),
            (999.6, "1.00 k IDs/s"),
            (12_345.0, "12.3 k IDs/s"),
            (99_960.0, "100 k IDs/s"),
            (999_600.0, "1.00 M IDs/s"),
            (37_700_000.0, "37.7 M IDs/s"),
            (377_000_000.0, "377 M IDs/s"),
            (1.5e9, "1.50 G IDs/s"),
            (2.0e18, "2000000 T IDs/s"),
            (f64::INFINITY, "- IDs/s"),
            (f64::NAN, "- IDs/s"),
            (-1.0, "- IDs/s"),
        ] {
            assert_eq!(human_rate(rate), shown, "{rate}");
        }
    }

    #[test]
    fn the_progress_template_is_valid() {
        assert!(progress_style().is_ok());
    }
}
