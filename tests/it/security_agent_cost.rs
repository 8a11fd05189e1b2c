//! What one agent's reports may cost the cluster, through the real binary (issue 28, items 1, 2, 3, 8),
//! scaled down from the attacks as written: a 200 KB `error` is stored cut to 1,024 bytes; 800 unknown
//! resources, versions never published and a report over the byte budget are refused with 400 naming the
//! limit, before the log; thousands of made-up node ids leave the leader's liveness table at the size of
//! the fleet; one bad report in a batch drops no other node's change, and refusals are counted in a
//! metric; a follower refuses an encoded path in a node id instead of forwarding it decoded; an agent
//! token reports only for its consumers' nodes, and the node events its reports cause name it (item 7).

use std::time::Duration;

use convoy_tests::scenario::{
    client_with_token, consumer, get_ok, post_ok, publish, put_ok, subscribed_consumers,
};
use convoy_tests::{Cluster, RawClient};
use serde_json::{json, Value};

/// The applied index on one server.
async fn applied(api: &RawClient) -> anyhow::Result<u64> {
    let body = get_ok(api, "/v1/cluster/digest").await?;
    Ok(body["last_applied"].as_u64().unwrap_or_default())
}

/// One metric's value on the server at `addr` (0 when it is absent).
async fn metric(addr: &str, name: &str) -> anyhow::Result<f64> {
    let text = reqwest::get(format!("http://{addr}/metrics"))
        .await?
        .text()
        .await?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == name).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0.0))
}

/// A cluster of three with resource `app` (versions 1 and 2) and consumer `web` of `nodes` nodes
/// subscribed to it; the leader's client, address and a follower's client.
async fn fleet(nodes: usize) -> anyhow::Result<(Cluster, RawClient, String, RawClient)> {
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    let addr = cluster.server(leader).http_addr.clone();
    let follower = cluster.client_except(leader);
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    publish(&api, "app", json!({"label": "1"})).await?;
    publish(&api, "app", json!({"label": "2"})).await?;
    consumer(&api, "web", nodes).await?;
    put_ok(&api, "/v1/consumers/web/subscriptions/app", json!({})).await?;
    Ok((cluster, api, addr, follower))
}

fn held(version: u64, error: Option<&str>) -> Value {
    json!({"versions": {version.to_string(): {"downloaded": true, "done": true, "error": error}}})
}

