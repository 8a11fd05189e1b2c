//! How long building a snapshot stalls applying: entries are applied one at a time while a
//! snapshot of a large state is built, and the longest apply is reported, for a state machine
//! that writes its snapshot under the apply lock and for one that [`StateMachine::freeze`]s a
//! clone first. A measurement, not a check (timings on a shared machine vary):
//!
//! ```sh
//! cargo test -p convoy-raft --test it storage_snapshot_pause:: -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use crate::toy::{log_id, open, Set};
use convoy_raft::{codec, FrozenState, Proposal, StateMachine, TypeConfig};
use openraft::entry::RaftEntry;
use openraft::storage::RaftStateMachine;
use openraft::type_config::alias::EntryOf;
use openraft::RaftSnapshotBuilder;
use tempfile::TempDir;

/// Keys to values; `FREEZE` says whether it freezes a clone for snapshots.
#[derive(Default, Clone)]
struct Map<const FREEZE: bool>(BTreeMap<String, String>);

impl<const FREEZE: bool> StateMachine for Map<FREEZE> {
    type Command = Set;
    type Response = ();

    fn apply(&mut self, Set(k, v): Set, _at_ms: u64) {
        self.0.insert(k, v);
    }

    fn snapshot_to(&self, out: &mut dyn Write) -> io::Result<()> {
        codec::encode_into(&self.0, out)
            .map(drop)
            .map_err(io::Error::other)
    }

    fn freeze(&self) -> Option<FrozenState> {
        if !FREEZE {
            return None;
        }
        let copy = self.clone();
        Some(Box::new(move |out| copy.snapshot_to(out)))
    }

    fn restore_from(input: &mut dyn Read) -> Result<Self, String> {
        codec::decode_from(input)
            .map(Map)
            .map_err(|e| e.to_string())
    }
}

fn set(index: u64) -> EntryOf<TypeConfig> {
    let command = codec::encode(&Set(format!("k{index:08}"), "v".repeat(100))).unwrap();
    EntryOf::<TypeConfig>::new_normal(log_id(1, index), Proposal { at_ms: 1, command })
}

/// Fills a state of `keys` keys, then applies entries one by one while a snapshot is built;
/// returns the longest single apply and how long the build took.
async fn longest_apply_during_snapshot<const FREEZE: bool>(keys: u64) -> (Duration, Duration) {
    let dir = TempDir::new().unwrap();
    let (_db, _log, mut sm) = open::<Map<FREEZE>>(dir.path());
    let fill: Vec<_> = (1..=keys).map(|i| Ok((set(i), None))).collect();
    sm.apply(futures::stream::iter(fill)).await.unwrap();

    let mut builder = sm.get_snapshot_builder().await;
    let build = tokio::spawn(async move {
        let started = Instant::now();
        builder.build_snapshot().await.unwrap();
        started.elapsed()
    });
    let mut longest = Duration::ZERO;
    let mut index = keys;
    while !build.is_finished() {
        index += 1;
        let started = Instant::now();
        sm.apply(futures::stream::iter([Ok((set(index), None))]))
            .await
            .unwrap();
        longest = longest.max(started.elapsed());
        tokio::task::yield_now().await;
    }
    (longest, build.await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run it by name (see the module docs)"]
async fn snapshot_build_apply_pause() {
    const KEYS: u64 = 300_000;
    let (locked, locked_build) = longest_apply_during_snapshot::<false>(KEYS).await;
    let (frozen, frozen_build) = longest_apply_during_snapshot::<true>(KEYS).await;
    eprintln!(
        "{KEYS} keys: longest apply while building a snapshot: {locked:?} written under the lock \
         (build {locked_build:?}), {frozen:?} with a frozen clone (build {frozen_build:?})"
    );
}
