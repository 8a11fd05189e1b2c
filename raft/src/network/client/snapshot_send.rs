//! Sending a snapshot to a peer as a stream of chunks, one in flight, never held whole.

use std::time::{Duration, Instant};

use openraft::raft::SnapshotResponse;
use openraft::type_config::alias::{SnapshotOf, VoteOf};

use super::peer::{Failure, PeerClient};
use super::SnapshotBytes;
use crate::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES;
use crate::network::{RpcRequest, RpcResponse};
use crate::types::TypeConfig;

impl<D> PeerClient<D> {
    /// Sends `snapshot` as a stream of chunks (each under `ttl`), then its end; returns the
    /// peer's answer to the end. Never holds more than one chunk of it in memory.
    pub(super) async fn stream_snapshot(
        &self,
        vote: VoteOf<TypeConfig>,
        snapshot: SnapshotOf<TypeConfig, D>,
        ttl: Duration,
    ) -> Result<SnapshotResponse<TypeConfig>, Failure>
    where
        D: SnapshotBytes,
    {
        let chunk_bytes = self
            .net
            .inner
            .config
            .snapshot_chunk_bytes
            .clamp(1, MAX_SNAPSHOT_CHUNK_BYTES);
        let (total, mut reader) = snapshot.snapshot.into_snapshot_reader();
        let transfer: u64 = rand::random();
        let mut crc = crc32fast::Hasher::new();
        let mut offset = 0u64;
        let started = Instant::now();
        loop {
            let want = usize::try_from(total - offset)
                .unwrap_or(usize::MAX)
                .min(chunk_bytes);
            let (back, data) = tokio::task::spawn_blocking(move || {
                let mut data = vec![0u8; want];
                let read = reader.read_exact(&mut data);
                (reader, read.map(|()| data))
            })
            .await
            .map_err(|e| self.local_failure(format!("snapshot reader task: {e}")))?;
            reader = back;
            let data = data.map_err(|e| {
                self.local_failure(format!("cannot read the snapshot at byte {offset}: {e}"))
            })?;
            crc.update(&data);
            let len = data.len() as u64;
            let req = RpcRequest::SnapshotChunk {
                vote,
                transfer,
                total,
                offset,
                data,
            };
            match self.call(req, ttl).await? {
                RpcResponse::SnapshotChunk { received } if received == offset + len => {}
                RpcResponse::SnapshotChunk { received } => {
                    return Err(self.local_failure(format!(
                        "snapshot chunk {offset}+{len} acknowledged as {received} bytes received"
                    )))
                }
                other => return Err(self.unexpected("SnapshotChunk", &other)),
            }
            offset += len;
            if offset >= total {
                break;
            }
        }
        let req = RpcRequest::SnapshotDone {
            vote,
            transfer,
            meta: snapshot.meta,
            total,
            crc32: crc.finalize(),
        };
        let install = ttl.max(self.net.inner.config.snapshot_install_timeout);
        match self.call(req, install).await? {
            RpcResponse::Snapshot(resp) => {
                let ms = started.elapsed().as_millis() as u64;
                tracing::info!(
                    target = self.target,
                    bytes = total,
                    chunk_bytes,
                    ms,
                    "sent a snapshot"
                );
                Ok(resp)
            }
            other => Err(self.unexpected("Snapshot", &other)),
        }
    }
}
