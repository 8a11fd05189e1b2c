//! docs/API.md is checked against the server: every route it lists is served (an unknown route
//! would get actix's bare 404; a served one answers with data or the API's JSON error shape).

use std::time::Duration;

use convoy_tests::Cluster;
use serde_json::json;

/// `(method, path)` pairs named in docs/API.md, with `{param}` filled by a placeholder.
fn documented_routes() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md"))
        .expect("docs/API.md");
    let mut routes = Vec::new();
    for piece in doc.split('`') {
        let mut words = piece.split_whitespace();
        let (Some(method), Some(path), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method) || !path.starts_with('/') {
            continue;
        }
        let path = path
            .split('?')
            .next()
            .unwrap()
            .replace("{id}", "zz-9")
            .replace("{name}", "zz");
        let path = path.replace("{resource}", "zz").replace("{version}", "9");
        routes.push((method.to_string(), path));
    }
    routes
}

/// `PATCH path` with an empty JSON object (the shared client has no PATCH).
async fn patch(addr: &str, path: &str) -> anyhow::Result<(u16, serde_json::Value)> {
    let response = reqwest::Client::new()
        .patch(format!("http://{addr}{path}"))
        .json(&json!({}))
        .send()
        .await?;
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(serde_json::Value::Null);
    Ok((status, body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_route_is_served() -> anyhow::Result<()> {
    let routes = documented_routes();
    assert!(
        routes.len() >= 25,
        "too few routes parsed from docs/API.md: {routes:?}"
    );
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(1).client();
    for (method, path) in routes {
        let (status, body) = match method.as_str() {
            // A stream (server-sent events) never ends: its head says it is served.
            "GET" if path.ends_with("/watch") => {
                let url = format!("http://{}{path}", cluster.server(1).http_addr);
                let response = reqwest::get(url).await?;
                let status = response.status().as_u16();
                // An unknown id is refused in the error shape before any stream starts.
                let body = match status {
                    200 => serde_json::Value::Null,
                    _ => response.json().await.unwrap_or(serde_json::Value::Null),
                };
                (status, body)
            }
            "GET" => client.get(&path).await?,
            "POST" => client.post(&path, &json!({})).await?,
            "PUT" => client.put(&path, &json!({})).await?,
            "PATCH" => patch(&cluster.server(1).http_addr, &path).await?,
            _ => client.delete(&path).await?,
        };
        let served = status != 404 || body["error"]["code"].is_string();
        assert!(
            served,
            "{method} {path} is documented but not served: {status} {body}"
        );
        assert!(status < 500, "{method} {path} failed: {status} {body}");
    }
    Ok(())
}
