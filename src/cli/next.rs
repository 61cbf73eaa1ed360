//! `leafctl next`: issue IDs.

use std::sync::Arc;

use clap::Args;
use leafctl::segment::{Increment, SegmentError, validate_tag};
use leafctl::snowflake::{SeqStart, SnowflakeGenerator, SystemClock};
use leafctl::state::LocalWorkerLease;

use super::error::usage;
use super::output::{IdWriter, progress};
use super::{Context, LayoutArgs, parse_seq_start};

pub const EXAMPLES: &str = "\
Examples:
  leafctl next --snowflake --worker-id 1              one ID
  leafctl next --snowflake --worker-id 1 -n 1000000   a million, one per line, ascending
  leafctl next --snowflake --worker-id 1 -n 3 --output json
  leafctl next --snowflake --worker-id 5 --preset discord
  leafctl next order                                  segment mode: one ID of tag `order`
  leafctl next order -n 10000000 > ids.txt            ten million, claimed in one transaction
  leafctl next order -n 3 --db mysql://leaf@db:3306/leaf --output json

Two runs with the same worker id (and --name) on one machine never repeat an ID: the second waits
for the first (or fails with --no-wait), and a clock behind the last run's time is waited out when
it is a few ms, refused otherwise.

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
    #[arg(short = 'n', long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: u64,
    /// Worker id for this process, unique among live generators [env: LEAF_WORKER_ID]
    #[arg(long, value_name = "N")]
    pub worker_id: Option<u64>,
    /// Namespace of worker ids (Leaf's leaf.name) [env: LEAF_NAME] [default: leaf]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Fail at once if another process holds this worker id, instead of waiting
    #[arg(long)]
    pub no_wait: bool,
    /// Where each tick's sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START]
    #[arg(long, value_name = "random|zero", value_parser = parse_seq_start)]
    pub seq_start: Option<SeqStart>,
    #[command(flatten)]
    pub layout: LayoutArgs,
}

pub fn run(ctx: &Context, args: NextArgs) -> anyhow::Result<()> {
    if let Some(tag) = &args.tag {
        return run_segment(ctx, tag, args.count);
    }
    let s = &ctx.settings;
    let layout = s.layout.value.layout;
    let worker = s.worker_id.as_ref().map(|w| w.value).ok_or_else(|| {
        usage(
            "no worker id for snowflake mode",
            "pass --worker-id N, set LEAF_WORKER_ID, or set snowflake.worker_id in the config file",
        )
    })?;
    if worker > layout.max_worker() {
        return Err(usage(
            format!(
                "worker id {worker} is out of range for the {} layout (0..={})",
                s.layout.value.label,
                layout.max_worker()
            ),
            "pick a worker id the layout can hold",
        ));
    }
    let name = &s.name.value;
    if name.is_empty() || name.contains('/') {
        return Err(usage(
            format!("invalid name {name:?}"),
            "use a non-empty name without '/'",
        ));
    }

    let clock = Arc::new(SystemClock);
    let lease = Arc::new(LocalWorkerLease::acquire(
        &s.state_dir.value,
        name,
        worker,
        args.no_wait,
        clock.as_ref(),
    )?);
    let mut builder = SnowflakeGenerator::builder(layout, worker)
        .clock(clock)
        .seq_start(s.seq_start.value)
        .fence(Box::new(lease.clone()));
    if let Some(t) = lease.resume_after_ms() {
        builder = builder.resume_after(t);
    }
    let generator = builder.build()?;

    let issued = emit(ctx, &generator, args.count);
    // Record the last time whatever happened to the output, so the next run starts after it.
    let recorded = lease.finish(generator.last_issued_ms());
    issued?;
    recorded?;
    Ok(())
}

fn emit(ctx: &Context, generator: &SnowflakeGenerator, count: u64) -> anyhow::Result<()> {
    let bar = progress(count, ctx.quiet);
    let mut out = IdWriter::new(ctx.output);
    let mut remaining = count;
    while remaining > 0 {
        let block = generator.next_block(remaining)?;
        for id in block {
            out.push(id)?;
        }
        remaining -= block.count;
        bar.inc(block.count);
    }
    bar.finish_and_clear();
    out.finish()
}

/// `next TAG -n COUNT`: one claim of exactly COUNT IDs, printed ascending.
fn run_segment(ctx: &Context, tag: &str, count: u64) -> anyhow::Result<()> {
    validate_tag(tag)?;
    let increment = i64::try_from(count).map_err(|_| SegmentError::InvalidCount(count))?;
    let store = super::db::open(ctx)?;
    let claim = store.claim(tag, Increment::Custom(increment))?;
    let bar = progress(claim.len(), ctx.quiet);
    let mut out = IdWriter::new(ctx.output);
    out.push_range(claim.start, claim.end, |n| bar.inc(n))?;
    bar.finish_and_clear();
    out.finish()
}
