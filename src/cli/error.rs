//! How failures reach the user: one sentence on stderr, a hint, and an exit code.

use std::fmt;
use std::process::ExitCode;

use leafctl::config::ConfigError;
use leafctl::region::RegionError;
use leafctl::segment::SegmentError;
use leafctl::snowflake::SnowflakeError;
use leafctl::worker::StateError;
use leafctl::worker::{IssueError, WorkerError};

/// Exit code of a successful run.
pub const EXIT_OK: u8 = 0;
/// Exit code of a runtime failure: a service unreachable, the clock moved back, a range exhausted.
pub const EXIT_RUNTIME: u8 = 1;
/// Exit code of a usage error or invalid input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code when standard output could not be written: closed (`>&-`), full (`>/dev/full`, a
/// full disk) or failing. `next` says on stderr how many claimed IDs were not written.
pub const EXIT_OUTPUT: u8 = 3;

/// Standard output could not be written (exit [`EXIT_OUTPUT`]): closed, full, an I/O error.
/// A reader that went away (`| head`) is [`ClosedPipe`] instead.
#[derive(Debug)]
pub struct OutputFailed {
    /// What failed, and for `next` what became of the IDs it claimed.
    pub message: String,
}

impl fmt::Display for OutputFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for OutputFailed {}

/// The hint of every [`OutputFailed`].
const OUTPUT_HINT: &str = "check where standard output goes: a closed descriptor (`>&-`), a full disk or device; send it to a file with room (`> FILE`), a pipe, or `>/dev/null` to discard it on purpose";

/// An error the CLI raised itself, with its class and a hint.
#[derive(Debug)]
pub struct CliError {
    pub usage: bool,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// A usage error (exit 2) with a hint.
pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    CliError {
        usage: true,
        message: message.into(),
        hint: Some(hint.into()),
    }
    .into()
}

/// Marks output that stopped because the reader went away (`| head`): not an error.
#[derive(Debug)]
pub struct ClosedPipe;

impl fmt::Display for ClosedPipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output closed by the reader")
    }
}
impl std::error::Error for ClosedPipe {}

/// Already reported on stderr (e.g. per-value decode errors); only the exit code is left to set.
#[derive(Debug)]
pub struct AlreadyReported(pub u8);

impl fmt::Display for AlreadyReported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed (exit {})", self.0)
    }
}
impl std::error::Error for AlreadyReported {}

/// A registry's failure: its class and hint come from the library (each backend's error says
/// what to do about it).
fn worker_class_and_hint(e: &WorkerError) -> (u8, Option<String>) {
    let code = if e.is_usage() {
        EXIT_USAGE
    } else {
        EXIT_RUNTIME
    };
    (code, Some(e.hint()))
}

fn class_and_hint(err: &anyhow::Error) -> (u8, Option<String>) {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<IssueError>() {
            match e {
                IssueError::Worker(w) => return worker_class_and_hint(w),
                IssueError::Snowflake(_) => {}
            }
        }
        if let Some(e) = cause.downcast_ref::<WorkerError>() {
            return worker_class_and_hint(e);
        }
        if cause.downcast_ref::<OutputFailed>().is_some() {
            return (EXIT_OUTPUT, Some(OUTPUT_HINT.into()));
        }
        if let Some(e) = cause.downcast_ref::<CliError>() {
            let code = if e.usage { EXIT_USAGE } else { EXIT_RUNTIME };
            return (code, e.hint.clone());
        }
        if let Some(e) = cause.downcast_ref::<ConfigError>() {
            let hint = match e {
                ConfigError::Read { .. } => "check the path given by --config or LEAF_CONFIG",
                ConfigError::Parse { .. } => {
                    "fix the file at the line named; `leafctl config show --help` lists the keys leafctl knows, and `--config /dev/null` runs without any file (`leafctl decode` runs on regardless)"
                }
            };
            return (EXIT_USAGE, Some(hint.into()));
        }
        if let Some(e) = cause.downcast_ref::<SnowflakeError>() {
            return snowflake_class_and_hint(e);
        }
        if let Some(e) = cause.downcast_ref::<SegmentError>() {
            return segment_class_and_hint(e);
        }
        if let Some(e) = cause.downcast_ref::<RegionError>() {
            return (EXIT_USAGE, Some(e.hint()));
        }
        if let Some(e) = cause.downcast_ref::<StateError>() {
            return (EXIT_RUNTIME, Some(e.hint().into()));
        }
    }
    (EXIT_RUNTIME, None)
}

