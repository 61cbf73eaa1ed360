//! A registry backend's own settings (`--zk`, `etcd.lease_ttl_ms`, ...), declared in the
//! backend's folder as data and gathered, through the list of backends
//! (`crate::registries::settings`), into the one table of settings a front end resolves (the
//! CLI: flag > environment > config file > default). The backend then reads its values from
//! [`RegistrySettings::values`](super::RegistrySettings) by its own declarations, so no front end
//! knows what any backend takes.

use std::path::PathBuf;

use crate::resolved::{Origin, Resolved};

/// What a backend setting's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingKind {
    /// Text (`--zk HOSTS`).
    Text,
    /// A file's path.
    Path,
    /// A whole number from `min` to `max` (a flag's parser refuses others, naming the range).
    Whole {
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
    },
}

/// A backend setting's built-in default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingDefault {
    /// Unset unless given.
    Unset,
    /// Unset unless given; the text says what happens then (`the system's roots`).
    Described(&'static str),
    /// This number.
    Whole(u64),
}

/// Which commands accept a backend setting's flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagScope {
    /// Every command (`--zk`, `--etcd`: `workers` reads them too).
    Everywhere,
    /// The commands that make snowflake IDs (`--worker-id`).
    Issuing,
}

/// A backend setting's command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingFlag {
    /// The flag without its dashes (`zk`).
    pub long: &'static str,
    /// The value's name in help (`HOSTS`).
    pub value_name: &'static str,
    /// Where it is accepted.
    pub scope: FlagScope,
}

/// A backend setting's help: written out, or made from a list the library keeps.
#[derive(Debug, Clone, Copy)]
pub enum SettingHelp {
    /// As written.
    Written(&'static str),
    /// As this function makes it.
    Made(fn() -> String),
}

/// Refuses a value a setting does not allow: `(problem, hint)`, the problem naming where the
/// value came from (`origin`).
pub type SettingCheck = fn(&SettingValue, &Origin, &BackendSetting) -> Option<(String, String)>;

/// One setting of a registry backend, declared once in the backend's folder: its config key,
/// environment variable, flag, kind of value, default, check and help.
#[derive(Debug, Clone, Copy)]
pub struct BackendSetting {
    /// The config file key (`zk.hosts`), also its name in `config show`.
    pub key: &'static str,
    /// The environment variable, if any.
    pub env: Option<&'static str>,
    /// The command-line flag, if any.
    pub flag: Option<SettingFlag>,
    /// What a value is, for messages (`ZooKeeper hosts`).
    pub what: &'static str,
    /// Help: of the flag, and in `config show --help`.
    pub help: SettingHelp,
    /// What its value is.
    pub kind: SettingKind,
    /// Its built-in default.
    pub default: SettingDefault,
    /// Never shown: `config show` prints `***`.
    pub secret: bool,
    /// Read from the environment only, never from the config file.
    pub env_only: bool,
    /// What values it allows, beyond its kind.
    pub check: Option<SettingCheck>,
}

impl BackendSetting {
    /// A setting of the config file and nothing else, so far, unset unless given.
    pub const fn new(
        key: &'static str,
        what: &'static str,
        help: &'static str,
        kind: SettingKind,
    ) -> BackendSetting {
        BackendSetting {
            key,
            env: None,
            flag: None,
            what,
            help: SettingHelp::Written(help),
            kind,
            default: SettingDefault::Unset,
            secret: false,
            env_only: false,
            check: None,
        }
    }
    /// Read from this environment variable.
    pub const fn env(mut self, var: &'static str) -> BackendSetting {
        self.env = Some(var);
        self
    }
    /// Read from `--LONG VALUE` where `scope` says.
    pub const fn flag(
        mut self,
        long: &'static str,
        value_name: &'static str,
        scope: FlagScope,
    ) -> BackendSetting {
        self.flag = Some(SettingFlag {
            long,
            value_name,
            scope,
        });
        self
    }
    /// Its help is made by `help` when asked for.
    pub const fn help_made(mut self, help: fn() -> String) -> BackendSetting {
        self.help = SettingHelp::Made(help);
        self
    }
    /// Its default.
    pub const fn default(mut self, default: SettingDefault) -> BackendSetting {
        self.default = default;
        self
    }
    /// A secret: `config show` prints `***`.
    pub const fn secret(mut self) -> BackendSetting {
        self.secret = true;
        self
    }
    /// Read from the environment only.
    pub const fn env_only(mut self) -> BackendSetting {
        self.env_only = true;
        self
    }
    /// Refuses the values `check` refuses.
    pub const fn check(mut self, check: SettingCheck) -> BackendSetting {
        self.check = Some(check);
        self
    }

