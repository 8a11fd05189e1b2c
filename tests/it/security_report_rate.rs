//! A report flood from one agent token must not hurt other writes (issue 28, the benchmark's rule),
//! through the real binary: one agent token posting ~60 KB reports as fast as it can runs into its
//! per-token report budget on the server it talks to (429 `rate_limited` naming the token and the limit,
//! with `Retry-After`, counted in `convoy_reports_rate_limited_total`), while another agent token's
//! reports and an operator's writes on the same server still succeed.

use std::time::Duration;

use convoy_tests::scenario::{client_with_token, get_ok, post_ok, publish, subscribed_consumers};
use convoy_tests::{Cluster, ClusterOptions, RawClient};
use serde_json::{json, Value};

/// Reports this big (padded with JSON whitespace: a heartbeat for the log, 60 KB on the wire).
const PADDED_BYTES: usize = 60 * 1024;
/// The most reports the flood sends before giving up on a 429 (about 24 MB: six times the default
/// burst of 4 MiB plus what 1 MiB/s refills meanwhile).
const FLOOD_REPORTS: usize = 400;
/// Flooding clients at once.
const FLOOD_CLIENTS: usize = 8;

/// An empty report for `node`'s consumer, padded to [`PADDED_BYTES`] with spaces.
fn padded_report() -> String {
    format!("{{\"resources\": {{}}{}}}", " ".repeat(PADDED_BYTES))
}

/// One metric's value on the server at `addr`, read with `token` (0 when it is absent).
async fn metric(addr: &str, token: Option<&str>, name: &str) -> anyhow::Result<f64> {
    let text = reqwest::Client::new()
        .get(format!("http://{addr}/metrics"))
        .bearer_auth(token.unwrap_or_default())
        .send()
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

/// Creates an agent token `name` for nodes `glob`; its secret.
async fn agent_token(api: &RawClient, name: &str, glob: &str) -> anyhow::Result<String> {
    let (status, created) = api
        .post(
            "/v1/tokens",
            &json!({"name": name, "role": "agent", "nodes": glob}),
        )
        .await?;
    anyhow::ensure!(status == 201, "token {name}: {status} {created}");
    Ok(created["secret"].as_str().unwrap_or_default().to_string())
}

/// A 429 as the flood saw it: its body and its `Retry-After`.
struct Refusal {
    body: Value,
    retry_after: Option<u64>,
}

/// Posts [`padded_report`]s for `node` with `secret` to `addr` from [`FLOOD_CLIENTS`] clients until
/// one is refused with 429 or [`FLOOD_REPORTS`] were sent; the first 429 and how many were taken.
async fn flood(addr: &str, secret: &str, node: &str) -> anyhow::Result<(Option<Refusal>, usize)> {
    let http = reqwest::Client::new();
    let url = format!("http://{addr}/v1/nodes/{node}/report");
    let body = padded_report();
    let per_client = FLOOD_REPORTS / FLOOD_CLIENTS;
    let mut clients = Vec::new();
    for _ in 0..FLOOD_CLIENTS {
        let (http, url, body, secret) =
            (http.clone(), url.clone(), body.clone(), secret.to_string());
        clients.push(tokio::spawn(async move {
            let mut taken = 0usize;
            for _ in 0..per_client {
                let answer = http
                    .post(&url)
                    .bearer_auth(&secret)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await?;
                let status = answer.status().as_u16();
                if status == 429 {
                    let retry_after = answer
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse().ok());
                    let body: Value = answer.json().await.unwrap_or_default();
                    return Ok::<_, anyhow::Error>((Some(Refusal { body, retry_after }), taken));
                }
                let text = answer.text().await.unwrap_or_default();
                anyhow::ensure!(status == 200, "a flood report: {status} {text}");
                taken += 1;
            }
            Ok((None, taken))
        }));
    }
    let mut first = None;
    let mut taken = 0;
    for client in clients {
        let (refusal, n) = client.await??;
        taken += n;
        if first.is_none() {
            first = refusal;
        }
    }
    Ok((first, taken))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_token_flooding_reports_is_limited_and_others_still_write() -> anyhow::Result<()>
{
    let cluster = Cluster::start_with(ClusterOptions::for_tests(3).with_auth()).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(leader).client();
    let addr = cluster.server(leader).http_addr.clone();
    post_ok(&api, "/v1/resources", json!({"name": "app"})).await?;
    publish(&api, "app", json!({"label": "1"})).await?;
    subscribed_consumers(&api, "app", &[("flood", "flood-1"), ("calm", "calm-1")]).await?;
    let flooder = agent_token(&api, "flooder", "flood-*").await?;
    let calm = agent_token(&api, "calm-agent", "calm-*").await?;
    let calm_api = client_with_token(&addr, Some(&calm))?;

    let (refusal, taken) = flood(&addr, &flooder, "flood-1").await?;
    let Some(refusal) = refusal else {
        anyhow::bail!(
            "{taken} reports of {PADDED_BYTES} bytes from one token were all taken: no report budget"
        );
    };
    assert!(taken > 0, "the budget's burst takes some reports first");
    assert_eq!(
        refusal.body["error"]["code"], "rate_limited",
        "{}",
        refusal.body
    );
    let message = refusal.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("flooder") && message.contains("bytes/s"),
        "names the token and the limit: {message}"
    );
    assert!(
        refusal.retry_after.is_some_and(|s| s >= 1),
        "Retry-After in whole seconds: {:?}",
        refusal.retry_after
    );
    // The flooder is still over budget: another token's report and an operator's write go through.
    let (status, body) = calm_api
        .post("/v1/nodes/calm-1/report", &json!({"resources": {}}))
        .await?;
    assert_eq!(status, 200, "another agent token's report: {body}");
    post_ok(&api, "/v1/resources", json!({"name": "after-the-flood"})).await?;
    get_ok(&api, "/v1/resources/after-the-flood").await?;
    assert!(
        metric(
            &addr,
            cluster.server(leader).token.as_deref(),
            "convoy_reports_rate_limited_total"
        )
        .await?
            >= 1.0,
        "the refusals are counted"
    );
    Ok(())
}
