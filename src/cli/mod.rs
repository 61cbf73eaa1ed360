//! The command-line interface: flags defined as data, each command a thin call into the library.

/// `eprintln!` that never panics: a closed or full stderr (`2>/dev/full`, `2>&1 | head -c1`)
/// loses the line instead of ending the run with exit 101 (see `output::stderr::stderr_line`).
macro_rules! stderr {
    ($($arg:tt)*) => {{
        let _ = $crate::cli::output::stderr::stderr_line(&format!($($arg)*));
    }};
}

mod assets;
mod config_cmd;
mod db;
mod decode;
pub mod error;
mod next;
pub mod output;
mod parse;
mod region;
mod registry;
mod serve;
pub mod settings;
mod tag;
pub mod time;
mod workers;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use leafctl::config::{self, Origin};

use output::{OutputFormat, RowFormat};
pub use parse::{parse_registry, whole_number};
use settings::{Settings, env_var};

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  runtime failure (service unreachable, clock moved backwards, range exhausted, ...)
  2  usage error or invalid input
  3  standard output could not be written (closed, full); `next` says on stderr how many claimed
     IDs were not written (they are never issued again). A reader that went away (`| head -1`)
     is not an error (exit 0); `next` then notes on stderr how many IDs it did not write

Configuration: flag > environment variable > config file > built-in default.
Config file: --config FILE, else $LEAF_CONFIG, else ./leaf.toml, else $XDG_CONFIG_HOME/leafctl/leaf.toml.";

/// leafctl: distributed 64-bit IDs, Meituan Leaf compatible (snowflake and segment modes).
#[derive(Debug, Parser)]
#[command(
    name = "leafctl",
    version,
    about = "Distributed 64-bit IDs: Meituan Leaf's snowflake and segment modes, from the command line",
    after_help = EXIT_CODES,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand accepts, before or after its name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file (TOML) [env: LEAF_CONFIG]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output format: text, json; tsv and ndjson for commands that print rows (next, decode,
    /// tag list). In JSON every 64-bit ID is a decimal string
    #[arg(long, global = true, value_enum, default_value_t = RowFormat::Text)]
    pub output: RowFormat,
    /// Print only results: no progress, no warnings
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The settings' global flags (`--db`, `--zk`, ...), made from their declarations.
    #[command(flatten)]
    pub settings: settings::Flags<{ settings::scope::GLOBAL }>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Issue IDs
    #[command(after_help = next::examples())]
    Next(next::NextArgs),
    /// Run Leaf's HTTP service (drop-in for Leaf's clients), with batches, metrics and health checks
    #[command(after_help = serve::examples())]
    Serve(serve::ServeArgs),
    /// Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a
    /// layout, find IDs in logs, or turn a time range into an ID range
    #[command(after_help = decode::EXAMPLES)]
    Decode(decode::DecodeArgs),
    /// Manage segment-mode tags (rows of Leaf's leaf_alloc table)
    #[command(subcommand)]
    Tag(tag::TagCommand),
    /// Set up the segment database (leaf_alloc table)
    #[command(subcommand)]
    Db(db::DbCommand),
    /// Regions: show a database's region, add a region beside a running deployment, check
    /// several regions' databases
    #[command(subcommand)]
    Region(region::RegionCommand),
    // List, reclaim and check worker ids in the registries' stores (the list is the library's).
    #[command(
        subcommand,
        about = format!(
            "List, reclaim and check worker ids in {}",
            leafctl::registries::stores()
        )
    )]
    Workers(workers::WorkersCommand),
    /// Inspect the effective configuration
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
}

/// Snowflake layout flags shared by `next --snowflake`, `serve` and `decode`, made from their
/// settings' declarations.
pub type LayoutArgs = settings::Flags<{ settings::scope::LAYOUT }>;

/// Snowflake flags shared by `next --snowflake` and `serve --snowflake` (the layout's too).
pub type SnowflakeArgs = settings::Flags<{ settings::scope::SNOWFLAKE | settings::scope::LAYOUT }>;

/// What a command runs with: parsed globals and resolved settings.
pub struct Context {
    /// The format of commands that print one result (text or json).
    pub output: OutputFormat,
    /// The format of commands that stream rows (`next`, `decode`): `--output` as given.
    pub rows: RowFormat,
    pub quiet: bool,
    pub settings: Settings,
    /// The region given to a database that records none yet ([`db::open`]): recorded once the
    /// command succeeded, so a refused command records nothing.
    pub region_to_record: std::cell::Cell<Option<leafctl::segment::RegionToRecord>>,
}

