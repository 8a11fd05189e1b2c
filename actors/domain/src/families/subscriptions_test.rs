use crate::testing::*;
use crate::*;
use std::collections::BTreeMap;

fn subscribe(k: &mut Kit, mode: Mode, pin: Option<u64>, policy: Policy) {
    k.ok(Command::Subscribe {
        consumer: "c".into(),
        resource: "r".into(),
        mode,
        pin,
        policy,
    });
}

fn patch(k: &mut Kit, f: impl FnOnce(&mut Command)) -> Result<Response, DomainError> {
    let mut cmd = Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Keep,
        policy: PolicyPatch::default(),
    };
    f(&mut cmd);
    k.s.apply(cmd, k.now)
}

fn rolling(i: u32, d: u32) -> Strategy {
    Strategy::Rolling {
        install_window: i,
        download_window: d,
    }
}

/// Version 2 deployed to `c` (all at once) and rolled back by node 0's failure.
fn roll_back_v2(k: &mut Kit) -> DeploymentId {
    let id = k.start_with(|s| s.strategy = Some(Strategy::AllAtOnce { fail_fast: true }));
    k.failed(0);
    assert_eq!(k.d(id).status, Status::RolledBack);
    id
}

/// Node 0 drops its failed attempt at version 2 (as an agent does before trying again).
fn forget_failure(k: &mut Kit) {
    k.report(0, Some(1), &[(1, vp(true, true, None))]);
}

#[test]
fn a_rollback_on_a_weak_subscription_holds_the_version_back() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    let id = roll_back_v2(&mut k);
    // Issue 3: weak = newest sent the nodes straight back to the version just rolled back.
    for node in ["c-0", "c-1"] {
        assert_eq!(k.s.targets(node)["r"].version, 1, "{node}");
    }
    assert_eq!(k.s.selected_version("c", "r"), Some(1));
    let view = k.s.consumer("c").unwrap();
    assert_eq!(view.holds.len(), 1);
    let h = &view.holds[0];
    assert_eq!(
        (h.resource.as_str(), h.version, h.deployment),
        ("r", 2, Some(id))
    );
    assert_eq!(h.by, "rollback");
    assert_eq!(
        h.reason,
        "version 2 of r held back on c: rolled back by d-1"
    );
    let events = k.s.deployment(id).unwrap().events;
    let held = events.last().unwrap();
    assert_eq!(held.action, Some(EventKind::Held));
    assert_eq!(held.message.as_deref(), Some(h.reason.as_str()));
    // A newer version is selected again.
    k.publish(vec![]);
    assert_eq!(k.s.targets("c-0")["r"].version, 3);
}

#[test]
fn no_automatic_deployment_starts_for_a_held_version_until_the_hold_is_cleared() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Strong, None, Policy::default());
    // The strong subscription deploys v2 automatically (default policy: rolling 1/2, rollback).
    let auto = k.s.consumer_map()["c"].active["r"];
    k.failed(0);
    assert_eq!(k.d(auto).status, Status::RolledBack);
    assert!(
        k.s.consumer_map()["c"].active.is_empty(),
        "a held version must not be deployed again"
    );
    assert_eq!(k.s.deployment_map().len(), 1);

    let e = k.err(Command::ClearHold {
        consumer: "c".into(),
        resource: "r".into(),
        version: 1,
        by: Actor::User,
    });
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.to_string(), "hold \"c/r@1\" not found");

    forget_failure(&mut k);
    k.ok(Command::ClearHold {
        consumer: "c".into(),
        resource: "r".into(),
        version: 2,
        by: Actor::User,
    });
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    let again = k.s.consumer_map()["c"].active["r"];
    assert_ne!(
        again, auto,
        "cleared: the selected version is deployed again"
    );
    assert_eq!(k.d(again).version, 2);
    let last = k.s.deployment(auto).unwrap().events.pop().unwrap();
    assert_eq!(last.action, Some(EventKind::Released));
    assert_eq!(
        last.message.as_deref(),
        Some("version 2 of r no longer held back on c: cleared by user")
    );
}

#[test]
fn a_manual_deployment_of_the_held_version_clears_the_hold() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    roll_back_v2(&mut k);
    // Without a version the start selects; the held version is not selectable, so v1 is taken.
    let selected = k.start_with(|s| s.version = None);
    assert_eq!(k.d(selected).version, 1);
    assert!(!k.s.consumer("c").unwrap().holds.is_empty());

    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    roll_back_v2(&mut k);
    forget_failure(&mut k);
    let id = k.start_with(|s| s.force = true);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    let released = k
        .d(id)
        .events
        .iter()
        .find(|e| e.kind == EventKind::Released);
    assert_eq!(
        released.and_then(|e| e.message.as_deref()),
        Some("version 2 of r no longer held back on c: deployed by hand in d-2")
    );
}