fn snowflake_class_and_hint(e: &SnowflakeError) -> (u8, Option<String>) {
    use SnowflakeError as E;
    let code = match e {
        E::LeadOutOfRange { .. } | E::WorkerOutOfRange { .. } | E::InvalidLayout(_) => EXIT_USAGE,
        _ => EXIT_RUNTIME,
    };
    let hint = match e {
        E::ClockMovedBackwards { .. } => {
            "check NTP on this host; leafctl resumes once the clock passes the last issued time"
        }
        E::TimeOverflow { .. } => {
            "the layout has run out of time: use a layout with a later epoch or more time bits"
        }
        E::BeforeEpoch { .. } => "check the clock and the layout's epoch",
        E::LeadOutOfRange { .. } => "give --max-lead between 0 and 60000 ms",
        E::FenceFailed(_) | E::FenceReached { .. } => {
            "the worker id's reservation could not be recorded where the message says (a full or read-only state directory, an unreachable registry); fix that and retry"
        }
        E::WorkerOutOfRange { .. } => "pick a worker id the layout can hold",
        E::InvalidLayout(_) => "see `leafctl decode --help` for layouts",
        _ => "retry once the worker's registry is reachable",
    };
    (code, Some(hint.into()))
}

fn segment_class_and_hint(e: &SegmentError) -> (u8, Option<String>) {
    (segment_class(e), Some(segment_hint(e)))
}

/// What was asked wrongly is a usage error; the rest went wrong at run time.
fn segment_class(e: &SegmentError) -> u8 {
    use SegmentError as E;
    match e {
        E::InvalidTag { .. }
        | E::InvalidStep(_)
        | E::InvalidStart(_)
        | E::InvalidCount(_)
        | E::InvalidUrl { .. }
        | E::UnknownTag { .. }
        | E::TagExists { .. }
        | E::BelowRemoved { .. }
        | E::GivenOutsideBlock { .. }
        | E::NameUsedUp { .. }
        | E::Region(_)
        | E::SameRegion { .. }
        | E::ShapeFixed { .. }
        | E::KeyNeeded { .. }
        | E::KeyMismatch { .. }
        | E::OpaqueInRegions { .. }
        | E::OpaqueNeedsRegion { .. }
        | E::OpaqueTooNarrow { .. }
        | E::OpaqueStartAbove { .. }
        | E::BadShape { .. }
        | E::NotOfShape { .. }
        | E::PeriodicHere { .. }
        | E::PeriodicInRegions { .. }
        | E::PeriodRow { .. }
        | E::BumpDown { .. } => EXIT_USAGE,
        _ => EXIT_RUNTIME,
    }
}

