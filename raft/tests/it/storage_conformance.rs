//! openraft's storage conformance suite on the RocksDB log store and the state machine store.

use crate::toy::Kv;
use convoy_raft::log_store::{open_db, RocksLogStore};
use convoy_raft::sm_store::SmStore;
use convoy_raft::TypeConfig;
use openraft::testing::log::{StoreBuilder, Suite};
use openraft::StorageError;
use tempfile::TempDir;

struct RocksBuilder;

impl StoreBuilder<TypeConfig, RocksLogStore, SmStore<Kv>, TempDir> for RocksBuilder {
    async fn build(
        &self,
    ) -> Result<(TempDir, RocksLogStore, SmStore<Kv>), StorageError<TypeConfig>> {
        let dir = TempDir::new().expect("temp dir");
        let db = open_db(dir.path()).expect("open db");
        let log = RocksLogStore::new(db.clone());
        let sm = SmStore::open(db).expect("sm store");
        Ok((dir, log, sm))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocks_store_passes_openraft_suite() -> Result<(), StorageError<TypeConfig>> {
    Suite::test_all(RocksBuilder).await
}
