//! The domain's one test kit: a `ClusterState` driven with a fake clock, for the unit tests (`cfg(test)`) and,
//! behind the `testing` feature, the integration tests, the bench and other crates' tests.
//!
//! Two ways in: [`Kit::new`] builds the unit tests' fleet (resource `r` with versions 1 and 2, consumer `c` of
//! nodes `c-0..` on version 1) and its shorthands (`report`, `installed`, `failed`, `publish`, `start_with`)
//! address that fleet by node index; [`Kit::empty`] starts from nothing, and the named helpers (`fleet`,
//! `publish_to`, `report_node`, `node_installed`, `install_failed`, `start`) take consumer, resource and node
//! names, as the scenarios do.

use crate::*;
use std::collections::BTreeMap;

/// A state and the time its next command is applied at.
pub struct Kit {
    /// The state every command is applied to.
    pub s: ClusterState,
    /// The fake clock: the `at` of every command (ms).
    pub now: u64,
}

/// A node's progress on one version: `installed` when done without an error, never a health answer.
pub fn vp(downloaded: bool, done: bool, error: Option<&str>) -> VersionProgress {
    VersionProgress {
        downloaded,
        installed: done && error.is_none(),
        done,
        error: error.map(String::from),
        healthy: None,
    }
}

impl Kit {
    /// Resource `r` with versions 1 and 2; consumer `c` with `n` nodes `c-i` on version 1; the clock at 100.
    pub fn new(n: usize) -> Kit {
        let mut k = Kit {
            s: ClusterState::default(),
            now: 100,
        };
        k.ok(Command::CreateResource { name: "r".into() });
        k.publish(vec![]);
        k.publish(vec![]);
        k.ok(Command::CreateConsumer {
            name: "c".into(),
            nodes: (0..n).map(|i| format!("c-{i}")).collect(),
        });
        for i in 0..n {
            k.report(i, Some(1), &[(1, vp(true, true, None))]);
        }
        k
    }

    /// An empty state, the clock at 1,000.
    pub fn empty() -> Kit {
        Kit {
            s: ClusterState::default(),
            now: 1_000,
        }
    }

    /// Applies a command that must be accepted.
    pub fn ok(&mut self, cmd: Command) -> Response {
        self.s
            .apply(cmd, self.now)
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

    /// Moves the clock to `t` and applies the global `Tick`.
    pub fn tick_to(&mut self, t: u64) {
        self.now = t;
        self.ok(Command::Tick);
    }

    // ---- The unit tests' fleet (`Kit::new`): resource `r`, consumer `c`, nodes by index.

    /// Publishes the next version of `r`.
    pub fn publish(&mut self, depends_on: Vec<Dependency>) -> u64 {
        let cmd = Command::PublishVersion {
            resource: "r".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on,
            health_port: None,
        };
        match self.ok(cmd) {
            Response::VersionPublished { version, .. } => version,
            other => panic!("{other:?}"),
        }
    }

    /// Node `c-i` reports `r` (no word on activity), sent without auth (`user`).
    pub fn report(&mut self, i: usize, current: Option<u64>, versions: &[(u64, VersionProgress)]) {
        self.report_by(i, current, versions, Actor::User);
    }

    /// Node `c-i` reports `r` (no word on activity), sent `by` this actor.
    pub fn report_by(
        &mut self,
        i: usize,
        current: Option<u64>,
        versions: &[(u64, VersionProgress)],
        by: Actor,
    ) {
        let rr = ResourceReport {
            interested: None,
            current,
            versions: versions.iter().cloned().collect(),
            removed: false,
            log: None,
        };
        let r = NodeReport {
            node: format!("c-{i}"),
            active: None,
            resources: BTreeMap::from([("r".to_string(), rr)]),
            by,
        };
        self.ok(Command::ReportNodes(vec![r]));
    }

    /// Node `c-i` holds version 2 of `r` (downloaded) and has not finished installing it.
    pub fn holding(&mut self, i: usize) {
        self.report(
            i,
            Some(1),
            &[(1, vp(true, true, None)), (2, vp(true, false, None))],
        );
    }

    /// Node `c-i` installed version 2 of `r`.
    pub fn installed(&mut self, i: usize) {
        self.installed_by(i, Actor::User);
    }

    /// Node `c-i` installed version 2 of `r`, as reported `by` this actor.
    pub fn installed_by(&mut self, i: usize, by: Actor) {
        self.report_by(
            i,
            Some(2),
            &[(1, vp(true, true, None)), (2, vp(true, true, None))],
            by,
        );
    }

    /// Node `c-i` failed to install version 2 of `r`; it still runs 1.
    pub fn failed(&mut self, i: usize) {
        self.failed_by(i, Actor::User);
    }

    /// Node `c-i` failed to install version 2 of `r` (it still runs 1), as reported `by` this actor.
    pub fn failed_by(&mut self, i: usize, by: Actor) {
        self.report_by(
            i,
            Some(1),
            &[
                (1, vp(true, true, None)),
                (2, vp(true, true, Some("exit 3"))),
            ],
            by,
        );
    }

    /// Starts a deployment of version 2 to `c`, all at once unless `f` says otherwise (the default strategy,
    /// rolling one node at a time, is tested on its own).
    pub fn start_with(&mut self, f: impl FnOnce(&mut DeploymentSpec)) -> DeploymentId {
        let mut spec = DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            version: Some(2),
            strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
            ..DeploymentSpec::default()
        };
        f(&mut spec);
        self.start(spec)
    }

