//! Group deployments (003): three consumers in two steps, cycles and dangling dependencies refused with paths.

use convoy_domain::testing::*;
use convoy_domain::*;

fn member(c: &str, r: &str) -> Member {
    Member {
        consumer: c.into(),
        resource: r.into(),
    }
}

/// Every member of the three-tier group all at once (what these scenarios were written for; the default
/// strategy is rolling one node at a time).
fn all_at_once() -> std::collections::BTreeMap<String, Policy> {
    ["frontend", "backend", "schema"]
        .into_iter()
        .map(|r| {
            let p = Policy {
                strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
                ..Policy::default()
            };
            (r.to_string(), p)
        })
        .collect()
}

fn three_tier(h: &mut Kit) {
    h.fleet("db", "schema", 2);
    h.fleet("api", "backend", 2);
    h.fleet("web", "frontend", 2);
    h.publish_to("schema");
    h.publish_deps("backend", vec![("schema", 2)]);
    h.publish_deps("frontend", vec![("schema", 2)]);
    h.ok(Command::CreateGroup {
        name: "shop".into(),
        members: vec![
            member("web", "frontend"),
            member("api", "backend"),
            member("db", "schema"),
        ],
    });
}

#[test]
fn group_deployment_of_three_consumers_in_two_steps() {
    let mut h = Kit::empty();
    three_tier(&mut h);
    // Dependency invariant in selection: backend 2 needs schema 2 on db, which is not installed yet.
    assert_eq!(h.s.selected_version("api", "backend"), Some(1));
    let (id, steps) = match h.ok(Command::StartGroupDeployment {
        group: "shop".into(),
        versions: None,
        overrides: all_at_once(),
    }) {
        Response::GroupDeploymentStarted { id, steps } => (id, steps),
        other => panic!("{other:?}"),
    };
    let shape: Vec<Vec<(String, u64)>> = steps
        .iter()
        .map(|s| s.iter().map(|i| (i.consumer.clone(), i.version)).collect())
        .collect();
    assert_eq!(
        shape,
        vec![
            vec![("db".to_string(), 2)],
            vec![("web".to_string(), 2), ("api".to_string(), 2)]
        ]
    );
    let view = h.s.group_deployment(id).unwrap();
    assert_eq!((view.status, view.current_step), (GroupStatus::Running, 0));
    assert!(
        view.steps[1].iter().all(|i| i.deployment.is_none()),
        "later steps have not started"
    );
    assert!(h.target("web-0", "frontend").is_none_or(|t| !t.install));
    h.node_installed("db-0", "schema", 1, 2);
    h.node_installed("db-1", "schema", 1, 2);
    let view = h.s.group_deployment(id).unwrap();
    assert_eq!(view.current_step, 1);
    assert_eq!(view.steps[0][0].status, Some(Status::RolledForward));
    assert!(view.steps[1]
        .iter()
        .all(|i| i.status == Some(Status::RollingForward)));
    for n in ["web-0", "web-1"] {
        h.node_installed(n, "frontend", 1, 2);
    }
    for n in ["api-0", "api-1"] {
        h.node_installed(n, "backend", 1, 2);
    }
    let view = h.s.group_deployment(id).unwrap();
    assert_eq!(
        (view.status, view.current_step),
        (GroupStatus::Succeeded, 2)
    );
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["status"], "SUCCEEDED");
    assert_eq!(json["steps"][0][0]["deployment"], "d-1");
}

#[test]
fn failed_step_fails_the_group_and_later_steps_never_start() {
    let mut h = Kit::empty();
    three_tier(&mut h);
    let Response::GroupDeploymentStarted { id, .. } = h.ok(Command::StartGroupDeployment {
        group: "shop".into(),
        versions: None,
        overrides: all_at_once(),
    }) else {
        panic!()
    };
    h.install_failed("db-0", "schema", 1, 2);
    // All at once judges when every node is done.
    h.install_failed("db-1", "schema", 1, 2);
    // Both db nodes still run version 1, so the rollback finishes at once.
    let view = h.s.group_deployment(id).unwrap();
    assert_eq!(view.steps[0][0].status, Some(Status::RolledBack));
    assert_eq!(view.status, GroupStatus::Failed);
    assert!(view.steps[1].iter().all(|i| i.deployment.is_none()));
    let e = h.err(Command::AbortGroupDeployment {
        id,
        by: Actor::User,
    });
    assert_eq!(e.kind(), ErrorKind::Conflict);
}

#[test]
fn abort_group_deployment_aborts_running_step() {
    let mut h = Kit::empty();
    three_tier(&mut h);
    let Response::GroupDeploymentStarted { id, .. } = h.ok(Command::StartGroupDeployment {
        group: "shop".into(),
        versions: None,
        overrides: all_at_once(),
    }) else {
        panic!()
    };
    assert_eq!(
        h.ok(Command::AbortGroupDeployment {
            id,
            by: Actor::User
        }),
        Response::GroupDeployment {
            id,
            status: GroupStatus::Aborted
        }
    );
    assert_eq!(
        h.s.group_deployment(id).unwrap().steps[0][0].status,
        Some(Status::Aborted)
    );
}

#[test]
fn cycle_is_refused_with_its_path() {
    let mut h = Kit::empty();
    for r in ["a", "b"] {
        h.ok(Command::CreateResource { name: r.into() });
        h.publish_to(r);
    }
    h.ok(Command::CreateConsumer {
        name: "ca".into(),
        nodes: vec!["ca-0".into()],
    });
    h.ok(Command::CreateConsumer {
        name: "cb".into(),
        nodes: vec!["cb-0".into()],
    });
    h.report_node("ca-0", "a", Some(1), &[(1, vp(true, true, None))]);
    h.report_node("cb-0", "b", None, &[]);
    h.publish_deps("a", vec![("b", 1)]);
    h.publish_deps("b", vec![("a", 2)]);
    h.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![member("ca", "a"), member("cb", "b")],
    });
    let e = h.err(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: Default::default(),
    });
    assert_eq!(
        e.to_string(),
        "dependency cycle in group \"g\": ca/a@2 -> cb/b@2 -> ca/a@2"
    );
    assert_eq!(e.kind(), ErrorKind::Invalid);
}

#[test]
fn dangling_dependency_is_refused_with_its_path() {
    let mut h = Kit::empty();
    h.fleet("c", "x", 1);
    h.ok(Command::CreateResource { name: "y".into() });
    h.publish_to("y");
    h.publish_deps("x", vec![("y", 1)]);
    h.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![member("c", "x")],
    });
    let e = h.err(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: Default::default(),
    });
    assert_eq!(
        e.to_string(),
        "dangling dependency in group \"g\": c/x@2 -> y@1: resource is not a member of the group"
    );
    let e = h.err(Command::CreateGroup {
        name: "h".into(),
        members: vec![member("c", "x"), member("c", "x")],
    });
    assert!(e.to_string().contains("at most once"), "{e}");
}
