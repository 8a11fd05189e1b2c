//! Partitions of a local cluster in the transport's fault layer (`POST /v1/debug/faults`, served when
//! the cluster runs with `fault_injection`): cut servers off, and heal.

use anyhow::bail;
use convoy_node::local::Cluster;
use serde_json::json;

/// Link faults for a local cluster.
#[allow(async_fn_in_trait)]
pub trait Partitions {
    /// Sets server `id`'s fault policy: its outgoing RPCs to `blocked` are dropped.
    async fn block(&self, id: u64, blocked: &[u64]) -> anyhow::Result<()>;
    /// Cuts `side` off from the rest, both ways.
    async fn partition(&self, side: &[u64]) -> anyhow::Result<()>;
    /// Removes every fault.
    async fn heal(&self) -> anyhow::Result<()>;
}

impl Partitions for Cluster {
    async fn block(&self, id: u64, blocked: &[u64]) -> anyhow::Result<()> {
        let (status, body) = self
            .server(id)
            .client()
            .post("/v1/debug/faults", &json!({"blocked": blocked}))
            .await?;
        if status != 200 {
            bail!("setting faults on server {id}: {status} {body}");
        }
        Ok(())
    }

    async fn partition(&self, side: &[u64]) -> anyhow::Result<()> {
        let other: Vec<u64> = self
            .servers
            .keys()
            .copied()
            .filter(|id| !side.contains(id))
            .collect();
        for id in self.running() {
            let blocked = if side.contains(&id) { &other[..] } else { side };
            self.block(id, blocked).await?;
        }
        Ok(())
    }

    async fn heal(&self) -> anyhow::Result<()> {
        for id in self.running() {
            self.block(id, &[]).await?;
        }
        Ok(())
    }
}
