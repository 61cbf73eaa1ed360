//! `leafctl tag`: add, list, show, re-step and remove the tags of the `leaf_alloc` table.

use std::io::{self, IsTerminal};

use clap::Subcommand;
use leafctl::idformat::opaque::{IdKey, OpaqueWidth};
use leafctl::segment::{
    AllocStore, Bounds, DEFAULT_STEP, Headroom, HeadroomStatus, Issuing, LeafAlloc, MAX_TABLE_STEP,
    NewTag, PeriodicShape, RowPages, StartAt, TagFilter, TagShape, add_shaped_tag, tag_for_shell,
    validate_tag,
};
use serde::Serialize;

use super::db;
use super::error::usage;
use super::output::{
    Framing, OutputFormat, RowFormat, RowWriter, age, print_json, print_text, render, rfc3339_ms,
    table, write_err,
};
use super::{Context, whole_number};
use leafctl::segment::AllocStoreExt;

pub const EXAMPLES: &str = "\
Examples:
  leafctl tag add order                          IDs from 1, claimed 1000 at a time
  leafctl tag add payment --step 5000 --desc 'payment numbers'
  leafctl tag add invoice --start 1000000        continue after an existing ID scheme
  leafctl --key-file id.key tag add order-no --opaque 12   12-digit IDs that hide the count
  leafctl tag add bill-no --period day --width 6 --time-zone Asia/Shanghai
                                                 20261206000001: a sequence per day
  leafctl tag list --output json
  leafctl tag list --prefix tenant- --output ndjson | wc -l    count the tenant tags
  leafctl tag list --match 'order-*-eu' --output ndjson | jq -r .max_id
  leafctl tag set-step order 20000
  leafctl next order -n 10                       ten IDs from the tag
  leafctl tag bump order --to 5000000            move max_id forward (never down), e.g. after
                                                 a failover lost claims
  leafctl tag remove invoice --yes               keeps its final max_id: a later `tag add
                                                 invoice` continues from there";

