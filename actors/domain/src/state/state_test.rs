use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

#[test]
fn snapshot_round_trips_to_identical_bytes() {
    let mut k = Kit::new(3);
    let id = k.start_with(|s| {
        s.strategy = Some(Strategy::Rolling {
            install_window: 1,
            download_window: 1,
        })
    });
    k.installed(0);
    let bytes = k.s.snapshot_bytes();
    let back = ClusterState::from_snapshot_bytes(&bytes).unwrap();
    assert_eq!(back, k.s);
    assert_eq!(back.snapshot_bytes(), bytes);
    assert_eq!(id.to_string(), "d-1");
    assert!(ClusterState::from_snapshot_bytes(&bytes[..bytes.len() / 2]).is_err());
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(
        ClusterState::from_snapshot_bytes(&extra).is_err(),
        "trailing bytes refused"
    );
}

#[test]
fn ids_are_sequential_and_parse() {
    let mut k = Kit::new(1);
    let a = k.start_with(|_| {});
    k.installed(0);
    let b = k.start_with(|s| s.version = Some(1));
    assert_eq!((a, b), (DeploymentId(1), DeploymentId(2)));
    assert_eq!("d-2".parse::<DeploymentId>().unwrap(), b);
    assert_eq!("2".parse::<DeploymentId>().unwrap(), b);
    assert_eq!(
        "x".parse::<DeploymentId>().unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(serde_json::to_string(&b).unwrap(), "\"d-2\"");
}

#[test]
fn section_9_rejections_name_the_thing_and_change_nothing() {
    let mut k = Kit::new(3);
    let id = k.start_with(|_| {});
    let spec = |f: fn(&mut DeploymentSpec)| {
        let mut s = DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            ..DeploymentSpec::default()
        };
        f(&mut s);
        Command::StartDeployment(s)
    };
    let cases: Vec<(Command, ErrorKind, &str)> = vec![
        (
            Command::Pause {
                id: DeploymentId(9),
                message: None,
                by: Actor::User,
            },
            ErrorKind::NotFound,
            "deployment \"d-9\" not found",
        ),
        (
            spec(|s| s.consumer = "nope".into()),
            ErrorKind::NotFound,
            "consumer \"nope\" not found",
        ),
        (
            spec(|_| {}),
            ErrorKind::Conflict,
            "consumer \"c\" already has active deployment \"d-1\" of resource \"r\"",
        ),
        (
            Command::CreateResource { name: "r".into() },
            ErrorKind::Conflict,
            "resource \"r\" already exists",
        ),
        (
            Command::Pause {
                id,
                message: Some("x".repeat(1025)),
                by: Actor::User,
            },
            ErrorKind::Invalid,
            "message is 1025 characters long; at most 1024 are allowed",
        ),
        (
            Command::Subscribe {
                consumer: "c".into(),
                resource: "r".into(),
                mode: Mode::Strong,
                pin: Some(7),
                policy: Policy::default(),
            },
            ErrorKind::NotFound,
            "resource \"r\" has no version 7",
        ),
        (
            Command::MarkInactive {
                nodes: vec!["ghost".into()],
            },
            ErrorKind::NotFound,
            "node \"ghost\" not found",
        ),
    ];
    for (cmd, kind, msg) in cases {
        let e = k.err(cmd);
        assert_eq!((e.kind(), e.to_string().as_str()), (kind, msg));
    }
    k.ok(Command::Abort {
        id,
        message: None,
        by: Actor::User,
    });
    let cases: Vec<(Command, &str)> = vec![
        (
            spec(|s| {
                s.strategy = Some(Strategy::Rolling {
                    install_window: 0,
                    download_window: 1,
                })
            }),
            "install_window = 0",
        ),
        (
            spec(|s| {
                s.strategy = Some(Strategy::Batch {
                    sizes: vec![0],
                    autopause: false,
                })
            }),
            "batch.sizes = [0]",
        ),
        (
            spec(|s| s.pulse_interval_ms = Some(0)),
            "pulse_interval_ms = 0",
        ),
        (
            spec(|s| s.version = Some(9)),
            "resource \"r\" has no version 9",
        ),
        (
            spec(|s| {
                s.completion = Some(Completion {
                    quorum: Some(0.0),
                    timeout_ms: None,
                    ..Default::default()
                })
            }),
            "completion.quorum = 0",
        ),
        (
            spec(|s| s.nodes = Some("0-3".into())),
            "node range \"0-3\" is outside the node set of consumer \"c\" (3 nodes)",
        ),
        (
            Command::Rollback {
                id,
                message: None,
                by: Actor::User,
            },
            "deployment \"d-1\" is ABORTED; cannot roll back a terminal deployment",
        ),
    ];
    for (cmd, msg) in cases {
        let e = k.err(cmd);
        assert!(e.to_string().starts_with(msg), "{e}");
    }
}

