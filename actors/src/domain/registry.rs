//! Commands on resources, consumers, groups and node state (reports, inactivity).

use super::command::Response;
use super::errors::{check_message, check_name, DomainError, Entity};
use super::ids::DeploymentId;
use super::model::{
    Artifact, Consumer, Dependency, Group, Member, NodeReport, Resource, Version, VersionProgress,
};
use super::progress::{failure_reason, seen_bits};
use super::removal::{mark_removal, unmark_removal};
use super::seen::{Fact, Seen};
use super::state::{ClusterState, Cx};
use super::vecmap::VecMap;
use std::collections::{BTreeMap, BTreeSet};

/// What one node report means for one deployment the node is in: the typed summary `report_nodes` builds
/// before touching any deployment.
enum Effect {
    /// The node leaves the deployment, counted as skipped, for this reason.
    Skip {
        /// The node's position in the deployment.
        position: u32,
        /// Why, recorded on the skip event.
        why: &'static str,
    },
    /// The node's new facts about the deployment's versions, recorded and reacted to.
    Record {
        /// The node's position in the deployment.
        position: u32,
        /// What the merged report says (computed once the report is merged).
        seen: Seen,
        /// The node's error text when a fact is a failure.
        reason: Option<String>,
    },
}

impl Effect {
    fn skip(position: u32, why: &'static str) -> Effect {
        Effect::Skip { position, why }
    }

    fn record(position: u32) -> Effect {
        Effect::Record {
            position,
            seen: Seen::NOTHING,
            reason: None,
        }
    }
}

impl ClusterState {
    pub(crate) fn create_resource(&mut self, name: String) -> Result<Response, DomainError> {
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
        Ok(Response::Done)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn publish_version(
        &mut self,
        resource: String,
        label: Option<String>,
        artifact: Option<Artifact>,
        metadata: BTreeMap<String, String>,
        depends_on: Vec<Dependency>,
        health_port: Option<u16>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
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
            published_at: cx.at,
            retracted: None,
        };
        self.resources
            .get_mut(&resource)
            .expect("checked")
            .versions
            .insert(version, v);
        cx.reconcile = true;
        Ok(Response::VersionPublished { resource, version })
    }

    pub(crate) fn create_consumer(
        &mut self,
        name: String,
        nodes: Vec<String>,
    ) -> Result<Response, DomainError> {
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
        Ok(Response::Done)
    }

