//! The proposal batcher: proposals queued on the leader leave as one `client_write_many` per
//! batch, sharing one append and one fsync, stamped with the leader's clock.

use futures::StreamExt;
use openraft::error::ClientWriteError;
use tokio::sync::{mpsc, oneshot};

use crate::network::{ClientError, ClientResponse};
use crate::sm_store::SmStore;
use crate::state_machine::StateMachine;
use crate::types::{Proposal, Raft};

/// Proposals waiting for the batcher; when full, proposers wait (backpressure), never drop.
pub(super) const BATCH_QUEUE: usize = 4096;
/// The most proposals one append carries.
pub(super) const MAX_BATCH: usize = 1024;

/// Milliseconds since the Unix epoch, the leader's stamp on a batch.
fn now_ms() -> u64 {
    convoy_time::Clock::wall_ms(&convoy_time::SystemClock)
}

/// A proposal waiting for the batcher, and where its answer goes.
pub(super) struct Pending {
    pub(super) command: Vec<u8>,
    pub(super) reply: oneshot::Sender<Result<ClientResponse, ClientError>>,
}

/// Drains queued proposals into batches: each batch is one `client_write_many`, so its entries
/// share one append and one fsync. The next batch is submitted while the previous one commits.
pub(super) async fn run_batcher<S: StateMachine>(
    raft: Raft<SmStore<S>>,
    mut rx: mpsc::Receiver<Pending>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let at_ms = now_ms();
        let (proposals, replies): (Vec<_>, Vec<_>) = batch
            .drain(..)
            .map(|p| {
                (
                    Proposal {
                        at_ms,
                        command: p.command,
                    },
                    p.reply,
                )
            })
            .unzip();
        match raft.client_write_many(proposals).await {
            Ok(results) => {
                tokio::spawn(async move {
                    let mut results = results;
                    for reply in replies {
                        let answer = match results.next().await {
                            Some(Ok(Ok(written))) => Ok(ClientResponse::Applied {
                                index: written.log_id.index,
                                reply: written.response,
                            }),
                            Some(Ok(Err(ClientWriteError::ForwardToLeader(f)))) => {
                                Err(ClientError::NotLeader {
                                    leader: f.leader_id.zip(f.leader_node),
                                })
                            }
                            Some(Ok(Err(e))) => Err(ClientError::Failed(e.to_string())),
                            Some(Err(fatal)) => Err(ClientError::Failed(fatal.to_string())),
                            None => Err(ClientError::Failed("no result for proposal".into())),
                        };
                        let _ = reply.send(answer);
                    }
                });
            }
            Err(fatal) => {
                for reply in replies {
                    let _ = reply.send(Err(ClientError::Failed(fatal.to_string())));
                }
            }
        }
    }
}
