//! Membership changes through the calls convoy makes (convoy-raft's `remove_member` and
//! `add_member`): a voter is removed (demoted with `RemoveVoters`, then dropped with
//! `RemoveNodes`), and added back as a learner (`add_learner`), promoted with `AddVoterIds` only
//! once it has caught up with the leader's log. Every call goes to the leader, under a timeout; a
//! leader that may not change the membership (`convoy_raft::node::may_change_membership`, the
//! product's own check: not a voter of its own membership) refuses as "not the leader", and
//! `remove`, like `RaftNode`'s requests, tries again at the leader then seen until its deadline.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use openraft::async_runtime::WatchReceiver;
use openraft::ChangeMembers;

use super::cluster::Cluster;
use super::executor;
use super::net::SimRaft;
use super::runtime::SimRuntime;

/// Each call's timeout.
const CALL: Duration = Duration::from_secs(5);
/// How long `remove` waits before it tries again at the leader then seen (`RaftNode`'s 50 ms).
const RETRY: Duration = Duration::from_millis(50);
/// How long a learner has to catch up before it is promoted (convoy's `catch_up`).
const CATCH_UP: Duration = Duration::from_secs(10);

async fn timed<T, E: std::fmt::Display>(
    what: &str,
    call: impl Future<Output = Result<T, E>> + Send,
) -> Result<T, String> {
    match <SimRuntime as openraft::AsyncRuntime>::timeout(CALL, call).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => Err(format!("{what}: no answer in {CALL:?}")),
    }
}

fn leader(cluster: &Cluster) -> Result<(u64, SimRaft), String> {
    let id = cluster.leader().ok_or("no leader")?;
    let raft = cluster
        .net
        .raft(id)
        .ok_or_else(|| format!("leader s{id} is down"))?;
    Ok((id, raft))
}

/// Why a membership change was not made.
enum Refused {
    /// The server seen leading may not change the membership (convoy answers "not the leader").
    NotLeader(String),
    /// Any other failure (an error of openraft's, a timeout, no leader).
    Failed(String),
}

impl Refused {
    fn into_text(self) -> String {
        match self {
            Refused::NotLeader(why) | Refused::Failed(why) => why,
        }
    }
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::Failed(e)
    }
}

/// `Err` "not the leader" unless leader `id` may propose a membership change now (the product's
/// check, before each of its membership calls). The refusal says what the server sees (its state,
/// its membership and the committed one's log ids), for the trace.
fn ensure_may_change(id: u64, raft: &SimRaft) -> Result<(), Refused> {
    let metrics = raft.metrics().borrow_watched().clone();
    if convoy_raft::node::may_change_membership(&metrics) {
        return Ok(());
    }
    Err(Refused::NotLeader(format!(
        "s{id} is not the leader: not a voter of its own membership ({:?}, membership {:?} at {:?}, \
         committed {:?})",
        metrics.state,
        metrics.membership_config.membership().get_joint_config(),
        metrics.membership_config.log_id().as_ref().map(|l| l.index),
        metrics.committed_membership_config.log_id().as_ref().map(|l| l.index),
    )))
}

/// The voters in the leader's current membership.
fn voters(raft: &SimRaft) -> BTreeSet<u64> {
    raft.metrics()
        .borrow_watched()
        .membership_config
        .membership()
        .voter_ids()
        .collect()
}

/// Removes server `id` from the membership, as `convoy cluster remove` does: tried again at the
/// leader then seen while the one seen refuses as not the leader, for at most [`CALL`].
pub async fn remove(cluster: &Cluster, id: u64) -> Result<(), String> {
    let deadline = executor::now_ms() + CALL.as_millis() as u64;
    loop {
        match remove_once(cluster, id).await {
            Ok(()) => return Ok(()),
            Err(Refused::NotLeader(_)) if executor::now_ms() < deadline => {
                executor::sleep(RETRY).await;
            }
            Err(refused) => return Err(refused.into_text()),
        }
    }
}

async fn remove_once(cluster: &Cluster, id: u64) -> Result<(), Refused> {
    let (leader, raft) = leader(cluster)?;
    if voters(&raft).contains(&id) {
        ensure_may_change(leader, &raft)?;
        let one = BTreeSet::from([id]);
        timed(
            &format!("s{leader} removing voter s{id}"),
            raft.change_membership(ChangeMembers::RemoveVoters(one), false),
        )
        .await?;
    }
    let still_there = raft
        .metrics()
        .borrow_watched()
        .membership_config
        .membership()
        .get_node(&id)
        .is_some();
    if still_there {
        ensure_may_change(leader, &raft)?;
        timed(
            &format!("s{leader} removing node s{id}"),
            raft.change_membership(ChangeMembers::RemoveNodes(BTreeSet::from([id])), false),
        )
        .await?;
    }
    Ok(())
}

/// Adds server `id` back, as `convoy cluster add` does: a learner first, a voter once caught up;
/// `Ok` once the leader's membership is settled (not joint) with `id` a voter.
/// A refusal as "not the leader" is an error like another: the caller tries again later.
pub async fn add_back(cluster: &Cluster, id: u64) -> Result<(), String> {
    let (leader, raft) = leader(cluster)?;
    let joint = raft
        .metrics()
        .borrow_watched()
        .membership_config
        .membership()
        .get_joint_config()
        .len()
        > 1;
    // A joint configuration is a change left half done (its leader lost leadership in the
    // middle; openraft leaves it for the next change to finish): adding the server again
    // finishes it, as running `convoy cluster add` again would.
    if !joint && voters(&raft).contains(&id) {
        return Ok(());
    }
    let member = cluster
        .member(id)
        .ok_or_else(|| format!("no server {id}"))?;
    ensure_may_change(leader, &raft).map_err(Refused::into_text)?;
    timed(
        &format!("s{leader} adding learner s{id}"),
        raft.add_learner(id, member, false),
    )
    .await?;
    let target = raft.metrics().borrow_watched().last_log_index.unwrap_or(0);
    let caught_up = raft
        .wait(Some(CATCH_UP))
        .metrics(
            |m| {
                m.replication
                    .as_ref()
                    .and_then(|r| r.get(&id))
                    .and_then(|matched| matched.as_ref())
                    .is_some_and(|log_id| log_id.index >= target)
            },
            format!("learner {id} caught up"),
        )
        .await;
    if caught_up.is_err() {
        // Not the error's text: it carries openraft's metrics, whose instants print as wall-clock
        // times, which would make the trace differ from run to run.
        let matched = raft
            .metrics()
            .borrow_watched()
            .replication
            .as_ref()
            .and_then(|r| r.get(&id).cloned())
            .flatten()
            .map(|log_id| log_id.index);
        return Err(format!(
            "learner s{id} did not catch up within {CATCH_UP:?}: it matched {matched:?} of {target}"
        ));
    }
    ensure_may_change(leader, &raft).map_err(Refused::into_text)?;
    timed(
        &format!("s{leader} promoting s{id}"),
        raft.change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([id])), false),
    )
    .await?;
    Ok(())
}
