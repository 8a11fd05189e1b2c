//! Starting deployments: by hand (`StartDeployment`: the node set, its order, the from-versions) and
//! automatically (`reconcile`: strong subscriptions whose selection changed, and follow-ups of nodes left
//! behind), DEPLOYMENTS.md §4–§6.
//!
//! [`Starts`] is the family's handler. It borrows more than the others: a start reads the selection
//! (resources, consumers, nodes, groups) and, to reconcile, the running group deployments; it changes the
//! consumer (its active deployment, its subscription's last start, a hold released by hand), the nodes
//! (the deployments they are in), the deployments, the active set and the id counter. A new deployment
//! may end at once (every node already there): the handler settles it itself ([`Ending::touch`]) over
//! what it borrows, and reports it in `Cx` (`ended`, `reconcile`, the outcome) for `apply` to drive its
//! group deployment and reconcile again.

use crate::command::{DeploymentSpec, Response};
use crate::deployment::{Deployment, DeploymentNode, EventKind, NodePhase};
use crate::entities::group_deployment::{held_by_group, GroupDeployment};
use crate::entities::model::{Consumer, Group, Kept, Mode, Resource};
use crate::entities::nodes::NodeTable;
use crate::errors::ranges::parse_ranges;
use crate::errors::{check_message, DomainError, Entity};
use crate::families::reconverge::Reconverge;
use crate::families::selection::Selection;
use crate::families::settle::{Cx, Ending};
use crate::families::subscriptions::Holds;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};
use crate::values::strategy::Settings;
use convoy_collections::CowMap;
use std::collections::BTreeSet;

/// `StartDeployment`, automatic starts (`reconcile`) and the starts of group steps, over the maps they
/// read and change.
pub(crate) struct Starts<'a> {
    /// The resources a start names (read).
    pub resources: &'a CowMap<String, Resource>,
    /// The groups, where a member's dependencies must hold (read).
    pub groups: &'a CowMap<String, Group>,
    /// The group deployments; a running one that plans a member holds automatic starts back (read).
    pub group_deployments: &'a CowMap<GroupDeploymentId, GroupDeployment>,
    /// The consumers: their active deployment per resource, last starts, holds.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes: the deployments they are in.
    pub nodes: &'a mut NodeTable,
    /// The deployments, where a new one goes.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments, where a new one goes (and an ended one leaves).
    pub active: &'a mut BTreeSet<DeploymentId>,
    /// The number of the last deployment id given out.
    pub next_deployment: &'a mut u64,
}

