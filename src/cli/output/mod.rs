//! Writing results: fast buffered ID lists, JSON, tables, progress bars.

use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::error::{ClosedPipe, OutputFailed};

/// What most commands print: a document for people or for scripts. Commands that stream many
/// rows (`next`, `decode`) take the fuller [`RowFormat`]; the others refuse `tsv` and `ndjson`
/// before they run (see `cli::run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Tables and plain lines for people.
    #[default]
    Text,
    /// JSON; every 64-bit ID is a decimal string.
    Json,
}

/// `--output`: how results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RowFormat {
    /// For people: tables and plain lines (IDs: one per line; decode: a table on a terminal,
    /// tab-separated lines otherwise)
    #[default]
    Text,
    /// JSON (an array for rows, streamed); every 64-bit ID is a decimal string
    Json,
    /// Tab-separated lines after a header line; only commands that print rows (next, decode,
    /// tag list)
    Tsv,
    /// One JSON value per line (for jq -c); only commands that print rows (next, decode, tag
    /// list)
    Ndjson,
}

impl RowFormat {
    /// The value as typed after `--output`.
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::Text => "text",
            RowFormat::Json => "json",
            RowFormat::Tsv => "tsv",
            RowFormat::Ndjson => "ndjson",
        }
    }

    /// The document format for commands that print one result rather than rows.
    pub fn document(self) -> Option<OutputFormat> {
        match self {
            RowFormat::Text => Some(OutputFormat::Text),
            RowFormat::Json => Some(OutputFormat::Json),
            RowFormat::Tsv | RowFormat::Ndjson => None,
        }
    }
}

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

/// Checks, before anything is claimed, that standard output can be written: open for writing,
/// not closed at start (Rust's runtime puts a closed descriptor 0-2 on `/dev/null`, opened
/// read-write, where a shell's `>/dev/null` opens it write-only), accepting an empty write
/// (`/dev/full` refuses even that), and for a pipe, still read.
pub fn check_stdout() -> Result<(), StdoutProblem> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
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
        let is_char = st.st_mode & libc::S_IFMT == libc::S_IFCHR;
        if is_char && flags & libc::O_ACCMODE == libc::O_RDWR {
            let null = std::fs::metadata("/dev/null")
                .ok()
                .filter(|m| m.file_type().is_char_device());
            if null.is_some_and(|m| std::os::unix::fs::MetadataExt::rdev(&m) == st.st_rdev) {
                return Err(StdoutProblem::Closed);
            }
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

/// How a [`RowWriter`] frames its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One row per line after a header line of tab-separated column names.
    Tsv,
    /// A JSON array: `[`, the rows separated by commas, `]`; `pretty` puts each row on its own
    /// lines (the caller indents the row by two spaces).
    JsonArray {
        /// Line breaks between rows, as `serde_json`'s pretty printer writes them.
        pretty: bool,
    },
    /// One JSON value per line.
    Ndjson,
}

/// Writes a stream of IDs to stdout through one large fixed buffer (no allocation or lock per
/// ID): one per line (`text`), after an `id` header line (`tsv`), as a JSON array of strings
/// (`json`) or one JSON string per line (`ndjson`).
pub struct IdWriter {
    /// Descriptor 1 itself: no line buffer between the IDs and the descriptor, so a failed
    /// write says exactly which IDs went out.
    out: RawStdout,
    /// Held so nothing else writes to stdout meanwhile.
    _lock: io::StdoutLock<'static>,
    /// `FLUSH_AT` bytes plus room for one more line of any kind.
    buf: Box<[u8]>,
    len: usize,
    json: bool,
    /// JSON strings (`json`, `ndjson`) rather than bare digits.
    quoted: bool,
    first: bool,
    /// IDs in the buffer, not yet written.
    pending: u64,
    /// IDs written out whole.
    written: u64,
    /// Lines in the buffer that are not IDs (the TSV header), until it is written.
    header_lines: u64,
}

