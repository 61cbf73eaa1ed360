//! A setting's effective value and where it came from (a flag, the environment, the
//! configuration file, a default): what every area that takes settings is handed, so it can
//! say in a message which one to change. It sits below them all (`db`, `worker`, `config`).

use std::fmt;

use serde::Serialize;

/// Where a setting's effective value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// A command-line flag.
    Flag,
    /// An environment variable (named).
    Env(String),
    /// The configuration file.
    File,
    /// leafctl's built-in default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Flag => f.write_str("flag"),
            Origin::Env(var) => write!(f, "env {var}"),
            Origin::File => f.write_str("config file"),
            Origin::Default => f.write_str("default"),
        }
    }
}

impl Origin {
    /// How strong an origin is: flag > environment > file > default.
    pub fn rank(&self) -> u8 {
        match self {
            Origin::Flag => 3,
            Origin::Env(_) => 2,
            Origin::File => 1,
            Origin::Default => 0,
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved<T> {
    /// The effective value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}
