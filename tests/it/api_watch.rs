//! The dashboard's server side on a real 3-server cluster with tokens: `GET /v1/whoami` tells each token
//! what it may do, `GET /v1/watch` streams the applied index (through a follower too) as writes land, and
//! CORS is granted to the members' own origins only.

use std::time::Duration;

use anyhow::Context;
use convoy_tests::{eventually, Cluster, ClusterOptions};
use serde_json::{json, Value};

const ADMIN: &str = "cvy_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

async fn get(addr: &str, path: &str, token: &str) -> anyhow::Result<(u16, Value)> {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}{path}"))
        .bearer_auth(token)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

async fn post(addr: &str, path: &str, token: &str, body: &Value) -> anyhow::Result<(u16, Value)> {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}{path}"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

/// The `applied` index of every event in `text` (complete events only).
fn applied_indexes(text: &str) -> Vec<u64> {
    text.split("\n\n")
        .filter_map(|event| {
            let data = event.lines().find_map(|l| l.strip_prefix("data: "))?;
            serde_json::from_str::<Value>(data).ok()?["applied"].as_u64()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoami_watch_and_cors_serve_the_dashboard() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions {
        bootstrap_token: Some(ADMIN.into()),
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let leader_addr = cluster.server(leader).http_addr.clone();
    let follower = (1..=3).find(|id| *id != leader).unwrap();
    let follower_addr = cluster.server(follower).http_addr.clone();
    eventually(Duration::from_secs(20), || async {
        let (status, _) = get(&follower_addr, "/v1/whoami", ADMIN).await.ok()?;
        (status == 200).then_some(())
    })
    .await
    .context("the bootstrap token reaching a follower")?;

    // whoami: the admin may do everything, a reader sees no write among its routes.
    let (status, me) = get(&follower_addr, "/v1/whoami", ADMIN).await?;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (me["name"].as_str(), me["role"].as_str()),
        (Some("bootstrap"), Some("admin"))
    );
    let (status, made) = post(
        &leader_addr,
        "/v1/tokens",
        ADMIN,
        &json!({"name": "viewer", "role": "reader"}),
    )
    .await?;
    assert_eq!(status, 201, "{made}");
    let reader = made["secret"].as_str().context("secret")?.to_string();
    let who = eventually(Duration::from_secs(10), || async {
        let (status, who) = get(&follower_addr, "/v1/whoami", &reader).await.ok()?;
        (status == 200).then_some(who)
    })
    .await?;
    assert_eq!(who["role"], "reader", "{who}");
    let allowed = who["allowed"].as_array().context("allowed")?;
    assert!(allowed.iter().all(|a| a["method"] == "GET"), "{who}");
    assert!(allowed.iter().any(|a| a["pattern"] == "/v1/watch"), "{who}");

    // watch through a follower with the reader token: one event at once, then one after a write.
    let response = reqwest::Client::new()
        .get(format!("http://{follower_addr}/v1/watch"))
        .bearer_auth(&reader)
        .send()
        .await?;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response;
    let mut text = String::new();
    let first = tokio::time::timeout(Duration::from_secs(10), async {
        while applied_indexes(&text).is_empty() {
            let chunk = body.chunk().await?.context("stream ended")?;
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        anyhow::Ok(applied_indexes(&text)[0])
    })
    .await
    .context("no first event")??;
    assert!(text.starts_with("event: applied\nid: "), "{text}");
    let (status, created) = post(
        &leader_addr,
        "/v1/resources",
        ADMIN,
        &json!({"name": "app"}),
    )
    .await?;
    assert_eq!(status, 201, "{created}");
    let later = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(i) = applied_indexes(&text).into_iter().find(|i| *i > first) {
                return anyhow::Ok(i);
            }
            let chunk = body.chunk().await?.context("stream ended")?;
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await
    .context("no event after a write")??;
    assert!(later > first);
    drop(body);

    // Without a token the feed is refused like every other data route.
    let response = reqwest::get(format!("http://{follower_addr}/v1/watch")).await?;
    assert_eq!(response.status(), 401);

    // CORS: a member's origin is allowed (preflight and answer), any other is not.
    let http = reqwest::Client::new();
    let member_origin = format!("http://{leader_addr}");
    let preflight = http
        .request(
            reqwest::Method::OPTIONS,
            format!("http://{follower_addr}/v1/deployments/d-1/pause"),
        )
        .header("origin", &member_origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await?;
    assert_eq!(preflight.status(), 204);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        member_origin.as_str()
    );
    assert!(preflight
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
    let answer = http
        .get(format!("http://{follower_addr}/v1/cluster"))
        .bearer_auth(&reader)
        .header("origin", &member_origin)
        .send()
        .await?;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.headers()["access-control-allow-origin"],
        member_origin.as_str()
    );
    for foreign in ["http://127.0.0.1:1", "http://evil.example", "null"] {
        let preflight = http
            .request(
                reqwest::Method::OPTIONS,
                format!("http://{follower_addr}/v1/cluster"),
            )
            .header("origin", foreign)
            .header("access-control-request-method", "GET")
            .send()
            .await?;
        assert_eq!(preflight.status(), 403, "{foreign}");
        assert!(preflight
            .headers()
            .get("access-control-allow-origin")
            .is_none());
        let answer = http
            .get(format!("http://{follower_addr}/v1/cluster"))
            .bearer_auth(&reader)
            .header("origin", foreign)
            .send()
            .await?;
        assert!(
            answer
                .headers()
                .get("access-control-allow-origin")
                .is_none(),
            "{foreign}"
        );
    }

    // The dashboard's files are public; / leads to them.
    let page = reqwest::get(format!("http://{follower_addr}/")).await?;
    assert_eq!(page.status(), 200);
    assert!(page.url().path().ends_with("/ui/"));
    Ok(())
}
