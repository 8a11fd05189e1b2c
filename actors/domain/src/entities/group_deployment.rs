//! A group deployment as replicated: its steps of (consumer, resource, version) items, the running step and
//! its status. Planning and driving the steps are in `group` (`plan_group`, `Groups`).

use crate::entities::policy::Policy;
use crate::values::ids::{DeploymentId, GroupDeploymentId, Timestamp};
use convoy_collections::CowMap;
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
    /// A person aborted it: the running step's active deployments are aborted with it and later
    /// steps never start.
    Aborted,
}

/// One member deployment of a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StepItem {
    /// The member consumer the deployment runs on.
    pub consumer: String,
    /// The member resource it deploys.
    pub resource: String,
    /// The version planned for the member: the one named at creation, else the pin, else the
    /// newest neither held back nor retracted.
    pub version: u64,
    /// The deployment, once started (or the already-active one it waits on).
    pub deployment: Option<DeploymentId>,
}

/// A replicated plan of steps and its progress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupDeployment {
    /// Its id (`g-N`), allocated from a counter in the replicated state.
    pub id: GroupDeploymentId,
    /// The name of the consumer group it deploys.
    pub group: String,
    /// RUNNING until every step rolled forward (SUCCEEDED), a step's deployment ends otherwise or
    /// cannot start (FAILED), or a person aborts it (ABORTED).
    pub status: GroupStatus,
    /// Index of the running step.
    pub current_step: u32,
    /// Steps, fixed at creation.
    pub steps: Vec<Vec<StepItem>>,
    /// When it was created: leader-stamped ms since the Unix epoch.
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
