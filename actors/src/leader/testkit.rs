//! Actor tests over an in-memory host: timers fire at the deadline, heartbeats stay off the log,
//! changes are batched, the queue bound refuses, silent nodes are marked inactive, and leadership
//! starts and stops the children.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix::Actor as _;
use futures::future::BoxFuture;
use futures::FutureExt;

use super::messages::{
    ArmedDeadline, Leadership, ListChildren, Report, ReportBatch, ReportRejected, StateChanged,
    Steps, Told,
};
use super::{
    ConsumerActor, DeploymentActor, Host, ProposeError, Supervisor, SupervisorConfig,
    DEFAULT_DEPLOYMENT_HISTORY,
};
use crate::domain::{
    ClusterState, Command, DeploymentId, DeploymentSpec, DeploymentView, NodeReport, Outcome,
    PausedBy, ResourceReport, Response, Status, Strategy, Timestamp, VersionProgress,
};

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Applies proposals to an in-memory state at the wall clock; can be stalled to test backpressure
/// (forever) or held (until released, then applied in order).
#[derive(Default)]
struct FakeHost {
    state: Arc<Mutex<ClusterState>>,
    proposals: Mutex<Vec<Command>>,
    stalled: AtomicBool,
    held: AtomicBool,
    release: Gate,
    /// With `held`: after a held proposal is applied, its answer waits for a permit here too (when
    /// `answer_held` is set), as a commit's answer reaches the proposer some time after the apply.
    answer_held: AtomicBool,
    answer: Gate,
    ticks: AtomicUsize,
    /// The merged outcome of everything applied since the supervisor last took it.
    outcome: Arc<Mutex<Outcome>>,
}

/// Permits for held proposals: none until a test adds them.
#[derive(Clone)]
struct Gate(Arc<tokio::sync::Semaphore>);

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
    fn apply(&self, command: Command) -> Response {
        apply_to(&self.state, &self.outcome, command, wall_ms())
            .expect("test setup command refused")
    }

    fn count(&self, pred: impl Fn(&Command) -> bool) -> usize {
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

fn progress(done: bool) -> VersionProgress {
    VersionProgress {
        downloaded: true,
        installed: done,
        done,
        error: None,
        healthy: None,
    }
}

fn node_report(node: &str, current: u64) -> NodeReport {
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
            },
        )]),
    }
}

/// Resource `app` v1 and v2, consumer `web` of `n` nodes running v1.
fn fleet(host: &FakeHost, n: usize) {
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

fn coordinated(host: &FakeHost, pulse_ms: u64) -> DeploymentId {
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

fn status(host: &FakeHost, id: DeploymentId) -> DeploymentView {
    host.state.lock().unwrap().deployment(id).unwrap()
}

#[actix::test]
async fn timer_blocks_a_coordinated_deployment_within_100ms_of_its_deadline() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let id = coordinated(&host, 300);
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    let deadline = host.state.lock().unwrap().deployment_deadline(id).unwrap();
    let actor = DeploymentActor::new(id, host.clone()).start();
    assert_eq!(
        actor.send(ArmedDeadline).await.unwrap(),
        Some(deadline),
        "armed at the pulse deadline"
    );
    // A bare timer for the same deadline: on a loaded machine every timer fires late, and the bound
    // below is on what the actor adds to that, not on the machine's scheduling.
    let reference = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(deadline.saturating_sub(wall_ms()))).await;
        wall_ms()
    });

    let timer_fired_at = reference.await.unwrap().max(deadline);
    // Wait for the actor's proposal to apply (a loaded machine may take a while; the bound is checked on
    // the event's time, not here).
    let give_up = Instant::now() + Duration::from_secs(5);
    while status(&host, id).status != Status::RollForwardAwaitingPulse && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let view = status(&host, id);
    assert_eq!(view.status, Status::RollForwardAwaitingPulse);
    assert_eq!(view.paused_by, Some(PausedBy::PulseTimeout));
    let blocked_at = view
        .events
        .iter()
        .rev()
        .find(|e| e.status == Some(Status::RollForwardAwaitingPulse))
        .expect("a transition event")
        .at;
    assert!(
        blocked_at >= deadline && blocked_at.saturating_sub(timer_fired_at) <= 100,
        "acted {}ms after the deadline, {}ms after a bare timer for it fired",
        blocked_at - deadline,
        blocked_at.saturating_sub(timer_fired_at)
    );
    // Blocked: no deadline left, so no more ticks.
    let ticks = host.ticks.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        host.ticks.load(Ordering::SeqCst),
        ticks,
        "a blocked deployment must not keep ticking"
    );
    assert_eq!(actor.send(ArmedDeadline).await.unwrap(), None);
}

