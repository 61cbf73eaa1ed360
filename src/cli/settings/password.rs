//! Where the database password comes from: the environment or the config file, a file named
//! there, or systemd's credential; and the warning about a readable file that holds a secret.

use std::path::PathBuf;

use leafctl::config::{Origin, Resolved};

use super::defs::{DB_PASSWORD, DB_PASSWORD_FILE};
use super::resolve::env_var;
use crate::cli::error::usage;

/// The systemd credential (`LoadCredential=leaf-db-password:FILE`) read when no other password
/// is given.
pub const DB_PASSWORD_CREDENTIAL: &str = "leaf-db-password";

/// The database password: `LEAF_DB_PASSWORD`/`db.password`, or the file of
/// `LEAF_DB_PASSWORD_FILE`/`db.password_file` (the stronger origin wins; the same origin twice is
/// refused as ambiguous), else systemd's credential [`DB_PASSWORD_CREDENTIAL`]. A file is read
/// whole; one trailing line break is dropped; an empty or unreadable file is a usage error.
pub(super) fn password_from_file(
    given: Option<Resolved<String>>,
    file: Option<Resolved<PathBuf>>,
) -> anyhow::Result<Option<Resolved<String>>> {
    let (path, origin) = match (given, file) {
        (Some(p), Some(f)) if p.origin.rank() == f.origin.rank() => {
            return Err(usage(
                format!(
                    "the database password is given twice ({} and {}, both from {})",
                    DB_PASSWORD.info.key, DB_PASSWORD_FILE.info.key, f.origin
                ),
                "keep one: LEAF_DB_PASSWORD/db.password or LEAF_DB_PASSWORD_FILE/db.password_file",
            ));
        }
        (Some(p), Some(f)) if p.origin.rank() > f.origin.rank() => return Ok(Some(p)),
        (Some(p), None) => return Ok(Some(p)),
        (_, Some(f)) => (f.value, f.origin),
        (None, None) => match env_var("CREDENTIALS_DIRECTORY") {
            Some(dir) => {
                let path = PathBuf::from(dir).join(DB_PASSWORD_CREDENTIAL);
                if !path.is_file() {
                    return Ok(None);
                }
                (
                    path,
                    Origin::Env(format!("CREDENTIALS_DIRECTORY ({DB_PASSWORD_CREDENTIAL})")),
                )
            }
            None => return Ok(None),
        },
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        usage(
            format!(
                "cannot read the database password file {} (from {origin}): {e}",
                path.display()
            ),
            "check the path and that this user may read it (LEAF_DB_PASSWORD_FILE or db.password_file)",
        )
    })?;
    let value = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text)
        .to_string();
    if value.is_empty() {
        return Err(usage(
            format!("the database password file {} is empty", path.display()),
            "write the password into it (one line), or leave LEAF_DB_PASSWORD_FILE/db.password_file unset",
        ));
    }
    warn_if_readable_by_others(
        &path,
        "the database password",
        "a file only this user can read",
    );
    Ok(Some(Resolved { value, origin }))
}

/// Where the database password in use came from (`password`, else a password in the `url`), in
/// words for a hint (`None`: none given).
pub fn source(password: Option<&Resolved<String>>, url: &str) -> Option<String> {
    match password {
        Some(p) => Some(match &p.origin {
            Origin::Env(var) if var.starts_with("CREDENTIALS_DIRECTORY") => {
                format!("systemd's credential {DB_PASSWORD_CREDENTIAL}")
            }
            Origin::Env(var) => var.clone(),
            Origin::File => "the config file".to_string(),
            other => other.to_string(),
        }),
        None if leafctl::db::url_has_password(url) => {
            Some("the URL in --db/LEAF_DB/db.url".to_string())
        }
        None => None,
    }
}

/// Warns when a config file that holds a secret can be read by other users.
pub(super) fn warn_if_readable_by_others(path: &std::path::Path, what: &str, var: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o044 != 0
    {
        tracing::warn!(
            "{} holds {what} and is readable by other users; run `chmod 600 {}` or use {var}",
            path.display(),
            path.display()
        );
    }
}
