//! Tests of `deploy undo`: the body it sends, its refusals, and the rollback hint.

use convoy_actors::domain::DeploymentView;

use super::*;
use crate::cli::fixtures;

fn view() -> DeploymentView {
    serde_json::from_value(fixtures::deployment()).unwrap()
}

#[test]
fn ranges_are_compact_and_sorted() {
    assert_eq!(ranges(&[5, 0, 1, 2, 8, 7]), "0-2,5,7-8");
    assert_eq!(ranges(&[3]), "3");
    assert_eq!(ranges(&[]), "");
}

#[test]
fn undo_goes_back_to_the_from_version_on_the_same_nodes_with_the_same_policy() {
    let body = undo_body(&view(), None).unwrap();
    assert_eq!(body["consumer"], "web");
    assert_eq!(body["resource"], "api");
    assert_eq!(body["version"], 6);
    // n4 ran nothing before: it is not part of the undo.
    assert_eq!(body["nodes"], "0-3,5");
    assert_eq!(
        body["strategy"],
        json!({"rolling": {"install_window": 2, "download_window": 3}})
    );
    assert_eq!(body["min_healthy_ms"], 5000);
    assert_eq!(body["max_failures_per_node"], 1);
    assert!(body.get("max_failed_nodes").is_none());
    assert_eq!(body["pulse_interval_ms"], 10000);
    assert_eq!(body["rollback_on_failure"], true);
    assert_eq!(body["message"], "undo of d-3");
}

#[test]
fn undo_refuses_mixed_or_missing_from_versions_naming_them() {
    let mut d = view();
    d.nodes[0].from_version = Some(5);
    let err = undo_body(&d, None).unwrap_err().to_string();
    assert!(
        err.contains("version 5 on nodes 0") && err.contains("version 6 on nodes 1-3,5"),
        "{err}"
    );
    for n in &mut d.nodes {
        n.from_version = None;
    }
    let err = undo_body(&d, None).unwrap_err().to_string();
    assert!(err.contains("nothing to go back to"), "{err}");
}

#[test]
fn a_refused_rollback_of_a_finished_deployment_suggests_undo() {
    let refused = CliError::Client(ClientError::Api {
        status: 409,
        code: "conflict".into(),
        message: "cannot roll back a terminal deployment".into(),
    });
    let err = suggest_undo(refused, "d-4").to_string();
    assert!(err.contains("convoy deploy undo d-4"), "{err}");
    let other = CliError::Client(ClientError::NoServers);
    assert!(!suggest_undo(other, "d-4").to_string().contains("undo"));
}
