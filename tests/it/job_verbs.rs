//! Verbs by job key (issue 22, item 9) on a real 3-server cluster with tokens: a monitoring service that
//! knows the consumer and the resource, not `d-17`, pauses, resumes, aborts, rolls back and pulses the
//! pair's active deployment through `POST /v1/consumers/{consumer}/resources/{resource}/{verb}`, through a
//! follower as through the leader; with no active deployment the verbs answer 404 naming the pair and a
//! pulse answers STOP; a name beyond the creation rules is 400 without echoing it whole; the routes refuse
//! a request without a token and a reader's; `convoy deploy pause web/app` does through the CLI what
//! `convoy deploy pause d-17` does, and `deploy info|why|watch web/app` show the pair's latest deployment.

use std::process::{Command, Output};

use convoy_node::client::ApiClient;
use convoy_node::local::new_admin_token;
use convoy_tests::scenario::{consumer, post_ok, publish, report_running, resource_with_v1};
use convoy_tests::{convoy_bin, Cluster, ClusterOptions, RawClient};
use serde_json::{json, Value};

const PAIR: &str = "/v1/consumers/web/resources/app";

/// A deployment of `app` v2 on `web` that waits for pulses (no agent installs it, so it stays active).
/// Forced: once the test has rolled one back, v2 is held back on `web` (DEPLOYMENTS.md §10).
async fn start(api: &RawClient) -> anyhow::Result<String> {
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2, "pulse_interval_ms": 60_000, "force": true}),
    )
    .await?;
    assert_eq!(
        started["status"], "ROLL_FORWARD_AWAITING_PULSE",
        "{started}"
    );
    Ok(started["id"].as_str().expect("id").to_string())
}

/// `POST {PAIR}/{verb}` with `{}`: status and body.
async fn verb(api: &RawClient, verb: &str) -> anyhow::Result<(u16, Value)> {
    Ok(api.post(&format!("{PAIR}/{verb}"), &json!({})).await?)
}

/// `POST path` with `token` (or none): status and body.
async fn as_token(addr: &str, path: &str, token: Option<&str>) -> anyhow::Result<(u16, Value)> {
    let client = ApiClient::new(addr)?.with_token(token);
    let body = Some(("application/json", b"{}".to_vec()));
    Ok(client.exchange("POST".parse()?, path, body).await?)
}

