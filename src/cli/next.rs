//! `leafctl next`: issue IDs.

use clap::Args;
use leafctl::idformat::compact::Encoding;
use leafctl::idformat::opaque::OpaqueError;
use leafctl::segment::{
    AllocStore, ClaimGuard, Increment, Issuing, PeriodicShape, SegmentError, TagShape, open_period,
    validate_tag,
};
use leafctl::worker::{IssueError, WorkerGenerator};

use super::db::{DbExample, examples_with};
use super::error::{ClosedPipe, OutputFailed};
use super::output::{IdWriter, StdoutProblem, check_stdout, progress};
use super::{Context, SnowflakeArgs};

/// `next`'s examples, the database URLs from [`leafctl::db::DATABASES`].
pub fn examples() -> String {
    examples_with(
        EXAMPLES,
        &[
            DbExample::First("  leafctl next order -n 3 --db {url} --output json\n"),
            DbExample::Hosts("  leafctl next order --db {hosts}   {name}: {picks}\n"),
            DbExample::Each(
                "  leafctl next --snowflake --db {url}   worker id from leaf_workerid_alloc\n",
            ),
        ],
        EXPLAINED,
    )
}

/// `next`'s examples without a database URL.
const EXAMPLES: &str = "\
Examples:
  leafctl next --snowflake --worker-id 1              one ID
  leafctl next --snowflake --worker-id 1 -n 1000000   a million, one per line, ascending
  leafctl next --snowflake --worker-id 1 -n 3 --output json
  leafctl next --snowflake --worker-id 1 -n 3 --output tsv     an id header, then one per line
  leafctl next --snowflake --worker-id 1 -n 3 --encode crockford   short, with a check
  leafctl next --snowflake --worker-id 5 --preset discord
  leafctl next --snowflake --worker-id 1 -n 10000000 --max-lead 3000 > ids.txt
                                                      run up to 3 s ahead of the clock
  leafctl next --snowflake --zk zk1:2181,zk2:2181 -n 100     lease a free worker id, issue, release
  leafctl --zk zk1:2181 --name order next --snowflake --registry forever --instance 10.0.0.5:8080
  leafctl next --snowflake --etcd http://etcd1:2379,http://etcd2:2379   the same lease, on etcd
  leafctl next order                                  segment mode: one ID of tag `order`
  leafctl next order -n 10000000 > order-ids.txt      ten million, claimed in one transaction
  leafctl --key-file id.key next order-no -n 3       an opaque tag's IDs (tag add --opaque)
";

/// What `next --help` says after the examples.
const EXPLAINED: &str = "
With --zk (or --etcd), concurrent runs always get different worker ids (the lowest free lease under
/snowflake/NAME/leases, or /leafctl/NAME/leases/ in etcd), and a run never reuses a time a previous
holder of its id reserved.
Two runs with the same worker id (and --name) on one machine never repeat an ID: the second waits
for the first (or fails with --no-wait), and a clock behind the last run's time is waited out when
it is a few ms, refused otherwise.

A worker issues at most 4,096 IDs per millisecond (leaf layout). With --max-lead MS a run that has
used up a millisecond moves on to the next one at once, as long as it is at most MS ahead of the
clock, so large batches need not wait for the clock: their IDs carry times up to MS in the future.
Those times are recorded by the worker's registry before the IDs are printed, so a crash, a rerun
or another holder of the worker id never repeats one; a rerun with the same lead continues right
after a finished run, one without waits for the clock to pass its last time.

Segment mode (`next TAG`) claims exactly COUNT IDs from the tag's row of leaf_alloc in one
transaction (nothing is wasted) and prints them ascending; any number of processes, leafctl
servers and Leaf servers can share the table. Add tags with `leafctl tag add`.";

#[derive(Debug, Args)]
pub struct NextArgs {
    /// Segment mode: the tag to issue IDs for (see `leafctl tag`)
    #[arg(value_name = "TAG", required_unless_present = "snowflake")]
    pub tag: Option<String>,
    /// Issue snowflake IDs (time | worker | sequence) instead of a tag's
    #[arg(long, conflicts_with = "tag")]
    pub snowflake: bool,
    /// How many IDs to issue
    #[arg(short = 'n', long, default_value_t = 1, allow_negative_numbers = true, value_parser = super::whole_number(1u64, i64::MAX as u64))]
    pub count: u64,
    /// Fail at once if another process holds this worker id, instead of waiting
    #[arg(long)]
    pub no_wait: bool,
    /// Print each ID as a compact string with a check character: base36 (0-9a-z) or crockford
    /// (Crockford's base32); `decode --encode` reads it back
    #[arg(long, value_name = "base36|crockford")]
    pub encode: Option<Encoding>,
    #[command(flatten)]
    pub worker: SnowflakeArgs,
}