/// What to do about a segment error: each variant's hint, those of a concern in a function of
/// its own.
fn segment_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    match e {
        E::InvalidTag { .. } => {
            "a tag has 1 to 128 characters and no whitespace, e.g. order or leaf-segment-test"
                .into()
        }
        E::InvalidStep(_) => "pick a step between 1 and 2147483647".into(),
        E::InvalidStart(_) => "pick a start of 0 or more".into(),
        E::InvalidCount(_) => "ask for fewer IDs".into(),
        E::UnknownTag { .. }
        | E::TagExists { .. }
        | E::Exhausted { .. }
        | E::TooFew { .. }
        | E::BadRow { .. }
        | E::WentBackwards { .. }
        | E::BelowRemoved { .. }
        | E::BumpDown { .. } => tag_hint(e),
        E::OutsideBlock { .. }
        | E::GivenOutsideBlock { .. }
        | E::NameUsedUp { .. }
        | E::RemovedBelowBlock { .. }
        | E::Region(_)
        | E::RegionRecordedSince { .. }
        | E::SameRegion { .. } => region_hint(e),
        E::InvalidUrl { .. }
        | E::MissingTable { .. }
        | E::Unreachable { .. }
        | E::Busy { .. }
        | E::TlsRefused { .. }
        | E::AccessDenied { .. }
        | E::Database { .. }
        | E::FileAccess { .. }
        | E::NoRemovedTable { .. } => database_hint(e),
        E::ShapeFixed { .. }
        | E::UnreadableShape { .. }
        | E::KeyNeeded { .. }
        | E::KeyMismatch { .. }
        | E::OpaqueInRegions { .. }
        | E::OpaqueNeedsRegion { .. }
        | E::OpaqueTooNarrow { .. }
        | E::OpaqueStartAbove { .. }
        | E::BadShape { .. }
        | E::NotOfShape { .. }
        | E::PeriodicHere { .. }
        | E::PeriodicInRegions { .. }
        | E::PeriodFull { .. }
        | E::PeriodicBase { .. }
        | E::PeriodRow { .. }
        | E::Opaque { .. } => shape_hint(e),
        E::Marks { .. }
        | E::Conflict { .. }
        | E::NotReady { .. }
        | E::BatchNotReady { .. }
        | E::Stopped { .. } => generator_hint(e),
    }
}

/// The hints of a shaped tag's refusals (issue 48): its shape fixed, its key missing or wrong.
fn shape_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    use leafctl::idformat::opaque::OpaqueError;
    match e {
        // (No `tag show`: the name may be a removed tag's, which it cannot show.)
        E::ShapeFixed { .. } => "add it with the shape named above (the options it was added with), or give the new shape a new name".into(),
        E::UnreadableShape { .. } => {
            "use the leafctl that added the tag (or a newer one); never edit leaf_tag_shape".into()
        }
        E::KeyNeeded { .. } => "give the tag's key: --key-file FILE, LEAF_ID_KEY_FILE, ids.key_file in the config file, or systemd's credential leaf-id-key".into(),
        E::KeyMismatch { .. } => {
            "give the key the tag was added with (its check value is in `leafctl tag show`)".into()
        }
        E::OpaqueInRegions { .. } => "it was added before the deployment had regions, so only region 0 issues it: add a new tag for the other regions (`tag add NAME --opaque N` in a region gives each region its own first digit)".into(),
        E::OpaqueNeedsRegion { .. } => "give this process its region (--region R --regions N), as the database records".into(),
        E::OpaqueTooNarrow { .. } => format!(
            "give --opaque {} or more",
            leafctl::idformat::opaque::MIN_DIGITS + 1
        ),
        E::OpaqueStartAbove { .. } => "give a smaller --start, or more digits to --opaque".into(),
        E::BadShape { .. } => "see `leafctl tag add --help` for --period, --width, --code and --time-zone".into(),
        E::NotOfShape { tag, .. } => format!(
            "check the ID and the tag ({} names the tag's shape)",
            command(&format!("tag show {}", leafctl::segment::tag_for_shell(tag)))
        ),
        E::PeriodicHere { tag } => format!(
            "issue it with {}",
            command(&format!("next {}", leafctl::segment::tag_for_shell(tag)))
        ),
        E::PeriodicInRegions { .. } => "issue periodic tags from a deployment without regions".into(),
        E::PeriodicBase { tag } => format!(
            "issue it with {}",
            command(&format!("next {}", leafctl::segment::tag_for_shell(tag)))
        ),
        E::PeriodFull { left: 0, .. } => "the next period starts its sequence at 1 again; a wider sequence needs a new tag".into(),
        E::PeriodFull { left, .. } => format!("ask for {left} or fewer; the next period starts its sequence at 1 again, and a wider sequence needs a new tag"),
        E::PeriodRow { of, .. } => format!(
            "issue the periodic tag's IDs: {}",
            command(&format!("next {}", leafctl::segment::tag_for_shell(of)))
        ),
        E::Opaque { source, .. } => match source {
            OpaqueError::Exhausted { .. } => "an opaque tag that used up its domain issues nothing more: move its users to a new tag of more digits".into(),
            _ => "check the ID and the tag: an opaque tag's IDs all have its width (`leafctl tag show` names it)".into(),
        },
        other => other.to_string(),
    }
}

