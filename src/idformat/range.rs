//! The IDs made around one ID: bounds for `WHERE id BETWEEN ...` during an incident.

use super::text::GREGORIAN_TO_UNIX_100NS;
use super::{Decoded, Format, IdFormatError, format_ksuid, format_ulid, format_uuid};

/// The bounds of the IDs the same worker (or process) could have made in a time window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    /// The window's start, Unix ms (clamped to the format's range).
    pub from_ms: i64,
    /// The window's end, Unix ms, inclusive.
    pub to_ms: i64,
    /// The smallest ID in the window, as the format writes it.
    pub min: String,
    /// The largest ID in the window.
    pub max: String,
    /// True when the bounds are text (UUID, ULID, KSUID, ObjectId), so SQL quotes them.
    pub quoted: bool,
    /// An SQL condition on `id` that keeps only the same worker, when other workers' IDs also
    /// lie between the bounds (`(id >> 12) & 1023 = 7`); `None` when the bounds hold only the
    /// worker's IDs or the format has no worker.
    pub worker_sql: Option<String>,
    /// Whether the range is the worker's own (`true`, with [`Around::worker_sql`] when the
    /// bounds alone do not keep it), or every ID of the window (`false`: the format has no
    /// worker field, or its worker does not sit where a range can follow it).
    pub per_worker: bool,
    /// For ObjectIds, the same selection as a MongoDB filter on `_id` (the window's bounds and
    /// the process's 5 bytes); `None` for other formats.
    pub mongo_filter: Option<String>,
}

/// The range of IDs every worker of `workers` (a region's slice of the worker field) made within
/// `window_ms` before and after `d`, a snowflake ID of a layout with the time on top: the
/// bounds of the slice's first and last worker, and an SQL condition keeping the slice.
pub fn around_workers(
    d: &Decoded,
    window_ms: i64,
    workers: std::ops::Range<u64>,
) -> Result<Around, IdFormatError> {
    let Format::Snowflake(l) = d.format else {
        return Err(IdFormatError::NotAnId(
            "only a snowflake ID has a worker field a region owns part of".into(),
        ));
    };
    let layout = l.layout;
    if !layout.time_first() || workers.is_empty() {
        return Err(IdFormatError::NotAnId(
            "this layout puts the worker above the time: a region's IDs of a window are not one range".into(),
        ));
    }
    let window_ms = window_ms.max(0);
    let from = d.unix_ms.saturating_sub(window_ms).max(layout.epoch_ms());
    let to = d
        .unix_ms
        .saturating_add(window_ms)
        .min(layout.last_unix_ms());
    let last = workers.end - 1;
    let bad = |e: crate::snowflake::SnowflakeError| IdFormatError::NotAnId(e.to_string());
    let (lo, _) = layout
        .worker_id_range(workers.start, from, to)
        .map_err(bad)?;
    let (_, hi) = layout.worker_id_range(last, from, to).map_err(bad)?;
    let filter = layout
        .worker_sql("id")
        .map(|expr| format!("{expr} BETWEEN {} AND {last}", workers.start));
    Ok(snowflake_range(from, to, (lo, hi), filter, false))
}

/// The range of IDs made within `window_ms` before and after `d` by the same worker: for
/// snowflakes the worker's, for ObjectIds the same process's (every process's IDs lie between the
/// bounds, so [`Around::worker_sql`] and [`Around::mongo_filter`] keep the process's), for the
/// formats without a worker
/// (UUIDv7, UUIDv6, ULID, KSUID) every ID of the window. UUIDv1 IDs do not sort by time.
pub fn around(d: &Decoded, window_ms: i64) -> Result<Around, IdFormatError> {
    let window_ms = window_ms.max(0);
    let from = d.unix_ms.saturating_sub(window_ms);
    let to = d.unix_ms.saturating_add(window_ms);
    match d.format {
        Format::Snowflake(l) => snowflake_around(d, l.layout, from, to),
        Format::Uuid(7) => {
            let (from, to) = (from.clamp(0, (1 << 48) - 1), to.clamp(0, (1 << 48) - 1));
            let base = (7u128 << 76) | (0b10u128 << 62);
            let lo = ((from as u128) << 80) | base;
            let hi = ((to as u128) << 80) | base | (0xfffu128 << 64) | ((1u128 << 62) - 1);
            Ok(text_range(from, to, format_uuid(lo), format_uuid(hi)))
        }
        Format::Uuid(6) => Ok(uuid6_around(from, to)),
        Format::Uuid(_) => Err(IdFormatError::NotSortable {
            format: "uuidv1",
            why: "their time's low bits come first",
        }),
        Format::Ulid => {
            let (from, to) = (from.clamp(0, (1 << 48) - 1), to.clamp(0, (1 << 48) - 1));
            let lo = (from as u128) << 80;
            let hi = ((to as u128) << 80) | ((1u128 << 80) - 1);
            Ok(text_range(from, to, format_ulid(lo), format_ulid(hi)))
        }
        Format::Ksuid => {
            let secs = |ms: i64| {
                (ms.div_euclid(1000) - super::KSUID_EPOCH_S).clamp(0, i64::from(u32::MAX)) as u32
            };
            let (f, t) = (secs(from), secs(to));
            let mut lo = [0u8; 20];
            lo[..4].copy_from_slice(&f.to_be_bytes());
            let mut hi = [0xffu8; 20];
            hi[..4].copy_from_slice(&t.to_be_bytes());
            let back = |s: u32| (super::KSUID_EPOCH_S + i64::from(s)) * 1000;
            Ok(text_range(
                back(f),
                back(t) + 999,
                format_ksuid(&lo),
                format_ksuid(&hi),
            ))
        }
        Format::ObjectId => objectid_around(d, from, to),
    }
}