#[test]
fn report_changes_filters_heartbeats() {
    let k = Kit::new(1);
    let rr = ResourceReport {
        interested: None,
        current: Some(1),
        versions: [(1, vp(true, true, None))].into(),
        removed: false,
        log: None,
    };
    let hb = NodeReport {
        node: "c-0".into(),
        active: None,
        resources: [("r".to_string(), rr.clone())].into(),
        ..Default::default()
    };
    assert_eq!(k.s.report_changes(&hb), None, "a heartbeat changes nothing");
    let mut changed = hb.clone();
    changed.resources.get_mut("r").unwrap().current = Some(2);
    changed
        .resources
        .insert("other".into(), ResourceReport::default());
    let out = k.s.report_changes(&changed).unwrap();
    assert_eq!(out.resources.len(), 2);
    let mut same_plus = hb.clone();
    same_plus.resources.insert("s".into(), rr);
    assert_eq!(
        k.s.report_changes(&same_plus)
            .unwrap()
            .resources
            .keys()
            .collect::<Vec<_>>(),
        vec!["s"]
    );
    let new = NodeReport {
        node: "new".into(),
        ..NodeReport::default()
    };
    assert!(k.s.report_changes(&new).is_some());
}

#[test]
fn a_log_path_is_stored_and_reaches_the_log_only_when_it_changes() {
    let mut k = Kit::new(1);
    let report = |log: Option<&str>, current: u64| NodeReport {
        node: "c-0".into(),
        resources: [(
            "r".to_string(),
            ResourceReport {
                current: Some(current),
                versions: [(1, vp(true, true, None)), (2, vp(true, true, None))].into(),
                log: log.map(str::to_string),
                ..ResourceReport::default()
            },
        )]
        .into(),
        ..Default::default()
    };
    let path = "/var/lib/convoy-agent/logs/r.stdout.log";
    let first = k.s.report_changes(&report(Some(path), 1)).unwrap();
    assert_eq!(
        first.resources["r"].log.as_deref(),
        Some(path),
        "a new path"
    );
    k.ok(Command::ReportNodes(vec![first]));
    let stored = |k: &Kit| k.s.node("c-0").unwrap().resources["r"].log.clone();
    assert_eq!(stored(&k).as_deref(), Some(path));
    assert_eq!(
        k.s.report_changes(&report(Some(path), 1)),
        None,
        "the same path again is a heartbeat"
    );
    assert_eq!(
        k.s.report_changes(&report(None, 1)),
        None,
        "no path leaves the stored one"
    );
    // Another change carries the path only when it differs.
    let moved = k.s.report_changes(&report(Some(path), 2)).unwrap();
    assert_eq!(moved.resources["r"].current, Some(2));
    assert_eq!(
        moved.resources["r"].log, None,
        "an unchanged path is not repeated"
    );
    k.ok(Command::ReportNodes(vec![moved]));
    assert_eq!(stored(&k).as_deref(), Some(path), "kept when not repeated");
    let other = "/srv/agent/logs/r.stdout.log";
    let changed = k.s.report_changes(&report(Some(other), 2)).unwrap();
    assert_eq!(changed.resources["r"].log.as_deref(), Some(other));
    k.ok(Command::ReportNodes(vec![changed]));
    assert_eq!(stored(&k).as_deref(), Some(other));
}

