//! Bit layouts of snowflake-style IDs: which bits hold the time, the worker and the sequence.

//!
//! `preset` names the layouts of known generators, `widths` reads `TIME,WORKER,SEQ`.

mod preset;
mod widths;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::Serialize;

pub use preset::{
    BAIDU_EPOCH_MS, DISCORD_EPOCH_MS, INSTAGRAM_EPOCH_MS, LEAF_EPOCH_MS, MASTODON_EPOCH_MS, Preset,
    SEATA_EPOCH_MS, SONYFLAKE_EPOCH_MS, YITTER_EPOCH_MS,
};
pub use widths::BitWidths;

use super::SnowflakeError;

/// Order of the two low fields below the time field.
///
/// Leaf, Twitter, Discord and Baidu put the worker above the sequence; Sonyflake puts the sequence
/// above the machine id; Seata's improved snowflake puts the worker above the time, so that one
/// worker's IDs form one contiguous, increasing run (its time and sequence count up together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FieldOrder {
    /// `time | worker | sequence`
    TimeWorkerSeq,
    /// `time | sequence | worker`
    TimeSeqWorker,
    /// `worker | time | sequence`
    WorkerTimeSeq,
}

/// The fields of one decoded ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdParts {
    /// Time units since the layout's epoch.
    pub ticks: u64,
    /// Worker (or machine) id.
    pub worker: u64,
    /// Sequence number within the tick.
    pub sequence: u64,
}

/// A validated snowflake layout: 63 bits in all, so the sign bit of an `i64` is always 0.
///
/// ```
/// use leafctl::snowflake::{Layout, Preset};
/// let leaf = Layout::preset(Preset::Leaf);
/// let id = leaf.encode(1_000, 7, 42).unwrap();
/// let parts = leaf.decode(id).unwrap();
/// assert_eq!((parts.ticks, parts.worker, parts.sequence), (1_000, 7, 42));
/// assert_eq!(leaf.unix_ms(parts.ticks), leafctl::snowflake::LEAF_EPOCH_MS + 1_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    epoch_ms: i64,
    time_bits: u32,
    worker_bits: u32,
    seq_bits: u32,
    unit_ms: u64,
    order: FieldOrder,
}

impl Layout {
    /// A preset's layout.
    pub fn preset(preset: Preset) -> Layout {
        preset.layout()
    }

    /// A custom `time | worker | sequence` layout; the three widths must add up to 63 and each be at
    /// least 1, and the unit must be at least 1 ms.
    pub fn custom(
        epoch_ms: i64,
        time_bits: u32,
        worker_bits: u32,
        seq_bits: u32,
        unit_ms: u64,
    ) -> Result<Layout, SnowflakeError> {
        let invalid = |reason: String| Err(SnowflakeError::InvalidLayout(reason));
        if time_bits == 0 || worker_bits == 0 || seq_bits == 0 {
            return invalid(format!(
                "every field needs at least one bit (got {time_bits},{worker_bits},{seq_bits})"
            ));
        }
        let total = time_bits as u64 + worker_bits as u64 + seq_bits as u64;
        if total != 63 {
            return invalid(format!(
                "time, worker and sequence bits must add up to 63 (the sign bit stays 0), got {total}"
            ));
        }
        if unit_ms == 0 {
            return invalid("the time unit must be at least 1 ms".into());
        }
        let layout = Layout {
            epoch_ms,
            time_bits,
            worker_bits,
            seq_bits,
            unit_ms,
            order: FieldOrder::TimeWorkerSeq,
        };
        // The last representable instant must be a valid Unix time in ms.
        let span = (layout.max_ticks() as i128) * (unit_ms as i128);
        if (epoch_ms as i128) + span > i64::MAX as i128 {
            return invalid(
                "epoch plus the time field's span overflows 64-bit milliseconds".into(),
            );
        }
        Ok(layout)
    }