#[test]
fn plan_and_start_of_a_held_version_name_the_hold_and_start_needs_force() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    roll_back_v2(&mut k);
    forget_failure(&mut k);
    let by_hand = DeploymentSpec {
        consumer: "c".into(),
        resource: "r".into(),
        version: Some(2),
        ..DeploymentSpec::default()
    };
    // Issue 22 item 11: the plan said nothing of the hold and the start deployed it without a word.
    let plan = k.s.plan_deployment(&by_hand).unwrap();
    assert_eq!(
        plan.held.as_deref(),
        Some("version 2 of r held back on c: rolled back by d-1")
    );
    let e = k.err(Command::StartDeployment(by_hand.clone()));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(
        e.to_string(),
        "version 2 of r held back on c: rolled back by d-1; deploy it with force to lift the hold"
    );
    assert_eq!(k.s.deployment_map().len(), 1, "nothing started");
    let id = k.start(DeploymentSpec {
        force: true,
        ..by_hand
    });
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    assert_eq!(k.d(id).version, 2);
}

#[test]
fn lifting_a_hold_on_a_strong_subscription_deploys_as_the_person_who_lifted_it() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Strong, None, Policy::default());
    let auto = k.s.consumer_map()["c"].active["r"];
    k.failed(0);
    assert_eq!(k.d(auto).status, Status::RolledBack);
    forget_failure(&mut k);
    let ops = Actor::Token("ops".into());
    k.ok(Command::ClearHold {
        consumer: "c".into(),
        resource: "r".into(),
        version: 2,
        by: ops.clone(),
    });
    let again = k.s.consumer_map()["c"].active["r"];
    assert_eq!(k.d(again).version, 2);
    let released = k.d(auto).events.iter().next_back().unwrap().clone();
    let created = k.d(again).events.iter().next().unwrap().clone();
    assert_eq!(released.kind, EventKind::Released);
    assert_eq!((&released.by, &created.by), (&ops, &ops));
    assert_eq!(
        created.message.as_deref(),
        Some(
            "version 2 of r no longer held back on c: cleared by ops; selected version changed to 2"
        )
    );
}

#[test]
fn a_pin_on_a_held_version_still_selects_it_and_says_it_is_held() {
    let mut k = Kit::new(1);
    subscribe(&mut k, Mode::Weak, Some(2), Policy::default());
    let id = k.start_with(|_| {});
    k.failed(0);
    assert_eq!(k.d(id).status, Status::RolledBack);
    assert!(k.s.consumer_map()["c"].held("r", 2));
    // The pin is a person's decision: it beats the automatic hold.
    assert_eq!(k.s.selected_version("c", "r"), Some(2));
    // A node that joins the consumer gets the pinned version (the node the deployment moved keeps what
    // the rollback left it on: a deployment by hand sticks, §4).
    k.ok(Command::UpdateConsumerNodes {
        name: "c".into(),
        add: vec!["c-9".into()],
        remove: vec![],
    });
    assert_eq!(k.s.targets("c-9")["r"].version, 2);
    let view = k.s.consumer("c").unwrap();
    let sub = &view.subscriptions["r"];
    assert_eq!(sub.selected, Some(2));
    assert_eq!(
        sub.held.as_deref(),
        Some("version 2 of r held back on c: rolled back by d-1")
    );
    // `deploy plan` of the pinned version says it is held too.
    let plan =
        k.s.plan_deployment(&DeploymentSpec {
            consumer: "c".into(),
            resource: "r".into(),
            ..DeploymentSpec::default()
        })
        .unwrap();
    assert_eq!((plan.version, plan.held.is_some()), (2, true));
    // Without the pin the hold applies again.
    k.ok(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Clear,
        policy: PolicyPatch::default(),
    });
    assert_eq!(k.s.selected_version("c", "r"), Some(1));
    assert_eq!(k.s.consumer("c").unwrap().subscriptions["r"].held, None);
}