impl Context {
    /// Records the region [`db::open`] left to record, if any: once the command succeeded (or,
    /// for `serve`, started).
    pub fn record_region(&self, store: &dyn leafctl::segment::AllocStore) -> anyhow::Result<()> {
        if let Some(r) = self.region_to_record.take() {
            r.record(store)?;
        }
        Ok(())
    }

    /// [`Context::record_region`] in the database the settings name, opened for it: where no
    /// store is at hand (a database used as the worker-id registry, the end of a command).
    pub fn record_region_in_db(&self) -> anyhow::Result<()> {
        if self.region_to_record.get().is_none() {
            return Ok(());
        }
        let s = &self.settings;
        let password = s.db_password.as_ref().map(|p| p.value.as_str());
        let store =
            leafctl::db::DbAddress::parse(&s.db_url.value)?.open_for_inspection(password)?;
        self.record_region(store.as_ref())
    }
}

/// A log line as one JSON object (`{"level":"warn","message":"...",...}`): what `--output json`
/// and `--output ndjson` make of `serve`'s and the generators' logs, so every stderr line is one.
struct JsonLogLine;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for JsonLogLine
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        /// Collects an event's fields as JSON values.
        struct Fields(serde_json::Map<String, serde_json::Value>);
        impl tracing::field::Visit for Fields {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.insert(field.name().into(), value.into());
            }
            fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
                self.0.insert(field.name().into(), value.into());
            }
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                self.0.insert(field.name().into(), value.into());
            }
            fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
                self.0.insert(field.name().into(), value.into());
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0
                    .insert(field.name().into(), format!("{value:?}").into());
            }
        }
        let mut fields = Fields(serde_json::Map::new());
        fields.0.insert(
            "level".into(),
            event.metadata().level().as_str().to_lowercase().into(),
        );
        event.record(&mut fields);
        writeln!(writer, "{}", serde_json::Value::Object(fields.0))
    }
}

fn init_logging(verbose: u8, quiet: bool, json: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("LEAF_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("leafctl={level}")));
    if json {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .event_format(JsonLogLine)
            .try_init();
        return;
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a log file or journald gets plain text.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_target(false)
        .without_time()
        .try_init();
}

/// Runs the command line's command: the refusals that come before anything is done, then the
/// settings resolved, the command run, and a region left to record recorded once it succeeded.
fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    refuse_closed_stdout(&cli.command)?;
    let output = document_format(&cli, matches)?;
    let loaded = load_config(&cli)?;
    // `decode` and `workers` read the regions of IDs and worker ids with `--regions` alone.
    let count_alone = matches!(cli.command, Command::Decode(_) | Command::Workers(_));
    let settings = Settings::resolve(matches, loaded, count_alone)?;
    if let Some(from) = settings.db_password_source() {
        error::set_db_password_source(from);
    }
    error::set_hint_flags(
        settings.db_flag_for_next(),
        settings.region_flags_for_next(),
    );
    let ctx = Context {
        output,
        rows: cli.global.output,
        quiet: cli.global.quiet,
        settings,
        region_to_record: std::cell::Cell::new(None),
    };
    let outcome = match cli.command {
        Command::Next(args) => next::run(&ctx, args),
        Command::Serve(_) => serve::run(&ctx),
        Command::Decode(args) => decode::run(&ctx, args),
        Command::Tag(cmd) => tag::run(&ctx, cmd),
        Command::Db(cmd) => db::run(&ctx, cmd),
        Command::Region(cmd) => region::run(&ctx, cmd),
        Command::Workers(cmd) => workers::run(&ctx, cmd),
        Command::Config(cmd) => config_cmd::run(&ctx, cmd),
    };
    // A region given to a database that records none is recorded once the command succeeded.
    if outcome.is_ok() {
        ctx.record_region_in_db()?;
    }
    outcome
}

/// Every command but `serve` writes its result to standard output: closed at start (`>&-`),
/// it could not say what it did, so it does nothing (exit 3). `/dev/null`, in either mode, is
/// a place to discard output.
fn refuse_closed_stdout(command: &Command) -> anyhow::Result<()> {
    if output::closed_at_start(1) && !matches!(command, Command::Serve(_)) {
        let what = match command {
            Command::Next(_) => "nothing was claimed",
            _ => "nothing was done",
        };
        return Err(error::OutputFailed {
            message: format!("standard output is closed; {what}"),
        }
        .into());
    }
    Ok(())
}

/// The format of a command's one result (text or json): `--output` as given, text for the
/// commands that print rows; tsv and ndjson are refused for the others.
fn document_format(cli: &Cli, matches: &clap::ArgMatches) -> anyhow::Result<OutputFormat> {
    match (cli.global.output.document(), &cli.command) {
        (Some(doc), _) => Ok(doc),
        (None, Command::Next(_) | Command::Decode(_)) => Ok(OutputFormat::Text),
        (None, Command::Tag(tag::TagCommand::List { .. })) => Ok(OutputFormat::Text),
        (None, _) => Err(error::usage(
            format!(
                "--output {} is not available for `leafctl {}`",
                cli.global.output.name(),
                command_name(matches)
            ),
            "use --output text or --output json; tsv and ndjson are for commands that print rows (next, decode, tag list)",
        )),
    }
}

/// The config file `--config` or `LEAF_CONFIG` names, else the first found, loaded. A file
/// that does not parse stops every command but `decode`.
fn load_config(cli: &Cli) -> anyhow::Result<config::LoadedConfig> {
    let explicit = match (&cli.global.config, env_var("LEAF_CONFIG")) {
        (Some(p), _) => Some((p.clone(), Origin::Flag)),
        (None, Some(p)) => Some((PathBuf::from(p), Origin::Env("LEAF_CONFIG".into()))),
        (None, None) => None,
    };
    match config::load(explicit, &settings::file_keys()) {
        Ok(loaded) => Ok(loaded),
        // `decode` issues nothing and is what an incident reaches for: a broken config file
        // does not stop it; it says so and reads IDs under the flags, the environment or the
        // default layout.
        Err(e @ config::ConfigError::Parse { .. }) if matches!(cli.command, Command::Decode(_)) => {
            if !cli.global.quiet {
                error::warning(&format!(
                    "{e}; decode runs without it (layout from --preset/--epoch/--layout, LEAF_* variables or the default)"
                ));
            }
            Ok(config::LoadedConfig::default())
        }
        Err(e) => Err(e.into()),
    }
}

/// The command's name as typed, subcommand included (`tag show`), for messages.
fn command_name(matches: &clap::ArgMatches) -> String {
    let mut words = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        words.push(name);
        at = sub;
    }
    words.join(" ")
}

