//! Sample API answers shared by the CLI's rendering tests.

use serde_json::{json, Value};

/// Created at T0; pulsed at T0 + 4 s; now is T0 + 10 s in the tests.
pub const T0: u64 = 1_700_000_000_000;

/// `GET /v1/deployments/d-3`: a coordinated rolling deployment of 6 nodes, 2 succeeded.
pub fn deployment() -> Value {
    json!({
        "id": "d-3", "consumer": "web", "resource": "api", "version": 7,
        "status": "ROLLING_FORWARD",
        "settings": {
            "strategy": {"rolling": {"install_window": 2, "download_window": 3}},
            "min_healthy_ms": 5000, "max_failures_per_node": 1, "max_failed_nodes": null,
            "rollback_on_failure": true, "pulse_interval_ms": 10000,
            "completion": {"quorum": null, "timeout_ms": null}
        },
        "nodes": [
            {"id": "n0", "ordinal": 0, "from_version": 6, "state": "succeeded", "failures": 0},
            {"id": "n1", "ordinal": 1, "from_version": 6, "state": "succeeded", "failures": 0},
            {"id": "n2", "ordinal": 2, "from_version": 6, "state": "watching", "failures": 0},
            {"id": "n3", "ordinal": 3, "from_version": 6, "state": "installing", "failures": 1},
            {"id": "n4", "ordinal": 4, "from_version": null, "state": "downloading", "failures": 0},
            {"id": "n5", "ordinal": 5, "from_version": 6, "state": "pending", "failures": 0}
        ],
        "events": [
            {"at": T0, "status": "ROLL_FORWARD_AWAITING_PULSE", "by": "user", "message": "api 7"},
            {"at": T0 + 4000, "status": "ROLLING_FORWARD", "by": "pulse", "message": "pulse received"},
            {"at": T0 + 4000, "node": "n0", "action": "install", "by": "system"}
        ]
    })
}

/// `GET /v1/group-deployments/g-1`.
pub fn group_deployment() -> Value {
    json!({
        "id": "g-1", "group": "shop", "status": "RUNNING", "current_step": 1,
        "steps": [
            [{"consumer": "db", "resource": "schema", "version": 2, "deployment": "d-1", "status": "ROLLED_FORWARD"}],
            [{"consumer": "web", "resource": "api", "version": 7, "deployment": "d-3", "status": "ROLLING_FORWARD"},
             {"consumer": "web", "resource": "cfg", "version": 1}]
        ]
    })
}
