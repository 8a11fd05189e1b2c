//! Bad requests sent to a follower of three real servers: malformed JSON, unknown fields and ids, a
//! second active deployment, forbidden transitions, zero windows, out-of-range canaries, over-long
//! messages, dependency cycles and malformed report batches are each answered with the API's error shape, the right status and
//! code, a message naming the offending value — and leave every read of the state unchanged.

use std::time::Duration;

use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, put_ok, resource_with_v1, wait_running,
};
use convoy_tests::{Cluster, RawClient};
use serde_json::{json, Value};

/// Everything a client can read, linearizably.
async fn whole_state(api: &RawClient) -> anyhow::Result<Value> {
    let mut state = serde_json::Map::new();
    for path in [
        "/v1/resources",
        "/v1/consumers",
        "/v1/deployments",
        "/v1/groups",
        "/v1/windows",
        "/v1/deployments/d-1",
        "/v1/deployments/d-2",
        "/v1/nodes/web-0",
    ] {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut body = get_ok(api, &format!("{path}{sep}consistent=true")).await?;
        // How long ago a node reported is the leader's clock, not replicated state.
        if let Some(node) = body.as_object_mut() {
            node.remove("last_report_ms");
        }
        state.insert(path.to_string(), body);
    }
    Ok(Value::Object(state))
}

/// What a bad request is expected to get back.
struct Refusal {
    method: &'static str,
    path: &'static str,
    body: Option<Value>,
    raw: Option<&'static str>,
    status: u16,
    code: &'static str,
    /// A word the message must contain (the thing or the value it names).
    names: &'static str,
}

fn refusal(method: &'static str, path: &'static str, body: Value) -> Refusal {
    Refusal {
        method,
        path,
        body: Some(body),
        raw: None,
        status: 400,
        code: "bad_request",
        names: "",
    }
}

impl Refusal {
    fn expect(mut self, status: u16, code: &'static str, names: &'static str) -> Self {
        self.status = status;
        self.code = code;
        self.names = names;
        self
    }
}

