//! Aborting a running group deployment (`AbortGroupDeployment`): it ends ABORTED and its running step's
//! active deployments are aborted with it; later steps never start.
//!
//! [`GroupAbort`] is the handler: it borrows the group deployments and the deployments (the two maps the
//! command changes) and reports the deployments of the running step ([`GroupAborted`]); `apply` settles
//! them (`touch`) and records in the outcome that the group deployment ended.

use crate::deployment::Deployment;
use crate::entities::group_deployment::{GroupDeployment, GroupStatus};
use crate::errors::{DomainError, Entity};
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId, Timestamp};
use convoy_collections::CowMap;

/// `AbortGroupDeployment`, over the maps it touches.
pub(crate) struct GroupAbort<'a> {
    /// The group deployments; the aborted one changes status.
    pub group_deployments: &'a mut CowMap<GroupDeploymentId, GroupDeployment>,
    /// The deployments of its running step, aborted with it.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
}

/// What aborting a group deployment did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupAborted {
    /// The deployments of the running step, in step order (the active ones aborted); `apply` settles
    /// each (`touch`). Empty when the group deployment was aborted already.
    pub stopped: Vec<DeploymentId>,
}

impl GroupAbort<'_> {
    /// Aborts group deployment `id` at `at`. Aborting an aborted one changes nothing; a finished one
    /// (succeeded, failed) is refused.
    pub(crate) fn abort(
        &mut self,
        id: GroupDeploymentId,
        by: Actor,
        at: Timestamp,
    ) -> Result<GroupAborted, DomainError> {
        let gd = self
            .group_deployments
            .get(&id)
            .ok_or_else(|| DomainError::not_found(Entity::GroupDeployment, id))?;
        match gd.status {
            GroupStatus::Aborted => return Ok(GroupAborted::default()),
            GroupStatus::Running => {}
            other => {
                let status = serde_name(other);
                return Err(DomainError::GroupTransition {
                    id: id.to_string(),
                    status,
                    op: "abort a finished group deployment".into(),
                });
            }
        }
        let step = gd.current_step as usize;
        let running: Vec<_> = gd
            .steps
            .get(step)
            .into_iter()
            .flatten()
            .filter_map(|i| i.deployment)
            .collect();
        self.group_deployments.get_mut(&id).expect("exists").status = GroupStatus::Aborted;
        for d in &running {
            if let Some(dep) = self.deployments.get_mut(d) {
                if dep.status.is_active() {
                    let _ = dep.abort(
                        at,
                        by.clone(),
                        Some(format!("group deployment {id} aborted")),
                    );
                }
            }
        }
        Ok(GroupAborted { stopped: running })
    }
}

fn serde_name(s: GroupStatus) -> String {
    match s {
        GroupStatus::Running => "RUNNING",
        GroupStatus::Succeeded => "SUCCEEDED",
        GroupStatus::Failed => "FAILED",
        GroupStatus::Aborted => "ABORTED",
    }
    .into()
}
