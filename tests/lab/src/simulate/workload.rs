//! The seeded workload: what people and agents ask of the cluster. Resources and versions (some
//! depending on another resource's version), consumers of simulated nodes, weak and strong
//! subscriptions, deployments of every strategy (some coordinated by pulses), pause, resume, abort
//! and rollback; groups and their group deployments (started and aborted), versions retracted and
//! unretracted, subscriptions removed (the nodes uninstall), node churn (nodes added to and
//! removed from consumers); and the agents themselves, convoy-node's pure [`SimNode`]s, following
//! the targets a server answers and reporting their progress, some failing installs; now and then a
//! disruption budget or fleet-wide limits (drawn from a stream of their own).

use std::collections::BTreeMap;
use std::time::Duration;

use convoy_actors::domain::{
    Actor, Budget, ClusterState, Command, Dependency, DeploymentId, DeploymentSpec, FailedNodes,
    FleetLimits, LimitSource, Member, Mode, NodeReport, Policy, Strategy,
};
use convoy_node::sim::{Behaviour, SimNode};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The most consumers, resources and nodes per consumer a run creates (bounds the state).
const MAX_RESOURCES: usize = 6;
const MAX_CONSUMERS: usize = 4;
const MAX_NODES: usize = 8;
const MAX_GROUPS: usize = 3;

/// The client side of the workload: a model of what it created, and the agents.
pub struct Workload {
    rng: StdRng,
    /// The draws of the fleet policies' commands (budgets, limits): a stream of their own.
    policies: StdRng,
    /// The draws of weak subscriptions' start jitters: a stream of its own.
    jitters: StdRng,
    resources: Vec<(String, u64)>,
    consumers: Vec<(String, Vec<String>)>,
    groups: Vec<String>,
    agents: BTreeMap<String, SimNode>,
    behaviour: Behaviour,
    /// The stalled agents (they stop reporting until resumed).
    stalled: Vec<String>,
    created: u64,
}

impl Workload {
    /// A workload drawing from `rng`.
    pub fn new(mut rng: StdRng) -> Self {
        let behaviour = Behaviour {
            download: Duration::from_millis(rng.gen_range(100..2_000)),
            install: Duration::from_millis(rng.gen_range(100..3_000)),
            fail_rate: [0.0, 0.05, 0.3][rng.gen_range(0..3)],
        };
        let policies_seed = rng.gen();
        let policies = StdRng::seed_from_u64(policies_seed);
        // Derived, not drawn: the other streams' draws stay what they were.
        let jitters = StdRng::seed_from_u64(policies_seed ^ 0x6a69_7474_6572);
        Workload {
            rng,
            policies,
            jitters,
            resources: Vec::new(),
            consumers: Vec::new(),
            groups: Vec::new(),
            agents: BTreeMap::new(),
            behaviour,
            stalled: Vec::new(),
            created: 0,
        }
    }

