//! What `resource publish` says after publishing (or, with `--dry-run`, instead of it): which consumers
//! take the version and how. Weak subscriptions take it at once, every node on its own with no deployment
//! in `deploy list`, so a publish is never silent about them. The server computes it with the domain's own
//! selection (`reach` of `POST /v1/resources/{name}/versions`); this only words it.

use serde_json::Value;

/// `consumer (N nodes)` for each taker of `list`, comma-separated, with the deployment when there is one.
fn takers(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let nodes = t["nodes"].as_u64().unwrap_or(0);
            let deployment = t["deployment"]
                .as_str()
                .map(|d| format!(", {d}"))
                .unwrap_or_default();
            format!(
                "{} ({nodes} node{}{deployment})",
                t["consumer"].as_str().unwrap_or("?"),
                if nodes == 1 { "" } else { "s" }
            )
        })
        .collect()
}

/// `consumer (N nodes, window a, b[, next change at T])` for each weak consumer a window holds.
fn waiting(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let nodes = t["nodes"].as_u64().unwrap_or(0);
            let windows: Vec<&str> = t["windows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let next = t["next_change"]
                .as_u64()
                .map(|at| format!(", next change at {}", super::zoned::utc(at)))
                .unwrap_or_default();
            format!(
                "{} ({nodes} node{}, window {}{next})",
                t["consumer"].as_str().unwrap_or("?"),
                if nodes == 1 { "" } else { "s" },
                windows.join(", ")
            )
        })
        .collect()
}

/// The lines `resource publish` prints for the answer `v` (a dry run's when `dry_run`).
pub fn reach(resource: &str, dry_run: bool, v: &Value) -> String {
    let version = &v["version"];
    let reach = &v["reach"];
    // The verbs: (one subject, several subjects, getting).
    let (head, takes, take, get, wait) = if dry_run {
        (
            format!("dry run: {resource} version {version} would be published (nothing changed)"),
            "would take",
            "would take",
            "would get",
            "would wait",
        )
    } else {
        (
            format!("published {resource} version {version}"),
            "takes",
            "take",
            "get",
            "wait",
        )
    };
    let mut lines = vec![head];
    let at_once = takers(&reach["at_once"]);
    let nodes = reach["nodes_at_once"].as_u64().unwrap_or(0);
    if at_once.is_empty() {
        lines.push(format!("no weak subscription {takes} it at once"));
    } else {
        lines.push(format!(
            "weak subscriptions {take} it at once, no deployment: {} ({nodes} node{} in all)",
            at_once.join(", "),
            if nodes == 1 { "" } else { "s" }
        ));
    }
    let waiting = waiting(&reach["waiting"]);
    if !waiting.is_empty() {
        lines.push(format!(
            "weak subscriptions {wait} for a maintenance window, their nodes keep what they run: {}",
            waiting.join(", ")
        ));
    }
    let by_deployment = takers(&reach["by_deployment"]);
    if !by_deployment.is_empty() {
        lines.push(format!(
            "strong subscriptions {get} it through a deployment: {}",
            by_deployment.join(", ")
        ));
    }
    if let Some(more) = reach["unlisted"].as_u64().filter(|n| *n > 0) {
        lines.push(format!("and {more} more consumers (see -o json)"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn weak_takers_are_named_with_their_nodes() {
        let v = json!({"resource": "tool", "version": 3, "reach": {
            "at_once": [{"consumer": "edge", "nodes": 6}, {"consumer": "lab", "nodes": 1}],
            "nodes_at_once": 7,
            "by_deployment": [{"consumer": "web", "nodes": 3, "deployment": "d-4"}],
            "unlisted": 0}});
        assert_eq!(
            reach("tool", false, &v),
            "published tool version 3\n\
             weak subscriptions take it at once, no deployment: edge (6 nodes), lab (1 node) (7 nodes in all)\n\
             strong subscriptions get it through a deployment: web (3 nodes, d-4)"
        );
        let held = json!({"resource": "tool", "version": 3, "reach": {
            "at_once": [], "nodes_at_once": 0,
            "waiting": [{"consumer": "edge", "nodes": 4, "windows": ["freeze"]}],
            "by_deployment": [], "unlisted": 0}});
        assert_eq!(
            reach("tool", false, &held),
            "published tool version 3\n\
             no weak subscription takes it at once\n\
             weak subscriptions wait for a maintenance window, their nodes keep what they run: \
             edge (4 nodes, window freeze)"
        );
        let none = json!({"version": 4, "reach": {"at_once": [], "nodes_at_once": 0,
            "by_deployment": [], "unlisted": 0}});
        assert_eq!(
            reach("tool", true, &none),
            "dry run: tool version 4 would be published (nothing changed)\n\
             no weak subscription would take it at once"
        );
    }
}
