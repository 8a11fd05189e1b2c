//! The leader actors' test kit: an in-memory [`Host`] that applies proposals to a `ClusterState` at
//! the wall clock (stalled, or held until released, to test backpressure), and the fleets and
//! deployments the tests of each job start from. The wall clock is read in [`wall_ms`] only.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix::Actor as _;
use futures::future::BoxFuture;
use futures::FutureExt;

use super::{Host, ProposeError, Supervisor, SupervisorConfig, DEFAULT_DEPLOYMENT_HISTORY};
use crate::domain::{
    ClusterState, Command, DeploymentId, DeploymentSpec, DeploymentView, NodeReport, Outcome,
    ResourceReport, Response, Strategy, Timestamp, VersionProgress,
};

/// Milliseconds since the Unix epoch: the tests' one clock.
pub(super) fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Applies proposals to an in-memory state at the wall clock; can be stalled to test backpressure
/// (forever) or held (until released, then applied in order).
#[derive(Default)]
pub(super) struct FakeHost {
    pub(super) state: Arc<Mutex<ClusterState>>,
    pub(super) proposals: Mutex<Vec<Command>>,
    pub(super) stalled: AtomicBool,
    pub(super) held: AtomicBool,
    pub(super) release: Gate,
    /// With `held`: after a held proposal is applied, its answer waits for a permit here too (when
    /// `answer_held` is set), as a commit's answer reaches the proposer some time after the apply.
    pub(super) answer_held: AtomicBool,
    pub(super) answer: Gate,
    pub(super) ticks: AtomicUsize,
    /// The merged outcome of everything applied since the supervisor last took it.
    pub(super) outcome: Arc<Mutex<Outcome>>,
}

/// Permits for held proposals: none until a test adds them.
#[derive(Clone)]
pub(super) struct Gate(pub(super) Arc<tokio::sync::Semaphore>);

impl Default for Gate {
    fn default() -> Self {
        Gate(Arc::new(tokio::sync::Semaphore::new(0)))
    }
}

/// Applies `command` to `state` at `at` and merges its outcome into `outcome`, as the server's
/// machine does.
fn apply_to(
    state: &Mutex<ClusterState>,
    outcome: &Mutex<Outcome>,
    command: Command,
    at: Timestamp,
) -> Result<Response, ProposeError> {
    let (response, o) = state
        .lock()
        .unwrap()
        .apply_with_outcome(command, at)
        .map_err(ProposeError::Refused)?;
    outcome.lock().unwrap().merge(o);
    Ok(response)
}

impl FakeHost {
    pub(super) fn apply(&self, command: Command) -> Response {
        apply_to(&self.state, &self.outcome, command, wall_ms())
            .expect("test setup command refused")
    }

    pub(super) fn count(&self, pred: impl Fn(&Command) -> bool) -> usize {
        self.proposals
            .lock()
            .unwrap()
            .iter()
            .filter(|c| pred(c))
            .count()
    }
}

impl Host for FakeHost {
    fn propose(&self, command: Command) -> BoxFuture<'static, Result<Response, ProposeError>> {
        self.proposals.lock().unwrap().push(command.clone());
        if matches!(command, Command::Tick | Command::TickDeployment { .. }) {
            self.ticks.fetch_add(1, Ordering::SeqCst);
        }
        if self.stalled.load(Ordering::SeqCst) {
            return futures::future::pending().boxed();
        }
        if self.held.load(Ordering::SeqCst) {
            let (state, outcome, release) = (
                self.state.clone(),
                self.outcome.clone(),
                self.release.clone(),
            );
            let answer = self
                .answer_held
                .load(Ordering::SeqCst)
                .then(|| self.answer.clone());
            return async move {
                release.0.acquire().await.expect("semaphore open").forget();
                let result = apply_to(&state, &outcome, command, wall_ms());
                if let Some(answer) = answer {
                    answer.0.acquire().await.expect("semaphore open").forget();
                }
                result
            }
            .boxed();
        }
        let result = apply_to(&self.state, &self.outcome, command, wall_ms());
        async move { result }.boxed()
    }

    fn read(&self, f: &mut dyn FnMut(&ClusterState)) {
        f(&self.state.lock().unwrap());
    }

    fn now_ms(&self) -> Timestamp {
        wall_ms()
    }

    fn take_outcome(&self) -> Outcome {
        std::mem::take(&mut *self.outcome.lock().unwrap())
    }
}

pub(super) fn progress(done: bool) -> VersionProgress {
    VersionProgress {
        downloaded: true,
        installed: done,
        done,
        error: None,
        healthy: None,
    }
}

pub(super) fn node_report(node: &str, current: u64) -> NodeReport {
    NodeReport {
        node: node.into(),
        active: Some(true),
        resources: BTreeMap::from([(
            "app".to_string(),
            ResourceReport {
                interested: None,
                current: Some(current),
                versions: BTreeMap::from([(current, progress(true))]),
                removed: false,
                log: None,
            },
        )]),
        ..Default::default()
    }
}

/// Resource `app` v1 and v2, consumer `web` of `n` nodes running v1.
pub(super) fn fleet(host: &FakeHost, n: usize) {
    host.apply(Command::CreateResource { name: "app".into() });
    for _ in 0..2 {
        host.apply(Command::PublishVersion {
            resource: "app".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on: vec![],
            health_port: None,
        });
    }
    let nodes: Vec<String> = (0..n).map(|i| format!("web-{i}")).collect();
    host.apply(Command::CreateConsumer {
        name: "web".into(),
        nodes: nodes.clone(),
    });
    host.apply(Command::ReportNodes(
        nodes.iter().map(|n| node_report(n, 1)).collect(),
    ));
}

pub(super) fn coordinated(host: &FakeHost, pulse_ms: u64) -> DeploymentId {
    let spec = DeploymentSpec {
        consumer: "web".into(),
        resource: "app".into(),
        version: Some(2),
        strategy: Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        }),
        pulse_interval_ms: Some(pulse_ms),
        ..Default::default()
    };
    match host.apply(Command::StartDeployment(spec)) {
        Response::DeploymentStarted { id, .. } => id,
        other => panic!("unexpected {other:?}"),
    }
}

pub(super) fn status(host: &FakeHost, id: DeploymentId) -> DeploymentView {
    host.state.lock().unwrap().deployment(id).unwrap()
}

pub(super) fn leader(host: &Arc<FakeHost>, node_timeout: Duration) -> actix::Addr<Supervisor> {
    Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout,
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start()
}

/// Waits until `done` holds, looking every 5 ms; fails with `what` after `limit`.
pub(super) async fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let give_up = wall_ms() + limit.as_millis() as u64;
    while !done() {
        assert!(wall_ms() < give_up, "{what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