#[derive(Debug, Subcommand)]
pub enum TagCommand {
    /// Add a tag (a row of leaf_alloc)
    ///
    /// A tag that was removed before starts where it stopped (the max_id its removal left in
    /// leaf_alloc_removed), so no ID is issued twice; a --start below that is refused unless
    /// --reuse-removed-ids is given.
    #[command(after_help = EXAMPLES)]
    Add {
        /// The tag: 1 to 128 characters, no whitespace
        tag: String,
        /// IDs claimed per segment by servers (1..=2147483647)
        #[arg(long, default_value_t = DEFAULT_STEP, allow_negative_numbers = true, value_parser = whole_number(1i64, MAX_TABLE_STEP))]
        step: i64,
        /// The first ID (the initial max_id), e.g. to continue an existing ID scheme [default: 1,
        /// or for a removed tag the max_id it left behind]. Below a removed tag's max_id it is
        /// refused unless --reuse-removed-ids is given
        #[arg(long, allow_negative_numbers = true, value_parser = whole_number(0i64, i64::MAX))]
        start: Option<i64>,
        /// Accept a --start below the max_id a removed tag of the same name left behind: the IDs
        /// from there up to it were issued before and will be issued again. Only when you know
        /// none of them is in use
        #[arg(long, requires = "start")]
        reuse_removed_ids: bool,
        /// A description
        #[arg(long, value_name = "TEXT")]
        desc: Option<String>,
        /// Succeed without changing anything when the tag exists
        #[arg(long)]
        if_not_exists: bool,
        /// Issue the tag's IDs through a keyed permutation that hides their order and count:
        /// 7 to 18 (IDs of exactly that many digits) or 63 (any positive 63-bit number). Needs the
        /// ID key (--key-file); fixed for good, as the tag's shape
        #[arg(long, value_name = "DIGITS", value_parser = parse_opaque_width)]
        opaque: Option<OpaqueWidth>,
        #[command(flatten)]
        periodic: PeriodicArgs,
    },
    /// List tags with their max_id, step and last update
    ///
    /// Rows are read a page at a time and printed as they come, in constant memory, so a table of
    /// a million tags lists as easily as ten. On a terminal, text draws a table of the first 1000
    /// tags and says how to see the rest; off a terminal it writes tab-separated lines, as tsv
    /// always does (a tab, line break or backslash in a description is written \t, \n, \\).
    #[command(after_help = EXAMPLES)]
    List {
        /// Only tags that start with this text (case-sensitive)
        #[arg(long, value_name = "TEXT", conflicts_with = "glob")]
        prefix: Option<String>,
        /// Only tags matching this glob: * any characters, ? one character, \ takes the next
        /// character as it is (case-sensitive; quote it for the shell)
        #[arg(long = "match", value_name = "GLOB")]
        glob: Option<String>,
    },
    /// Show one tag, with the IDs it has left
    ///
    /// ids_left is 9223372036854775807 - max_id (with a region, the end of its block - max_id);
    /// claims_left the whole claims of its step that still fit. headroom is ok, low (fewer than 1000 claims left), last (less than one step
    /// left: a claim of a step no longer fits; leafctl serve claims the last IDs, Leaf's servers
    /// fail) or exhausted; anything but ok is also a warning on stderr (and `tag list` warns
    /// about every such tag).
    #[command(after_help = EXAMPLES)]
    Show {
        /// The tag
        tag: String,
    },
    /// Change a tag's step (the size of the segments servers claim)
    #[command(after_help = EXAMPLES)]
    SetStep {
        /// The tag
        tag: String,
        /// The new step (1..=2147483647)
        #[arg(allow_negative_numbers = true, value_parser = whole_number(1i64, MAX_TABLE_STEP))]
        step: i64,
    },
    /// Move a tag's max_id forward to a value, never down (one statement)
    ///
    /// The repair after the table went backwards (a failover to a replica that had not received
    /// the latest claims, a restore from a backup): bump the tag to at least the highest max_id
    /// any claimant reported, and claims resume above every ID already issued.
    #[command(after_help = EXAMPLES)]
    Bump {
        /// The tag
        tag: String,
        /// The new max_id: the next claim starts here
        #[arg(long, value_name = "MAX_ID", allow_negative_numbers = true, value_parser = whole_number(0i64, i64::MAX))]
        to: i64,
    },
    /// Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the
    /// tag again continues above every ID it issued
    ///
    /// The row is deleted and its max_id recorded as a tombstone in one step (the highest one, if
    /// the name was removed before). A database made by an older leafctl gets the table on the
    /// fly; where that is not allowed, nothing is removed (run `leafctl db init`).
    #[command(after_help = EXAMPLES)]
    Remove {
        /// The tag
        tag: String,
        /// Confirm the removal
        #[arg(long)]
        yes: bool,
    },
}

/// `tag add`'s options of a periodic tag (issue 48): `<period><code><sequence>` numbers whose
/// sequence restarts every period.
#[derive(Debug, clap::Args)]
pub struct PeriodicArgs {
    /// Issue numbers <period><code><sequence>, e.g. 20261206000001 for a day, whose sequence
    /// restarts every period (each period's row TAG@PERIOD is made on first use)
    #[arg(long, value_name = "day|month|year", requires = "width")]
    period: Option<leafctl::segment::Period>,
    /// The sequence's digits, zero-padded (with --period); a period whose sequence would pass
    /// them is refused, never widened. With --opaque (equal to it, 7 or more) it is permuted
    #[arg(long, value_name = "W", requires = "period", value_parser = whole_number(1u8, 17))]
    width: Option<u8>,
    /// The time zone periods are counted in (with --period): an IANA name [default: UTC]
    #[arg(long, value_name = "TZ", requires = "period")]
    time_zone: Option<String>,
    /// A fixed business code of decimal digits between the period and the sequence
    #[arg(long, value_name = "DIGITS", requires = "period")]
    code: Option<String>,
}

