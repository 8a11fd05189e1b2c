//! A wiped follower of a real three-server cluster (in process, on loopback, through the
//! authenticated transport), rejoining as the corrupt-data-dir error tells (removed, wiped, added
//! back), catches up from the leader's snapshot file: the file-backed snapshot is read, streamed
//! in many small chunks, verified, restored and persisted as the follower's own, and survives its
//! restart.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::toy::{three_members, Kv, Set};
use convoy_raft::sm_store::files::{CURRENT, SNAPSHOT_DIR};
use convoy_raft::{Member, RaftConfig, RaftNode};
use tempfile::TempDir;

type Node = Arc<RaftNode<Kv>>;

/// The snapshot chunk size of the test: small, so that a snapshot is a stream of many.
const CHUNK: usize = 100;

fn config(id: u64, dir: &Path, members: &BTreeMap<u64, Member>, bootstrap: bool) -> RaftConfig {
    let me = &members[&id];
    let mut config = RaftConfig::new(id, dir, &me.raft_addr, &me.http_addr);
    config.secret = b"storage catch-up test secret".to_vec();
    config.initial_cluster = members.clone();
    config.bootstrap = bootstrap;
    config.snapshot_every = 40;
    config.snapshot_max_every = 40;
    // Small chunks, so that the snapshot travels as a stream of many.
    config.snapshot_chunk_bytes = CHUNK;
    config.request_timeout = Duration::from_secs(5);
    config
}

/// Starts a server, retrying while a stopped one still releases the data dir's lock.
async fn start(config: RaftConfig) -> Node {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match RaftNode::<Kv>::start(config.clone()).await {
            Ok(node) => return node,
            Err(e) if Instant::now() < deadline && e.to_string().contains("lock") => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("start server {}: {e}", config.id),
        }
    }
}

async fn until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn write(node: &Node, from: u64, to: u64) {
    for i in from..to {
        node.propose(&Set(format!("k{i:04}"), format!("v{i}")))
            .await
            .expect("write");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wiped_follower_catches_up_from_the_snapshot_file() {
    let dirs: Vec<TempDir> = (0..3).map(|_| TempDir::new().unwrap()).collect();
    let members = three_members();
    let mut nodes = Vec::new();
    for id in 1..=3u64 {
        let dir = dirs[id as usize - 1].path();
        nodes.push(
            RaftNode::<Kv>::start(config(id, dir, &members, true))
                .await
                .unwrap(),
        );
    }
    until("a leader", Duration::from_secs(10), || {
        nodes.iter().any(|n| n.is_leader())
    })
    .await;
    let leader = nodes.iter().find(|n| n.is_leader()).unwrap().clone();
    write(&leader, 0, 100).await;

    // Stop a follower and wipe its data dir; the cluster moves on and purges its log.
    let gone = nodes.iter().position(|n| !n.is_leader()).unwrap();
    let follower_id = nodes[gone].id();
    nodes[gone].shutdown().await;
    nodes.remove(gone);
    leader.remove_member(follower_id).await.expect("remove");
    // A wiped data dir is an empty one (a new one here: the stopped core may still hold the old).
    let wiped = TempDir::new().unwrap();
    let dir = wiped.path();
    write(&leader, 100, 200).await;
    until(
        "the leader to purge its log",
        Duration::from_secs(10),
        || leader.cluster_info().purged.unwrap_or(0) > 0,
    )
    .await;

    let follower = start(config(follower_id, dir, &members, false)).await;
    leader
        .add_member(follower_id, members[&follower_id].clone())
        .await
        .expect("add back");
    let target = leader.applied().last_applied();
    follower
        .wait_applied(target, Duration::from_secs(15))
        .await
        .expect("the wiped follower catches up");
    assert_eq!(follower.read(|kv| kv.0.len()), 200);
    assert!(
        follower.cluster_info().snapshot.is_some(),
        "caught up through a snapshot"
    );
    let current = dir.join(SNAPSHOT_DIR).join(CURRENT);
    let len = std::fs::metadata(&current).expect("a snapshot file").len();
    assert!(
        len > 10 * CHUNK as u64,
        "a snapshot of {len} bytes is many {CHUNK}-byte chunks"
    );
    let temporaries = |prefix: &str| -> Vec<String> {
        std::fs::read_dir(dir.join(SNAPSHOT_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(prefix))
            .collect()
    };
    // A completed transfer's file is unlinked when it is handed over, before the install.
    let received = temporaries("tmp-recv-");
    assert!(
        received.is_empty(),
        "received chunks left behind: {received:?}"
    );
    // The follower may be building a snapshot of its own (or installing a newer one) right now;
    // such a temporary file must go once that work ends, committed or dropped.
    let settle = Instant::now() + Duration::from_secs(10);
    let mut left = temporaries("tmp-");
    while !left.is_empty() && Instant::now() < settle {
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = temporaries("tmp-");
    }
    assert!(
        left.is_empty(),
        "temporary snapshot files left behind: {left:?}"
    );

    // Its own snapshot file brings it back after a restart.
    follower.shutdown().await;
    drop(follower);
    let follower = start(config(follower_id, dir, &members, false)).await;
    follower
        .wait_applied(target, Duration::from_secs(10))
        .await
        .expect("the restarted follower resumes");
    assert_eq!(follower.read(|kv| kv.0.len()), 200);
    follower.shutdown().await;
    for node in nodes {
        node.shutdown().await;
    }
}
