//! Test helpers for the unit tests: a state with a fleet, reports and a fake clock.

use super::*;
use std::collections::BTreeMap;

pub(crate) struct Kit {
    pub s: ClusterState,
    pub now: u64,
}

pub(crate) fn vp(done: bool, error: Option<&str>) -> VersionProgress {
    VersionProgress {
        downloaded: true,
        installed: done && error.is_none(),
        done,
        error: error.map(String::from),
        healthy: None,
    }
}

impl Kit {
    /// Resource `r` with versions 1 and 2; consumer `c` with `n` nodes `c-i` on version 1.
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
            k.report(i, Some(1), &[(1, vp(true, None))]);
        }
        k
    }

    pub fn ok(&mut self, cmd: Command) -> Response {
        self.s
            .apply(cmd, self.now)
            .unwrap_or_else(|e| panic!("refused: {e}"))
    }

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

    pub fn report(&mut self, i: usize, current: Option<u64>, versions: &[(u64, VersionProgress)]) {
        let rr = ResourceReport {
            interested: None,
            current,
            versions: versions.iter().cloned().collect(),
            removed: false,
        };
        let r = NodeReport {
            node: format!("c-{i}"),
            active: None,
            resources: BTreeMap::from([("r".to_string(), rr)]),
        };
        self.ok(Command::ReportNodes(vec![r]));
    }

    pub fn installed(&mut self, i: usize) {
        self.report(i, Some(2), &[(1, vp(true, None)), (2, vp(true, None))]);
    }

    pub fn failed(&mut self, i: usize) {
        self.report(
            i,
            Some(1),
            &[(1, vp(true, None)), (2, vp(true, Some("exit 3")))],
        );
    }

    /// Starts a deployment of version 2 to `c`, all at once unless `f` says otherwise (the default strategy,
    /// rolling one node at a time, is tested on its own).
    pub fn start_with(&mut self, f: impl FnOnce(&mut DeploymentSpec)) -> DeploymentId {
        let mut spec = DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            version: Some(2),
            strategy: Some(Strategy::AllAtOnce {}),
            ..DeploymentSpec::default()
        };
        f(&mut spec);
        match self.ok(Command::StartDeployment(spec)) {
            Response::DeploymentStarted { id, .. } => id,
            other => panic!("{other:?}"),
        }
    }

    pub fn d(&self, id: DeploymentId) -> &Deployment {
        &self.s.deployment_map()[&id]
    }

    pub fn phases(&self, id: DeploymentId) -> Vec<NodePhase> {
        self.d(id).nodes.iter().map(|n| n.phase).collect()
    }

    /// (install, download) flags of every node's target for `r`.
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

    pub fn op(
        &mut self,
        cmd: fn(DeploymentId, Option<String>, Actor) -> Command,
        id: DeploymentId,
    ) -> Result<Response, DomainError> {
        self.s.apply(cmd(id, None, Actor::User), self.now)
    }
}

pub(crate) fn pause(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Pause { id, message, by }
}
pub(crate) fn resume(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Resume { id, message, by }
}
#[allow(dead_code)]
pub(crate) fn abort(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Abort { id, message, by }
}
pub(crate) fn rollback(id: DeploymentId, message: Option<String>, by: Actor) -> Command {
    Command::Rollback { id, message, by }
}