const FLUSH_AT: usize = 1 << 16;
/// Room past `FLUSH_AT`: one fixed-size line copy (`LINE`), or a JSON item (at most 23 bytes).
const SLACK: usize = 64;
/// The fixed size of one line as copied by the counting path (an ID is at most 20 digits).
const LINE: usize = 32;

/// The streaming writer for commands that print many rows (`decode`; `next` has the specialised
/// [`IdWriter`]): rows go into one buffer that is written out every 64 KiB (no allocation, lock
/// or syscall per row), framed as TSV with a header, a JSON array or NDJSON. Memory stays
/// constant whatever the number of rows.
///
/// The header and the opening `[` are written with the first row, so a run that fails before
/// any row prints nothing; [`RowWriter::finish`] closes the array (`[]` when no row came).
pub struct RowWriter<W: Write> {
    out: W,
    /// The current row's bytes go here, between [`RowWriter::begin_row`] and
    /// [`RowWriter::end_row`].
    pub buf: Vec<u8>,
    framing: Framing,
    header: Vec<u8>,
    rows: u64,
}

impl<W: Write> RowWriter<W> {
    /// A writer on `out`; `columns` names the TSV header (unused by other framings).
    pub fn new(out: W, framing: Framing, columns: &[&str]) -> RowWriter<W> {
        let mut header = columns.join("\t").into_bytes();
        header.push(b'\n');
        RowWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            framing,
            header,
            rows: 0,
        }
    }

    /// A line-per-row writer whose first line is `header` (with its line break added).
    pub fn with_header_line(out: W, mut header: Vec<u8>) -> RowWriter<W> {
        header.push(b'\n');
        RowWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            framing: Framing::Tsv,
            header,
            rows: 0,
        }
    }

    /// Starts a row: the header or `[` before the first one, a separator between JSON rows.
    #[inline]
    pub fn begin_row(&mut self) {
        if self.rows == 0 {
            self.open();
        } else if let Framing::JsonArray { pretty } = self.framing {
            self.buf
                .extend_from_slice(if pretty { b",\n" } else { b"," });
        }
        self.rows += 1;
    }

    #[cold]
    fn open(&mut self) {
        match self.framing {
            Framing::Tsv => self.buf.extend_from_slice(&self.header),
            Framing::JsonArray { pretty } => {
                self.buf
                    .extend_from_slice(if pretty { b"[\n" } else { b"[" })
            }
            Framing::Ndjson => {}
        }
    }

    /// Ends a row (a line break unless in a JSON array) and writes the buffer out once full.
    #[inline]
    pub fn end_row(&mut self) -> io::Result<()> {
        if !matches!(self.framing, Framing::JsonArray { .. }) {
            self.buf.push(b'\n');
        }
        if self.buf.len() >= FLUSH_AT {
            self.write_buf()?;
        }
        Ok(())
    }

    fn write_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes out everything buffered, so a reader sees the rows so far (call it before waiting
    /// for more input).
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.write_buf()?;
        }
        self.out.flush()
    }

    /// Closes a JSON array (`[]` when no row came) and flushes; returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        if let Framing::JsonArray { pretty } = self.framing {
            let close: &[u8] = match (self.rows, pretty) {
                (0, _) => b"[]\n",
                (_, true) => b"\n]\n",
                (_, false) => b"]\n",
            };
            self.buf.extend_from_slice(close);
        }
        self.flush()?;
        Ok(self.out)
    }
}

impl IdWriter {
    /// A writer in the given format.
    pub fn new(format: RowFormat) -> IdWriter {
        let json = format == RowFormat::Json;
        let mut lock = io::stdout().lock();
        // Nothing should be pending; if it is, it goes first.
        let _ = lock.flush();
        let mut w = IdWriter {
            out: RawStdout::new(),
            _lock: lock,
            buf: vec![0u8; FLUSH_AT + SLACK].into_boxed_slice(),
            len: 0,
            json,
            quoted: json || format == RowFormat::Ndjson,
            first: true,
            pending: 0,
            written: 0,
            header_lines: 0,
        };
        // Written out with the first flush, so a run that fails before any ID prints nothing.
        let opening: &[u8] = match format {
            RowFormat::Json => b"[",
            RowFormat::Tsv => b"id\n",
            RowFormat::Text | RowFormat::Ndjson => b"",
        };
        w.buf[..opening.len()].copy_from_slice(opening);
        w.len = opening.len();
        w.header_lines = u64::from(format == RowFormat::Tsv);
        w
    }

