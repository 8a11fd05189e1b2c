//! A toy key-value state machine shared by the storage tests, and how they open stores.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use convoy_raft::log_store::{open_db, RocksLogStore};
use convoy_raft::sm_store::SmStore;
use convoy_raft::{codec, StateMachine, TypeConfig};
use openraft::type_config::alias::LogIdOf;
use openraft::vote::RaftLeaderIdExt;
use serde::{Deserialize, Serialize};

/// The shared RocksDB handle of a data dir.
pub type Db = Arc<rocksdb::DB>;

/// Opens a data dir's database with its log store and a state machine store of `S` over it.
pub fn open<S: StateMachine>(dir: &Path) -> (Db, RocksLogStore, SmStore<S>) {
    let db = open_db(dir).expect("open db");
    let log = RocksLogStore::new(db.clone());
    let sm = SmStore::open(db.clone()).expect("sm store");
    (db, log, sm)
}

/// The id of log entry `index`, written in `term` by server 1.
pub fn log_id(term: u64, index: u64) -> LogIdOf<TypeConfig> {
    LogIdOf::<TypeConfig>::new(
        openraft::type_config::alias::LeaderIdOf::<TypeConfig>::new_committed(term, 1),
        index,
    )
}

/// Keys to values.
#[derive(Default)]
pub struct Kv(pub BTreeMap<String, String>);

/// Sets a key; answers the previous value.
#[derive(Serialize, Deserialize)]
pub struct Set(pub String, pub String);

impl StateMachine for Kv {
    type Command = Set;
    type Response = Option<String>;

    fn apply(&mut self, Set(k, v): Set, _at_ms: u64) -> Option<String> {
        self.0.insert(k, v)
    }

    fn snapshot_to(&self, out: &mut dyn Write) -> io::Result<()> {
        codec::encode_into(&self.0, out)
            .map(drop)
            .map_err(io::Error::other)
    }

    fn restore_from(input: &mut dyn Read) -> Result<Self, String> {
        codec::decode_from(input).map(Kv).map_err(|e| e.to_string())
    }
}

/// A free loopback address (bound, then released).
pub fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// Servers 1 to 3, each on free loopback addresses.
pub fn three_members() -> std::collections::BTreeMap<u64, convoy_raft::Member> {
    (1..=3)
        .map(|id| {
            let member = convoy_raft::Member {
                raft_addr: free_addr(),
                http_addr: free_addr(),
            };
            (id, member)
        })
        .collect()
}