    /// The deployment `id` itself.
    pub fn d(&self, id: DeploymentId) -> &Deployment {
        &self.s.deployment_map()[&id]
    }

    /// Each node's phase in deployment `id`, in position order.
    pub fn phases(&self, id: DeploymentId) -> Vec<NodePhase> {
        self.d(id).nodes.iter().map(|n| n.phase).collect()
    }

    /// (install, download) flags of every node's target for `r`: the indexes of the nodes that have them.
    pub fn flags(&self, n: usize) -> (Vec<usize>, Vec<usize>) {
        let t: Vec<Option<Target>> = (0..n)
            .map(|i| self.s.targets(&format!("c-{i}")).get("r").copied())
            .collect();
        let pick = |f: fn(&Target) -> bool| {
            t.iter()
                .enumerate()
                .filter(|(_, t)| t.as_ref().is_some_and(f))
                .map(|(i, _)| i)
                .collect()
        };
        (pick(|t| t.install), pick(|t| t.download))
    }

    /// Applies a user's operation (`pause`, `resume`, `abort`, `rollback`) on `id`, accepted or not.
    pub fn op(
        &mut self,
        cmd: fn(DeploymentId, Option<String>, Actor) -> Command,
        id: DeploymentId,
    ) -> Result<Response, DomainError> {
        self.s.apply(cmd(id, None, Actor::User), self.now)
    }

    // ---- Named fleets (`Kit::empty`): consumers, resources and nodes by name.

    /// A resource `r` with version 1 (created unless it exists), a consumer `c` of `n` nodes `c-0..` all
    /// running version 1.
    pub fn fleet(&mut self, c: &str, r: &str, n: usize) {
        if self.s.resource(r).is_none() {
            self.ok(Command::CreateResource { name: r.into() });
            self.publish_to(r);
        }
        let nodes: Vec<String> = (0..n).map(|i| format!("{c}-{i}")).collect();
        self.ok(Command::CreateConsumer {
            name: c.into(),
            nodes: nodes.clone(),
        });
        for node in nodes {
            self.report_node(&node, r, Some(1), &[(1, vp(true, true, None))]);
        }
    }

    /// The targets of `r` on consumer `c`'s `n` nodes `c-0..`, in order.
    pub fn targets_of(&self, c: &str, r: &str, n: usize) -> Vec<Option<Target>> {
        (0..n)
            .map(|i| self.target(&format!("{c}-{i}"), r))
            .collect()
    }

    /// Publishes the next version of `r`, with no dependency.
    pub fn publish_to(&mut self, r: &str) -> u64 {
        self.publish_deps(r, vec![])
    }

    /// Publishes the next version of `r`, needing each `(resource, version)` of `deps`.
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

    /// Subscribes `c` to `r` in `mode`, with `strategy` as its policy's only setting.
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