    fn pick<'a, T>(rng: &mut StdRng, items: &'a [T]) -> Option<&'a T> {
        items.choose(rng)
    }

    /// The next person's command, given the state a server answers.
    pub fn next_command(&mut self, state: &ClusterState) -> Command {
        if let Some(cmd) = self.policy_command(state) {
            return cmd;
        }
        let roll = self.rng.gen_range(0..100);
        if self.resources.is_empty() || (roll < 8 && self.resources.len() < MAX_RESOURCES) {
            self.created += 1;
            let name = format!("r{}", self.created);
            return Command::CreateResource { name };
        }
        if self.consumers.is_empty() || (roll < 14 && self.consumers.len() < MAX_CONSUMERS) {
            self.created += 1;
            let name = format!("c{}", self.created);
            let n = self.rng.gen_range(1..=MAX_NODES);
            let nodes = (0..n).map(|i| format!("{name}-n{i}")).collect();
            return Command::CreateConsumer { name, nodes };
        }
        let (resource, versions) = Self::pick(&mut self.rng, &self.resources)
            .cloned()
            .unwrap_or_default();
        let (consumer, _) = Self::pick(&mut self.rng, &self.consumers)
            .cloned()
            .unwrap_or_default();
        let active = state.active_deployments();
        match roll {
            14..=33 => {
                let depends_on = match Self::pick(&mut self.rng, &self.resources) {
                    Some((other, v)) if *other != resource && *v > 0 && self.rng.gen_bool(0.3) => {
                        vec![Dependency {
                            resource: other.clone(),
                            version: self.rng.gen_range(1..=*v),
                        }]
                    }
                    _ => Vec::new(),
                };
                Command::PublishVersion {
                    resource,
                    label: Some(format!("v{}", versions + 1)),
                    artifact: None,
                    metadata: BTreeMap::new(),
                    depends_on,
                    health_port: None,
                }
            }
            34..=45 => Command::Subscribe {
                consumer,
                resource,
                mode: if self.rng.gen_bool(0.5) {
                    Mode::Weak
                } else {
                    Mode::Strong
                },
                // Now and then a pin (drawn from the policies' stream, so the rest of a seed's draws stay).
                pin: self
                    .policies
                    .gen_bool(0.15)
                    .then(|| self.policies.gen_range(1..=versions.max(1))),
                policy: Policy {
                    strategy: Some(self.strategy()),
                    // Now and then a start jitter (weak subscriptions use it; strong ones ignore it).
                    start_jitter_ms: self
                        .jitters
                        .gen_bool(0.3)
                        .then(|| self.jitters.gen_range(1_000..20_000)),
                    ..Policy::default()
                },
            },
            46..=65 => Command::StartDeployment(DeploymentSpec {
                consumer,
                resource,
                strategy: Some(self.strategy()),
                pulse_interval_ms: self
                    .rng
                    .gen_bool(0.2)
                    .then(|| self.rng.gen_range(2_000..10_000)),
                max_failed_nodes: None,
                by: Actor::User,
                ..DeploymentSpec::default()
            }),
            66..=68 => self.group_command(state),
            69..=71 => {
                let version = self.rng.gen_range(1..=versions.max(1));
                if self.rng.gen_bool(0.6) {
                    Command::RetractVersion {
                        resource,
                        version,
                        message: None,
                        by: Actor::User,
                    }
                } else {
                    Command::UnretractVersion { resource, version }
                }
            }
            72 | 73 => Command::Unsubscribe { consumer, resource },
            74..=76 => self.churn(),
            _ => match active.choose(&mut self.rng) {
                Some(id) => self.operation(*id),
                None => Command::CreateResource {
                    name: format!("r{}", self.created),
                },
            },
        }
    }

    /// Now and then a fleet policy: a count budget on a consumer that has none, a budget removed,
    /// fleet-wide limits set or lifted.
    fn policy_command(&mut self, state: &ClusterState) -> Option<Command> {
        if self.consumers.is_empty() || !self.policies.gen_ratio(1, 30) {
            return None;
        }
        let (consumer, _) = self.consumers.choose(&mut self.policies).cloned()?;
        Some(match self.policies.gen_range(0..4) {
            0 | 1 if state.budget(&consumer).is_none() => Command::SetBudget {
                consumer,
                budget: Budget {
                    max_unavailable: Some(FailedNodes::Count(self.policies.gen_range(1..=3))),
                    min_available: None,
                },
            },
            0 => Command::DeleteBudget { consumer },
            2 => Command::SetFleetLimits {
                limits: FleetLimits {
                    max_concurrent_installs: Some(self.policies.gen_range(1..=6)),
                    max_concurrent_downloads: None,
                },
                source: LimitSource::Api,
            },
            _ => Command::SetFleetLimits {
                limits: FleetLimits::default(),
                source: LimitSource::Api,
            },
        })
    }

    /// A group created over some (consumer, resource) pairs, a group deployment started, or a
    /// running one aborted.
    fn group_command(&mut self, state: &ClusterState) -> Command {
        let running = state.running_group_deployments();
        if let (Some(id), true) = (running.choose(&mut self.rng), self.rng.gen_bool(0.2)) {
            return Command::AbortGroupDeployment {
                id: *id,
                by: Actor::User,
            };
        }
        if self.groups.is_empty() || (self.groups.len() < MAX_GROUPS && self.rng.gen_bool(0.3)) {
            self.created += 1;
            let mut resources = self.resources.clone();
            resources.shuffle(&mut self.rng);
            let members = resources
                .into_iter()
                .take(self.rng.gen_range(1..=3))
                .filter_map(|(resource, _)| {
                    let (consumer, _) = self.consumers.choose(&mut self.rng)?;
                    Some(Member {
                        consumer: consumer.clone(),
                        resource,
                    })
                })
                .collect();
            return Command::CreateGroup {
                name: format!("g{}", self.created),
                members,
            };
        }
        let group = self
            .groups
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default();
        Command::StartGroupDeployment {
            group,
            versions: None,
            overrides: BTreeMap::new(),
        }
    }

    /// Node churn: a consumer gains a new node (a new agent) or loses one of its nodes.
    fn churn(&mut self) -> Command {
        let Some((name, nodes)) = self.consumers.choose(&mut self.rng).cloned() else {
            return Command::CreateResource {
                name: format!("r{}", self.created),
            };
        };
        if nodes.len() > 1 && self.rng.gen_bool(0.5) {
            let gone = nodes.choose(&mut self.rng).cloned().unwrap_or_default();
            return Command::UpdateConsumerNodes {
                name,
                add: Vec::new(),
                remove: vec![gone],
            };
        }
        self.created += 1;
        Command::UpdateConsumerNodes {
            add: vec![format!("{name}-m{}", self.created)],
            name,
            remove: Vec::new(),
        }
    }

    fn operation(&mut self, id: DeploymentId) -> Command {
        let (message, by) = (None, Actor::User);
        match self.rng.gen_range(0..10) {
            0..=2 => Command::Pause { id, message, by },
            3..=5 => Command::Resume { id, message, by },
            6 => Command::Abort { id, message, by },
            7 => Command::Rollback { id, message, by },
            _ => Command::Pulse {
                id,
                by: Actor::Pulse,
            },
        }
    }

    fn strategy(&mut self) -> Strategy {
        match self.rng.gen_range(0..3) {
            0 => Strategy::AllAtOnce {
                fail_fast: self.rng.gen_bool(0.5),
            },
            1 => Strategy::Rolling {
                install_window: self.rng.gen_range(1..=3),
                download_window: self.rng.gen_range(1..=4),
            },
            _ => Strategy::Batch {
                sizes: (0..self.rng.gen_range(1..=3))
                    .map(|_| self.rng.gen_range(1..=3))
                    .collect(),
                autopause: self.rng.gen_bool(0.2),
            },
        }
    }

    /// The resources created so far (acknowledged).
    pub fn resource_names(&self) -> Vec<String> {
        self.resources.iter().map(|(r, _)| r.clone()).collect()
    }

    /// Takes the answer to `command` into the model (only what was acknowledged exists for it).
    pub fn acknowledged(&mut self, command: &Command) {
        match command {
            Command::CreateResource { name } if !self.resources.iter().any(|(r, _)| r == name) => {
                self.resources.push((name.clone(), 0));
            }
            Command::PublishVersion { resource, .. } => {
                if let Some(r) = self.resources.iter_mut().find(|(r, _)| r == resource) {
                    r.1 += 1;
                }
            }
            Command::CreateConsumer { name, nodes }
                if !self.consumers.iter().any(|(c, _)| c == name) =>
            {
                self.consumers.push((name.clone(), nodes.clone()));
                for node in nodes {
                    self.agents.insert(node.clone(), SimNode::default());
                }
            }
            Command::CreateGroup { name, .. } if !self.groups.contains(name) => {
                self.groups.push(name.clone());
            }
            Command::UpdateConsumerNodes { name, add, remove } => {
                if let Some((_, nodes)) = self.consumers.iter_mut().find(|(c, _)| c == name) {
                    nodes.retain(|n| !remove.contains(n));
                    nodes.extend(add.iter().cloned());
                }
                for node in add {
                    self.agents.entry(node.clone()).or_default();
                }
            }
            _ => {}
        }
    }

    /// Stalls an agent (it stops working and reporting), or resumes the stalled ones; `roll`
    /// (drawn from the fault stream) decides which.
    pub fn stall_or_resume(&mut self, roll: u64) -> String {
        if !self.stalled.is_empty() && roll.is_multiple_of(2) {
            let resumed = std::mem::take(&mut self.stalled);
            return format!("agents {resumed:?} resume");
        }
        let nodes: Vec<String> = self.agents.keys().cloned().collect();
        match nodes.get((roll / 2) as usize % nodes.len().max(1)) {
            Some(node) => {
                self.stalled.push(node.clone());
                format!("agent {node} stalls")
            }
            None => "no agent to stall".to_string(),
        }
    }

    /// Every agent not stalled finishes its due work and follows its targets in `state` at `now`;
    /// returns their reports, heartbeats included (the leader's consumer handlers keep those off
    /// the log, and take every report as proof of life).
    pub fn agents_step(&mut self, state: &ClusterState, now: Duration) -> Vec<NodeReport> {
        let mut reports = Vec::new();
        for (node, agent) in &mut self.agents {
            if self.stalled.contains(node) {
                continue;
            }
            let targets = state.targets(node);
            let roll = self.rng.gen::<f64>();
            agent.step(&targets, now, &self.behaviour, roll);
            reports.push(NodeReport {
                node: node.clone(),
                active: None,
                resources: agent.report().clone(),
                by: Actor::User,
            });
        }
        reports
    }
}
