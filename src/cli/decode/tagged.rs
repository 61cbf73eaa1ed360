//! `decode --tag NAME ID...` (issue 48): a segment tag's IDs read with the tag's shape from the
//! table. For an opaque tag, with the ID key, the dense ID each one stands for; for a periodic
//! tag, its period and sequence (the dense sequence, with the key, when it is opaque); and
//! whether the tag has claimed it (below its row's max_id). A plain tag's ID is its dense ID.

use leafctl::idformat::opaque::IdKey;
use leafctl::segment::{
    AllocStore, Issuing, PeriodIssuing, PeriodicShape, SegmentError, TagShape, opaque_error,
    validate_tag,
};
use serde::Serialize;

use super::super::Context;
use super::super::error::{note, usage};
use super::super::output::{OutputFormat, print_json, print_text, render, table};

/// One ID of a tag, as decoded.
#[derive(Debug, Serialize)]
struct TaggedId {
    /// The ID as given.
    id: String,
    /// The tag.
    tag: String,
    /// `plain`, or the spec recorded in leaf_tag_shape.
    shape: String,
    /// A periodic ID's period (`20261206`).
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<String>,
    /// The dense ID (a periodic tag's: the dense sequence); null for an opaque tag or sequence
    /// decoded without its key.
    dense_id: Option<String>,
    /// Whether the tag (a periodic tag's period row) has claimed the dense ID: an ID of the right
    /// shape that was never claimed was not issued by this tag.
    claimed: Option<bool>,
}

/// Decodes `ids` as IDs of `tag`.
pub fn run(ctx: &Context, tag: &str, ids: &[String]) -> anyhow::Result<()> {
    validate_tag(tag)?;
    if ids.is_empty() {
        return Err(usage(
            "--tag decodes the IDs given on the command line, and none was given",
            format!("give them after the tag: leafctl decode --tag {tag} ID..."),
        ));
    }
    let store = super::super::db::open(ctx)?;
    let Some(row) = store.get(tag)? else {
        return Err(SegmentError::UnknownTag {
            tag: tag.into(),
            db: store.describe(),
        }
        .into());
    };
    let shape = TagShape::of(&*store, tag)?;
    let key = key_for(ctx, tag, &shape)?;
    let mut rows = Vec::with_capacity(ids.len());
    for text in ids {
        let id: u64 = text.trim().parse().map_err(|_| {
            usage(
                format!("{text:?} is not an ID of tag {tag}: a tag's IDs are whole numbers"),
                "give the ID as the tag issued it, e.g. 160668025510",
            )
        })?;
        let mut decoded = match &shape {
            TagShape::Periodic(p) => periodic(&*store, tag, p, key.as_ref(), id)?,
            _ => dense(&*store, tag, &shape, key.as_ref(), id, row.max_id)?,
        };
        decoded.shape = shape.spec().unwrap_or_else(|| "plain".into());
        rows.push(decoded);
    }
    print(ctx, rows)
}

/// The key when the tag's shape needs one and it is given (a note says what is missing when it
/// is not: the rows then carry no dense IDs).
fn key_for(ctx: &Context, tag: &str, shape: &TagShape) -> anyhow::Result<Option<IdKey>> {
    let needs = match shape {
        TagShape::Opaque { .. } => true,
        TagShape::Periodic(p) => p.key_check.is_some(),
        TagShape::Plain | TagShape::PeriodRow { .. } => false,
    };
    if !needs {
        return Ok(None);
    }
    let key = ctx.settings.id_key()?;
    if key.is_none() && !ctx.quiet {
        note(&format!(
            "tag {tag} is opaque: give its ID key (--key-file) for the dense IDs"
        ));
    }
    Ok(key)
}

/// An ID of a plain or opaque tag whose row in `store` has max_id `max_id`. An opaque tag with a
/// region digit is read in the region its first digit names (of the region count `store`
/// records); whether it was claimed is known only for this database's own region.
fn dense(
    store: &dyn AllocStore,
    tag: &str,
    shape: &TagShape,
    key: Option<&IdKey>,
    id: u64,
    max_id: i64,
) -> anyhow::Result<TaggedId> {
    let bounds = shape.issued_in(store, tag, id)?;
    let own = store.bounds() == bounds;
    let dense = match (shape, key) {
        (TagShape::Opaque { .. }, None) => None,
        _ => match Issuing::new(tag, shape, key, &bounds)? {
            Issuing::Plain => Some(id),
            Issuing::Opaque(p) => Some(p.decode(id).map_err(|e| opaque_error(tag, e))?),
            // (A periodic shape is decoded by `periodic`.)
            Issuing::Periodic(_) => {
                return Err(SegmentError::PeriodicBase { tag: tag.into() }.into());
            }
        },
    };
    let mut decoded = row(tag, id, None, dense, max_id);
    if !own {
        decoded.claimed = None;
    }
    Ok(decoded)
}

/// An ID of a periodic tag: its period, and its dense sequence in that period's row.
fn periodic(
    store: &dyn AllocStore,
    tag: &str,
    shape: &PeriodicShape,
    key: Option<&IdKey>,
    id: u64,
) -> anyhow::Result<TaggedId> {
    let (number, sequence) = shape.split(tag, id)?;
    let key = match (&shape.key_check, key) {
        (Some(check), Some(key)) => Some(leafctl::segment::check_key(tag, check, Some(key))?),
        _ => None,
    };
    let period = PeriodIssuing::new(tag, shape, number, key);
    let dense = match (&shape.key_check, key) {
        (Some(_), None) => None,
        _ => Some(period.dense(tag, sequence)?),
    };
    // A period no process issued from has no row: nothing of it was claimed.
    let max_id = store.get(&period.row)?.map_or(0, |r| r.max_id);
    Ok(row(tag, id, Some(number), dense, max_id))
}

/// A decoded row (its shape filled in by the caller).
fn row(tag: &str, id: u64, period: Option<u64>, dense: Option<u64>, max_id: i64) -> TaggedId {
    TaggedId {
        id: id.to_string(),
        tag: tag.to_string(),
        shape: String::new(),
        period: period.map(|p| p.to_string()),
        dense_id: dense.map(|d| d.to_string()),
        claimed: dense.map(|d| i64::try_from(d).is_ok_and(|d| d < max_id)),
    }
}

fn print(ctx: &Context, rows: Vec<TaggedId>) -> anyhow::Result<()> {
    match ctx.output {
        OutputFormat::Json => print_json(&rows),
        OutputFormat::Text => {
            let periodic = rows.iter().any(|r| r.period.is_some());
            let mut columns = vec!["id", "tag", "shape"];
            if periodic {
                columns.push("period");
            }
            columns.extend(["dense_id", "claimed"]);
            let mut t = table(&columns);
            for r in rows {
                let unknown = || "(needs the key)".to_string();
                let mut cells = vec![r.id, r.tag, r.shape];
                if periodic {
                    cells.push(r.period.unwrap_or_default());
                }
                cells.push(r.dense_id.unwrap_or_else(unknown));
                cells.push(r.claimed.map_or_else(unknown, |c| c.to_string()));
                t.add_row(cells);
            }
            print_text(&render(t))
        }
    }
}