    pub(crate) fn update_consumer_nodes(
        &mut self,
        name: String,
        add: Vec<String>,
        remove: Vec<String>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        let c = self
            .consumers
            .get(&name)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &name))?;
        check_node_list(&add)?;
        let members: BTreeSet<&String> = c.nodes.iter().collect();
        if let Some(n) = add.iter().find(|n| members.contains(n)) {
            return Err(DomainError::invalid(
                "add",
                n,
                &format!("node is already in consumer \"{name}\""),
            ));
        }
        if let Some(n) = remove.iter().find(|n| !members.contains(n)) {
            return Err(DomainError::invalid(
                "remove",
                n,
                &format!("node is not in consumer \"{name}\""),
            ));
        }
        let gone: BTreeSet<String> = remove.into_iter().collect();
        let actives: Vec<DeploymentId> = c.active.values().copied().collect();
        for n in &gone {
            let positions: Vec<(DeploymentId, u32)> = match self.nodes.get_mut(n) {
                Some(ns) => {
                    ns.consumers.remove(&name);
                    ns.deployments
                        .iter()
                        .filter(|(d, _)| actives.contains(d))
                        .map(|(d, p)| (*d, *p))
                        .collect()
                }
                None => Vec::new(),
            };
            for (id, p) in positions {
                if let Some(d) = self.deployments.get_mut(&id) {
                    d.skip(p as usize, cx.at, "removed from the consumer");
                    d.advance(cx.at);
                }
                if let Some(ns) = self.nodes.get_mut(n) {
                    ns.deployments.remove(&id);
                }
                self.touch(id, cx);
            }
        }
        for n in &add {
            self.nodes
                .get_or_default(n.clone())
                .consumers
                .insert(name.clone());
        }
        let c = self.consumers.get_mut(&name).expect("checked");
        c.nodes.retain(|n| !gone.contains(n));
        c.nodes.extend(add.iter().cloned());
        let subscribed: Vec<String> = c.subscriptions.keys().cloned().collect();
        for n in &gone {
            mark_removal(&mut self.nodes, &self.consumers, n, None);
        }
        for n in &add {
            for r in &subscribed {
                unmark_removal(&mut self.nodes, n, r);
            }
        }
        cx.reconcile = true;
        Ok(Response::Done)
    }

    pub(crate) fn report_nodes(
        &mut self,
        reports: Vec<NodeReport>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        for r in &reports {
            if r.node.is_empty() || r.node.len() > 256 {
                check_name("node", &r.node)?;
            }
        }
        // Per affected deployment, in id order, what the report means for it. Inline for the usual one or two
        // deployments, so a report allocates nothing here.
        let mut affected: VecMap<DeploymentId, Effect> = VecMap::new();
        for report in reports {
            let NodeReport {
                node,
                active,
                resources,
            } = report;
            let ns = self.nodes.get_or_default(node);
            let was_active = ns.active;
            let now_active = active.unwrap_or(true);
            affected.clear();
            for (id, p) in &ns.deployments {
                let Some(d) = self.deployments.get(id) else {
                    continue;
                };
                if was_active && !now_active {
                    affected.insert(*id, Effect::skip(*p, "node became inactive"));
                } else if let Some(rr) = resources.get(&d.resource) {
                    let lost = rr.interested == Some(false) && ns.interested(&d.resource);
                    let effect = if lost {
                        Effect::skip(*p, "node lost interest in the resource")
                    } else {
                        Effect::record(*p)
                    };
                    affected.insert(*id, effect);
                }
            }
            ns.active = now_active;
            if !was_active && now_active {
                cx.reconcile = true;
            }
            for (r, rr) in resources {
                if rr.removed && !ns.removing.is_empty() {
                    ns.removing.remove(&r);
                }
                let e = ns.resources.get_or_default(r);
                if let Some(i) = rr.interested {
                    e.interested = i;
                }
                if rr.removed {
                    e.current = None;
                }
                if rr.current.is_some() {
                    e.current = rr.current;
                }
                if e.versions.iter().any(|(v, p)| {
                    p.is_failure() && !rr.versions.get(v).is_some_and(|x| x.is_failure())
                }) {
                    // A failure it no longer reports: a follow-up may take it now (reconverge.rs).
                    cx.reconcile = true;
                }
                merge_versions(&mut e.versions, rr.versions);
            }
            for (id, effect) in affected.iter_mut() {
                let Effect::Record {
                    position,
                    seen,
                    reason,
                } = effect
                else {
                    continue;
                };
                let Some(d) = self.deployments.get(id) else {
                    continue;
                };
                let nr = ns.resources.get(&d.resource);
                let from = d.nodes[*position as usize].from_version;
                *seen = seen_bits(d.version, from, nr);
                if seen.any(&[Fact::Fail, Fact::BackFail]) {
                    *reason = failure_reason(d.version, from, nr);
                }
            }
            for (&id, effect) in affected.iter_mut() {
                if let Some(d) = self.deployments.get_mut(&id) {
                    match effect {
                        Effect::Skip { position, why } => d.skip(*position as usize, cx.at, why),
                        Effect::Record {
                            position,
                            seen,
                            reason,
                        } => d.record(*position as usize, *seen, reason.take(), cx.at),
                    }
                    d.advance(cx.at);
                }
                self.touch(id, cx);
            }
        }
        Ok(Response::Done)
    }

    pub(crate) fn mark_inactive(
        &mut self,
        nodes: Vec<String>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        if let Some(n) = nodes.iter().find(|n| !self.nodes.contains_key(*n)) {
            return Err(DomainError::not_found(Entity::Node, n));
        }
        for n in nodes {
            let ns = self.nodes.get_mut(&n).expect("checked");
            if !ns.active {
                continue;
            }
            ns.active = false;
            let positions: Vec<(DeploymentId, u32)> =
                ns.deployments.iter().map(|(d, p)| (*d, *p)).collect();
            for (id, p) in positions {
                if let Some(d) = self.deployments.get_mut(&id) {
                    d.skip(p as usize, cx.at, "node stopped reporting");
                    d.advance(cx.at);
                }
                self.touch(id, cx);
            }
        }
        Ok(Response::Done)
    }

    pub(crate) fn create_group(
        &mut self,
        name: String,
        members: Vec<Member>,
    ) -> Result<Response, DomainError> {
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
        Ok(Response::Done)
    }
}

/// `*held = report` (the report replaces what the node holds). When it lists the same versions (a repeated
/// report), the held entries are overwritten in place, keeping their storage.
fn merge_versions(held: &mut VecMap<u64, VersionProgress>, report: BTreeMap<u64, VersionProgress>) {
    if held.len() == report.len() && held.keys().eq(report.keys()) {
        for ((_, h), (_, p)) in held.iter_mut().zip(report) {
            *h = p;
        }
    } else {
        held.assign_sorted(report);
    }
}

fn check_node_list(nodes: &[String]) -> Result<(), DomainError> {
    let mut seen = BTreeSet::new();
    for n in nodes {
        check_name("node", n)?;
        if !seen.insert(n) {
            return Err(DomainError::invalid("nodes", n, "a node is listed twice"));
        }
    }
    Ok(())
}
