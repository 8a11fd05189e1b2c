//! The RocksDB stores under a real (single-node) openraft: replies reach `client_write`, and a
//! restart resumes the state from the snapshot plus the re-applied log.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::toy::{Kv, Set};
use convoy_raft::codec;
use convoy_raft::log_store::{open_db, RocksLogStore};
use convoy_raft::sm_store::{SmStore, SnapshotData};
use convoy_raft::{Member, Proposal, TypeConfig};
use futures::StreamExt;
use openraft::error::{RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::alias::{SnapshotOf, VoteOf};
use openraft::{Config, OptionalSend, ServerState};
use tempfile::TempDir;

/// A network to nowhere: a single-node cluster never uses it.
struct NoNet;

#[derive(Debug, thiserror::Error)]
#[error("single-node test network")]
struct NoPeer;

impl RaftNetworkV2<TypeConfig> for NoNet {
    type SnapshotData = SnapshotData;

    async fn append_entries(
        &mut self,
        _rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(Unreachable::new(&NoPeer)))
    }

    async fn vote(
        &mut self,
        _rpc: VoteRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        Err(RPCError::Unreachable(Unreachable::new(&NoPeer)))
    }

    async fn full_snapshot(
        &mut self,
        _vote: VoteOf<TypeConfig>,
        _snapshot: SnapshotOf<TypeConfig, SnapshotData>,
        _cancel: impl Future<Output = ReplicationClosed> + OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        Err(StreamingError::Unreachable(Unreachable::new(&NoPeer)))
    }
}

impl RaftNetworkFactory<TypeConfig> for NoNet {
    type Network = NoNet;

    async fn new_client(&mut self, _target: u64, _node: &Member) -> NoNet {
        NoNet
    }
}

type Raft = openraft::Raft<TypeConfig, SmStore<Kv>>;

async fn start(dir: &Path) -> (Raft, Arc<convoy_raft::sm_store::AppliedState<Kv>>) {
    // After a shutdown the old raft core may still be releasing its handle on the DB for a moment:
    // RocksDB's LOCK is taken again as soon as it is free.
    let mut attempts = 0;
    let db = loop {
        match open_db(dir) {
            Ok(db) => break db,
            Err(e) if attempts < 100 => {
                attempts += 1;
                let _ = e;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => panic!("open db: {e:?}"),
        }
    };
    let log = RocksLogStore::new(db.clone());
    let sm = SmStore::<Kv>::open(db).expect("sm store");
    let applied = sm.applied();
    let config = Config {
        heartbeat_interval: 50,
        election_timeout_min: 150,
        election_timeout_max: 300,
        ..Default::default()
    };
    let config = Arc::new(config.validate().expect("valid config"));
    let raft = Raft::new(1, config, NoNet, log, sm).await.expect("raft");
    (raft, applied)
}

async fn set(raft: &Raft, k: &str, v: &str, at_ms: u64) -> Option<String> {
    let command = codec::encode(&Set(k.into(), v.into())).unwrap();
    let written = raft
        .client_write(Proposal { at_ms, command })
        .await
        .expect("client write");
    codec::decode(&written.data.0).expect("decode reply")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_reach_the_writer_and_a_restart_resumes_the_state() {
    let dir = TempDir::new().unwrap();
    let wait = Some(Duration::from_secs(10));
    {
        let (raft, applied) = start(dir.path()).await;
        raft.initialize(BTreeMap::from([(1, Member::default())]))
            .await
            .unwrap();
        raft.wait(wait)
            .state(ServerState::Leader, "leader")
            .await
            .unwrap();

        assert_eq!(set(&raft, "a", "1", 10).await, None);
        assert_eq!(set(&raft, "a", "2", 20).await, Some("1".into()));
        raft.trigger().snapshot().await.unwrap();
        let applied_index = applied.last_applied();
        raft.wait(wait)
            .metrics(
                |m| {
                    m.snapshot
                        .as_ref()
                        .is_some_and(|s| s.index == applied_index)
                },
                "snapshot",
            )
            .await
            .unwrap();
        assert_eq!(set(&raft, "b", "3", 30).await, None);
        assert_eq!(applied.read(|kv| kv.0.len()), 2);
        raft.shutdown().await.unwrap();
    }

    let (raft, applied) = start(dir.path()).await;
    // The snapshot plus the log re-applied up to the saved committed index: all three writes.
    assert_eq!(
        applied.read(|kv| kv.0.clone()),
        BTreeMap::from([("a".into(), "2".into()), ("b".into(), "3".into())])
    );
    assert_eq!(applied.last_at_ms(), 30);
    raft.wait(wait)
        .state(ServerState::Leader, "leader again")
        .await
        .unwrap();
    assert_eq!(set(&raft, "b", "4", 40).await, Some("3".into()));
    raft.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_reply_of_a_batch_comes_after_its_entry_is_applied_and_in_log_order() {
    let dir = TempDir::new().unwrap();
    let (raft, applied) = start(dir.path()).await;
    raft.initialize(BTreeMap::from([(1, Member::default())]))
        .await
        .unwrap();
    raft.wait(Some(Duration::from_secs(10)))
        .state(ServerState::Leader, "leader")
        .await
        .unwrap();

    // Every write sets the same key, so each reply is the value the write before it set: a reply
    // given to the wrong proposal, or computed out of order, shows.
    const WRITES: u64 = 3000;
    let proposals = (0..WRITES).map(|i| Proposal {
        at_ms: i,
        command: codec::encode(&Set("k".into(), i.to_string())).unwrap(),
    });
    let mut results = raft.client_write_many(proposals).await.unwrap();
    let mut previous_index = 0;
    for i in 0..WRITES {
        let written = results
            .next()
            .await
            .expect("a result per proposal")
            .expect("raft running")
            .expect("written");
        let index = written.log_id.index;
        assert!(index > previous_index, "write {i} at index {index}");
        previous_index = index;
        assert!(
            applied.last_applied() >= index,
            "the reply to index {index} came before the index was published ({})",
            applied.last_applied()
        );
        let reply: Option<String> = codec::decode(&written.response.0).unwrap();
        assert_eq!(reply, i.checked_sub(1).map(|p| p.to_string()), "write {i}");
    }
    assert!(results.next().await.is_none());
    raft.shutdown().await.unwrap();
}
