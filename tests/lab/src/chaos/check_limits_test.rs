use super::*;
use serde_json::{json, Value};

fn view(id: &str, status: &str, events: Value) -> DeploymentView {
    serde_json::from_value(json!({
        "id": id, "consumer": "c", "resource": "r", "version": 2, "status": status,
        "settings": {"strategy": {"rolling": {"install_window": 2, "download_window": 1}},
            "min_healthy_ms": 0, "max_failures_per_node": 0, "max_failed_nodes": null,
            "rollback_on_failure": true, "pulse_interval_ms": null,
            "completion": {"quorum": null, "timeout_ms": null}},
        "nodes": [], "events": events,
    }))
    .expect("a deployment view")
}

fn e(at: u64, node: &str, action: &str) -> Value {
    json!({"at": at, "node": node, "action": action, "by": "system"})
}

#[test]
fn installs_across_deployments_are_counted_together_and_an_excess_is_caught() {
    // Two deployments, two nodes each: at most two install at once (a slot freed at 20 is taken at 20).
    let a = view(
        "d-1",
        "ROLLED_FORWARD",
        json!([e(10, "n0", "install"), e(20, "n0", "succeeded"), e(20, "n1", "install"),
               e(30, "n1", "retry"), e(40, "n1", "succeeded"),
               {"at": 40, "status": "ROLLED_FORWARD", "by": "system"}]),
    );
    let b = view(
        "d-2",
        "ROLLING_FORWARD",
        json!([
            e(15, "m0", "install"),
            e(25, "m0", "failed"),
            e(41, "m1", "install")
        ]),
    );
    assert!(fleet_installs(&[a.clone(), b.clone()], 2).is_empty());
    assert!(
        fleet_installs(&[a.clone(), b.clone(), b.clone()], 2).is_empty(),
        "a view read twice counts once"
    );
    let found = fleet_installs(&[a.clone(), b.clone()], 1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "fleet-limit");
    assert!(
        found[0].detail.contains("2 nodes installing at 15"),
        "{found:?}"
    );
    // A third deployment installing meanwhile breaks a limit of 2; a rollback does not count.
    let c = view("d-3", "ROLLING_FORWARD", json!([e(16, "k0", "install")]));
    assert_eq!(
        fleet_installs(&[a.clone(), b.clone(), c], 2)[0].rule,
        "fleet-limit"
    );
    let back = view(
        "d-4",
        "ROLLED_BACK",
        json!([
            e(12, "k1", "install"),
            e(13, "k1", "rollback"),
            e(14, "k1", "rolled_back")
        ]),
    );
    assert!(fleet_installs(&[a, b, back], 2).is_empty());
}