/// The hints of a tag's refusals: unknown or there already, used up, gone backwards, moved the
/// wrong way.
fn tag_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    match e {
        E::UnknownTag { tag, .. } => format!(
            "add it with {}; {} shows the tags there are",
            command(&format!("tag add {}", leafctl::segment::tag_for_shell(tag))),
            command("tag list")
        ),
        E::TagExists { .. } => {
            "pass --if-not-exists to accept an existing tag, or pick another name".into()
        }
        E::Exhausted {
            tag,
            max_id,
            increment,
            ceiling,
        } => exhausted_hint(tag, *max_id, *increment, *ceiling),
        E::TooFew { left, .. } => format!(
            "ask for {left} or fewer; then move the tag's users to a new tag (`leafctl tag add NEW`)"
        ),
        E::BadRow { .. } => {
            "fix the row with `leafctl tag show`/`set-step`, or by hand in the database".into()
        }
        E::WentBackwards { tag, mark, .. } => {
            format!(
                "once the database holds what it should, move the tag past every issued ID with {} (or higher, if other claimants claimed more), then retry",
                command(&format!(
                    "tag bump {} --to {mark}",
                    leafctl::segment::tag_for_shell(tag)
                ))
            )
        }
        E::BelowRemoved {
            tag,
            removed_max_id,
            ..
        } => {
            let t = leafctl::segment::tag_for_shell(tag);
            format!(
                "leave out --start to continue from {removed_max_id} ({}), or give --start {removed_max_id} or more; only if no ID below {removed_max_id} is in use, add --reuse-removed-ids",
                command(&format!("tag add {t}"))
            )
        }
        E::BumpDown { tag, .. } => format!(
            "a tag only moves forward; {} gives its max_id",
            command(&format!(
                "tag show {}",
                leafctl::segment::tag_for_shell(tag)
            ))
        ),
        // segment_hint sends no other error here.
        other => format!("{other}; `leafctl tag --help` says how tags work"),
    }
}

/// The hint of a tag that cannot give `increment` more IDs below `ceiling`, at `max_id`: ask for
/// fewer while some are left, else move to a new tag.
fn exhausted_hint(tag: &str, max_id: i64, increment: i64, ceiling: i64) -> String {
    let left = ceiling.saturating_sub(max_id).max(0);
    if increment > 1 && left > 0 {
        format!(
            "the tag has {left} IDs left (max_id {max_id}) and {increment} do not fit: ask for at most {left}; when it is nearly used up, move to a new tag ({} says how many are left)",
            command(&format!(
                "tag show {}",
                leafctl::segment::tag_for_shell(tag)
            ))
        )
    } else if ceiling < i64::MAX {
        format!(
            "the tag has used up its region's block: move its users to a new tag (a region's tags share its block; {} shows how many IDs each has left)",
            command("tag list")
        )
    } else {
        "the tag has run out of 63-bit IDs: move its users to a new tag".to_string()
    }
}

