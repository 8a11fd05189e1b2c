use super::*;
use serde_json::json;

fn norm(mut v: Value) -> Result<Value, String> {
    normalise(&mut v, "").map(|()| v).map_err(|e| e.to_string())
}

#[test]
fn every_duration_field_is_read_as_the_issue_writes_it() {
    let body = json!({
        "mode": "strong",
        "min_healthy": "30s",
        "pulse_interval": "1m",
        "completion": {"quorum": 0.5, "timeout": "2h"},
        "pacing": {"bake": "10m", "healthy_deadline": "10m", "download_deadline": "1h30m",
                   "progress_deadline": "15m"},
        "analysis": {"provider": "prom", "metrics": [
            {"name": "errors", "query": "up", "interval": "60s", "initial_delay": "0s"},
            {"name": "latency", "query": "up", "interval_ms": 5000}]},
        "brake": {"max_failed": "10%", "window": "10m"},
    });
    let want = json!({
        "mode": "strong",
        "min_healthy_ms": 30_000,
        "pulse_interval_ms": 60_000,
        "completion": {"quorum": 0.5, "timeout_ms": 7_200_000},
        "pacing": {"bake_ms": 600_000, "healthy_deadline_ms": 600_000, "download_deadline_ms": 5_400_000,
                   "progress_deadline_ms": 900_000},
        "analysis": {"provider": "prom", "metrics": [
            {"name": "errors", "query": "up", "interval_ms": 60_000, "initial_delay_ms": 0},
            {"name": "latency", "query": "up", "interval_ms": 5000}]},
        "brake": {"max_failed": "10%", "window_ms": 600_000},
    });
    assert_eq!(norm(body).unwrap(), want);
}

#[test]
fn the_milliseconds_and_null_are_left_as_they_are() {
    let body = json!({"min_healthy_ms": 5, "pacing": null, "completion": {"timeout": null}});
    let want = json!({"min_healthy_ms": 5, "pacing": null, "completion": {"timeout_ms": null}});
    assert_eq!(norm(body).unwrap(), want);
}

#[test]
fn both_spellings_of_one_field_are_refused_naming_both() {
    let e = norm(json!({"pacing": {"bake": "10m", "bake_ms": 600000}})).unwrap_err();
    assert_eq!(e, "both pacing.bake and pacing.bake_ms are given: give one");
    let e =
        norm(json!({"analysis": {"metrics": [{"interval": "1m", "interval_ms": 1}]}})).unwrap_err();
    assert!(
        e.starts_with("both analysis.metrics[0].interval and analysis.metrics[0].interval_ms"),
        "{e}"
    );
}

#[test]
fn bad_durations_are_refused_naming_the_field_and_the_value() {
    let e = norm(json!({"brake": {"window": "ten minutes"}})).unwrap_err();
    assert!(
        e.starts_with("brake.window = \"ten minutes\" is invalid: not a duration"),
        "{e}"
    );
    let e = norm(json!({"pacing": {"bake": "600"}})).unwrap_err();
    assert_eq!(
        e,
        "pacing.bake = \"600\" is invalid: a duration needs its unit: write 600s or 600ms"
    );
    let e = norm(json!({"min_healthy": 600})).unwrap_err();
    assert!(e.starts_with("min_healthy = 600 is not a duration"), "{e}");
    assert!(e.contains("min_healthy_ms"), "{e}");
    let e = norm(json!({"min_healthy": true})).unwrap_err();
    assert!(e.starts_with("min_healthy = true is not a duration"), "{e}");
}

#[test]
fn durations_are_bounded() {
    let e = norm(json!({"pacing": {"bake": "3651d"}})).unwrap_err();
    assert_eq!(
        e,
        "pacing.bake = \"3651d\" is invalid: a duration is at most 10 years"
    );
    assert!(norm(json!({"pacing": {"bake": "3650d"}})).is_ok());
    let e = norm(json!({"pacing": {"bake": "99999999999999999999999d"}})).unwrap_err();
    assert!(
        e.starts_with("pacing.bake = \"99999999999999999999999d\" is invalid"),
        "{e}"
    );
}

#[test]
fn a_huge_value_is_cut_in_the_error() {
    let huge = "x".repeat(10_000);
    let e = norm(json!({"pacing": {"bake": huge}})).unwrap_err();
    assert!(e.len() < 400, "{} bytes", e.len());
    assert!(e.contains("(10002 bytes)"), "{e}");
}

#[test]
fn a_field_of_the_same_name_that_is_an_object_is_left_alone() {
    let body = json!({"window": {"name": "w"}, "interval": ["a"]});
    assert_eq!(norm(body.clone()).unwrap(), body);
}
