//! What is made from the declarations of the settings: the command line's arguments ([`Flags`]),
//! the config file's keys ([`file_keys`]) and the help that lists the settings
//! ([`settings_help`]).

use clap::{Arg, ArgAction};
use leafctl::config::Key;

use super::decl::{Declared, scope};
use super::defs::all;

/// The keys the config file may hold, each with the check of its type (former spellings too).
pub fn file_keys() -> Vec<Key> {
    let mut keys = Vec::new();
    for s in all().iter().filter(|s| s.info().in_file) {
        let check = s.file_check();
        keys.push(Key {
            name: s.info().key,
            check,
        });
        if let Some(old) = s.info().old_key {
            keys.push(Key { name: old, check });
        }
    }
    keys
}

/// The flags of the settings declared for the scopes in the mask `SCOPES` ([`scope`]), added to
/// a command from their declarations. Their values are read by resolution
/// ([`super::Settings::resolve`]), which keeps where each came from, so this holds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags<const SCOPES: u8>;

impl<const SCOPES: u8> clap::FromArgMatches for Flags<SCOPES> {
    fn from_arg_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Flags)
    }
    fn update_from_arg_matches(&mut self, _: &clap::ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl<const SCOPES: u8> clap::Args for Flags<SCOPES> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        // The command's own flags first (`serve`'s before the snowflake ones, those before the
        // layout's), each scope's in the order of [`all`].
        let mut settings = all().to_vec();
        settings.sort_by_key(|s| std::cmp::Reverse(s.info().flag.map_or(0, |f| f.scope)));
        cmd.args(settings.into_iter().filter_map(|s| arg(s, SCOPES)))
    }
    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// A setting's flag as clap's argument (its id the config key), if accepted in `scopes`.
fn arg(s: &dyn Declared, scopes: u8) -> Option<Arg> {
    let info = s.info();
    let flag = info.flag.filter(|f| f.scope & scopes != 0)?;
    let mut help = info.help.get();
    if let Some(var) = info.env {
        help.push_str(&format!(" [env: {var}]"));
    }
    let arg = Arg::new(info.key)
        .long(flag.long)
        .global(flag.scope == scope::GLOBAL);
    Some(match flag.value {
        Some(name) => {
            if let Some(default) = s.default_text() {
                help.push_str(&format!(" [default: {default}]"));
            }
            arg.value_name(name.get())
                .value_parser(flag.parser.get())
                .allow_negative_numbers(flag.numeric)
                .action(ArgAction::Set)
                .help(help)
        }
        None => arg.action(ArgAction::SetTrue).help(help),
    })
}

/// The settings as `config show --help` (and its man page) lists them: a line of names, then
/// one of help. A long default goes with the help, so that the names' line is never wrapped.
pub fn settings_help() -> String {
    let mut text = String::from("Settings (config key: environment variable, flag; default):\n");
    for s in all() {
        let info = s.info();
        let mut from: Vec<String> = info.env.iter().map(|v| v.to_string()).collect();
        from.extend(info.flag.map(|f| format!("--{}", f.long)));
        let (short, long) = match s.default_text() {
            Some(d) if d.len() > 40 => (String::new(), format!(" (default: {d})")),
            Some(d) => (format!("; default {d}"), String::new()),
            None => (String::new(), String::new()),
        };
        let formerly = info
            .old_key
            .map(|old| format!(" (formerly {old})"))
            .unwrap_or_default();
        text.push_str(&format!(
            "  {:<28} {}{short}\n      {}{long}{formerly}\n",
            info.key,
            from.join(", "),
            info.help.get(),
        ));
    }
    text
}
