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
    let epoch = r.find::<String>(&EPOCH.info)?;
    let widths = r.find::<BitWidths>(&LAYOUT_WIDTHS.info)?;
    let unit = r.find::<u64>(&UNIT_MS.info)?;

    let custom_rank = [
        epoch.as_ref().map(|r| r.origin.rank()),
        widths.as_ref().map(|r| r.origin.rank()),
        unit.as_ref().map(|r| r.origin.rank()),
    ]
    .into_iter()
    .flatten()
    .max();
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
        (_, Some(_)) => {
            let origins = [
                epoch.as_ref().map(|r| r.origin.clone()),
                widths.as_ref().map(|r| r.origin.clone()),
                unit.as_ref().map(|r| r.origin.clone()),
            ];
            let origin = origins
                .into_iter()
                .flatten()
                .max_by_key(Origin::rank)
                .unwrap_or(Origin::Default);
            let epoch_ms = match epoch {
                Some(e) => parse_instant(&e.value).map_err(|err| {
                    usage(
                        format!("invalid epoch {:?}: {err}", e.value),
                        "give Unix ms or RFC 3339, e.g. 2015-01-01T00:00:00Z",
                    )
                })?,
                None => LEAF_EPOCH_MS,
            };
            let w = widths.map(|w| w.value).unwrap_or(BitWidths {
                time: 41,
                worker: 10,
                seq: 12,
            });
            let unit_ms = unit.map(|u| u.value).unwrap_or(1);
            let layout =
                Layout::custom(epoch_ms, w.time, w.worker, w.seq, unit_ms).map_err(|e| {
                    usage(
                        e.to_string(),
                        "time+worker+sequence bits must add up to 63, e.g. --layout 41,10,12",
                    )
                })?;
            Resolved {
                value: LayoutChoice {
                    layout,
                    label: "custom".into(),
                },
                origin,
            }
        }
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
