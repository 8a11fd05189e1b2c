use super::*;
use crate::chaos::history::{Acked, Observation, Pulse, TargetSample};
use convoy_actors::domain::Status;
use serde_json::{json, Value};

/// A rolling (install 2, download 1) deployment `d-1` with the given node states and events.
fn view(states: &[&str], events: Value, pulse_ms: Option<u64>) -> DeploymentView {
    let nodes: Vec<Value> = states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"id": format!("n-{i}"), "ordinal": i, "from_version": 1, "state": s,
                   "failures": 0})
        })
        .collect();
    serde_json::from_value(json!({
        "id": "d-1", "consumer": "c", "resource": "r", "version": 2, "status": "ROLLING_FORWARD",
        "settings": {"strategy": {"rolling": {"install_window": 2, "download_window": 1}},
            "min_healthy_ms": 0, "max_failures_per_node": 0, "max_failed_nodes": null,
            "rollback_on_failure": true, "pulse_interval_ms": pulse_ms,
            "completion": {"quorum": null, "timeout_ms": null}},
        "nodes": nodes, "events": events,
    }))
    .expect("a deployment view")
}

fn node_event(at: u64, node: &str, action: &str) -> Value {
    json!({"at": at, "node": node, "action": action, "by": "system"})
}

fn observed(start: u64, end: u64, v: DeploymentView) -> Observation {
    Observation {
        start_ms: start,
        end_ms: end,
        consistent: true,
        server: "s".into(),
        view: v,
    }
}

#[test]
fn windows_hold_and_are_caught_when_exceeded() {
    assert!(windows(&view(
        &["installing", "watching", "downloaded", "pending"],
        json!([]),
        None
    ))
    .is_empty());
    let over = windows(&view(
        &["installing", "installing", "installing"],
        json!([]),
        None,
    ));
    assert_eq!(over.len(), 1);
    assert_eq!(over[0].rule, "install-window");
    let over = windows(&view(&["downloading", "downloaded"], json!([]), None));
    assert_eq!(over[0].rule, "download-window");
}

#[test]
fn a_readmitted_node_is_not_counted_against_the_rollback_window() {
    let events = json!([
        node_event(1, "n-2", "rollback"),
        node_event(2, "n-1", "rollback"),
        node_event(3, "n-2", "rolled_back"),
        node_event(4, "n-2", "rollback")
    ]);
    let v = view(
        &["rolling_back", "rolling_back", "rolling_back"],
        events,
        None,
    );
    assert!(windows(&v).is_empty(), "{:?}", windows(&v));
    let v = view(
        &["rolling_back", "rolling_back", "rolling_back"],
        json!([]),
        None,
    );
    assert_eq!(windows(&v)[0].rule, "rollback-window");
}

#[test]
fn a_later_read_must_extend_an_earlier_one() {
    let two = json!([
        node_event(1, "n-0", "install"),
        node_event(2, "n-1", "install")
    ]);
    let one = json!([node_event(1, "n-0", "install")]);
    let a = observed(10, 20, view(&["installing"], two.clone(), None));
    let fine = observed(30, 40, view(&["installing"], two, None));
    assert!(linearizable(&[a.clone(), fine]).is_empty());
    let stale = observed(30, 40, view(&["installing"], one.clone(), None));
    assert_eq!(linearizable(&[a.clone(), stale])[0].rule, "stale-read");
    // Overlapping reads may see either order.
    let overlapping = observed(15, 40, view(&["installing"], one, None));
    assert!(linearizable(&[a, overlapping]).is_empty());
}

#[test]
fn rollback_must_reverse_the_install_order() {
    let good = json!([
        node_event(1, "n-0", "install"),
        node_event(2, "n-1", "install"),
        node_event(3, "n-1", "rollback"),
        node_event(4, "n-0", "rollback")
    ]);
    assert!(rollback_order(&view(&["rolled_back"; 2], good, None)).is_empty());
    let bad = json!([
        node_event(1, "n-0", "install"),
        node_event(2, "n-1", "install"),
        node_event(3, "n-0", "rollback"),
        node_event(4, "n-1", "rollback")
    ]);
    assert_eq!(
        rollback_order(&view(&["rolled_back"; 2], bad, None))[0].rule,
        "rollback-order"
    );
}