#[test]
fn patch_changes_only_the_fields_given() {
    let mut k = Kit::new(2);
    let policy = Policy {
        strategy: Some(rolling(2, 3)),
        min_healthy_ms: Some(500),
        ..Policy::default()
    };
    subscribe(&mut k, Mode::Strong, None, policy.clone());
    // Issue 5: `--pin 1` on a strong rolling subscription made it weak and dropped its strategy.
    patch(&mut k, |c| {
        if let Command::PatchSubscription { pin, .. } = c {
            *pin = Change::Set(1);
        }
    })
    .unwrap();
    let sub = &k.s.consumer_map()["c"].subscriptions["r"];
    assert_eq!((sub.mode, sub.pin), (Mode::Strong, Some(1)));
    assert_eq!(sub.policy, policy);

    patch(&mut k, |c| {
        if let Command::PatchSubscription { pin, policy, .. } = c {
            *pin = Change::Clear;
            policy.min_healthy_ms = Change::Clear;
            policy.max_failures_per_node = Change::Set(2);
        }
    })
    .unwrap();
    let sub = &k.s.consumer_map()["c"].subscriptions["r"];
    assert_eq!(sub.pin, None);
    assert_eq!(sub.policy.strategy, Some(rolling(2, 3)));
    assert_eq!(sub.policy.min_healthy_ms, None);
    assert_eq!(sub.policy.max_failures_per_node, Some(2));
}

#[test]
fn patch_refusals_name_the_subscription_and_change_nothing() {
    let mut k = Kit::new(1);
    let e = k.err(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: Some(Mode::Strong),
        pin: Change::Keep,
        policy: PolicyPatch::default(),
    });
    assert_eq!(e.to_string(), "subscription \"c/r\" not found");
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    let e = k.err(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Set(9),
        policy: PolicyPatch::default(),
    });
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = k.err(Command::PatchSubscription {
        consumer: "c".into(),
        resource: "r".into(),
        mode: None,
        pin: Change::Keep,
        policy: PolicyPatch {
            pulse_interval_ms: Change::Set(0),
            ..PolicyPatch::default()
        },
    });
    assert!(e.to_string().starts_with("pulse_interval_ms = 0"), "{e}");
}

#[test]
fn automatic_deployments_take_the_whole_policy_of_the_subscription() {
    let mut k = Kit::new(2);
    let policy = Policy {
        strategy: Some(Strategy::Batch {
            sizes: vec![1],
            autopause: false,
        }),
        min_healthy_ms: Some(5_000),
        max_failures_per_node: Some(2),
        max_failed_nodes: Some(FailedNodes::Count(1)),
        rollback_on_failure: Some(false),
        pulse_interval_ms: Some(60_000),
        completion: Some(Completion {
            quorum: Some(0.5),
            timeout_ms: Some(600_000),
            ..Default::default()
        }),
        pacing: Some(Pacing {
            bake_ms: Some(60_000),
            progress_deadline_ms: Some(3_600_000),
            confirm: vec![Gate::BeforePromotion],
            ..Pacing::default()
        }),
        analysis: None,
        brake: None,
        start_jitter_ms: None,
    };
    subscribe(&mut k, Mode::Strong, None, policy.clone());
    // Issue 6: automatic deployments ran with no watch, retries, tolerance or pulses.
    let id = k.s.consumer_map()["c"].active["r"];
    assert_eq!(k.d(id).settings, policy.settings());
    assert_eq!(k.d(id).status, Status::RollForwardAwaitingPulse);
}

#[test]
fn with_no_strategy_anywhere_a_deployment_rolls_one_node_at_a_time() {
    let mut k = Kit::new(3);
    // Issue 7: the default was all at once with no watch.
    let id = k.start_with(|s| s.strategy = None);
    assert_eq!(k.d(id).settings.strategy, rolling(1, 2));
    // Node 0 installs without the version: it fetches in one of the two download slots.
    assert_eq!(k.flags(3), (vec![0], vec![1]), "install 1, fetch 2");
}

#[test]
fn group_steps_take_the_member_policy_under_the_group_override() {
    let mut k = Kit::new(2);
    subscribe(
        &mut k,
        Mode::Weak,
        None,
        Policy {
            min_healthy_ms: Some(700),
            max_failures_per_node: Some(4),
            ..Policy::default()
        },
    );
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![Member {
            consumer: "c".into(),
            resource: "r".into(),
        }],
    });
    let overrides = BTreeMap::from([(
        "r".to_string(),
        Policy {
            strategy: Some(rolling(2, 2)),
            min_healthy_ms: Some(50),
            ..Policy::default()
        },
    )]);
    let bad = k.err(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides: BTreeMap::from([("x".to_string(), Policy::default())]),
    });
    assert_eq!(bad.kind(), ErrorKind::Invalid);
    k.ok(Command::StartGroupDeployment {
        group: "g".into(),
        versions: None,
        overrides,
    });
    let id = k.s.consumer_map()["c"].active["r"];
    let s = &k.d(id).settings;
    assert_eq!(s.strategy, rolling(2, 2));
    assert_eq!(s.min_healthy_ms, 50, "the override wins");
    assert_eq!(
        s.max_failures_per_node, 4,
        "the member's policy fills the rest"
    );
}

