use crate::testing::*;
use crate::*;

fn retract(k: &mut Kit, version: u64) {
    k.ok(Command::RetractVersion {
        resource: "r".into(),
        version,
        message: Some("leaks memory".into()),
        by: Actor::Token("ci".into()),
    });
}

fn unretract(k: &mut Kit, version: u64) {
    k.ok(Command::UnretractVersion {
        resource: "r".into(),
        version,
    });
}

fn subscribe(k: &mut Kit, mode: Mode, pin: Option<u64>) {
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode,
        pin,
        policy: Policy {
            strategy: Some(Strategy::AllAtOnce { fail_fast: false }),
            ..Policy::default()
        },
    });
}

#[test]
fn a_retracted_version_leaves_weak_selection_and_comes_back_when_unretracted() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None);
    assert_eq!(k.s.targets("c-0")["r"].version, 2);
    retract(&mut k, 2);
    assert_eq!(k.s.selected_version("c", "r"), Some(1));
    for node in ["c-0", "c-1"] {
        assert_eq!(k.s.targets(node)["r"].version, 1, "{node}");
    }
    let view = k.s.resource("r").unwrap();
    let r = view.versions[1]
        .retracted
        .as_ref()
        .expect("marked retracted");
    assert_eq!((r.at, r.by.name()), (k.now, "ci"));
    assert_eq!(r.message.as_deref(), Some("leaks memory"));
    assert!(view.versions[0].retracted.is_none());

    unretract(&mut k, 2);
    assert_eq!(k.s.targets("c-0")["r"].version, 2);
    assert!(k.s.resource("r").unwrap().versions[1].retracted.is_none());
}

#[test]
fn a_strong_subscription_on_a_retracted_version_is_deployed_to_the_newest_allowed_one() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Strong, None);
    let first = k.s.consumer_map()["c"].active["r"];
    k.installed(0);
    k.installed(1);
    assert_eq!(k.d(first).status, Status::RolledForward);
    assert_eq!(k.s.consumer_map()["c"].subscriptions["r"].version, Some(2));

    retract(&mut k, 2);
    let back = k.s.consumer_map()["c"].active["r"];
    assert_ne!(back, first);
    let d = k.s.deployment(back).unwrap();
    assert_eq!((d.version, d.events[0].by.name()), (1, "system"));
    assert_eq!(
        d.events[0].message.as_deref(),
        Some("version 2 of r is retracted; selected version changed to 1")
    );
    assert_eq!(k.flags(2).0, vec![0, 1], "both nodes are sent version 1");
    for i in 0..2 {
        k.report(
            i,
            Some(1),
            &[(1, vp(true, true, None)), (2, vp(true, true, None))],
        );
    }
    assert_eq!(k.d(back).status, Status::RolledForward);
    assert_eq!(k.s.consumer_map()["c"].subscriptions["r"].version, Some(1));
    // Unretracted, it is the selected version again and deployed again.
    unretract(&mut k, 2);
    let again = k.s.consumer_map()["c"].active["r"];
    assert_eq!(k.d(again).version, 2);
}

#[test]
fn retracting_the_version_of_an_active_deployment_aborts_it_and_says_why() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None);
    let id = k.start_with(|_| {});
    k.installed(0);
    retract(&mut k, 2);
    assert_eq!(k.d(id).status, Status::Aborted);
    let events = k.s.deployment(id).unwrap().events;
    let why = "version 2 of r retracted by ci: leaks memory";
    let n = events.len();
    assert_eq!(events[n - 2].action, Some(EventKind::Retracted));
    assert_eq!(events[n - 2].message.as_deref(), Some(why));
    assert_eq!(events[n - 1].status, Some(Status::Aborted));
    assert_eq!(events[n - 1].message.as_deref(), Some(why));
    // Weak nodes (the one that installed it too) are sent the newest allowed version.
    assert_eq!(k.s.targets("c-0")["r"].version, 1);
    assert!(k.s.targets("c-0")["r"].install);
}

#[test]
fn a_retracted_version_cannot_be_deployed_or_newly_pinned() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None);
    retract(&mut k, 2);
    let e = k.err(Command::StartDeployment(DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        ..DeploymentSpec::default()
    }));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(
        e.to_string(),
        "version 2 of resource \"r\" is retracted; unretract it first"
    );
    let e = k.err(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Mode::Weak,
        pin: Some(2),
        policy: Policy::default(),
    });
    assert_eq!(e.kind(), ErrorKind::Conflict);
    // Without a version, a start selects the newest allowed one.
    let id = k.start_with(|s| s.version = None);
    assert_eq!(k.d(id).version, 1);
}

#[test]
fn a_pin_retracted_after_pinning_selects_the_newest_allowed_version_below_it() {
    let mut k = Kit::new(1);
    k.publish(vec![]);
    subscribe(&mut k, Mode::Weak, Some(2));
    retract(&mut k, 2);
    assert_eq!(
        k.s.selected_version("c", "r"),
        Some(1),
        "not 3: the pin bounds it"
    );
    // Changing another field keeps the (retracted) pin.
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Keep,
        policy: PolicyPatch::default(),
    });
    retract(&mut k, 1);
    assert_eq!(k.s.selected_version("c", "r"), None);
}

#[test]
fn group_plans_skip_retracted_versions_and_refuse_to_name_one() {
    let mut k = Kit::new(1);
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![Member {
            consumer: "c".into(),
            resource: "r".into(),
        }],
    });
    retract(&mut k, 2);
    assert!(k.s.plan_group("g", None).unwrap().is_empty(), "c-0 runs 1");
    let named = std::collections::BTreeMap::from([("r".to_string(), 2)]);
    let e = k.s.plan_group("g", Some(&named)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
}

#[test]
fn retract_is_idempotent_and_names_unknown_versions() {
    let mut k = Kit::new(1);
    retract(&mut k, 2);
    let before = k.s.snapshot_bytes();
    k.now += 5;
    retract(&mut k, 2);
    assert_eq!(
        before,
        k.s.snapshot_bytes(),
        "a second retract changes nothing"
    );
    let e = k.err(Command::RetractVersion {
        resource: "r".into(),
        version: 9,
        message: None,
        by: Actor::User,
    });
    assert_eq!(e.to_string(), "resource \"r\" has no version 9");
    let e = k.err(Command::UnretractVersion {
        resource: "nope".into(),
        version: 1,
    });
    assert_eq!(e.kind(), ErrorKind::NotFound);
}