/// Polls `f` until it is true (10 s at most).
async fn until<F, Fut>(what: &str, mut f: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<bool>>,
{
    for _ in 0..200 {
        if f().await? {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("{what}: not within 10 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_is_bounded_before_the_log() -> anyhow::Result<()> {
    let (_cluster, api, _, follower) = fleet(3).await?;

    // A 200 KB error is stored cut to 1,024 bytes, with a marker.
    let long = "E".repeat(200 * 1024);
    let (status, body) = follower
        .post(
            "/v1/nodes/web-0/report",
            &json!({"resources": {"app": held(1, Some(&long))}}),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    until("the failed report is recorded", || {
        let api = &api;
        async move {
            let node = get_ok(api, "/v1/nodes/web-0").await?;
            Ok(node["resources"]["app"]["versions"]["1"]["error"].is_string())
        }
    })
    .await?;
    let node = get_ok(&api, "/v1/nodes/web-0").await?;
    let stored = node["resources"]["app"]["versions"]["1"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(stored.len() <= 1024, "{} bytes stored", stored.len());
    assert!(
        stored.starts_with("EEEE") && stored.contains("cut"),
        "{stored}"
    );

    // 800 unknown resources, a version never published, a report over the byte budget: 400 naming
    // the limit, through a follower and the leader, and nothing reaches the log.
    let before = applied(&api).await?;
    let unknown: serde_json::Map<String, Value> = (0..800)
        .map(|i| (format!("made-up-{i}"), json!({"current": 1})))
        .collect();
    let versions: serde_json::Map<String, Value> = (1..30_000)
        .map(|v| (v.to_string(), json!({"downloaded": true})))
        .collect();
    let budget: serde_json::Map<String, Value> = (1..=2)
        .map(|v| {
            (
                v.to_string(),
                json!({"done": true, "error": "x".repeat(1024)}),
            )
        })
        .chain((3..100).map(|v| {
            (
                v.to_string(),
                json!({"done": true, "error": "y".repeat(1024)}),
            )
        }))
        .collect();
    let bad = [
        (json!({"resources": unknown}), "exist"),
        (
            json!({"resources": {"app": {"versions": versions}}}),
            "bytes",
        ),
        (json!({"resources": {"app": {"current": 7}}}), "published"),
        (json!({"resources": {"app": {"versions": budget}}}), "65536"),
    ];
    for (report, limit) in &bad {
        for target in [&follower, &api] {
            let (status, body) = target.post("/v1/nodes/web-1/report", report).await?;
            assert_eq!(status, 400, "{limit}: {body}");
            let text = body.to_string();
            assert!(
                text.contains(limit),
                "the answer names the limit {limit}: {text}"
            );
            assert!(text.len() < 1_000, "the error echoes {} bytes", text.len());
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        applied(&api).await?,
        before,
        "a refused report reached the log"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_node_ids_do_not_grow_the_leaders_liveness_table() -> anyhow::Result<()> {
    let (_cluster, api, addr, _) = fleet(5).await?;
    for i in 0..5 {
        post_ok(&api, &format!("/v1/nodes/web-{i}/report"), json!({})).await?;
    }
    for batch in 0..3 {
        let reports: Vec<Value> = (0..2_000)
            .map(|i| json!({"node": format!("ghost-{batch}-{i}")}))
            .collect();
        let (status, body) = api
            .post("/v1/nodes/reports", &json!({"reports": reports}))
            .await?;
        assert_eq!(
            status,
            200,
            "{}",
            &body.to_string()[..200.min(body.to_string().len())]
        );
    }
    let size = metric(&addr, "convoy_leader_liveness_nodes").await?;
    assert!(
        (5.0..=5.0).contains(&size),
        "the liveness table holds {size} entries for a fleet of 5 after 6,000 made-up ids"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_bad_report_drops_no_other_nodes_change() -> anyhow::Result<()> {
    let (_cluster, api, addr, _) = fleet(6).await?;
    let refused_before = metric(&addr, "convoy_reports_refused_total").await?;

    // Alone, a bad report is a 400 where it arrives.
    let (status, body) = api
        .post(
            "/v1/nodes/web-5/report",
            &json!({"resources": {"bad/name": {"current": 1}}}),
        )
        .await?;
    assert_eq!(status, 400, "{body}");

    // In a batch, it is refused alone: the five other nodes' changes are recorded.
    let mut reports: Vec<Value> = (0..5)
        .map(|i| json!({"node": format!("web-{i}"), "resources": {"app": held(2, None)}}))
        .collect();
    reports.push(json!({"node": "web-5", "resources": {"bad/name": {"current": 1}}}));
    let (status, body) = api
        .post("/v1/nodes/reports", &json!({"reports": reports}))
        .await?;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["rejected"]["web-5"]
            .as_str()
            .is_some_and(|r| r.contains("bad/name")),
        "{body}"
    );
    until("every good node's change is recorded", || {
        let api = &api;
        async move {
            for i in 0..5 {
                let node = get_ok(api, &format!("/v1/nodes/web-{i}")).await?;
                if node["resources"]["app"]["versions"]["2"]["done"] != true {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    })
    .await?;
    let refused = metric(&addr, "convoy_reports_refused_total").await? - refused_before;
    assert_eq!(refused, 2.0, "each refusal is counted");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_refuses_an_encoded_path_in_a_node_id() -> anyhow::Result<()> {
    let (_cluster, api, _, follower) = fleet(2).await?;
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "api", "nodes": ["api-1"]}),
    )
    .await?;
    let before = applied(&api).await?;
    for target in [&follower, &api] {
        let (status, body) = target
            .post(
                "/v1/nodes/web-1%2F..%2Fapi-1/report",
                &json!({"resources": {}}),
            )
            .await?;
        assert_eq!(status, 400, "{body}");
        assert!(body.to_string().contains("node"), "{body}");
    }
    let (status, body) = api
        .post(
            "/v1/nodes/reports",
            &json!({"reports": [{"node": "web-1/../api-1"}]}),
        )
        .await?;
    assert_eq!(status, 400, "{body}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let node = get_ok(&api, "/v1/nodes/api-1").await?;
    assert_eq!(node["resources"], json!({}), "api-1 got a report: {node}");
    assert_eq!(applied(&api).await?, before);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_bound_to_a_consumer_reports_for_its_nodes_only() -> anyhow::Result<()> {
    let cluster =
        Cluster::start_with(convoy_tests::ClusterOptions::for_tests(3).with_auth()).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    publish(&api, "app", json!({"label": "1"})).await?;
    subscribed_consumers(&api, "app", &[("web", "web-1"), ("db", "web-db-1")]).await?;
    // The glob `web-*` matches db's `web-db-1` too; the consumer binding keeps it to web's nodes.
    let (status, created) = api
        .post(
            "/v1/tokens",
            &json!({"name": "web-agent", "role": "agent", "nodes": "web-*", "consumers": ["web"]}),
        )
        .await?;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["consumers"], json!(["web"]), "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_string();
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .expect("a follower");
    for id in [follower, leader] {
        let agent = client_with_token(&cluster.server(id).http_addr, Some(&secret))?;
        let (status, body) = until_known(&agent, "/v1/nodes/web-1/report").await?;
        assert_eq!(status, 200, "its own consumer's node: {body}");
        let (status, body) = agent
            .post(
                "/v1/nodes/web-db-1/report",
                &json!({"resources": {"app": held(1, None)}}),
            )
            .await?;
        assert_eq!(status, 403, "another consumer's node: {body}");
        assert!(body.to_string().contains("db"), "{body}");
        let (status, body) = agent
            .post(
                "/v1/nodes/reports",
                &json!({"reports": [{"node": "web-db-1", "resources": {"app": held(1, None)}}]}),
            )
            .await?;
        assert_eq!(status, 403, "another consumer's node, batched: {body}");
    }
    // A consumer binding on a token of another role is refused.
    let (status, body) = api
        .post(
            "/v1/tokens",
            &json!({"name": "r", "role": "reader", "consumers": ["web"]}),
        )
        .await?;
    assert_eq!(status, 400, "{body}");
    Ok(())
}

/// Posts an empty report until the server knows the token (a follower applies its creation a
/// little later); the last answer.
async fn until_known(agent: &RawClient, path: &str) -> anyhow::Result<(u16, Value)> {
    let mut last = (0, Value::Null);
    for _ in 0..100 {
        last = agent.post(path, &json!({})).await?;
        if last.0 != 401 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(last)
}

/// The events of deployment `id` about `node` whose action is `action`, as the API shows them.
fn node_events<'a>(view: &'a Value, node: &str, action: &str) -> Vec<&'a Value> {
    view["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter(|e| e["node"] == node && e["action"] == action)
                .collect()
        })
        .unwrap_or_default()
}

/// Polls `GET /v1/deployments/{id}` until `node` has an event `action` (10 s at most); the view.
async fn until_event(api: &RawClient, id: &str, node: &str, action: &str) -> anyhow::Result<Value> {
    let path = format!("/v1/deployments/{id}");
    for _ in 0..200 {
        let view = get_ok(api, &path).await?;
        if !node_events(&view, node, action).is_empty() {
            return Ok(view);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("{node} {action} in {id}: not within 10 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_reported_by_an_agent_token_is_recorded_with_its_name() -> anyhow::Result<()> {
    let cluster =
        Cluster::start_with(convoy_tests::ClusterOptions::for_tests(3).with_auth()).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    publish(&api, "app", json!({"label": "1"})).await?;
    publish(&api, "app", json!({"label": "2"})).await?;
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "web", "nodes": ["web-1", "web-2"]}),
    )
    .await?;
    put_ok(&api, "/v1/consumers/web/subscriptions/app", json!({})).await?;
    let (status, created) = api
        .post(
            "/v1/tokens",
            &json!({"name": "web-agent", "role": "agent", "nodes": "web-*", "consumers": ["web"]}),
        )
        .await?;
    assert_eq!(status, 201, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_string();
    // Both nodes run version 1 (a node never heard from would be skipped at the start).
    let on_leader = client_with_token(&cluster.server(leader).http_addr, Some(&secret))?;
    until_known(&on_leader, "/v1/nodes/web-1/report").await?;
    let v1 = held(1, None);
    let running = |v: &Value| json!({"app": {"current": 1, "versions": v["versions"]}});
    let (status, body) = on_leader
        .post(
            "/v1/nodes/reports",
            &json!({"reports": [
                {"node": "web-1", "resources": running(&v1)},
                {"node": "web-2", "resources": running(&v1)},
            ]}),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    until("both nodes run version 1", || {
        let api = &api;
        async move {
            let mut on_v1 = 0;
            for node in ["web-1", "web-2"] {
                let view = get_ok(api, &format!("/v1/nodes/{node}")).await?;
                on_v1 += usize::from(view["resources"]["app"]["current"] == 1);
            }
            Ok(on_v1 == 2)
        }
    })
    .await?;
    // One node at a time: web-1 installs first, web-2 waits for it.
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2}),
    )
    .await?;
    let id = started["id"].as_str().unwrap_or_default().to_string();
    let done =
        json!({"app": {"current": 2, "versions": {"2": {"downloaded": true, "done": true}}}});

    // web-1's "done", through a follower (which forwards it to the leader with the token).
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .expect("a follower");
    let agent = client_with_token(&cluster.server(follower).http_addr, Some(&secret))?;
    until_known(&agent, "/v1/nodes/web-1/report").await?;
    let (status, body) = agent
        .post("/v1/nodes/web-1/report", &json!({"resources": done}))
        .await?;
    assert_eq!(status, 200, "{body}");
    let view = until_event(&api, &id, "web-1", "succeeded").await?;
    let succeeded = node_events(&view, "web-1", "succeeded");
    assert_eq!(succeeded[0]["by"], "web-agent", "{view}");
    let installs = node_events(&view, "web-2", "install");
    assert_eq!(
        installs.first().map(|e| &e["by"]),
        Some(&json!("web-agent")),
        "web-1's report let web-2 in: {view}"
    );
    assert_eq!(
        node_events(&view, "web-1", "install")[0]["by"],
        "system",
        "the start admitted web-1: {view}"
    );

    // web-2's "done", batched, on the leader.
    let (status, body) = on_leader
        .post(
            "/v1/nodes/reports",
            &json!({"reports": [{"node": "web-2", "resources": done}]}),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("rejected").is_none(), "{body}");
    let view = until_event(&api, &id, "web-2", "succeeded").await?;
    assert_eq!(
        node_events(&view, "web-2", "succeeded")[0]["by"],
        "web-agent",
        "{view}"
    );
    Ok(())
}
