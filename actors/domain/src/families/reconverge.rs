//! Strong consumers reconverge (DEPLOYMENTS.md §4): the nodes left behind the version a strong
//! consumer converged on — back from being inactive, added later, re-imaged, skipped or
//! tolerated-failed by its last deployment, or caught by a completion timeout before their turn — get a
//! follow-up deployment of that version with the subscription's policy, started automatically once no
//! deployment of the consumer's resource is active, whatever retention pruned.
//!
//! Pure reads decide ([`Reconverge::follow_up`], over borrowed maps); `reconcile` (starts.rs) starts what
//! they return.

use crate::deployment::progress::seen_bits;
use crate::deployment::{Deployment, DeploymentNode, NodePhase};
use crate::entities::group_deployment::{held_by_group, GroupDeployment};
use crate::entities::membership::Membership;
use crate::entities::model::{Consumer, Mode, NodeState, Subscription};
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
            "follow-up to version {} for {}: {}",
            self.version,
            crate::values::count::count(self.ordinals.len() as u64, "node"),
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
    /// deployment of another version the consumer converged away from without a deployment), pruned
    /// or not; and some active, interested node outside any active deployment of the resource runs
    /// another version for a reason in [`Behind`], judged by the deployment that last took it
    /// ([`Reconverge::since_converged`]). A node that reports the version failed is left to a person,
    /// and a node a deployment admitted and failed (or timed out) is retried only once its report
    /// changed since, so a broken node gets no chain of follow-ups.
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
                let busy = Membership::deployment_of(ns, resource, self.deployments).is_some();
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
            Some(d) if d.version == version && d.status == Status::RolledForward => Some(d),
            // Converged on `version` after it without a deployment (every node already ran it).
            Some(d) if d.version != version && d.full && d.status.is_terminal() => None,
            // An aborted, failed or rolled-back deployment of the consumer: a person decides.
            Some(_) => return None,
        };
        // What each node last went through: the newest of the deployments since the consumer converged
        // (the latest, and the follow-ups before it back to the full deployment) that took it. A node a
        // follow-up did not take is judged by the deployment that did, so a node that timed out or failed
        // gets no follow-up for having been left out of a later one. A pruned deployment kept its summary
        // (version, status, counts) but no node list: its nodes read as not in it (joined or returned),
        // so retention never stops a consumer from converging.
        let history = known.map(|d| self.since_converged(d)).unwrap_or_default();
        let mut nodes: BTreeMap<&str, Taken<'_>> = BTreeMap::new();
        for d in history.iter().rev() {
            // The positions it admitted to install: a node it timed out before admitting it was caught
            // before its turn, not on its way.
            let admitted: BTreeSet<u32> = d.touched.iter().copied().collect();
            let progressed = d.tally.succeeded > 0;
            for (p, n) in d.nodes.iter().enumerate() {
                let taken = Taken {
                    node: n,
                    admitted: admitted.contains(&(p as u32)),
                    progressed,
                };
                nodes.insert(n.id.as_str(), taken);
            }
        }
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
                Some(t) => match t.node.phase {
                    NodePhase::Skipped => Behind::Skipped,
                    // Retried only when its report changed since: never in a loop on a broken node.
                    NodePhase::Failed if reported_since(t.node, version, ns, resource) => {
                        Behind::Failed
                    }
                    // Caught by the completion timeout before its turn (never admitted to install):
                    // left behind, as a quorum leaves the nodes it did not take. One admitted and
                    // timed out is retried only when its report changed since, as a failed one.
                    NodePhase::TimedOut if t.progressed && !t.admitted => Behind::LeftBehind,
                    NodePhase::TimedOut if reported_since(t.node, version, ns, resource) => {
                        Behind::TimedOut
                    }
                    NodePhase::Pending
                    | NodePhase::Downloading
                    | NodePhase::Downloaded
                    | NodePhase::Installing
                    | NodePhase::Watching
                        if t.progressed =>
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

    /// `latest` (which rolled the converged version forward) and, while it is a follow-up, the
    /// deployments of the same version that rolled forward before it, back to and with the full one the
    /// consumer converged through; newest first. Canaries by hand are looked past.
    fn since_converged(&self, latest: &'a Deployment) -> Vec<&'a Deployment> {
        let mut out = vec![latest];
        if latest.full {
            return out;
        }
        for (_, d) in self.deployments.range(..latest.id).rev() {
            if d.consumer != latest.consumer || d.resource != latest.resource || is_canary(d) {
                continue;
            }
            if d.version != latest.version || d.status != Status::RolledForward {
                break;
            }
            out.push(d);
            if d.full {
                break;
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

/// A node as the deployment that last took it left it.
struct Taken<'a> {
    /// Its entry in that deployment.
    node: &'a DeploymentNode,
    /// That deployment admitted it to install.
    admitted: bool,
    /// That deployment brought at least one node to the version.
    progressed: bool,
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