async fn send(api: &RawClient, r: &Refusal) -> anyhow::Result<(u16, Value)> {
    Ok(match (r.method, r.raw, &r.body) {
        ("POST", Some(raw), _) => api.post_raw(r.path, raw).await?,
        ("POST", None, Some(body)) => api.post(r.path, body).await?,
        ("PUT", None, Some(body)) => api.put(r.path, body).await?,
        ("GET", _, _) => api.get(r.path).await?,
        ("DELETE", _, _) => api.delete(r.path).await?,
        _ => anyhow::bail!("unsupported request {} {}", r.method, r.path),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_the_error_shape_and_change_nothing() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.client_except(leader);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    consumer(&api, "web", 3).await?;
    consumer(&api, "spare", 1).await?;
    put_ok(
        &api,
        "/v1/consumers/web/subscriptions/app",
        json!({"mode": "strong", "pin": 1}),
    )
    .await?;
    // The fleet reports in one batch, through the follower (which forwards it whole).
    let nodes = ["web-0", "web-1", "web-2", "spare-0"];
    let reports: Vec<Value> = nodes
        .iter()
        .map(|node| {
            json!({"node": node, "active": true, "resources": {"app": {"current": 1, "versions":
                {"1": {"downloaded": true, "installed": true, "done": true}}}}})
        })
        .collect();
    let answer = post_ok(&api, "/v1/nodes/reports", json!({ "reports": reports })).await?;
    for node in nodes {
        assert!(answer["targets"][node].is_object(), "{node}: {answer}");
    }
    assert!(answer.get("rejected").is_none(), "{answer}");
    let nodes: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
    wait_running(&api, &nodes, "app", 1, Duration::from_secs(20)).await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2,
               "strategy": {"rolling": {"install_window": 1, "download_window": 1}}}),
    )
    .await?;
    assert_eq!(started["id"], "d-1");
    let ended = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "spare", "resource": "app", "version": 2}),
    )
    .await?;
    assert_eq!(ended["id"], "d-2");
    post_ok(&api, "/v1/deployments/d-2/abort", json!({})).await?;
    let long = "x".repeat(1025);
    let mut cases = vec![
        Refusal {
            raw: Some("{\"name\": "),
            body: None,
            ..refusal("POST", "/v1/resources", Value::Null)
        }
        .expect(400, "bad_request", ""),
        refusal(
            "POST",
            "/v1/resources",
            json!({"name": "db", "colour": "red"}),
        )
        .expect(400, "bad_request", "colour"),
        refusal("POST", "/v1/resources", json!({"name": "app"})).expect(409, "conflict", "app"),
        refusal(
            "POST",
            "/v1/nodes/reports",
            json!({"reports": [{"node": "web-0", "active": false}, {"node": "web-0"}]}),
        )
        .expect(400, "bad_request", "web-0"),
        refusal(
            "POST",
            "/v1/nodes/reports",
            json!({"reports": [{"node": "web-1", "active": false}, {"node": ""}]}),
        )
        .expect(400, "bad_request", "reports[1]"),
        refusal(
            "POST",
            "/v1/nodes/reports",
            json!({"reports": [{"node": "web-1", "active": false, "colour": "red"}]}),
        )
        .expect(400, "bad_request", "colour"),
        refusal("POST", "/v1/resources/nope/versions", json!({})).expect(404, "not_found", "nope"),
        refusal(
            "POST",
            "/v1/deployments",
            json!({"consumer": "ghost", "resource": "app", "version": 2}),
        )
        .expect(404, "not_found", "ghost"),
        refusal(
            "POST",
            "/v1/deployments",
            json!({"consumer": "spare", "resource": "app", "version": 9}),
        )
        .expect(404, "not_found", "9"),
        refusal(
            "POST",
            "/v1/deployments",
            json!({"consumer": "web", "resource": "app", "version": 2}),
        )
        .expect(409, "conflict", "d-1"),
        refusal(
            "POST",
            "/v1/deployments",
            json!({"consumer": "spare", "resource": "app", "version": 2,
                   "strategy": {"rolling": {"install_window": 0, "download_window": 1}}}),
        )
        .expect(400, "bad_request", "install_window"),
        refusal(
            "POST",
            "/v1/deployments",
            json!({"consumer": "spare", "resource": "app", "version": 2, "nodes": "0-7"}),
        )
        .expect(400, "bad_request", "7"),
        refusal(
            "POST",
            "/v1/deployments/d-1/pause",
            json!({"message": long}),
        )
        .expect(400, "bad_request", "1024"),
        refusal("POST", "/v1/deployments/d-9/pause", json!({})).expect(404, "not_found", "d-9"),
        refusal("POST", "/v1/deployments/d-2/resume", json!({})).expect(409, "conflict", "d-2"),
        refusal("POST", "/v1/deployments/d-2/rollback", json!({})).expect(409, "conflict", "d-2"),
        refusal(
            "PUT",
            "/v1/consumers/web/subscriptions/app",
            json!({"mode": "eventual"}),
        )
        .expect(400, "bad_request", "eventual"),
        refusal(
            "POST",
            "/v1/groups",
            json!({"name": "g", "members": [{"consumer": "web", "resource": "nope"}]}),
        )
        .expect(404, "not_found", "nope"),
        refusal("POST", "/v1/group-deployments", json!({"group": "none"})).expect(
            404,
            "not_found",
            "none",
        ),
    ];
    // Issue 37: a window whose schedule never opens within 5 years, or opens more than 6 times a minute.
    cases.push(
        refusal(
            "POST",
            "/v1/windows",
            json!({"name": "feb30", "kind": "deny", "schedule": "0 0 30 2 *", "duration": "1h"}),
        )
        .expect(400, "bad_request", "0 0 30 2 *"),
    );
    cases.push(
        refusal(
            "POST",
            "/v1/windows",
            json!({"name": "often", "kind": "deny", "schedule": "* * * * * *", "duration": "1s"}),
        )
        .expect(400, "bad_request", "* * * * * *"),
    );
    cases.push(
        Refusal {
            method: "GET",
            body: None,
            ..refusal("GET", "/v1/consumers/nobody", Value::Null)
        }
        .expect(404, "not_found", "nobody"),
    );

    let before = whole_state(&api).await?;
    for case in &cases {
        let (status, body) = send(&api, case).await?;
        let what = format!("{} {} → {status} {body}", case.method, case.path);
        assert_eq!(status, case.status, "{what}");
        assert_eq!(body["error"]["code"], case.code, "{what}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "{what}");
        assert!(
            message.contains(case.names),
            "message does not name {:?}: {what}",
            case.names
        );
    }
    // Nothing changed, on the follower or on the leader.
    let leader_api = cluster.server(leader).client();
    assert_eq!(before, whole_state(&api).await?);
    assert_eq!(before, whole_state(&leader_api).await?);
    Ok(())
}