#[test]
fn a_group_deployment_skips_held_versions_unless_it_names_them() {
    let mut k = Kit::new(1);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    k.ok(Command::CreateGroup {
        name: "g".into(),
        members: vec![Member {
            consumer: "c".into(),
            resource: "r".into(),
        }],
    });
    roll_back_v2(&mut k);
    assert_eq!(
        k.s.plan_group("g", None).unwrap(),
        Vec::<Vec<StepItem>>::new()
    );
    forget_failure(&mut k);
    k.ok(Command::StartGroupDeployment {
        group: "g".into(),
        versions: Some(BTreeMap::from([("r".to_string(), 2)])),
        overrides: BTreeMap::new(),
    });
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    assert_eq!(k.d(k.s.consumer_map()["c"].active["r"]).version, 2);
}

#[test]
fn a_rollback_by_a_person_or_a_timer_with_no_failure_holds_nothing() {
    // A person rolls back a deployment no node failed: no evidence against the version.
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    let id = k.start_with(|_| {});
    k.ok(rollback(id, None, Actor::User));
    for i in 0..2 {
        k.report(i, Some(1), &[(1, vp(true, true, None))]);
    }
    assert_eq!(k.status(id), Status::RolledBack);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
    let last = k.s.deployment(id).unwrap().events.last().cloned().unwrap();
    assert_eq!(last.action, Some(EventKind::NotHeld));
    assert_eq!(
        last.message.as_deref(),
        Some(
            "version 2 of r not held back on c: no node failed it and no analysis failed it \
             (a timer or a person rolled it back)"
        )
    );
    assert_eq!(k.s.selected_version("c", "r"), Some(2));

    // A completion timeout ends a deployment whose node never finished: it timed out, it did not fail.
    let mut k = Kit::new(1);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    let id = k.start_with(|s| {
        s.completion = Some(Completion {
            quorum: None,
            timeout_ms: Some(5_000),
            on_timeout: OnTimeout::Fail,
        });
    });
    k.now += 6_000;
    k.ok(Command::TickDeployment { id });
    k.report(0, Some(1), &[(1, vp(true, true, None))]);
    assert_eq!(k.status(id), Status::RolledBack);
    assert!(k.s.consumer("c").unwrap().holds.is_empty());
}

#[test]
fn a_node_that_failed_past_its_retries_is_evidence() {
    let mut k = Kit::new(2);
    subscribe(&mut k, Mode::Weak, None, Policy::default());
    let id = roll_back_v2(&mut k);
    assert!(
        k.s.consumer_map()["c"].held("r", 2),
        "{id} rolled back a failure"
    );
}

#[test]
fn a_full_deployment_by_hand_past_a_strong_pin_sticks() {
    let mut k = Kit::new(2);
    let v3 = k.publish(vec![]);
    subscribe(&mut k, Mode::Strong, Some(2), Policy::default());
    // The pin's automatic deployment of 2.
    let auto = k.s.consumer_map()["c"].active["r"];
    for i in 0..2 {
        k.report(i, Some(2), &[(2, vp(true, true, None))]);
    }
    assert_eq!(k.status(auto), Status::RolledForward);
    // A hotfix by hand, to 3, over the whole consumer.
    let hotfix = k.start_with(|s| s.version = Some(v3));
    for i in 0..2 {
        k.report(i, Some(v3), &[(v3, vp(true, true, None))]);
    }
    assert_eq!(k.status(hotfix), Status::RolledForward);
    // No automatic deployment reverts it to the pin.
    assert!(
        !k.s.consumer_map()["c"].active.contains_key("r"),
        "an automatic deployment undid the hotfix"
    );
    assert_eq!(k.s.targets("c-0")["r"].version, v3);
    // The selection changing (the pin moved) deploys again, and the event says so truly.
    let v4 = k.publish(vec![]);
    assert!(!k.s.consumer_map()["c"].active.contains_key("r"));
    patch(&mut k, |c| {
        if let Command::PatchSubscription { pin, .. } = c {
            *pin = Change::Set(v4);
        }
    })
    .unwrap();
    let next = k.s.consumer_map()["c"].active["r"];
    let created = k.d(next).events.iter().next().unwrap().clone();
    assert_eq!(
        created.message.as_deref(),
        Some("selected version changed to 4")
    );
}
