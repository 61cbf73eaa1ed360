//! What a setting is: one declaration carrying its config key, environment variable, flag, typed
//! default, check and help, as ripgrep declares its flags (the declarations: `defs.rs`).

use std::any::Any;
use std::path::PathBuf;

use clap::builder::ValueParser;
use leafctl::config::Origin;
use leafctl::snowflake::{BitWidths, Preset, SeqStart};
use leafctl::worker::RegistryKind;
use leafctl::worker::setting::{
    BackendSetting, FlagScope, SettingDefault, SettingHelp, SettingKind, SettingValue,
};

use crate::cli::parse::whole_number;

/// Where a setting's flag is accepted: bits of the mask a command's [`Flags`] names.
pub mod scope {
    /// Every command, before or after its name.
    pub const GLOBAL: u8 = 1;
    /// Commands that read snowflake IDs or make them: `next`, `serve`, `decode`.
    pub const LAYOUT: u8 = 2;
    /// Commands that make snowflake IDs: `next`, `serve`.
    pub const SNOWFLAKE: u8 = 4;
    /// `serve`.
    pub const SERVE: u8 = 8;
}

/// Text a declaration gives: written out, or made when asked for (from a list the library
/// keeps, say).
#[derive(Debug)]
pub enum Text<T: 'static> {
    /// As written.
    Written(&'static str),
    /// As this function makes it.
    Made(fn() -> T),
}

// Copied whatever `T` is: it is only ever a function's result.
impl<T> Clone for Text<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Text<T> {}

impl Text<String> {
    /// The text.
    pub fn get(&self) -> String {
        match self {
            Text::Written(text) => text.to_string(),
            Text::Made(make) => make(),
        }
    }
}

impl Text<&'static str> {
    /// The text.
    pub fn get(&self) -> &'static str {
        match self {
            Text::Written(text) => text,
            Text::Made(make) => make(),
        }
    }
}

/// A setting's command-line flag.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    /// The flag as typed, without its dashes (`listen`).
    pub long: &'static str,
    /// The value's name in help (`IP:PORT`); `None` for a switch (`--segment`).
    pub value: Option<Text<&'static str>>,
    /// Where the flag is accepted (a [`scope`] bit).
    pub scope: u8,
    /// clap's parser of the value (which also lists the possible values in help).
    pub parser: Parser,
    /// A negative number is taken as the value (and refused by the parser, naming the range),
    /// not as an unknown flag.
    pub numeric: bool,
}

/// How a flag's value is parsed.
#[derive(Debug, Clone, Copy)]
pub enum Parser {
    /// By the parser this function makes.
    Made(fn() -> ValueParser),
    /// As a whole number from the first to the second, the range named when refused.
    Whole(u64, u64),
}

impl Parser {
    /// clap's parser.
    pub fn get(self) -> ValueParser {
        match self {
            Parser::Made(make) => make(),
            Parser::Whole(min, max) => ValueParser::new(whole_number(min, max)),
        }
    }
}

/// What every setting declares, whatever the type of its value.
#[derive(Debug, Clone, Copy)]
pub struct Info {
    /// The config file key (`serve.listen`), also its name in `config show`.
    pub key: &'static str,
    /// The key's former spelling, still read with a deprecation note.
    pub old_key: Option<&'static str>,
    /// The environment variable, if any.
    pub env: Option<&'static str>,
    /// The command-line flag, if any.
    pub flag: Option<Flag>,
    /// The config file may hold it (false: the environment only).
    pub in_file: bool,
    /// What a value is, for messages (`IP:PORT`, `timeout in ms`).
    pub what: &'static str,
    /// Help: of the flag, and in `config show --help`.
    pub help: Text<String>,
    /// Never shown: `config show` prints `***`.
    pub secret: bool,
    /// `config show` prints its own row; false for the parts shown in another's row (the
    /// custom layout's keys, shown as `snowflake.layout`).
    pub row: bool,
}

/// A setting's built-in default.
pub enum Default<T: 'static> {
    /// Unset unless given.
    Unset,
    /// Unset unless given; the text says what happens then.
    Described(&'static str),
    /// Unset unless given; the text, made when asked for (from a list the library keeps),
    /// says what happens then.
    DescribedMade(fn() -> String),
    /// This value, shown in help as `config show` shows it.
    Value(fn() -> T),
    /// This value, shown in help as the text (`$XDG_STATE_HOME/leafctl`).
    Computed(&'static str, fn() -> T),
}

/// Refuses a value outside what a setting allows: `(problem, hint)`, the problem naming where
/// the value came from.
pub type Check<T> = fn(&T, &Origin, &Info) -> Option<(String, String)>;

/// One setting, declared once.
pub struct Setting<T: 'static> {
    /// Its names, flag and help.
    pub info: Info,
    /// Its built-in default.
    pub default: Default<T>,
    /// What values it allows, beyond its type.
    pub check: Option<Check<T>>,
    /// How `config show` prints a value when not as [`Value::show`] does (a URL's password
    /// hidden).
    pub show: Option<fn(&T) -> String>,
}

