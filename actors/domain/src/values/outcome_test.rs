use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

/// Applies `cmd` at the kit's clock and returns what the actors would hear of.
fn outcome(k: &mut Kit, cmd: Command) -> Outcome {
    k.s.apply_with_outcome(cmd, k.now)
        .unwrap_or_else(|e| panic!("refused: {e}"))
        .1
}

fn spec(consumer: &str, timeout_ms: Option<u64>) -> DeploymentSpec {
    DeploymentSpec {
        consumer: consumer.into(),
        resource: "r".into(),
        version: Some(2),
        strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
        completion: timeout_ms.map(|t| Completion {
            quorum: None,
            timeout_ms: Some(t),
            ..Default::default()
        }),
        ..DeploymentSpec::default()
    }
}

/// Consumer `e` with one node `e-0` that runs version 1 of `r`.
fn second_consumer(k: &mut Kit) {
    k.ok(Command::CreateConsumer {
        name: "e".into(),
        nodes: vec!["e-0".into()],
    });
    let rr = ResourceReport {
        interested: None,
        current: Some(1),
        versions: [(1, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "e-0".into(),
        active: None,
        resources: BTreeMap::from([("r".to_string(), rr)]),
        ..Default::default()
    }]));
}

fn started(o: &Outcome) -> DeploymentId {
    let ids: Vec<DeploymentId> = o.started().collect();
    assert_eq!(ids.len(), 1, "{o:?}");
    ids[0]
}

#[test]
fn a_command_no_actor_watches_has_an_empty_outcome() {
    let mut k = Kit::new(1);
    let o = outcome(&mut k, Command::CreateResource { name: "s".into() });
    assert!(o.is_empty(), "{o:?}");
}

#[test]
fn a_tick_for_no_active_deployment_and_a_refused_command_tell_the_actors_nothing() {
    let mut k = Kit::new(1);
    let refused = k.s.apply_with_outcome(
        Command::TickDeployment {
            id: DeploymentId(1),
        },
        k.now,
    );
    assert_eq!(refused, Ok((Response::Done, Outcome::default())));
    let refused =
        k.s.apply_with_outcome(Command::DeleteConsumer { name: "x".into() }, k.now);
    assert!(refused.is_err());
}

#[test]
fn a_started_deployment_comes_with_its_deadline() {
    let mut k = Kit::new(1);
    let o = outcome(&mut k, Command::StartDeployment(spec("c", Some(1_000))));
    let id = started(&o);
    assert_eq!(
        o.deadlines().collect::<Vec<_>>(),
        vec![(id, Some(k.now + 1_000))]
    );
    assert_eq!(o.ended().count(), 0);
}

