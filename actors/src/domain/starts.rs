//! Starting deployments: by hand (`StartDeployment`: the node set, its order, the from-versions) and
//! automatically (`reconcile`: strong subscriptions whose selection changed, and follow-ups of nodes left
//! behind), DEPLOYMENTS.md §4–§6.
//!
//! These stay `impl ClusterState` rather than a handler borrowing a few maps: a start reads the selection
//! (resources, consumers, nodes, groups and group deployments), changes the consumer, the nodes, the
//! deployments, the active set and the id counter, releases a hold, and settles the new deployment at
//! once (`touch`); `reconcile` is the follow-up `apply` runs after any command that may change a
//! selection. That is nearly the whole state.

use super::command::{DeploymentSpec, Response};
use super::deployment::{Deployment, DeploymentNode, EventKind, NodePhase};
use super::errors::{check_message, DomainError, Entity};
use super::ids::{Actor, DeploymentId};
use super::model::Consumer;
use super::model::Mode;
use super::ranges::parse_ranges;
use super::settle::Cx;
use super::state::ClusterState;
use super::strategy::Settings;
use std::collections::BTreeSet;

impl ClusterState {
    /// `StartDeployment`: a deployment by hand (a person or a token names it), created even with no nodes.
    pub(crate) fn start_deployment_cmd(
        &mut self,
        spec: DeploymentSpec,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        let by = spec.by.clone();
        let id = self
            .start_deployment(spec, by, false, cx)?
            .expect("manual deployments are always created");
        let status = self.deployments[&id].status;
        Ok(Response::DeploymentStarted { id, status })
    }

