//! The databases leafctl keeps its tables in, one folder each, as cargo's registry sources are:
//! [`mysql`] (MySQL and MariaDB), [`postgres`] and [`sqlite`]. Each holds its URL reading,
//! connection, TLS, errors, DDL, segment store (an [`AllocStore`]) and, where it has one, its
//! worker-id registry (NotFound9's `leaf_workerid_alloc`).
//!
//! What the databases share is written once here: the parsed address ([`DbAddress`], the one
//! place a URL becomes a backend), the choice of host among a URL's list and the failover
//! between them ([`FAILBACK_AFTER`]), the timeouts, the redaction of passwords
//! ([`redact_url`]) and the rules of the worker-id table ([`TableError`]).
//!
//! ## Following one database
//!
//! A database with a worker-id registry (MySQL, PostgreSQL) has the same files: `mod.rs` (the
//! folder's map and its failures), `url.rs` (its URL, host list and TLS options), `conn.rs` (a
//! connection whose every statement is bounded), `store.rs` (the segment store), `registry.rs`
//! (listing and reclaiming worker ids, the session) and `lease_store.rs` (taking and holding one,
//! by the table's rules in `table_registry.rs`). With this file and `table_registry.rs`, that is
//! all the database does: eight files, none of them another database's. SQLite, without a
//! registry, is one file.

pub mod jdbc;
pub mod mysql;
pub mod postgres;
pub mod regions;
pub mod sqlite;
pub(crate) mod table_registry;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use self::mysql::{MysqlOptions, MysqlRegistry};
use self::postgres::{PostgresOptions, PostgresRegistry};
use crate::segment::{AllocStore, SegmentError};
use crate::worker::{Registry, RegistryBackend, RegistryKind, RegistrySettings, WorkerError};
pub use table_registry::TableError;

/// One database leafctl can keep its tables in: the one list of them ([`DATABASES`]), which a
/// parsed URL ([`DbAddress`]) becomes a backend through, and help texts, messages and docs take
/// their lists from. Adding a database is a folder and an entry here.
#[derive(Debug, Clone, Copy)]
pub struct Database {
    /// Its name in messages (`PostgreSQL`).
    pub name: &'static str,
    /// The URL schemes that name it (`postgres`, `postgresql`).
    pub schemes: &'static [&'static str],
    /// The form of its URL, for messages (`postgres://user@host:port/database`).
    pub url_form: &'static str,
    /// A URL of one host for help's examples (`postgres://leaf@pg:5432/leaf`).
    pub example_url: &'static str,
    /// A URL of several hosts where the database's own rule picks one, for help's examples,
    /// with what it picks (`the writable host`).
    pub example_hosts: Option<(&'static str, &'static str)>,
    /// The segment table's DDL (`leafctl db init --print`).
    pub segment_ddl: &'static [&'static str],
    /// The region mark's DDL ([`crate::segment::REGION_TABLE`]; `db init --print` with a region).
    pub region_ddl: &'static str,
    /// Opens its segment store from the URL (`password` overrides one in it).
    open_store: OpenStore,
    /// What to do about a TLS failure, given its detail ([`SegmentError::TlsRefused`]).
    tls_advice: fn(&str) -> &'static str,
    /// How Leaf's JDBC URLs of this database become its URL (`config import-leaf`).
    pub(crate) jdbc: Option<jdbc::Jdbc>,
    /// Its worker-id registry, if it keeps worker ids (`leaf_workerid_alloc`).
    pub registry: Option<TableRegistry>,
}

/// How a database's segment store is opened: URL, password, mode.
type OpenStore = fn(&str, Option<&str>, OpenMode) -> Result<Box<dyn AllocStore>, SegmentError>;