impl Info {
    /// A setting of the config file and nothing else, so far.
    pub const fn new(key: &'static str, what: &'static str, help: &'static str) -> Info {
        Info {
            key,
            old_key: None,
            env: None,
            flag: None,
            in_file: true,
            what,
            help: Text::Written(help),
            secret: false,
            row: true,
        }
    }
    /// Read from this environment variable.
    pub const fn env(mut self, var: &'static str) -> Info {
        self.env = Some(var);
        self
    }
    /// Read from `--LONG VALUE` where `scope` says.
    pub const fn flag(
        mut self,
        long: &'static str,
        value: &'static str,
        scope: u8,
        parser: fn() -> ValueParser,
    ) -> Info {
        self.flag = Some(Flag {
            long,
            value: Some(Text::Written(value)),
            scope,
            parser: Parser::Made(parser),
            numeric: false,
        });
        self
    }
    /// Read from `--LONG N`, a whole number that clap's `parser` bounds.
    pub const fn number_flag(
        self,
        long: &'static str,
        value: &'static str,
        scope: u8,
        parser: fn() -> ValueParser,
    ) -> Info {
        let mut info = self.flag(long, value, scope, parser);
        if let Some(flag) = &mut info.flag {
            flag.numeric = true;
        }
        info
    }
    /// Set to true by the switch `--LONG` where `scope` says.
    pub const fn switch(mut self, long: &'static str, scope: u8) -> Info {
        self.flag = Some(Flag {
            long,
            value: None,
            scope,
            parser: Parser::Made(ValueParser::bool),
            numeric: false,
        });
        self
    }
    /// Its help is made by `help` when asked for.
    pub const fn help_made(mut self, help: fn() -> String) -> Info {
        self.help = Text::Made(help);
        self
    }
    /// Its flag's value name is made by `value` when asked for.
    pub const fn value_made(mut self, value: fn() -> &'static str) -> Info {
        if let Some(flag) = &mut self.flag {
            flag.value = Some(Text::Made(value));
        }
        self
    }
    /// Also read from the config file under its former key, with a deprecation note.
    pub const fn old_key(mut self, key: &'static str) -> Info {
        self.old_key = Some(key);
        self
    }
    /// A secret: `config show` prints `***`.
    pub const fn secret(mut self) -> Info {
        self.secret = true;
        self
    }
    /// Shown in another setting's row of `config show`.
    pub const fn part_of_another_row(mut self) -> Info {
        self.row = false;
        self
    }
    /// The setting, of values of type `T`, with its default.
    pub const fn of<T>(self, default: Default<T>) -> Setting<T> {
        Setting {
            info: self,
            default,
            check: None,
            show: None,
        }
    }

    /// The config key and the environment variable, for a hint (`serve.listen or
    /// LEAF_SERVE_LISTEN`).
    pub fn names(&self) -> String {
        match self.env {
            Some(var) => format!("{} or {var}", self.key),
            None => self.key.to_string(),
        }
    }
}

impl<T> Setting<T> {
    /// Refuses the values `check` refuses.
    pub const fn check(mut self, check: Check<T>) -> Setting<T> {
        self.check = Some(check);
        self
    }
    /// `config show` prints a value as `show` does.
    pub const fn shown_as(mut self, show: fn(&T) -> String) -> Setting<T> {
        self.show = Some(show);
        self
    }
}

/// A type a setting's value can have: given by a flag (clap's parser makes it), the environment
/// (text) or the config file (a TOML value), and shown as text by `config show`.
pub trait Value: Any + Clone + Send + Sync + Sized {
    /// The value of an environment variable.
    fn parse(raw: &str) -> Result<Self, String>;
    /// The value in the config file.
    fn from_toml(value: toml::Value) -> Result<Self, String>;
    /// The value as `config show` prints it.
    fn show(&self) -> String;
}

/// The config file's value as serde reads it, in serde's words when it cannot.
fn from_toml<T: serde::de::DeserializeOwned>(value: toml::Value) -> Result<T, String> {
    value
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())
}

/// A [`Value`] parsed from text by `FromStr`, read from the file by serde and shown by `$show`.
macro_rules! value_by_traits {
    ($($t:ty => $show:expr),* $(,)?) => {$(
        impl Value for $t {
            fn parse(raw: &str) -> Result<Self, String> {
                raw.parse::<$t>().map_err(|e| e.to_string())
            }
            fn from_toml(value: toml::Value) -> Result<Self, String> {
                from_toml(value)
            }
            fn show(&self) -> String {
                let show: fn(&$t) -> String = $show;
                show(self)
            }
        }
    )*};
}
value_by_traits!(
    String => |v| v.clone(),
    u64 => |v| v.to_string(),
    usize => |v| v.to_string(),
    bool => |v| v.to_string(),
    PathBuf => |v| v.display().to_string(),
    SeqStart => |v| format!("{v:?}").to_lowercase(),
    Preset => |v| v.name().to_string(),
);

