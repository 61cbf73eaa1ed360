//! The output formats `--output` chooses.

use clap::ValueEnum;

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