#[actix::test]
async fn heartbeats_stay_off_the_log_and_changes_are_batched() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    for _ in 0..5 {
        actor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
    }
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))),
        before,
        "heartbeats reached the log"
    );

    host.stalled.store(true, Ordering::SeqCst);
    actor
        .send(Report(node_report("web-0", 2)))
        .await
        .unwrap()
        .unwrap(); // in flight
    actor
        .send(Report(node_report("web-1", 2)))
        .await
        .unwrap()
        .unwrap(); // pending
    actor
        .send(Report(node_report("web-2", 2)))
        .await
        .unwrap()
        .unwrap(); // pending, same batch
    let proposals = host.count(|c| matches!(c, Command::ReportNodes(_)));
    assert_eq!(proposals, before + 1, "one proposal in flight at a time");
}

#[actix::test]
async fn a_full_queue_refuses_new_nodes_but_replaces_waiting_ones() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.stalled.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::with_limit("web".into(), host.clone(), 1).start();
    actor
        .send(Report(node_report("web-0", 2)))
        .await
        .unwrap()
        .unwrap(); // in flight
    actor
        .send(Report(node_report("web-1", 2)))
        .await
        .unwrap()
        .unwrap(); // fills the queue
    let refused = actor.send(Report(node_report("web-2", 2))).await.unwrap();
    assert_eq!(
        refused,
        Err(ReportRejected::Busy {
            consumer: "web".into(),
            pending: 1,
            limit: 1
        })
    );
    // web-1 is already waiting: its newer change replaces the old one instead of being refused.
    assert_eq!(
        actor.send(Report(node_report("web-1", 1))).await.unwrap(),
        Ok(())
    );
}

fn leader(host: &Arc<FakeHost>, node_timeout: Duration) -> actix::Addr<Supervisor> {
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

#[actix::test]
async fn nodes_that_left_every_consumer_and_stayed_silent_are_forgotten() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.apply(Command::UpdateConsumerNodes {
        name: "web".into(),
        add: vec![],
        remove: vec!["web-1".into(), "web-2".into()],
    });
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_millis(100),
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::from_millis(300),
        },
    )
    .start();
    supervisor.send(Leadership(true)).await.unwrap();
    // web-2 keeps reporting though it left the consumer; web-1 is silent.
    for _ in 0..12 {
        for node in ["web-0", "web-2"] {
            supervisor
                .send(Report(node_report(node, 1)))
                .await
                .unwrap()
                .ok();
        }
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let forgets = host.count(|c| matches!(c, Command::ForgetNodes { .. }));
    let state = host.state.lock().unwrap();
    assert!(
        state.node("web-1").is_none(),
        "a silent node in no consumer is forgotten"
    );
    assert!(state.node("web-2").is_some(), "a reporting node is kept");
    assert!(
        state.node("web-0").is_some(),
        "a node of a consumer is kept"
    );
    assert_eq!(forgets, 1, "one ForgetNodes, nothing proposed again for it");
}

#[actix::test]
async fn silent_nodes_are_marked_inactive() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let supervisor = leader(&host, Duration::from_millis(200));
    supervisor.send(Leadership(true)).await.unwrap();
    for _ in 0..8 {
        supervisor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    let state = host.state.lock().unwrap();
    assert!(
        state.node("web-0").unwrap().active,
        "a reporting node stays active"
    );
    assert!(
        !state.node("web-1").unwrap().active,
        "a silent node is marked inactive"
    );
}