    #[inline]
    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.len >= FLUSH_AT {
            self.write_buffered()?;
        }
        Ok(())
    }

    /// Writes out the buffer; its IDs then count as written (after a failed write, those of
    /// the lines that went out whole).
    fn write_buffered(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let header = std::mem::take(&mut self.header_lines);
        let len = std::mem::take(&mut self.len);
        if let Err((e, lines)) = write_lines(&mut self.out, &self.buf[..len]) {
            self.written += lines.saturating_sub(header).min(pending);
            return Err(e);
        }
        self.written += pending;
        Ok(())
    }

    /// How many IDs were handed to standard output whole (those of a failed write are not).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends one ID.
    #[inline]
    pub fn push(&mut self, id: u64) -> io::Result<()> {
        let (buf, mut len) = (&mut self.buf, self.len);
        if self.quoted {
            if self.json && !self.first {
                buf[len] = b',';
                len += 1;
            }
            buf[len] = b'"';
            len += 1;
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'"';
            len += 1;
            if !self.json {
                buf[len] = b'\n';
                len += 1;
            }
        } else {
            len += put_decimal(&mut buf[len..len + 20], id);
            buf[len] = b'\n';
            len += 1;
        }
        self.len = len;
        self.first = false;
        self.pending += 1;
        self.flush_if_full()
    }

    /// Appends `count` IDs `first, first + stride, ...` (a snowflake block). Consecutive IDs in
    /// text are counted up in place like [`write_range`]: one fixed-size copy per line and a digit
    /// increment, no division per ID.
    pub fn push_block(&mut self, first: u64, stride: u64, count: u64) -> io::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if self.quoted || stride != 1 || first.checked_add(count - 1).is_none() {
            let mut id = first;
            for i in 0..count {
                if i > 0 {
                    id += stride;
                }
                self.push(id)?;
            }
            return Ok(());
        }
        let mut line = [b'\n'; LINE];
        let mut width = put_decimal(&mut line[..20], first);
        line[width] = b'\n';
        let mut remaining = count;
        while remaining > 0 {
            let mut len = self.len;
            let before = remaining;
            while len < FLUSH_AT && remaining > 0 {
                self.buf[len..len + LINE].copy_from_slice(&line);
                len += width + 1;
                remaining -= 1;
                if remaining > 0 {
                    count_up(&mut line, &mut width);
                }
            }
            self.len = len;
            self.pending += before - remaining;
            self.flush_if_full()?;
        }
        self.first = false;
        Ok(())
    }

    /// Appends the consecutive IDs `start..end`, ascending: the digits are counted up in place
    /// instead of formatted per ID, so a long range prints at about the speed of `seq`.
    /// `progress` is told how many IDs went out at each flush.
    pub fn push_range(
        &mut self,
        start: u64,
        end: u64,
        mut progress: impl FnMut(u64),
    ) -> io::Result<()> {
        if start >= end {
            return Ok(());
        }
        if self.quoted {
            let mut pending = 0;
            for id in start..end {
                self.push(id)?;
                pending += 1;
                if pending == 1 << 16 {
                    progress(pending);
                    pending = 0;
                }
            }
            progress(pending);
            return Ok(());
        }
        // What is already buffered (a header, earlier IDs) goes first.
        self.write_buffered()?;
        let written = &mut self.written;
        write_range(&mut self.out, start, end, |n| {
            *written += n;
            progress(n);
        })?;
        self.first = false;
        Ok(())
    }

    /// Closes the JSON array and flushes everything.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.json {
            self.buf[self.len..self.len + 2].copy_from_slice(b"]\n");
            self.len += 2;
        }
        self.write_buffered()
    }
}