/// [`around`] for a snowflake: the window within the layout's time, the worker's bounds, and
/// the SQL keeping the worker when the time is on top.
fn snowflake_around(
    d: &Decoded,
    layout: crate::snowflake::Layout,
    from: i64,
    to: i64,
) -> Result<Around, IdFormatError> {
    let from = from.max(layout.epoch_ms());
    let to = to.min(layout.last_unix_ms());
    let worker = d.worker.unwrap_or(0);
    let (lo, hi) = layout
        .worker_id_range(worker, from, to)
        .map_err(|e| IdFormatError::NotAnId(e.to_string()))?;
    let filter = if layout.time_first() {
        layout
            .worker_sql("id")
            .map(|expr| format!("{expr} = {worker}"))
    } else {
        None
    };
    Ok(snowflake_range(
        from,
        to,
        (lo, hi),
        filter,
        d.worker.is_some(),
    ))
}

/// [`around`] for a UUIDv6: the window's bounds in its reordered Gregorian time.
fn uuid6_around(from: i64, to: i64) -> Around {
    let first = GREGORIAN_TO_UNIX_100NS;
    let last_ms = (((1i64 << 60) - 1) - first) / 10_000;
    let min_ms = -first / 10_000;
    let (from, to) = (from.clamp(min_ms, last_ms), to.clamp(min_ms, last_ms));
    let ticks = |ms: i64, end: bool| {
        let t = ms * 10_000 + first + if end { 9_999 } else { 0 };
        t.clamp(0, (1 << 60) - 1) as u128
    };
    let pack = |t: u128| ((t >> 12) << 80) | (6u128 << 76) | ((t & 0xfff) << 64);
    let lo = pack(ticks(from, false)) | (0b10u128 << 62);
    let hi = pack(ticks(to, true)) | (0b10u128 << 62) | ((1u128 << 62) - 1);
    text_range(from, to, format_uuid(lo), format_uuid(hi))
}

/// [`around`] for an ObjectId: the window's seconds, and the process's 5 bytes as SQL and a
/// MongoDB filter.
fn objectid_around(d: &Decoded, from: i64, to: i64) -> Result<Around, IdFormatError> {
    let secs = |ms: i64| ms.div_euclid(1000).clamp(0, i64::from(u32::MAX)) as u64;
    let (f, t) = (secs(from), secs(to));
    let process = d.worker.unwrap_or(0);
    // Bytes 5-9 are the process: between two times every process's IDs lie, so the
    // bounds hold the whole window and a filter keeps the process's.
    let lo = format!("{f:08x}0000000000000000");
    let hi = format!("{t:08x}ffffffffffffffff");
    let mongo_filter = format!(
        "{{_id: {{$gte: ObjectId(\"{lo}\"), $lte: ObjectId(\"{hi}\")}}, $expr: {{$eq: [{{$substrCP: [{{$toString: \"$_id\"}}, 8, 10]}}, \"{process:010x}\"]}}}}"
    );
    Ok(Around {
        from_ms: f as i64 * 1000,
        to_ms: t as i64 * 1000 + 999,
        min: lo,
        max: hi,
        quoted: true,
        worker_sql: Some(format!("substr(id, 9, 10) = '{process:010x}'")),
        per_worker: true,
        mongo_filter: Some(mongo_filter),
    })
}

/// A snowflake window's [`Around`]: numeric bounds `lo..=hi`, with `worker_sql` and
/// `per_worker` as [`around`] and [`around_workers`] found them.
fn snowflake_range(
    from_ms: i64,
    to_ms: i64,
    (lo, hi): (u64, u64),
    worker_sql: Option<String>,
    per_worker: bool,
) -> Around {
    Around {
        from_ms,
        to_ms,
        min: lo.to_string(),
        max: hi.to_string(),
        quoted: false,
        worker_sql,
        per_worker,
        mongo_filter: None,
    }
}