#[actix::test]
async fn a_node_in_three_consumers_stays_active_while_it_reports_and_goes_inactive_once() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    for name in ["api", "batch"] {
        host.apply(Command::CreateConsumer {
            name: name.into(),
            nodes: vec!["web-0".into()],
        });
    }
    let supervisor = leader(&host, Duration::from_millis(200));
    supervisor.send(Leadership(true)).await.unwrap();
    supervisor.send(StateChanged(1)).await.unwrap();
    // Reports every 60 ms for 4 node timeouts: the node must never be marked inactive.
    for _ in 0..14 {
        supervisor
            .send(Report(node_report("web-0", 1)))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(
            host.state.lock().unwrap().node("web-0").unwrap().active,
            "a reporting node in three consumers was marked inactive"
        );
    }
    assert_eq!(host.count(|c| matches!(c, Command::MarkInactive { .. })), 0);

    // Silent: marked inactive after the timeout, by one proposal naming it once.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!host.state.lock().unwrap().node("web-0").unwrap().active);
    let marks: Vec<Command> = host
        .proposals
        .lock()
        .unwrap()
        .iter()
        .filter(|c| matches!(c, Command::MarkInactive { .. }))
        .cloned()
        .collect();
    assert_eq!(
        marks,
        vec![Command::MarkInactive {
            nodes: vec!["web-0".into()]
        }]
    );
}

#[actix::test]
async fn leadership_starts_and_stops_the_children() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    let id = coordinated(&host, 250);
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_secs(30),
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start();

    // A follower refuses reports and runs no timers.
    let refused = supervisor
        .send(Report(node_report("web-0", 1)))
        .await
        .unwrap();
    assert_eq!(refused, Err(ReportRejected::NotLeader));

    supervisor.send(Leadership(true)).await.unwrap();
    supervisor.send(StateChanged(1)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        status(&host, id).status,
        Status::RollForwardAwaitingPulse,
        "the new leader's timer fired"
    );

    // A fresh pulse resumes it; after stepping down, nobody blocks it any more.
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    assert_eq!(status(&host, id).status, Status::RollingForward);
    supervisor.send(Leadership(false)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(
        status(&host, id).status,
        Status::RollingForward,
        "a follower must not act on deadlines"
    );
    let refused = supervisor
        .send(Report(node_report("web-0", 1)))
        .await
        .unwrap();
    assert_eq!(refused, Err(ReportRejected::NotLeader));
}

#[actix::test]
async fn a_batch_is_routed_per_consumer_and_answered_per_report_in_order() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 3);
    host.apply(Command::CreateConsumer {
        name: "db".into(),
        nodes: vec!["db-0".into()],
    });
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_secs(30),
            deployment_history: DEFAULT_DEPLOYMENT_HISTORY,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start();
    let batch = || {
        ReportBatch(vec![
            node_report("web-0", 2),
            node_report("db-0", 1),
            node_report("stray", 1),
            node_report("web-1", 2),
        ])
    };
    let refused = supervisor.send(batch()).await.unwrap();
    assert_eq!(refused, vec![Err(ReportRejected::NotLeader); 4]);

    supervisor.send(Leadership(true)).await.unwrap();
    let before = host.count(|c| matches!(c, Command::ReportNodes(_)));
    let answers = supervisor.send(batch()).await.unwrap();
    assert_eq!(answers, vec![Ok(()); 4]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let state = host.state.lock().unwrap();
    for (node, version) in [("web-0", 2), ("web-1", 2), ("db-0", 1)] {
        let view = state.node(node).unwrap_or_else(|| panic!("{node} unknown"));
        assert_eq!(view.resources["app"].current, Some(version), "{node}");
    }
    // A node in no consumer is answered but never written to the log.
    assert!(state.node("stray").is_none());
    drop(state);
    // web's two changes share one proposal, db's one its own; the stray node none.
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))) - before,
        2
    );
}

