//! Dry runs (`POST /v1/deployments?dry_run=true`): what starting a deployment would do — the version it
//! would select and why, the node set in order with the batch or wave each node falls in, the nodes left
//! out and why — computed from the state without changing it (the same rules as `families/starts.rs`: which
//! nodes a deployment takes is `entities/membership.rs::takes` for both).

use crate::command::DeploymentSpec;
use crate::errors::DomainError;
use crate::families::starts::{check_startable, spec_on_consumer};
use crate::state::ClusterState;
use crate::values::strategy::{Settings, Strategy};
use serde::{Deserialize, Serialize};

/// Why a version was chosen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionReason {
    /// The request named it.
    Given,
    /// The consumer's subscription pins it.
    Pin,
    /// The newest published version (not held back, its dependencies hold).
    Newest,
    /// Newer versions wait on a dependency, or are held back: this is the newest that may go.
    Dependency,
}

/// A newer version passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PassedOver {
    /// A published version newer than the one selected.
    pub version: u64,
    /// `held back: rolled back by d-4`, `needs db@3 on consumer "x"`.
    pub why: String,
}

/// A node the deployment would take, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlannedNode {
    /// The node's id, as listed in the consumer.
    pub id: String,
    /// Its ordinal in the consumer.
    pub ordinal: u32,
    /// The version it runs now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_version: Option<u64>,
    /// Batch (batch strategy) or wave of the install window (rolling: wave k holds the k-th
    /// `install_window` nodes still to install; wave 1 starts at once), 1-based; 0 when it already runs
    /// the version (it counts as succeeded at once).
    pub step: u32,
}

/// A node of the consumer the deployment would leave out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SkippedNode {
    /// The node's id, as listed in the consumer.
    pub id: String,
    /// Its ordinal in the consumer (its index in the consumer's node list).
    pub ordinal: u32,
    /// `outside the ordinal ranges 0-9`, `inactive`, `not interested in app`, `never reported`.
    pub why: String,
}

/// What `POST /v1/deployments?dry_run=true` answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentPlan {
    /// The consumer whose nodes it would move.
    pub consumer: String,
    /// The resource it would deploy.
    pub resource: String,
    /// The version it would deploy.
    pub version: u64,
    /// Why that version.
    pub version_reason: VersionReason,
    /// The hold on the version it would deploy (DEPLOYMENTS.md §10), "version 3 of app held back on web:
    /// rolled back by d-4": the version given (starting it needs `force`, which lifts the hold) or the
    /// one a pin selects (a pin beats a hold: it deploys without `force`, and the hold stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// Newer versions passed over, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed_over: Vec<PassedOver>,
    /// The settings it would run with (request, then subscription policy, then defaults).
    pub settings: Settings,
    /// Its nodes in order.
    pub nodes: Vec<PlannedNode>,
    /// Batches or waves, in order: how many nodes each holds.
    pub steps: Vec<u32>,
    /// Nodes of the consumer left out.
    pub skipped: Vec<SkippedNode>,
    /// The windows and budgets it would meet (issue 24; the API fills it in at its clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policies: Option<crate::views::policies::PlanPolicies>,
}

impl DeploymentPlan {
    /// What the finish estimate needs of it (`views/finish.rs`).
    pub fn planned(&self) -> crate::views::finish::Planned<'_> {
        crate::views::finish::Planned {
            consumer: &self.consumer,
            resource: &self.resource,
            steps: &self.steps,
            settings: &self.settings,
        }
    }
}

