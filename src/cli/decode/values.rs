//! Decoding values one by one (arguments or stdin lines), with notes on layouts guessed or
//! doubted.

use std::io;

use leafctl::idformat::compact::Encoding;
use leafctl::idformat::{GuessOptions, Reading, Value, decode_value};

use super::lines::{MAX_LINE, for_each_line};
use super::rows::{Printer, Row};

/// Decodes values one by one, counting the bad ones and those read under a guessed layout.
pub(super) struct Decoder<'a> {
    pub(super) opts: &'a GuessOptions,
    /// Each value is a compact string in this encoding (`--encode`), read to its ID first.
    pub(super) encoding: Option<Encoding>,
    pub(super) values: u64,
    pub(super) bad: u64,
    pub(super) guessed: u64,
    /// The first layout guessed, for the closing note.
    pub(super) guessed_as: Option<&'static str>,
    /// Values read under the default layout that `--guess` ranks another layout first for.
    pub(super) doubted: u64,
    /// The layout ranked first for the first of them.
    pub(super) doubted_as: Option<&'static str>,
    pub(super) quiet: bool,
    pub(super) printer: Printer,
}

impl Decoder<'_> {
    /// What value `v` is: as given, or with `--encode` the ID its compact string names.
    fn read(&self, v: &[u8]) -> Result<Value, String> {
        let Some(encoding) = self.encoding else {
            return decode_value(v, self.opts).map_err(|e| e.to_string());
        };
        let text = std::str::from_utf8(v).map_err(|_| format!("not a {encoding} string"))?;
        let id = encoding.decode(text).map_err(|e| e.to_string())?;
        decode_value(id.to_string().as_bytes(), self.opts).map_err(|e| e.to_string())
    }

    /// One input value (`line`: its line number on stdin); blank values are skipped.
    #[inline]
    pub(super) fn value(
        &mut self,
        raw: &[u8],
        too_long: bool,
        line: Option<u64>,
    ) -> anyhow::Result<()> {
        let v = raw.trim_ascii();
        // A blank stdin line is skipped; an empty argument is a mistake worth naming (an unset
        // shell variable, say).
        if v.is_empty() && !too_long && line.is_some() {
            return Ok(());
        }
        self.values += 1;
        let decoded = if too_long {
            Err(format!("longer than {MAX_LINE} bytes, so not an ID"))
        } else {
            self.read(v)
        };
        match decoded {
            Ok(value) => {
                // The usual case, a value read as given, needs no note.
                if !matches!(value.reading, Reading::AsGiven) {
                    self.note_reading(v, &value, line);
                }
                self.printer.push(&Row::new(v, value.number, value.decoded))
            }
            Err(reason) => {
                self.bad(v, too_long, line, &reason);
                Ok(())
            }
        }
    }

    /// Counts a value read under a layout other than the one given (guessed), or under the
    /// default one that `--guess` ranks another layout first for (doubted); the first of each
    /// is named in a note.
    fn note_reading(&mut self, v: &[u8], value: &Value, line: Option<u64>) {
        let at = || line.map(|n| format!("line {n}: ")).unwrap_or_default();
        match &value.reading {
            Reading::AsGiven => {}
            Reading::Guessed {
                instead_of,
                why,
                plausible,
            } => {
                self.guessed += 1;
                let name = value.decoded.format.name();
                if self.guessed_as.is_none() && !self.quiet {
                    let shown = String::from_utf8_lossy(v);
                    let which = if *plausible == 1 {
                        "the one plausible layout".to_string()
                    } else {
                        format!("the most plausible of {plausible} layouts")
                    };
                    super::super::error::note(&format!(
                        "{}{shown} is no {instead_of} ID (its time would be {why}); read as {name}, {which} (--guess ranks them)",
                        at()
                    ));
                }
                self.guessed_as.get_or_insert(name);
            }
            Reading::Doubted { likelier, unix_ms } => {
                self.doubted += 1;
                // Said for IDs given as arguments; a stream of IDs (a log's, an export's)
                // is decoded quietly under the layout it was given, as before.
                if self.doubted_as.is_none() && !self.quiet && line.is_none() {
                    let shown = String::from_utf8_lossy(v);
                    super::super::error::note(&format!(
                        "{}{shown} is read under leafctl's default {} layout, but --guess ranks {likelier} first ({}); give --preset {likelier} if that is its layout",
                        at(),
                        self.opts.configured.name,
                        leafctl::idformat::rfc3339(*unix_ms),
                    ));
                }
                self.doubted_as.get_or_insert(likelier);
            }
        }
    }

    /// Counts a value that is no ID and reports it on stderr, with its line on stdin.
    fn bad(&mut self, v: &[u8], too_long: bool, line: Option<u64>, reason: &str) {
        self.bad += 1;
        let shown = String::from_utf8_lossy(&v[..v.len().min(64)]);
        let more = if too_long || v.len() > 64 { "..." } else { "" };
        let message = match line {
            Some(n) => format!("line {n}: {shown:?}{more}: {reason}"),
            None => format!("{shown:?}{more}: {reason}"),
        };
        super::super::error::value_error(super::super::error::EXIT_USAGE, &message, None);
    }
}

/// Decodes stdin line by line, flushing while it waits for input.
pub(super) fn decode_stdin(d: &mut Decoder) -> anyhow::Result<()> {
    for_each_line(
        io::stdin().lock(),
        d,
        |d| d.printer.flush(),
        |d, line, long, n| d.value(line, long, Some(n)),
    )
}