    /// `node` reports `r` and says it is active.
    pub fn report_node(
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
            log: None,
        };
        let report = NodeReport {
            node: node.into(),
            active: Some(true),
            resources: BTreeMap::from([(r.to_string(), rr)]),
            ..Default::default()
        };
        self.ok(Command::ReportNodes(vec![report]));
    }

    /// `node` installed `v` of `r` (coming from `from`) successfully.
    pub fn node_installed(&mut self, node: &str, r: &str, from: u64, v: u64) {
        self.report_node(
            node,
            r,
            Some(v),
            &[(from, vp(true, true, None)), (v, vp(true, true, None))],
        );
    }

    /// `node` failed to install `v` of `r`; it still runs `from`.
    pub fn install_failed(&mut self, node: &str, r: &str, from: u64, v: u64) {
        self.report_node(
            node,
            r,
            Some(from),
            &[
                (from, vp(true, true, None)),
                (v, vp(true, true, Some("exit 1"))),
            ],
        );
    }

    /// Starts the deployment `spec` describes.
    pub fn start(&mut self, spec: DeploymentSpec) -> DeploymentId {
        match self.ok(Command::StartDeployment(spec)) {
            Response::DeploymentStarted { id, .. } => id,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The status of deployment `id`.
    pub fn status(&self, id: DeploymentId) -> Status {
        self.s.deployment(id).unwrap().status
    }

    /// Each node's state in deployment `id`'s view, in position order.
    pub fn states(&self, id: DeploymentId) -> Vec<NodePhase> {
        self.s
            .deployment(id)
            .unwrap()
            .nodes
            .iter()
            .map(|n| n.state)
            .collect()
    }

    /// `node`'s target for `r`, if any.
    pub fn target(&self, node: &str, r: &str) -> Option<Target> {
        self.s.targets(node).get(r).copied()
    }

    /// Node ids of `c` with `install = true` for `r`, in consumer order.
    pub fn installing(&self, c: &str, r: &str) -> Vec<String> {
        let nodes = self.s.consumer(c).unwrap().nodes;
        nodes
            .into_iter()
            .filter(|n| self.target(n, r).is_some_and(|t| t.install))
            .collect()
    }

    /// A pulse from the deployment's own pulse source: its answer and the status it left.
    pub fn pulse(&mut self, id: DeploymentId) -> (PulseAnswer, Option<Status>) {
        match self.ok(Command::Pulse {
            id,
            by: Actor::Pulse,
        }) {
            Response::Pulse { answer, status } => (answer, status),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// Applies a user's operation that must be accepted, and returns the status it left.
    pub fn op_status(
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

/// A deployment of `v` of `r` to `c` with `strategy`, everything else by default.
pub fn spec(c: &str, r: &str, v: u64, strategy: Strategy) -> DeploymentSpec {
    DeploymentSpec {
        consumer: c.into(),
        resource: r.into(),
        version: Some(v),
        strategy: Some(strategy),
        ..DeploymentSpec::default()
    }
}

/// Sets a spec's strategy to rolling with install window `iw` and download window `dw` (for [`Kit::start_with`]).
pub fn rolling(iw: u32, dw: u32) -> impl FnOnce(&mut DeploymentSpec) {
    move |s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: iw,
            download_window: dw,
        })
    }
}

/// `Command::Pause`, shaped for [`Kit::op`].
pub fn pause(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Pause { id, message, by }
}
/// `Command::Resume`, shaped for [`Kit::op`].
pub fn resume(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Resume { id, message, by }
}
/// `Command::Abort`, shaped for [`Kit::op`].
pub fn abort(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Abort { id, message, by }
}
/// `Command::Confirm`, shaped for [`Kit::op`].
pub fn confirm(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Confirm { id, message, by }
}
/// `Command::HardPause`, shaped for [`Kit::op`].
pub fn hard_pause(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::HardPause { id, message, by }
}
/// `Command::Rollback`, shaped for [`Kit::op`].
pub fn rollback(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Rollback { id, message, by }
}

/// The target "keep `version`": download and install nothing.
pub fn stay(version: u64) -> Option<Target> {
    Some(Target::stay(version))
}

/// The target "download and install `version`".
pub fn go(version: u64) -> Option<Target> {
    Some(Target {
        version,
        download: true,
        install: true,
        uninstall: false,
    })
}

/// A maintenance window in UTC over every consumer and resource, finishing what is in flight, letting rollbacks
/// pass.
pub fn window(name: &str, kind: WindowKind, schedule: &str, duration_ms: u64) -> Window {
    Window {
        name: name.into(),
        kind,
        schedule: schedule.into(),
        duration_ms,
        time_zone: "UTC".into(),
        applies_to: AppliesTo::default(),
        overrun: Overrun::FinishInFlight,
        allow_rollback: true,
    }
}