#[test]
fn a_deployment_that_ends_is_reported_ended_with_no_deadline() {
    let mut k = Kit::new(1);
    let id = k.start_with(|_| {});
    let before = k.now;
    let rr = ResourceReport {
        interested: None,
        current: Some(2),
        versions: [(1, vp(true, true, None)), (2, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    let o = outcome(
        &mut k,
        Command::ReportNodes(vec![NodeReport {
            node: "c-0".into(),
            active: None,
            resources: BTreeMap::from([("r".to_string(), rr)]),
            ..Default::default()
        }]),
    );
    assert_eq!(k.d(id).status, Status::RolledForward, "at {before}");
    assert_eq!(o.ended().collect::<Vec<_>>(), vec![id]);
    assert_eq!(o.deadlines().collect::<Vec<_>>(), vec![(id, None)]);
}

#[test]
fn tick_deployment_evaluates_its_own_deployment_only() {
    let mut k = Kit::new(1);
    second_consumer(&mut k);
    let first = started(&outcome(
        &mut k,
        Command::StartDeployment(spec("c", Some(1_000))),
    ));
    let second = started(&outcome(
        &mut k,
        Command::StartDeployment(spec("e", Some(1_000))),
    ));
    k.now += 1_000;
    let o = outcome(&mut k, Command::TickDeployment { id: first });
    assert!(k.d(first).status.is_terminal(), "{:?}", k.d(first).status);
    assert_eq!(k.d(second).status, Status::RollingForward);
    assert_eq!(o.ended().collect::<Vec<_>>(), vec![first]);
    assert_eq!(o.deadlines().collect::<Vec<_>>(), vec![(first, None)]);
    // The other one's deadline is still there for its own actor.
    assert_eq!(k.s.deployment_deadline(second), Some(k.now));
}

#[test]
fn tick_deployment_before_the_deadline_changes_nothing_but_says_the_deadline() {
    let mut k = Kit::new(1);
    let id = started(&outcome(
        &mut k,
        Command::StartDeployment(spec("c", Some(1_000))),
    ));
    let before = k.s.snapshot_bytes();
    k.now += 999;
    let o = outcome(&mut k, Command::TickDeployment { id });
    assert_eq!(before, k.s.snapshot_bytes());
    assert_eq!(o.deadlines().collect::<Vec<_>>(), vec![(id, Some(1_100))]);
}

#[test]
fn consumers_created_and_deleted_are_named() {
    let mut k = Kit::new(1);
    let o = outcome(
        &mut k,
        Command::CreateConsumer {
            name: "e".into(),
            nodes: vec![],
        },
    );
    assert_eq!(o.consumers().collect::<Vec<_>>(), vec!["e"]);
    let o = outcome(&mut k, Command::DeleteConsumer { name: "e".into() });
    assert_eq!(o.consumers().collect::<Vec<_>>(), vec!["e"]);
}

#[test]
fn merging_keeps_the_later_deadline_and_gives_up_past_the_bound() {
    let mut k = Kit::new(1);
    let mut merged = outcome(&mut k, Command::StartDeployment(spec("c", Some(1_000))));
    let id = started(&merged);
    k.now += 500;
    merged.merge(outcome(
        &mut k,
        Command::Abort {
            id,
            message: None,
            by: Actor::User,
        },
    ));
    assert_eq!(merged.started().collect::<Vec<_>>(), vec![id]);
    assert_eq!(merged.ended().collect::<Vec<_>>(), vec![id]);
    assert_eq!(merged.deadlines().collect::<Vec<_>>(), vec![(id, None)]);
    assert!(!merged.needs_resync());

    let mut big = Outcome::default();
    for i in 0..=MAX_OUTCOME_ENTRIES as u64 {
        let mut one = Outcome::default();
        one.deadline(DeploymentId(i), None);
        big.merge(one);
    }
    assert!(big.needs_resync());
    assert_eq!(big.deadlines().count(), 0);
}

fn report(k: &mut Kit, node: &str, resource: &str, version: u64) -> Outcome {
    let rr = ResourceReport {
        interested: None,
        current: Some(version),
        versions: [(version, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    outcome(
        k,
        Command::ReportNodes(vec![NodeReport {
            node: node.into(),
            active: None,
            resources: BTreeMap::from([(resource.to_string(), rr)]),
            ..Default::default()
        }]),
    )
}

#[test]
fn a_group_deployment_reports_its_start_each_step_and_its_end() {
    let mut k = Kit::new(1);
    k.ok(Command::CreateResource { name: "db".into() });
    k.ok(Command::PublishVersion {
        resource: "db".into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![],
        health_port: None,
    });
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["d-0".into()],
    });
    let v = k.publish(vec![Dependency {
        resource: "db".into(),
        version: 1,
    }]);
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![
            Member {
                consumer: "c".into(),
                resource: "r".into(),
            },
            Member {
                consumer: "d".into(),
                resource: "db".into(),
            },
        ],
    });
    // d-0 is known (it reported) but runs no db yet.
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "d-0".into(),
        active: Some(true),
        resources: BTreeMap::new(),
        ..Default::default()
    }]));
    let o = outcome(
        &mut k,
        Command::StartGroupDeployment {
            group: "g".into(),
            versions: None,
            overrides: BTreeMap::new(),
        },
    );
    let group: Vec<GroupDeploymentId> = o.groups_started().collect();
    assert_eq!(group.len(), 1, "{o:?}");
    let db = started(&o);
    assert_eq!(k.d(db).resource, "db");

    let o = report(&mut k, "d-0", "db", 1);
    assert_eq!(o.ended().collect::<Vec<_>>(), vec![db]);
    assert_eq!(o.steps().collect::<Vec<_>>(), vec![(group[0], 1)]);
    let r = started(&o);
    assert_eq!((k.d(r).resource.as_str(), k.d(r).version), ("r", v));
    assert_eq!(o.groups_ended().count(), 0);

    let o = report(&mut k, "c-0", "r", v);
    assert_eq!(o.ended().collect::<Vec<_>>(), vec![r]);
    assert_eq!(o.steps().collect::<Vec<_>>(), vec![(group[0], 2)]);
    assert_eq!(o.groups_ended().collect::<Vec<_>>(), group);
}
