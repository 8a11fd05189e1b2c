//! Commands that create the catalogue: resources and their versions, consumers, groups.
//!
//! [`Registry`] is the family's handler: it borrows the resources, the consumers, the nodes (a new
//! consumer's nodes join it) and the groups, and none of its commands starts or ends a deployment. A
//! published version may change selections, so `apply` reconciles after it. Changing a consumer's node
//! list and node reports move nodes out of running deployments, so they live in `reports.rs`.

use crate::entities::model::{Artifact, Consumer, Dependency, Group, Member, Resource, Version};
use crate::entities::nodes::NodeTable;
use crate::errors::{check_message, check_name, DomainError, Entity};
use crate::values::ids::Timestamp;
use convoy_collections::CowMap;
use std::collections::{BTreeMap, BTreeSet};

/// `CreateResource`, `PublishVersion`, `CreateConsumer` and `CreateGroup`, over the maps they touch.
pub(crate) struct Registry<'a> {
    /// The resources created, and given versions.
    pub resources: &'a mut CowMap<String, Resource>,
    /// The consumers created (and that a group's members must name).
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes a new consumer names, which join it.
    pub nodes: &'a mut NodeTable,
    /// The groups created.
    pub groups: &'a mut CowMap<String, Group>,
}

impl Registry<'_> {
    /// Creates resource `name`, with no versions yet.
    pub(crate) fn create_resource(&mut self, name: String) -> Result<(), DomainError> {
        check_name("resource", &name)?;
        if self.resources.contains_key(&name) {
            return Err(DomainError::AlreadyExists {
                entity: Entity::Resource,
                name,
            });
        }
        self.resources.insert(
            name.clone(),
            Resource {
                name,
                versions: BTreeMap::new(),
            },
        );
        Ok(())
    }

    /// Publishes the next version of `resource` (one more than its newest) at `at`; answers its number.
    /// Its dependencies must name published versions of other resources.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn publish_version(
        &mut self,
        resource: String,
        label: Option<String>,
        artifact: Option<Artifact>,
        metadata: BTreeMap<String, String>,
        depends_on: Vec<Dependency>,
        health_port: Option<u16>,
        at: Timestamp,
    ) -> Result<u64, DomainError> {
        check_message(label.as_deref())?;
        let res = self
            .resources
            .get(&resource)
            .ok_or_else(|| DomainError::not_found(Entity::Resource, &resource))?;
        for dep in &depends_on {
            if dep.resource == resource {
                return Err(DomainError::invalid(
                    "depends_on",
                    &dep.resource,
                    "a version cannot depend on its own resource",
                ));
            }
            let target = self
                .resources
                .get(&dep.resource)
                .ok_or_else(|| DomainError::not_found(Entity::Resource, &dep.resource))?;
            if !target.versions.contains_key(&dep.version) {
                return Err(DomainError::UnknownVersion {
                    resource: dep.resource.clone(),
                    version: dep.version,
                });
            }
        }
        let version = res.newest().unwrap_or(0) + 1;
        let v = Version {
            version,
            label,
            artifact,
            metadata,
            depends_on,
            health_port,
            published_at: at,
            retracted: None,
        };
        self.resources
            .get_mut(&resource)
            .expect("checked")
            .versions
            .insert(version, v);
        Ok(version)
    }

    /// Creates consumer `name` with `nodes` (each joins it; an unknown node gets a state).
    pub(crate) fn create_consumer(
        &mut self,
        name: String,
        nodes: Vec<String>,
    ) -> Result<(), DomainError> {
        check_name("consumer", &name)?;
        if self.consumers.contains_key(&name) {
            return Err(DomainError::AlreadyExists {
                entity: Entity::Consumer,
                name,
            });
        }
        check_node_list(&nodes)?;
        for n in &nodes {
            self.nodes
                .get_or_default(n.clone())
                .consumers
                .insert(name.clone());
        }
        self.consumers.insert(
            name.clone(),
            Consumer {
                name,
                nodes: nodes.into(),
                ..Consumer::default()
            },
        );
        Ok(())
    }

    /// Creates group `name` of `members` (each an existing consumer and resource, a resource at most once).
    pub(crate) fn create_group(
        &mut self,
        name: String,
        members: Vec<Member>,
    ) -> Result<(), DomainError> {
        check_name("group", &name)?;
        if self.groups.contains_key(&name) {
            return Err(DomainError::AlreadyExists {
                entity: Entity::Group,
                name,
            });
        }
        if members.is_empty() {
            return Err(DomainError::invalid(
                "members",
                "[]",
                "a group needs at least one member",
            ));
        }
        let mut seen = BTreeSet::new();
        for m in &members {
            if !self.consumers.contains_key(&m.consumer) {
                return Err(DomainError::not_found(Entity::Consumer, &m.consumer));
            }
            if !self.resources.contains_key(&m.resource) {
                return Err(DomainError::not_found(Entity::Resource, &m.resource));
            }
            if !seen.insert(&m.resource) {
                return Err(DomainError::invalid(
                    "members",
                    &m.resource,
                    "a resource appears at most once in a group",
                ));
            }
        }
        self.groups.insert(name.clone(), Group { name, members });
        Ok(())
    }
}

/// Refuses a node list with an invalid id or an id listed twice.
pub(crate) fn check_node_list(nodes: &[String]) -> Result<(), DomainError> {
    let mut seen = BTreeSet::new();
    for n in nodes {
        check_name("node", n)?;
        if !seen.insert(n) {
            return Err(DomainError::invalid("nodes", n, "a node is listed twice"));
        }
    }
    Ok(())
}
