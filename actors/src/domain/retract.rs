//! Retracting a version, like a yanked crate (DEPLOYMENTS.md §11): no selection takes it anywhere, active
//! deployments of it stop, and strong subscriptions move to the newest allowed version; and undoing that.

use super::command::Response;
use super::deployment::EventKind;
use super::errors::{check_message, DomainError, Entity};
use super::ids::{Actor, DeploymentId};
use super::model::{Retraction, Version};
use super::state::{ClusterState, Cx};

/// "version 3 of app retracted by ci: broken TLS config" (the message clipped by `check_message`).
pub(crate) fn retract_reason(
    resource: &str,
    version: u64,
    by: &Actor,
    message: Option<&str>,
) -> String {
    let mut s = format!("version {version} of {resource} retracted by {}", by.name());
    if let Some(m) = message {
        s.push_str(": ");
        s.push_str(m);
    }
    s
}

impl ClusterState {
    /// Marks `resource@version` retracted and aborts the active deployments rolling it out, with the reason
    /// as their event. Strong subscriptions then reconcile onto the newest allowed version. Retracting a
    /// retracted version changes nothing.
    pub(crate) fn retract(
        &mut self,
        resource: String,
        version: u64,
        message: Option<String>,
        by: Actor,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        check_message(message.as_deref())?;
        let v = self.version_mut(&resource, version)?;
        if v.retracted.is_some() {
            return Ok(Response::Done);
        }
        v.retracted = Some(Retraction {
            at: cx.at,
            by: by.clone(),
            message: message.clone(),
        });
        let why = retract_reason(&resource, version, &by, message.as_deref());
        let rolling: Vec<DeploymentId> = self
            .active
            .iter()
            .filter(|id| {
                self.deployments
                    .get(id)
                    .is_some_and(|d| d.resource == resource && d.version == version)
            })
            .copied()
            .collect();
        for id in rolling {
            let d = self.deployments.get_mut(&id).expect("active");
            d.push_event(
                cx.at,
                EventKind::Retracted,
                None,
                by.clone(),
                Some(why.clone()),
            );
            // A group deployment whose step this is fails with it; later steps never start.
            let _ = d.abort(cx.at, by.clone(), Some(why.clone()));
            self.touch(id, cx);
        }
        cx.reconcile = true;
        Ok(Response::Done)
    }

    /// Lifts a retraction: selection may take the version again (a strong subscription whose selection
    /// changes deploys it automatically). Unretracting a version that is not retracted changes nothing.
    pub(crate) fn unretract(
        &mut self,
        resource: String,
        version: u64,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        let v = self.version_mut(&resource, version)?;
        if v.retracted.take().is_some() {
            cx.reconcile = true;
        }
        Ok(Response::Done)
    }

    fn version_mut(&mut self, resource: &str, version: u64) -> Result<&mut Version, DomainError> {
        self.resources
            .get_mut(resource)
            .ok_or_else(|| DomainError::not_found(Entity::Resource, resource))?
            .versions
            .get_mut(&version)
            .ok_or_else(|| DomainError::UnknownVersion {
                resource: resource.into(),
                version,
            })
    }

    /// `version` of `resource` is published and retracted.
    pub(crate) fn is_retracted(&self, resource: &str, version: u64) -> bool {
        self.resources
            .get(resource)
            .is_some_and(|r| r.retracted(version))
    }
}

#[cfg(test)]
#[path = "retract_test.rs"]
mod tests;