/// A database's worker-id registry: NotFound9's `leaf_workerid_alloc` in its types.
#[derive(Debug, Clone, Copy)]
pub struct TableRegistry {
    /// The registry as the list of registries takes it (`crate::registries`): its kind
    /// (`--registry mysql`), store, flag and opening.
    pub backend: RegistryBackend,
    /// The table's DDL (`leafctl db init --print`).
    pub ddl: &'static str,
    /// What keeps a row live while its holder runs (`its named lock`), for help.
    pub held_by: &'static str,
    /// The `leaf.snowflake.mode` of NotFound9's fork that picks it, if the fork has one.
    pub leaf_mode: Option<&'static str>,
    /// Creates the table when missing (`leafctl db init`).
    init: fn(&str, Option<&str>) -> Result<(), WorkerError>,
}

/// Every database, in the order messages list them.
pub const DATABASES: [Database; 3] = [
    Database {
        name: "MySQL/MariaDB",
        schemes: &["mysql", "mariadb"],
        url_form: "mysql://user@host:port/database",
        example_url: "mysql://leaf@db:3306/leaf",
        example_hosts: None,
        segment_ddl: mysql::MYSQL_DDL,
        region_ddl: mysql::MYSQL_REGION_DDL,
        open_store: |url, pw, mode| with_schema(mysql::MysqlStore::open(url, pw)?, mode),
        tls_advice: mysql::tls_advice,
        jdbc: Some(mysql::JDBC),
        registry: Some(TableRegistry {
            backend: RegistryBackend {
                kind: mysql::REGISTRY_KIND,
                store: Some("MySQL"),
                flag: "--registry mysql",
                implied_by: None,
                settings: table_registry::SETTINGS,
                open: |s| open_with(s, MysqlOptions::from_settings, MysqlRegistry::new),
            },
            ddl: mysql::WORKERID_DDL,
            held_by: "its named lock",
            leaf_mode: Some("mysql"),
            init: mysql::init_schema,
        }),
    },
    Database {
        name: "PostgreSQL",
        schemes: &["postgres", "postgresql"],
        url_form: "postgres://user@host:port/database",
        example_url: "postgres://leaf@pg:5432/leaf",
        example_hosts: Some((
            "postgres://leaf@pg1:5432,pg2:5432/leaf",
            "the writable host",
        )),
        segment_ddl: postgres::POSTGRES_DDL,
        region_ddl: postgres::POSTGRES_REGION_DDL,
        open_store: |url, pw, mode| with_schema(postgres::PostgresStore::open(url, pw)?, mode),
        tls_advice: postgres::tls_advice,
        jdbc: Some(postgres::JDBC),
        registry: Some(TableRegistry {
            backend: RegistryBackend {
                kind: postgres::REGISTRY_KIND,
                store: Some("PostgreSQL"),
                flag: "--registry postgres",
                implied_by: None,
                settings: table_registry::SETTINGS,
                open: |s| open_with(s, PostgresOptions::from_settings, PostgresRegistry::new),
            },
            ddl: postgres::WORKERID_DDL,
            held_by: "its advisory lock",
            leaf_mode: None,
            init: postgres::init_schema,
        }),
    },
    Database {
        name: "SQLite",
        schemes: &["sqlite"],
        url_form: "sqlite://PATH",
        example_url: "sqlite:///var/lib/leaf/leaf.db",
        example_hosts: None,
        segment_ddl: sqlite::SQLITE_DDL,
        region_ddl: sqlite::SQLITE_REGION_DDL,
        open_store: sqlite::open_store,
        tls_advice: |_| "",
        jdbc: None,
        registry: None,
    },
];

/// A store's `Debug`: its type and the database it is on (`db`), never its connections or
/// password. What each database's store writes its `Debug` with.
fn debug_store(f: &mut std::fmt::Formatter<'_>, store: &str, db: &str) -> std::fmt::Result {
    f.debug_struct(store).field("db", &db).finish()
}

/// A network database URL split for its parser: the text after its scheme (the first of
/// `schemes` it starts with, `mysql` for `mysql://`) up to the query, and the query. `Err(form)`
/// (what such a URL looks like) when it starts with none of them.
pub(crate) fn split_url<'a>(
    url: &'a str,
    schemes: &[&str],
    form: &'static str,
) -> Result<(&'a str, Option<&'a str>), &'static str> {
    let rest = schemes
        .iter()
        .find_map(|s| url.strip_prefix(s)?.strip_prefix("://"))
        .ok_or(form)?;
    Ok(rest
        .split_once('?')
        .map_or((rest, None), |(b, q)| (b, Some(q))))
}

