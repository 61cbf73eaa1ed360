//! A tag's shape (issue 48): whether its IDs are its dense IDs as they are (plain) or passed
//! through a keyed permutation (opaque, [`crate::idformat::opaque`]). Fixed when the tag is added
//! and recorded beside it ([`crate::segment::SHAPE_TABLE`]), never changed, and kept when the tag
//! is removed: a name re-added with another shape could issue an ID its earlier shape issued.
//!
//! A plain tag records nothing (a table made by Leaf, or before shapes, holds plain tags only);
//! a shaped tag records its spec text, `opaque=12 key=<check value>`. The key itself is never
//! in the table: only its check value, so a wrong key is refused before anything is issued.

use std::fmt;

use super::PeriodRouter;
use chrono::{DateTime, Utc};

use super::period::{PeriodIssuing, PeriodicShape};
use super::store::{
    AllocStore, AllocStoreExt, Bounds, NewTag, RemovedPages, StartAt, add_tag, recorded_region,
};
use super::{Added, SegmentError};
use crate::idformat::opaque::{IdKey, OpaqueError, OpaqueWidth, Permutation};
use crate::region::Region;

/// How a tag's dense IDs become the IDs it issues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagShape {
    /// The dense IDs themselves (every tag Leaf knows).
    Plain,
    /// The dense IDs through FF1 under the key whose check value is `key_check`, filling `width`.
    Opaque {
        /// The range the IDs fill.
        width: OpaqueWidth,
        /// The key's check value ([`IdKey::check_value`]).
        key_check: String,
        /// Added in a deployment of regions: the first digit is the region's (its index + 1),
        /// the other N-1 its block's dense IDs permuted, so regions never meet.
        regional: bool,
    },
    /// `<period><code><sequence>`, the sequence claimed from a row per period ([`PeriodicShape`]).
    Periodic(PeriodicShape),
    /// One period's row of the periodic tag `of` (`of@PERIOD`): issued through `of` only.
    PeriodRow {
        /// The periodic tag.
        of: String,
    },
}

impl TagShape {
    /// The opaque shape `tag add --opaque WIDTH` records with `key` in a store of `bounds`. In a
    /// region's block an N-digit tag gives each region its first digit (it is regional), which
    /// leaves N - 1 digits to permute: at least [`MIN_DIGITS`] are needed
    /// ([`SegmentError::OpaqueTooNarrow`]). Any other tag's `start` lies within the dense IDs its
    /// width holds ([`SegmentError::OpaqueStartAbove`]); a regional tag's starts in its block.
    ///
    /// [`MIN_DIGITS`]: crate::idformat::opaque::MIN_DIGITS
    pub fn opaque_to_add(
        tag: &str,
        width: OpaqueWidth,
        key: &IdKey,
        start: Option<i64>,
        bounds: &Bounds,
    ) -> Result<TagShape, SegmentError> {
        let regional = bounds.region().is_some() && matches!(width, OpaqueWidth::Digits(_));
        if let (true, OpaqueWidth::Digits(digits)) = (regional, width)
            && digits <= crate::idformat::opaque::MIN_DIGITS
        {
            return Err(SegmentError::OpaqueTooNarrow {
                tag: tag.into(),
                digits,
            });
        }
        if let Some(start) = start
            && !regional
            && u64::try_from(start).is_ok_and(|s| s > width.capacity())
        {
            return Err(SegmentError::OpaqueStartAbove {
                tag: tag.into(),
                start,
                width,
            });
        }
        Ok(TagShape::Opaque {
            width,
            key_check: key.check_value(),
            regional,
        })
    }

    /// The spec text recorded for the shape; none for a plain tag, which records nothing.
    pub fn spec(&self) -> Option<String> {
        match self {
            TagShape::Plain => None,
            TagShape::Opaque {
                width,
                key_check,
                regional,
            } => Some(format!(
                "opaque={} key={key_check}{}",
                width_spec(*width),
                if *regional { " region=digit" } else { "" }
            )),
            TagShape::Periodic(p) => Some(p.spec()),
            TagShape::PeriodRow { of } => Some(format!("period-of={of}")),
        }
    }