/// Standard output's descriptor, written without std's line buffer. It is never closed.
struct RawStdout(std::mem::ManuallyDrop<std::fs::File>);

impl RawStdout {
    fn new() -> RawStdout {
        #[cfg(unix)]
        // SAFETY: descriptor 1 stays open for the life of the process (Rust's runtime opens
        // /dev/null there if it was closed at start), and ManuallyDrop never closes it.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(1) };
        RawStdout(std::mem::ManuallyDrop::new(file))
    }
}

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Adds one to the decimal number in `line[..width]` (followed by a newline), growing it by a
/// digit at 99..9.
#[inline]
fn count_up(line: &mut [u8; LINE], width: &mut usize) {
    let mut i = *width - 1;
    loop {
        if line[i] < b'9' {
            line[i] += 1;
            return;
        }
        line[i] = b'0';
        if i == 0 {
            line.copy_within(0..*width, 1);
            line[0] = b'1';
            *width += 1;
            line[*width] = b'\n';
            return;
        }
        i -= 1;
    }
}

/// Writes `start..end` one per line, counting the digits up in place: every ID copies one
/// fixed-size line (a couple of vector moves) and advances by its real length.
pub fn write_range(
    out: &mut impl Write,
    start: u64,
    end: u64,
    mut progress: impl FnMut(u64),
) -> io::Result<()> {
    let mut line = [b'\n'; LINE];
    let mut tmp = Vec::with_capacity(24);
    push_decimal(&mut tmp, start);
    let mut width = tmp.len();
    line[..width].copy_from_slice(&tmp);
    let mut chunk = vec![0u8; FLUSH_AT + LINE];
    let mut remaining = end.saturating_sub(start);
    while remaining > 0 {
        let mut pos = 0;
        let before = remaining;
        while pos + LINE <= chunk.len() && remaining > 0 {
            chunk[pos..pos + LINE].copy_from_slice(&line);
            pos += width + 1;
            remaining -= 1;
            count_up(&mut line, &mut width);
        }
        if let Err((e, lines)) = write_lines(out, &chunk[..pos]) {
            progress(lines);
            return Err(e);
        }
        progress(before - remaining);
    }
    Ok(())
}

/// `write_all` that, when it fails, also says how many whole lines of `buf` went out before
/// the failure: the IDs a failed write still delivered.
fn write_lines(out: &mut impl Write, buf: &[u8]) -> Result<(), (io::Error, u64)> {
    let mut done = 0;
    while done < buf.len() {
        let e = match out.write(&buf[done..]) {
            Ok(0) => io::Error::from(io::ErrorKind::WriteZero),
            Ok(n) => {
                done += n;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => e,
        };
        let lines = buf[..done].iter().filter(|&&b| b == b'\n').count();
        return Err((e, lines as u64));
    }
    Ok(())
}

/// "00" to "99", for writing two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `n`.
#[inline]
pub fn push_decimal(buf: &mut Vec<u8>, n: u64) {
    let start = buf.len();
    buf.extend_from_slice(&[b'0'; 20]);
    let len = put_decimal(&mut buf[start..], n);
    buf.truncate(start + len);
}

/// Writes the decimal digits of `n` at the start of `out` (at least 20 bytes) and returns how
/// many there are: two digits per division, straight into `out` (a scratch array copied in
/// afterwards would stall the copy on store forwarding).
#[inline]
pub fn put_decimal(out: &mut [u8], mut n: u64) -> usize {
    let len = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let out = &mut out[..len];
    let mut i = len;
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        out[..2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        out[0] = b'0' + n as u8;
    }
    len
}

/// Appends `n` (0..=99) as two digits.
#[inline]
fn push_two(buf: &mut Vec<u8>, n: u32) {
    let r = (n % 100) as usize * 2;
    buf.extend_from_slice(&DIGIT_PAIRS[r..r + 2]);
}

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

/// Writes one line to stderr (a note, a warning, an error): never panics. Returns whether the
/// line was written; a closed or full stderr leaves the exit code to the caller.
pub fn stderr_line(text: &str) -> bool {
    let mut err = io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.write_all(b"\n"))
        .and_then(|()| err.flush())
        .is_ok()
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

/// A table in leafctl's house style.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_header(header.iter().copied());
    t
}

