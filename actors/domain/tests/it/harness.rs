//! Shared scenario harness: a `ClusterState` driven with a fake clock (included by the scenario tests).
#![allow(dead_code, clippy::new_without_default)]

use convoy_actors::domain::*;
use std::collections::BTreeMap;

pub struct H {
    pub s: ClusterState,
    pub now: u64,
}

pub fn vp(downloaded: bool, done: bool, error: Option<&str>) -> VersionProgress {
    VersionProgress {
        downloaded,
        installed: done && error.is_none(),
        done,
        error: error.map(String::from),
        healthy: None,
    }
}

impl H {
    pub fn new() -> Self {
        H {
            s: ClusterState::default(),
            now: 1_000,
        }
    }

    pub fn ok(&mut self, cmd: Command) -> Response {
        let at = self.now;
        self.s
            .apply(cmd, at)
            .unwrap_or_else(|e| panic!("refused: {e}"))
    }

    /// Applies a command that must be refused, and checks that it changed nothing.
    pub fn err(&mut self, cmd: Command) -> DomainError {
        let before = self.s.snapshot_bytes();
        let e = self.s.apply(cmd, self.now).expect_err("expected a refusal");
        assert_eq!(
            before,
            self.s.snapshot_bytes(),
            "a refused command changed the state"
        );
        e
    }

    pub fn tick_to(&mut self, t: u64) {
        self.now = t;
        self.ok(Command::Tick);
    }

    /// A resource `r` with version 1, a consumer `c` of `n` nodes `c-0..` all running version 1.
    pub fn fleet(&mut self, c: &str, r: &str, n: usize) {
        if self.s.resource(r).is_none() {
            self.ok(Command::CreateResource { name: r.into() });
            self.publish(r);
        }
        let nodes: Vec<String> = (0..n).map(|i| format!("{c}-{i}")).collect();
        self.ok(Command::CreateConsumer {
            name: c.into(),
            nodes: nodes.clone(),
        });
        for node in nodes {
            self.report(&node, r, Some(1), &[(1, vp(true, true, None))]);
        }
    }

    pub fn publish(&mut self, r: &str) -> u64 {
        self.publish_deps(r, vec![])
    }

    pub fn publish_deps(&mut self, r: &str, deps: Vec<(&str, u64)>) -> u64 {
        let depends_on = deps
            .into_iter()
            .map(|(resource, version)| Dependency {
                resource: resource.into(),
                version,
            })
            .collect();
        match self.ok(Command::PublishVersion {
            resource: r.into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on,
            health_port: None,
        }) {
            Response::VersionPublished { version, .. } => version,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub fn subscribe(&mut self, c: &str, r: &str, mode: Mode, strategy: Option<Strategy>) {
        self.ok(Command::Subscribe {
            consumer: c.into(),
            resource: r.into(),
            mode,
            pin: None,
            policy: Policy {
                strategy,
                ..Policy::default()
            },
        });
    }

    pub fn report(
        &mut self,
        node: &str,
        r: &str,
        current: Option<u64>,
        versions: &[(u64, VersionProgress)],
    ) {
        let rr = ResourceReport {
            interested: None,
            current,
            versions: versions.iter().cloned().collect(),
            removed: false,
        };
        let report = NodeReport {
            node: node.into(),
            active: Some(true),
            resources: BTreeMap::from([(r.to_string(), rr)]),
        };
        self.ok(Command::ReportNodes(vec![report]));
    }

    /// The node installed `v` (coming from `from`) successfully.
    pub fn installed(&mut self, node: &str, r: &str, from: u64, v: u64) {
        self.report(
            node,
            r,
            Some(v),
            &[(from, vp(true, true, None)), (v, vp(true, true, None))],
        );
    }

    /// The node failed to install `v`; it still runs `from`.
    pub fn install_failed(&mut self, node: &str, r: &str, from: u64, v: u64) {
        self.report(
            node,
            r,
            Some(from),
            &[
                (from, vp(true, true, None)),
                (v, vp(true, true, Some("exit 1"))),
            ],
        );
    }

    pub fn start(&mut self, spec: DeploymentSpec) -> DeploymentId {
        match self.ok(Command::StartDeployment(spec)) {
            Response::DeploymentStarted { id, .. } => id,
            other => panic!("unexpected {other:?}"),
        }
    }

    pub fn status(&self, id: DeploymentId) -> Status {
        self.s.deployment(id).unwrap().status
    }

    pub fn states(&self, id: DeploymentId) -> Vec<NodePhase> {
        self.s
            .deployment(id)
            .unwrap()
            .nodes
            .iter()
            .map(|n| n.state)
            .collect()
    }

    pub fn target(&self, node: &str, r: &str) -> Option<Target> {
        self.s.targets(node).get(r).copied()
    }

    /// Node ids with `install = true`, in consumer order.
    pub fn installing(&self, c: &str, r: &str) -> Vec<String> {
        let nodes = self.s.consumer(c).unwrap().nodes;
        nodes
            .into_iter()
            .filter(|n| self.target(n, r).is_some_and(|t| t.install))
            .collect()
    }

    pub fn pulse(&mut self, id: DeploymentId) -> (PulseAnswer, Option<Status>) {
        match self.ok(Command::Pulse {
            id,
            by: Actor::Pulse,
        }) {
            Response::Pulse { answer, status } => (answer, status),
            other => panic!("unexpected {other:?}"),
        }
    }

    pub fn op(
        &mut self,
        cmd: fn(DeploymentId, Option<String>, Actor) -> Command,
        id: DeploymentId,
    ) -> Status {
        match self.ok(cmd(id, None, Actor::User)) {
            Response::Deployment { status, .. } => status,
            other => panic!("unexpected {other:?}"),
        }
    }
}

pub fn spec(c: &str, r: &str, v: u64, strategy: Strategy) -> DeploymentSpec {
    DeploymentSpec {
        consumer: c.into(),
        resource: r.into(),
        version: Some(v),
        strategy: Some(strategy),
        ..DeploymentSpec::default()
    }
}

pub fn pause(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Pause { id, message, by }
}
pub fn resume(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Resume { id, message, by }
}
pub fn abort(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Abort { id, message, by }
}
pub fn rollback(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Rollback { id, message, by }
}