    /// The shape a recorded spec describes (none recorded: plain). A spec this leafctl cannot
    /// read, from a newer one say, is refused: issuing its dense IDs would break its promise.
    pub fn from_spec(tag: &str, spec: Option<&str>) -> Result<TagShape, SegmentError> {
        let Some(spec) = spec else {
            return Ok(TagShape::Plain);
        };
        let unreadable = || SegmentError::UnreadableShape {
            tag: tag.into(),
            spec: spec.into(),
        };
        let words: Vec<(&str, &str)> = spec
            .split_whitespace()
            .map(|w| w.split_once('=').ok_or_else(unreadable))
            .collect::<Result<_, _>>()?;
        let has = |k: &str| words.iter().any(|(key, _)| *key == k);
        if has("period") {
            return PeriodicShape::from_words(tag, &words)
                .map(TagShape::Periodic)
                .ok_or_else(unreadable);
        }
        if let [("period-of", of)] = words[..] {
            return Ok(TagShape::PeriodRow { of: of.into() });
        }
        let (mut width, mut key_check, mut regional) = (None, None, false);
        for (k, v) in words {
            match (k, v) {
                ("region", "digit") => regional = true,
                ("opaque", w) => {
                    width = Some(OpaqueWidth::parse(w).map_err(|_| unreadable())?);
                }
                ("key", k) if k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    key_check = Some(k.to_string());
                }
                _ => return Err(unreadable()),
            }
        }
        match (width, key_check) {
            (Some(width), Some(key_check)) => Ok(TagShape::Opaque {
                width,
                key_check,
                regional,
            }),
            _ => Err(unreadable()),
        }
    }

    /// The shape recorded for `tag` in `store`.
    pub fn of(store: &dyn AllocStore, tag: &str) -> Result<TagShape, SegmentError> {
        TagShape::from_spec(tag, store.shape_mark(tag, None)?.as_deref())
    }

    /// Whether the tag issues its dense IDs as they are.
    pub fn is_plain(&self) -> bool {
        matches!(self, TagShape::Plain)
    }

    /// One past the highest dense ID the tag may issue, as a max_id: claims stop there (an
    /// opaque width's capacity; 2^63-1 for a plain tag).
    pub fn ceiling(&self) -> i64 {
        match self {
            TagShape::Plain | TagShape::PeriodRow { .. } => i64::MAX,
            // Each region's ceiling is its own ([`Issuing::ceiling`]).
            TagShape::Opaque { regional: true, .. } => i64::MAX,
            TagShape::Opaque { width, .. } => {
                i64::try_from(width.capacity()).map_or(i64::MAX, |c| c.saturating_add(1))
            }
            // The base row is never claimed from; each period row stops at the sequence's width
            // ([`PeriodicShape::ceiling`]).
            TagShape::Periodic(_) => i64::MAX,
        }
    }
}

impl fmt::Display for TagShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagShape::Plain => f.write_str("plain"),
            TagShape::Opaque {
                width,
                key_check,
                regional,
            } => write!(
                f,
                "opaque, {width}{} (key check {key_check})",
                if *regional {
                    ", the first the region's"
                } else {
                    ""
                }
            ),
            TagShape::Periodic(p) => {
                write!(
                    f,
                    "periodic, a {} in {}, code {:?}, a sequence of {} digits",
                    p.period.as_str(),
                    p.zone.name(),
                    p.code,
                    p.width
                )?;
                match &p.key_check {
                    Some(k) => write!(f, ", opaque (key check {k})"),
                    None => Ok(()),
                }
            }
            TagShape::PeriodRow { of } => write!(f, "a period row of tag {of}"),
        }
    }
}

