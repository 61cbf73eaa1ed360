//! The model of the segment command surface (`support::model`, issue 45) on a real MariaDB and a
//! real PostgreSQL: the same operations and invariants as the quick loop's in-memory and SQLite
//! runs, over the stores' own SQL (claims, tombstones, region marks, paging).

use leafctl::db::mysql::MysqlStore;
use leafctl::db::postgres::PostgresStore;
use leafctl::segment::AllocStore;
use proptest::prelude::*;

use crate::support::mariadb::{MariaDb, PASSWORD};
use crate::support::model::{self, Connect, STORES};
use crate::support::postgres::Postgres;

/// `STORES` fresh databases, their tables made once; each connect opens the store itself (as
/// the SQLite run does: the model's operations decide the region flags, not the opener).
fn dbs(urls: Vec<String>, open: fn(&str) -> Box<dyn AllocStore>) -> Vec<Connect> {
    assert_eq!(urls.len(), STORES);
    urls.into_iter()
        .map(|url| {
            open(&url)
                .init_schema()
                .unwrap_or_else(|e| panic!("make the tables in {url}: {e}"));
            Box::new(move || open(&url)) as Connect
        })
        .collect()
}

fn mysql(url: &str) -> Box<dyn AllocStore> {
    Box::new(MysqlStore::open(url, Some(PASSWORD)).unwrap_or_else(|e| panic!("open {url}: {e}")))
}

fn postgres(url: &str) -> Box<dyn AllocStore> {
    Box::new(PostgresStore::open(url, None).unwrap_or_else(|e| panic!("open {url}: {e}")))
}

proptest! {
    #![proptest_config(model::config(24))]
    #[test]
    fn the_command_surface_keeps_its_promises_on_mariadb(ops in model::ops_strategy(30)) {
        let db = MariaDb::shared();
        let urls = (0..STORES).map(|_| db.fresh_db_url().1).collect();
        model::run(&ops, dbs(urls, mysql));
    }
}

proptest! {
    #![proptest_config(model::config(24))]
    #[test]
    fn the_command_surface_keeps_its_promises_on_postgres(ops in model::ops_strategy(30)) {
        let pg = Postgres::shared();
        let urls = (0..STORES).map(|_| pg.fresh_db_url().1).collect();
        model::run(&ops, dbs(urls, postgres));
    }
}
