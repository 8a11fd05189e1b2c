//! Strong consumers reconverge (DEPLOYMENTS.md §4): the nodes left behind the version a strong
//! consumer converged on — back from being inactive, added later, or skipped or tolerated-failed by
//! its last deployment — get a follow-up deployment of that version with the subscription's policy,
//! started automatically once no deployment of the consumer's resource is active.
//!
//! Pure reads decide ([`Reconverge::follow_up`], over borrowed maps); `reconcile` (starts.rs) starts what
//! they return.

use crate::deployment::progress::seen_bits;
use crate::deployment::{Deployment, DeploymentNode, NodePhase};
use crate::entities::group_deployment::{held_by_group, GroupDeployment};
use crate::entities::model::{Consumer, Mode, NodeState, Subscription};
use crate::families::retention::is_pruned;
use crate::families::selection::Selection;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};
use crate::values::status::Status;
use convoy_collections::CowMap;
use std::collections::{BTreeMap, BTreeSet};

/// Why a node is in a follow-up deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Behind {
    /// It holds another version and was not in the last deployment (it was inactive then).
    Returned,
    /// It holds no version and was not in the last deployment (added to the consumer later).
    Joined,
    /// The last deployment skipped it (it went inactive or lost interest during it).
    Skipped,
    /// The last deployment tolerated its failure, and its report changed since (it no longer reports
    /// the version failed).
    Failed,
    /// The last deployment ended (by its quorum or timeout) before taking it.
    LeftBehind,
    /// The last deployment brought it to the version, and it came back holding nothing or an older one.
    Reimaged,
    /// The last deployment's completion timeout caught it before it was done, and its report changed
    /// since.
    TimedOut,
}

impl Behind {
    /// The word used in the follow-up's creation event.
    pub fn word(self) -> &'static str {
        match self {
            Behind::Returned => "returned",
            Behind::Joined => "joined",
            Behind::Skipped => "skipped",
            Behind::Failed => "failed",
            Behind::LeftBehind => "left behind",
            Behind::Reimaged => "re-imaged",
            Behind::TimedOut => "timed out",
        }
    }
}

/// A follow-up deployment to start: which nodes (by ordinal) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FollowUp {
    /// The converged version the nodes are brought to.
    pub version: u64,
    /// Ordinals of the nodes, ascending (the consumer's order).
    pub ordinals: Vec<u32>,
    /// How many nodes for each reason.
    pub reasons: BTreeMap<Behind, u32>,
}

impl FollowUp {
    /// The node set as ordinal ranges (`"0-2,5"`), what a narrowed deployment takes.
    pub fn ranges(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut run: Option<(u32, u32)> = None;
        for &o in &self.ordinals {
            run = match run {
                Some((a, b)) if o == b + 1 => Some((a, o)),
                Some(done) => {
                    out.push(range_text(done));
                    Some((o, o))
                }
                None => Some((o, o)),
            };
        }
        out.extend(run.map(range_text));
        out.join(",")
    }

    /// The creation event's message, e.g. "follow-up to version 2 for 3 nodes: 2 returned, 1 skipped".
    pub fn message(&self) -> String {
        let why: Vec<String> = self
            .reasons
            .iter()
            .map(|(b, n)| format!("{n} {}", b.word()))
            .collect();
        format!(
            "follow-up to version {} for {} nodes: {}",
            self.version,
            self.ordinals.len(),
            why.join(", ")
        )
    }
}

fn range_text((a, b): (u32, u32)) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

/// The follow-up rules, reading the maps they depend on.
pub(crate) struct Reconverge<'a> {
    /// The selection (a follow-up brings nodes to the still-selected version).
    pub selection: Selection<'a>,
    /// The deployments: the nodes' active ones and each consumer's latest one.
    pub deployments: &'a CowMap<DeploymentId, Deployment>,
    /// The group deployments: a running one that plans a member deploys it instead.
    pub group_deployments: &'a CowMap<GroupDeploymentId, GroupDeployment>,
}