/// Narrowest terminal width a table is fitted to; a terminal that reports less (0, say) gets
/// [`FALLBACK_WIDTH`].
const MIN_WIDTH: u16 = 20;
const FALLBACK_WIDTH: u16 = 80;

/// Draws a [`table`]: no word is broken over lines (IDs, max_ids and times are copied from
/// here); text wraps at its spaces to fit the terminal, and a table wider than the terminal
/// stays whole.
/// A terminal reporting a width under 20 columns (some report 0) is taken as 80 wide.
/// Off a terminal (a pipe, a file) there is no box: a header line and one line per row, the
/// cells separated by tabs (a tab, line break or backslash in a cell written \t, \n, \\).
pub fn render(t: comfy_table::Table) -> String {
    if io::stdout().is_terminal() {
        boxed(t)
    } else {
        plain(&t)
    }
}

/// A table as tab-separated lines, header first, for a pipe or a file.
pub fn plain(t: &comfy_table::Table) -> String {
    let mut lines = Vec::new();
    for row in t.header().into_iter().chain(t.row_iter()) {
        let cells: Vec<String> = row
            .cell_iter()
            .map(|c| {
                let mut out = String::new();
                for ch in c.content().chars() {
                    match ch {
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\\' => out.push_str("\\\\"),
                        ch => out.push(ch),
                    }
                }
                out
            })
            .collect();
        lines.push(cells.join("\t"));
    }
    lines.join("\n")
}

/// A table drawn with its box, fitted to the terminal.
pub fn boxed(mut t: comfy_table::Table) -> String {
    if t.width().is_some_and(|w| w < MIN_WIDTH) {
        t.set_width(FALLBACK_WIDTH);
    }
    let mut unbreakable: Vec<u16> = Vec::new();
    for row in t.header().into_iter().chain(t.row_iter()) {
        for (i, cell) in row.cell_iter().enumerate() {
            let content = cell.content();
            if unbreakable.len() <= i {
                unbreakable.resize(i + 1, 0);
            }
            let longest_word = content
                .split_whitespace()
                .map(|word| word.chars().count())
                .max()
                .unwrap_or(0);
            let w = u16::try_from(longest_word).unwrap_or(u16::MAX);
            unbreakable[i] = unbreakable[i].max(w);
        }
    }
    for (i, w) in unbreakable.into_iter().enumerate() {
        if w > 0
            && let Some(column) = t.column_mut(i)
        {
            // The bound counts the cell's padding too (one space each side).
            column.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(w.saturating_add(2)),
            ));
        }
    }
    t.to_string()
}

/// Formats Unix ms as RFC 3339 UTC with milliseconds and `Z`.
pub fn rfc3339_ms(unix_ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(unix_ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("{unix_ms} ms"),
    }
}

