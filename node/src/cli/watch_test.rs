//! Watch frames of a deployment summary: fitting the terminal, the density bar, the age, the countdown,
//! and exit codes by status.

use std::time::Duration;

use convoy_actors::domain::{Status, SummaryView};
use serde_json::{json, Value};

use super::*;
use crate::cli::fixtures::T0;

/// `GET /v1/deployments/d-3/summary` of a coordinated rolling deployment of 1,000 nodes, 30 failing.
fn raw() -> Value {
    let failing: Vec<Value> = (0..20)
        .map(|i| json!({"id": format!("n{i}"), "ordinal": i, "state": "failed", "failures": 2, "reason": "exit 3", "at": T0 + 1_000}))
        .collect();
    let events: Vec<Value> = (0..10)
        .map(|i| json!({"at": T0 + 1_000 * i, "node": format!("n{i}"), "action": "install", "by": "system"}))
        .collect();
    json!({
        "id": "d-3", "consumer": "web", "resource": "api", "version": 7,
        "status": "ROLLING_FORWARD", "created_at": T0, "now": T0 + 80_000, "age_ms": 80_000,
        "nodes": 1000,
        "counts": {"pending": 400, "downloading": 3, "downloaded": 0, "installing": 2, "watching": 0,
                   "succeeded": 500, "failed": 30, "skipped": 65, "rolling_back": 0, "rolled_back": 0},
        "windows": {"install": {"used": 2, "size": 2}, "download": {"used": 3, "size": 3}},
        "pulse": {"interval_ms": 10_000, "last_pulse_at": T0 + 76_000, "deadline": T0 + 86_000, "left_ms": 6_000, "blocked": false},
        "failing": failing, "failing_total": 30,
        "events": events, "events_total": 2500, "fingerprint": 1
    })
}

fn summary(raw: &Value) -> SummaryView {
    serde_json::from_value(raw.clone()).unwrap()
}

#[test]
fn a_frame_fits_the_terminal_whatever_the_node_count() {
    let s = summary(&raw());
    for (height, width) in [(6, 40), (24, 80), (40, 120), (200, 200)] {
        let lines = frame(&s, Duration::ZERO, height, width);
        assert!(lines.len() <= height, "{height}x{width}: {lines:#?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= width),
            "{lines:#?}"
        );
    }
    let lines = frame(&s, Duration::ZERO, 24, 100);
    assert_eq!(lines[0], "d-3 web/api v7 ROLLING_FORWARD · age 1m20s");
    assert_eq!(lines[1], "install window 2/2 · download window 3/3");
    assert_eq!(lines[2], "pulse every 10.0s: 6.0s left");
    assert_eq!(
        lines[3],
        "succeeded 500 · installing 2 · downloading 3 · pending 400 · failed 30 · skipped 65"
    );
    assert!(
        lines[4].ends_with("] 500/1000 succeeded (50%)"),
        "{}",
        lines[4]
    );
    assert_eq!(lines[5], "failing nodes (30):");
    assert_eq!(lines[6], "  n0 #0 failed after 2 attempt(s): exit 3");
    assert!(lines.iter().any(|l| l.contains("... and")), "{lines:#?}");
    let tall = frame(&s, Duration::ZERO, 200, 100);
    assert!(tall.iter().any(|l| l == "recent events:"), "{tall:#?}");
    assert!(
        tall.iter().any(|l| l.contains("... and 10 more")),
        "{tall:#?}"
    );
}

#[test]
fn the_density_bar_has_its_width_and_marks_in_proportion() {
    let s = summary(&raw());
    let bar = density_bar(&s, 50);
    let cells: String = bar[bar.find('[').unwrap() + '['.len_utf8()..bar.find(']').unwrap()].into();
    assert_eq!(cells.chars().count(), 50);
    assert_eq!(cells.chars().filter(|c| *c == '█').count(), 25, "{bar}");
    assert!(cells.contains('x'), "failed nodes show: {bar}");
}

#[test]
fn age_and_countdown_move_with_the_clock_until_the_end() {
    let mut raw = raw();
    let s = summary(&raw);
    assert_eq!(
        header(&s, Duration::from_secs(10)),
        "d-3 web/api v7 ROLLING_FORWARD · age 1m30s"
    );
    assert_eq!(
        pulse(&s, Duration::from_secs(7)).as_deref(),
        Some("pulse every 10.0s: overdue by 1.0s")
    );
    raw["status"] = json!("ROLL_FORWARD_AWAITING_PULSE");
    raw["paused_by"] = json!("pulse_timeout");
    raw["pulse"]["blocked"] = json!(true);
    let s = summary(&raw);
    assert_eq!(
        pulse(&s, Duration::ZERO).as_deref(),
        Some("pulse every 10.0s: BLOCKED awaiting a pulse")
    );
    raw["status"] = json!("ROLLED_FORWARD");
    raw["age_ms"] = json!(90_000);
    let s = summary(&raw);
    assert_eq!(
        header(&s, Duration::from_secs(600)),
        "d-3 web/api v7 ROLLED_FORWARD (paused by pulse_timeout) · took 1m30s"
    );
}

#[test]
fn the_plain_line_names_failing_nodes_and_ignores_the_clock() {
    let s = summary(&raw());
    let l = line(&s);
    assert!(
        l.starts_with("d-3 web/api v7 ROLLING_FORWARD · 500/1000 succeeded · "),
        "{l}"
    );
    assert!(l.ends_with(" · failing 30 (n0,n1,n2,n3,n4)"), "{l}");
}

#[test]
fn exit_codes_by_status() {
    assert_eq!(exit_code(Status::RolledForward), Some(0));
    for s in [Status::Failed, Status::RolledBack, Status::Aborted] {
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
        counts: "0/1 nodes succeeded, 0 failed, 1 skipped".into(),
    };
    assert_eq!(
        e.to_string(),
        "deployment d-3 ended ROLLED_BACK: 0/1 nodes succeeded, 0 failed, 1 skipped"
    );
}

#[test]
fn the_end_says_how_many_nodes_failed_were_skipped_or_timed_out() {
    let mut raw = raw();
    raw["status"] = json!("ROLLED_FORWARD");
    assert_eq!(
        ended(&summary(&raw)),
        "500/1000 nodes succeeded, 30 failed, 65 skipped"
    );
    raw["counts"]["timed_out"] = json!(400);
    raw["counts"]["pending"] = json!(0);
    assert_eq!(
        ended(&summary(&raw)),
        "500/1000 nodes succeeded, 30 failed, 65 skipped, 400 timed out"
    );
}
