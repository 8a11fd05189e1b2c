//! Consumer-group deployments (DEPLOYMENTS.md §8): the (consumer, resource, version) graph, its checks
//! (every dependency resolves inside the group — connectivity — and no cycle, both naming the offending path),
//! topological steps, and driving the steps one after another. Aborting one is in `group_abort.rs`.
//!
//! [`Groups`] is the family's handler for starting and driving group deployments. It borrows the group
//! deployments and their id counter, and everything [`Starts`] borrows, because each step starts its
//! deployments through that handler and reads their statuses to move on; a deployment that ends at once is
//! settled there and reported in `Cx`, and `apply` drives its group again (`ClusterState::settle`).
//! Planning is a pure read ([`plan_group`]) over the selection and the deployments.

use crate::command::{DeploymentSpec, Response};
use crate::deployment::Deployment;
use crate::entities::group_deployment::{GroupDeployment, GroupStatus, StepItem};
use crate::entities::model::{Consumer, Group, Resource};
use crate::entities::nodes::NodeTable;
use crate::entities::policy::Policy;
use crate::errors::{DomainError, Entity};
use crate::families::selection::Selection;
use crate::families::settle::Cx;
use crate::families::starts::Starts;
use crate::families::subscriptions::Holds;
use crate::values::ids::{Actor, DeploymentId, GroupDeploymentId};
use crate::values::status::Status;
use convoy_collections::CowMap;
use std::collections::{BTreeMap, BTreeSet};

struct Vertex {
    consumer: String,
    resource: String,
    version: u64,
    existing: Option<DeploymentId>,
    needs: Vec<usize>,
}

fn label(v: &Vertex) -> String {
    format!("{}/{}@{}", v.consumer, v.resource, v.version)
}

