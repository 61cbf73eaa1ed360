//! A database URL, read once into the kind of database it names: every store, the MySQL worker
//! registry and `db init` start from a [`DbAddress`] instead of looking at the URL's scheme
//! themselves.

use std::path::PathBuf;

use super::mysql::{MYSQL_DDL, MysqlStore};
use super::postgres::{POSTGRES_DDL, PostgresStore};
use super::sqlite::{SQLITE_DDL, SqliteStore};
use super::{OpenMode, redact_url};
use crate::segment::{AllocStore, SegmentError};

/// The database a `--db` URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbAddress {
    /// `mysql://user@host:port[,host:port...]/database[?tls=true]` (also `mariadb://`): MySQL
    /// or MariaDB, one or several hosts.
    Mysql {
        /// The URL as given (it may hold a password: never print it, see [`DbAddress::redacted`]).
        url: String,
    },
    /// `postgres://user@host:port[,host:port...]/database[?sslmode=...]` (also
    /// `postgresql://`), libpq's URL form: PostgreSQL, one or several hosts.
    Postgres {
        /// The URL as given (it may hold a password: never print it).
        url: String,
    },
    /// `sqlite://PATH`: an SQLite file.
    Sqlite {
        /// The file.
        path: PathBuf,
    },
}

impl DbAddress {
    /// Reads a URL; anything but `mysql://`, `mariadb://`, `postgres://`, `postgresql://` and
    /// `sqlite://` is refused, naming what is expected.
    pub fn parse(url: &str) -> Result<DbAddress, SegmentError> {
        if let Some(path) = url.strip_prefix("sqlite://") {
            return Ok(DbAddress::Sqlite { path: path.into() });
        }
        if url.starts_with("mysql://") || url.starts_with("mariadb://") {
            return Ok(DbAddress::Mysql {
                url: url.to_string(),
            });
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DbAddress::Postgres {
                url: url.to_string(),
            });
        }
        Err(SegmentError::InvalidUrl {
            url: redact_url(url),
            reason: format!("expected {}", super::url_forms()),
        })
    }

    /// Which database of [`super::DATABASES`] it is.
    pub fn database(&self) -> super::Database {
        let [mysql, postgres, sqlite] = super::DATABASES;
        match self {
            DbAddress::Mysql { .. } => mysql,
            DbAddress::Postgres { .. } => postgres,
            DbAddress::Sqlite { .. } => sqlite,
        }
    }

    /// The URL with any password removed, for messages.
    pub fn redacted(&self) -> String {
        match self {
            DbAddress::Mysql { url } | DbAddress::Postgres { url } => redact_url(url),
            DbAddress::Sqlite { path } => format!("sqlite://{}", path.display()),
        }
    }

    /// The segment table's DDL for this database (`leafctl db init --print`).
    pub fn segment_ddl(&self) -> &'static [&'static str] {
        match self {
            DbAddress::Mysql { .. } => MYSQL_DDL,
            DbAddress::Postgres { .. } => POSTGRES_DDL,
            DbAddress::Sqlite { .. } => SQLITE_DDL,
        }
    }

    /// Opens the segment store. `password` (from `LEAF_DB_PASSWORD` or the config file)
    /// overrides one in the URL.
    pub fn open_store(
        &self,
        password: Option<&str>,
        mode: OpenMode,
    ) -> Result<Box<dyn AllocStore>, SegmentError> {
        Ok(match self {
            DbAddress::Sqlite { path } => Box::new(SqliteStore::open(path, mode)?),
            DbAddress::Mysql { url } => {
                let store = MysqlStore::open(url, password)?;
                if mode == OpenMode::CreateSchema {
                    store.init_schema()?;
                }
                Box::new(store)
            }
            DbAddress::Postgres { url } => {
                let store = PostgresStore::open(url, password)?;
                if mode == OpenMode::CreateSchema {
                    store.init_schema()?;
                }
                Box::new(store)
            }
        })
    }
}

impl std::str::FromStr for DbAddress {
    type Err = SegmentError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DbAddress::parse(s)
    }
}
