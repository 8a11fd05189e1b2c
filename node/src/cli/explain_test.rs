//! Printing a dry run and a node's history.

use convoy_actors::domain::{DeploymentPlan, NodeHistory};
use serde_json::json;

use super::*;

#[test]
fn a_plan_of_a_held_version_names_the_hold_and_the_way_to_deploy_it() {
    let plan: DeploymentPlan = serde_json::from_value(json!({
        "consumer": "web", "resource": "api", "version": 4, "version_reason": "given",
        "held": "version 4 of api held back on web: rolled back by d-3",
        "settings": {"strategy": {"all_at_once": {}}, "min_healthy_ms": 0, "max_failures_per_node": 0,
                     "rollback_on_failure": true, "completion": {}},
        "nodes": [], "steps": [], "skipped": []
    }))
    .unwrap();
    let text = deployment_plan(&plan);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "web/api: version 4 (given)");
    assert_eq!(
        lines[1],
        "HELD: version 4 of api held back on web: rolled back by d-3; \
         `deploy start --force` deploys it and lifts the hold"
    );
}

#[test]
fn a_plan_lists_the_first_nodes_then_counts_the_rest() {
    let nodes: Vec<_> = (0..60)
        .map(
            |i| json!({"id": format!("n{i}"), "ordinal": i, "from_version": 1, "step": i / 10 + 1}),
        )
        .collect();
    let plan: DeploymentPlan = serde_json::from_value(json!({
        "consumer": "web", "resource": "api", "version": 3, "version_reason": "dependency",
        "passed_over": [{"version": 4, "why": "needs db@2 on consumer \"db\""}],
        "settings": {"strategy": {"rolling": {"install_window": 10, "download_window": 10}},
                     "min_healthy_ms": 0, "max_failures_per_node": 0, "rollback_on_failure": true,
                     "completion": {}},
        "nodes": nodes, "steps": [10, 10, 10, 10, 10, 10],
        "skipped": [{"id": "x", "ordinal": 60, "why": "inactive"}]
    }))
    .unwrap();
    let text = deployment_plan(&plan);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "web/api: version 3 (dependency); passed over 4: needs db@2 on consumer \"db\""
    );
    assert!(
        lines[1].contains("60 nodes, 60 to change in 6 step(s)"),
        "{}",
        lines[1]
    );
    assert!(text.contains("... 10 more nodes"), "{text}");
    assert!(
        text.contains("x        60   inactive") || text.contains("inactive"),
        "{text}"
    );
}

#[test]
fn a_history_prints_each_decision_and_where_the_node_stands() {
    let h: NodeHistory = serde_json::from_value(json!({
        "deployment": "d-2", "node": "n1", "ordinal": 1, "position": 1, "from_version": 1, "version": 2,
        "state": "failed", "failures": 2,
        "decisions": [{"at": 1_700_000_000_000u64, "event": {"at": 1_700_000_000_000u64, "node": "n1",
                       "action": "failed", "by": "system", "message": "exit 3"},
                       "why": "failed after 2 attempt(s): exit 3"}],
        "now": "failed; the deployment is FAILED"
    }))
    .unwrap();
    let text = node_history(&h);
    assert!(
        text.starts_with("n1 in d-2: ordinal 1, position 1, v1 → v2, 2 failed attempt(s)\n"),
        "{text}"
    );
    assert!(
        text.contains("now: failed; the deployment is FAILED"),
        "{text}"
    );
    assert!(
        text.contains("system  failed after 2 attempt(s): exit 3"),
        "{text}"
    );
}

#[test]
fn a_plan_says_when_it_is_expected_to_finish_and_on_what_assumption_or_never() {
    let plan = |finish: serde_json::Value| -> DeploymentPlan {
        serde_json::from_value(json!({
            "consumer": "web", "resource": "api", "version": 4, "version_reason": "given",
            "settings": {"strategy": {"all_at_once": {}}, "min_healthy_ms": 0, "max_failures_per_node": 0,
                         "rollback_on_failure": true, "completion": {}},
            "nodes": [], "steps": [2], "skipped": [],
            "policies": {"windows": [], "held": false, "budgets": [], "finish": finish}
        }))
        .unwrap()
    };
    let text = deployment_plan(&plan(json!({
        "at": 1_700_000_000_000u64, "never": false, "per_node_ms": 60000, "waves": 1,
        "assumption": "each wave takes 60000 ms (given)"
    })));
    assert!(
        text.contains("expected to finish: ")
            && text.contains("(1 wave(s); assuming each wave takes 60000 ms (given))"),
        "{text}"
    );
    let never = deployment_plan(&plan(json!({
        "never": true, "per_node_ms": 60000, "waves": 1, "assumption": "x"
    })));
    assert!(never.contains("expected to finish: never"), "{never}");
}