/// A short human age: `3d 4h ago`, `12s ago`, `in 5m`.
pub fn age(unix_ms: i64, now_ms: i64) -> String {
    let mut buf = Vec::with_capacity(16);
    push_age(&mut buf, unix_ms, now_ms);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Appends [`age`] without allocating.
pub fn push_age(buf: &mut Vec<u8>, unix_ms: i64, now_ms: i64) {
    let diff = now_ms.saturating_sub(unix_ms);
    // Less than a second ahead (a time stored in whole seconds, a clock a little ahead) is no
    // future: "0s ago", never "in 0s".
    let (secs, future) = ((diff / 1000).unsigned_abs(), diff <= -1000);
    if future {
        buf.extend_from_slice(b"in ");
    }
    let two = |buf: &mut Vec<u8>, a: u64, ua: &[u8], b: u64, ub: &[u8]| {
        push_decimal(buf, a);
        buf.extend_from_slice(ua);
        buf.push(b' ');
        push_decimal(buf, b);
        buf.extend_from_slice(ub);
    };
    if secs < 60 {
        push_decimal(buf, secs);
        buf.push(b's');
    } else if secs < 3600 {
        two(buf, secs / 60, b"m", secs % 60, b"s");
    } else if secs < 86_400 {
        two(buf, secs / 3600, b"h", (secs % 3600) / 60, b"m");
    } else if secs < 86_400 * 365 {
        two(buf, secs / 86_400, b"d", (secs % 86_400) / 3600, b"h");
    } else {
        two(
            buf,
            secs / (86_400 * 365),
            b"y",
            (secs % (86_400 * 365)) / 86_400,
            b"d",
        );
    }
    if !future {
        buf.extend_from_slice(b" ago");
    }
}

/// Appends a signed decimal.
#[inline]
pub fn push_signed(buf: &mut Vec<u8>, n: i64) {
    if n < 0 {
        buf.push(b'-');
    }
    push_decimal(buf, n.unsigned_abs());
}

/// Formats Unix ms exactly as [`rfc3339_ms`] does, without allocating. The date of the last day
/// and the text of the last second formatted are kept, so IDs from one second (usual in a log)
/// only add their milliseconds, and IDs from one day only their time of day.
#[derive(Debug, Default)]
pub struct Rfc3339Ms {
    second: Option<i64>,
    day: Option<i64>,
    /// `YYYY-MM-DDThh:mm:ss` of `second`; the first 11 bytes are the date of `day`.
    prefix: [u8; 19],
}

impl Rfc3339Ms {
    /// Appends `2010-11-04T01:42:54.657Z` for `unix_ms`.
    #[inline]
    pub fn push(&mut self, buf: &mut Vec<u8>, unix_ms: i64) {
        let (sec, milli) = (unix_ms.div_euclid(1000), unix_ms.rem_euclid(1000) as u32);
        if self.second != Some(sec) && !self.set_second(sec) {
            // Outside years 0..=9999: the general formatter.
            buf.extend_from_slice(rfc3339_ms(unix_ms).as_bytes());
            return;
        }
        buf.extend_from_slice(&self.prefix);
        buf.push(b'.');
        buf.push(b'0' + (milli / 100) as u8);
        push_two(buf, milli % 100);
        buf.push(b'Z');
    }

    fn set_second(&mut self, sec: i64) -> bool {
        let (days, tod) = (sec.div_euclid(86_400), sec.rem_euclid(86_400) as u32);
        if self.day != Some(days) && !self.set_day(days) {
            self.second = None;
            return false;
        }
        let pair = |n: u32| {
            let r = n as usize * 2;
            [DIGIT_PAIRS[r], DIGIT_PAIRS[r + 1]]
        };
        let (hh, mm, ss) = (pair(tod / 3600), pair(tod / 60 % 60), pair(tod % 60));
        self.prefix[11..].copy_from_slice(&[hh[0], hh[1], b':', mm[0], mm[1], b':', ss[0], ss[1]]);
        self.second = Some(sec);
        true
    }

    #[cold]
    fn set_day(&mut self, days: i64) -> bool {
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            self.day = None;
            return false;
        }
        let y = y as u32;
        let digit = |n: u32| b'0' + n as u8;
        self.prefix[..11].copy_from_slice(&[
            digit(y / 1000),
            digit(y / 100 % 10),
            digit(y / 10 % 10),
            digit(y % 10),
            b'-',
            digit(m / 10),
            digit(m % 10),
            b'-',
            digit(d / 10),
            digit(d % 10),
            b'T',
        ]);
        self.day = Some(days);
        true
    }
}

