//! A server removed from the membership while it led (`convoy cluster remove` of the leader) keeps
//! leading for a moment (openraft's `removed_leader_step_down`). A membership change sent to it
//! then, as a follower that has not yet heard of the removal forwards `convoy cluster add`, made
//! openraft fail its assertion "Only leader is allowed to call update_effective_membership()" and
//! stopped the server's core; it is answered "not the leader", and the successor adds it back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::toy::{three_members, Kv, Set};
use convoy_raft::network::client::{Network, NetworkConfig};
use convoy_raft::network::{ClientError, ClientRequest};
use convoy_raft::{Member, RaftConfig, RaftNode};
use openraft::async_runtime::WatchReceiver;
use openraft::ChangeMembers;
use tempfile::TempDir;

type Node = Arc<RaftNode<Kv>>;

const SECRET: &[u8] = b"removed leader test secret";

fn config(id: u64, dir: &Path, members: &BTreeMap<u64, Member>) -> RaftConfig {
    let me = &members[&id];
    let mut config = RaftConfig::new(id, dir, &me.raft_addr, &me.http_addr);
    config.secret = SECRET.to_vec();
    config.initial_cluster = members.clone();
    config.bootstrap = true;
    config.request_timeout = Duration::from_secs(10);
    config
}

async fn until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Three servers founded together, once one of them leads; their data dirs live as long as the
/// first value.
async fn three_servers() -> (Vec<TempDir>, BTreeMap<u64, Member>, Vec<Node>) {
    let dirs: Vec<TempDir> = (0..3).map(|_| TempDir::new().unwrap()).collect();
    let members = three_members();
    let mut nodes: Vec<Node> = Vec::new();
    for id in 1..=3u64 {
        let dir = dirs[id as usize - 1].path();
        nodes.push(
            RaftNode::<Kv>::start(config(id, dir, &members))
                .await
                .unwrap(),
        );
    }
    until("a leader", Duration::from_secs(10), || {
        nodes.iter().any(|n| n.is_leader())
    })
    .await;
    (dirs, members, nodes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_leader_refuses_to_add_itself_back_and_the_successor_does() {
    let (_dirs, members, nodes) = three_servers().await;
    let old = nodes.iter().find(|n| n.is_leader()).unwrap().clone();
    let old_id = old.id();
    old.propose(&Set("k".into(), "v".into()))
        .await
        .expect("write");
    old.remove_member(old_id).await.expect("the leader removed");

    // At once, straight to the removed leader, as a follower that still sees it lead forwards.
    let network: Network =
        Network::with_config(99, Arc::new(SECRET.to_vec()), NetworkConfig::default());
    let request = ClientRequest::AddMember {
        id: old_id,
        member: members[&old_id].clone(),
    };
    let answer = network
        .call_client(
            old_id,
            &members[&old_id].raft_addr,
            request,
            Duration::from_secs(5),
        )
        .await
        .expect("the removed leader answers");
    assert!(
        matches!(answer, Err(ClientError::NotLeader { .. })),
        "the removed leader answers not the leader: {answer:?}"
    );

    // The successor adds it back: it is a voter again, and its core still runs.
    let others: Vec<Node> = nodes.iter().filter(|n| n.id() != old_id).cloned().collect();
    until("a successor", Duration::from_secs(10), || {
        others.iter().any(|n| n.is_leader())
    })
    .await;
    let successor = others.iter().find(|n| n.is_leader()).unwrap().clone();
    successor
        .add_member(old_id, members[&old_id].clone())
        .await
        .expect("added back through the successor");
    old.propose(&Set("k2".into(), "v2".into()))
        .await
        .expect("the server added back writes through the successor");
}

/// A leader demoted to learner (`RemoveVoters` committed, the `RemoveNodes` that `convoy server
/// remove` sends next never sent) keeps leading for good in openraft: it must still add itself back
/// (simulated seed 7600011, where it refused forever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_demoted_to_learner_adds_itself_back() {
    let (_dirs, members, nodes) = three_servers().await;
    let old = nodes.iter().find(|n| n.is_leader()).unwrap().clone();
    let old_id = old.id();
    old.raft()
        .change_membership(ChangeMembers::RemoveVoters(BTreeSet::from([old_id])), true)
        .await
        .expect("the leader demotes itself to learner");
    // Past openraft's step-down delay and a few heartbeats: it leads still.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(old.is_leader(), "a learner leader keeps leading");
    old.add_member(old_id, members[&old_id].clone())
        .await
        .expect("the learner leader adds itself back");
    let voters: BTreeSet<u64> = old
        .raft()
        .metrics()
        .borrow_watched()
        .membership_config
        .membership()
        .voter_ids()
        .collect();
    assert!(voters.contains(&old_id), "a voter again: {voters:?}");
}