    /// The refusals shared by starting `spec` and planning it: a bad message, an unknown consumer or
    /// resource, an active deployment of that resource there, a given version that is retracted or
    /// unknown. Answers the consumer.
    pub(crate) fn check_startable(&self, spec: &DeploymentSpec) -> Result<&Consumer, DomainError> {
        check_message(spec.message.as_deref())?;
        let consumer = self
            .consumers
            .get(&spec.consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &spec.consumer))?;
        let res = self
            .resources
            .get(&spec.resource)
            .ok_or_else(|| DomainError::not_found(Entity::Resource, &spec.resource))?;
        if let Some(id) = consumer.active.get(&spec.resource) {
            return Err(DomainError::ActiveDeployment {
                consumer: spec.consumer.clone(),
                resource: spec.resource.clone(),
                id: id.to_string(),
            });
        }
        match spec.version {
            Some(v) if res.retracted(v) => Err(DomainError::Retracted {
                resource: spec.resource.clone(),
                version: v,
            }),
            Some(v) if !res.versions.contains_key(&v) => Err(DomainError::UnknownVersion {
                resource: spec.resource.clone(),
                version: v,
            }),
            _ => Ok(consumer),
        }
    }

    /// Validates and creates a deployment. With `require_nodes`, an empty node set creates nothing (`Ok(None)`).
    pub(crate) fn start_deployment(
        &mut self,
        spec: DeploymentSpec,
        by: Actor,
        require_nodes: bool,
        cx: &mut Cx,
    ) -> Result<Option<DeploymentId>, DomainError> {
        let consumer = self.check_startable(&spec)?;
        let version = match spec.version {
            Some(v) => v,
            None => self
                .selected_version(&spec.consumer, &spec.resource)
                .ok_or_else(|| {
                    DomainError::invalid(
                        "version",
                        "none",
                        &format!("resource \"{}\" has no selectable version", spec.resource),
                    )
                })?,
        };
        let (settings, ordinals) = spec_on_consumer(&spec, consumer)?;
        let mut nodes = Vec::new();
        let mut pre_done: u32 = 0;
        for (ordinal, nid) in consumer.nodes.iter().enumerate() {
            let ordinal = ordinal as u32;
            if ordinals.as_ref().is_some_and(|o| !o.contains(&ordinal)) {
                continue;
            }
            let Some(ns) = self.nodes.get(nid) else {
                continue;
            };
            if !ns.active || !ns.interested(&spec.resource) {
                continue;
            }
            let from_version = ns.current(&spec.resource);
            let phase = if from_version == Some(version) {
                pre_done += 1;
                NodePhase::Succeeded
            } else {
                NodePhase::Pending
            };
            let seen =
                super::progress::seen_bits(version, from_version, ns.resources.get(&spec.resource));
            nodes.push(DeploymentNode {
                id: nid.clone(),
                ordinal,
                from_version,
                phase,
                failures: 0,
                error_seen: false,
                watch_until: None,
                seen,
            });
        }
        if require_nodes && nodes.is_empty() {
            return Ok(None);
        }
        let full = ordinals.is_none();
        if require_nodes && full && pre_done as usize == nodes.len() {
            // Automatic deployment with nothing to do: the consumer already converged on `version`.
            let s = self
                .consumers
                .get_mut(&spec.consumer)
                .and_then(|c| c.subscriptions.get_mut(&spec.resource));
            if let Some(s) = s {
                s.last_started = Some(version);
                s.version = Some(version);
            }
            return Ok(None);
        }
        self.next_deployment += 1;
        let id = DeploymentId(self.next_deployment);
        let mut d = Deployment::new(
            id,
            spec.consumer.clone(),
            spec.resource.clone(),
            version,
            settings,
            nodes,
            full,
            cx.at,
        );
        d.tally.succeeded = pre_done;
        let message = spec.message.or_else(|| {
            Some(format!(
                "deploy version {version} to {} nodes",
                d.nodes.len()
            ))
        });
        d.push_event(cx.at, EventKind::Status, None, by.clone(), message);
        for (p, n) in d.nodes.iter().enumerate() {
            if let Some(ns) = self.nodes.get_mut(&n.id) {
                ns.deployments.insert(id, p as u32);
            }
        }
        let c = self.consumers.get_mut(&spec.consumer).expect("checked");
        c.active.insert(spec.resource.clone(), id);
        if let Some(s) = c.subscriptions.get_mut(&spec.resource).filter(|_| full) {
            // A canary (narrowed node set) does not count as the consumer's deployment of `version`.
            s.last_started = Some(version);
        }
        self.active.insert(id);
        // A person (or a person's token) named this version.
        let person = matches!(by, Actor::User | Actor::Token(_));
        let explicit = person && spec.version == Some(version);
        if explicit && c.held(&spec.resource, version) {
            // A person deploys a held-back version by hand: that is the decision the hold waited for.
            let why = format!("deployed by hand in {id}");
            if let Some(m) = self.release_hold(&spec.consumer, &spec.resource, version, &why, cx) {
                d.push_event(cx.at, EventKind::Released, None, by, Some(m));
            }
        }
        d.advance(cx.at);
        self.deployments.insert(id, d);
        cx.outcome.deployment_started(id);
        self.touch(id, cx);
        Ok(Some(id))
    }

    /// Strong subscriptions whose selected version changed get a deployment (unless one is active, a running
    /// group deployment will deploy them, or no node could take part yet); then nodes left behind the
    /// version a strong consumer converged on get a follow-up deployment of it (`follow_up`).
    pub(crate) fn reconcile(&mut self, cx: &mut Cx) {
        let mut todo = Vec::new();
        for (cname, c) in &self.consumers {
            for (r, sub) in &c.subscriptions {
                if sub.mode != Mode::Strong
                    || c.active.contains_key(r)
                    || self.held_by_group(cname, r)
                {
                    continue;
                }
                if let Some(v) = self.selected_version(cname, r) {
                    if sub.last_started != Some(v) {
                        let mut why = format!("selected version changed to {v}");
                        if let Some(old) = sub.last_started.filter(|o| self.is_retracted(r, *o)) {
                            why = format!("version {old} of {r} is retracted; {why}");
                        }
                        todo.push((cname.clone(), r.clone(), v, why));
                    }
                }
            }
        }
        for (consumer, resource, version, why) in todo {
            let spec = DeploymentSpec {
                consumer,
                resource,
                version: Some(version),
                message: Some(why),
                ..DeploymentSpec::default()
            };
            let _ = self.start_deployment(spec, Actor::System, true, cx);
        }
        // Then nodes left behind the converged version get a follow-up (reconverge.rs).
        for (consumer, resource, follow) in self.follow_ups() {
            let spec = DeploymentSpec {
                consumer,
                resource,
                version: Some(follow.version),
                nodes: Some(follow.ranges()),
                message: Some(follow.message()),
                ..DeploymentSpec::default()
            };
            let _ = self.start_deployment(spec, Actor::System, true, cx);
        }
    }
}

/// The settings a deployment of `spec` runs with on `consumer` (its own policy over the
/// subscription's, validated) and the node ordinals it names (`None`: all): what a start and its
/// dry run both decide first.
pub(crate) fn spec_on_consumer(
    spec: &DeploymentSpec,
    consumer: &Consumer,
) -> Result<(Settings, Option<BTreeSet<u32>>), DomainError> {
    let policy = match consumer.subscriptions.get(&spec.resource) {
        Some(sub) => spec.policy().or(&sub.policy),
        None => spec.policy(),
    };
    let settings = policy.settings();
    settings.validate()?;
    let ordinals = match &spec.nodes {
        Some(r) => Some(parse_ranges(r, &spec.consumer, consumer.nodes.len())?),
        None => None,
    };
    Ok((settings, ordinals))
}