#[actix::test]
async fn a_batch_past_the_queue_bound_refuses_only_the_nodes_that_do_not_fit() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 4);
    host.stalled.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::with_limit("web".into(), host.clone(), 2).start();
    let answers = actor
        .send(ReportBatch(vec![
            node_report("web-0", 2),
            node_report("web-1", 2),
            node_report("web-2", 2),
            node_report("web-3", 1), // a heartbeat: always taken
        ]))
        .await
        .unwrap();
    assert_eq!(answers[..2], [Ok(()), Ok(())]);
    assert_eq!(
        answers[2],
        Err(ReportRejected::Busy {
            consumer: "web".into(),
            pending: 2,
            limit: 2
        })
    );
    assert_eq!(answers[3], Ok(()));
    assert_eq!(
        host.count(|c| matches!(c, Command::ReportNodes(_))),
        1,
        "the two changes that fit share one proposal, in flight"
    );
}

#[actix::test]
async fn a_report_back_to_the_applied_state_follows_a_change_being_committed() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    host.held.store(true, Ordering::SeqCst);
    let actor = ConsumerActor::new("web".into(), host.clone()).start();
    let report = |v| actor.send(Report(node_report("web-0", v)));
    report(2).await.unwrap().unwrap(); // a change, in flight (held)
                                       // Equal to the applied state (1), but the change in flight is about to overwrite it.
    report(1).await.unwrap().unwrap();
    host.release.0.add_permits(2);
    for _ in 0..100 {
        if host.count(|c| matches!(c, Command::ReportNodes(_))) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let state = host.state.lock().unwrap();
    assert_eq!(
        state.node("web-0").unwrap().resources["app"].current,
        Some(1),
        "the node's last report was lost"
    );
}

#[actix::test]
async fn a_report_right_after_its_consumer_is_created_is_applied() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    // The consumer is applied, but the supervisor has not been told yet (`StateChanged` comes
    // asynchronously from the applied-index watcher): the report arrives in between.
    host.apply(Command::CreateConsumer {
        name: "late".into(),
        nodes: vec!["late-0".into()],
    });
    supervisor
        .send(Report(node_report("late-0", 1)))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let state = host.state.lock().unwrap();
    let node = state.node("late-0").expect("late-0 is a consumer node");
    assert!(node.active, "an answered report was never applied");
    assert_eq!(node.resources["app"].current, Some(1));
}

/// Consumer `name` of one node `<name>-0` running v1 of `app` (besides `web`).
fn consumer(host: &FakeHost, name: &str) {
    let node = format!("{name}-0");
    host.apply(Command::CreateConsumer {
        name: name.into(),
        nodes: vec![node.clone()],
    });
    host.apply(Command::ReportNodes(vec![node_report(&node, 1)]));
}

/// A coordinated deployment of `app` v2 to `consumer`, pulsed once (its countdown runs).
fn pulsed(host: &FakeHost, consumer: &str, pulse_ms: u64) -> DeploymentId {
    let spec = DeploymentSpec {
        consumer: consumer.into(),
        resource: "app".into(),
        version: Some(2),
        strategy: Some(Strategy::AllAtOnce {}),
        pulse_interval_ms: Some(pulse_ms),
        ..Default::default()
    };
    let id = match host.apply(Command::StartDeployment(spec)) {
        Response::DeploymentStarted { id, .. } => id,
        other => panic!("unexpected {other:?}"),
    };
    host.apply(Command::Pulse {
        id,
        by: crate::domain::Actor::Pulse,
    });
    id
}

fn ticks_for(host: &FakeHost, id: DeploymentId) -> usize {
    host.count(|c| matches!(c, Command::TickDeployment { id: t } if *t == id))
}

#[actix::test]
async fn a_tick_is_proposed_only_for_the_deployment_whose_deadline_came() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let soon = pulsed(&host, "web", 200);
    let later = pulsed(&host, "api", 60_000);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let deadline = host
        .state
        .lock()
        .unwrap()
        .deployment_deadline(soon)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(
        deadline.saturating_sub(wall_ms()) + 150,
    ))
    .await;
    assert_eq!(status(&host, soon).status, Status::RollForwardAwaitingPulse);
    assert_eq!(status(&host, later).status, Status::RollingForward);
    assert_eq!(ticks_for(&host, soon), 1, "one tick, for its deployment");
    assert_eq!(
        ticks_for(&host, later),
        0,
        "no tick for the other deployment"
    );
    assert_eq!(
        host.count(|c| matches!(c, Command::Tick)),
        0,
        "no global tick"
    );
}