impl<'a> Reconverge<'a> {
    /// The follow-up deployment due for strong subscription `resource` of consumer `cname`, if any.
    ///
    /// Due when: the subscription is strong; no deployment of the resource is active on the consumer
    /// and no running group deployment will deploy it; it converged on a version that is still the
    /// selected one and the one last started (else an ordinary automatic deployment is due); the
    /// consumer's latest deployment of the resource rolled that version forward (or was a full
    /// deployment of another version the consumer converged away from without a deployment) and
    /// keeps its node list; and some active, interested node outside any active deployment of the
    /// resource runs another version for a reason in [`Behind`]. A node that reports the version
    /// failed is left to a person, and a node the latest deployment took and failed (or timed out)
    /// is retried only once its report changed since, so a broken node gets no chain of follow-ups.
    /// Canaries by hand that ended are looked past: their nodes keep the canary version.
    pub(crate) fn follow_up(&self, cname: &str, c: &Consumer, resource: &str) -> Option<FollowUp> {
        let sub: &Subscription = c.subscriptions.get(resource)?;
        if sub.mode != Mode::Strong
            || c.active.contains_key(resource)
            || held_by_group(self.group_deployments, cname, resource)
        {
            return None;
        }
        let version = sub.version?;
        if sub.last_started != Some(version)
            || self.selection.selected_version(cname, resource) != Some(version)
        {
            return None;
        }
        let behind: Vec<(u32, &str, Option<u64>)> = c
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(o, id)| {
                let ns = self.selection.nodes.get(id)?;
                let current = ns.current(resource);
                let failed_there = ns
                    .resources
                    .get(resource)
                    .and_then(|nr| nr.versions.get(&version))
                    .is_some_and(|x| x.is_failure());
                let busy = ns.deployments.iter().any(|(d, _)| {
                    self.deployments
                        .get(d)
                        .is_some_and(|d| d.resource == resource)
                });
                let lagging = ns.active
                    && ns.interested(resource)
                    && !ns.removing.contains(resource)
                    && current != Some(version)
                    && !failed_there
                    && !busy;
                lagging.then_some((o as u32, id.as_str(), current))
            })
            .collect();
        if behind.is_empty() {
            return None;
        }
        let (last, canaries) = self.latest_deployment(cname, resource);
        let known: Option<&Deployment> = match last {
            None => None,
            Some(d) if is_pruned(d) => return None,
            Some(d) if d.version == version && d.status == Status::RolledForward => Some(d),
            // Converged on `version` after it without a deployment (every node already ran it).
            Some(d) if d.version != version && d.full && d.status.is_terminal() => None,
            // An aborted, failed or rolled-back deployment of the consumer: a person decides.
            Some(_) => return None,
        };
        let nodes: BTreeMap<&str, &DeploymentNode> = known
            .map(|d| d.nodes.iter().map(|n| (n.id.as_str(), n)).collect())
            .unwrap_or_default();
        // A deployment that ended before taking some nodes left them behind, if it moved any at all (so
        // follow-ups that take nobody never chain).
        let progressed = known.is_some_and(|d| d.tally.succeeded > 0);
        let mut follow = FollowUp {
            version,
            ordinals: Vec::new(),
            reasons: BTreeMap::new(),
        };
        for (ordinal, id, current) in behind {
            // Canary nodes keep the canary version, unless they came back empty.
            if current.is_some() && canaries.contains(id) {
                continue;
            }
            let behind_version = current.is_none_or(|c| c < version);
            let ns = self.selection.nodes.get(id);
            let why = match nodes.get(id) {
                None if current.is_none() => Behind::Joined,
                None => Behind::Returned,
                Some(n) => match n.phase {
                    NodePhase::Skipped => Behind::Skipped,
                    // Retried only when its report changed since: never in a loop on a broken node.
                    // (A node the deployment timed out takes the same arm.)
                    NodePhase::Failed if reported_since(n, version, ns, resource) => Behind::Failed,
                    NodePhase::TimedOut if reported_since(n, version, ns, resource) => {
                        Behind::TimedOut
                    }
                    NodePhase::Pending
                    | NodePhase::Downloading
                    | NodePhase::Downloaded
                    | NodePhase::Installing
                    | NodePhase::Watching
                        if progressed =>
                    {
                        Behind::LeftBehind
                    }
                    NodePhase::Succeeded if behind_version => Behind::Reimaged,
                    _ => continue,
                },
            };
            follow.ordinals.push(ordinal);
            *follow.reasons.entry(why).or_default() += 1;
        }
        (!follow.ordinals.is_empty()).then_some(follow)
    }

    /// Every follow-up due now, by consumer and resource (name order).
    pub(crate) fn follow_ups(&self) -> Vec<(String, String, FollowUp)> {
        let mut out = Vec::new();
        for (cname, c) in self.selection.consumers {
            let strong: BTreeSet<&String> = c
                .subscriptions
                .iter()
                .filter(|(_, s)| s.mode == Mode::Strong)
                .map(|(r, _)| r)
                .collect();
            for r in strong {
                if let Some(f) = self.follow_up(cname, c, r) {
                    out.push((cname.clone(), r.clone(), f));
                }
            }
        }
        out
    }

    /// The newest deployment of `resource` on consumer `cname` (any status) that is not a canary by hand
    /// which ended, and the nodes those canaries (started after it) moved: a canary leaves two versions
    /// side by side and does not change what the consumer converged on.
    fn latest_deployment(
        &self,
        cname: &str,
        resource: &str,
    ) -> (Option<&'a Deployment>, BTreeSet<&'a str>) {
        let mut canaries = BTreeSet::new();
        for d in self
            .deployments
            .values()
            .rev()
            .filter(|d| d.consumer == cname && d.resource == resource)
        {
            if !is_canary(d) {
                return (Some(d), canaries);
            }
            canaries.extend(
                d.nodes
                    .iter()
                    .filter(|n| !matches!(n.phase, NodePhase::Pending | NodePhase::Skipped))
                    .map(|n| n.id.as_str()),
            );
        }
        (None, canaries)
    }
}

/// A narrowed deployment started by a person that ended (follow-ups are started by `system`).
fn is_canary(d: &Deployment) -> bool {
    let by_hand = d
        .events
        .iter()
        .next()
        .is_some_and(|e| matches!(e.by, Actor::User | Actor::Token(_)));
    !d.full && by_hand && d.status.is_terminal() && d.group.is_none()
}

/// Node `n`'s report of `resource` changed since deployment-node `n` last saw it (its facts about
/// `version` differ): a failed (or timed-out) node is retried only then.
fn reported_since(
    n: &DeploymentNode,
    version: u64,
    ns: Option<&NodeState>,
    resource: &str,
) -> bool {
    let now = seen_bits(
        version,
        n.from_version,
        ns.and_then(|ns| ns.resources.get(resource)),
    );
    now != n.seen
}

#[cfg(test)]
#[path = "reconverge_test.rs"]
mod tests;