/// Runs `convoy ARGS --server addr` with `token` (nothing from this environment's CONVOY_* leaks in).
fn convoy(addr: &str, token: &str, args: &[&str]) -> Output {
    Command::new(convoy_bin())
        .args(args)
        .args(["--server", addr])
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN_FILE")
        .env("CONVOY_TOKEN", token)
        .output()
        .expect("run convoy")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbs_by_consumer_and_resource_act_on_the_active_deployment() -> anyhow::Result<()> {
    let admin = new_admin_token();
    let cluster = Cluster::start_with(ClusterOptions {
        bootstrap_token: Some(admin.clone()),
        // The nodes report once: they must not be marked inactive (and skipped) mid-test.
        node_timeout_ms: Some(600_000),
        ..ClusterOptions::for_tests(3)
    })
    .await?;
    let leader_id = cluster
        .wait_leader(std::time::Duration::from_secs(30))
        .await?;
    let leader = cluster.server(leader_id).client();
    let follower = cluster.client_except(leader_id);
    resource_with_v1(&follower, "app").await?;
    publish(&follower, "app", json!({"label": "v2"})).await?;
    let nodes = consumer(&follower, "web", 3).await?;
    report_running(&follower, &nodes, "app", 1).await?;

    // Each verb by pair, through a follower (forwarded to the leader) and through the leader.
    let first = start(&follower).await?;
    let (status, pulsed) = verb(&follower, "pulse").await?;
    assert_eq!(status, 200, "{pulsed}");
    assert_eq!(pulsed["status"], "OK", "{pulsed}");
    assert_eq!(pulsed["state"], "ROLLING_FORWARD", "{pulsed}");
    let (status, paused) = follower
        .post(&format!("{PAIR}/pause"), &json!({"message": "alert 42"}))
        .await?;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["id"], first.as_str(), "{paused}");
    assert_eq!(paused["status"], "ROLL_FORWARD_PAUSED", "{paused}");
    assert!(
        paused["events"]
            .as_array()
            .expect("events")
            .iter()
            .any(|e| e["message"] == "alert 42"),
        "the message is recorded: {paused}"
    );
    let (status, resumed) = verb(&leader, "resume").await?;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["id"], first.as_str(), "{resumed}");
    assert_ne!(resumed["status"], "ROLL_FORWARD_PAUSED", "{resumed}");
    let (status, aborted) = verb(&follower, "abort").await?;
    assert_eq!(status, 200, "{aborted}");
    assert_eq!(aborted["id"], first.as_str(), "{aborted}");
    assert_eq!(aborted["status"], "ABORTED", "{aborted}");

    // No active deployment: 404 naming the pair for the verbs; STOP for a pulse, as for an unknown id.
    for action in ["pause", "resume", "abort", "rollback"] {
        for api in [&leader, &follower] {
            let (status, body) = verb(api, action).await?;
            assert_eq!(status, 404, "{action}: {body}");
            assert_eq!(body["error"]["code"], "not_found", "{action}: {body}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("\"web\"") && message.contains("\"app\""),
                "{action}: the 404 names the pair: {message}"
            );
        }
    }
    let (status, stop) = verb(&follower, "pulse").await?;
    assert_eq!(status, 200, "{stop}");
    assert_eq!(stop["status"], "STOP", "{stop}");
    assert!(stop["state"].is_null(), "{stop}");

    // A rollback by pair acts on the new active deployment, not the old one.
    let second = start(&leader).await?;
    assert_ne!(second, first);
    let (status, rolled) = verb(&follower, "rollback").await?;
    assert_eq!(status, 200, "{rolled}");
    assert_eq!(rolled["id"], second.as_str(), "{rolled}");
    let state = rolled["status"].as_str().unwrap_or_default();
    assert!(state.contains("BACK"), "{rolled}");

    // Names beyond the creation rules are 400, and the error does not echo a huge value.
    let huge = "x".repeat(5_000);
    for path in [
        format!("/v1/consumers/{huge}/resources/app/pause"),
        format!("/v1/consumers/web/resources/{huge}/pulse"),
        "/v1/consumers/web/resources/a%20b/abort".to_string(),
    ] {
        let (status, body) = follower.post(&path, &json!({})).await?;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"]["code"], "bad_request", "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.len() < 400, "the error echoes the value: {message}");
    }
    let (status, body) = verb(&follower, "reboot").await?;
    assert_eq!(status, 404, "an unknown verb: {body}");

    // Without a token: 401; a reader's: 403; the pulser may pulse and nothing else.
    let addr = cluster.server(leader_id).http_addr.clone();
    let reader = post_ok(
        &leader,
        "/v1/tokens",
        json!({"name": "watcher", "role": "reader"}),
    )
    .await?["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let pulser = post_ok(
        &leader,
        "/v1/tokens",
        json!({"name": "monitor", "role": "pulser"}),
    )
    .await?["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    for action in ["pause", "resume", "abort", "rollback", "pulse"] {
        let path = format!("{PAIR}/{action}");
        let (status, body) = as_token(&addr, &path, None).await?;
        assert_eq!(status, 401, "{action} without a token: {body}");
        assert_eq!(body["error"]["code"], "unauthenticated", "{body}");
        let (status, body) = as_token(&addr, &path, Some(&reader)).await?;
        assert_eq!(status, 403, "{action} as a reader: {body}");
        assert_eq!(body["error"]["code"], "forbidden", "{body}");
        let (status, body) = as_token(&addr, &path, Some(&pulser)).await?;
        let want = if action == "pulse" { 200 } else { 403 };
        assert_eq!(status, want, "{action} as a pulser: {body}");
    }

    // The CLI: `deploy <verb> web/app` beside `deploy <verb> d-N`, through a follower.
    let third = start(&leader).await?;
    let url = follower_url(&cluster, leader_id);
    let out = convoy(&url, &admin, &["deploy", "pulse", "web/app"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("OK ROLLING_FORWARD"), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "pause", "web/app", "-m", "cli"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&third), "{}", text(&out));
    assert!(text(&out).contains("PAUSED"), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "resume", "web/app"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "abort", "web/app"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("ABORTED"), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "pause", "web/app"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("no active deployment"),
        "{}",
        text(&out)
    );
    let out = convoy(&url, &admin, &["deploy", "pulse", "web/app"]);
    assert_eq!(out.status.code(), Some(1), "STOP exits 1: {}", text(&out));
    let fourth = start(&leader).await?;
    let out = convoy(&url, &admin, &["deploy", "rollback", "web/app"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&fourth), "{}", text(&out));

    // info, why and watch take the pair too: its latest deployment, ended or not.
    let out = convoy(&url, &admin, &["deploy", "info", "web/app"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!("{fourth} ")), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "why", "web/app", "web-0"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("web-0 in {fourth}")),
        "{}",
        text(&out)
    );
    let out = convoy(
        &url,
        &admin,
        &["deploy", "watch", "web/app", "--timeout", "1s"],
    );
    let watched = format!("deployment {fourth} had not ended after");
    assert!(text(&out).contains(&watched), "{}", text(&out));
    let out = convoy(&url, &admin, &["deploy", "info", "web/nothing"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no deployment"), "{}", text(&out));
    Ok(())
}

/// The URL of a server other than the leader.
fn follower_url(cluster: &Cluster, leader: u64) -> String {
    let id = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .expect("a follower");
    cluster.server(id).url()
}
