//! `GET /metrics` on a real three-server cluster, parsed with a Prometheus text parser: the raft, domain,
//! API and process metrics agree with what the API says (leader, term, applied index, deployments by
//! status, nodes by phase), and routes are labelled by pattern, never by raw path.

use std::collections::BTreeMap;
use std::time::Duration;

use convoy_tests::scenario::{consumer, get_ok, post_ok, publish, resource_with_v1};
use convoy_tests::Cluster;
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::json;

/// Scrapes `addr` and parses the exposition.
async fn scrape(addr: &str) -> anyhow::Result<Scrape> {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await?;
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let text = response.text().await?;
    let lines = text.lines().map(|l| Ok(l.to_string()));
    Ok(Scrape::parse(lines)?)
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Counter(n) | Value::Gauge(n) | Value::Untyped(n) => *n,
        other => panic!("not a number: {other:?}"),
    }
}

/// The samples of `name` whose labels include every pair of `labels`.
fn samples<'a>(s: &'a Scrape, name: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .collect()
}

/// The one value of `name` with `labels`.
fn one(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    let found = samples(s, name, labels);
    assert_eq!(found.len(), 1, "{name} {labels:?}: {found:?}");
    number(&found[0].value)
}

/// Waits (at most 20 s) until every node is active in the applied state.
async fn wait_active(api: &convoy_tests::RawClient, nodes: &[String]) -> anyhow::Result<()> {
    for _ in 0..200 {
        let mut all = true;
        for node in nodes {
            let (status, view) = api.get(&format!("/v1/nodes/{node}")).await?;
            all &= status == 200 && view["active"] == true;
        }
        if all {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("nodes {nodes:?} did not become active")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_of_a_real_cluster_agree_with_the_api() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let mut nodes = consumer(&api, "web", 4).await?;
    nodes.extend(consumer(&api, "db", 2).await?);
    // Each node reports once (running version 1), then never again: no agent moves the deployments on.
    for node in &nodes {
        post_ok(
            &api,
            &format!("/v1/nodes/{node}/report"),
            json!({"resources": {"app": {"current": 1}}}),
        )
        .await?;
    }
    wait_active(&api, &nodes).await?;
    // The same report again changes nothing: a heartbeat the leader coalesces away.
    post_ok(
        &api,
        &format!("/v1/nodes/{}/report", nodes[0]),
        json!({"resources": {"app": {"current": 1}}}),
    )
    .await?;
    let rolling = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2,
               "strategy": {"all_at_once": {}}}),
    )
    .await?;
    let aborted = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "db", "resource": "app", "version": 2}),
    )
    .await?;
    let aborted_id = aborted["id"].as_str().unwrap().to_string();
    post_ok(
        &api,
        &format!("/v1/deployments/{aborted_id}/abort"),
        json!({}),
    )
    .await?;
    let rolling_id = rolling["id"].as_str().unwrap().to_string();
    let view = get_ok(
        &api,
        &format!("/v1/deployments/{rolling_id}?consistent=true"),
    )
    .await?;
    // Unknown paths must not become series of their own.
    let stray = cluster.server(leader).client();
    let (status, _) = stray.get("/no/such/path-7f3a").await?;
    assert_eq!(status, 404);

    let mut leaders = 0.0;
    for id in cluster.running() {
        let server = cluster.server(id);
        let client = server.client();
        // Every server has applied the abort before it is scraped.
        let (_, before) = client.get("/v1/cluster?consistent=true").await?;
        let before_applied = before["last_applied"].as_f64().unwrap();
        let s = scrape(&server.http_addr).await?;
        let (_, after) = client.get("/v1/cluster").await?;
        let applied = one(&s, "convoy_raft_applied_index", &[]);
        assert!(
            applied >= before_applied && applied <= after["last_applied"].as_f64().unwrap(),
            "server {id}: applied {applied}, API said {before} then {after}"
        );
        assert_eq!(
            one(&s, "convoy_raft_term", &[]),
            after["term"].as_f64().unwrap()
        );
        assert_eq!(
            one(&s, "convoy_raft_leader_id", &[]),
            after["leader_id"].as_f64().unwrap()
        );
        assert!(one(&s, "convoy_raft_commit_index", &[]) >= applied - 1.0);
        let is_leader = one(&s, "convoy_raft_is_leader", &[]);
        leaders += is_leader;
        let lag = samples(&s, "convoy_raft_replication_lag_entries", &[]);
        if id == leader {
            assert_eq!(is_leader, 1.0);
            assert_eq!(lag.len(), 2, "one lag per follower: {lag:?}");
        } else {
            assert!(lag.is_empty(), "followers report no lag: {lag:?}");
        }
        assert!(one(&s, "convoy_raft_elections_total", &[]) >= 0.0);

        // Deployments by status, against GET /v1/deployments.
        let (_, list) = client.get("/v1/deployments").await?;
        let mut by_status: BTreeMap<String, f64> = BTreeMap::new();
        for d in list.as_array().unwrap() {
            *by_status
                .entry(d["status"].as_str().unwrap().to_string())
                .or_default() += 1.0;
        }
        assert_eq!(by_status.get("ABORTED"), Some(&1.0), "{list}");
        for sample in samples(&s, "convoy_deployments", &[]) {
            let status = &sample.labels["status"];
            assert_eq!(
                number(&sample.value),
                by_status.get(status).copied().unwrap_or(0.0),
                "server {id}: deployments {status}"
            );
        }
        // Nodes by phase of the active deployment, against its view.
        for node_state in ["pending", "installing", "downloading"] {
            let want = view["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| n["state"] == node_state)
                .count() as f64;
            let got = one(
                &s,
                "convoy_deployment_nodes",
                &[("deployment", &rolling_id), ("phase", node_state)],
            );
            assert_eq!(got, want, "server {id}: {node_state}");
        }
        let total: f64 = samples(
            &s,
            "convoy_deployment_nodes",
            &[("deployment", &rolling_id)],
        )
        .iter()
        .map(|x| number(&x.value))
        .sum();
        assert_eq!(
            total, 4.0,
            "server {id}: every node of {rolling_id} in one phase"
        );
        assert!(
            samples(
                &s,
                "convoy_deployment_nodes",
                &[("deployment", &aborted_id)]
            )
            .is_empty(),
            "a finished deployment has no node gauges"
        );
        assert_eq!(one(&s, "convoy_nodes", &[]), 6.0);
        assert_eq!(one(&s, "convoy_pulses_overdue", &[]), 0.0);

        // Process and build.
        assert!(one(&s, "process_resident_memory_bytes", &[]) > 1e6);
        assert!(one(&s, "process_open_fds", &[]) > 3.0);
        assert_eq!(
            one(
                &s,
                "convoy_build_info",
                &[("version", env!("CARGO_PKG_VERSION"))]
            ),
            1.0
        );
        // Every raft append is timed; the fsync histogram is present.
        assert!(s
            .samples
            .iter()
            .any(|x| x.metric.starts_with("convoy_raft_fsync_seconds")));
        assert!(s
            .samples
            .iter()
            .any(|x| x.metric.starts_with("convoy_raft_append_seconds")));

        // API: our GET /v1/cluster calls are counted by pattern; no raw path is a label.
        let cluster_gets = one(
            &s,
            "convoy_http_requests_total",
            &[
                ("method", "GET"),
                ("route", "/v1/cluster"),
                ("status", "200"),
            ],
        );
        assert!(cluster_gets >= 1.0, "{cluster_gets}");
        for sample in samples(&s, "convoy_http_requests_total", &[]) {
            let route = &sample.labels["route"];
            assert!(
                route == "unmatched"
                    || route == "/metrics"
                    || route.starts_with("/v1/")
                    || route == "/healthz"
                    || route == "/readyz",
                "{route}"
            );
            assert!(
                !route.contains("d-") && !route.contains("path-7f3a"),
                "{route}"
            );
        }
        if id == leader {
            assert!(one(&s, "convoy_reports_heartbeats_total", &[]) >= 1.0);
            assert!(one(&s, "convoy_reports_changes_total", &[]) >= 6.0);
            assert!(one(&s, "convoy_report_batches_total", &[]) >= 1.0);
            assert!(one(&s, "convoy_reports_total", &[]) >= 7.0);
            assert_eq!(one(&s, "convoy_report_queue_depth", &[]), 0.0);
            assert!(
                one(
                    &s,
                    "convoy_http_requests_total",
                    &[("method", "GET"), ("route", "unmatched"), ("status", "404")],
                ) >= 1.0
            );
        }
    }
    assert_eq!(leaders, 1.0, "exactly one server says it leads");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_builds_are_timed_and_sized() -> anyhow::Result<()> {
    let options = convoy_tests::ClusterOptions {
        snapshot_every: 10,
        snapshot_max_every: Some(10),
        ..convoy_tests::ClusterOptions::for_tests(1)
    };
    let cluster = Cluster::start_with(options).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.server(1).client();
    for i in 0..25 {
        post_ok(&api, "/v1/resources", json!({"name": format!("r{i}")})).await?;
    }
    let addr = cluster.server(1).http_addr.clone();
    for _ in 0..100 {
        let s = scrape(&addr).await?;
        if one(&s, "convoy_raft_snapshots_built_total", &[]) >= 1.0 {
            assert!(one(&s, "convoy_raft_snapshot_bytes", &[]) > 0.0);
            let histogram = samples(&s, "convoy_raft_snapshot_build_seconds", &[]);
            let Value::Histogram(buckets) = &histogram[0].value else {
                panic!("not a histogram: {histogram:?}");
            };
            let all = buckets.iter().find(|b| b.less_than.is_infinite()).unwrap();
            assert!(
                all.count >= 1.0,
                "the build is in the histogram: {buckets:?}"
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("no snapshot was built after 25 writes with snapshot_every = 10")
}