/// A row as scripts read it: the 64-bit max_id (and counts of that size) as strings.
#[derive(Serialize)]
struct RowJson {
    tag: String,
    max_id: String,
    step: i64,
    description: Option<String>,
    update_time: String,
    /// IDs left before 2^63-1 (`9223372036854775807 - max_id`), or before the end of the
    /// region's block with a region.
    ids_left: String,
    /// Whole claims of `step` that still fit.
    claims_left: String,
    /// ok, low, last or exhausted (see `leafctl tag show --help`).
    headroom: &'static str,
}

/// `tag show`'s row in JSON: the row and its shape (`plain`, or the spec recorded in
/// leaf_tag_shape, e.g. `opaque=12 key=CHECK`).
#[derive(Serialize)]
struct ShownJson {
    #[serde(flatten)]
    row: RowJson,
    shape: String,
}

fn row_json(r: &LeafAlloc, bounds: &Bounds) -> RowJson {
    let h = Headroom::within(bounds, r.max_id, r.step);
    RowJson {
        tag: r.tag.clone(),
        max_id: r.max_id.to_string(),
        step: r.step,
        description: r.description.clone(),
        update_time: rfc3339_s(r.update_time_s),
        ids_left: h.ids_left.to_string(),
        claims_left: h.claims_left.to_string(),
        headroom: h.status.as_str(),
    }
}

/// The text of a row's "IDs left" cell: the count, and the status when it is not ok.
fn left_cell(r: &LeafAlloc, bounds: &Bounds) -> String {
    let h = Headroom::within(bounds, r.max_id, r.step);
    match h.status {
        HeadroomStatus::Ok => h.ids_left.to_string(),
        other => format!("{} ({})", h.ids_left, other.as_str()),
    }
}

/// Tags running out that a listing names on stderr; the rest are counted.
const WARN_NAMES: usize = 5;

/// Collects the tags of a listing that are running out, for one warning at its end.
#[derive(Default)]
struct LowTags {
    names: Vec<String>,
    count: u64,
}

impl LowTags {
    fn note(&mut self, r: &LeafAlloc, bounds: &Bounds) {
        if Headroom::within(bounds, r.max_id, r.step).status != HeadroomStatus::Ok {
            self.count += 1;
            if self.names.len() < WARN_NAMES {
                self.names.push(r.tag.clone());
            }
        }
    }

    /// Warns on stderr (unless `quiet`) when any tag is running out.
    fn warn(&self, quiet: bool) {
        if self.count == 0 || quiet {
            return;
        }
        let more = self.count - self.names.len() as u64;
        let names = self.names.join(", ");
        let names = if more > 0 {
            format!("{names} and {more} more")
        } else {
            names
        };
        let n = if self.count == 1 {
            "1 tag is".to_string()
        } else {
            format!("{} tags are", self.count)
        };
        super::error::warning(&format!(
            "{n} running out of IDs: {names}; `leafctl tag show TAG` says how many are left"
        ));
    }
}

fn rfc3339_s(unix_s: i64) -> String {
    match chrono::DateTime::from_timestamp(unix_s, 0) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        None => rfc3339_ms(unix_s.saturating_mul(1000)),
    }
}

fn updated(r: &LeafAlloc) -> String {
    let now = chrono::Utc::now().timestamp_millis();
    let ms = r.update_time_s.saturating_mul(1000);
    format!("{} ({})", rfc3339_s(r.update_time_s), age(ms, now))
}

fn check_tag(tag: &str) -> anyhow::Result<()> {
    validate_tag(tag)?;
    Ok(())
}

/// Tags a terminal gets as a table; the rest are left to `--output tsv`.
const TABLE_MAX_ROWS: usize = 1000;

const COLUMNS: [&str; 7] = [
    "tag",
    "max_id",
    "step",
    "description",
    "update_time",
    "ids_left",
    "headroom",
];