/// The width as `--opaque` takes it.
fn width_spec(width: OpaqueWidth) -> String {
    match width {
        OpaqueWidth::Digits(n) | OpaqueWidth::Padded(n) => n.to_string(),
        OpaqueWidth::Bits63 => "63".into(),
    }
}

/// Adds a tag with its shape ([`add_tag`] inside the store's bounds): the shape is recorded
/// first and the row added after, so a failure in between leaves a name that can only be added
/// with that shape, never a shaped tag that issues plain IDs. A name whose recorded shape
/// differs (a removed tag's, kept for ever) is refused ([`SegmentError::ShapeFixed`]), and so is
/// a shape for a name that exists already or was removed as a plain tag.
pub fn add_shaped_tag(
    store: &dyn AllocStore,
    new: &NewTag<'_>,
    shape: &TagShape,
) -> Result<Added, SegmentError> {
    let refuse = |recorded: TagShape| SegmentError::ShapeFixed {
        tag: new.tag.into(),
        recorded: recorded.to_string(),
        given: shape.to_string(),
    };
    match (store.shape_mark(new.tag, None)?, shape.spec()) {
        (Some(mark), _) => {
            let recorded = TagShape::from_spec(new.tag, Some(&mark))?;
            if recorded != *shape {
                return Err(refuse(recorded));
            }
        }
        (None, None) => {}
        (None, Some(spec)) => {
            let live = store.get(new.tag)?.is_some();
            if live || was_removed(store, new.tag)? {
                // Read again after the row or tombstone: a concurrent add of the name (two
                // servers opening one period) records its mark before its row. Still none: a
                // plain tag's name, and nothing is recorded.
                let now = TagShape::of(store, new.tag)?;
                return match now {
                    now if now == *shape => add_tag(store, new),
                    TagShape::Plain if live && !new.if_not_exists => add_tag(store, new),
                    other => Err(refuse(other)),
                };
            }
            let mark = store.shape_mark(new.tag, Some(&spec))?;
            let now = TagShape::from_spec(new.tag, mark.as_deref())?;
            if now != *shape {
                return Err(refuse(now));
            }
        }
    }
    add_tag(store, new)
}

