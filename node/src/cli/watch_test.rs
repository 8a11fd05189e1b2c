//! Watch frames of a sample deployment, the pulse countdown, and exit codes by status.

use convoy_actors::domain::{DeploymentView, Status};
use serde_json::{json, Value};

use super::*;
use crate::cli::fixtures::{deployment, T0};

fn view(raw: &Value) -> DeploymentView {
    serde_json::from_value(raw.clone()).unwrap()
}

#[test]
fn frame_of_a_rolling_coordinated_deployment() {
    let raw = deployment();
    let f = frame(&view(&raw), &raw, T0 + 10_000);
    assert_eq!(f.header, "d-3 web/api v7 ROLLING_FORWARD");
    assert_eq!((f.succeeded, f.total), (2, 6));
    assert_eq!(f.grid, ["SSwid."]);
    assert_eq!(
        f.counts,
        "succeeded 2 (S) · watching 1 (w) · installing 1 (i) · downloading 1 (d) · pending 1 (.)"
    );
    assert_eq!(f.windows, "install window 2/2 · download window 1/3");
    assert_eq!(
        f.pulse.as_deref(),
        Some("pulse every 10.0s: last pulse 6.0s ago, 4.0s left")
    );
    assert_eq!(
        f.text(),
        "d-3 web/api v7 ROLLING_FORWARD\ninstall window 2/2 · download window 1/3\n\
         pulse every 10.0s: last pulse 6.0s ago, 4.0s left\n\
         succeeded 2 (S) · watching 1 (w) · installing 1 (i) · downloading 1 (d) · pending 1 (.)\n[SSwid.]"
    );
    assert_eq!(
        f.line(),
        "d-3 web/api v7 ROLLING_FORWARD · 2/6 succeeded · succeeded 2 (S) · watching 1 (w) · installing 1 (i) \
         · downloading 1 (d) · pending 1 (.) · [SSwid.]"
    );
}

#[test]
fn the_plain_line_does_not_change_with_the_clock() {
    let raw = deployment();
    let a = frame(&view(&raw), &raw, T0 + 5_000);
    let b = frame(&view(&raw), &raw, T0 + 9_000);
    assert_eq!(a.line(), b.line());
    assert_ne!(a.pulse, b.pulse);
}

#[test]
fn pulse_countdown_overdue_blocked_and_server_field() {
    let mut raw = deployment();
    let f = frame(&view(&raw), &raw, T0 + 15_500);
    assert_eq!(
        f.pulse.as_deref(),
        Some("pulse every 10.0s: last pulse 11.5s ago, overdue by 1.5s")
    );
    raw["last_pulse_at"] = json!(T0 + 9_000);
    let f = frame(&view(&raw), &raw, T0 + 10_000);
    assert_eq!(
        f.pulse.as_deref(),
        Some("pulse every 10.0s: last pulse 1.0s ago, 9.0s left")
    );
    raw["status"] = json!("ROLL_FORWARD_AWAITING_PULSE");
    raw["paused_by"] = json!("pulse_timeout");
    let f = frame(&view(&raw), &raw, T0 + 30_000);
    assert_eq!(
        f.header,
        "d-3 web/api v7 ROLL_FORWARD_AWAITING_PULSE (paused by pulse_timeout)"
    );
    assert_eq!(
        f.pulse.as_deref(),
        Some("pulse every 10.0s: last pulse 21.0s ago, BLOCKED awaiting a pulse")
    );
}

#[test]
fn no_pulse_yet_counts_from_creation_and_uncoordinated_has_none() {
    let mut raw = deployment();
    raw["events"] = json!([{"at": T0, "status": "ROLLING_FORWARD", "by": "user"}]);
    let f = frame(&view(&raw), &raw, T0 + 2_000);
    assert_eq!(
        f.pulse.as_deref(),
        Some("pulse every 10.0s: no pulse yet, created 2.0s ago, 8.0s left")
    );
    raw["settings"]["pulse_interval_ms"] = Value::Null;
    raw["settings"]["strategy"] = json!({"batch": {"sizes": [1, 2], "autopause": true}});
    let f = frame(&view(&raw), &raw, T0 + 2_000);
    assert_eq!(f.pulse, None);
    assert_eq!(f.windows, "batch sizes 1,2 · autopause");
}

#[test]
fn the_grid_wraps_at_fifty_nodes() {
    let mut raw = deployment();
    let nodes: Vec<Value> = (0..120)
        .map(|i| json!({"id": format!("n{i}"), "ordinal": i, "from_version": 1, "state": if i < 60 { "succeeded" } else { "failed" }, "failures": 0}))
        .collect();
    raw["nodes"] = json!(nodes);
    let f = frame(&view(&raw), &raw, T0);
    assert_eq!(f.grid.len(), 3);
    assert_eq!(f.grid[0], "S".repeat(50));
    assert_eq!(f.grid[1], format!("{}{}", "S".repeat(10), "F".repeat(40)));
    assert_eq!(f.grid[2], "F".repeat(20));
    assert_eq!(f.counts, "succeeded 60 (S) · failed 60 (F)");
}

#[test]
fn exit_codes_by_status() {
    assert_eq!(exit_code(Status::RolledForward), Some(0));
    for s in [
        Status::Failed,
        Status::RolledBack,
        Status::Aborted,
        Status::Error,
    ] {
        assert_eq!(exit_code(s), Some(1), "{s:?}");
    }
    for s in [
        Status::RollingForward,
        Status::RollingBack,
        Status::RollForwardPaused,
        Status::RollBackPaused,
        Status::RollForwardAwaitingPulse,
        Status::RollBackAwaitingPulse,
    ] {
        assert_eq!(exit_code(s), None, "{s:?}");
    }
    let e = CliError::Ended {
        id: "d-3".into(),
        status: "ROLLED_BACK".into(),
    };
    assert_eq!(e.to_string(), "deployment d-3 ended ROLLED_BACK");
}
