//! openraft's storage conformance suite on the RocksDB log store and the state machine store.

use std::collections::BTreeMap;

use convoy_raft::log_store::{open_db, RocksLogStore};
use convoy_raft::sm_store::SmStore;
use convoy_raft::{StateMachine, TypeConfig};
use openraft::testing::log::{StoreBuilder, Suite};
use openraft::StorageError;
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

/// A toy key-value state machine.
#[derive(Default)]
struct Kv(BTreeMap<String, String>);

#[derive(Serialize, Deserialize)]
struct Set(String, String);

impl StateMachine for Kv {
    type Command = Set;
    type Response = Option<String>;

    fn apply(&mut self, Set(k, v): Set, _at_ms: u64) -> Option<String> {
        self.0.insert(k, v)
    }

    fn snapshot(&self) -> Vec<u8> {
        convoy_raft::codec::encode(&self.0).expect("encode toy state")
    }

    fn restore(bytes: &[u8]) -> Result<Self, String> {
        convoy_raft::codec::decode(bytes)
            .map(Kv)
            .map_err(|e| e.to_string())
    }
}

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
