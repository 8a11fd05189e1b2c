//! A token's life on a real cluster, attacks of issue 28 replayed through the binary: a revoked token's
//! streams close with the reason (item 4); one token cannot take every watch slot, and admins keep some
//! (item 5); a page rebinding its name to a loopback server without auth cannot create a token (item 6);
//! a token with a `ttl` expires on every server (item 9); a token is usable on every server at once after
//! its creation (item 10).

use std::time::Duration;

use anyhow::{bail, Context};
use convoy_node::client::ApiClient;
use convoy_node::sse::{SseEvent, SseReader};
use convoy_tests::scenario::{get_ok, post_ok, publish, resource_with_v1};
use convoy_tests::{eventually, Cluster, ClusterOptions, RawClient};
use serde_json::{json, Value};

const LONG: Duration = Duration::from_secs(60);

/// A ready three-server (or `n`-server) cluster with token auth.
async fn secure(n: u64, extra: &str) -> anyhow::Result<Cluster> {
    Cluster::start_with(ClusterOptions {
        extra: extra.to_string(),
        ..ClusterOptions::for_tests(n).with_auth()
    })
    .await
}

/// Creates a token through `api` (an admin's client); its secret.
async fn create(api: &RawClient, name: &str, role: &str, extra: Value) -> anyhow::Result<String> {
    let mut body = json!({"name": name, "role": role});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let created = post_ok(api, "/v1/tokens", body).await?;
    Ok(created["secret"]
        .as_str()
        .context("no secret in the answer")?
        .to_string())
}

/// `method path` on `addr` with `secret` (and a JSON body): status and body.
async fn call(
    addr: &str,
    secret: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<(u16, Value)> {
    let client = ApiClient::new(addr)?.with_token(Some(secret));
    let body = body.map(|b| ("application/json", serde_json::to_vec(&b).expect("JSON")));
    Ok(client.exchange(method.parse()?, path, body).await?)
}

/// Opens `path` as a stream on `addr` with `secret`: the reader, or the refusal's status and body.
async fn open(
    addr: &str,
    secret: &str,
    path: &str,
) -> anyhow::Result<Result<SseReader, (u16, Value)>> {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}{path}"))
        .bearer_auth(secret)
        .header("accept", "text/event-stream")
        .timeout(LONG)
        .send()
        .await?;
    let status = response.status().as_u16();
    if status == 200 {
        return Ok(Ok(SseReader::new(response)));
    }
    Ok(Err((status, response.json().await.unwrap_or(Value::Null))))
}

/// The next event of `reader`; an error when the stream ends or stays silent for [`LONG`].
async fn next(reader: &mut SseReader) -> anyhow::Result<SseEvent> {
    tokio::time::timeout(LONG, reader.next())
        .await??
        .context("the stream ended")
}

/// A deployment that stays running (its one node never reports the new version): its id.
async fn running_deployment(api: &RawClient) -> anyhow::Result<String> {
    resource_with_v1(api, "app").await?;
    publish(api, "app", json!({})).await?;
    post_ok(api, "/v1/consumers", json!({"name": "c", "nodes": ["a"]})).await?;
    eventually(LONG, || {
        let api = api.clone();
        async move {
            let report = json!({"reports": [{"node": "a", "resources": {"app": {"current": 1,
                "versions": {"1": {"downloaded": true, "installed": true, "done": true}}}}}]});
            post_ok(&api, "/v1/nodes/reports", report).await.ok()?;
            (get_ok(&api, "/v1/nodes/a").await.ok()?["active"] == true).then_some(())
        }
    })
    .await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "c", "resource": "app", "version": 2}),
    )
    .await?;
    Ok(started["id"].as_str().context("id")?.to_string())
}