    /// Milliseconds since the Unix epoch at which tick 0 starts.
    pub fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }
    /// Width of the time field.
    pub fn time_bits(&self) -> u32 {
        self.time_bits
    }
    /// Width of the worker field.
    pub fn worker_bits(&self) -> u32 {
        self.worker_bits
    }
    /// Width of the sequence field.
    pub fn seq_bits(&self) -> u32 {
        self.seq_bits
    }
    /// Length of one tick in milliseconds.
    pub fn unit_ms(&self) -> u64 {
        self.unit_ms
    }
    /// Order of the low fields.
    pub fn order(&self) -> FieldOrder {
        self.order
    }
    /// Largest worker id.
    pub fn max_worker(&self) -> u64 {
        (1u64 << self.worker_bits) - 1
    }
    /// Largest sequence number.
    pub fn max_sequence(&self) -> u64 {
        (1u64 << self.seq_bits) - 1
    }
    /// Largest tick count the time field holds.
    pub fn max_ticks(&self) -> u64 {
        (1u64 << self.time_bits) - 1
    }

    /// Where each field starts: (time shift, worker shift, sequence shift).
    pub fn shifts(&self) -> (u32, u32, u32) {
        match self.order {
            FieldOrder::TimeWorkerSeq => (self.worker_bits + self.seq_bits, self.seq_bits, 0),
            FieldOrder::TimeSeqWorker => (self.worker_bits + self.seq_bits, 0, self.worker_bits),
            FieldOrder::WorkerTimeSeq => (self.seq_bits, self.time_bits + self.seq_bits, 0),
        }
    }

    /// True when IDs sort by time whatever their worker (the time is the top field).
    pub fn time_first(&self) -> bool {
        self.order != FieldOrder::WorkerTimeSeq
    }

    /// Distance between two IDs of the same tick and worker whose sequences differ by one.
    pub fn sequence_stride(&self) -> u64 {
        1u64 << self.shifts().2
    }

    /// Packs the three fields into an ID; any field out of range is an error, never a wrapped ID.
    pub fn encode(&self, ticks: u64, worker: u64, sequence: u64) -> Result<u64, SnowflakeError> {
        if ticks > self.max_ticks() {
            return Err(SnowflakeError::TimeOverflow {
                unix_ms: self.unix_ms_saturating(ticks),
                last_ms: self.last_unix_ms(),
            });
        }
        if worker > self.max_worker() {
            return Err(SnowflakeError::WorkerOutOfRange {
                worker,
                max: self.max_worker(),
            });
        }
        if sequence > self.max_sequence() {
            return Err(SnowflakeError::SequenceOutOfRange {
                sequence,
                max: self.max_sequence(),
            });
        }
        let (ts, ws, ss) = self.shifts();
        Ok((ticks << ts) | (worker << ws) | (sequence << ss))
    }

    /// Splits an ID into its fields; IDs with the sign bit set are rejected.
    pub fn decode(&self, id: u64) -> Result<IdParts, SnowflakeError> {
        if id > i64::MAX as u64 {
            return Err(SnowflakeError::SignBitSet(id));
        }
        let (ts, ws, ss) = self.shifts();
        Ok(IdParts {
            ticks: (id >> ts) & self.max_ticks(),
            worker: (id >> ws) & self.max_worker(),
            sequence: (id >> ss) & self.max_sequence(),
        })
    }

    /// Unix milliseconds at which a tick starts.
    pub fn unix_ms(&self, ticks: u64) -> i64 {
        self.unix_ms_saturating(ticks)
    }

    fn unix_ms_saturating(&self, ticks: u64) -> i64 {
        let ms = self.epoch_ms as i128 + ticks as i128 * self.unit_ms as i128;
        ms.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The last Unix millisecond the layout can represent.
    pub fn last_unix_ms(&self) -> i64 {
        self.unix_ms(self.max_ticks()) + self.unit_ms as i64 - 1
    }

    /// The tick that contains a Unix millisecond; an instant before the epoch or past the layout's
    /// capacity is an error.
    pub fn ticks_at(&self, unix_ms: i64) -> Result<u64, SnowflakeError> {
        if unix_ms < self.epoch_ms {
            return Err(SnowflakeError::BeforeEpoch {
                unix_ms,
                epoch_ms: self.epoch_ms,
            });
        }
        // unix_ms >= epoch_ms here, so the difference fits a u64 even when it does not fit an i64.
        let ticks = unix_ms.abs_diff(self.epoch_ms) / self.unit_ms;
        if ticks > self.max_ticks() {
            return Err(SnowflakeError::TimeOverflow {
                unix_ms,
                last_ms: self.last_unix_ms(),
            });
        }
        Ok(ticks)
    }

    /// Smallest and largest ID whose time lies in `[from_ms, to_ms]`, for `WHERE id BETWEEN` queries.
    /// A layout with the worker above the time (Seata's) has one such range per worker: use
    /// [`Layout::worker_id_range`].
    pub fn id_range(&self, from_ms: i64, to_ms: i64) -> Result<(u64, u64), SnowflakeError> {
        if !self.time_first() {
            return Err(SnowflakeError::WorkerAboveTime);
        }
        let first = self.ticks_at(from_ms.max(self.epoch_ms))?;
        let last = self.ticks_at(to_ms)?;
        let (ts, _, _) = self.shifts();
        let low_mask = (1u64 << ts) - 1;
        Ok((first << ts, (last << ts) | low_mask))
    }

    /// Smallest and largest ID one worker can have issued in `[from_ms, to_ms]`: every ID of that
    /// worker and time lies between them (with Seata's order they are exactly that worker's IDs;
    /// otherwise other workers' IDs lie between them too, and [`Layout::worker_sql`] tells them
    /// apart).
    pub fn worker_id_range(
        &self,
        worker: u64,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<(u64, u64), SnowflakeError> {
        let first = self.ticks_at(from_ms.max(self.epoch_ms))?;
        let last = self.ticks_at(to_ms.min(self.last_unix_ms()))?;
        Ok((
            self.encode(first, worker, 0)?,
            self.encode(last, worker, self.max_sequence())?,
        ))
    }

    /// The worker field as an SQL expression on `column`, for narrowing a range to one worker:
    /// `(id >> 12) & 1023` for Leaf's layout; `None` when the layout has no worker bits.
    pub fn worker_sql(&self, column: &str) -> Option<String> {
        if self.worker_bits == 0 {
            return None;
        }
        let (_, ws, _) = self.shifts();
        Some(if ws == 0 {
            format!("{column} & {}", self.max_worker())
        } else {
            format!("({column} >> {ws}) & {}", self.max_worker())
        })
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.order {
            FieldOrder::TimeWorkerSeq => write!(
                f,
                "{} time | {} worker | {} sequence",
                self.time_bits, self.worker_bits, self.seq_bits
            )?,
            FieldOrder::TimeSeqWorker => write!(
                f,
                "{} time | {} sequence | {} worker",
                self.time_bits, self.seq_bits, self.worker_bits
            )?,
            FieldOrder::WorkerTimeSeq => write!(
                f,
                "{} worker | {} time | {} sequence",
                self.worker_bits, self.time_bits, self.seq_bits
            )?,
        }
        write!(f, ", {} ms units, epoch {} ms", self.unit_ms, self.epoch_ms)
    }
}