/// The hints of the database's refusals: a URL, a table, the server, TLS, a login, a file.
fn database_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    match e {
        E::InvalidUrl { .. } => format!("use {}", leafctl::db::url_forms_after("--db ")),
        E::MissingTable { .. } => format!(
            "create it with {} (or have a DBA run `leafctl db init --print`)",
            command("db init")
        ),
        E::Unreachable { .. } => {
            "check that the database server is up and the host and port in --db/LEAF_DB are right".into()
        }
        E::Busy { .. } => {
            "another session holds leaf_alloc's row (SELECT ... FOR UPDATE) or the server is overloaded: see MySQL's SHOW PROCESSLIST and information_schema.innodb_trx, or PostgreSQL's pg_stat_activity and pg_locks, then retry".into()
        }
        // The database's own advice (how its server turns TLS on, how its URL names a CA).
        E::TlsRefused { db, detail } => match leafctl::db::DbAddress::parse(db) {
            Ok(address) => address.database().tls_advice(detail).into(),
            Err(_) => "give the CA that signed the server's certificate in the URL, and a host name that certificate carries".into(),
        },
        E::AccessDenied { .. } => access_hint(DB_PASSWORD_FROM.get().map(String::as_str)),
        E::Database { .. } => "check the database server's log".into(),
        E::FileAccess { path, .. } => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| ".".into(), |d| d.display().to_string());
            format!(
                "check that {} and its directory {dir} are writable by this user (SQLite writes a journal beside the file), or point --db elsewhere",
                path.display()
            )
        }
        E::NoRemovedTable { .. } => format!(
            "run {} as a user allowed to create tables (or have a DBA run the DDL of `leafctl db init --print`), then remove the tag again",
            command("db init")
        ),
        // segment_hint sends no other error here.
        other => format!("{other}; check the database server's log"),
    }
}

/// The hints of a running generator's refusals: its marks, a conflict, not ready, stopped.
fn generator_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    match e {
        E::Marks { .. } => {
            "check the state directory's permissions, or point --state-dir elsewhere".into()
        }
        E::Conflict { .. } => {
            "other claimants write the same tag on other nodes at the same time: retry, or send one tag's claims to one node (a load balancer's first-available policy)".into()
        }
        E::NotReady { .. } => {
            "retry shortly; the generator reloads by itself once the database answers".into()
        }
        E::BatchNotReady { buffered, .. } => {
            format!(
                "retry once the database answers; a batch of at most {buffered} IDs is served from the buffers now"
            )
        }
        E::Stopped { .. } => {
            "the generator was stopped; start it again (a new one claims anew)".into()
        }
        // segment_hint sends no other error here.
        other => format!("{other}; retry shortly"),
    }
}

/// The hints of a region's refusals: a row or a value outside its block, a name used up in it,
/// a database of another region.
fn region_hint(e: &SegmentError) -> String {
    use SegmentError as E;
    match e {
        E::RegionRecordedSince { region, .. } => format!(
            "run it with --regions {} --region {} (the region its database records now)",
            region.count(),
            region.index()
        ),
        E::OutsideBlock {
            tag,
            max_id,
            floor,
            ceiling,
            recorded,
            ..
        } => {
            // A database that records no region yet is repaired without region flags (opened
            // in the region, it is refused for this very row).
            let (db, region) = HINT_FLAGS.get().cloned().unwrap_or_default();
            let flags = if *recorded { db + &region } else { db };
            outside_block_hint(tag, *max_id, (*floor, *ceiling), &flags)
        }
        E::GivenOutsideBlock {
            tag,
            option,
            floor,
            ceiling,
            ..
        } => {
            let t = leafctl::segment::tag_for_shell(tag);
            if *option == "--to" {
                format!(
                    "give --to between {floor} and {ceiling}; {} gives its max_id",
                    command(&format!("tag show {t}"))
                )
            } else {
                format!(
                    "give --start between {floor} and {}, or leave it out to start at the block's start ({})",
                    ceiling - 1,
                    command(&format!("tag add {t}"))
                )
            }
        }
        E::NameUsedUp { .. } => format!(
            "give the tag another name here ({} shows the names in use)",
            command("tag list")
        ),
        E::RemovedBelowBlock { .. } => format!(
            "this database issued IDs of another region's block: make it that region's ({} says what it records), or give this region a database of its own (`leafctl region add --from URL --db NEW_URL --region R --regions N` seeds one from this one)",
            command("region show")
        ),
        E::Region(r) => r.hint(),
        E::SameRegion { .. } => {
            "give the new region a number no database records (`leafctl region check URL...` lists them)".into()
        }
        other => format!("{other}; `leafctl region --help` says how regions work"),
    }
}

