//! Tests of the fleet renderings: node tables, the version distribution and the cluster status table.

use serde_json::json;

use super::*;

#[test]
fn the_version_distribution_counts_nodes_per_version() {
    let nodes = vec![
        json!({"id": "a", "versions": {"app": 2, "db": 1}}),
        json!({"id": "b", "versions": {"app": 2}}),
        json!({"id": "c", "versions": {"app": 1}}),
        json!({"id": "d", "versions": {"app": null}}),
    ];
    let d = distribution(&nodes);
    assert_eq!(d["app"]["2"], 2);
    assert_eq!(d["app"]["1"], 1);
    assert_eq!(d["app"]["-"], 1);
    assert_eq!(d["db"]["1"], 1);
}

#[test]
fn node_list_shows_versions_phases_and_report_age() {
    let page = json!({"total": 3, "nodes": [
        {"id": "web-0", "active": true, "consumers": ["web"], "versions": {"app": 2},
         "phases": {"d-4": "installing"}, "last_report_ms": 1500},
        {"id": "web-1", "active": false, "consumers": ["web"], "versions": {},
         "phases": {}, "last_report_ms": null},
    ]});
    let out = node_table(&page);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NODE"), "{out}");
    assert!(
        lines[1].contains("web-0") && lines[1].contains("app=2"),
        "{out}"
    );
    assert!(
        lines[1].contains("d-4:installing") && lines[1].contains("1.5s ago"),
        "{out}"
    );
    assert!(
        lines[2].contains("web-1") && lines[2].contains("no"),
        "{out}"
    );
    assert!(out.contains("the first 2 of 3 nodes"), "{out}");
}

#[test]
fn an_unreachable_member_says_so_with_the_cause() {
    let members = vec![
        json!({"id": 1, "http_addr": "127.0.0.1:8081", "reachable": true, "role": "leader",
               "term": 3, "last_applied": 40, "lag": 0, "version": "0.1.0"}),
        json!({"id": 2, "http_addr": "127.0.0.1:8082", "reachable": false,
               "error": "Connection refused (os error 111)"}),
    ];
    let out = status_table(&members);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[1].contains("reachable") && lines[1].contains("leader"),
        "{out}"
    );
    assert!(
        lines[2].contains("unreachable: Connection refused") && !lines[2].contains("follower"),
        "{out}"
    );
}