/// Plans the steps of a group deployment of `group` without changing anything: over the selection and
/// the deployments (a member's active deployment of the planned version is taken into the plan).
pub(crate) fn plan_group(
    selection: Selection<'_>,
    deployments: &CowMap<DeploymentId, Deployment>,
    group: &str,
    versions: Option<&BTreeMap<String, u64>>,
) -> Result<Vec<Vec<StepItem>>, DomainError> {
    let g = selection
        .groups
        .get(group)
        .ok_or_else(|| DomainError::not_found(Entity::Group, group))?;
    if let Some(vs) = versions {
        if let Some(r) = vs
            .keys()
            .find(|r| !g.members.iter().any(|m| &m.resource == *r))
        {
            return Err(DomainError::invalid(
                "versions",
                r,
                &format!("resource is not a member of group \"{group}\""),
            ));
        }
    }
    // Vertices: members that are not yet at their planned version.
    let mut vertices: Vec<Vertex> = Vec::new();
    let mut by_resource: BTreeMap<&str, (usize, Option<usize>, u64)> = BTreeMap::new();
    for (i, m) in g.members.iter().enumerate() {
        let res = selection
            .resources
            .get(&m.resource)
            .ok_or_else(|| DomainError::not_found(Entity::Resource, &m.resource))?;
        let member = selection.consumers.get(&m.consumer);
        let pinned = member
            .and_then(|c| c.subscriptions.get(&m.resource))
            .and_then(|s| s.pin);
        let held = |v: u64| member.is_some_and(|c| c.held(&m.resource, v));
        let version = match versions.and_then(|vs| vs.get(&m.resource)) {
            Some(v) if res.retracted(*v) => {
                return Err(DomainError::Retracted {
                    resource: m.resource.clone(),
                    version: *v,
                })
            }
            Some(v) => *v,
            // Not named: the pin, else the newest version, never one held back on the member.
            None => match pinned {
                Some(p) if held(p) => {
                    return Err(DomainError::invalid(
                        "versions",
                        &m.resource,
                        &format!(
                        "the pinned version {p} is held back on consumer \"{}\"; name a version",
                        m.consumer
                    ),
                    ))
                }
                Some(p) if !res.retracted(p) => Some(p),
                // A retracted pin (or none): the newest allowed version (below the pin).
                p => res
                    .versions
                    .range(..=p.unwrap_or(u64::MAX))
                    .rev()
                    .map(|(v, _)| *v)
                    .find(|v| !held(*v) && !res.retracted(*v)),
            }
            .ok_or_else(|| {
                DomainError::invalid(
                    "versions",
                    &m.resource,
                    "resource has no published version that is neither held back nor retracted",
                )
            })?,
        };
        if !res.versions.contains_key(&version) {
            return Err(DomainError::UnknownVersion {
                resource: m.resource.clone(),
                version,
            });
        }
        let consumer = selection
            .consumers
            .get(&m.consumer)
            .ok_or_else(|| DomainError::not_found(Entity::Consumer, &m.consumer))?;
        let existing = match consumer.active.get(&m.resource) {
            Some(id) if deployments.get(id).is_some_and(|d| d.version == version) => Some(*id),
            Some(id) => {
                return Err(DomainError::ActiveDeployment {
                    consumer: m.consumer.clone(),
                    resource: m.resource.clone(),
                    id: id.to_string(),
                })
            }
            None => None,
        };
        let vertex = if existing.is_none()
            && selection.installed_at_least(&m.consumer, &m.resource, version)
        {
            None
        } else {
            vertices.push(Vertex {
                consumer: m.consumer.clone(),
                resource: m.resource.clone(),
                version,
                existing,
                needs: Vec::new(),
            });
            Some(vertices.len() - 1)
        };
        by_resource.insert(&m.resource, (i, vertex, version));
    }
    // Edges: a vertex needs the vertex of each dependency that is not installed yet.
    #[allow(clippy::needless_range_loop)]
    for a in 0..vertices.len() {
        let deps = selection.resources[&vertices[a].resource].versions[&vertices[a].version]
            .depends_on
            .clone();
        for dep in deps {
            let edge = format!(
                "{} -> {}@{}",
                label(&vertices[a]),
                dep.resource,
                dep.version
            );
            let Some(&(mi, vertex, planned)) = by_resource.get(dep.resource.as_str()) else {
                return Err(DomainError::Dangling {
                    group: group.into(),
                    path: format!("{edge}: resource is not a member of the group"),
                });
            };
            let holder = &g.members[mi].consumer;
            if selection.installed_at_least(holder, &dep.resource, dep.version) {
                continue;
            }
            match vertex {
                Some(b) if planned >= dep.version => vertices[a].needs.push(b),
                _ => {
                    let path = format!(
                        "{} -> {holder}/{}@{}: the plan has version {planned}",
                        label(&vertices[a]),
                        dep.resource,
                        dep.version
                    );
                    return Err(DomainError::Dangling {
                        group: group.into(),
                        path,
                    });
                }
            }
        }
    }
    connected(group, g, &selection, &by_resource)?;
    // Cycles (with their path) and levels by longest chain of needs.
    let mut level: Vec<Option<usize>> = vec![None; vertices.len()];
    let mut on_stack = vec![false; vertices.len()];
    let mut stack = Vec::new();
    for v in 0..vertices.len() {
        depth(v, &vertices, &mut level, &mut on_stack, &mut stack).map_err(|path| {
            DomainError::Cycle {
                group: group.into(),
                path,
            }
        })?;
    }
    let steps_n = level.iter().flatten().map(|l| l + 1).max().unwrap_or(0);
    let mut steps: Vec<Vec<StepItem>> = vec![Vec::new(); steps_n];
    for (i, v) in vertices.iter().enumerate() {
        let item = StepItem {
            consumer: v.consumer.clone(),
            resource: v.resource.clone(),
            version: v.version,
            deployment: v.existing,
        };
        steps[level[i].expect("computed")].push(item);
    }
    Ok(steps)
}

/// Refuses a group whose members the dependency links of their planned versions (in either direction) do not
/// all connect (seed 003: the graph is checked to be connected), naming the members outside the first one's
/// part. `by_resource`: each member resource's member index and planned version.
fn connected(
    group: &str,
    g: &Group,
    selection: &Selection<'_>,
    by_resource: &BTreeMap<&str, (usize, Option<usize>, u64)>,
) -> Result<(), DomainError> {
    let n = g.members.len();
    let mut part: Vec<usize> = (0..n).collect();
    fn root(part: &mut [usize], mut i: usize) -> usize {
        while part[i] != i {
            part[i] = part[part[i]];
            i = part[i];
        }
        i
    }
    for (a, m) in g.members.iter().enumerate() {
        let Some(&(_, _, version)) = by_resource.get(m.resource.as_str()) else {
            continue;
        };
        let deps = selection.resources[&m.resource]
            .versions
            .get(&version)
            .map(|v| v.depends_on.as_slice())
            .unwrap_or_default();
        for dep in deps {
            if let Some(&(b, _, _)) = by_resource.get(dep.resource.as_str()) {
                let (ra, rb) = (root(&mut part, a), root(&mut part, b));
                part[ra] = rb;
            }
        }
    }
    if n == 0 {
        return Ok(());
    }
    let first = root(&mut part, 0);
    let apart: Vec<String> = (0..n)
        .filter(|&i| root(&mut part, i) != first)
        .map(|i| format!("{}/{}", g.members[i].consumer, g.members[i].resource))
        .collect();
    if apart.is_empty() {
        return Ok(());
    }
    let shown = apart.len().min(10);
    let mut members = apart[..shown].join(", ");
    if apart.len() > shown {
        members.push_str(&format!(" and {} more", apart.len() - shown));
    }
    members.push_str(if apart.len() == 1 { " has" } else { " have" });
    Err(DomainError::NotConnected {
        group: group.into(),
        members,
        first: format!("{}/{}", g.members[0].consumer, g.members[0].resource),
    })
}

