//! Commands that move nodes in and out of running deployments: a consumer's node list changing
//! (`UpdateConsumerNodes`), node reports (`ReportNodes`) and the leader marking silent nodes inactive
//! (`MarkInactive`).
//!
//! [`Reports`] is the family's handler. It borrows more than the others: the deployments it records
//! progress and skips on, the nodes (their reports, their deployments), the consumers (their node lists),
//! and the active set. The last is there because each report (or node) may end a deployment, and ending
//! it ([`Ending::touch`]: leaving the active set, the node table and the consumer, holding back a
//! rolled-back version) must happen before the next report of the same batch is acted on, which then
//! leaves the ended deployment alone. So the handler settles each deployment it changes itself, over what
//! it borrows; `apply` then drives the group deployments of those that ended (`Cx::ended`).
//!
//! A `ReportNodes` batch is merged whole, and every deployment notes what each of its nodes now holds,
//! before any report is acted on: a failure early in the batch that starts a rollback then walks back over
//! what the later nodes of the batch said (DEPLOYMENTS.md §6, "rollback order").

use crate::command::Response;
use crate::deployment::progress::{failure_reason, seen_bits};
use crate::deployment::seen::{Fact, Seen};
use crate::deployment::Deployment;
use crate::entities::model::{
    Consumer, NodeReport, NodeResource, OkSince, Resource, ResourceReport, VersionProgress,
};
use crate::entities::nodes::NodeTable;
use crate::errors::{check_name, DomainError, Entity};
use crate::families::brakes::Failure;
use crate::families::reached::{Reached, Touched};
use crate::families::registry::check_node_list;
use crate::families::removal::{mark_removal, unmark_removal};
use crate::families::settle::{Cx, Ending};
use crate::values::ids::{Actor, DeploymentId, Timestamp};
use convoy_collections::CowMap;
use convoy_collections::VecMap;
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

/// `UpdateConsumerNodes`, `ReportNodes` and `MarkInactive`, over the maps they change.
pub(crate) struct Reports<'a> {
    /// The consumers: their node lists change; an ended deployment is no longer their active one.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes: their merged reports, their consumers, the deployments they are in.
    pub nodes: &'a mut NodeTable,
    /// The deployments that record each report, skip, failure.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments; one ended by a report leaves it.
    pub active: &'a mut BTreeSet<DeploymentId>,
    /// The resources: which versions are retracted (what nodes reached, `reached.rs`).
    pub resources: &'a CowMap<String, Resource>,
}

