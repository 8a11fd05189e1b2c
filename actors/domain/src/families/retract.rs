//! Retracting a version, like a yanked crate (DEPLOYMENTS.md §11): no selection takes it anywhere, active
//! deployments of it stop, and strong subscriptions move to the newest allowed version; and undoing that.
//!
//! A handler in the openraft style: [`Retractions`] borrows only the maps the two commands change (the
//! resources, the deployments) and the active set it reads, and reports what happened ([`Retracted`]);
//! `ClusterState::apply` settles the stopped deployments and the reconciliation.

use crate::deployment::{Deployment, EventKind};
use crate::entities::model::{Resource, Retraction, Version};
use crate::errors::{check_message, DomainError, Entity};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use convoy_collections::CowMap;
use std::collections::BTreeSet;

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

/// `RetractVersion` and `UnretractVersion`, over the maps they touch.
pub(crate) struct Retractions<'a> {
    /// The resources whose versions are marked (or unmarked) retracted.
    pub resources: &'a mut CowMap<String, Resource>,
    /// The deployments a retraction stops.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments: the only ones a retraction can stop.
    pub active: &'a BTreeSet<DeploymentId>,
}

/// What a retraction or unretraction did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Retracted {
    /// Active deployments of the version that it aborted, in id order; `apply` unregisters them (`touch`).
    pub stopped: Vec<DeploymentId>,
    /// The version's retraction changed, so selections may change: strong subscriptions reconcile.
    pub changed: bool,
}

impl Retractions<'_> {
    /// Marks `resource@version` retracted and aborts the active deployments rolling it out, with the reason
    /// as their event. Retracting a retracted version changes nothing.
    pub(crate) fn retract(
        &mut self,
        resource: &str,
        version: u64,
        message: Option<String>,
        by: Actor,
        at: Timestamp,
    ) -> Result<Retracted, DomainError> {
        check_message(message.as_deref())?;
        let v = self.version_mut(resource, version)?;
        if v.retracted.is_some() {
            return Ok(Retracted::default());
        }
        v.retracted = Some(Retraction {
            at,
            by: by.clone(),
            message: message.clone(),
        });
        let why = retract_reason(resource, version, &by, message.as_deref());
        let stopped: Vec<DeploymentId> = self
            .active
            .iter()
            .filter(|id| {
                self.deployments
                    .get(id)
                    .is_some_and(|d| d.resource == resource && d.version == version)
            })
            .copied()
            .collect();
        for id in &stopped {
            let d = self.deployments.get_mut(id).expect("active");
            d.push_event(
                at,
                EventKind::Retracted,
                None,
                by.clone(),
                Some(why.clone()),
            );
            // A group deployment whose step this is fails with it; later steps never start.
            let _ = d.abort(at, by.clone(), Some(why.clone()));
        }
        Ok(Retracted {
            stopped,
            changed: true,
        })
    }

    /// Lifts a retraction: selection may take the version again (a strong subscription whose selection
    /// changes deploys it automatically). Unretracting a version that is not retracted changes nothing.
    pub(crate) fn unretract(
        &mut self,
        resource: &str,
        version: u64,
    ) -> Result<Retracted, DomainError> {
        let v = self.version_mut(resource, version)?;
        Ok(Retracted {
            stopped: Vec::new(),
            changed: v.retracted.take().is_some(),
        })
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
}

#[cfg(test)]
#[path = "retract_test.rs"]
mod tests;