/// `store` as a boxed store, its tables created first with [`OpenMode::CreateSchema`].
fn with_schema(
    store: impl AllocStore + 'static,
    mode: OpenMode,
) -> Result<Box<dyn AllocStore>, SegmentError> {
    if mode == OpenMode::CreateSchema {
        store.init_schema()?;
    }
    Ok(Box::new(store))
}

/// A database's worker-id registry: `new` on the options `options` reads from `settings`.
fn open_with<O, R: Registry + 'static>(
    settings: &RegistrySettings,
    options: fn(&RegistrySettings) -> Result<O, WorkerError>,
    new: fn(O) -> R,
) -> Result<Box<dyn Registry>, WorkerError> {
    Ok(Box::new(new(options(settings)?)))
}

/// The database registry of `kind` (`mysql`, `postgres`), if `kind` is one.
pub(crate) fn table_registry(kind: RegistryKind) -> Option<TableRegistry> {
    DATABASES
        .iter()
        .filter_map(|d| d.registry)
        .find(|r| r.backend.kind == kind)
}

impl Database {
    /// What to do about a TLS failure of this database, given the failure's detail.
    pub fn tls_advice(&self, detail: &str) -> &'static str {
        (self.tls_advice)(detail)
    }
}

/// The databases that keep worker ids, each with its registry, in the order of [`DATABASES`].
pub fn registry_databases() -> impl Iterator<Item = (Database, TableRegistry)> {
    DATABASES
        .into_iter()
        .filter_map(|d| d.registry.map(|r| (d, r)))
}

/// `MySQL/MariaDB, PostgreSQL or SQLite`.
pub fn database_names() -> String {
    crate::text::or_list(DATABASES.iter().map(|d| d.name))
}

/// `mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH`.
pub fn url_forms() -> String {
    url_forms_after("")
}

/// [`url_forms`], each after `prefix` (`--db `).
pub fn url_forms_after(prefix: &str) -> String {
    crate::text::or_list(DATABASES.iter().map(|d| format!("{prefix}{}", d.url_form)))
}

/// How long opening a TCP connection may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one read or write on a connection may stall before the server counts as gone.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a statement waits for a row lock another session holds (`innodb_lock_wait_timeout`,
/// PostgreSQL's `lock_timeout`, set on every connection): shorter than [`IO_TIMEOUT`], so a
/// locked row ends the statement with the server's clear error and the connection stays usable,
/// rather than a read timing out.
pub const LOCK_WAIT_TIMEOUT_S: u64 = 3;

/// The worker registry connection's default wait timeout (MySQL's `wait_timeout`, PostgreSQL's
/// `idle_session_timeout`): ten of its 3 s reports missed, so a live holder never comes near it.
pub const DEFAULT_REGISTRY_WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// The shortest registry wait timeout used (a shorter one is raised to it; the CLI refuses it):
/// two of the registry's 3 s reports, so a live holder's connection is never dropped for a
/// single late report.
pub const MIN_REGISTRY_WAIT_TIMEOUT: Duration = Duration::from_secs(6);

/// The longest registry wait timeout (s) the CLI takes: MySQL's own bound on `wait_timeout`
/// (one year), applied to every database.
pub const MAX_REGISTRY_WAIT_TIMEOUT_S: u64 = 31_536_000;

/// Hides the passwords of a URL (`user:password@`, a `password` query parameter) for messages.
pub fn redact_url(url: &str) -> String {
    crate::text::url_hiding_password(url, Some("***"))
}

/// `url` with its password left out (`scheme://user@host/...`), for a command to suggest: the
/// password comes from `LEAF_DB_PASSWORD` or a password file, never from a printed line.
pub fn url_without_password(url: &str) -> String {
    crate::text::url_hiding_password(url, None)
}

