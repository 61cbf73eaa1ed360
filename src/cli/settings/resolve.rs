//! Resolution: a setting's value from the command line, the environment, the config file or its
//! default, in that order, as its declaration names them; where it came from is kept and
//! recorded for `config show`.

use clap::ArgMatches;
use clap::parser::ValueSource;
use leafctl::config::{ConfigFile, Origin};

use leafctl::config::Resolved;
use serde::Serialize;

use leafctl::worker::setting::{SettingDefault, SettingKind, SettingValue};

use super::decl::{Default, Gathered, Info, Setting, Value};
use crate::cli::error::usage;

/// What resolution found for one setting, as `config show` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    /// The setting's key.
    pub key: &'static str,
    /// Its value as people read it (`***` for a secret); `None` when unset.
    pub value: Option<String>,
    /// Where it came from (`flag`, `env LEAF_DB`, `config file`, `default`, `unset`).
    pub source: String,
}

/// Reads an environment variable; an empty value counts as unset.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Reads each setting from its sources as its declaration names them, and records what it found.
pub(super) struct Resolver<'a> {
    matches: &'a ArgMatches,
    file: &'a ConfigFile,
    /// Deprecation notes are not printed (`-q`).
    quiet: bool,
    /// What each setting resolved to, as `config show` prints it.
    pub shown: Vec<Shown>,
    /// The keys of the settings given on the command line.
    pub given: Vec<&'static str>,
}