impl Reports<'_> {
    /// Raises what the nodes of the pairs `touched` names reached (`reached.rs`).
    fn reach(&mut self, touched: Touched) {
        if touched.is_empty() {
            return;
        }
        Reached {
            consumers: self.consumers,
            nodes: self.nodes,
            resources: self.resources,
            deployments: self.deployments,
        }
        .raise(touched);
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

    /// Adds and removes nodes of consumer `name`; a removed node is skipped in the consumer's active
    /// deployments and marks for removal what no consumer of it still subscribes to.
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
                    d.skip(
                        p as usize,
                        cx.at,
                        "removed from the consumer",
                        &Actor::System,
                    );
                    d.advance(cx.at, &Actor::System, &mut { cx.hold });
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
            mark_removal(self.nodes, self.consumers, n, None);
        }
        // A node that left may have been the one on the oldest version: what the others reached rises.
        let mut touched = Touched::default();
        if !gone.is_empty() {
            for r in &subscribed {
                touched.note(&name, r, false);
            }
        }
        self.reach(touched);
        for n in &add {
            for r in &subscribed {
                unmark_removal(self.nodes, n, r);
            }
        }
        cx.reconcile = true;
        Ok(Response::Done)
    }

    /// Merges node reports into the node states and records what each means for the deployments the
    /// node is in (progress, a failure, a skip when it became inactive or lost interest). The node events
    /// a report causes name its sender (`NodeReport::by`); a silent node's skip ([`Reports::mark_inactive`])
    /// and a consumer's node list name `system`.
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
        // First every report is merged and what it means is computed; then the deployments note what each
        // node now holds before any of them acts on a report, so a failure early in the batch that starts a
        // rollback walks back over what the later nodes of the same batch reported (DEPLOYMENTS.md §6,
        // "rollback order"); then each report is acted on, in the batch's order.
        let mut pending: Vec<(Actor, VecMap<DeploymentId, Effect>)> =
            Vec::with_capacity(reports.len());
        // The (consumer, resource) pairs whose nodes changed what they run or whether they count.
        let mut touched = Touched::default();
        for report in reports {
            // Per affected deployment, in id order, what the report means for it.
            let mut affected: VecMap<DeploymentId, Effect> = VecMap::new();
            let NodeReport {
                node,
                active,
                resources,
                by,
            } = report;
            // The resources whose `current` or interest this report changes, and whether it moved back.
            let mut changed: Vec<(String, bool)> = Vec::new();
            // The node's id again, only when the report shows a failure (the brakes may count it).
            let failing = resources
                .values()
                .any(|rr| rr.versions.values().any(VersionProgress::is_failure))
                .then(|| node.clone());
            let ns = self.nodes.get_or_default(node);
            let was_active = ns.active;
            let now_active = active.unwrap_or(true);
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
            if was_active != now_active {
                changed.extend(ns.resources.keys().map(|r| (r.clone(), false)));
            }
            for (r, mut rr) in resources {
                // Named, wanted and holding nothing (no `current`, no version): the node holds nothing
                // of it, as if it said `removed` (a re-imaged machine's agent reports so).
                if holds_nothing(&rr, || ns.interested(&r)) {
                    rr.removed = true;
                }
                if rr.removed && !ns.removing.is_empty() {
                    ns.removing.remove(&r);
                }
                let before = (ns.current(&r), ns.interested(&r));
                if let Some(id) = &failing {
                    let before = ns.resources.get(&r);
                    // In a deployment of the resource when the report came (before any report of the
                    // batch is acted on, so also when this failure ends it): the deployment judges it.
                    let in_deployment = ns
                        .deployments
                        .iter()
                        .any(|(d, _)| self.deployments.get(d).is_some_and(|d| d.resource == r));
                    for (v, p) in &rr.versions {
                        let known = before
                            .and_then(|b| b.versions.get(v))
                            .is_some_and(VersionProgress::is_failure);
                        if p.is_failure() && !known {
                            // A failure it shows for the first time: the brakes count it (brakes.rs).
                            cx.failed.push(Failure {
                                node: id.clone(),
                                resource: r.clone(),
                                version: *v,
                                in_deployment,
                                ok_since: before
                                    .and_then(|b| b.ok_since)
                                    .filter(|o| o.version == *v)
                                    .map(|o| o.at),
                            });
                        }
                    }
                }
                if !ns.resources.contains_key(&r) {
                    ns.resources.insert(r.clone(), NodeResource::default());
                }
                let e = ns.resources.get_mut(&r).expect("inserted above");
                if let Some(i) = rr.interested {
                    e.interested = i;
                }
                let finished = (!rr.removed)
                    .then(|| newly_finished(&e.versions, &rr.versions))
                    .flatten();
                if rr.removed {
                    if e.current.is_some() {
                        // It came back empty (re-imaged): a follow-up may take it (reconverge.rs).
                        cx.reconcile = true;
                    }
                    e.current = None;
                }
                if rr.current.is_some() {
                    e.current = rr.current;
                }
                // Seed 003: `done` with no error is a success, so the version it finished is what it runs,
                // unless the same report says what it runs (DEPLOYMENTS.md §2).
                if let Some(v) = finished.filter(|_| rr.current.is_none()) {
                    e.current = Some(v);
                }
                if let Some(log) = rr.log {
                    e.log = Some(log);
                }
                if e.versions.iter().any(|(v, p)| {
                    p.is_failure() && !rr.versions.get(v).is_some_and(|x| x.is_failure())
                }) {
                    // A failure it no longer reports: a follow-up may take it now (reconverge.rs).
                    cx.reconcile = true;
                }
                if (e.current, e.interested) != before {
                    // Moved back: it runs an older version again (a rollback on it, a downgrade).
                    let back = e.interested
                        && now_active
                        && matches!((before.0, e.current), (Some(b), Some(a)) if a < b);
                    changed.push((r.clone(), back));
                }
                merge_versions(&mut e.versions, rr.versions);
                note_ok_since(e, cx.at);
            }
            for (r, back) in &changed {
                for cname in &ns.consumers {
                    if self
                        .consumers
                        .get(cname)
                        .is_some_and(|c| c.subscriptions.contains_key(r))
                    {
                        touched.note(cname, r, *back);
                    }
                }
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
            pending.push((by, affected));
        }
        for (id, effect) in pending.iter().flat_map(|(_, a)| a.iter()) {
            if let (Effect::Record { position, seen, .. }, Some(d)) =
                (effect, self.deployments.get_mut(id))
            {
                d.note(*position as usize, *seen);
            }
        }
        for (by, mut affected) in pending {
            for (&id, effect) in affected.iter_mut() {
                // An earlier report of the batch may have ended it: the node is no longer in it.
                if !self.active.contains(&id) {
                    continue;
                }
                if let Some(d) = self.deployments.get_mut(&id) {
                    match effect {
                        Effect::Skip { position, why } => {
                            d.skip(*position as usize, cx.at, why, &by)
                        }
                        Effect::Record {
                            position,
                            seen,
                            reason,
                        } => d.record(*position as usize, *seen, reason.take(), cx.at, &by),
                    }
                    d.advance(cx.at, &by, &mut { cx.hold });
                }
                self.touch(id, cx);
            }
        }
        self.reach(touched);
        Ok(Response::Done)
    }

    /// Marks `nodes` inactive (the leader heard nothing from them for the node timeout): each is skipped
    /// in every deployment it is in. Refused when one is unknown.
    pub(crate) fn mark_inactive(
        &mut self,
        nodes: Vec<String>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        if let Some(n) = nodes.iter().find(|n| !self.nodes.contains_key(*n)) {
            return Err(DomainError::not_found(Entity::Node, n));
        }
        let mut touched = Touched::default();
        for n in nodes {
            let ns = self.nodes.get_mut(&n).expect("checked");
            if !ns.active {
                continue;
            }
            ns.active = false;
            // It may have been the node on the oldest version: what the others reached rises.
            for r in ns.resources.keys() {
                for cname in &ns.consumers {
                    if self
                        .consumers
                        .get(cname)
                        .is_some_and(|c| c.subscriptions.contains_key(r))
                    {
                        touched.note(cname, r, false);
                    }
                }
            }
            let positions: Vec<(DeploymentId, u32)> =
                ns.deployments.iter().map(|(d, p)| (*d, *p)).collect();
            for (id, p) in positions {
                if let Some(d) = self.deployments.get_mut(&id) {
                    d.skip(p as usize, cx.at, "node stopped reporting", &Actor::System);
                    d.advance(cx.at, &Actor::System, &mut { cx.hold });
                }
                self.touch(id, cx);
            }
        }
        self.reach(touched);
        Ok(Response::Done)
    }
}

