use super::*;
use serde_json::json;

/// Consumer `c` selects `app` `selected`; `lib`'s active deployment there is `d-7`.
fn consumer(selected: u64) -> ConsumerView {
    serde_json::from_value(json!({
        "name": "c", "nodes": ["c-0"],
        "subscriptions": {
            "app": {"mode": "weak", "selected": selected},
            "lib": {"mode": "weak", "selected": 2, "deployment": "d-7"},
        },
    }))
    .expect("a consumer view")
}

/// `app` 2 needs `lib` 2.
fn resources() -> Vec<ResourceView> {
    let v = |version: u64, deps: serde_json::Value| json!({"version": version, "metadata": {}, "depends_on": deps, "published_at": 1});
    vec![
        serde_json::from_value(json!({"name": "app", "versions": [
            v(1, json!([])), v(2, json!([{"resource": "lib", "version": 2}]))]}))
        .expect("a resource view"),
        serde_json::from_value(
            json!({"name": "lib", "versions": [v(1, json!([])), v(2, json!([]))]}),
        )
        .expect("a resource view"),
    ]
}

#[test]
fn a_selection_that_needs_a_version_being_rolled_back_is_caught() {
    let rolling_back = |_| Some(Status::RollingBack);
    let found = dependencies_through_rollbacks(&[consumer(2)], &resources(), &[], rolling_back);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule, "dependency-through-a-rollback");
    assert!(
        found[0]
            .detail
            .contains("app selects 2, which needs lib 2 on c, while d-7"),
        "{found:?}"
    );
    // Selecting the version below, or the deployment rolling forward: nothing to say.
    assert!(
        dependencies_through_rollbacks(&[consumer(1)], &resources(), &[], rolling_back).is_empty()
    );
    let forward = |_| Some(Status::RollingForward);
    assert!(dependencies_through_rollbacks(&[consumer(2)], &resources(), &[], forward).is_empty());
}