/// A registry's kind is its name, read back through the library's list of backends.
impl Value for RegistryKind {
    fn parse(raw: &str) -> Result<Self, String> {
        leafctl::registries::kind_named(raw)
    }
    fn from_toml(value: toml::Value) -> Result<Self, String> {
        leafctl::registries::kind_named(&from_toml::<String>(value)?)
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// The file writes the widths as text (`"41,10,12"`), as the flag and the environment do.
impl Value for BitWidths {
    fn parse(raw: &str) -> Result<Self, String> {
        raw.parse::<BitWidths>().map_err(|e| e.to_string())
    }
    fn from_toml(value: toml::Value) -> Result<Self, String> {
        from_toml::<String>(value)?
            .parse()
            .map_err(|e| format!("{e}; write it as \"41,10,12\""))
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// A setting whatever the type of its value, as [`SETTINGS`] lists it.
pub trait Declared: Sync {
    /// Its names, flag and help.
    fn info(&self) -> &Info;
    /// Its default as help shows it; `None` when unset unless given.
    fn default_text(&self) -> Option<String>;
    /// The check of its value in the config file.
    fn file_check(&self) -> fn(&toml::Value) -> Result<(), String>;
}

impl<T: Value> Declared for Setting<T> {
    fn info(&self) -> &Info {
        &self.info
    }
    fn default_text(&self) -> Option<String> {
        match &self.default {
            Default::Unset => None,
            Default::Described(text) | Default::Computed(text, _) => Some(text.to_string()),
            Default::DescribedMade(text) => Some(text()),
            Default::Value(value) => Some(value().show()),
        }
    }
    fn file_check(&self) -> fn(&toml::Value) -> Result<(), String> {
        |value| T::from_toml(value.clone()).map(drop)
    }
}

/// A registry backend's own setting ([`BackendSetting`], declared in the backend's folder) as a
/// declaration of this table: its flag, help and `config show` row made from the backend's
/// words, its value resolved into the settings the backend reads.
pub struct Gathered {
    /// Its names, flag and help, as this table declares every setting's.
    pub info: Info,
    /// The backend's declaration.
    pub setting: &'static BackendSetting,
}

impl Gathered {
    /// The declaration of the backend's `setting`.
    pub fn new(setting: &'static BackendSetting) -> Gathered {
        let (parser, numeric) = match setting.kind {
            SettingKind::Text => (Parser::Made(ValueParser::string), false),
            SettingKind::Path => (Parser::Made(ValueParser::path_buf), false),
            SettingKind::Whole { min, max } => (Parser::Whole(min, max), true),
        };
        let flag = setting.flag.map(|f| Flag {
            long: f.long,
            value: Some(Text::Written(f.value_name)),
            scope: match f.scope {
                FlagScope::Everywhere => scope::GLOBAL,
                FlagScope::Issuing => scope::SNOWFLAKE,
            },
            parser,
            numeric,
        });
        let help = match setting.help {
            SettingHelp::Written(text) => Text::Written(text),
            SettingHelp::Made(make) => Text::Made(make),
        };
        Gathered {
            info: Info {
                key: setting.key,
                old_key: None,
                env: setting.env,
                flag,
                in_file: !setting.env_only,
                what: setting.what,
                help,
                secret: setting.secret,
                row: true,
            },
            setting,
        }
    }

    /// A value as `config show` prints it.
    pub fn show(value: &SettingValue) -> String {
        match value {
            SettingValue::Text(text) => text.clone(),
            SettingValue::Path(path) => path.display().to_string(),
            SettingValue::Whole(n) => n.to_string(),
        }
    }
}

impl Declared for Gathered {
    fn info(&self) -> &Info {
        &self.info
    }
    fn default_text(&self) -> Option<String> {
        match self.setting.default {
            SettingDefault::Unset => None,
            SettingDefault::Described(text) => Some(text.to_string()),
            SettingDefault::Whole(n) => Some(n.to_string()),
        }
    }
    fn file_check(&self) -> fn(&toml::Value) -> Result<(), String> {
        match self.setting.kind {
            SettingKind::Text => |value| String::from_toml(value.clone()).map(drop),
            SettingKind::Path => |value| PathBuf::from_toml(value.clone()).map(drop),
            SettingKind::Whole { .. } => |value| u64::from_toml(value.clone()).map(drop),
        }
    }
}
