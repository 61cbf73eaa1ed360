//! Field widths as written on the command line.

use std::fmt;
use std::str::FromStr;

/// Field widths as written on the command line: `TIME,WORKER,SEQ`, e.g. `41,10,12`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitWidths {
    /// Width of the time field.
    pub time: u32,
    /// Width of the worker field.
    pub worker: u32,
    /// Width of the sequence field.
    pub seq: u32,
}

impl FromStr for BitWidths {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let [t, w, q] = parts.as_slice() else {
            return Err(format!(
                "expected TIME,WORKER,SEQ such as 41,10,12, got {s:?}"
            ));
        };
        let num = |p: &str| {
            p.parse::<u32>()
                .map_err(|_| format!("{p:?} is not a bit count (in {s:?})"))
        };
        Ok(BitWidths {
            time: num(t)?,
            worker: num(w)?,
            seq: num(q)?,
        })
    }
}

impl fmt::Display for BitWidths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.time, self.worker, self.seq)
    }
}