    /// Its help text.
    pub fn help_text(&self) -> String {
        match self.help {
            SettingHelp::Written(text) => text.to_string(),
            SettingHelp::Made(make) => make(),
        }
    }

    /// The config key and the environment variable, for a hint (`etcd.lease_ttl_ms or
    /// LEAF_ETCD_LEASE_TTL_MS`).
    pub fn names(&self) -> String {
        match self.env {
            Some(var) => format!("{} or {var}", self.key),
            None => self.key.to_string(),
        }
    }

    /// Its value's problem, if `check` refuses it.
    pub fn refusal(&self, value: &Resolved<SettingValue>) -> Option<(String, String)> {
        self.check
            .and_then(|check| check(&value.value, &value.origin, self))
    }
}

/// A backend setting's value, of the setting's [`SettingKind`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingValue {
    /// Text.
    Text(String),
    /// A path.
    Path(PathBuf),
    /// A whole number.
    Whole(u64),
}

impl SettingValue {
    /// The number, for a [`SettingKind::Whole`] setting's value.
    pub fn whole(&self) -> Option<u64> {
        match self {
            SettingValue::Whole(n) => Some(*n),
            _ => None,
        }
    }
}

/// What the backends' settings resolved to, by key: what a front end hands every backend, each
/// reading its own by its declarations.
#[derive(Debug, Clone, Default)]
pub struct SettingValues {
    values: Vec<(&'static str, Resolved<SettingValue>)>,
}

impl SettingValues {
    /// Records `value` for `setting` (replacing one recorded before).
    pub fn set(&mut self, setting: &BackendSetting, value: Resolved<SettingValue>) {
        self.values.retain(|(key, _)| *key != setting.key);
        self.values.push((setting.key, value));
    }

    /// The value given for `setting`, if any (a default counts as given).
    pub fn get(&self, setting: &BackendSetting) -> Option<&Resolved<SettingValue>> {
        self.values
            .iter()
            .find(|(key, _)| *key == setting.key)
            .map(|(_, v)| v)
    }

    /// Where `setting`'s value came from, if it has one.
    pub fn origin(&self, setting: &BackendSetting) -> Option<&Origin> {
        self.get(setting).map(|v| &v.origin)
    }

    /// A text setting's value and where it came from.
    pub fn text(&self, setting: &BackendSetting) -> Option<Resolved<String>> {
        self.get(setting).and_then(|r| match &r.value {
            SettingValue::Text(text) => Some(Resolved {
                value: text.clone(),
                origin: r.origin.clone(),
            }),
            _ => None,
        })
    }

    /// A path setting's value.
    pub fn path(&self, setting: &BackendSetting) -> Option<PathBuf> {
        self.get(setting).and_then(|r| match &r.value {
            SettingValue::Path(path) => Some(path.clone()),
            _ => None,
        })
    }

    /// A whole-number setting's value, else its declared default.
    pub fn whole(&self, setting: &BackendSetting) -> Option<Resolved<u64>> {
        match self
            .get(setting)
            .and_then(|r| Some((r.value.whole()?, &r.origin)))
        {
            Some((value, origin)) => Some(Resolved {
                value,
                origin: origin.clone(),
            }),
            None => match setting.default {
                SettingDefault::Whole(value) => Some(Resolved {
                    value,
                    origin: Origin::Default,
                }),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: BackendSetting =
        BackendSetting::new("x.ttl", "ms", "", SettingKind::Whole { min: 0, max: 10 })
            .default(SettingDefault::Whole(7));
    const HOSTS: BackendSetting = BackendSetting::new("x.hosts", "hosts", "", SettingKind::Text);

    /// A backend reads what was set by its own declaration, and a number's default when unset.
    #[test]
    fn values_are_read_by_their_declarations() {
        let mut v = SettingValues::default();
        assert_eq!(
            v.whole(&TTL).map(|r| (r.value, r.origin)),
            Some((7, Origin::Default))
        );
        assert!(v.text(&HOSTS).is_none());
        v.set(
            &HOSTS,
            Resolved {
                value: SettingValue::Text("a:1".into()),
                origin: Origin::Flag,
            },
        );
        v.set(
            &TTL,
            Resolved {
                value: SettingValue::Whole(3),
                origin: Origin::File,
            },
        );
        assert_eq!(v.text(&HOSTS).map(|r| r.value).as_deref(), Some("a:1"));
        assert_eq!(v.origin(&HOSTS), Some(&Origin::Flag));
        assert_eq!(v.whole(&TTL).map(|r| r.value), Some(3));
        // A value of another kind than declared reads as absent, never as something else.
        assert!(v.path(&HOSTS).is_none());
    }
}