/// How an error is written on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStyle {
    /// An `error:` line and a `hint:` line, for people.
    Text,
    /// One JSON object on one line, for scripts (`--output json|ndjson`):
    /// `{"error":{"code":"usage","exit":2,"message":"...","hint":"..."}}`.
    Json,
}

/// The name of an exit code's class, as JSON errors give it.
pub fn code_name(exit: u8) -> &'static str {
    match exit {
        EXIT_OK => "ok",
        EXIT_USAGE => "usage",
        EXIT_OUTPUT => "output",
        _ => "runtime",
    }
}

/// The JSON form of an error: one object on one line.
pub fn json_error(exit: u8, message: &str, hint: Option<&str>) -> String {
    serde_json::json!({
        "error": {
            "code": code_name(exit),
            "exit": exit,
            "message": message,
            "hint": hint,
        }
    })
    .to_string()
}

/// Where this run's database password came from (`LEAF_DB_PASSWORD`, the URL, ...), for hints;
/// unset when no password was given.
static DB_PASSWORD_FROM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Records where the database password came from (once), so an access error's hint names it.
pub fn set_db_password_source(source: String) {
    let _ = DB_PASSWORD_FROM.set(source);
}

/// The flags a command suggested in a hint must carry to open the same stores
/// ([`Settings::flags_for_next`](super::settings::Settings::flags_for_next)): the database's and
/// the region's, each empty when not given on the command line; unset until the settings are.
static HINT_FLAGS: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// Records (once) the flags that this run's hints put into the commands they suggest: the
/// database's (` --db URL`) and the region's (` --region R --regions N`).
pub fn set_hint_flags(db: String, region: String) {
    let _ = HINT_FLAGS.set((db, region));
}

/// `leafctl ARGS` as a hint prints it: with the flags that open the same stores, so that the
/// command runs as printed (`leafctl --db URL --region 1 --regions 2 tag bump ...`).
fn command(args: &str) -> String {
    let (db, region) = HINT_FLAGS.get().cloned().unwrap_or_default();
    format!("`leafctl{db}{region} {args}`")
}

/// The hint of a tag whose row lies outside a region's block `[floor, ceiling)`, its commands
/// run with `flags` (` --db URL ...`, which open that database). Below the block, a bump moves
/// it in; above it, the tag issued IDs of the blocks above, and no bump (which never moves
/// down) repairs that.
pub fn outside_block_hint(tag: &str, max_id: i64, block: (i64, i64), flags: &str) -> String {
    let t = leafctl::segment::tag_for_shell(tag);
    let (floor, ceiling) = block;
    if max_id > ceiling {
        return format!(
            "the tag issued IDs up to {max_id}, above this region's block (which ends at {ceiling}): the regions above issue those. This database can be this region's only without the tag: move its users to a new tag, then remove it (`leafctl{flags} tag remove {t} --yes`); its tombstone keeps the name above every ID it issued, and `region add` carries it to the regions above"
        );
    }
    format!(
        "the row was not made in this region (a tag added before the region was set, a database restored from another region's backup): if this database is this region's, and no ID of the tag at or above {floor} was issued anywhere, move it into the block with `leafctl{flags} tag bump {t} --to {floor}`; `leafctl region check URL OTHER_URL...` compares the regions' databases"
    )
}

/// The hint of a refused login: what to check, naming where the password tried came from
/// (`None`: no password was given).
pub fn access_hint(password_from: Option<&str>) -> String {
    match password_from {
        Some(from) => format!(
            "check the user in the URL, its rights on the database, and the password (given by {from})"
        ),
        None => format!(
            "check the user in the URL; no password was given: give it with {PASSWORD_WAYS}"
        ),
    }
}