impl Starts<'_> {
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

    /// The selection rules over the maps this handler borrows.
    fn selection(&self) -> Selection<'_> {
        Selection {
            resources: self.resources,
            consumers: self.consumers,
            nodes: self.nodes,
            groups: self.groups,
            deployments: self.deployments,
        }
    }

    /// Settles deployment `id` after a change (see [`Ending::touch`]).
    fn touch(&mut self, id: DeploymentId, cx: &mut Cx) {
        Ending {
            deployments: self.deployments,
            active: self.active,
            nodes: self.nodes,
            consumers: self.consumers,
        }
        .touch(id, cx);
    }

    /// Validates and creates a deployment. With `require_nodes`, an empty node set creates nothing (`Ok(None)`).
    pub(crate) fn start_deployment(
        &mut self,
        spec: DeploymentSpec,
        by: Actor,
        require_nodes: bool,
        cx: &mut Cx,
    ) -> Result<Option<DeploymentId>, DomainError> {
        let consumer = check_startable(self.consumers, self.resources, &spec)?;
        let version = match spec.version {
            Some(v) => v,
            None => self
                .selection()
                .selected_version(&spec.consumer, &spec.resource)
                .ok_or_else(|| {
                    DomainError::invalid(
                        "version",
                        "none",
                        &format!("resource \"{}\" has no selectable version", spec.resource),
                    )
                })?,
        };
        // A person (or a person's token) named this version.
        let person = matches!(by, Actor::User | Actor::Token(_));
        let explicit = person && spec.version == Some(version);
        if let Some(hold) = consumer
            .holds
            .get(&spec.resource)
            .and_then(|h| h.get(&version))
            .filter(|_| explicit && !spec.force)
        {
            // Deploying a held-back version is a decision: it must be said (`force`, §10).
            return Err(DomainError::Held {
                reason: hold.reason(&spec.consumer, &spec.resource, version),
            });
        }
        let (settings, ordinals) = spec_on_consumer(&spec, consumer)?;
        let mut nodes = Vec::new();
        let mut pre_done: u32 = 0;
        let (membership, deployments) = (self.selection().membership(), &*self.deployments);
        for (ordinal, nid) in consumer.nodes.iter().enumerate() {
            let ordinal = ordinal as u32;
            if ordinals.as_ref().is_some_and(|o| !o.contains(&ordinal)) {
                continue;
            }
            let Some(ns) = self.nodes.get(nid) else {
                continue;
            };
            let takes = membership.takes(ns, &spec.consumer, &spec.resource, version, deployments);
            if takes.is_err() {
                // Inactive, not interested, held back on another consumer of it or taken by another
                // consumer's active deployment of the resource (entities/membership.rs).
                continue;
            }
            let from_version = ns.current(&spec.resource);
            let phase = if from_version == Some(version) {
                pre_done += 1;
                NodePhase::Succeeded
            } else {
                NodePhase::Pending
            };
            let seen = crate::deployment::progress::seen_bits(
                version,
                from_version,
                ns.resources.get(&spec.resource),
            );
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
                s.last_selected = Some(version);
                s.version = Some(version);
            }
            return Ok(None);
        }
        *self.next_deployment += 1;
        let id = DeploymentId(*self.next_deployment);
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
                "deploy version {version} to {}",
                crate::values::count::count(d.nodes.len() as u64, "node")
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
        if explicit && c.held(&spec.resource, version) {
            // A person deploys a held-back version by hand with `force`: the decision the hold waited for.
            let why = format!("deployed by hand in {id}");
            let released = Holds {
                consumers: self.consumers,
                deployments: self.deployments,
            }
            .release_hold(&spec.consumer, &spec.resource, version, &why, &by, cx.at);
            if let Some(m) = released {
                cx.reconcile = true;
                d.push_event(cx.at, EventKind::Released, None, by, Some(m));
            }
        }
        if full {
            // What the selection was when the consumer's last deployment started: an automatic one
            // starts only when it changes from this, so a full deployment by hand of another version (a
            // hotfix past a pin) sticks until then (§4).
            let selected = match person {
                true => self
                    .selection()
                    .selected_version(&spec.consumer, &spec.resource),
                false => Some(version),
            };
            let sub = self
                .consumers
                .get_mut(&spec.consumer)
                .and_then(|c| c.subscriptions.get_mut(&spec.resource));
            if let Some(sub) = sub {
                sub.last_selected = selected;
            }
        }
        d.advance(cx.at, &Actor::System, &mut { cx.hold });
        self.deployments.insert(id, d);
        if person {
            // What it leaves on a weak subscription's nodes sticks until the selection changes (§4).
            let selected = self
                .selection()
                .selected_version(&spec.consumer, &spec.resource);
            let sub = self
                .consumers
                .get_mut(&spec.consumer)
                .and_then(|c| c.subscriptions.get_mut(&spec.resource))
                .filter(|s| s.mode == Mode::Weak);
            if let Some(sub) = sub {
                sub.kept = Some(Kept {
                    deployment: id,
                    selected,
                    nodes: BTreeSet::new(),
                });
            }
        }
        cx.outcome.deployment_started(id);
        self.touch(id, cx);
        Ok(Some(id))
    }

    /// Strong subscriptions whose selected version changed get a deployment (unless one is active, a running
    /// group deployment will deploy them, or no node could take part yet); then nodes left behind the
    /// version a strong consumer converged on get a follow-up deployment of it (`follow_up`).
    pub(crate) fn reconcile(&mut self, cx: &mut Cx) {
        let mut todo = Vec::new();
        for (cname, c) in self.consumers.iter() {
            for r in c.subscriptions.keys() {
                if let Some((v, why)) = self.changed_selection(cname, r) {
                    todo.push((cname.clone(), r.clone(), v, why));
                }
            }
        }
        for (consumer, resource, version, why) in todo {
            self.start_selected(consumer, resource, version, why, Actor::System, cx);
        }
        // Then nodes left behind the converged version get a follow-up (reconverge.rs).
        let follow_ups = Reconverge {
            selection: self.selection(),
            deployments: self.deployments,
            group_deployments: self.group_deployments,
        }
        .follow_ups();
        for (consumer, resource, follow) in follow_ups {
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

    /// A person lifted a hold (`released` says so): a strong subscription whose selection now changed
    /// deploys the selected version at once, started by that person (both deployments' events name them).
    pub(crate) fn deploy_lifted(
        &mut self,
        consumer: &str,
        resource: &str,
        released: String,
        by: Actor,
        cx: &mut Cx,
    ) {
        if let Some((version, why)) = self.changed_selection(consumer, resource) {
            let why = format!("{released}; {why}");
            self.start_selected(consumer.into(), resource.into(), version, why, by, cx);
        }
    }

    /// The version strong subscription `resource` of `cname` must be deployed to now, and why: its
    /// selection differs from the version last started, no deployment of it is active and no running
    /// group deployment will deploy it.
    fn changed_selection(&self, cname: &str, resource: &str) -> Option<(u64, String)> {
        let c = self.consumers.get(cname)?;
        let sub = c.subscriptions.get(resource)?;
        if sub.mode != Mode::Strong
            || c.active.contains_key(resource)
            || held_by_group(self.group_deployments, cname, resource)
        {
            return None;
        }
        let selection = self.selection();
        let v = selection.selected_version(cname, resource)?;
        if sub.last_started == Some(v) {
            return None;
        }
        // The selection when the last deployment started (a state from before `last_selected`: the
        // version it started). A full deployment by hand of another version sticks until this changes.
        let changed = sub.last_selected.or(sub.last_started) != Some(v);
        let retracted = sub
            .last_started
            .filter(|o| selection.is_retracted(resource, *o));
        let why = match (retracted, changed) {
            (Some(old), true) => {
                format!("version {old} of {resource} is retracted; selected version changed to {v}")
            }
            (Some(old), false) => {
                format!("version {old} of {resource} is retracted; back to selected version {v}")
            }
            (None, true) => format!("selected version changed to {v}"),
            (None, false) => return None,
        };
        Some((v, why))
    }

    /// Starts the automatic deployment of `version` (nothing when no node could take part).
    fn start_selected(
        &mut self,
        consumer: String,
        resource: String,
        version: u64,
        why: String,
        by: Actor,
        cx: &mut Cx,
    ) {
        let spec = DeploymentSpec {
            consumer,
            resource,
            version: Some(version),
            message: Some(why),
            ..DeploymentSpec::default()
        };
        let _ = self.start_deployment(spec, by, true, cx);
    }
}

/// The refusals shared by starting `spec` and planning it: a bad message, an unknown consumer or
/// resource, an active deployment of that resource there, a given version that is retracted or
/// unknown. Answers the consumer.
pub(crate) fn check_startable<'c>(
    consumers: &'c CowMap<String, Consumer>,
    resources: &CowMap<String, Resource>,
    spec: &DeploymentSpec,
) -> Result<&'c Consumer, DomainError> {
    check_message(spec.message.as_deref())?;
    let consumer = consumers
        .get(&spec.consumer)
        .ok_or_else(|| DomainError::not_found(Entity::Consumer, &spec.consumer))?;
    let res = resources
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
    let mut settings = policy.settings();
    settings.start_jitter_ms = spec.start_jitter_ms.unwrap_or(0);
    settings.validate()?;
    let ordinals = match &spec.nodes {
        Some(r) => Some(parse_ranges(r, &spec.consumer, consumer.nodes.len())?),
        None => None,
    };
    Ok((settings, ordinals))
}

#[cfg(test)]
#[path = "starts_test.rs"]
mod tests;
