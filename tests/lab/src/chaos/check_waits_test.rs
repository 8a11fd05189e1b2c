use serde_json::{json, Value};

use super::{timeout_in_active_time, waits_agree};
use convoy_actors::domain::DeploymentView;

fn view(status: &str, paused_by: Option<&str>, waits: Value, events: Value) -> DeploymentView {
    serde_json::from_value(json!({
        "id": "d-1", "consumer": "c", "resource": "r", "version": 2, "status": status,
        "paused_by": paused_by, "waits": waits,
        "settings": {"strategy": {"rolling": {"install_window": 1, "download_window": 1}},
            "min_healthy_ms": 0, "max_failures_per_node": 0, "max_failed_nodes": null,
            "rollback_on_failure": true, "pulse_interval_ms": null,
            "completion": {"quorum": null, "timeout_ms": 5000}},
        "nodes": [], "events": events,
    }))
    .expect("a deployment view")
}

#[test]
fn a_status_that_its_waits_do_not_imply_is_caught() {
    let fine = view(
        "ROLL_FORWARD_PAUSED",
        Some("user"),
        json!([{"reason": "user", "by": "ops"}, {"reason": "auto"}]),
        json!([]),
    );
    assert!(waits_agree(&fine).is_empty(), "{:?}", waits_agree(&fine));
    let lost = view(
        "ROLL_FORWARD_PAUSED",
        Some("auto"),
        json!([{"reason": "auto"}, {"reason": "user"}]),
        json!([]),
    );
    let rules: Vec<_> = waits_agree(&lost).into_iter().map(|v| v.rule).collect();
    assert!(rules.contains(&"waits-person-first"), "{rules:?}");
    let moving = view(
        "ROLLING_FORWARD",
        None,
        json!([{"reason": "user"}]),
        json!([]),
    );
    assert_eq!(waits_agree(&moving)[0].rule, "waits-status");
    let ended = view(
        "ROLLED_BACK",
        None,
        json!([{"reason": "window", "name": "nights"}]),
        json!([]),
    );
    assert_eq!(waits_agree(&ended)[0].rule, "waits-status");
    let budget = view(
        "ROLLING_FORWARD",
        None,
        json!([{"reason": "budget"}]),
        json!([]),
    );
    assert!(
        waits_agree(&budget).is_empty(),
        "a budget wait does not pause"
    );
}

#[test]
fn a_completion_timeout_counted_through_a_pause_is_caught() {
    let ev = |at: u64, status: &str, by: &str, msg: Option<&str>| json!({"at": at, "status": status, "by": by, "message": msg});
    let early = view(
        "ROLLED_BACK",
        None,
        json!([]),
        json!([
            ev(0, "ROLLING_FORWARD", "system", None),
            ev(1_000, "ROLL_FORWARD_PAUSED", "user", None),
            ev(8_000, "ROLLING_FORWARD", "user", None),
            ev(
                8_100,
                "ROLLING_BACK",
                "timer",
                Some("completion timeout: 0 of 3 nodes succeeded")
            ),
        ]),
    );
    assert_eq!(
        timeout_in_active_time(&early)[0].rule,
        "timeout-active-time"
    );
    let on_time = view(
        "ROLLED_FORWARD",
        None,
        json!([]),
        json!([
            ev(0, "ROLLING_FORWARD", "system", None),
            ev(1_000, "ROLL_FORWARD_PAUSED", "user", None),
            ev(8_000, "ROLLING_FORWARD", "user", None),
            ev(
                12_000,
                "ROLLED_FORWARD",
                "timer",
                Some("completion timeout: 2 of 3 nodes succeeded")
            ),
        ]),
    );
    assert!(timeout_in_active_time(&on_time).is_empty());
}
