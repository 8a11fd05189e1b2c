//! The group-deployment actor follows its steps and stops when the group deployment ends.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::super::messages::{Leadership, ListChildren, StateChanged, Steps};
use super::super::testkit::*;
use crate::domain::{Command, NodeReport, ResourceReport};

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
        ..Default::default()
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
                log: None,
            },
        )]),
        ..Default::default()
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
