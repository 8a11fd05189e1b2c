//! Where the transport server delivers incoming raft RPCs: the [`RaftRpcTarget`] trait, and its
//! implementation over openraft's `Raft` handle (with the rule that an empty log grants no vote).

use std::fs::File;
use std::future::Future;
use std::io::Read;

use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use openraft::storage::RaftStateMachine;
use openraft::type_config::alias::{SnapshotMetaOf, SnapshotOf, VoteOf};

use super::client::SnapshotBytes;
use crate::types::TypeConfig;

/// The raft core as the server sees it: where incoming raft RPCs are delivered.
///
/// Implemented for openraft's `Raft` handle; tests implement it with a stub. Errors are the
/// core's refusal (shutting down, fatal error) as text, sent back as [`RpcResponse::RaftError`].
pub trait RaftRpcTarget: Send + Sync + 'static {
    /// Handles AppendEntries (and heartbeats).
    fn append_entries(
        &self,
        rpc: AppendEntriesRequest<TypeConfig>,
    ) -> impl Future<Output = Result<AppendEntriesResponse<TypeConfig>, String>> + Send;

    /// Handles RequestVote.
    fn vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> impl Future<Output = Result<VoteResponse<TypeConfig>, String>> + Send;

    /// Handles Pre-Vote: would this node grant the vote? Changes nothing.
    fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> impl Future<Output = Result<VoteResponse<TypeConfig>, String>> + Send;

    /// Installs a whole snapshot sent by the leader with `vote`.
    fn install_full_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        data: Vec<u8>,
    ) -> impl Future<Output = Result<SnapshotResponse<TypeConfig>, String>> + Send;

    /// Handles the leader's request that this node take over leadership.
    fn transfer_leader(
        &self,
        req: TransferLeaderRequest<TypeConfig>,
    ) -> impl Future<Output = Result<TransferLeaderResponse<TypeConfig>, String>> + Send;

    /// Installs a snapshot streamed by the leader with `vote`: `file` is complete, its checksum
    /// verified, positioned at its start, and has no name left. By default it is read whole and
    /// handed to [`RaftRpcTarget::install_full_snapshot`].
    fn install_snapshot_file(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        file: File,
    ) -> impl Future<Output = Result<SnapshotResponse<TypeConfig>, String>> + Send {
        async move {
            let mut data = Vec::new();
            let mut file = file;
            file.read_to_end(&mut data)
                .map_err(|e| format!("cannot read the received snapshot: {e}"))?;
            self.install_full_snapshot(vote, meta, data).await
        }
    }
}

impl<SM> RaftRpcTarget for openraft::Raft<TypeConfig, SM>
where
    SM: RaftStateMachine<TypeConfig>,
    SM::SnapshotData: SnapshotBytes,
{
    async fn append_entries(
        &self,
        rpc: AppendEntriesRequest<TypeConfig>,
    ) -> Result<AppendEntriesResponse<TypeConfig>, String> {
        openraft::Raft::append_entries(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn vote(&self, rpc: VoteRequest<TypeConfig>) -> Result<VoteResponse<TypeConfig>, String> {
        no_vote_from_an_empty_log(self)?;
        openraft::Raft::vote(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn pre_vote(
        &self,
        rpc: VoteRequest<TypeConfig>,
    ) -> Result<VoteResponse<TypeConfig>, String> {
        no_vote_from_an_empty_log(self)?;
        openraft::Raft::pre_vote(self, rpc)
            .await
            .map_err(|e| e.to_string())
    }

    async fn install_full_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        data: Vec<u8>,
    ) -> Result<SnapshotResponse<TypeConfig>, String> {
        super::overtaken::prepare(self, &vote, &meta).await?;
        let snapshot: SnapshotOf<TypeConfig, SM::SnapshotData> = openraft::Snapshot {
            meta,
            snapshot: SM::SnapshotData::from_snapshot_bytes(data),
        };
        openraft::Raft::install_full_snapshot(self, vote, snapshot)
            .await
            .map_err(|e| e.to_string())
    }

    async fn transfer_leader(
        &self,
        req: TransferLeaderRequest<TypeConfig>,
    ) -> Result<TransferLeaderResponse<TypeConfig>, String> {
        self.handle_transfer_leader(req)
            .await
            .map_err(|e| e.to_string())
    }

    async fn install_snapshot_file(
        &self,
        vote: VoteOf<TypeConfig>,
        meta: SnapshotMetaOf<TypeConfig>,
        file: File,
    ) -> Result<SnapshotResponse<TypeConfig>, String> {
        super::overtaken::prepare(self, &vote, &meta).await?;
        let data = SM::SnapshotData::from_snapshot_file(file)
            .map_err(|e| format!("cannot open the received snapshot: {e}"))?;
        let snapshot: SnapshotOf<TypeConfig, SM::SnapshotData> = openraft::Snapshot {
            meta,
            snapshot: data,
        };
        openraft::Raft::install_full_snapshot(self, vote, snapshot)
            .await
            .map_err(|e| e.to_string())
    }
}

/// A server whose log is empty never grants a vote. Every member has at least the membership entry
/// (a founder from bootstrap, a joiner from the leader before it is promoted), so an empty log is a
/// server that is not a member yet, or a member whose data dir was lost: it forgot its vote too, and
/// granting one now could elect a second leader in a term it already voted in (raft's double vote).
fn no_vote_from_an_empty_log<SM>(raft: &openraft::Raft<TypeConfig, SM>) -> Result<(), String>
where
    SM: RaftStateMachine<TypeConfig>,
{
    use openraft::async_runtime::WatchReceiver;
    if raft.metrics().borrow_watched().last_log_index.is_none() {
        return Err(
            "this server's log is empty (not a member yet, or its data dir was lost): it does not vote"
                .into(),
        );
    }
    Ok(())
}