impl<'a> Resolver<'a> {
    pub fn new(matches: &'a ArgMatches, file: &'a ConfigFile) -> Resolver<'a> {
        let quiet = matches
            .try_get_one::<bool>("quiet")
            .ok()
            .flatten()
            .copied()
            .unwrap_or(false);
        Resolver {
            matches,
            file,
            quiet,
            shown: Vec::new(),
            given: Vec::new(),
        }
    }

    /// The value given for `s` on the command line, at the top level or in the subcommand.
    pub fn flag<T: Value>(&mut self, s: &Info) -> Option<T> {
        s.flag?;
        let id = s.key;
        let mut level = Some(self.matches);
        while let Some(m) = level {
            if m.try_contains_id(id).is_ok()
                && m.value_source(id) == Some(ValueSource::CommandLine)
                && let Ok(Some(v)) = m.try_get_one::<T>(id)
            {
                self.given.push(s.key);
                return Some(v.clone());
            }
            level = m.subcommand().map(|(_, sub)| sub);
        }
        None
    }

    /// The environment's value for `s`.
    pub fn env<T: Value>(&self, s: &Info) -> anyhow::Result<Option<(T, &'static str)>> {
        let Some(var) = s.env else { return Ok(None) };
        match env_var(var) {
            None => Ok(None),
            Some(raw) => T::parse(&raw).map(|v| Some((v, var))).map_err(|e| {
                usage(
                    format!("{var}={raw:?} is not a valid {}: {e}", s.what),
                    format!("fix or unset {var}"),
                )
            }),
        }
    }

    /// The config file's value for `s`, under its key or (with a note) its former key.
    pub fn file<T: Value>(&self, s: &Info) -> anyhow::Result<Option<T>> {
        let mut value = self.file.get(s.key);
        if let Some(old) = s.old_key
            && self.file.get(old).is_some()
        {
            if !self.quiet {
                let read = if value.is_some() {
                    "ignored: the file sets"
                } else {
                    "read as"
                };
                crate::cli::error::note(&format!(
                    "{old} in the config file is deprecated ({read} {}); write {} instead",
                    s.key, s.key
                ));
            }
            value = value.or_else(|| self.file.get(old));
        }
        value
            .map(|v| T::from_toml(v.clone()))
            .transpose()
            .map_err(|e| {
                usage(
                    format!("{} in the config file: {e}", s.key),
                    "fix the file; `leafctl config show --help` lists the settings",
                )
            })
    }

    /// flag > environment > file, or `None` (not recorded for `config show`).
    pub fn find<T: Value>(&mut self, s: &Info) -> anyhow::Result<Option<Resolved<T>>> {
        if let Some(value) = self.flag::<T>(s) {
            return Ok(Some(Resolved {
                value,
                origin: Origin::Flag,
            }));
        }
        if let Some((value, var)) = self.env::<T>(s)? {
            return Ok(Some(Resolved {
                value,
                origin: Origin::Env(var.into()),
            }));
        }
        Ok(self.file::<T>(s)?.map(|value| Resolved {
            value,
            origin: Origin::File,
        }))
    }

    /// Records a setting's row for `config show`.
    pub fn record(&mut self, s: &Info, shown: Option<(String, &Origin)>) {
        if !s.row {
            return;
        }
        let (value, source) = match shown {
            Some((_, origin)) if s.secret => (Some("***".into()), origin.to_string()),
            Some((v, origin)) => (Some(v), origin.to_string()),
            None => (None, "unset".into()),
        };
        self.shown.push(Shown {
            key: s.key,
            value,
            source,
        });
    }

    /// flag > environment > file > default, checked and recorded; `None`: unset.
    pub fn get<T: Value>(&mut self, s: &Setting<T>) -> anyhow::Result<Option<Resolved<T>>> {
        let found = match (self.find::<T>(&s.info)?, &s.default) {
            (Some(r), _) => Some(r),
            (None, Default::Value(value) | Default::Computed(_, value)) => Some(Resolved {
                value: value(),
                origin: Origin::Default,
            }),
            (None, Default::Unset | Default::Described(_) | Default::DescribedMade(_)) => None,
        };
        if let (Some(r), Some(check)) = (&found, s.check)
            && let Some((problem, hint)) = check(&r.value, &r.origin, &s.info)
        {
            return Err(usage(problem, hint));
        }
        let show = |v: &T| s.show.map_or_else(|| v.show(), |show| show(v));
        self.record(&s.info, found.as_ref().map(|r| (show(&r.value), &r.origin)));
        Ok(found)
    }

    /// A setting that has a default: its value, never unset.
    pub fn value<T: Value>(&mut self, s: &Setting<T>) -> anyhow::Result<Resolved<T>> {
        self.get(s)?.ok_or_else(|| {
            usage(
                format!("the setting {} has no default", s.info.key),
                "report this as a bug",
            )
        })
    }

    /// A registry backend's own setting: flag > environment > file > its default, checked by
    /// its kind's range and the backend's check, and recorded; `None`: unset.
    pub fn gathered(&mut self, g: &Gathered) -> anyhow::Result<Option<Resolved<SettingValue>>> {
        let (info, setting) = (&g.info, g.setting);
        let found = match setting.kind {
            SettingKind::Text => self
                .find::<String>(info)?
                .map(|r| (SettingValue::Text(r.value), r.origin)),
            SettingKind::Path => self
                .find::<std::path::PathBuf>(info)?
                .map(|r| (SettingValue::Path(r.value), r.origin)),
            SettingKind::Whole { .. } => self
                .find::<u64>(info)?
                .map(|r| (SettingValue::Whole(r.value), r.origin)),
        };
        let found = match (found, setting.default) {
            (Some((value, origin)), _) => Some(Resolved { value, origin }),
            (None, SettingDefault::Whole(n)) => Some(Resolved {
                value: SettingValue::Whole(n),
                origin: Origin::Default,
            }),
            (None, SettingDefault::Unset | SettingDefault::Described(_)) => None,
        };
        if let Some(r) = &found {
            if let (SettingKind::Whole { min, max }, Some(n)) = (setting.kind, r.value.whole())
                && !(min..=max).contains(&n)
            {
                return Err(usage(
                    format!(
                        "{} {n} (from {}) is not in {min}..={max}",
                        info.key, r.origin
                    ),
                    format!("give {} from {min} to {max}", setting.names()),
                ));
            }
            if let Some((problem, hint)) = setting.refusal(r) {
                return Err(usage(problem, hint));
            }
        }
        self.record(
            info,
            found
                .as_ref()
                .map(|r| (Gathered::show(&r.value), &r.origin)),
        );
        Ok(found)
    }
}
