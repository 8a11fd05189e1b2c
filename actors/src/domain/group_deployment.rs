//! A group deployment as replicated: its steps of (consumer, resource, version) items, the running step and
//! its status. Planning and driving the steps are in `group` (`plan_group`, `Groups`).

use super::cow::CowMap;
use super::ids::{DeploymentId, GroupDeploymentId, Timestamp};
use super::policy::Policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Status of a group deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GroupStatus {
    /// Steps in progress.
    Running,
    /// Every step succeeded.
    Succeeded,
    /// A step failed.
    Failed,
    /// Aborted.
    Aborted,
}

/// One member deployment of a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StepItem {
    /// Consumer.
    pub consumer: String,
    /// Resource.
    pub resource: String,
    /// Version.
    pub version: u64,
    /// The deployment, once started (or the already-active one it waits on).
    pub deployment: Option<DeploymentId>,
}

/// A replicated plan of steps and its progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupDeployment {
    /// Id.
    pub id: GroupDeploymentId,
    /// Group.
    pub group: String,
    /// Status.
    pub status: GroupStatus,
    /// Index of the running step.
    pub current_step: u32,
    /// Steps, fixed at creation.
    pub steps: Vec<Vec<StepItem>>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Per member resource, settings that win over the member subscription's policy.
    #[serde(default)]
    pub overrides: BTreeMap<String, Policy>,
}

impl GroupDeployment {
    /// Whether it is running and one of its steps deploys `resource` on `consumer` (it will deploy it).
    pub(crate) fn plans(&self, consumer: &str, resource: &str) -> bool {
        self.status == GroupStatus::Running
            && self
                .steps
                .iter()
                .flatten()
                .any(|i| i.consumer == consumer && i.resource == resource)
    }
}

/// (consumer, resource) is planned in a running group deployment of `group_deployments`, which will
/// deploy it (so no automatic deployment starts for it meanwhile).
pub(crate) fn held_by_group(
    group_deployments: &CowMap<GroupDeploymentId, GroupDeployment>,
    consumer: &str,
    resource: &str,
) -> bool {
    group_deployments
        .values()
        .any(|gd| gd.plans(consumer, resource))
}