/// Whether a URL carries a password (in its user part, or a `password` query parameter): it is
/// then the URL's own, and a password given beside it (`LEAF_DB_PASSWORD`) does not apply to it
/// unless it is the `--db` URL.
pub fn url_has_password(url: &str) -> bool {
    crate::text::url_password(url).is_some()
}

/// Whether an `open_store` may create the database file and schema (leafctl's own embedded
/// default, or `db init`) or must find them in place (every explicit URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// The database and its table must exist.
    Existing,
    /// Create the SQLite file and the table when missing (MySQL: the table).
    CreateSchema,
}

/// Opens the store a URL names ([`DbAddress`]): `mysql://user@host:port/db`,
/// `postgres://user@host:port/db` or `sqlite://PATH`.
///
/// `password` (from `LEAF_DB_PASSWORD` or the config file) overrides one in the URL.
pub fn open_store(
    url: &str,
    password: Option<&str>,
    mode: OpenMode,
) -> Result<Box<dyn AllocStore>, SegmentError> {
    DbAddress::parse(url)?.open_store(password, mode)
}

// ---- The address: a URL read once into the database it names, the one place a URL becomes a
// backend (every store, the database registries and `db init` start from a `DbAddress`).

/// The database a `--db` URL names: `mysql://user@host:port[,host:port...]/database[?tls=true]`
/// (also `mariadb://`), `postgres://user@host:port[,host:port...]/database[?sslmode=...]` (also
/// `postgresql://`, libpq's form) or `sqlite://PATH`.
#[derive(Debug, Clone)]
pub struct DbAddress {
    database: Database,
    /// The URL as given (it may hold a password: never print it, see [`DbAddress::redacted`]).
    url: String,
}

impl DbAddress {
    /// Reads a URL; anything but the schemes of [`DATABASES`] is refused, naming what is
    /// expected.
    pub fn parse(url: &str) -> Result<DbAddress, SegmentError> {
        let named = |d: &&Database| {
            d.schemes.iter().any(|s| {
                url.strip_prefix(s)
                    .is_some_and(|rest| rest.starts_with("://"))
            })
        };
        match DATABASES.iter().find(named) {
            Some(database) => Ok(DbAddress {
                database: *database,
                url: url.to_string(),
            }),
            None => Err(SegmentError::InvalidUrl {
                url: redact_url(url),
                reason: format!("expected {}", url_forms()),
            }),
        }
    }

    /// Which database of [`DATABASES`] it is.
    pub fn database(&self) -> Database {
        self.database
    }

    /// The URL with any password removed, for messages.
    pub fn redacted(&self) -> String {
        redact_url(&self.url)
    }

    /// The segment table's DDL for this database (`leafctl db init --print`).
    pub fn segment_ddl(&self) -> &'static [&'static str] {
        self.database.segment_ddl
    }

    /// Opens the segment store of a deployment without regions: [`DbAddress::open_in_region`]
    /// with none, so a database recorded for a region is refused.
    pub fn open_store(
        &self,
        password: Option<&str>,
        mode: OpenMode,
    ) -> Result<Box<dyn AllocStore>, SegmentError> {
        self.open_in_region(password, mode, None)
    }

    /// Opens the segment store without checking the region recorded in it, and without confining
    /// its claims: to read the mark and the rows of any region's database (`leafctl region
    /// show`, `check`, `add`'s old database). Never issue IDs from it.
    pub fn open_for_inspection(
        &self,
        password: Option<&str>,
    ) -> Result<Box<dyn AllocStore>, SegmentError> {
        (self.database.open_store)(&self.url, password, OpenMode::Existing)
    }

    /// The registry that can keep worker ids in this database, if any.
    pub fn registry(&self) -> Option<RegistryKind> {
        self.database.registry.map(|r| r.backend.kind)
    }

    /// Creates `leaf_workerid_alloc` when missing (`leafctl db init`); nothing for a database
    /// that keeps no worker ids.
    pub fn init_registry_table(&self, password: Option<&str>) -> Result<(), WorkerError> {
        match self.database.registry {
            Some(r) => (r.init)(&self.url, password),
            None => Ok(()),
        }
    }
}

