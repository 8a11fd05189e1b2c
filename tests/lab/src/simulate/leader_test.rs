//! The simulated leader runs the leader's own handlers, with nothing of the harness in between: a
//! deployment whose pulse countdown runs out is ticked (and blocked) by the leader's deployment
//! handler on the virtual clock, and by a new leader's after a failover; the agents' reports go through the consumer handler, which keeps
//! heartbeats off the log and proposes changes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use convoy_actors::domain::{
    Actor, Command, DeploymentId, DeploymentSpec, PausedBy, Response, Status, Strategy,
};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::cluster::{Client, Cluster, Written};
use super::disk::FsyncModel;
use super::executor;
use super::leader::{self, LeaderJobs};
use super::net::SimNet;
use super::observe::Observations;
use super::runtime;

/// Proposes `command` and returns the domain's answer (the test fails when it does not commit).
async fn write(client: &Client, command: Command) -> Response {
    match client.write(&command, Duration::from_secs(5)).await {
        Written::Done { response, .. } => response.unwrap_or_else(|e| panic!("{command:?}: {e}")),
        Written::Unknown(why) => panic!("{command:?} not committed: {why}"),
    }
}

/// A report of `node` running `app` v1.
fn running_v1(node: &str) -> convoy_actors::domain::NodeReport {
    use convoy_actors::domain::{NodeReport, ResourceReport, VersionProgress};
    NodeReport {
        node: node.into(),
        active: Some(true),
        resources: BTreeMap::from([(
            "app".to_string(),
            ResourceReport {
                interested: None,
                current: Some(1),
                versions: BTreeMap::from([(
                    1,
                    VersionProgress {
                        downloaded: true,
                        installed: true,
                        done: true,
                        error: None,
                        ..Default::default()
                    },
                )]),
                ..Default::default()
            },
        )]),
        ..Default::default()
    }
}

/// Three servers founded, and the leader's jobs following leadership.
struct Sim {
    cluster: Cluster,
    client: Client,
    jobs: Rc<RefCell<LeaderJobs>>,
    obs: Observations,
}

impl Sim {
    async fn new() -> Sim {
        let obs = Observations::new(false);
        let net = SimNet::new(StdRng::seed_from_u64(3));
        let mut cluster = Cluster::new(3, FsyncModel::Honest, net, obs.clone()).expect("cluster");
        for id in cluster.ids() {
            cluster.start(id).await.expect("start");
        }
        cluster.initialize(1).await.expect("initialize");
        let client = cluster.client();
        let jobs = Rc::new(RefCell::new(LeaderJobs::new(std::time::Instant::now())));
        Sim {
            cluster,
            client,
            jobs,
            obs,
        }
    }

    /// Resource `app` v1 and v2, consumer `web` of two nodes running v1.
    async fn fleet(&self) {
        write(&self.client, Command::CreateResource { name: "app".into() }).await;
        for _ in 0..2 {
            write(
                &self.client,
                Command::PublishVersion {
                    resource: "app".into(),
                    label: None,
                    artifact: None,
                    metadata: BTreeMap::new(),
                    depends_on: vec![],
                    health_port: None,
                },
            )
            .await;
        }
        write(
            &self.client,
            Command::CreateConsumer {
                name: "web".into(),
                nodes: vec!["web-0".into(), "web-1".into()],
            },
        )
        .await;
        write(
            &self.client,
            Command::ReportNodes(vec![running_v1("web-0"), running_v1("web-1")]),
        )
        .await;
    }

    /// The leader's jobs follow leadership and act, every 100 ms for `span`.
    async fn lead_for(&self, span: Duration) {
        let end = executor::now_ms() + span.as_millis() as u64;
        while executor::now_ms() < end {
            executor::sleep(Duration::from_millis(100)).await;
            let leader = self.cluster.leader().filter(|l| self.cluster.is_up(*l));
            let on_leader = leader.and_then(|l| self.cluster.applied_of(l).map(|a| (l, a)));
            self.jobs.borrow_mut().leader_is(on_leader, &self.client);
            leader::step(&self.jobs, &self.obs);
        }
    }