/// Ways to give the database password, for hints.
const PASSWORD_WAYS: &str = "LEAF_DB_PASSWORD, LEAF_DB_PASSWORD_FILE (or systemd's credential leaf-db-password), or db.password/db.password_file in the config file";

/// The style of this run's errors, set once from `--output` (text until then).
static STYLE: std::sync::OnceLock<ErrorStyle> = std::sync::OnceLock::new();

/// Sets how this run writes its errors (once; later calls change nothing).
pub fn set_style(style: ErrorStyle) {
    let _ = STYLE.set(style);
}

/// How this run writes its errors.
pub fn style() -> ErrorStyle {
    STYLE.get().copied().unwrap_or(ErrorStyle::Text)
}

/// Writes one error about one value (a decode input, a file) in this run's style; the run goes
/// on and ends with `exit` (see [`AlreadyReported`]).
pub fn value_error(exit: u8, message: &str, hint: Option<&str>) {
    match style() {
        ErrorStyle::Json => stderr!("{}", json_error(exit, message, hint)),
        ErrorStyle::Text => {
            stderr!("error: {message}");
            if let Some(h) = hint {
                stderr!("  hint: {h}");
            }
        }
    }
}

/// A note on stderr in this run's style: `note: TEXT`, or with `--output json|ndjson`
/// `{"note":"TEXT"}` on one line, so a script reading stderr as JSON lines never meets prose.
pub fn note(text: &str) {
    match style() {
        ErrorStyle::Json => stderr!("{}", serde_json::json!({ "note": text })),
        ErrorStyle::Text => stderr!("note: {text}"),
    }
}

/// What a long command is doing or has done (`serve` listening, handing back, stopped; `region
/// add`'s progress): the text as it is, or `{"progress":"..."}` under `--output json`, so stderr
/// stays JSON lines.
pub fn progress(text: &str) {
    match style() {
        ErrorStyle::Json => stderr!("{}", serde_json::json!({ "progress": text })),
        ErrorStyle::Text => stderr!("{text}"),
    }
}

/// A warning on stderr in this run's style: `warning: TEXT`, or `{"warning":"TEXT"}`.
pub fn warning(text: &str) {
    match style() {
        ErrorStyle::Json => stderr!("{}", serde_json::json!({ "warning": text })),
        ErrorStyle::Text => stderr!("warning: {text}"),
    }
}

/// The closing line of a run that reported errors value by value: a `hint:` line in text, one
/// more JSON error object (with this as its message) in JSON.
pub fn closing_hint(exit: u8, text: &str) {
    match style() {
        ErrorStyle::Json => stderr!("{}", json_error(exit, text, None)),
        ErrorStyle::Text => stderr!("  hint: {text}"),
    }
}

/// Prints the error the way every leafctl failure looks and picks the exit code.
pub fn report(err: &anyhow::Error) -> ExitCode {
    report_as(err, style())
}

/// [`report`] in the given style.
pub fn report_as(err: &anyhow::Error, style: ErrorStyle) -> ExitCode {
    if err.downcast_ref::<ClosedPipe>().is_some() {
        return ExitCode::from(EXIT_OK);
    }
    if let Some(AlreadyReported(code)) = err.downcast_ref::<AlreadyReported>() {
        return ExitCode::from(*code);
    }
    let (code, hint) = class_and_hint(err);
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let c = cause.to_string();
        if !message.contains(&c) {
            message.push_str(": ");
            message.push_str(&c);
        }
    }
    // A closed or full stderr loses the message, never the exit code.
    match style {
        ErrorStyle::Json => stderr!("{}", json_error(code, &message, hint.as_deref())),
        ErrorStyle::Text => {
            stderr!("error: {message}");
            if let Some(h) = hint {
                stderr!("  hint: {h}");
            }
        }
    }
    ExitCode::from(code)
}
