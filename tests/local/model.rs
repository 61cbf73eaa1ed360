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

/// Found by the model on CI (shrunk): a server running since before `region add` recorded its
/// store as region 0 of 2 claimed past region 0's block and issued the first ID of region 1's
/// block, which `next` in region 1 issued too. Its claim is now refused (nothing issued), and the
/// model accepts that refusal only from a server whose store records a region it was not given.
#[test]
fn a_server_running_through_region_add_stays_in_its_block() {
    use model::{Op, RegionFlags, Start};
    let ops = vec![
        Op::ServeStart {
            server: 0,
            store: 1,
            flags: RegionFlags::None,
        },
        Op::Add {
            store: 1,
            tag: 0,
            start: Start::NearBlockEnd(0),
            step: 1,
        },
        Op::RegionAdd {
            from: 1,
            to: 2,
            index: 1,
            count: 2,
        },
        Op::Singles {
            server: 0,
            tag: 0,
            k: 1,
        },
        Op::Next {
            store: 0,
            tag: 0,
            count: 1,
            flags: RegionFlags::None,
        },
        Op::Next {
            store: 2,
            tag: 0,
            count: 1,
            flags: RegionFlags::Recorded,
        },
    ];
    model::run(&ops, memory_dbs());
    let dir = tempfile::tempdir().expect("temp dir");
    model::run(&ops, sqlite_dbs(&dir));
}