#[test]
fn weak_subscription_targets_the_selected_version_at_once() {
    let mut k = Kit::new(2);
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: None,
        policy: Policy::default(),
    });
    assert_eq!(
        k.s.targets("c-1")["r"],
        Target {
            version: 2,
            download: true,
            install: true,
            uninstall: false,
        }
    );
    assert!(
        k.s.deployments(&DeploymentFilter::default()).is_empty(),
        "weak: no deployment object"
    );
}

#[test]
fn deployment_view_json_matches_the_api() {
    let mut k = Kit::new(2);
    let id = k.start_with(|s| s.message = Some("go".into()));
    k.installed(0);
    k.ok(Command::Pause {
        id,
        message: None,
        by: Actor::User,
    });
    let v = serde_json::to_value(k.s.deployment(id).unwrap()).unwrap();
    assert_eq!(v["id"], "d-1");
    assert_eq!(v["status"], "ROLL_FORWARD_PAUSED");
    assert_eq!(v["paused_by"], "user");
    assert_eq!(
        v["nodes"][0],
        serde_json::json!({"id": "c-0", "ordinal": 0, "from_version": 1, "state": "succeeded", "failures": 0})
    );
    assert_eq!(v["nodes"][1]["state"], "installing");
    assert_eq!(
        v["events"][0],
        serde_json::json!({"at": 100, "status": "ROLLING_FORWARD", "by": "user", "message": "go"})
    );
    let succeeded = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "succeeded")
        .unwrap();
    assert_eq!(succeeded["node"], "c-0");
    assert_eq!(
        v["settings"]["strategy"],
        serde_json::json!({"all_at_once": {"fail_fast": false}})
    );
}

#[test]
fn a_restored_state_applies_like_the_original() {
    // Nodes created out of id order: the restored node table lays them out differently inside.
    let mut s = ClusterState::default();
    let at = 1;
    s.apply(Command::CreateResource { name: "r".into() }, at)
        .unwrap();
    for _ in 0..2 {
        let publish = Command::PublishVersion {
            resource: "r".into(),
            label: None,
            artifact: None,
            metadata: BTreeMap::new(),
            depends_on: vec![],
            health_port: None,
        };
        s.apply(publish, at).unwrap();
    }
    let nodes: Vec<String> = ["z", "b", "m", "a"].map(String::from).to_vec();
    let create = Command::CreateConsumer {
        name: "c".into(),
        nodes: nodes.clone(),
    };
    s.apply(create, at).unwrap();
    let report = |n: &str, v: u64, held: &[u64]| NodeReport {
        node: n.into(),
        active: None,
        resources: BTreeMap::from([(
            "r".to_string(),
            ResourceReport {
                interested: None,
                current: Some(v),
                versions: held.iter().map(|h| (*h, vp(true, true, None))).collect(),
                removed: false,
                log: None,
            },
        )]),
        ..Default::default()
    };
    let first: Vec<NodeReport> = nodes.iter().map(|n| report(n, 1, &[1])).collect();
    s.apply(Command::ReportNodes(first), 2).unwrap();
    let spec = DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
        ..DeploymentSpec::default()
    };
    s.apply(Command::StartDeployment(spec), 3).unwrap();
    let mut back = ClusterState::from_snapshot_bytes(&s.snapshot_bytes()).unwrap();
    let mut later: Vec<Command> = nodes
        .iter()
        .map(|n| Command::ReportNodes(vec![report(n, 2, &[1, 2])]))
        .collect();
    later.push(Command::ReportNodes(vec![report("new", 1, &[1])]));
    for (k, cmd) in later.into_iter().enumerate() {
        let t = 10 + k as u64;
        assert_eq!(s.apply(cmd.clone(), t), back.apply(cmd, t));
        assert_eq!(s.snapshot_bytes(), back.snapshot_bytes());
    }
    assert_eq!(s, back);
    assert_eq!(
        s.deployment(DeploymentId(1)).unwrap().status,
        Status::RolledForward
    );
    assert!(s.node("a").unwrap().deployments.is_empty());
    assert_eq!(s.node("new"), back.node("new"));
}