/// Whether a tag of the name was removed (it has a tombstone).
fn was_removed(store: &dyn AllocStore, tag: &str) -> Result<bool, SegmentError> {
    for page in RemovedPages::new(store) {
        if page?.iter().any(|t| t.tag == tag) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// How one tag's dense IDs become the IDs it issues: what every issuer holds per tag.
#[derive(Debug, Clone)]
pub enum Issuing {
    /// As they are.
    Plain,
    /// Through the tag's permutation.
    Opaque(OpaqueIssuing),
    /// A periodic tag's: each ID from the row of the period the generator's clock says
    /// ([`PeriodRouter`]).
    Periodic(std::sync::Arc<PeriodRouter>),
}

impl TagShape {
    /// The bounds `id`, an ID of `tag` of this shape, was issued in. A regional opaque tag's first
    /// digit names the region (of the count `store` records): the inverse of the digit
    /// [`OpaqueIssuing`] puts in front. Any other tag issues in `store`'s own bounds. An ID
    /// whose digits name no region is not of the shape ([`SegmentError::NotOfShape`]).
    pub fn issued_in(
        &self,
        store: &dyn AllocStore,
        tag: &str,
        id: u64,
    ) -> Result<Bounds, SegmentError> {
        let TagShape::Opaque {
            regional: true,
            width: OpaqueWidth::Digits(digits),
            ..
        } = self
        else {
            return Ok(store.bounds());
        };
        let not_ours = |reason: String| SegmentError::NotOfShape {
            tag: tag.into(),
            id,
            reason,
        };
        let Some(recorded) = recorded_region(store)? else {
            return Err(not_ours(
                "the database records no region, so its first digit names none".into(),
            ));
        };
        let scale = 10u64.pow(u32::from(digits.saturating_sub(1)));
        let first = id / scale;
        if !(1..=9).contains(&first) || id >= scale * 10 {
            return Err(not_ours(format!("its IDs have {digits} digits")));
        }
        let index = u32::try_from(first - 1).unwrap_or(u32::MAX);
        let region = Region::new(index, recorded.count()).map_err(|_| {
            not_ours(format!(
                "its first digit names a region, 1 to {}",
                recorded.count()
            ))
        })?;
        Ok(Bounds::of(Some(region)))
    }
}

impl Issuing {
    /// The issuing of `tag` of shape `shape`, given the key this process has (if any) and its
    /// store's bounds (its region's block). An opaque tag needs the key whose check value it recorded
    /// ([`SegmentError::KeyNeeded`], [`SegmentError::KeyMismatch`]), and an opaque tag of N
    /// digits cannot be issued in a region ([`SegmentError::OpaqueInRegions`]): a region's
    /// block of dense IDs lies above every N-digit domain.
    pub fn new(
        tag: &str,
        shape: &TagShape,
        key: Option<&IdKey>,
        bounds: &Bounds,
    ) -> Result<Issuing, SegmentError> {
        let (width, key_check, regional) = match shape {
            TagShape::Plain => return Ok(Issuing::Plain),
            TagShape::Opaque {
                width,
                key_check,
                regional,
            } => (width, key_check, *regional),
            TagShape::Periodic(_) => {
                return Err(SegmentError::PeriodicHere { tag: tag.into() });
            }
            TagShape::PeriodRow { of } => {
                return Err(SegmentError::PeriodRow {
                    tag: tag.into(),
                    of: of.clone(),
                });
            }
        };
        let key = check_key(tag, key_check, key)?;
        let OpaqueWidth::Digits(digits) = *width else {
            // 63 bits hold every region's block: the one permutation keeps them apart.
            return Ok(Issuing::Opaque(OpaqueIssuing::whole(key, *width, tag)));
        };
        match (bounds.region(), regional) {
            (None, false) => Ok(Issuing::Opaque(OpaqueIssuing::whole(key, *width, tag))),
            // A tag of the deployment before it had regions: region 0 goes on with it, the
            // others' blocks lie above its domain.
            (Some(r), false) if r.index() == 0 => {
                Ok(Issuing::Opaque(OpaqueIssuing::whole(key, *width, tag)))
            }
            (Some(region), false) => Err(SegmentError::OpaqueInRegions {
                tag: tag.into(),
                digits,
                region,
            }),
            (Some(region), true) => Ok(Issuing::Opaque(OpaqueIssuing::regional(
                key, digits, tag, region,
            ))),
            (None, true) => Err(SegmentError::OpaqueNeedsRegion { tag: tag.into() }),
        }
    }

    /// The ID issued for dense ID `dense`.
    #[inline]
    pub fn id(&self, tag: &str, dense: u64) -> Result<u64, SegmentError> {
        match self {
            Issuing::Plain => Ok(dense),
            Issuing::Opaque(p) => p.encode(dense).map_err(|e| opaque_error(tag, e)),
            // Its own row issues nothing: the router composes each period's sequences.
            Issuing::Periodic(_) => Err(SegmentError::PeriodicBase { tag: tag.into() }),
        }
    }

    /// One past the highest dense ID the tag may issue, as a max_id ([`TagShape::ceiling`]).
    pub fn ceiling(&self) -> i64 {
        match self {
            Issuing::Plain | Issuing::Periodic(_) => i64::MAX,
            Issuing::Opaque(p) => p.ceiling(),
        }
    }

    /// Whether IDs are issued as the dense IDs are.
    pub fn is_plain(&self) -> bool {
        matches!(self, Issuing::Plain)
    }
}

/// An opaque tag's permutation as it issues here: of its whole width, or (a tag added in a
/// deployment of regions) of this region's N-1 digits behind the region's digit.
#[derive(Debug, Clone)]
pub struct OpaqueIssuing {
    permutation: Permutation,
    /// The tag's width (N digits, or 63 bits), for messages.
    width: OpaqueWidth,
    /// With a region digit: the value of that digit in place (`(index + 1) x 10^(N-1)`), and
    /// the region's first dense ID (its block's start).
    region: Option<(u64, u64)>,
}

impl OpaqueIssuing {
    /// The permutation of the whole width.
    fn whole(key: &IdKey, width: OpaqueWidth, tag: &str) -> OpaqueIssuing {
        OpaqueIssuing {
            permutation: Permutation::new(key, width, tag.as_bytes()),
            width,
            region: None,
        }
    }

    /// `region`'s part of an N-digit tag: its digit, then its block's dense IDs permuted over
    /// N-1 digits (dense ID `start + i` is index `i + 1` of the field).
    fn regional(key: &IdKey, digits: u8, tag: &str, region: Region) -> OpaqueIssuing {
        let field = OpaqueWidth::Padded(digits.saturating_sub(1));
        let scale = 10u64.pow(u32::from(digits.saturating_sub(1)));
        let start = u64::try_from(region.segment_block().start).unwrap_or(0);
        OpaqueIssuing {
            permutation: Permutation::new(key, field, tag.as_bytes()),
            width: OpaqueWidth::Digits(digits),
            region: Some((u64::from(region.index() + 1) * scale, start)),
        }
    }

    /// The tag's width.
    pub fn width(&self) -> OpaqueWidth {
        self.width
    }

    /// The opaque ID of dense ID `dense`.
    pub fn encode(&self, dense: u64) -> Result<u64, OpaqueError> {
        match self.region {
            None => self.permutation.encode(dense),
            Some((digit, start)) => {
                let index = dense.checked_sub(start).map_or(0, |i| i + 1);
                let field = self
                    .permutation
                    .encode(index)
                    .map_err(|_| OpaqueError::Exhausted {
                        dense,
                        width: self.width,
                    })?;
                Ok(digit + field)
            }
        }
    }

    /// The dense ID of opaque ID `id`.
    pub fn decode(&self, id: u64) -> Result<u64, OpaqueError> {
        let not_ours = || OpaqueError::NotInDomain {
            id,
            width: self.width,
        };
        match self.region {
            None => self.permutation.decode(id),
            Some((digit, start)) => {
                let field = id.checked_sub(digit).ok_or_else(not_ours)?;
                if !self.permutation.width().contains(field) {
                    return Err(not_ours());
                }
                let index = self.permutation.decode(field)?;
                Ok(start + index - 1)
            }
        }
    }

    /// One past the highest dense ID it may issue, as a max_id.
    fn ceiling(&self) -> i64 {
        let capacity = self.permutation.width().capacity();
        let end = match self.region {
            None => capacity.saturating_add(1),
            Some((_, start)) => start.saturating_add(capacity),
        };
        i64::try_from(end).unwrap_or(i64::MAX)
    }
}

/// The key an opaque tag (or sequence) recorded the check value `key_check` of: `key`, when it is
/// given and is that key ([`SegmentError::KeyNeeded`], [`SegmentError::KeyMismatch`]).
pub fn check_key<'k>(
    tag: &str,
    key_check: &str,
    key: Option<&'k IdKey>,
) -> Result<&'k IdKey, SegmentError> {
    let Some(key) = key else {
        return Err(SegmentError::KeyNeeded { tag: tag.into() });
    };
    let given = key.check_value();
    if given != key_check {
        return Err(SegmentError::KeyMismatch {
            tag: tag.into(),
            recorded: key_check.to_string(),
            given,
        });
    }
    Ok(key)
}