/// `tag list`: streams the rows in `format`, a page at a time. A list with no rows is still
/// rows: the TSV header alone off a terminal (`[]` in JSON, nothing in NDJSON), with the "no
/// tags" sentence on stderr; only a terminal gets the sentence on stdout.
fn list(
    store: &dyn AllocStore,
    filter: &TagFilter,
    format: RowFormat,
    quiet: bool,
) -> anyhow::Result<()> {
    if format == RowFormat::Text && io::stdout().is_terminal() {
        return list_table(store, filter, quiet);
    }
    list_rows(store, filter, format, quiet)
}

/// The sentence of a listing without rows: no tags (passing `filter`) in `store`, and how to add
/// one.
fn nothing_listed(store: &dyn AllocStore, filter: &TagFilter) -> String {
    let what = match filter {
        TagFilter::All => "no tags".to_string(),
        TagFilter::Prefix(p) => format!("no tags starting with {p:?}"),
        TagFilter::Glob(g) => format!("no tags matching {g:?}"),
    };
    format!(
        "{what} in {}; add one with `leafctl tag add TAG`",
        store.describe()
    )
}

/// `tag list` on a terminal: a table of the first [`TABLE_MAX_ROWS`] tags, with a note on how to
/// see the rest.
fn list_table(store: &dyn AllocStore, filter: &TagFilter, quiet: bool) -> anyhow::Result<()> {
    let bounds = store.bounds();
    let mut low = LowTags::default();
    let mut t = table(&[
        "tag",
        "max_id",
        "step",
        "description",
        "updated",
        "IDs left",
    ]);
    let mut shown = 0;
    let mut more = false;
    'pages: for page in RowPages::new(store, filter.clone()) {
        for r in page? {
            if shown == TABLE_MAX_ROWS {
                more = true;
                break 'pages;
            }
            low.note(&r, &bounds);
            t.add_row(vec![
                r.tag.clone(),
                r.max_id.to_string(),
                r.step.to_string(),
                r.description.clone().unwrap_or_default(),
                updated(&r),
                left_cell(&r, &bounds),
            ]);
            shown += 1;
        }
    }
    if shown == 0 {
        return print_text(&nothing_listed(store, filter));
    }
    print_text(&render(t))?;
    low.warn(quiet);
    if more {
        super::error::note(&format!(
            "the first {TABLE_MAX_ROWS} tags; `--output tsv` lists every one, and \
             --prefix TEXT or --match GLOB narrows the list"
        ));
    }
    Ok(())
}

/// `tag list` as rows (TSV, a JSON array or NDJSON), each page written as it comes; with no
/// rows, TSV's header alone and the "no tags" sentence on stderr.
fn list_rows(
    store: &dyn AllocStore,
    filter: &TagFilter,
    format: RowFormat,
    quiet: bool,
) -> anyhow::Result<()> {
    let bounds = store.bounds();
    let mut low = LowTags::default();
    let framing = match format {
        RowFormat::Json => Framing::JsonArray { pretty: true },
        RowFormat::Ndjson => Framing::Ndjson,
        RowFormat::Text | RowFormat::Tsv => Framing::Tsv,
    };
    let mut out = RowWriter::new(io::stdout().lock(), framing, &COLUMNS);
    let mut rows = 0u64;
    for page in RowPages::new(store, filter.clone()) {
        for r in page? {
            low.note(&r, &bounds);
            out.begin_row();
            push_row(&mut out.buf, framing, &r, &bounds)?;
            out.end_row().map_err(write_err)?;
            rows += 1;
        }
        // A reader sees each page as it comes.
        out.flush().map_err(write_err)?;
    }
    let mut stdout = out.finish().map_err(write_err)?;
    if rows == 0 {
        if framing == Framing::Tsv {
            // Rows were promised: the header says which, even when none follow.
            let mut header = COLUMNS.join("\t");
            header.push('\n');
            io::Write::write_all(&mut stdout, header.as_bytes()).map_err(write_err)?;
            io::Write::flush(&mut stdout).map_err(write_err)?;
        }
        if !quiet {
            super::error::note(&nothing_listed(store, filter));
        }
    }
    low.warn(quiet);
    Ok(())
}

