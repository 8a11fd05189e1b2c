//! Durations written as the issue writes them (issue 23): `"bake": "10m"` beside `"bake_ms": 600000` in the
//! bodies of subscriptions and deployments, through a real server; both spellings, or a bad one, refused.

use anyhow::ensure;
use convoy_tests::scenario::{consumer, get_ok, post_ok, put_ok, resource_with_v1};
use convoy_tests::{Cluster, ClusterOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_are_read_with_their_unit() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1)).await?;
    let api = cluster.client_except(0);
    resource_with_v1(&api, "du").await?;
    consumer(&api, "du", 2).await?;
    let path = "/v1/consumers/du/subscriptions/du";
    put_ok(
        &api,
        path,
        json!({"mode": "weak", "min_healthy": "2s", "pulse_interval": "1m",
               "completion": {"timeout": "1h"}, "brake": {"max_failed": 3, "window": "30m"}}),
    )
    .await?;
    let sub = get_ok(&api, "/v1/consumers/du").await?["subscriptions"]["du"].clone();
    ensure!(
        sub["min_healthy_ms"] == 2_000
            && sub["pulse_interval_ms"] == 60_000
            && sub["completion"]["timeout_ms"] == 3_600_000
            && sub["brake"]["window_ms"] == 1_800_000
            && sub["brake"]["max_failed"] == 3,
        "{sub}"
    );
    let (status, view) = api
        .patch(
            path,
            &json!({"brake": {"window": "2h"}, "min_healthy_ms": 500}),
        )
        .await?;
    ensure!(status == 200, "{status} {view}");
    let sub = &view["subscriptions"]["du"];
    ensure!(
        sub["brake"]["window_ms"] == 7_200_000 && sub["min_healthy_ms"] == 500,
        "{sub}"
    );

    let plan = post_ok(
        &api,
        "/v1/deployments?dry_run=true",
        json!({"consumer": "du", "resource": "du", "version": 1,
               "pacing": {"healthy_deadline": "10m", "download_deadline": "90s",
                          "progress_deadline": "1h30m"}}),
    )
    .await?;
    let pacing = &plan["settings"]["pacing"];
    ensure!(
        pacing["healthy_deadline_ms"] == 600_000
            && pacing["download_deadline_ms"] == 90_000
            && pacing["progress_deadline_ms"] == 5_400_000,
        "{plan}"
    );

    for (body, says) in [
        (
            json!({"pacing": {"bake": "10m", "bake_ms": 600_000}}),
            "both pacing.bake and pacing.bake_ms are given: give one",
        ),
        (
            json!({"min_healthy": "ten seconds"}),
            "min_healthy = \"ten seconds\" is invalid: not a duration",
        ),
        (
            json!({"completion": {"timeout": "600"}}),
            "completion.timeout = \"600\" is invalid: a duration needs its unit",
        ),
        (
            json!({"brake": {"window": "36500d"}}),
            "brake.window = \"36500d\" is invalid: a duration is at most 10 years",
        ),
        (
            json!({"brake": {"window": "8d"}}),
            "brake.window_ms = 691200000 is invalid",
        ),
    ] {
        let (status, answer) = api.put(path, &body).await?;
        ensure!(status == 400, "{body}: {status} {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        ensure!(message.contains(says), "{body}: {answer}");
    }
    let (status, answer) = api
        .post(
            "/v1/deployments",
            &json!({"consumer": "du", "resource": "du", "pacing": {"bake": 600}}),
        )
        .await?;
    ensure!(
        status == 400
            && answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("pacing.bake = 600 is not a duration")),
        "{status} {answer}"
    );

    // Group overrides take them too; a brake is no deployment setting there.
    post_ok(
        &api,
        "/v1/groups",
        json!({"name": "dg", "members": [{"consumer": "du", "resource": "du"}]}),
    )
    .await?;
    let path = "/v1/group-deployments?dry_run=true";
    let body = json!({"group": "dg", "versions": {"du": 1},
                      "overrides": {"du": {"pacing": {"healthy_deadline": "10m"}}}});
    post_ok(&api, path, body).await?;
    for (body, says) in [
        (
            json!({"group": "dg", "overrides": {"du": {"pacing": {"bake": "soon"}}}}),
            "overrides.du.pacing.bake = \"soon\" is invalid",
        ),
        (
            json!({"group": "dg", "overrides": {"du": {"brake": {"max_failed": 1}}}}),
            "overrides.du.brake is refused",
        ),
    ] {
        let (status, answer) = api.post(path, &body).await?;
        ensure!(
            status == 400
                && answer["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(says)),
            "{body}: {status} {answer}"
        );
    }
    Ok(())
}
