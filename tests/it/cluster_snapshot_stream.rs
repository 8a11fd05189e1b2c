//! A wiped follower rejoining as a new member (removed, wiped, added back under a new id, as
//! docs/RELIABILITY.md says) catches up from a snapshot streamed in many small chunks
//! (`snapshot_chunk_bytes`, a test knob, lowered to 4 KiB), and ends with the leader's state
//! digest; no received chunk file is left behind.

use std::time::Duration;

use convoy_tests::scenario::{consumer, post_ok};
use convoy_tests::{eventually, Cluster, ClusterOptions, RawClient};
use serde_json::json;

/// The chunk size the servers stream snapshots in.
const CHUNK: u64 = 4096;

/// The applied index and the state's digest on one server.
async fn digest(api: &RawClient) -> Option<(u64, String)> {
    let (status, body) = api.get("/v1/cluster/digest").await.ok()?;
    (status == 200).then(|| {
        (
            body["last_applied"].as_u64().unwrap_or_default(),
            body["sha256"].as_str().unwrap_or_default().to_string(),
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wiped_follower_catches_up_from_a_snapshot_of_many_chunks() -> anyhow::Result<()> {
    let options = ClusterOptions {
        snapshot_every: 50,
        snapshot_max_every: Some(50),
        extra: format!("snapshot_chunk_bytes = {CHUNK}\n"),
        ..ClusterOptions::for_tests(3)
    };
    let mut cluster = Cluster::start_with(options).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();

    // A state of a few hundred KB (3,000 fleet nodes), then enough entries to snapshot and purge.
    for i in 0..3 {
        consumer(&api, &format!("fleet{i}"), 1_000).await?;
    }
    for i in 0..120 {
        post_ok(&api, "/v1/resources", json!({"name": format!("r{i:03}")})).await?;
    }
    let purged = eventually(Duration::from_secs(10), || {
        let api = api.clone();
        async move {
            let (_, info) = api.get("/v1/cluster").await.ok()?;
            info["purged"].as_u64().filter(|p| *p > 0)
        }
    })
    .await?;

    // Stop a follower for good and remove it; a new server with an empty data dir joins.
    let gone = (1..=3).find(|id| *id != leader).unwrap();
    cluster.server_mut(gone).kill();
    let (status, body) = api.delete(&format!("/v1/cluster/members/{gone}")).await?;
    assert_eq!(status, 200, "removing {gone}: {body}");
    cluster.forget(gone);
    let (raft_addr, http_addr) = cluster.spawn_joiner(4)?;
    let (status, body) = api
        .post(
            "/v1/cluster/members",
            &json!({"id": 4, "raft_addr": raft_addr, "http_addr": http_addr}),
        )
        .await?;
    assert_eq!(status, 200, "adding 4: {body}\n{}", cluster.logs());

    let joiner = cluster.server(4).client();
    let (applied, sha) = eventually(Duration::from_secs(30), || {
        let (api, joiner) = (api.clone(), joiner.clone());
        async move {
            let theirs = digest(&api).await?;
            let ours = digest(&joiner).await?;
            (ours == theirs).then_some(ours)
        }
    })
    .await
    .map_err(|e| anyhow::anyhow!("server 4 never matched the leader: {e}\n{}", cluster.logs()))?;
    assert!(applied > purged, "applied {applied}, purged {purged}");
    assert_eq!(sha.len(), 64, "{sha}");

    // It got there through a snapshot of many chunks, persisted as its own, and cleaned up.
    let snapshot_dir = cluster.dir().join("data/4/snapshot");
    let len = std::fs::metadata(snapshot_dir.join("current.snap"))?.len();
    assert!(
        len > 20 * CHUNK,
        "a snapshot of {len} bytes is many {CHUNK}-byte chunks"
    );
    let leftovers: Vec<String> = std::fs::read_dir(&snapshot_dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    assert_eq!(leftovers, vec!["current.snap".to_string()]);
    let log = std::fs::read_to_string(cluster.server(4).log_path())?;
    assert!(log.contains("installed snapshot"), "{log}");
    Ok(())
}