/// The registry that can keep its worker ids in the database `url` names: MySQL's or
/// PostgreSQL's `leaf_workerid_alloc`; `None` for SQLite or a URL that is not a database's.
pub fn db_registry(url: &str) -> Option<RegistryKind> {
    DbAddress::parse(url).ok()?.registry()
}

/// The DDL of `leaf_workerid_alloc` for a database registry (`leafctl db init --print`).
pub fn table_ddl(kind: RegistryKind) -> Option<&'static str> {
    table_registry(kind).map(|r| r.ddl)
}

/// Creates `leaf_workerid_alloc` when missing in the database `url` names (`leafctl db init`);
/// nothing for a database that keeps no worker ids.
pub fn init_table(url: &str, password: Option<&str>) -> Result<(), WorkerError> {
    match DbAddress::parse(url) {
        Ok(address) => address.init_registry_table(password),
        Err(_) => Ok(()),
    }
}

impl std::str::FromStr for DbAddress {
    type Err = SegmentError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DbAddress::parse(s)
    }
}

// ---- Hosts: which host of a URL's host list a store uses, written once for every database:
// the first that answers, the next when the one in use fails, the earlier ones again after a
// while.

/// How long a store stays on a later host of its list before trying the earlier ones again
/// (a restarted node is used again within this).
pub const FAILBACK_AFTER: Duration = Duration::from_secs(10);

/// The host in use among `len`, with its pool `P` (anything cheap to clone that reaches it).
pub(crate) struct HostChoice<P> {
    len: usize,
    active: Mutex<Active<P>>,
    /// The store's name, for the log.
    name: String,
}

struct Active<P> {
    host: usize,
    pool: P,
    /// When it was chosen, or when earlier hosts were last tried again.
    since: Instant,
}

/// Connects to the first of `len` hosts that `connect` reaches, trying them in the list's order
/// starting at `from` (wrapping around): the host's index with what `connect` made, or the last
/// error (`None` only for an empty list). Every way a database picks a host starts here.
pub(crate) fn first_answering<P, E>(
    len: usize,
    from: usize,
    mut connect: impl FnMut(usize) -> Result<P, E>,
) -> Result<(usize, P), Option<E>> {
    let mut last = None;
    for k in 0..len {
        let host = (from + k) % len;
        match connect(host) {
            Ok(p) => return Ok((host, p)),
            Err(e) => last = Some(e),
        }
    }
    Err(last)
}

impl<P: Clone> HostChoice<P> {
    /// Opens the first of `len` hosts that `connect` reaches; the last error if none does
    /// (`None` only for an empty list).
    pub fn open<E>(
        name: &str,
        len: usize,
        connect: impl FnMut(usize) -> Result<P, E>,
    ) -> Result<HostChoice<P>, Option<E>> {
        let (host, pool) = first_answering(len, 0, connect)?;
        Ok(HostChoice {
            len,
            active: Mutex::new(Active {
                host,
                pool,
                since: Instant::now(),
            }),
            name: name.to_string(),
        })
    }

    /// How many hosts the list has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The host in use and its pool.
    pub fn current(&self) -> (usize, P) {
        let a = self.active.lock().unwrap_or_else(|p| p.into_inner());
        (a.host, a.pool.clone())
    }

    /// Moves from host `failed` (if still in use) to the next host of the list that `connect`
    /// reaches; the error of the last one tried if none does. Nothing to do with one host, or
    /// when another caller moved on already.
    pub fn advance<E>(
        &self,
        failed: usize,
        why: &dyn std::fmt::Display,
        mut connect: impl FnMut(usize) -> Result<P, E>,
    ) -> Result<(), E> {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if active.host != failed || self.len == 1 {
            return Ok(());
        }
        // The other hosts, from the one after the failed one round to the one before it.
        let others = self.len - 1;
        match first_answering(others, 0, |k| connect((failed + 1 + k) % self.len)) {
            Ok((k, pool)) => {
                let host = (failed + 1 + k) % self.len;
                tracing::warn!(
                    "{}: host {} failed ({why}); using host {} of the list",
                    self.name,
                    failed + 1,
                    host + 1
                );
                *active = Active {
                    host,
                    pool,
                    since: Instant::now(),
                };
                Ok(())
            }
            Err(Some(e)) => Err(e),
            Err(None) => Ok(()),
        }
    }