    /// Deployment `id` as the leader's state holds it.
    fn status(&self, id: DeploymentId) -> (Status, Option<PausedBy>) {
        let leader = self.cluster.leader().expect("a leader");
        self.cluster
            .read(leader, |s, _| {
                let view = s.deployment(id).expect("the deployment");
                (view.status, view.paused_by)
            })
            .expect("the leader is up")
    }
}

/// Runs `test` on a fresh simulation.
fn simulate(test: impl std::future::Future<Output = ()> + 'static) {
    executor::reset();
    runtime::seed_rng(11);
    let result = executor::block_on(test);
    executor::reset();
    result.expect("the simulation stalled");
}

impl Sim {
    /// A coordinated rolling deployment of `app` v2 to `web` (2 s pulses), pulsed once: its
    /// countdown runs.
    async fn pulsed(&self) -> DeploymentId {
        let spec = DeploymentSpec {
            consumer: "web".into(),
            resource: "app".into(),
            version: Some(2),
            strategy: Some(Strategy::Rolling {
                install_window: 1,
                download_window: 1,
            }),
            pulse_interval_ms: Some(2_000),
            ..Default::default()
        };
        let id = match write(&self.client, Command::StartDeployment(spec)).await {
            Response::DeploymentStarted { id, .. } => id,
            other => panic!("unexpected {other:?}"),
        };
        write(
            &self.client,
            Command::Pulse {
                id,
                by: Actor::Pulse,
            },
        )
        .await;
        id
    }
}

#[test]
fn the_leaders_deployment_handler_blocks_a_deployment_whose_pulse_countdown_ran_out() {
    simulate(async {
        let sim = Sim::new().await;
        sim.fleet().await;
        let id = sim.pulsed().await;
        sim.lead_for(Duration::from_secs(1)).await;
        assert_eq!(sim.status(id).0, Status::RollingForward, "ticked too soon");
        sim.lead_for(Duration::from_secs(3)).await;
        assert_eq!(
            sim.status(id),
            (
                Status::RollForwardAwaitingPulse,
                Some(PausedBy::PulseTimeout)
            ),
            "the leader did not block the deployment when its pulse countdown ran out"
        );
    });
}

#[test]
fn a_new_leader_rearms_the_pulse_countdown_and_blocks_the_deployment_when_it_runs_out() {
    simulate(async {
        let mut sim = Sim::new().await;
        sim.fleet().await;
        let id = sim.pulsed().await;
        sim.lead_for(Duration::from_millis(500)).await;
        let first = sim.cluster.leader().expect("a leader");
        sim.cluster.crash(first);
        sim.lead_for(Duration::from_secs(4)).await;
        let second = sim.cluster.leader().expect("a new leader");
        assert_ne!(first, second, "the crashed leader still leads");
        assert_eq!(
            sim.status(id),
            (
                Status::RollForwardAwaitingPulse,
                Some(PausedBy::PulseTimeout)
            ),
            "the new leader did not re-arm the pulse countdown"
        );
    });
}

#[test]
fn the_leaders_consumer_handler_keeps_heartbeats_off_the_log_and_proposes_changes() {
    simulate(async {
        let sim = Sim::new().await;
        sim.fleet().await;
        sim.lead_for(Duration::from_millis(500)).await;
        let leader = sim.cluster.leader().expect("a leader");
        let before = sim.cluster.last_applied(leader);
        let refused = sim
            .jobs
            .borrow_mut()
            .reported(vec![running_v1("web-0"), running_v1("web-1")]);
        assert_eq!(refused, 0);
        sim.lead_for(Duration::from_secs(1)).await;
        assert_eq!(
            sim.cluster.last_applied(leader),
            before,
            "heartbeats reached the log"
        );
        let mut failing = running_v1("web-1");
        for resource in failing.resources.values_mut() {
            for version in resource.versions.values_mut() {
                version.error = Some("disk full".into());
            }
        }
        let changed = |sim: &Sim| {
            sim.cluster
                .read(leader, |s, _| s.report_changes(&failing).is_some())
                .expect("the leader is up")
        };
        assert!(changed(&sim), "the report changes something");
        sim.jobs.borrow_mut().reported(vec![failing.clone()]);
        sim.lead_for(Duration::from_secs(1)).await;
        assert!(!changed(&sim), "the change was not proposed");
        assert_eq!(
            sim.cluster.last_applied(leader),
            before + 1,
            "one batch for the change"
        );
    });
}