/// Entry point: exit 0 on success, 1 on a runtime failure, 2 on a usage error, 3 when standard
/// output could not be written.
pub fn main() -> ExitCode {
    // `leafctl generate-assets DIR` writes the checked-in completions and man pages. It is a
    // maintainer's tool, so it stays out of the CLI's definition (and so out of those files).
    let mut argv = std::env::args_os().skip(1);
    if argv.next().is_some_and(|a| a == "generate-assets") {
        let result = match (argv.next(), argv.next()) {
            (Some(dir), None) => assets::generate(std::path::Path::new(&dir)),
            _ => Err(error::usage(
                "generate-assets takes one directory",
                "leafctl generate-assets .",
            )),
        };
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => error::report(&e),
        };
    }
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => clap_exit(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => clap_exit(e),
    };
    let style = match cli.global.output {
        RowFormat::Json | RowFormat::Ndjson => error::ErrorStyle::Json,
        RowFormat::Text | RowFormat::Tsv => error::ErrorStyle::Text,
    };
    init_logging(
        cli.global.verbose,
        cli.global.quiet,
        style == error::ErrorStyle::Json,
    );
    error::set_style(style);
    match run(cli, &matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => error::report_as(&e, style),
    }
}

/// Ends a run whose command line clap refused: clap's own text, or with `--output json|ndjson`
/// on the command line one JSON object (help and version are printed as they are).
fn clap_exit(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let asks_json = wants_json(
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned()),
    );
    let informational = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !asks_json || informational {
        e.exit()
    }
    let rendered = e.render().to_string();
    let mut lines = rendered.lines().filter(|l| !l.trim().is_empty());
    let message = lines
        .next()
        .unwrap_or("invalid command line")
        .trim_start_matches("error: ")
        .to_string();
    let hint: Vec<&str> = lines
        .map(|l| l.trim().trim_start_matches("tip: "))
        .filter(|l| !l.starts_with("Usage:"))
        .collect();
    let hint = if hint.is_empty() {
        "see `leafctl --help`".to_string()
    } else {
        hint.join("; ")
    };
    stderr!(
        "{}",
        error::json_error(error::EXIT_USAGE, &message, Some(&hint))
    );
    std::process::exit(i32::from(error::EXIT_USAGE))
}

/// Whether raw arguments ask for `--output json` or `ndjson` (for errors clap raises before
/// the flags are parsed).
fn wants_json(args: impl Iterator<Item = String>) -> bool {
    let mut prev_output = false;
    for a in args {
        if a == "--" {
            return false;
        }
        let value = if prev_output {
            Some(a.as_str())
        } else {
            a.strip_prefix("--output=")
        };
        if let Some(v) = value
            && (v == "json" || v == "ndjson")
        {
            return true;
        }
        prev_output = a == "--output";
    }
    false
}