pub fn run(ctx: &Context, args: NextArgs) -> anyhow::Result<()> {
    // Before anything is claimed: IDs that could not be written would be lost.
    check_stdout_before_claiming()?;
    if let Some(tag) = &args.tag {
        refuse_snowflake_flags(ctx, tag, &args)?;
        return run_segment(ctx, tag, args.count, args.encode);
    }
    let registry =
        super::registry::registry(ctx, args.no_wait, super::registry::DEFAULT_INSTANCE_PORT)?;
    let generator =
        WorkerGenerator::start(registry.as_ref(), &super::registry::issue_options(ctx))?;
    tracing::info!(
        "worker id {} from {}",
        generator.worker(),
        generator.lease().describe()
    );
    let issued = emit(ctx, &generator, args.count, args.encode);
    // Record the last time whatever happened to the output, so the next run starts after it.
    let recorded = generator.finish();
    issued?;
    recorded?;
    Ok(())
}

/// `next TAG` issues a tag's IDs from the database: a snowflake flag given with it would be
/// ignored, so it is refused (a usage error naming the flag) rather than dropped in silence.
fn refuse_snowflake_flags(ctx: &Context, tag: &str, args: &NextArgs) -> anyhow::Result<()> {
    let mut given = ctx
        .settings
        .flags_given(super::settings::scope::SNOWFLAKE | super::settings::scope::LAYOUT);
    if args.no_wait {
        given.push("--no-wait".into());
    }
    if given.is_empty() {
        return Ok(());
    }
    let flags = given.join(", ");
    Err(super::error::usage(
        format!(
            "{flags} {} for snowflake IDs; `leafctl next {}` issues the tag's IDs from the database",
            if given.len() == 1 { "is" } else { "are" },
            leafctl::segment::tag_for_shell(tag)
        ),
        "drop them to issue the tag's IDs, or leave out the tag and add --snowflake for snowflake IDs",
    ))
}

/// Refuses to claim when standard output cannot take the IDs: closed or failing is an
/// [`OutputFailed`] (exit 3), a reader already gone ends the run quietly (nothing claimed).
fn check_stdout_before_claiming() -> anyhow::Result<()> {
    match check_stdout() {
        Ok(()) => Ok(()),
        Err(StdoutProblem::ReaderGone) => Err(ClosedPipe.into()),
        Err(StdoutProblem::Closed) => Err(OutputFailed {
            message: "standard output is closed; nothing was claimed".into(),
        }
        .into()),
        Err(StdoutProblem::Fails(e)) => Err(OutputFailed {
            message: format!("cannot write to standard output: {e}; nothing was claimed"),
        }
        .into()),
    }
}

/// How a write of claimed IDs that failed part-way ends: IDs claimed but not written are said
/// so on stderr (as a note when the reader went away, exit 0; as the error otherwise, exit 3).
/// `unwritten` describes them and what becomes of them.
fn unwritten(ctx: &Context, e: std::io::Error, unwritten: String) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        if !ctx.quiet {
            super::error::note(&format!(
                "the reader of standard output went away: {unwritten}"
            ));
        }
        return ClosedPipe.into();
    }
    OutputFailed {
        message: format!("cannot write to standard output ({e}): {unwritten}"),
    }
    .into()
}

fn emit(
    ctx: &Context,
    generator: &WorkerGenerator,
    count: u64,
    encoding: Option<Encoding>,
) -> anyhow::Result<()> {
    /// Why issuing stopped early.
    enum Stop {
        Issue(IssueError),
        Write(std::io::Error),
    }
    let bar = progress(count, ctx.quiet);
    let mut out = IdWriter::new(ctx.rows).encoded(encoding);
    let mut remaining = count;
    let mut issued = 0u64;
    let mut run = || -> Result<(), Stop> {
        while remaining > 0 {
            let block = generator.next_block(remaining).map_err(Stop::Issue)?;
            issued += block.count;
            out.push_block(block.first, block.stride, block.count)
                .map_err(Stop::Write)?;
            remaining -= block.count;
            bar.inc(block.count);
        }
        out.finish().map_err(Stop::Write)
    };
    let result = run();
    bar.finish_and_clear();
    match result {
        Ok(()) => Ok(()),
        Err(Stop::Issue(e)) => {
            // The IDs issued before the failure are printed, not dropped with the buffer.
            let _ = out.finish();
            Err(e.into())
        }
        Err(Stop::Write(e)) => {
            let written = out.written();
            Err(unwritten(
                ctx,
                e,
                format!(
                    "the last {} of the {issued} IDs issued were not written, or only partly \
                     (snowflake IDs are never issued again: their times are recorded); {} of \
                     the {count} asked for were not issued",
                    issued - written,
                    count - issued
                ),
            ))
        }
    }
}