#[actix::test]
async fn an_unrelated_batch_leaves_every_deployment_actor_untouched() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let web = pulsed(&host, "web", 60_000);
    let api = pulsed(&host, "api", 60_000);
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let children = supervisor.send(ListChildren).await.unwrap();
    let ids: Vec<DeploymentId> = children.deployments.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![web, api]);
    let told = || async {
        let mut out = Vec::new();
        for (_, addr) in &children.deployments {
            out.push(addr.send(Told).await.unwrap());
        }
        out
    };
    let before = told().await;
    assert_eq!(before, vec![1, 1], "each actor armed once at its start");

    // A batch that touches no deployment: a new resource and a node of no consumer reporting.
    host.apply(Command::CreateResource { name: "db".into() });
    host.apply(Command::ReportNodes(vec![node_report("stray-0", 1)]));
    supervisor.send(StateChanged(2)).await.unwrap();
    assert_eq!(told().await, before, "an unrelated batch re-armed an actor");

    // A pulse moves one deadline: only that deployment's actor hears of it.
    host.apply(Command::Pulse {
        id: api,
        by: crate::domain::Actor::Pulse,
    });
    supervisor.send(StateChanged(3)).await.unwrap();
    assert_eq!(told().await, vec![1, 2]);
    let armed = children.deployments[1].1.send(ArmedDeadline).await.unwrap();
    assert_eq!(armed, host.state.lock().unwrap().deployment_deadline(api));
}

#[actix::test]
async fn a_new_leader_ticks_at_once_for_a_pulse_countdown_that_ran_out_without_a_leader() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    consumer(&host, "api");
    let expired = pulsed(&host, "web", 100);
    let running = pulsed(&host, "api", 60_000);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let now = wall_ms();
    assert_eq!(
        host.state.lock().unwrap().rearm_pulses(now),
        vec![expired],
        "the countdown ran out while no leader watched"
    );
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    for _ in 0..100 {
        if status(&host, expired).status == Status::RollForwardAwaitingPulse {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let view = status(&host, expired);
    assert_eq!(
        (view.status, view.paused_by),
        (
            Status::RollForwardAwaitingPulse,
            Some(PausedBy::PulseTimeout)
        )
    );
    assert_eq!(ticks_for(&host, expired), 1);
    assert_eq!(ticks_for(&host, running), 0);
    assert_eq!(status(&host, running).status, Status::RollingForward);
}

#[actix::test]
async fn a_group_deployment_actor_follows_its_steps_and_stops_when_the_group_ends() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 1);
    host.apply(Command::CreateResource { name: "db".into() });
    host.apply(Command::PublishVersion {
        resource: "db".into(),
        label: None,
        artifact: None,
        metadata: BTreeMap::new(),
        depends_on: vec![],
        health_port: None,
    });
    host.apply(Command::CreateConsumer {
        name: "data".into(),
        nodes: vec!["data-0".into()],
    });
    host.apply(Command::ReportNodes(vec![NodeReport {
        node: "data-0".into(),
        active: Some(true),
        resources: BTreeMap::new(),
    }]));
    // app v3 needs db v1: the group runs db first, then app.
    host.apply(Command::PublishVersion {
        resource: "app".into(),
        label: None,
        artifact: None,
        metadata: BTreeMap::new(),
        depends_on: vec![crate::domain::Dependency {
            resource: "db".into(),
            version: 1,
        }],
        health_port: None,
    });
    host.apply(Command::CreateGroup {
        name: "g".into(),
        members: vec![
            crate::domain::Member {
                consumer: "web".into(),
                resource: "app".into(),
            },
            crate::domain::Member {
                consumer: "data".into(),
                resource: "db".into(),
            },
        ],
    });
    let supervisor = leader(&host, Duration::from_secs(30));
    supervisor.send(Leadership(true)).await.unwrap();
    let started = wall_ms();
    host.apply(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: BTreeMap::new(),
    });
    supervisor.send(StateChanged(2)).await.unwrap();
    let children = supervisor.send(ListChildren).await.unwrap();
    assert_eq!(
        children.groups.len(),
        1,
        "one actor for the running group deployment"
    );
    let group = children.groups[0].1.clone();
    let steps = group.send(Steps).await.unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].0, 0);
    assert!(steps[0].1 >= started);

    // db installed on its node: step 1 ends in the apply, step 2 starts.
    let installed = |node: &str, resource: &str, version: u64| NodeReport {
        node: node.into(),
        active: Some(true),
        resources: BTreeMap::from([(
            resource.to_string(),
            ResourceReport {
                interested: None,
                current: Some(version),
                versions: BTreeMap::from([(version, progress(true))]),
                removed: false,
            },
        )]),
    };
    host.apply(Command::ReportNodes(vec![installed("data-0", "db", 1)]));
    supervisor.send(StateChanged(3)).await.unwrap();
    let steps = group.send(Steps).await.unwrap();
    assert_eq!(steps.iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 1]);
    assert!(steps[1].1 >= steps[0].1);

    // app v3 installed: the group succeeded, its actor is stopped.
    host.apply(Command::ReportNodes(vec![installed("web-0", "app", 3)]));
    supervisor.send(StateChanged(4)).await.unwrap();
    let children = supervisor.send(ListChildren).await.unwrap();
    assert!(
        children.groups.is_empty(),
        "the ended group's actor was not stopped"
    );
    assert!(children.deployments.is_empty());
    for _ in 0..100 {
        if !group.connected() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!group.connected(), "the group actor did not stop");
}