#[test]
fn a_node_counted_back_takes_its_place_in_the_walk_back_even_if_it_lands_later() {
    // Seed 7000032 (d-118, all at once, blank nodes): the walk back counts n-3 and n-2 back at once
    // (nothing installed as far as the server knows: no `rollback` event), re-targets n-1 and n-0;
    // then one report batch says n-3 and n-2 run the version after all and they are re-targeted
    // again, after the others: the server could not know sooner. The walk was in order.
    let landed_later = json!([
        node_event(1, "n-0", "install"),
        node_event(1, "n-1", "install"),
        node_event(1, "n-2", "install"),
        node_event(1, "n-3", "install"),
        node_event(2, "n-3", "rolled_back"),
        node_event(2, "n-2", "rolled_back"),
        node_event(2, "n-1", "rollback"),
        node_event(2, "n-0", "rollback"),
        node_event(3, "n-3", "rollback"),
        node_event(3, "n-2", "rollback"),
        node_event(3, "n-1", "rolled_back"),
        node_event(3, "n-0", "rolled_back")
    ]);
    let v = view(&["rolled_back"; 4], landed_later, None);
    assert!(rollback_order(&v).is_empty(), "{:?}", rollback_order(&v));
    // A walk that counts back or re-targets out of order is still caught.
    let out_of_order = json!([
        node_event(1, "n-0", "install"),
        node_event(1, "n-1", "install"),
        node_event(1, "n-2", "install"),
        node_event(2, "n-1", "rolled_back"),
        node_event(2, "n-2", "rollback"),
        node_event(2, "n-0", "rollback")
    ]);
    let v = view(&["rolled_back"; 3], out_of_order, None);
    assert_eq!(rollback_order(&v)[0].rule, "rollback-order");
}

#[test]
fn a_recalled_node_takes_its_place_where_it_was_admitted_again() {
    // A hard pause takes back n-1's install permission (`recalled`): it leaves the forward order and
    // is admitted again after n-2, so the walk back takes n-1 first (DEPLOYMENTS.md §6).
    let events = json!([
        node_event(1, "n-0", "install"),
        node_event(1, "n-1", "install"),
        node_event(1, "n-2", "install"),
        node_event(2, "n-1", "recalled"),
        node_event(3, "n-1", "install"),
        node_event(4, "n-1", "rollback"),
        node_event(4, "n-2", "rollback"),
        node_event(4, "n-0", "rollback")
    ]);
    let v = view(&["rolling_back"; 3], events, None);
    assert!(rollback_order(&v).is_empty(), "{:?}", rollback_order(&v));
}

#[test]
fn coordinated_progress_needs_a_pulse_within_the_interval() {
    let events = json!([
        node_event(1_000, "n-0", "install"),
        node_event(5_000, "n-1", "install")
    ]);
    let v = view(&["installing", "installing"], events, Some(1_500));
    let pulse = |sent, latest| Pulse {
        deployment: "d-1".into(),
        sent_ms: sent,
        latest_ms: latest,
    };
    // A pulse at ~900 covers the admission at 1000 but not the one at 5000.
    let found = pulsed_progress(&v, &[pulse(900, 950)]);
    assert_eq!(found.len(), 1);
    assert!(found[0].detail.contains("n-1"), "{found:?}");
    assert!(pulsed_progress(&v, &[pulse(900, 950), pulse(4_000, 4_010)]).is_empty());
    // A pulse sent after the admission cannot explain it.
    assert_eq!(
        pulsed_progress(&v, &[pulse(900, 950), pulse(5_001, 5_002)]).len(),
        1
    );
}