/// One row of `tag list` in `framing`: its TSV fields, or its JSON object (indented inside a
/// JSON array).
fn push_row(
    buf: &mut Vec<u8>,
    framing: Framing,
    r: &LeafAlloc,
    bounds: &Bounds,
) -> anyhow::Result<()> {
    if framing == Framing::Tsv {
        for (i, cell) in [
            r.tag.as_str(),
            &r.max_id.to_string(),
            &r.step.to_string(),
            r.description.as_deref().unwrap_or_default(),
            &rfc3339_s(r.update_time_s),
            &Headroom::within(bounds, r.max_id, r.step)
                .ids_left
                .to_string(),
            Headroom::within(bounds, r.max_id, r.step).status.as_str(),
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                buf.push(b'\t');
            }
            push_tsv_field(buf, cell);
        }
    } else {
        if matches!(framing, Framing::JsonArray { .. }) {
            buf.extend_from_slice(b"  ");
        }
        serde_json::to_writer(&mut *buf, &row_json(r, bounds))?;
    }
    Ok(())
}

/// A TSV field: a tab, line break, carriage return or backslash in it is escaped (`\t`, `\n`,
/// `\r`, `\\`), so every row stays one line of the same number of fields.
fn push_tsv_field(buf: &mut Vec<u8>, field: &str) {
    for b in field.bytes() {
        match b {
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b => buf.push(b),
        }
    }
}

pub fn run(ctx: &Context, cmd: TagCommand) -> anyhow::Result<()> {
    match cmd {
        TagCommand::Add {
            tag,
            step,
            start,
            reuse_removed_ids,
            desc,
            if_not_exists,
            opaque,
            periodic,
        } => add(
            ctx,
            tag,
            step,
            (start, reuse_removed_ids),
            desc,
            (if_not_exists, opaque, periodic),
        ),
        TagCommand::List { prefix, glob } => {
            let filter = match (prefix, glob) {
                (Some(p), _) => TagFilter::Prefix(p),
                (None, Some(g)) => TagFilter::Glob(g),
                (None, None) => TagFilter::All,
            };
            let store = db::open(ctx)?;
            list(&*store, &filter, ctx.rows, ctx.quiet)
        }
        TagCommand::Show { tag } => show(ctx, tag),
        TagCommand::SetStep { tag, step } => set_step(ctx, tag, step),
        TagCommand::Bump { tag, to } => bump(ctx, tag, to),
        TagCommand::Remove { tag, yes } => remove(ctx, tag, yes),
    }
}

/// `tag add`: the tag made (or found, with --if-not-exists), with a note when a removed tag of
/// the name left IDs behind.
fn add(
    ctx: &Context,
    tag: String,
    step: i64,
    start: (Option<i64>, bool),
    desc: Option<String>,
    (if_not_exists, opaque, periodic): (bool, Option<OpaqueWidth>, PeriodicArgs),
) -> anyhow::Result<()> {
    let (start, reuse_removed_ids) = start;
    check_tag(&tag)?;
    if desc.as_ref().is_some_and(|d| d.chars().count() > 256) {
        return Err(usage(
            "the description is longer than 256 characters",
            "shorten --desc",
        ));
    }
    let at = match (start, reuse_removed_ids) {
        (None, _) => StartAt::Default,
        (Some(s), false) => StartAt::Given(s),
        (Some(s), true) => StartAt::Reuse(s),
    };
    let (shape, key) = shape_of_options(ctx, &tag, opaque, start, periodic)?;
    let store = db::open(ctx)?;
    let new = NewTag {
        tag: &tag,
        start: at,
        step,
        description: desc.as_deref(),
        if_not_exists,
    };
    // Refused before anything is recorded: an N-digit opaque tag could issue nothing in a region,
    // nor a periodic one (its period rows would start in the region's block).
    match &shape {
        TagShape::Periodic(_) => store.bounds().refuse_periodic(&tag)?,
        other => drop(Issuing::new(&tag, other, key.as_ref(), &store.bounds())?),
    }
    let outcome = add_shaped_tag(&*store, &new, &shape)?;
    if outcome.added && !ctx.quiet {
        note_removed_before(&tag, outcome.removed_max_id, at);
    }
    let row = store.get(&tag)?;
    print_added(ctx, &store.bounds(), &tag, step, &outcome, row)
}