impl ClusterState {
    /// What starting `spec` would do; the same refusals as starting it (unknown consumer, resource or
    /// version, an active deployment, bad settings or ranges), and nothing changes.
    pub fn plan_deployment(&self, spec: &DeploymentSpec) -> Result<DeploymentPlan, DomainError> {
        let consumer = check_startable(self.consumer_map(), self.resource_map(), spec)?;
        let (version, version_reason, passed_over) = match spec.version {
            Some(v) => (v, VersionReason::Given, Vec::new()),
            None => self.explain_selection(&spec.consumer, &spec.resource)?,
        };
        let held = consumer
            .holds
            .get(&spec.resource)
            .and_then(|h| h.get(&version))
            .map(|h| h.reason(&spec.consumer, &spec.resource, version));
        let (settings, ordinals) = spec_on_consumer(spec, consumer)?;
        let mut nodes = Vec::new();
        let mut skipped = Vec::new();
        let (membership, deployments) = (self.selection().membership(), self.deployment_map());
        for (ordinal, nid) in consumer.nodes.iter().enumerate() {
            let ordinal = ordinal as u32;
            let skip = |why: String| SkippedNode {
                id: nid.clone(),
                ordinal,
                why,
            };
            if ordinals.as_ref().is_some_and(|o| !o.contains(&ordinal)) {
                let ranges = spec.nodes.as_deref().unwrap_or_default();
                skipped.push(skip(format!("outside the ordinal ranges {ranges:?}")));
                continue;
            }
            let Some(ns) = self.node_table().get(nid) else {
                skipped.push(skip("never reported".into()));
                continue;
            };
            let takes = membership.takes(ns, &spec.consumer, &spec.resource, version, deployments);
            if let Err(left_out) = takes {
                skipped.push(skip(left_out.why(&spec.resource, version)));
                continue;
            }
            nodes.push(PlannedNode {
                id: nid.clone(),
                ordinal,
                from_version: ns.current(&spec.resource),
                step: 0,
            });
        }
        let steps = assign_steps(&settings.strategy, version, &mut nodes);
        Ok(DeploymentPlan {
            consumer: spec.consumer.clone(),
            resource: spec.resource.clone(),
            version,
            version_reason,
            held,
            passed_over,
            settings,
            nodes,
            steps,
            skipped,
            policies: None,
        })
    }

    /// The selected version of `(consumer, resource)` with its reason and the newer versions passed over;
    /// the same choice as `selected_version`.
    fn explain_selection(
        &self,
        consumer: &str,
        resource: &str,
    ) -> Result<(u64, VersionReason, Vec<PassedOver>), DomainError> {
        let none = || {
            DomainError::invalid(
                "version",
                "none",
                &format!("resource \"{resource}\" has no selectable version"),
            )
        };
        let selected = self.selected_version(consumer, resource).ok_or_else(none)?;
        let c = self.consumer_map().get(consumer).ok_or_else(none)?;
        if c.subscriptions.get(resource).and_then(|s| s.pin) == Some(selected) {
            return Ok((selected, VersionReason::Pin, Vec::new()));
        }
        let res = self.resource_map().get(resource).ok_or_else(none)?;
        let mut passed = Vec::new();
        for v in res
            .versions
            .values()
            .rev()
            .take_while(|v| v.version > selected)
        {
            let why = if let Some(h) = c.holds.get(resource).and_then(|hs| hs.get(&v.version)) {
                format!("held back: {}", h.reason(consumer, resource, v.version))
            } else {
                let missing: Vec<String> = v
                    .depends_on
                    .iter()
                    .filter(|d| !self.selection().dependency_holds(consumer, resource, d))
                    .map(|d| {
                        format!(
                            "needs {}@{} on consumer {:?}",
                            d.resource,
                            d.version,
                            self.selection().holder(consumer, resource, &d.resource)
                        )
                    })
                    .collect();
                missing.join("; ")
            };
            passed.push(PassedOver {
                version: v.version,
                why,
            });
        }
        let reason = if passed.is_empty() {
            VersionReason::Newest
        } else {
            VersionReason::Dependency
        };
        Ok((selected, reason, passed))
    }
}

/// One member deployment of a planned group step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GroupPlanItem {
    /// The member consumer the deployment would run on.
    pub consumer: String,
    /// The member resource it would deploy.
    pub resource: String,
    /// The version it would deploy to the member's nodes.
    pub version: u64,
    /// Why that version: named in the request (`given`), the member's `pin`, or the `newest` not held back.
    pub version_reason: VersionReason,
    /// An active deployment of the member the step would wait on instead of starting one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_on: Option<crate::values::ids::DeploymentId>,
    /// The member deployment's plan (absent when it waits on an active one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<DeploymentPlan>,
}