/// A permutation's refusal as the tag's error.
pub fn opaque_error(tag: &str, e: OpaqueError) -> SegmentError {
    SegmentError::Opaque {
        tag: tag.into(),
        source: e,
    }
}

/// Where `tag` (of shape `shape`) issues from at `at`: the period then, its row made on first use
/// (recorded as a period row of `tag`, with the base row's step, starting at 1), its claims capped
/// at the sequence's width. `key` is checked against an opaque sequence's key; a name of that row
/// already in use by anything but this tag's period is refused ([`SegmentError::ShapeFixed`]).
pub fn open_period(
    store: &dyn AllocStore,
    tag: &str,
    shape: &PeriodicShape,
    key: Option<&IdKey>,
    at: DateTime<Utc>,
) -> Result<PeriodIssuing, SegmentError> {
    let key = match &shape.key_check {
        Some(check) => Some(check_key(tag, check, key)?),
        None => None,
    };
    let Some(base) = store.get(tag)? else {
        return Err(super::store::unknown_tag(tag, &store.describe()));
    };
    let period = PeriodIssuing::new(tag, shape, shape.period.number_at(at, shape.zone), key);
    let description = format!("period {} of tag {tag}", period.number);
    let row = NewTag {
        tag: &period.row,
        start: StartAt::Default,
        step: base.step,
        description: Some(&description),
        if_not_exists: true,
    };
    add_shaped_tag(store, &row, &TagShape::PeriodRow { of: tag.into() })?;
    store.cap_tag(&period.row, shape.ceiling());
    Ok(period)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::{AllocStoreExt, MemoryStore};

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn opaque(digits: u8) -> TagShape {
        let key = IdKey::from_hex(KEY).unwrap();
        TagShape::Opaque {
            width: OpaqueWidth::Digits(digits),
            key_check: key.check_value(),
            regional: false,
        }
    }

    #[test]
    fn a_spec_reads_back_as_the_shape_it_was_written_from() {
        for shape in [TagShape::Plain, opaque(7), opaque(12)] {
            let spec = shape.spec();
            assert_eq!(TagShape::from_spec("t", spec.as_deref()).unwrap(), shape);
        }
        for bad in [
            "opaque=6 key=0011223344556677",
            "opaque=12",
            "period=day",
            "opaque=12 key=xyz",
        ] {
            assert!(
                matches!(
                    TagShape::from_spec("t", Some(bad)),
                    Err(SegmentError::UnreadableShape { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_name_keeps_its_shape_through_removal_and_a_plain_name_takes_none() {
        let store = MemoryStore::new();
        add_shaped_tag(&store, &NewTag::new("o", 10), &opaque(12)).unwrap();
        store.remove("o").unwrap();
        for other in [TagShape::Plain, opaque(9)] {
            assert!(matches!(
                add_shaped_tag(&store, &NewTag::new("o", 10), &other),
                Err(SegmentError::ShapeFixed { .. })
            ));
        }
        add_shaped_tag(&store, &NewTag::new("o", 10), &opaque(12)).unwrap();
        // A plain tag, live or removed, never becomes opaque.
        add_shaped_tag(&store, &NewTag::new("p", 10), &TagShape::Plain).unwrap();
        assert!(matches!(
            add_shaped_tag(&store, &NewTag::new("p", 10), &opaque(12)),
            Err(SegmentError::TagExists { .. })
        ));
        store.remove("p").unwrap();
        assert!(matches!(
            add_shaped_tag(&store, &NewTag::new("p", 10), &opaque(12)),
            Err(SegmentError::ShapeFixed { .. })
        ));
        assert_eq!(
            store.shape_mark("p", None).unwrap(),
            None,
            "nothing recorded"
        );
    }

    #[test]
    fn a_regional_tag_gives_each_region_its_first_digit_and_decodes_back() {
        let key = IdKey::from_hex(KEY).unwrap();
        let shape = TagShape::Opaque {
            width: OpaqueWidth::Digits(9),
            key_check: key.check_value(),
            regional: true,
        };
        assert!(matches!(
            Issuing::new("o", &shape, Some(&key), &Bounds::UNBOUNDED),
            Err(SegmentError::OpaqueNeedsRegion { .. })
        ));
        let mut seen = std::collections::HashSet::new();
        for index in 0..3 {
            let region = Region::new(index, 3).unwrap();
            let Issuing::Opaque(p) =
                Issuing::new("o", &shape, Some(&key), &Bounds::of(Some(region))).unwrap()
            else {
                panic!("opaque");
            };
            let start = region.segment_block().start as u64;
            let first = u64::from(index + 1) * 100_000_000;
            for dense in start.max(1)..start + 2000 {
                let id = p.encode(dense).unwrap();
                assert!((first..first + 100_000_000).contains(&id), "{index}: {id}");
                assert_eq!(p.decode(id).unwrap(), dense);
                assert!(seen.insert(id), "{id} twice");
            }
            // Its ceiling: the block's start and the 8-digit field's capacity.
            assert_eq!(p.ceiling(), start as i64 + 99_999_999);
            assert!(p.encode(start + 99_999_999).is_err());
            assert!(p.decode(first - 1).is_err(), "another region's digit");
        }
    }

    #[test]
    fn an_id_of_a_regional_tag_is_read_in_the_region_its_first_digit_names() {
        let key = IdKey::from_hex(KEY).unwrap();
        let shape = TagShape::Opaque {
            width: OpaqueWidth::Digits(9),
            key_check: key.check_value(),
            regional: true,
        };
        let store = MemoryStore::new();
        let not_of_shape =
            |r: Result<Bounds, SegmentError>| matches!(r, Err(SegmentError::NotOfShape { .. }));
        // A database that records no region: the digit names none.
        assert!(not_of_shape(shape.issued_in(&store, "o", 123_456_789)));
        crate::segment::record_region(&store, Region::new(0, 3).unwrap()).unwrap();
        for index in 0..3 {
            let region = Region::new(index, 3).unwrap();
            let bounds = Bounds::of(Some(region));
            let Issuing::Opaque(p) = Issuing::new("o", &shape, Some(&key), &bounds).unwrap() else {
                panic!("opaque");
            };
            let id = p.encode(region.segment_block().start as u64 + 7).unwrap();
            assert_eq!(shape.issued_in(&store, "o", id).unwrap(), bounds, "{id}");
        }
        // A digit past the regions recorded, a leading 0, a tenth digit.
        for id in [412_345_678, 12_345_678, 1_123_456_789] {
            assert!(not_of_shape(shape.issued_in(&store, "o", id)), "{id}");
        }
        // Any other shape is read in the store's own bounds.
        assert_eq!(
            opaque(9).issued_in(&store, "o", 5).unwrap(),
            Bounds::UNBOUNDED
        );
    }

    #[test]
    fn an_opaque_tag_needs_its_own_key_and_no_region_for_digits() {
        let shape = opaque(12);
        assert!(matches!(
            Issuing::new("o", &shape, None, &Bounds::UNBOUNDED),
            Err(SegmentError::KeyNeeded { .. })
        ));
        let other = IdKey::from_hex(&"ab".repeat(32)).unwrap();
        assert!(matches!(
            Issuing::new("o", &shape, Some(&other), &Bounds::UNBOUNDED),
            Err(SegmentError::KeyMismatch { .. })
        ));
        let key = IdKey::from_hex(KEY).unwrap();
        let region = Region::new(1, 2).unwrap();
        assert!(matches!(
            Issuing::new("o", &shape, Some(&key), &Bounds::of(Some(region))),
            Err(SegmentError::OpaqueInRegions { .. })
        ));
        let issuing = Issuing::new("o", &shape, Some(&key), &Bounds::UNBOUNDED).unwrap();
        assert_eq!(issuing.ceiling(), 900_000_000_000 + 1);
        let id = issuing.id("o", 1).unwrap();
        assert_eq!(id.to_string().len(), 12);
        assert!(issuing.id("o", 900_000_000_001).is_err());
    }
}
