//! The model of the segment command surface (`support::model`, issue 45) on the in-memory store
//! and on SQLite files: part of the quick loop. The same model runs on MariaDB and PostgreSQL in
//! the `segment` group.

use leafctl::db::OpenMode;
use leafctl::db::sqlite::SqliteStore;
use leafctl::segment::{AllocStore, MemoryStore};
use proptest::prelude::*;

use crate::support::model::{self, Connect, STORES};

fn memory_dbs() -> Vec<Connect> {
    (0..STORES)
        .map(|_| {
            let table = MemoryStore::new();
            Box::new(move || Box::new(table.connection()) as Box<dyn AllocStore>) as Connect
        })
        .collect()
}

fn sqlite_dbs(dir: &tempfile::TempDir) -> Vec<Connect> {
    (0..STORES)
        .map(|i| {
            let path = dir.path().join(format!("leaf{i}.db"));
            Box::new(move || {
                Box::new(SqliteStore::open(&path, OpenMode::CreateSchema).expect("open SQLite"))
                    as Box<dyn AllocStore>
            }) as Connect
        })
        .collect()
}

proptest! {
    #![proptest_config(model::config(256))]
    #[test]
    fn the_command_surface_keeps_its_promises_in_memory(ops in model::ops_strategy(40)) {
        model::run(&ops, memory_dbs());
    }
}

proptest! {
    #![proptest_config(model::config(48))]
    #[test]
    fn the_command_surface_keeps_its_promises_on_sqlite(ops in model::ops_strategy(30)) {
        let dir = tempfile::tempdir().expect("temp dir");
        model::run(&ops, sqlite_dbs(&dir));
    }
}
