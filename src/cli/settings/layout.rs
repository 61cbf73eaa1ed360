//! The snowflake layout: a preset, or a custom layout from its parts (epoch, widths, unit), shown
//! as one row of `config show`.

use leafctl::config::{Origin, Resolved};
use leafctl::snowflake::{BitWidths, LEAF_EPOCH_MS, Layout, Preset};

use super::defs::{EPOCH, LAYOUT_WIDTHS, PRESET, UNIT_MS};
use super::resolve::Resolver;
use crate::cli::error::usage;
use crate::cli::time::parse_instant;

/// The layout chosen, and how it was described.
#[derive(Debug, Clone)]
pub struct LayoutChoice {
    /// The layout.
    pub layout: Layout,
    /// `leaf`, `sonyflake`, ... or `custom`.
    pub label: String,
}

/// Resolves `--preset` against the custom layout flags; the one from the stronger origin wins and
/// a tie (both on the command line, say) is a usage error. Shown as one row, `snowflake.layout`.
pub(super) fn resolve(r: &mut Resolver<'_>) -> anyhow::Result<Resolved<LayoutChoice>> {
    let preset = r.find::<Preset>(&PRESET.info)?;
    let custom = CustomParts {
        epoch: r.find::<String>(&EPOCH.info)?,
        widths: r.find::<BitWidths>(&LAYOUT_WIDTHS.info)?,
        unit: r.find::<u64>(&UNIT_MS.info)?,
    };
    let custom_rank = custom.origins().map(Origin::rank).max();
    let preset_rank = preset.as_ref().map(|r| r.origin.rank());

    let chosen = match (preset, custom_rank) {
        (Some(p), Some(c)) if p.origin.rank() == c => {
            return Err(usage(
                "a preset and a custom layout (--epoch/--layout/--unit-ms) were both given",
                "use either --preset NAME or --epoch/--layout/--unit-ms",
            ));
        }
        (Some(p), c) if c.is_none() || preset_rank > c => Resolved {
            value: LayoutChoice {
                layout: p.value.layout(),
                label: p.value.name().into(),
            },
            origin: p.origin,
        },
        (_, Some(_)) => custom.resolve()?,
        (None, None) => Resolved {
            value: LayoutChoice {
                layout: Preset::Leaf.layout(),
                label: "leaf".into(),
            },
            origin: Origin::Default,
        },
        (Some(_), None) => unreachable!("handled by the arm above"),
    };
    r.record(
        &LAYOUT_WIDTHS.info,
        Some((
            format!("{} ({})", chosen.value.label, chosen.value.layout),
            &chosen.origin,
        )),
    );
    Ok(chosen)
}

/// The parts of a custom layout as resolution found them, each `None` when given nowhere.
struct CustomParts {
    epoch: Option<Resolved<String>>,
    widths: Option<Resolved<BitWidths>>,
    unit: Option<Resolved<u64>>,
}

impl CustomParts {
    /// Where the parts given came from, in the order epoch, widths, unit.
    fn origins(&self) -> impl Iterator<Item = &Origin> {
        [
            self.epoch.as_ref().map(|r| &r.origin),
            self.widths.as_ref().map(|r| &r.origin),
            self.unit.as_ref().map(|r| &r.origin),
        ]
        .into_iter()
        .flatten()
    }

    /// The custom layout (the leaf layout's epoch, widths and unit for the parts not given),
    /// from the strongest origin among the parts.
    fn resolve(self) -> anyhow::Result<Resolved<LayoutChoice>> {
        let origin = self
            .origins()
            .max_by_key(|o| o.rank())
            .cloned()
            .unwrap_or(Origin::Default);
        let epoch_ms = match self.epoch {
            Some(e) => parse_instant(&e.value).map_err(|err| {
                usage(
                    format!("invalid epoch {:?}: {err}", e.value),
                    "give Unix ms or RFC 3339, e.g. 2015-01-01T00:00:00Z",
                )
            })?,
            None => LEAF_EPOCH_MS,
        };
        let w = self.widths.map(|w| w.value).unwrap_or(BitWidths {
            time: 41,
            worker: 10,
            seq: 12,
        });
        let unit_ms = self.unit.map(|u| u.value).unwrap_or(1);
        let layout = Layout::custom(epoch_ms, w.time, w.worker, w.seq, unit_ms).map_err(|e| {
            usage(
                e.to_string(),
                "time+worker+sequence bits must add up to 63, e.g. --layout 41,10,12",
            )
        })?;
        Ok(Resolved {
            value: LayoutChoice {
                layout,
                label: "custom".into(),
            },
            origin,
        })
    }
}
