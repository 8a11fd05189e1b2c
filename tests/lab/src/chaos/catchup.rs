//! `convoy-lab chaos --catch-up N`: a follower killed while the cluster holds N nodes, restarted after the
//! leader has snapshotted and purged the log it missed, must catch up through a snapshot and end with
//! the leader's exact state; measures how long that takes.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};

use convoy_node::client::ApiClient;
use convoy_node::local::{Cluster, ClusterOptions};
use convoy_node::sim::node_ids;

/// What the catch-up run measured.
#[derive(Debug)]
pub struct CatchUp {
    /// Nodes in the state.
    pub nodes: usize,
    /// Bytes of the state (the snapshot's payload).
    pub state_bytes: u64,
    /// The leader's purged log index when the follower came back.
    pub purged: u64,
    /// From the restart to an identical digest at the leader's index.
    pub catch_up: Duration,
}

async fn digest(client: ApiClient) -> Option<(u64, String, u64)> {
    let client = client.with_patience(Duration::ZERO);
    let d: Value = client.get("/v1/cluster/digest").await.ok()?;
    Some((
        d["last_applied"].as_u64()?,
        d["sha256"].as_str()?.to_string(),
        d["bytes"].as_u64()?,
    ))
}

/// Runs the scenario under `dir`.
pub async fn run(nodes: usize, dir: &Path) -> anyhow::Result<CatchUp> {
    let options = ClusterOptions {
        snapshot_every: 1_000,
        snapshot_max_every: Some(1_000),
        node_timeout_ms: Some(600_000),
        ..ClusterOptions::default()
    }
    .with_auth();
    let mut cluster = Cluster::spawn_in(dir, options)?;
    let api = Arc::new(cluster.api_client().with_patience(Duration::from_secs(30)));
    let leader = convoy_node::local::wait_leader(&api, None, Duration::from_secs(30)).await?;
    let ids = node_ids("big", nodes);
    let mut chunks = ids.chunks(10_000);
    let first = chunks.next().unwrap_or(&[]);
    api.post::<_, Value>("/v1/consumers", &json!({"name": "big", "nodes": first}))
        .await
        .context("creating the big consumer")?;
    for chunk in chunks {
        api.put::<_, Value>("/v1/consumers/big/nodes", &json!({"add": chunk}))
            .await
            .context("adding nodes")?;
    }
    let follower = cluster
        .servers
        .keys()
        .copied()
        .find(|id| *id != leader)
        .context("no follower")?;
    cluster.get_mut(follower).context("follower")?.kill();
    // Enough entries for the leader to snapshot and purge what the follower lacks. Some may time out
    // while a snapshot of the big state is being built; they are not what is measured.
    let failed = stream::iter(0..2_500u32)
        .map(|k| {
            let api = api.clone();
            async move {
                api.post::<_, Value>("/v1/resources", &json!({"name": format!("fill-{k}")}))
                    .await
            }
        })
        .buffer_unordered(16)
        .filter_map(|r| std::future::ready(r.err()))
        .collect::<Vec<_>>()
        .await;
    if let Some(e) = failed.first() {
        tracing::warn!("{} of 2500 filler writes failed, e.g.: {e}", failed.len());
    }
    let leader_addr = cluster.get(leader).context("leader")?.http_addr.clone();
    let leader_client = cluster.client_of(&leader_addr);
    let deadline = Instant::now() + Duration::from_secs(60);
    let purged = loop {
        let c: Value = leader_client.get("/v1/cluster").await?;
        if let Some(p) = c["purged"].as_u64() {
            break p;
        }
        anyhow::ensure!(Instant::now() < deadline, "the leader never purged its log");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    cluster.restart(follower)?;
    let restarted = Instant::now();
    let follower_addr = cluster.get(follower).context("follower")?.http_addr.clone();
    let deadline = restarted + Duration::from_secs(120);
    let state_bytes = loop {
        if let (Some(l), Some(f)) = (
            digest(cluster.client_of(&leader_addr)).await,
            digest(cluster.client_of(&follower_addr)).await,
        ) {
            if l.0 == f.0 && l.1 == f.1 {
                break f.2;
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "server {follower} did not catch up within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let catch_up = restarted.elapsed();
    cluster.stop();
    Ok(CatchUp {
        nodes,
        state_bytes,
        purged,
        catch_up,
    })
}
