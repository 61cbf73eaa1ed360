//! Where the ID key of opaque tags comes from (issue 48): the file of `--key-file`,
//! `LEAF_ID_KEY_FILE` or `ids.key_file`, else systemd's credential. Never the command line or
//! the table: the table holds only the key's check value.

use std::path::PathBuf;

use leafctl::idformat::opaque::IdKey;

use super::Settings;
use super::password::warn_if_readable_by_others;
use super::resolve::env_var;
use crate::cli::error::usage;

/// The systemd credential (`LoadCredential=leaf-id-key:FILE`) read when no key file is given.
pub const ID_KEY_CREDENTIAL: &str = "leaf-id-key";

impl Settings {
    /// The ID key, read from its file when one is given (else systemd's credential
    /// [`ID_KEY_CREDENTIAL`], if there); none when neither is. Read only by the commands that
    /// meet an opaque tag, so a plain deployment never needs one.
    pub fn id_key(&self) -> anyhow::Result<Option<IdKey>> {
        let path = match &self.values.id_key_file {
            Some(file) => file.value.clone(),
            None => match env_var("CREDENTIALS_DIRECTORY") {
                Some(dir) if PathBuf::from(&dir).join(ID_KEY_CREDENTIAL).is_file() => {
                    PathBuf::from(dir).join(ID_KEY_CREDENTIAL)
                }
                _ => return Ok(None),
            },
        };
        let key = IdKey::from_file(&path).map_err(|e| {
            usage(
                e.to_string(),
                "give a file of 64 hex digits that this user may read (--key-file, LEAF_ID_KEY_FILE or ids.key_file)",
            )
        })?;
        warn_if_readable_by_others(&path, "the ID key", "a file only this user can read");
        Ok(Some(key))
    }
}