#[test]
fn lost_writes_and_differing_replicas_are_reported() {
    let acked = vec![
        Acked::Resource {
            name: "a".into(),
            sent_ms: 1,
            acked_ms: 2,
        },
        Acked::Version {
            resource: "a".into(),
            version: 2,
            sent_ms: 3,
            acked_ms: 4,
        },
    ];
    let mut state = BTreeMap::from([("a".to_string(), BTreeSet::from([1, 2]))]);
    assert!(no_lost_writes(&acked, "1", &state).is_empty());
    state.get_mut("a").unwrap().remove(&2);
    assert_eq!(no_lost_writes(&acked, "1", &state)[0].rule, "lost-write");
    let same = vec![("1".into(), 9, "ab".into()), ("2".into(), 9, "ab".into())];
    assert!(replicas_identical(&same).is_empty());
    let differ = vec![("1".into(), 9, "ab".into()), ("2".into(), 9, "cd".into())];
    assert_eq!(replicas_identical(&differ)[0].rule, "replicas-differ");
}

fn finished(id: &str, created: u64, done: Option<u64>) -> DeploymentView {
    let mut events = vec![json!({"at": created, "status": "ROLLING_FORWARD", "by": "system"})];
    if let Some(at) = done {
        events.push(json!({"at": at, "status": "ROLLED_FORWARD", "by": "system"}));
    }
    let mut v = view(&["succeeded"], json!(events), None);
    v.id = serde_json::from_value(json!(id)).unwrap();
    v.status = if done.is_some() {
        Status::RolledForward
    } else {
        Status::Failed
    };
    v
}

fn group(steps: &[&str]) -> GroupDeploymentView {
    let steps: Vec<Value> = steps
        .iter()
        .map(|d| json!([{"consumer": "c", "resource": "r", "version": 2, "deployment": d}]))
        .collect();
    serde_json::from_value(json!({"id": "g-1", "group": "pair", "status": "SUCCEEDED",
        "current_step": steps.len(), "steps": steps}))
    .unwrap()
}

#[test]
fn a_group_step_starts_only_after_the_step_before_rolled_forward() {
    let g = group(&["d-1", "d-2"]);
    let in_order = BTreeMap::from([
        ("d-1".to_string(), finished("d-1", 10, Some(20))),
        ("d-2".to_string(), finished("d-2", 25, Some(30))),
    ]);
    assert!(group_order(&g, &in_order).is_empty());
    let early = BTreeMap::from([
        ("d-1".to_string(), finished("d-1", 10, Some(20))),
        ("d-2".to_string(), finished("d-2", 15, Some(30))),
    ]);
    assert_eq!(group_order(&g, &early)[0].rule, "group-order");
    let after_failure = BTreeMap::from([
        ("d-1".to_string(), finished("d-1", 10, None)),
        ("d-2".to_string(), finished("d-2", 25, Some(30))),
    ]);
    assert_eq!(group_order(&g, &after_failure)[0].rule, "group-order");
}

#[test]
fn a_node_of_an_active_deployment_is_targeted_only_at_its_version_or_its_own_old_one() {
    let sample = |target| TargetSample {
        node: "n-0".into(),
        deployment: "d-1".into(),
        version: 3,
        from_version: Some(2),
        target,
    };
    assert!(deployment_targets(&[sample(3), sample(2)]).is_empty());
    assert_eq!(deployment_targets(&[sample(4)])[0].rule, "stray-target");
}

#[test]
fn the_fleets_budget_holds_going_forward_and_is_caught_when_exceeded() {
    let mut v = view(&["installing", "failed", "pending"], json!([]), None);
    v.consumer = "fleet".into();
    assert!(budget(&v).is_empty());
    let mut over = view(&["installing", "watching", "failed"], json!([]), None);
    over.consumer = "fleet".into();
    let found = budget(&over);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "budget");
    // Another consumer, or a rollback, is not bound by it.
    over.consumer = "c".into();
    assert!(budget(&over).is_empty());
    over.consumer = "fleet".into();
    over.status = Status::RollingBack;
    assert!(budget(&over).is_empty());
}
