//! A toy key-value state machine shared by the storage tests.

use std::collections::BTreeMap;

use convoy_raft::{codec, StateMachine};
use serde::{Deserialize, Serialize};

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

    fn snapshot(&self) -> Vec<u8> {
        codec::encode(&self.0).expect("encode toy state")
    }

    fn restore(bytes: &[u8]) -> Result<Self, String> {
        codec::decode(bytes).map(Kv).map_err(|e| e.to_string())
    }
}