/// `next TAG -n COUNT`: one claim of exactly COUNT IDs, printed ascending.
fn run_segment(
    ctx: &Context,
    tag: &str,
    count: u64,
    encoding: Option<Encoding>,
) -> anyhow::Result<()> {
    validate_tag(tag)?;
    let increment = i64::try_from(count).map_err(|_| SegmentError::InvalidCount(count))?;
    let store = super::db::open(ctx)?;
    let shape = TagShape::of(&*store, tag)?;
    if let TagShape::Periodic(periodic) = &shape {
        return run_periodic(ctx, &*store, tag, periodic, (increment, encoding));
    }
    // A shaped tag's dense IDs go through its permutation, and its claims stop at the width's
    // capacity (in the claim's own statement, as a region's block does).
    let issuing = tag_issuing(ctx, &*store, tag, &shape)?;
    store.cap_tag(tag, issuing.ceiling());
    // Refuses a claim below one made through this state directory before (the table lost
    // claims); the mark is on disk before an ID is printed.
    let guard = ClaimGuard::in_state_dir(&ctx.settings.state_dir.value);
    let claim = guard
        .claim(&*store, tag, Increment::Custom(increment))
        .map_err(|e| used_up(tag, &issuing, e))?;
    let bar = progress(claim.len(), ctx.quiet);
    let mut out = IdWriter::new(ctx.rows).encoded(encoding);
    let result = match &issuing {
        Issuing::Plain => out.push_range(claim.start, claim.end, |n| bar.inc(n)),
        Issuing::Opaque(_) | Issuing::Periodic(_) => {
            (claim.start..claim.end).try_for_each(|dense| {
                // Inside the capacity: the claim's statement kept it there.
                let id = issuing.id(tag, dense).map_err(std::io::Error::other)?;
                bar.inc(1);
                out.push(id)
            })
        }
    }
    .and_then(|()| out.finish());
    bar.finish_and_clear();
    result.map_err(|e| {
        let first = claim.start + out.written();
        let lost = claim.end - first;
        unwritten(
            ctx,
            e,
            format!(
                "the last {lost} of the {} IDs claimed for tag {tag} ({first} to {}) were not \
                 written, or only partly; they are skipped, never issued again",
                claim.len(),
                claim.end - 1
            ),
        )
    })
}

/// How `tag`'s dense IDs are issued: its recorded shape, with the ID key when it is opaque.
fn tag_issuing(
    ctx: &Context,
    store: &dyn AllocStore,
    tag: &str,
    shape: &TagShape,
) -> anyhow::Result<Issuing> {
    if shape.is_plain() {
        return Ok(Issuing::Plain);
    }
    let key = ctx.settings.id_key()?;
    Ok(Issuing::new(tag, shape, key.as_ref(), &store.bounds())?)
}

/// `next TAG -n COUNT` of a periodic tag: COUNT sequences claimed from the row of the period
/// now (made on first use), each printed as `<period><code><sequence>`.
fn run_periodic(
    ctx: &Context,
    store: &dyn AllocStore,
    tag: &str,
    shape: &PeriodicShape,
    (count, encoding): (i64, Option<Encoding>),
) -> anyhow::Result<()> {
    store.bounds().refuse_periodic(tag)?;
    let key = match shape.key_check {
        Some(_) => ctx.settings.id_key()?,
        None => None,
    };
    let period = open_period(store, tag, shape, key.as_ref(), chrono::Utc::now())?;
    let guard = ClaimGuard::in_state_dir(&ctx.settings.state_dir.value);
    let claim = match guard.claim(store, &period.row, Increment::Custom(count)) {
        Err(SegmentError::Exhausted { max_id, .. }) => {
            return Err(SegmentError::PeriodFull {
                tag: tag.into(),
                period: period.number,
                width: shape.width,
                left: shape.ceiling().saturating_sub(max_id).max(0),
            }
            .into());
        }
        other => other?,
    };
    let mut out = IdWriter::new(ctx.rows).encoded(encoding);
    let bar = progress(claim.len(), ctx.quiet);
    let result = (claim.start..claim.end)
        .try_for_each(|dense| {
            let sequence = period.sequence(tag, dense).map_err(std::io::Error::other)?;
            bar.inc(1);
            out.push(shape.compose(period.number, sequence))
        })
        .and_then(|()| out.finish());
    bar.finish_and_clear();
    result.map_err(|e| {
        let lost = claim.len() - out.written();
        unwritten(
            ctx,
            e,
            format!(
                "the last {lost} of the {} IDs claimed for tag {tag} in period {} were not \
                 written, or only partly; they are skipped, never issued again",
                claim.len(),
                period.number
            ),
        )
    })
}

/// A claim an opaque tag's capacity refused, said as the width used up rather than as a ceiling.
fn used_up(tag: &str, issuing: &Issuing, e: SegmentError) -> SegmentError {
    match (issuing, e) {
        (
            Issuing::Opaque(p),
            SegmentError::Exhausted {
                max_id, increment, ..
            },
        ) => leafctl::segment::opaque_error(
            tag,
            OpaqueError::Exhausted {
                dense: u64::try_from(max_id.saturating_add(increment).saturating_sub(1))
                    .unwrap_or(u64::MAX),
                width: p.width(),
            },
        ),
        (_, e) => e,
    }
}
