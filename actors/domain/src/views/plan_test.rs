use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

fn spec(f: impl FnOnce(&mut DeploymentSpec)) -> DeploymentSpec {
    let mut s = DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        ..DeploymentSpec::default()
    };
    f(&mut s);
    s
}

#[test]
fn the_plan_is_what_starting_does_and_changes_nothing() {
    let mut k = Kit::new(7);
    k.ok(Command::MarkInactive {
        nodes: vec!["c-3".into()],
    });
    k.installed(5);
    let s = spec(|s| {
        s.nodes = Some("0-5".into());
        s.strategy = Some(Strategy::Batch {
            sizes: vec![1, 2],
            autopause: false,
        });
    });
    let before = k.s.snapshot_bytes();
    let plan = k.s.plan_deployment(&s).unwrap();
    assert_eq!(before, k.s.snapshot_bytes(), "a plan changes nothing");
    assert_eq!(
        (plan.version, &plan.version_reason),
        (2, &plan::VersionReason::Newest)
    );
    let ids: Vec<(&str, u32)> = plan.nodes.iter().map(|n| (n.id.as_str(), n.step)).collect();
    assert_eq!(
        ids,
        [("c-0", 1), ("c-1", 2), ("c-2", 2), ("c-4", 3), ("c-5", 0)],
        "batches 1, 2, 2 in order; c-5 already runs v2"
    );
    assert_eq!(plan.steps, [1, 2, 1]);
    let skipped: Vec<(&str, &str)> = plan
        .skipped
        .iter()
        .map(|n| (n.id.as_str(), n.why.as_str()))
        .collect();
    assert_eq!(skipped[0].0, "c-3");
    assert!(skipped[0].1.starts_with("inactive"), "{skipped:?}");
    assert_eq!(skipped[1], ("c-6", "outside the ordinal ranges \"0-5\""));
    let id = k.start_with(|x| *x = s.clone());
    let started: Vec<&str> = k.d(id).nodes.iter().map(|n| n.id.as_str()).collect();
    let planned: Vec<&str> = plan.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(started, planned, "the plan's node set is the deployment's");
    assert!(matches!(
        k.s.plan_deployment(&s),
        Err(DomainError::ActiveDeployment { .. })
    ));
}

#[test]
fn rolling_waves_and_version_reasons_pin_and_dependency() {
    let mut k = Kit::new(5);
    let plan =
        k.s.plan_deployment(&spec(|s| {
            s.strategy = Some(Strategy::Rolling {
                install_window: 2,
                download_window: 2,
            })
        }))
        .unwrap();
    let steps: Vec<u32> = plan.nodes.iter().map(|n| n.step).collect();
    assert_eq!(steps, [1, 1, 2, 2, 3]);
    // Version 3 needs db@1, which consumer c does not run: 2 is selected, 3 is passed over.
    k.ok(Command::CreateResource { name: "db".into() });
    k.ok(Command::PublishVersion {
        resource: "db".into(),
        label: None,
        artifact: None,
        metadata: BTreeMap::new(),
        depends_on: vec![],
        health_port: None,
    });
    k.publish(vec![Dependency {
        resource: "db".into(),
        version: 1,
    }]);
    let plan = k.s.plan_deployment(&spec(|_| {})).unwrap();
    assert_eq!(
        (plan.version, &plan.version_reason),
        (2, &plan::VersionReason::Dependency)
    );
    assert_eq!(plan.passed_over[0].version, 3);
    assert!(
        plan.passed_over[0].why.contains("needs db@1"),
        "{:?}",
        plan.passed_over
    );
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(1),
        policy: Policy::default(),
    });
    let plan = k.s.plan_deployment(&spec(|_| {})).unwrap();
    assert_eq!(
        (plan.version, &plan.version_reason),
        (1, &plan::VersionReason::Pin)
    );
    let plan = k.s.plan_deployment(&spec(|s| s.version = Some(3))).unwrap();
    assert_eq!(plan.version_reason, plan::VersionReason::Given);
}

#[test]
fn a_plan_refuses_a_retracted_version_as_starting_it_does() {
    let mut k = Kit::new(2);
    k.ok(Command::RetractVersion {
        resource: "r".into(),
        version: 2,
        message: None,
        by: Actor::User,
    });
    let s = spec(|s| s.version = Some(2));
    let planned = k.s.plan_deployment(&s).unwrap_err();
    let started = k.err(Command::StartDeployment(s));
    assert!(
        matches!(planned, DomainError::Retracted { version: 2, .. }),
        "{planned}"
    );
    assert_eq!(planned.to_string(), started.to_string());
}

#[test]
fn a_plan_leaves_out_a_node_another_consumers_active_deployment_of_the_resource_takes() {
    // c-1 is in `c` and `d`; `c`'s deployment of r is active (paused), so a deployment on `d` leaves c-1
    // out (a node follows one deployment of a resource at a time, DEPLOYMENTS.md §3): the plan must too.
    let mut k = Kit::new(2);
    k.ok(Command::CreateConsumer {
        name: "d".into(),
        nodes: vec!["c-1".into(), "d-0".into()],
    });
    k.report_node("d-0", "r", Some(1), &[(1, vp(true, true, None))]);
    let first = k.start_with(|s| s.strategy = Some(Strategy::AllAtOnce { fail_fast: false }));
    k.ok(pause(first, None, Actor::User));
    let on_d = spec(|s| {
        s.consumer = "d".into();
        s.version = Some(2);
    });
    let plan = k.s.plan_deployment(&on_d).unwrap();
    let planned: Vec<&str> = plan.nodes.iter().map(|n| n.id.as_str()).collect();
    let skipped: Vec<(&str, &str)> = plan
        .skipped
        .iter()
        .map(|n| (n.id.as_str(), n.why.as_str()))
        .collect();
    let second = k.start(on_d.clone());
    let started: Vec<&str> = k.d(second).nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(started, ["d-0"], "the start leaves c-1 out");
    assert_eq!(planned, started, "the plan's node set is the deployment's");
    assert_eq!(
        skipped,
        [("c-1", "in d-1, an active deployment of r on consumer \"c\"")]
    );
}