impl ClusterState {
    /// What starting a group deployment would do: its steps (as `plan_group` orders them), each member's
    /// version and why, and each member deployment's plan with the overrides applied. Nothing changes.
    pub fn plan_group_deployment(
        &self,
        group: &str,
        versions: Option<&std::collections::BTreeMap<String, u64>>,
        overrides: &std::collections::BTreeMap<String, crate::entities::policy::Policy>,
    ) -> Result<Vec<Vec<GroupPlanItem>>, DomainError> {
        let steps = self.plan_group(group, versions)?;
        steps
            .into_iter()
            .map(|step| {
                step.into_iter()
                    .map(|item| self.plan_group_item(item, versions, overrides))
                    .collect()
            })
            .collect()
    }

    fn plan_group_item(
        &self,
        item: crate::entities::group_deployment::StepItem,
        versions: Option<&std::collections::BTreeMap<String, u64>>,
        overrides: &std::collections::BTreeMap<String, crate::entities::policy::Policy>,
    ) -> Result<GroupPlanItem, DomainError> {
        let pin = self
            .consumer_map()
            .get(&item.consumer)
            .and_then(|c| c.subscriptions.get(&item.resource))
            .and_then(|s| s.pin);
        let version_reason = if versions.is_some_and(|v| v.contains_key(&item.resource)) {
            VersionReason::Given
        } else if pin == Some(item.version) {
            VersionReason::Pin
        } else {
            VersionReason::Newest
        };
        let plan = match item.deployment {
            Some(_) => None,
            None => {
                let o = overrides.get(&item.resource).cloned().unwrap_or_default();
                let spec = DeploymentSpec {
                    consumer: item.consumer.clone(),
                    resource: item.resource.clone(),
                    version: Some(item.version),
                    strategy: o.strategy,
                    min_healthy_ms: o.min_healthy_ms,
                    max_failures_per_node: o.max_failures_per_node,
                    max_failed_nodes: o.max_failed_nodes,
                    rollback_on_failure: o.rollback_on_failure,
                    pulse_interval_ms: o.pulse_interval_ms,
                    completion: o.completion,
                    analysis: o.analysis,
                    ..DeploymentSpec::default()
                };
                Some(self.plan_deployment(&spec)?)
            }
        };
        Ok(GroupPlanItem {
            consumer: item.consumer,
            resource: item.resource,
            version: item.version,
            version_reason,
            waits_on: item.deployment,
            plan,
        })
    }
}

/// Gives each node its batch or wave (nodes already on `version` get 0) and returns the steps' sizes.
fn assign_steps(strategy: &Strategy, version: u64, nodes: &mut [PlannedNode]) -> Vec<u32> {
    let mut steps: Vec<u32> = Vec::new();
    let mut todo = 0usize;
    // Batch strategy: the batch being filled (0-based) and the nodes in it so far.
    let (mut batch, mut filled) = (0usize, 0usize);
    for n in nodes.iter_mut() {
        if n.from_version == Some(version) {
            continue;
        }
        let step = match strategy {
            Strategy::AllAtOnce { .. } => 1,
            Strategy::Rolling { install_window, .. } => {
                (todo / (*install_window).max(1) as usize) as u32 + 1
            }
            Strategy::Batch { sizes, .. } => {
                // Batch k has sizes[k] nodes, the last size repeating.
                let size = |k: usize| sizes.get(k.min(sizes.len().saturating_sub(1)));
                if filled >= size(batch).map_or(1, |s| (*s).max(1) as usize) {
                    batch += 1;
                    filled = 0;
                }
                filled += 1;
                batch as u32 + 1
            }
        };
        n.step = step;
        if steps.len() < step as usize {
            steps.resize(step as usize, 0);
        }
        steps[step as usize - 1] += 1;
        todo += 1;
    }
    steps
}

#[cfg(test)]
#[path = "plan_test.rs"]
mod tests;
