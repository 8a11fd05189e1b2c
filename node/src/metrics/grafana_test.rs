//! The Grafana dashboard (`docs/grafana/convoy.json`) against the metrics this server exports: it parses,
//! queries only series `/metrics` can serve, and offers the `consumer` and `resource` variables it filters by.

use std::collections::BTreeSet;

use serde_json::Value;

const DASHBOARD: &str = include_str!("../../../docs/grafana/convoy.json");

/// Every PromQL query of the dashboard: its panels' targets and its variables' queries.
fn queries(dashboard: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push(
                target["expr"]
                    .as_str()
                    .expect("a target's expr")
                    .to_string(),
            );
        }
    }
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        if variable["type"] == "query" {
            let query = &variable["query"];
            let text = query["query"].as_str().or(query.as_str());
            out.push(text.expect("a variable's query").to_string());
        }
    }
    out
}

/// The metric names a query mentions: identifiers that start like this server's series.
fn metric_names(query: &str) -> BTreeSet<String> {
    query
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|word| word.starts_with("convoy_") || word.starts_with("process_"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_grafana_dashboard_parses_and_names_only_exported_metrics() {
    let dashboard: Value =
        serde_json::from_str(DASHBOARD).expect("docs/grafana/convoy.json parses");
    let exported = super::metrics().exported_names();
    let queries = queries(&dashboard);
    assert!(
        queries.len() > 10,
        "the dashboard has {} queries",
        queries.len()
    );
    let mut named = BTreeSet::new();
    for query in &queries {
        for name in metric_names(query) {
            assert!(
                exported.contains(&name),
                "the dashboard queries {name}, which /metrics does not export (in {query:?})"
            );
            named.insert(name);
        }
    }
    assert!(
        named.contains("convoy_rollbacks_total"),
        "no rollback panel: {named:?}"
    );
}

#[test]
fn the_grafana_dashboard_filters_by_consumer_and_resource() {
    let dashboard: Value =
        serde_json::from_str(DASHBOARD).expect("docs/grafana/convoy.json parses");
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for want in ["consumer", "resource"] {
        assert!(
            variables.contains(&want),
            "no ${want} variable: {variables:?}"
        );
        let used = queries(&dashboard)
            .iter()
            .filter(|q| q.contains(&format!("{want}=~\"${want}\"")))
            .count();
        assert!(used >= 2, "${want} filters {used} queries");
    }
}

#[test]
fn a_made_up_metric_name_is_not_exported() {
    // The check above would pass vacuously if every name were "exported".
    let exported = super::metrics().exported_names();
    assert!(!exported.contains("convoy_no_such_metric_total"));
    assert!(exported.contains("convoy_http_request_duration_seconds_bucket"));
    assert!(exported.contains("convoy_raft_fsync_seconds_bucket"));
    assert!(exported.contains("convoy_deployment_nodes"));
}
