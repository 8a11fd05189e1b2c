use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

/// Resource `resource` with a version 1 of no dependency, and consumer `consumer` of one node `{consumer}-0`.
fn member_at_v1(k: &mut Kit, consumer: &str, resource: &str) {
    k.ok(Command::CreateResource {
        name: resource.into(),
    });
    k.ok(Command::PublishVersion {
        resource: resource.into(),
        label: None,
        artifact: None,
        metadata: Default::default(),
        depends_on: vec![],
        health_port: None,
    });
    k.ok(Command::CreateConsumer {
        name: consumer.into(),
        nodes: vec![format!("{consumer}-0")],
    });
}

fn setup() -> Kit {
    let mut k = Kit::new(1);
    member_at_v1(&mut k, "d", "db");
    k.publish(vec![Dependency {
        resource: "db".into(),
        version: 1,
    }]);
    let members = vec![
        Member {
            consumer: "c".into(),
            resource: "r".into(),
        },
        Member {
            consumer: "d".into(),
            resource: "db".into(),
        },
    ];
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members,
    });
    k
}

#[test]
fn plan_orders_dependencies_first() {
    let k = setup();
    let steps = k.s.plan_group("g", None).unwrap();
    let shape: Vec<Vec<&str>> = steps
        .iter()
        .map(|s| s.iter().map(|i| i.resource.as_str()).collect())
        .collect();
    assert_eq!(shape, vec![vec!["db"], vec!["r"]]);
    assert_eq!(steps[1][0].version, 3);
}

#[test]
fn installed_members_are_left_out_and_satisfy_dependencies() {
    let mut k = setup();
    let rr = ResourceReport {
        interested: None,
        current: Some(1),
        versions: [(1, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    k.ok(Command::ReportNodes(vec![NodeReport {
        node: "d-0".into(),
        active: None,
        resources: [("db".to_string(), rr)].into(),
        ..Default::default()
    }]));
    let steps = k.s.plan_group("g", None).unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0][0].resource, "r");
}

#[test]
fn versions_must_name_member_resources_and_one_run_at_a_time() {
    let mut k = setup();
    let e = k.err(Command::StartGroupDeployment {
        group: "g".into(),
        versions: Some([("zzz".to_string(), 1)].into()),
        overrides: BTreeMap::new(),
    });
    assert!(e.to_string().contains("not a member of group \"g\""), "{e}");
    let e = k.err(Command::StartGroupDeployment {
        group: "nope".into(),
        versions: None,
        overrides: BTreeMap::new(),
    });
    assert_eq!(e.to_string(), "group \"nope\" not found");
    k.ok(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: BTreeMap::new(),
    });
    let e = k.err(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: BTreeMap::new(),
    });
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(k.s.group_deployment(GroupDeploymentId(1)).is_some());
    let listed: Vec<_> = k.s.group_deployments().into_iter().map(|g| g.id).collect();
    assert_eq!(
        listed,
        vec![GroupDeploymentId(1)],
        "the refused start is not listed"
    );
}

/// The `Groups` handler on its own, over copies of the state's maps: starting a group deployment gives out
/// its id and starts the first step through `Starts`; a step deployment that ends at once (`d-0` never
/// reported, so the db deployment has no node) is settled there, and the handler drives on to the next step,
/// reporting both in `Cx`.
#[test]
fn the_groups_handler_starts_and_drives_the_steps_over_what_it_borrows() {
    use super::Groups;
    use crate::families::settle::Cx;
    let k = setup();
    let mut group_deployments = k.s.group_deployment_map().clone();
    let mut consumers = k.s.consumer_map().clone();
    let mut nodes = k.s.node_table().clone();
    let mut deployments = k.s.deployment_map().clone();
    let mut active = k.s.active_set().clone();
    let (mut next_group, mut next) = (0, 0);
    let mut cx = Cx::new(k.now);
    let response = Groups {
        group_deployments: &mut group_deployments,
        next_group_deployment: &mut next_group,
        resources: k.s.resource_map(),
        groups: k.s.group_map(),
        consumers: &mut consumers,
        nodes: &mut nodes,
        deployments: &mut deployments,
        active: &mut active,
        next_deployment: &mut next,
    }
    .start_group_deployment("g".into(), None, BTreeMap::new(), &mut cx)
    .expect("started");
    let gid = GroupDeploymentId(1);
    let Response::GroupDeploymentStarted { id, steps } = response else {
        panic!("{response:?}");
    };
    assert_eq!((id, next_group, next), (gid, 1, 2));
    let db = steps[0][0].deployment.expect("the db step started");
    let r = steps[1][0].deployment.expect("then the r step");
    assert_eq!(deployments[&db].status, Status::RolledForward);
    assert_eq!(deployments[&r].resource, "r");
    assert_eq!(
        (deployments[&db].group, deployments[&r].group),
        (Some(gid), Some(gid))
    );
    assert_eq!(cx.ended, vec![db], "db ended at once, settled by Starts");
    assert!(!active.contains(&db) && active.contains(&r));
    let gd = &group_deployments[&gid];
    assert_eq!((gd.status, gd.current_step), (GroupStatus::Running, 1));
    assert_eq!(cx.outcome.started().collect::<Vec<_>>(), vec![db, r]);
}

/// Seed 003: the plan's graph is checked to be connected; a member no dependency links to the others is
/// refused, named.
#[test]
fn a_group_whose_members_are_not_connected_is_refused_naming_them() {
    let mut k = setup();
    member_at_v1(&mut k, "e", "tool");
    k.ok(Command::CreateGroup {
        name: "h".into(),
        members: vec![
            Member {
                consumer: "c".into(),
                resource: "r".into(),
            },
            Member {
                consumer: "d".into(),
                resource: "db".into(),
            },
            Member {
                consumer: "e".into(),
                resource: "tool".into(),
            },
        ],
    });
    let e = k.s.plan_group("h", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "group \"h\" is not connected: e/tool has no dependency link with c/r"
    );
    assert_eq!(e.kind(), crate::errors::ErrorKind::Invalid);
    let refused = k.err(Command::StartGroupDeployment {
        group: "h".into(),
        versions: None,
        overrides: BTreeMap::new(),
    });
    assert_eq!(refused, e);
    assert!(k.s.plan_group("g", None).is_ok(), "g is connected");
}