/// Whether resource report `rr` says the node holds nothing of a resource it wants (`interested`, or
/// `interested()` when the report leaves it out): no `current`, no version, and not `removed` already.
/// The report replaces what the node holds, `current` included (DEPLOYMENTS.md §4, "re-imaged"); a
/// report of `interested: false` alone keeps it, for the uninstall it leads to.
pub(crate) fn holds_nothing(rr: &ResourceReport, interested: impl FnOnce() -> bool) -> bool {
    !rr.removed
        && rr.current.is_none()
        && rr.versions.is_empty()
        && rr.interested.unwrap_or_else(interested)
}

/// Since when the node has run its current version done and healthy: set by the first report that shows
/// it so, kept while it runs that version (a later failure of it does not reset it), dropped when it runs
/// another version or none.
fn note_ok_since(e: &mut NodeResource, at: Timestamp) {
    let Some(current) = e.current else {
        e.ok_since = None;
        return;
    };
    if e.ok_since.is_some_and(|o| o.version == current) {
        return;
    }
    let ok = e.versions.get(&current).is_some_and(VersionProgress::is_ok);
    e.ok_since = ok.then_some(OkSince {
        version: current,
        at,
    });
}

/// `*held = report` (the report replaces what the node holds). When it lists the same versions (a repeated
/// report), the held entries are overwritten in place, keeping their storage.
/// The newest version `report` shows done without error and healthy that `held` (the node's last report) did
/// not: an install it finished in this report.
fn newly_finished(
    held: &VecMap<u64, VersionProgress>,
    report: &BTreeMap<u64, VersionProgress>,
) -> Option<u64> {
    report
        .iter()
        .rev()
        .find(|(v, p)| p.is_ok() && !held.get(v).is_some_and(VersionProgress::is_ok))
        .map(|(v, _)| *v)
}

fn merge_versions(held: &mut VecMap<u64, VersionProgress>, report: BTreeMap<u64, VersionProgress>) {
    if held.len() == report.len() && held.keys().eq(report.keys()) {
        for ((_, h), (_, p)) in held.iter_mut().zip(report) {
            *h = p;
        }
    } else {
        held.assign_sorted(report);
    }
}

#[cfg(test)]
#[path = "reports_test.rs"]
mod tests;
