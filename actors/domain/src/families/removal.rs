//! Deleting subscriptions, consumers and groups. What a node then holds that none of its consumers
//! subscribes to gets an `uninstall` target (see `targets`). Refused (409) while a deployment of what
//! would go is active, or while a group names it.
//!
//! [`Removal`] is the family's handler: it borrows the consumers, the nodes and the groups (the maps the
//! three commands change) and reads the group deployments. None of them starts or ends a deployment, so
//! there is nothing for `apply` to settle: each answers `Ok(())` or refuses. Marking and unmarking a
//! node's removals are free functions here, also called when a consumer's nodes or subscriptions change.

use crate::entities::group_deployment::{GroupDeployment, GroupStatus};
use crate::entities::membership::Membership;
use crate::entities::model::{Consumer, Group};
use crate::entities::nodes::NodeTable;
use crate::errors::{DomainError, Entity};
use crate::values::ids::GroupDeploymentId;
use convoy_collections::CowMap;

/// `Unsubscribe`, `DeleteConsumer` and `DeleteGroup`, over the maps they touch.
pub(crate) struct Removal<'a> {
    /// The consumers whose subscriptions (or who themselves) go.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes that leave a deleted consumer and mark what they no longer need for removal.
    pub nodes: &'a mut NodeTable,
    /// The groups: one goes, and a member consumer may not.
    pub groups: &'a mut CowMap<String, Group>,
    /// The group deployments: a running one keeps its group and what it plans.
    pub group_deployments: &'a CowMap<GroupDeploymentId, GroupDeployment>,
}

impl Removal<'_> {
    /// Deletes `consumer`'s subscription to `resource`. Its holds stay: a hold keeps a known-bad version
    /// off the consumer's nodes until a person lifts it (DEPLOYMENTS.md §10), also across a re-subscription.
    pub(crate) fn unsubscribe(
        &mut self,
        consumer: &str,
        resource: &str,
    ) -> Result<(), DomainError> {
        let c = self
            .consumers
            .get(consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, consumer))?;
        let name = format!("{consumer}/{resource}");
        if !c.subscriptions.contains_key(resource) {
            return Err(DomainError::not_found(Entity::Subscription, name));
        }
        if let Some(id) = c.active.get(resource) {
            return Err(DomainError::InUse {
                entity: Entity::Subscription,
                name,
                reason: format!("deployment {id} is active"),
            });
        }
        if self
            .group_deployments
            .values()
            .any(|gd| gd.plans(consumer, resource))
        {
            return Err(DomainError::InUse {
                entity: Entity::Subscription,
                name,
                reason: "a running group deployment plans it".into(),
            });
        }
        let c = self.consumers.get_mut(consumer).expect("checked");
        c.subscriptions.remove(resource);
        let nodes = c.nodes.clone();
        for n in &nodes {
            mark_removal(self.nodes, self.consumers, n, Some(resource));
        }
        Ok(())
    }

    /// Deletes `name`; its nodes leave it.
    pub(crate) fn delete_consumer(&mut self, name: &str) -> Result<(), DomainError> {
        let c = self
            .consumers
            .get(name)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, name))?;
        let in_use = |reason: String| DomainError::InUse {
            entity: Entity::Consumer,
            name: name.to_string(),
            reason,
        };
        if let Some((r, id)) = c.active.iter().next() {
            return Err(in_use(format!("deployment {id} of {r} is active")));
        }
        if let Some(g) = self
            .groups
            .values()
            .find(|g| g.members.iter().any(|m| m.consumer == name))
        {
            return Err(in_use(format!("it is a member of group \"{}\"", g.name)));
        }
        let c = self.consumers.remove(name).expect("checked");
        for n in &c.nodes {
            if let Some(ns) = self.nodes.get_mut(n) {
                ns.consumers.remove(name);
            }
            mark_removal(self.nodes, self.consumers, n, None);
        }
        Ok(())
    }

    /// Deletes group `name`.
    pub(crate) fn delete_group(&mut self, name: &str) -> Result<(), DomainError> {
        if !self.groups.contains_key(name) {
            return Err(DomainError::not_found(Entity::Group, name));
        }
        if let Some((id, _)) = self
            .group_deployments
            .iter()
            .find(|(_, gd)| gd.group == name && gd.status == GroupStatus::Running)
        {
            return Err(DomainError::InUse {
                entity: Entity::Group,
                name: name.to_string(),
                reason: format!("group deployment {id} is running"),
            });
        }
        self.groups.remove(name);
        Ok(())
    }
}

/// Marks `resource` (`None`: every resource) for removal on `node` where the node holds it and no
/// consumer of it subscribes to it any more.
pub(crate) fn mark_removal(
    nodes: &mut NodeTable,
    consumers: &CowMap<String, Consumer>,
    node: &str,
    resource: Option<&str>,
) {
    let Some(ns) = nodes.get(node) else {
        return;
    };
    let membership = Membership { consumers };
    let marks: Vec<String> = ns
        .resources
        .iter()
        .map(|(r, _)| r)
        .filter(|r| resource.is_none_or(|x| x == r.as_str()))
        .filter(|r| ns.installed(r).is_some() && !membership.wanted(ns, r))
        .cloned()
        .collect();
    if let Some(ns) = nodes.get_mut(node) {
        ns.removing.extend(marks);
    }
}

/// A consumer of `node` subscribes to `resource` again: it is no longer to be removed there.
pub(crate) fn unmark_removal(nodes: &mut NodeTable, node: &str, resource: &str) {
    if let Some(ns) = nodes.get_mut(node) {
        if !ns.removing.is_empty() {
            ns.removing.remove(resource);
        }
    }
}

#[cfg(test)]
#[path = "removal_test.rs"]
mod tests;