/// The shape `tag add`'s options ask for, and the ID key when `--opaque` needs it.
fn shape_of_options(
    ctx: &Context,
    tag: &str,
    opaque: Option<OpaqueWidth>,
    start: Option<i64>,
    periodic: PeriodicArgs,
) -> anyhow::Result<(TagShape, Option<IdKey>)> {
    let key = match opaque {
        Some(_) => ctx.settings.id_key()?,
        None => None,
    };
    let shape = match periodic.period {
        Some(_) => periodic_shape(tag, opaque, key.as_ref(), start, periodic)?,
        None => shape_to_add(tag, opaque, key.as_ref(), start, &ctx.settings.bounds())?,
    };
    Ok((shape, key))
}

/// The shape `tag add` records: opaque with `--opaque` (which needs the ID key, and a --start
/// inside the width's capacity), plain otherwise.
fn shape_to_add(
    tag: &str,
    opaque: Option<OpaqueWidth>,
    key: Option<&IdKey>,
    start: Option<i64>,
    bounds: &Bounds,
) -> anyhow::Result<TagShape> {
    let Some(width) = opaque else {
        return Ok(TagShape::Plain);
    };
    let Some(key) = key else {
        return Err(usage(
            format!("tag {tag} is to be opaque, and no ID key was given"),
            "give the key file with --key-file FILE (64 hex digits; `openssl rand -hex 32` makes one), LEAF_ID_KEY_FILE or ids.key_file",
        ));
    };
    Ok(TagShape::opaque_to_add(tag, width, key, start, bounds)?)
}

/// The shape of a periodic tag from `tag add`'s options; `--opaque` permutes its sequence and
/// then equals `--width`.
fn periodic_shape(
    tag: &str,
    opaque: Option<OpaqueWidth>,
    key: Option<&IdKey>,
    start: Option<i64>,
    args: PeriodicArgs,
) -> anyhow::Result<TagShape> {
    let (Some(period), Some(width)) = (args.period, args.width) else {
        return Ok(TagShape::Plain);
    };
    if start.is_some() {
        return Err(usage(
            "--start does not apply to a periodic tag: each period's sequence starts at 1",
            "drop --start",
        ));
    }
    let key_check = match opaque {
        None => None,
        Some(OpaqueWidth::Digits(n)) if n == width => match key {
            Some(key) => Some(key.check_value()),
            None => {
                return Err(usage(
                    format!("tag {tag} is to be opaque, and no ID key was given"),
                    "give the key file with --key-file FILE (64 hex digits; `openssl rand -hex 32` makes one), LEAF_ID_KEY_FILE or ids.key_file",
                ));
            }
        },
        Some(_) => {
            return Err(usage(
                format!("with --period, --opaque permutes the sequence of --width {width} digits"),
                format!("give --opaque {width}, or leave it out"),
            ));
        }
    };
    let zone = args.time_zone.as_deref().unwrap_or("UTC");
    let code = args.code.as_deref().unwrap_or("");
    Ok(TagShape::Periodic(PeriodicShape::new(
        tag, period, zone, code, width, key_check,
    )?))
}

/// `--opaque`'s value: a width of 7 to 18 digits, or 63 bits.
fn parse_opaque_width(text: &str) -> Result<OpaqueWidth, String> {
    OpaqueWidth::parse(text).map_err(|e| e.to_string())
}

