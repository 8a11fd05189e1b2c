//! Deleting subscriptions, consumers and groups. What a node then holds that none of its consumers
//! subscribes to gets an `uninstall` target (see `targets`). Refused (409) while a deployment of what
//! would go is active, or while a group names it.

use super::command::Response;
use super::errors::{DomainError, Entity};
use super::group_deployment::GroupStatus;
use super::state::ClusterState;

impl ClusterState {
    /// Deletes `consumer`'s subscription to `resource` and the holds on it.
    pub(crate) fn unsubscribe(
        &mut self,
        consumer: String,
        resource: String,
    ) -> Result<Response, DomainError> {
        let c = self
            .consumers
            .get(&consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &consumer))?;
        let name = format!("{consumer}/{resource}");
        if !c.subscriptions.contains_key(&resource) {
            return Err(DomainError::not_found(Entity::Subscription, name));
        }
        if let Some(id) = c.active.get(&resource) {
            return Err(DomainError::InUse {
                entity: Entity::Subscription,
                name,
                reason: format!("deployment {id} is active"),
            });
        }
        if self.held_by_group(&consumer, &resource) {
            return Err(DomainError::InUse {
                entity: Entity::Subscription,
                name,
                reason: "a running group deployment plans it".into(),
            });
        }
        let c = self.consumers.get_mut(&consumer).expect("checked");
        c.subscriptions.remove(&resource);
        c.holds.remove(&resource);
        let nodes = c.nodes.clone();
        for n in &nodes {
            self.mark_removal(n, Some(&resource));
        }
        Ok(Response::Done)
    }

    /// Deletes `name`; its nodes leave it.
    pub(crate) fn delete_consumer(&mut self, name: String) -> Result<Response, DomainError> {
        let c = self
            .consumers
            .get(&name)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &name))?;
        let in_use = |reason: String| DomainError::InUse {
            entity: Entity::Consumer,
            name: name.clone(),
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
        let c = self.consumers.remove(&name).expect("checked");
        for n in &c.nodes {
            if let Some(ns) = self.nodes.get_mut(n) {
                ns.consumers.remove(&name);
            }
            self.mark_removal(n, None);
        }
        Ok(Response::Done)
    }

    /// Marks `resource` (`None`: every resource) for removal on `node` where the node holds it and no
    /// consumer of it subscribes to it any more.
    pub(crate) fn mark_removal(&mut self, node: &str, resource: Option<&str>) {
        let Some(ns) = self.nodes.get(node) else {
            return;
        };
        let wanted = |r: &str| {
            ns.consumers.iter().any(|c| {
                self.consumers
                    .get(c)
                    .is_some_and(|c| c.subscriptions.contains_key(r))
            })
        };
        let marks: Vec<String> = ns
            .resources
            .iter()
            .map(|(r, _)| r)
            .filter(|r| resource.is_none_or(|x| x == r.as_str()))
            .filter(|r| ns.installed(r).is_some() && !wanted(r))
            .cloned()
            .collect();
        if let Some(ns) = self.nodes.get_mut(node) {
            ns.removing.extend(marks);
        }
    }

    /// A consumer of `node` subscribes to `resource` again: it is no longer to be removed there.
    pub(crate) fn unmark_removal(&mut self, node: &str, resource: &str) {
        if let Some(ns) = self.nodes.get_mut(node) {
            if !ns.removing.is_empty() {
                ns.removing.remove(resource);
            }
        }
    }

    /// Deletes group `name`.
    pub(crate) fn delete_group(&mut self, name: String) -> Result<Response, DomainError> {
        if !self.groups.contains_key(&name) {
            return Err(DomainError::not_found(Entity::Group, &name));
        }
        if let Some((id, _)) = self
            .group_deployments
            .iter()
            .find(|(_, gd)| gd.group == name && gd.status == GroupStatus::Running)
        {
            return Err(DomainError::InUse {
                entity: Entity::Group,
                name,
                reason: format!("group deployment {id} is running"),
            });
        }
        self.groups.remove(&name);
        Ok(Response::Done)
    }
}

#[cfg(test)]
#[path = "removal_test.rs"]
mod tests;
