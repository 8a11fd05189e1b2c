//! Membership changes on a simulated cluster, driven step by step: a leader that removed itself
//! keeps leading for a while (openraft's `removed_leader_step_down`); a change sent to it then
//! failed openraft's assertion "Only leader is allowed to call update_effective_membership()"
//! (seeds 7000012, 7000038 and 1085), and is now refused as "not the leader". A leader demoted to
//! learner keeps leading for good, and may still change the membership (seed 7600011).

use std::collections::BTreeSet;
use std::time::Duration;

use openraft::async_runtime::WatchReceiver;
use openraft::{ChangeMembers, ServerState};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::cluster::Cluster;
use super::disk::FsyncModel;
use super::executor;
use super::membership;
use super::net::SimNet;
use super::observe::Observations;
use super::runtime;

/// Three servers founded from s1, which leads once this returns.
async fn founded() -> Cluster {
    let obs = Observations::new(false);
    let net = SimNet::new(StdRng::seed_from_u64(5));
    let mut cluster = Cluster::new(3, FsyncModel::Honest, net, obs).expect("cluster");
    for id in cluster.ids() {
        cluster.start(id).await.expect("start");
    }
    cluster.initialize(1).await.expect("initialize");
    while cluster.leader() != Some(1) {
        executor::sleep(Duration::from_millis(10)).await;
    }
    cluster
}

/// The voters of server `id`'s effective membership.
fn voters(cluster: &Cluster, id: u64) -> BTreeSet<u64> {
    let raft = cluster.net.raft(id).expect("up");
    let metrics = raft.metrics();
    let m = metrics.borrow_watched();
    m.membership_config.membership().voter_ids().collect()
}

/// Runs `test` on a fresh simulation.
fn simulate(test: impl std::future::Future<Output = ()> + 'static) {
    executor::reset();
    runtime::seed_rng(13);
    let result = executor::block_on(test);
    executor::reset();
    result.expect("the simulation stalled");
}

/// The window, pinned down on openraft itself: once the leader s1 has removed itself (the call
/// convoy makes), it still says it leads, with a membership it is not in; the shared check refuses
/// it membership changes (openraft would accept one and fail its assertion), and allows them to a
/// voter.
#[test]
fn a_leader_that_removed_itself_still_leads_and_may_not_change_the_membership() {
    simulate(async {
        let cluster = founded().await;
        let s1 = cluster.net.raft(1).expect("s1 up");
        // Demoted without being kept as a learner (`retain` false): out of the membership at once,
        // so convoy's `RemoveNodes` that follows is skipped.
        s1.change_membership(ChangeMembers::RemoveVoters(BTreeSet::from([1])), false)
            .await
            .expect("s1 removes itself");
        let metrics = s1.metrics().borrow_watched().clone();
        assert_eq!(metrics.state, ServerState::Leader, "s1 still leads");
        assert_eq!(metrics.current_leader, Some(1));
        assert!(
            metrics
                .membership_config
                .membership()
                .get_node(&1)
                .is_none(),
            "s1 is out of its own membership: {:?}",
            metrics.membership_config
        );
        assert!(!convoy_raft::node::may_change_membership(&metrics));
        let s2 = cluster.net.raft(2).expect("s2 up");
        assert!(convoy_raft::node::may_change_membership(
            &s2.metrics().borrow_watched()
        ));
    });
}

/// Seed 7000012's course in a few steps: the leader s1 is removed through the harness's calls
/// (convoy's), then added back at once, tried again each second as the fault does. The add went
/// to s1, still leading, and openraft panicked; now s1 refuses it as not the leader and the
/// successor adds s1 back as a voter.
#[test]
fn a_removed_leader_added_back_at_once_becomes_a_voter_again() {
    simulate(async {
        let cluster = founded().await;
        membership::remove(&cluster, 1).await.expect("s1 removed");
        let successor = cluster.leader().expect("a leader");
        assert!(
            !voters(&cluster, successor).contains(&1),
            "s1 is out of s{successor}'s membership"
        );
        let mut refusals = Vec::new();
        for _ in 0..20 {
            match membership::add_back(&cluster, 1).await {
                Ok(()) => break,
                Err(e) => refusals.push(e),
            }
            executor::sleep(Duration::from_secs(1)).await;
        }
        let leader = cluster.leader().expect("a leader");
        assert!(
            voters(&cluster, leader).contains(&1),
            "s1 is a voter of s{leader}'s membership again (refused: {refusals:?})"
        );
    });
}

/// Seed 7600011's course: `RemoveVoters` of the leader s1 commits but the `RemoveNodes` that
/// `convoy cluster remove` sends next never comes (the call timed out while a voter was down), so s1
/// is a learner of its own committed membership. openraft keeps such a leader leading for good (its
/// step-down acts only on a leader out of the membership), so it must stay able to change the
/// membership: it adds itself back as a voter. A check that admitted voters only refused it forever.
#[test]
fn a_leader_demoted_to_learner_keeps_leading_and_adds_itself_back() {
    simulate(async {
        let cluster = founded().await;
        let s1 = cluster.net.raft(1).expect("s1 up");
        s1.change_membership(ChangeMembers::RemoveVoters(BTreeSet::from([1])), true)
            .await
            .expect("s1 demotes itself to learner");
        // Longer than openraft's step-down delay and a heartbeat: s1 still leads.
        executor::sleep(Duration::from_secs(2)).await;
        let metrics = s1.metrics().borrow_watched().clone();
        assert_eq!(metrics.state, ServerState::Leader, "s1 still leads");
        assert_eq!(
            metrics.committed_membership_config, metrics.membership_config,
            "its demotion is committed"
        );
        assert!(!voters(&cluster, 1).contains(&1), "s1 is no voter");
        assert!(convoy_raft::node::may_change_membership(&metrics));
        membership::add_back(&cluster, 1)
            .await
            .expect("s1 adds itself back");
        let leader = cluster.leader().expect("a leader");
        assert!(
            voters(&cluster, leader).contains(&1),
            "s1 is a voter of s{leader}'s membership again"
        );
    });
}