/// Says what a removed tag of the name (which left `removed_max_id` behind) means for the tag
/// added at `at`: IDs issued again with --reuse-removed-ids, none without.
fn note_removed_before(tag: &str, removed_max_id: Option<i64>, at: StartAt) {
    match (removed_max_id, at) {
        (Some(r), StartAt::Reuse(s)) if s < r => {
            super::error::warning(&format!(
                "tag {tag} was removed at max_id {r}; starting at {s} \
                 (--reuse-removed-ids) issues IDs {s}..{} again",
                r - 1
            ));
        }
        (Some(r), StartAt::Default) => {
            super::error::note(&format!(
                "tag {tag} was removed before at max_id {r}; it continues \
                 from there, so no ID it issued is issued again"
            ));
        }
        _ => {}
    }
}

/// `tag add`'s result: the row (`row`, read back) with whether it was added, in JSON; in text
/// the tag added and the command that issues from it, or the tag found.
fn print_added(
    ctx: &Context,
    bounds: &Bounds,
    tag: &str,
    step: i64,
    outcome: &leafctl::segment::Added,
    row: Option<LeafAlloc>,
) -> anyhow::Result<()> {
    let added = outcome.added;
    match ctx.output {
        OutputFormat::Json => {
            #[derive(Serialize)]
            struct Added {
                added: bool,
                #[serde(flatten)]
                row: Option<RowJson>,
                removed_max_id: Option<String>,
            }
            print_json(&Added {
                added,
                row: row.as_ref().map(|r| row_json(r, bounds)),
                removed_max_id: outcome.removed_max_id.map(|r| r.to_string()),
            })
        }
        // -q prints only results: the confirmation is no result (the exit code is).
        OutputFormat::Text if ctx.quiet => Ok(()),
        OutputFormat::Text => {
            let text = match (added, row) {
                (true, _) => format!(
                    "added tag {tag}: IDs start at {}, step {step}\n  next: leafctl{} next {}",
                    outcome.start,
                    ctx.settings.flags_for_next(),
                    tag_for_shell(tag)
                ),
                (false, Some(r)) => format!(
                    "tag {tag} already exists (max_id {}, step {}); left unchanged",
                    r.max_id, r.step
                ),
                (false, None) => format!("tag {tag} already exists; left unchanged"),
            };
            print_text(&text)
        }
    }
}

/// `tag show`: one tag's row.
fn show(ctx: &Context, tag: String) -> anyhow::Result<()> {
    check_tag(&tag)?;
    let store = db::open(ctx)?;
    let Some(r) = store.get(&tag)? else {
        return Err(leafctl::segment::SegmentError::UnknownTag {
            tag,
            db: store.describe(),
        }
        .into());
    };
    // An opaque tag's IDs end with its width's capacity: its headroom counts up to there.
    let shape = TagShape::of(&*store, &tag)?;
    let bounds = store.bounds().capped(shape.ceiling());
    let h = Headroom::within(&bounds, r.max_id, r.step);
    match ctx.output {
        OutputFormat::Json => print_json(&ShownJson {
            row: row_json(&r, &bounds),
            shape: shape.spec().unwrap_or_else(|| "plain".into()),
        })?,
        OutputFormat::Text => {
            let mut t = table(&["key", "value"]);
            t.add_row(vec!["tag".to_string(), r.tag.clone()]);
            t.add_row(vec!["shape".to_string(), shape.to_string()]);
            t.add_row(vec!["max_id".to_string(), r.max_id.to_string()]);
            t.add_row(vec!["step".to_string(), r.step.to_string()]);
            t.add_row(vec![
                "description".to_string(),
                r.description.clone().unwrap_or_default(),
            ]);
            t.add_row(vec!["updated".to_string(), updated(&r)]);
            t.add_row(vec!["ids_left".to_string(), h.ids_left.to_string()]);
            t.add_row(vec!["claims_left".to_string(), h.claims_left.to_string()]);
            t.add_row(vec!["headroom".to_string(), h.status.as_str().to_string()]);
            print_text(&render(t))?
        }
    }
    if let Some(w) = h.warning(&r.tag, r.step)
        && !ctx.quiet
    {
        super::error::warning(&w);
    }
    Ok(())
}

