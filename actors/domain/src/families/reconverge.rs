//! Strong consumers reconverge (DEPLOYMENTS.md §4): the nodes left behind the version a strong
//! consumer converged on — back from being inactive, added later, or skipped or tolerated-failed by
//! its last deployment — get a follow-up deployment of that version with the subscription's policy,
//! started automatically once no deployment of the consumer's resource is active.
//!
//! Pure reads decide ([`Reconverge::follow_up`], over borrowed maps); `reconcile` (starts.rs) starts what
//! they return.

use crate::deployment::{Deployment, NodePhase};
use crate::entities::group_deployment::{held_by_group, GroupDeployment};
use crate::entities::model::{Consumer, Mode, Subscription};
use crate::families::retention::is_pruned;
use crate::families::selection::Selection;
use crate::values::ids::{DeploymentId, GroupDeploymentId};
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
    /// The last (full) deployment tolerated its failure; it no longer reports the version failed.
    Failed,
}

impl Behind {
    /// The word used in the follow-up's creation event.
    pub fn word(self) -> &'static str {
        match self {
            Behind::Returned => "returned",
            Behind::Joined => "joined",
            Behind::Skipped => "skipped",
            Behind::Failed => "failed",
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
    /// failed is left to a person, so a follow-up never retries a node that still says it failed;
    /// a node the latest deployment already took (succeeded, or failed in a follow-up) is left too.
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
        let last = self.latest_deployment(cname, resource);
        let known: Option<&Deployment> = match last {
            None => None,
            Some(d) if is_pruned(d) => return None,
            Some(d) if d.version == version && d.status == Status::RolledForward => Some(d),
            // Converged on `version` after it without a deployment (every node already ran it).
            Some(d) if d.version != version && d.full && d.status.is_terminal() => None,
            // A canary by hand, or an aborted, failed or rolled-back deployment: a person decides.
            Some(_) => return None,
        };
        let phases: BTreeMap<&str, NodePhase> = known
            .map(|d| d.nodes.iter().map(|n| (n.id.as_str(), n.phase)).collect())
            .unwrap_or_default();
        let full = known.is_some_and(|d| d.full);
        let mut follow = FollowUp {
            version,
            ordinals: Vec::new(),
            reasons: BTreeMap::new(),
        };
        for (ordinal, id, current) in behind {
            let why = match phases.get(id) {
                None if current.is_none() => Behind::Joined,
                None => Behind::Returned,
                Some(NodePhase::Skipped) => Behind::Skipped,
                Some(NodePhase::Failed) if full => Behind::Failed,
                Some(_) => continue,
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

    /// The newest deployment of `resource` on consumer `cname` (any status).
    fn latest_deployment(&self, cname: &str, resource: &str) -> Option<&'a Deployment> {
        self.deployments
            .values()
            .rev()
            .find(|d| d.consumer == cname && d.resource == resource)
    }
}

#[cfg(test)]
#[path = "reconverge_test.rs"]
mod tests;