/// A text format's [`Around`]: quoted bounds, every ID of the window.
fn text_range(from_ms: i64, to_ms: i64, min: String, max: String) -> Around {
    Around {
        from_ms,
        to_ms,
        min,
        max,
        quoted: true,
        worker_sql: None,
        per_worker: false,
        mongo_filter: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idformat::{NamedLayout, decode_text};
    use crate::snowflake::Preset;

    #[test]
    fn a_leaf_ids_worker_range_holds_its_neighbours() {
        let leaf = NamedLayout::preset(Preset::Leaf);
        let l = leaf.layout;
        let t = l.ticks_at(1_780_000_000_000).unwrap();
        let id = l.encode(t, 7, 3).unwrap();
        let a = around(&leaf.decode(id).unwrap(), 60_000).unwrap();
        let (lo, hi): (u64, u64) = (a.min.parse().unwrap(), a.max.parse().unwrap());
        assert!(lo <= id && id <= hi);
        for (dt, inside) in [
            (-60_000i64, true),
            (60_000, true),
            (-60_001, false),
            (60_001, false),
        ] {
            let other = l.encode((t as i64 + dt) as u64, 7, 0).unwrap();
            let last = l.encode((t as i64 + dt) as u64, 7, 4095).unwrap();
            assert_eq!(
                (lo..=hi).contains(&other) && (lo..=hi).contains(&last),
                inside,
                "{dt}"
            );
        }
        assert_eq!(a.worker_sql.as_deref(), Some("(id >> 12) & 1023 = 7"));
        assert!(a.per_worker && !a.quoted);
    }

    #[test]
    fn text_formats_give_sortable_bounds() {
        let v7 = decode_text(b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap();
        let a = around(&v7, 1000).unwrap();
        assert_eq!(a.min, "017f22e2-75c8-7000-8000-000000000000");
        assert_eq!(a.max, "017f22e2-7d98-7fff-bfff-ffffffffffff");
        assert!(a.min.as_str() < "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        let v6 = decode_text(b"1EC9414C-232A-6B00-B3C8-9F6BDECED846").unwrap();
        let a = around(&v6, 0).unwrap();
        assert!(a.min.as_str() <= "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
        assert!(a.max.as_str() >= "1ec9414c-232a-6b00-b3c8-9f6bdeced846");
        let u = decode_text(b"01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap();
        let a = around(&u, 0).unwrap();
        assert_eq!(
            (a.min.as_str(), a.max.as_str()),
            ("01ARYZ6S410000000000000000", "01ARYZ6S41ZZZZZZZZZZZZZZZZ")
        );
        let k = decode_text(b"0ujtsYcgvSTl8PAuAdqWYSMnLOv").unwrap();
        let a = around(&k, 0).unwrap();
        assert!(
            a.min.as_str() < "0ujtsYcgvSTl8PAuAdqWYSMnLOv"
                && "0ujtsYcgvSTl8PAuAdqWYSMnLOv" < a.max.as_str()
        );
        // Issue 36, item 15: between two times every process's ObjectIds lie, so the bounds
        // span the window and the process is a filter (SQL and MongoDB), not the bounds.
        let o = decode_text(b"507f191e810c19729de860ea").unwrap();
        let a = around(&o, 1000).unwrap();
        assert_eq!(
            (a.min.as_str(), a.max.as_str()),
            ("507f191d0000000000000000", "507f191fffffffffffffffff")
        );
        let other_process = "507f191e0000000001000000";
        assert!(a.min.as_str() < other_process && other_process < a.max.as_str());
        assert_eq!(
            a.worker_sql.as_deref(),
            Some("substr(id, 9, 10) = '810c19729d'")
        );
        let m = a.mongo_filter.unwrap();
        assert!(
            m.contains(r#"$gte: ObjectId("507f191d0000000000000000")"#)
                && m.contains(r#"$lte: ObjectId("507f191fffffffffffffffff")"#)
                && m.contains(r#""810c19729d""#),
            "{m}"
        );
        // substr(id, 9, 10) and $substrCP(.., 8, 10) are the same 10 hex digits.
        assert_eq!(&"507f191e810c19729de860ea"[8..18], "810c19729d");
        let v1 = decode_text(b"C232AB00-9414-11EC-B3C8-9F6BDECED846").unwrap();
        assert!(matches!(
            around(&v1, 1000),
            Err(IdFormatError::NotSortable { .. })
        ));
    }
}