/// `StartGroupDeployment` and driving a group deployment's steps, over the maps they read and change.
pub(crate) struct Groups<'a> {
    /// The group deployments: a new one goes here; driving moves its step and status.
    pub group_deployments: &'a mut CowMap<GroupDeploymentId, GroupDeployment>,
    /// The number of the last group deployment id given out.
    pub next_group_deployment: &'a mut u64,
    /// The resources (read: planning, starting a step).
    pub resources: &'a CowMap<String, Resource>,
    /// The groups and their members (read).
    pub groups: &'a CowMap<String, Group>,
    /// The consumers: a step's starts register there; a named version releases a hold.
    pub consumers: &'a mut CowMap<String, Consumer>,
    /// The nodes: a step's starts register there.
    pub nodes: &'a mut NodeTable,
    /// The deployments: a step's starts go here and are tagged with their group deployment.
    pub deployments: &'a mut CowMap<DeploymentId, Deployment>,
    /// The active deployments: a step's starts go here.
    pub active: &'a mut BTreeSet<DeploymentId>,
    /// The number of the last deployment id given out.
    pub next_deployment: &'a mut u64,
}

impl Groups<'_> {
    /// The handler that starts a step's deployments, over what this one borrows.
    fn starts(&mut self) -> Starts<'_> {
        Starts {
            resources: self.resources,
            groups: self.groups,
            group_deployments: self.group_deployments,
            consumers: self.consumers,
            nodes: self.nodes,
            deployments: self.deployments,
            active: self.active,
            next_deployment: self.next_deployment,
        }
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

    /// `StartGroupDeployment`: plans the steps, refuses while one of `group` runs or with overrides of
    /// non-members, releases the holds on versions named explicitly, and drives the first steps.
    pub(crate) fn start_group_deployment(
        &mut self,
        group: String,
        versions: Option<BTreeMap<String, u64>>,
        overrides: BTreeMap<String, Policy>,
        cx: &mut Cx,
    ) -> Result<Response, DomainError> {
        if let Some(running) = self
            .group_deployments
            .values()
            .find(|gd| gd.group == group && gd.status == GroupStatus::Running)
        {
            return Err(DomainError::GroupTransition {
                id: running.id.to_string(),
                status: "RUNNING".into(),
                op: format!("start another deployment of group \"{group}\" while it runs"),
            });
        }
        let steps = plan_group(
            self.selection(),
            self.deployments,
            &group,
            versions.as_ref(),
        )?;
        let members = &self.groups[&group].members;
        for (r, p) in &overrides {
            if !members.iter().any(|m| &m.resource == r) {
                return Err(DomainError::invalid(
                    "overrides",
                    r,
                    &format!("resource is not a member of group \"{group}\""),
                ));
            }
            p.validate()?;
        }
        // A version named explicitly is a person's decision: it lifts a hold on it.
        let named: Vec<(String, String, u64)> = members
            .iter()
            .filter_map(|m| {
                let v = *versions.as_ref()?.get(&m.resource)?;
                Some((m.consumer.clone(), m.resource.clone(), v))
            })
            .collect();
        *self.next_group_deployment += 1;
        let id = GroupDeploymentId(*self.next_group_deployment);
        for (c, r, v) in named {
            let why = format!("named by group deployment {id}");
            let released = Holds {
                consumers: self.consumers,
                deployments: self.deployments,
            }
            .release_hold(&c, &r, v, &why, &Actor::User, cx.at);
            cx.reconcile |= released.is_some();
        }
        let gd = GroupDeployment {
            id,
            group,
            status: GroupStatus::Running,
            current_step: 0,
            steps,
            created_at: cx.at,
            overrides,
        };
        self.group_deployments.insert(id, gd);
        for item in self.group_deployments[&id].steps.iter().flatten() {
            if let Some(d) = item.deployment {
                self.deployments.get_mut(&d).expect("active").group = Some(id);
            }
        }
        self.drive_group(id, cx);
        let steps = self.group_deployments[&id].steps.clone();
        Ok(Response::GroupDeploymentStarted { id, steps })
    }

    /// Starts the current step's deployments and moves on when all of them rolled forward.
    pub(crate) fn drive_group(&mut self, id: GroupDeploymentId, cx: &mut Cx) {
        loop {
            let Some(gd) = self.group_deployments.get(&id) else {
                return;
            };
            if gd.status != GroupStatus::Running {
                return;
            }
            let step = gd.current_step as usize;
            if step >= gd.steps.len() {
                self.group_deployments.get_mut(&id).expect("exists").status =
                    GroupStatus::Succeeded;
                return;
            }
            for k in 0..gd.steps[step].len() {
                let item = &self.group_deployments[&id].steps[step][k];
                if item.deployment.is_some() {
                    continue;
                }
                // The member subscription's policy applies, under this group deployment's override.
                let p = self.group_deployments[&id]
                    .overrides
                    .get(&item.resource)
                    .cloned()
                    .unwrap_or_default();
                let spec = DeploymentSpec {
                    consumer: item.consumer.clone(),
                    resource: item.resource.clone(),
                    version: Some(item.version),
                    strategy: p.strategy,
                    min_healthy_ms: p.min_healthy_ms,
                    max_failures_per_node: p.max_failures_per_node,
                    max_failed_nodes: p.max_failed_nodes,
                    rollback_on_failure: p.rollback_on_failure,
                    pulse_interval_ms: p.pulse_interval_ms,
                    completion: p.completion,
                    pacing: p.pacing,
                    analysis: p.analysis,
                    start_jitter_ms: None,
                    nodes: None,
                    message: Some(format!("group deployment {id} step {}", step + 1)),
                    by: Actor::System,
                    force: false,
                };
                match self
                    .starts()
                    .start_deployment(spec, Actor::System, false, cx)
                {
                    Ok(Some(d)) => {
                        self.deployments.get_mut(&d).expect("created").group = Some(id);
                        self.group_deployments.get_mut(&id).expect("exists").steps[step][k]
                            .deployment = Some(d);
                    }
                    _ => {
                        self.group_deployments.get_mut(&id).expect("exists").status =
                            GroupStatus::Failed;
                        return;
                    }
                }
            }
            let gd = &self.group_deployments[&id];
            let statuses: Vec<Status> = gd.steps[step]
                .iter()
                .filter_map(|i| i.deployment)
                .filter_map(|d| self.deployments.get(&d))
                .map(|d| d.status)
                .collect();
            if statuses
                .iter()
                .any(|s| s.is_terminal() && *s != Status::RolledForward)
            {
                self.group_deployments.get_mut(&id).expect("exists").status = GroupStatus::Failed;
                return;
            }
            if !statuses.iter().all(|s| *s == Status::RolledForward) {
                return;
            }
            self.group_deployments
                .get_mut(&id)
                .expect("exists")
                .current_step += 1;
        }
    }
}

/// Longest chain of needs below `v`; `Err(path)` on a cycle.
fn depth(
    v: usize,
    vs: &[Vertex],
    level: &mut [Option<usize>],
    on_stack: &mut [bool],
    stack: &mut Vec<usize>,
) -> Result<usize, String> {
    if let Some(l) = level[v] {
        return Ok(l);
    }
    if on_stack[v] {
        let start = stack.iter().position(|&x| x == v).unwrap_or(0);
        let mut path: Vec<String> = stack[start..].iter().map(|&x| label(&vs[x])).collect();
        path.push(label(&vs[v]));
        return Err(path.join(" -> "));
    }
    on_stack[v] = true;
    stack.push(v);
    let mut l = 0;
    for &b in &vs[v].needs {
        l = l.max(depth(b, vs, level, on_stack, stack)? + 1);
    }
    stack.pop();
    on_stack[v] = false;
    level[v] = Some(l);
    Ok(l)
}

#[cfg(test)]
#[path = "group_test.rs"]
mod tests;
