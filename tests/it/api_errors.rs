//! Every refusal of a real server is in the API's error shape `{"error": {"code", "message"}}`: an unknown
//! route (404), a served path with another method (405, with `Allow`), a body over the limit (413, JSON and
//! bodyless actions alike) and a state change that is not JSON (415).

use std::time::Duration;

use convoy_node::client::ApiClient;
use convoy_tests::Cluster;
use reqwest::Method;
use serde_json::Value;

fn shape(status: u16, body: &Value, want_status: u16, code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty() && message.len() < 400, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_json_for_404_405_413_and_415() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let addr = &cluster.server(1).http_addr;
    let client = ApiClient::new(addr)?;
    let json = |b: &str| Some(("application/json", b.as_bytes().to_vec()));

    let (status, body) = client.exchange(Method::GET, "/v1/nope", None).await?;
    shape(status, &body, 404, "not_found");
    let (status, body) = client
        .exchange(Method::GET, "/v2/deployments", None)
        .await?;
    shape(status, &body, 404, "not_found");

    let (status, body) = client
        .exchange(Method::DELETE, "/v1/resources", None)
        .await?;
    shape(status, &body, 405, "method_not_allowed");
    let raw = reqwest::Client::new()
        .put(format!("http://{addr}/v1/deployments/d-1"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await?;
    assert_eq!(raw.status().as_u16(), 405);
    assert_eq!(raw.headers()["allow"], "GET");
    // A path names one operation: `.../summary` and `.../watch` serve GET alone, never the steering
    // verbs' POST (a catch-all `{action}` route made `Allow` say `GET, POST`), and an unknown verb is 404.
    for (method, path) in [
        ("POST", "/v1/deployments/d-1/summary"),
        ("POST", "/v1/deployments/d-1/watch"),
        ("OPTIONS", "/v1/deployments/d-1/summary"),
    ] {
        let raw = reqwest::Client::new()
            .request(method.parse()?, format!("http://{addr}{path}"))
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await?;
        assert_eq!(raw.status().as_u16(), 405, "{method} {path}");
        assert_eq!(raw.headers()["allow"], "GET", "{method} {path}");
    }
    let (status, body) = client
        .exchange(Method::POST, "/v1/deployments/d-1/bogus", None)
        .await?;
    shape(status, &body, 404, "not_found");

    // Over the 4 MB JSON limit, and over the limit of a bodyless action's optional body.
    let big = format!("{{\"name\": \"{}\"}}", "a".repeat(5 * 1024 * 1024));
    let (status, body) = client
        .exchange(Method::POST, "/v1/resources", json(&big))
        .await?;
    shape(status, &body, 413, "payload_too_large");
    let (status, body) = client
        .exchange(Method::POST, "/v1/deployments/d-1/pause", json(&big))
        .await?;
    shape(status, &body, 413, "payload_too_large");

    let (status, body) = client
        .exchange(
            Method::POST,
            "/v1/resources",
            Some(("text/plain", b"{\"name\": \"x\"}".to_vec())),
        )
        .await?;
    shape(status, &body, 415, "unsupported_media_type");
    Ok(())
}