/// `tag set-step`: a tag's step for the next claims.
fn set_step(ctx: &Context, tag: String, step: i64) -> anyhow::Result<()> {
    check_tag(&tag)?;
    let store = db::open(ctx)?;
    store.set_step(&tag, step)?;
    match ctx.output {
        OutputFormat::Json => {
            let r = store.get(&tag)?;
            print_json(&r.as_ref().map(|r| row_json(r, &store.bounds())))
        }
        OutputFormat::Text => print_text(&format!(
            "tag {tag}: step is now {step} (servers use it from their next segment)"
        )),
    }
}

/// `tag bump`: a tag's max_id moved forward, never down.
fn bump(ctx: &Context, tag: String, to: i64) -> anyhow::Result<()> {
    check_tag(&tag)?;
    let store = db::open(ctx)?;
    let from = leafctl::segment::bump_tag(&*store, &tag, to)?;
    match ctx.output {
        OutputFormat::Json => {
            #[derive(Serialize)]
            struct Bumped {
                tag: String,
                from: String,
                max_id: String,
                changed: bool,
            }
            print_json(&Bumped {
                tag,
                from: from.to_string(),
                max_id: to.to_string(),
                changed: from != to,
            })
        }
        OutputFormat::Text if from == to => print_text(&format!(
            "tag {tag}: max_id is already {to}; left unchanged"
        )),
        OutputFormat::Text => print_text(&format!(
            "tag {tag}: max_id moved from {from} to {to}; the next claim starts at {to}"
        )),
    }
}

/// `tag remove`: a tag deleted, its tombstone kept.
fn remove(ctx: &Context, tag: String, yes: bool) -> anyhow::Result<()> {
    check_tag(&tag)?;
    if !yes {
        return Err(usage(
            format!("refusing to remove tag {tag} without --yes"),
            "servers stop issuing its IDs once they see it gone; its final max_id is kept, so re-adding it continues from there; pass --yes",
        ));
    }
    let store = db::open(ctx)?;
    let removed = store.remove(&tag)?;
    // The tombstone keeps the highest max_id the name ever reached, which is above this row's
    // after a re-add with --reuse-removed-ids: say what was kept.
    let (r, kept) = (removed.row, removed.tombstone);
    match ctx.output {
        OutputFormat::Json => {
            #[derive(Serialize)]
            struct Removed {
                removed: bool,
                /// The tombstone kept: the highest max_id the name reached.
                tombstone: String,
                #[serde(flatten)]
                row: RowJson,
            }
            print_json(&Removed {
                removed: true,
                tombstone: kept.to_string(),
                row: row_json(&r, &store.bounds()),
            })
        }
        OutputFormat::Text if kept > r.max_id => print_text(&format!(
            "removed tag {tag}; its final max_id was {}, and leaf_alloc_removed keeps \
             {kept}, the highest it reached before (`leafctl tag add {}` continues above \
             every ID the name issued)",
            r.max_id,
            tag_for_shell(&tag)
        )),
        OutputFormat::Text => print_text(&format!(
            "removed tag {tag}; its final max_id was {} (kept in leaf_alloc_removed: \
             `leafctl tag add {}` continues above every ID it issued)",
            r.max_id,
            tag_for_shell(&tag)
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tsv_fields_keep_one_row_per_line() {
        let mut buf = Vec::new();
        super::push_tsv_field(&mut buf, "a\tb\nc\\d\re");
        assert_eq!(buf, b"a\\tb\\nc\\\\d\\re");
    }
}