/// (year, month, day) of a count of days since 1970-01-01 in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097) as u64;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe as i64 + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_std() {
        let mut values: Vec<u64> = (0..=1000)
            .chain([12345, u64::MAX, i64::MAX as u64])
            .collect();
        for p in 1..20 {
            let t = 10u64.pow(p);
            values.extend([t - 1, t, t + 1, t / 10 * 9 + 7]);
        }
        let mut b = b"x".to_vec();
        for n in values {
            b.truncate(1);
            push_decimal(&mut b, n);
            assert_eq!(&b[1..], n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn ranges_count_up_across_digit_boundaries() {
        let top = i64::MAX as u64;
        for (start, end) in [
            (0u64, 1u64),
            (7, 13),
            (95, 1005),
            (999_999, 1_000_002),
            (0, 200_000),
            (top - 2, top + 1),
        ] {
            let mut out = Vec::new();
            let mut seen = 0;
            write_range(&mut out, start, end, |n| seen += n).unwrap();
            let expected: String = (start..end).map(|i| format!("{i}\n")).collect();
            assert!(
                String::from_utf8(out).unwrap() == expected,
                "{start}..{end}"
            );
            assert_eq!(seen, end - start);
        }
        let mut w = IdWriter::new(RowFormat::Json);
        w.push_range(top - 2, top + 1, |_| {}).unwrap();
        assert_eq!(
            String::from_utf8(w.buf[..w.len].to_vec()).unwrap(),
            format!("[\"{}\",\"{}\",\"{}\"", top - 2, top - 1, top)
        );
        w.len = 0;
    }

    #[test]
    fn blocks_print_like_their_ids() {
        let top = i64::MAX as u64;
        let cases: &[(u64, u64, u64)] = &[
            (0, 1, 1),
            (95, 1, 1005),
            (2_124_556_629_465_632_814, 1, 4096),
            (999_999_999_999_999_990, 1, 20),
            (top - 2, 1, 3),
            (u64::MAX - 1, 1, 2),
            (7, 1 << 16, 300),
            (3, 1, 200_000),
        ];
        for &(first, stride, count) in cases {
            for json in [false, true] {
                let mut w = IdWriter::new(if json {
                    RowFormat::Json
                } else {
                    RowFormat::Text
                });
                let mut seen = String::from_utf8(w.buf[..w.len].to_vec()).unwrap();
                w.len = 0;
                // Capture instead of writing to stdout: stay below one flush per step.
                let mut left = count;
                let mut id = first;
                while left > 0 {
                    let n = left.min(1_000);
                    w.push_block(id, stride, n).unwrap();
                    seen.push_str(std::str::from_utf8(&w.buf[..w.len]).unwrap());
                    w.len = 0;
                    id = id.wrapping_add(n * stride);
                    left -= n;
                }
                let ids: Vec<String> = (0..count)
                    .map(|i| (first + i * stride).to_string())
                    .collect();
                let expected = if json {
                    format!("[\"{}\"", ids.join("\",\""))
                } else {
                    ids.iter().map(|i| format!("{i}\n")).collect()
                };
                assert!(seen == expected, "{first} {stride} {count} json={json}");
            }
        }
    }

    #[test]
    fn rates_read_as_people_say_them() {
        assert_eq!(human_rate(3_766_305.451_5), "3.77 M IDs/s");
        assert_eq!(human_rate(0.0), "0 IDs/s");
        assert_eq!(human_rate(0.4), "0 IDs/s");
        assert_eq!(human_rate(512.3), "512 IDs/s");
        assert_eq!(human_rate(999.4), "999 IDs/s");
        assert_eq!(human_rate(999.6), "1.00 k IDs/s");
        assert_eq!(human_rate(12_345.0), "12.3 k IDs/s");
        assert_eq!(human_rate(99_960.0), "100 k IDs/s");
        assert_eq!(human_rate(999_600.0), "1.00 M IDs/s");
        assert_eq!(human_rate(37_700_000.0), "37.7 M IDs/s");
        assert_eq!(human_rate(377_000_000.0), "377 M IDs/s");
        assert_eq!(human_rate(1.5e9), "1.50 G IDs/s");
        assert_eq!(human_rate(2.0e18), "2000000 T IDs/s");
        assert_eq!(human_rate(f64::INFINITY), "- IDs/s");
        assert_eq!(human_rate(f64::NAN), "- IDs/s");
        assert_eq!(human_rate(-1.0), "- IDs/s");
    }

    #[test]
    fn the_progress_template_is_valid() {
        assert!(progress_style().is_ok());
    }

    #[test]
    fn fast_times_match_chrono() {
        let mut f = Rfc3339Ms::default();
        let mut check = |ms: i64| {
            let mut b = Vec::new();
            f.push(&mut b, ms);
            assert_eq!(String::from_utf8(b).unwrap(), rfc3339_ms(ms), "{ms}");
        };
        for ms in [
            0,
            1,
            999,
            -1,
            -1000,
            -1001,
            951_782_400_000,     // 2000-02-29
            1_288_834_974_657,   // Leaf's epoch
            4_102_444_799_999,   // 2099-12-31T23:59:59.999
            -62_167_219_200_000, // 0000-01-01
            -62_167_219_200_001, // year -1: the general formatter
            253_402_300_799_999, // 9999-12-31T23:59:59.999
            253_402_300_800_000, // year 10000: the general formatter
        ] {
            check(ms);
        }
        // A pseudo-random walk over four centuries, and runs within one second (the cache).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = (x % 12_622_780_800_000) as i64 - 2_208_988_800_000; // 1900..2300
            check(ms);
            check(ms + 1);
            check(ms.div_euclid(1000) * 1000 + 999);
        }
    }

    #[test]
    fn pushed_ages_match_the_formatter() {
        let mut b = Vec::new();
        push_age(&mut b, 0, 3_600_000 * 26);
        assert_eq!(b, b"1d 2h ago");
        b.clear();
        push_age(&mut b, 10_000, 0);
        assert_eq!(b, b"in 10s");
        assert_eq!(age(0, 400 * 86_400_000), "1y 35d ago");
        assert_eq!(age(0, 61_000), "1m 1s ago");
        assert_eq!(age(0, 7_260_000), "2h 1m ago");
        let mut s = Vec::new();
        push_signed(&mut s, -42);
        push_signed(&mut s, i64::MIN);
        assert_eq!(s, b"-42-9223372036854775808");
    }

    #[test]
    fn rows_are_framed_in_every_format() {
        let write = |framing: Framing, rows: &[&str]| {
            let mut w = RowWriter::new(Vec::new(), framing, &["a", "b"]);
            for r in rows {
                w.begin_row();
                w.buf.extend_from_slice(r.as_bytes());
                w.end_row().unwrap();
            }
            String::from_utf8(w.finish().unwrap()).unwrap()
        };
        assert_eq!(write(Framing::Tsv, &["1\tx", "2\ty"]), "a\tb\n1\tx\n2\ty\n");
        assert_eq!(write(Framing::Tsv, &[]), "", "no header without rows");
        assert_eq!(
            write(Framing::JsonArray { pretty: false }, &["1", "2"]),
            "[1,2]\n"
        );
        assert_eq!(
            write(Framing::JsonArray { pretty: true }, &["  1", "  2"]),
            "[\n  1,\n  2\n]\n"
        );
        assert_eq!(write(Framing::JsonArray { pretty: true }, &[]), "[]\n");
        assert_eq!(write(Framing::Ndjson, &["{}", "{}"]), "{}\n{}\n");
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(0, 5_000), "5s ago");
        assert_eq!(age(0, 3_600_000 * 26), "1d 2h ago");
        assert_eq!(age(10_000, 0), "in 10s");
        // Issue 36, item 10: moments ago is never "in 0s".
        assert_eq!(age(1_000, 500), "0s ago");
        assert_eq!(age(1_000, 0), "in 1s");
        assert_eq!(rfc3339_ms(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
    }
}