/// Starts a deployment of version 2 on "web" and aborts it: one more terminal deployment.
fn ended_deployment(host: &FakeHost) -> DeploymentId {
    let spec = DeploymentSpec {
        consumer: "web".into(),
        resource: "app".into(),
        version: Some(2),
        ..Default::default()
    };
    let id = match host.apply(Command::StartDeployment(spec)) {
        Response::DeploymentStarted { id, .. } => id,
        other => panic!("unexpected {other:?}"),
    };
    host.apply(Command::Abort {
        id,
        message: None,
        by: crate::domain::Actor::Pulse,
    });
    id
}

#[actix::test]
async fn a_deployment_that_ends_while_a_prune_is_committed_is_pruned_after_it() {
    let host = Arc::new(FakeHost::default());
    fleet(&host, 2);
    let (first, second) = (ended_deployment(&host), ended_deployment(&host));
    host.held.store(true, Ordering::SeqCst);
    host.answer_held.store(true, Ordering::SeqCst);
    let supervisor = Supervisor::new(
        host.clone(),
        SupervisorConfig {
            node_timeout: Duration::from_secs(60),
            deployment_history: 1,
            forget_nodes_after: Duration::ZERO,
        },
    )
    .start();
    // Two finished, one kept: a Prune is proposed and applied (the first is pruned) ...
    supervisor.send(Leadership(true)).await.unwrap();
    host.release.0.add_permits(1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !status(&host, first).pruned {
        assert!(
            Instant::now() < deadline,
            "the first Prune was never applied"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // ... but its answer has not reached the supervisor when a third deployment ends.
    let third = ended_deployment(&host);
    supervisor.send(StateChanged(0)).await.unwrap();
    assert!(!status(&host, second).pruned);
    // The answer arrives: the supervisor looks again and prunes the second as well.
    host.release.0.add_permits(1);
    host.answer.0.add_permits(2);
    while !status(&host, second).pruned {
        assert!(
            Instant::now() < deadline,
            "the deployment that ended during the Prune was never pruned"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        !status(&host, third).pruned,
        "the newest one keeps its detail"
    );
    let prunes = host.count(|c| matches!(c, Command::Prune { .. }));
    assert_eq!(prunes, 2, "one Prune per look, no more");
}
