//! A pair's latest deployment is its highest id, whatever the order of the list (ids compare as numbers).

use convoy_actors::domain::{DeploymentId, DeploymentSummary};
use serde_json::json;

use super::latest;

fn summary(id: &str, status: &str) -> serde_json::Value {
    json!({"id": id, "consumer": "web", "resource": "app", "version": 1, "status": status,
           "nodes": 1, "succeeded": 0, "failed": 0, "skipped": 0})
}

#[test]
fn the_latest_is_the_highest_id_ended_or_not() {
    let list: Vec<DeploymentSummary> = serde_json::from_value(json!([
        summary("d-9", "ROLLING_FORWARD"),
        summary("d-10", "ROLLED_BACK"),
        summary("d-2", "ROLLED_FORWARD"),
    ]))
    .unwrap();
    assert_eq!(latest(&list), Some(DeploymentId(10)));
    assert_eq!(latest(&[]), None);
}