/// Reads `reader` until its `closed` event; fails if the stream ends or goes on without one.
async fn closed_reason(reader: &mut SseReader) -> anyhow::Result<Value> {
    for _ in 0..100 {
        let event = next(reader).await?;
        if event.event == "closed" {
            let data: Value = serde_json::from_str(&event.data)?;
            assert!(
                tokio::time::timeout(LONG, reader.next()).await??.is_none(),
                "the stream goes on after its closed event"
            );
            return Ok(data);
        }
    }
    bail!("100 events and no closed event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_s_streams_close_with_the_reason() -> anyhow::Result<()> {
    let cluster = secure(3, "").await?;
    let admin = cluster.server(1).client();
    let id = running_deployment(&admin).await?;
    let secret = create(&admin, "watcher", "reader", json!({})).await?;
    let addrs = cluster.http_addrs();
    // Both kinds of stream, on every server, open with the reader's token.
    let mut readers = Vec::new();
    for addr in &addrs {
        for path in [
            "/v1/watch".to_string(),
            format!("/v1/deployments/{id}/watch"),
        ] {
            let reader = eventually(LONG, || {
                let (addr, secret, path) = (addr.clone(), secret.clone(), path.clone());
                async move { open(&addr, &secret, &path).await.ok()?.ok() }
            })
            .await
            .with_context(|| format!("opening {path} on {addr}"))?;
            readers.push((format!("{path} on {addr}"), reader));
        }
    }
    for (what, reader) in &mut readers {
        next(reader).await.with_context(|| what.clone())?;
    }
    let (status, body) = admin.delete("/v1/tokens/watcher").await?;
    assert_eq!(status, 200, "{body}");
    // The revocation is a change of the cluster: every stream says why it closes, then ends.
    for (what, reader) in &mut readers {
        let data = closed_reason(reader).await.with_context(|| what.clone())?;
        assert_eq!(data["reason"], "token_revoked", "{what}: {data}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_cannot_take_every_watch_slot() -> anyhow::Result<()> {
    let cluster = secure(1, "").await?;
    let admin = cluster.server(1).client();
    let addr = cluster.server(1).http_addr.clone();
    let id = running_deployment(&admin).await?;
    let reader = create(&admin, "greedy", "reader", json!({})).await?;
    for (path, total) in [
        (
            "/v1/watch".to_string(),
            convoy_node::api::watch::MAX_STREAMS,
        ),
        (
            format!("/v1/deployments/{id}/watch"),
            convoy_node::api::deployment_feed::MAX_WATCHERS,
        ),
    ] {
        let mut held = Vec::new();
        let mut refusal = None;
        while held.len() < total {
            match open(&addr, &reader, &path).await? {
                Ok(mut stream) => {
                    next(&mut stream).await?;
                    held.push(stream);
                }
                Err(refused) => {
                    refusal = Some(refused);
                    break;
                }
            }
        }
        let (status, body) = refusal
            .with_context(|| format!("one reader token opened all {total} streams of {path}"))?;
        assert_eq!(status, 503, "{path}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("greedy"),
            "{path}: the refusal names the token: {body}"
        );
        // The admin still gets a stream.
        let admin_secret = cluster_admin_secret(&cluster)?;
        let mut admin_stream = open(&addr, &admin_secret, &path)
            .await?
            .map_err(|e| anyhow::anyhow!("admin refused on {path}: {e:?}"))?;
        next(&mut admin_stream).await?;
    }
    Ok(())
}

/// The bootstrap admin secret the harness wrote.
fn cluster_admin_secret(cluster: &Cluster) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(cluster.dir().join("admin-token"))?
        .trim()
        .to_string())
}

/// `POST /v1/tokens` to `addr` without a token, claiming to be `host`.
async fn create_as_host(addr: &str, host: &str) -> anyhow::Result<(u16, Value)> {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/v1/tokens"))
        .header("host", host)
        .json(&json!({"name": "rebound", "role": "admin"}))
        .timeout(LONG)
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.unwrap_or(Value::Null)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_name_cannot_create_a_token_on_a_loopback_server_without_auth(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.server(1).http_addr.clone();
    // The page at http://evil.example:PORT/, its name now resolving to 127.0.0.1.
    let port = addr.rsplit(':').next().context("port")?;
    let (status, body) = create_as_host(&addr, &format!("evil.example:{port}")).await?;
    assert_eq!(status, 403, "a foreign Host creating a token: {body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("evil.example"),
        "{body}"
    );
    let (status, _) = RawClient::new(&addr).get("/v1/cluster").await?;
    assert_eq!(status, 200, "a loopback Host is served");
    // Not even a loopback caller makes a token while auth is off: it would outlive turning auth on.
    let (status, body) = create_as_host(&addr, &addr).await?;
    assert_eq!(status, 403, "a token created with auth off: {body}");
    let (status, body) = RawClient::new(&addr).get("/v1/tokens").await?;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!([]), "no token was made");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_the_host_must_be_a_configured_address() -> anyhow::Result<()> {
    let cluster = secure(1, "allowed_hosts = [\"convoy.internal\"]").await?;
    let addr = cluster.server(1).http_addr.clone();
    let admin = cluster_admin_secret(&cluster)?;
    let port = addr.rsplit(':').next().context("port")?.to_string();
    let get = |host: String| {
        let (addr, admin) = (addr.clone(), admin.clone());
        async move {
            let response = reqwest::Client::new()
                .get(format!("http://{addr}/v1/cluster"))
                .header("host", host)
                .bearer_auth(admin)
                .timeout(LONG)
                .send()
                .await?;
            anyhow::Ok(response.status().as_u16())
        }
    };
    assert_eq!(get(format!("evil.example:{port}")).await?, 403);
    assert_eq!(get(format!("convoy.internal:{port}")).await?, 200);
    assert_eq!(get(addr.clone()).await?, 200);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_with_a_ttl_expires_on_every_server() -> anyhow::Result<()> {
    let cluster = secure(3, "").await?;
    let admin = cluster.server(1).client();
    let (status, body) = admin
        .post(
            "/v1/tokens",
            &json!({"name": "brief", "role": "reader", "ttl": "3s"}),
        )
        .await?;
    assert_eq!(status, 201, "{body}");
    let secret = body["secret"].as_str().context("secret")?.to_string();
    let expires = body["expires_at"].as_u64().context("expires_at")?;
    assert_eq!(
        expires,
        body["created_at"].as_u64().context("created_at")? + 3_000
    );
    let (_, list) = admin.get("/v1/tokens").await?;
    let listed = list
        .as_array()
        .and_then(|l| l.iter().find(|t| t["name"] == "brief"))
        .cloned()
        .context("brief listed")?;
    assert_eq!(listed["expires_at"], expires, "{listed}");
    for addr in cluster.http_addrs() {
        eventually(LONG, || {
            let (addr, secret) = (addr.clone(), secret.clone());
            async move {
                let (status, body) = call(&addr, &secret, "GET", "/v1/whoami", None).await.ok()?;
                (status == 401 && body["error"]["code"] == "token_expired").then_some(())
            }
        })
        .await
        .with_context(|| format!("the token expiring on {addr}"))?;
    }
    // A TTL out of bounds is refused, naming the value.
    let (status, body) = admin
        .post(
            "/v1/tokens",
            &json!({"name": "never", "role": "reader", "ttl": "0s"}),
        )
        .await?;
    assert_eq!(status, 400, "{body}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_token_works_at_once_on_every_server() -> anyhow::Result<()> {
    let cluster = secure(3, "").await?;
    let addrs = cluster.http_addrs();
    let admin = cluster_admin_secret(&cluster)?;
    for round in 0..30 {
        let via = &addrs[round % addrs.len()];
        let name = format!("fresh-{round}");
        let (status, body) = call(
            via,
            &admin,
            "POST",
            "/v1/tokens",
            Some(json!({"name": name, "role": "operator"})),
        )
        .await?;
        assert_eq!(status, 201, "{body}");
        let secret = body["secret"].as_str().context("secret")?.to_string();
        // At once on every server: one task per server, started together.
        let uses: Vec<_> = addrs
            .iter()
            .map(|addr| {
                let (addr, secret) = (addr.clone(), secret.clone());
                let resource = format!("r-{round}-{}", addr.replace([':', '.'], "-"));
                tokio::spawn(async move {
                    let made = call(
                        &addr,
                        &secret,
                        "POST",
                        "/v1/resources",
                        Some(json!({ "name": resource })),
                    )
                    .await;
                    (addr, made)
                })
            })
            .collect();
        for used in uses {
            let (addr, made) = used.await?;
            let (status, body) = made?;
            assert_eq!(
                status, 201,
                "round {round}: token {name} used on {addr} right after its creation via {via}: {body}"
            );
        }
    }
    Ok(())
}