    /// On a later host for [`FAILBACK_AFTER`]: tries the earlier ones, and moves back to the
    /// first that `connect` reaches.
    pub fn fail_back<E>(&self, connect: impl FnMut(usize) -> Result<P, E>) {
        let host = {
            let mut a = self.active.lock().unwrap_or_else(|p| p.into_inner());
            if a.host == 0 || a.since.elapsed() < FAILBACK_AFTER {
                return;
            }
            a.since = Instant::now();
            a.host
        };
        if let Ok((earlier, pool)) = first_answering(host, 0, connect) {
            let mut a = self.active.lock().unwrap_or_else(|p| p.into_inner());
            if a.host == host {
                tracing::info!(
                    "{}: host {} answers again; using it",
                    self.name,
                    earlier + 1
                );
                *a = Active {
                    host: earlier,
                    pool,
                    since: Instant::now(),
                };
            }
        }
    }
}

// ---- SQL the databases share: one page of a listing.

/// A page query: `select` narrowed to tags after `after` and matching `like`, in tag order, at
/// most `limit` rows; the values to bind in order. The same SQL on MySQL, SQLite and PostgreSQL
/// (positional `?` is turned into `$n` by stores that need it).
pub(crate) fn page_query(
    select: &str,
    after: Option<&str>,
    like: Option<&str>,
    limit: usize,
) -> (String, Vec<PageParam>) {
    let mut sql = String::from(select);
    let mut params = Vec::new();
    let mut word = " WHERE ";
    if let Some(after) = after {
        sql.push_str(word);
        sql.push_str("biz_tag > ?");
        params.push(PageParam::Text(after.to_string()));
        word = " AND ";
    }
    if let Some(like) = like {
        sql.push_str(word);
        sql.push_str("biz_tag LIKE ? ESCAPE '");
        sql.push(crate::segment::store::LIKE_ESCAPE);
        sql.push('\'');
        params.push(PageParam::Text(like.to_string()));
    }
    sql.push_str(" ORDER BY biz_tag LIMIT ?");
    params.push(PageParam::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
    (sql, params)
}

/// A value bound to a [`page_query`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PageParam {
    Text(String),
    Int(i64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_redacted() {
        assert_eq!(redact_url("mysql://u:p@h:1/d"), "mysql://u:***@h:1/d");
        assert_eq!(redact_url("mysql://u:p@x@h/d"), "mysql://u:***@h/d");
        assert_eq!(redact_url("mysql://u@h/d"), "mysql://u@h/d");
        assert_eq!(redact_url("sqlite:///tmp/a.db"), "sqlite:///tmp/a.db");
    }

    /// Every database of the list is what its schemes parse to, keeps worker ids exactly when
    /// a registry can use it, and is named wherever leafctl lists the databases in words.
    #[test]
    fn the_list_of_databases_is_the_one_backends_and_docs_follow() {
        let lib = include_str!("../lib.rs");
        let description = crate::text::package_description();
        for db in DATABASES {
            for scheme in db.schemes {
                let url = format!("{scheme}://u@h/d");
                let address = DbAddress::parse(&url).unwrap();
                assert_eq!(address.database().name, db.name, "{url}");
                assert_eq!(
                    db_registry(&url),
                    db.registry.map(|r| r.backend.kind),
                    "{url}"
                );
            }
            assert!(lib.contains(db.name), "lib.rs docs lack {}", db.name);
            assert!(
                description.contains(db.name),
                "the package description lacks {}",
                db.name
            );
        }
        assert_eq!(
            url_forms(),
            "mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH"
        );
    }

    #[test]
    fn unknown_schemes_are_rejected() {
        for url in ["ftp://x/y", "redis://x:6379/0", "x/y", "mysqlx://leaf@x/y"] {
            assert!(
                matches!(
                    open_store(url, None, OpenMode::Existing),
                    Err(SegmentError::InvalidUrl { .. })
                ),
                "{url}"
            );
        }
    }

    #[test]
    fn a_postgres_url_without_a_user_is_refused_before_connecting() {
        match open_store("postgres://x/y", None, OpenMode::Existing) {
            Err(SegmentError::InvalidUrl { reason, .. }) => {
                assert!(reason.contains("no user"), "{reason}")
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
}

/// Parser fuzzing (issue 8): store URLs, and the MySQL and PostgreSQL URL parsers (one test of
/// each property over both). `PROPTEST_CASES=100000 cargo test --release --lib fuzz_` for a long
/// run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// The network databases' URL parsers, by scheme, each reduced to the name it gives the
    /// target (the one part of a parsed URL that messages show).
    type Parse = fn(&str, Option<&str>) -> Result<String, String>;
    const PARSERS: [(&str, Parse); 2] = [
        ("mysql", |url, pw| {
            mysql::url::parse(url, pw).map(|t| t.name)
        }),
        ("postgres", |url, pw| {
            postgres::url::parse(url, pw).map(|t| t.name)
        }),
    ];

    proptest! {
        #[test]
        fn fuzz_arbitrary_urls_never_panic(url in any::<String>(), tail in "[ -~]{0,60}") {
            for (scheme, parse) in PARSERS {
                let _ = parse(&url, None);
                let _ = parse(&format!("{scheme}://{tail}"), Some("pw"));
            }
            let _ = crate::text::url_password(&url);
            let _ = crate::text::scrub(url.clone(), Some(&tail));
            let _ = postgres::conn::numbered(&url);
        }

        /// Each parser with its own alphabet of hosts and parameters.
        #[test]
        fn fuzz_the_password_is_never_in_an_error_or_name(
            user in "[a-z]{1,8}",
            password in "[A-Z][A-Za-z0-9]{7,15}",
            db in "[a-z0-9]{0,8}",
            given in any::<bool>(),
            mysql_host in "[a-z0-9.]{0,12}(:[0-9]{0,6})?",
            mysql_query in "[a-z_=&%0-9?]{0,30}",
            postgres_host in "[a-z0-9.,:\\[\\]]{0,16}",
            postgres_query in "[a-z_=&%0-9?-]{0,30}",
        ) {
            let over = given.then_some(password.as_str());
            let hosts = [(mysql_host, mysql_query), (postgres_host, postgres_query)];
            for ((scheme, parse), (host, query)) in PARSERS.into_iter().zip(hosts) {
                let url = format!("{scheme}://{user}:{password}@{host}/{db}?{query}");
                match parse(&url, over) {
                    Ok(name) => prop_assert!(!name.contains(&password), "{}", name),
                    Err(e) => prop_assert!(!e.contains(&password), "{:?} -> {}", url, e),
                }
            }
        }

        #[test]
        fn fuzz_unknown_url_schemes_are_refused_and_redacted(
            scheme in "[a-z]{0,8}",
            user in "[a-z]{1,6}",
            password in "[A-Z][A-Za-z0-9]{7,12}",
            rest in "[a-z0-9./:]{0,20}",
        ) {
            prop_assume!(
                !["mysql", "mariadb", "postgres", "postgresql", "sqlite"].contains(&scheme.as_str())
            );
            let url = format!("{scheme}://{user}:{password}@{rest}");
            let r = open_store(&url, None, OpenMode::Existing);
            match r {
                Err(SegmentError::InvalidUrl { url, .. }) => {
                    prop_assert!(!url.contains(&password), "{}", url)
                }
                other => prop_assert!(false, "{:?}", other.err()),
            }
            prop_assert!(!redact_url(&url).contains(&password));
        }
    }
}
