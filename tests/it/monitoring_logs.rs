//! Server logs through the real binary: JSON by default when standard error is a file, with the
//! deployment's id on every line about a deployment and no ANSI escapes; `log_format = "text"` in the
//! config file gives plain text lines, still without colours.

use std::time::Duration;

use convoy_node::local::ClusterOptions;
use convoy_tests::scenario::{consumer, post_ok, publish, resource_with_v1};
use convoy_tests::Cluster;
use serde_json::{json, Value};

/// Every server's log, read whole.
fn logs(cluster: &Cluster) -> Vec<String> {
    cluster
        .running()
        .into_iter()
        .map(|id| std::fs::read_to_string(cluster.server(id).log_path()).unwrap_or_default())
        .collect()
}

/// Starts a deployment of two reporting nodes and aborts it; returns its id.
async fn deploy_and_abort(cluster: &Cluster) -> anyhow::Result<String> {
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    for node in consumer(&api, "web", 2).await? {
        post_ok(
            &api,
            &format!("/v1/nodes/{node}/report"),
            json!({"resources": {"app": {"current": 1}}}),
        )
        .await?;
    }
    // The reports are taken asynchronously: retry until the node set is not empty.
    for _ in 0..100 {
        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": "web", "resource": "app", "version": 2}),
        )
        .await?;
        let id = started["id"].as_str().unwrap().to_string();
        if started["status"] != "ROLLED_FORWARD" {
            // The leader's actors log the start when they next follow the applied state: wait for
            // it, or a quick abort could end the deployment before they ever saw it active.
            for _ in 0..150 {
                if logs(cluster).concat().contains("deployment active") {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            post_ok(&api, &format!("/v1/deployments/{id}/abort"), json!({})).await?;
            return Ok(id);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("the nodes never became part of a deployment")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_by_default_with_the_deployment_id_on_deployment_lines() -> anyhow::Result<()> {
    let cluster = Cluster::start(3).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let id = deploy_and_abort(&cluster).await?;
    // The leader logs the deployment's start and end as its actors follow the applied state.
    let mut seen = false;
    for _ in 0..150 {
        let all = logs(&cluster).concat();
        if all.contains("deployment no longer active") {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        seen,
        "no line about the deployment's end:\n{}",
        cluster.logs()
    );
    let mut about_it = 0;
    for log in logs(&cluster) {
        assert!(!log.contains('\u{1b}'), "ANSI escape in a log file:\n{log}");
        for line in log.lines().filter(|l| !l.trim().is_empty()) {
            let event: Value = serde_json::from_str(line)
                .map_err(|e| anyhow::anyhow!("not a JSON line ({e}): {line}"))?;
            assert!(
                event["level"].is_string() && event["timestamp"].is_string(),
                "{line}"
            );
            let message = event["message"].as_str().unwrap_or_default();
            if message.to_lowercase().contains("deployment ") {
                assert!(
                    event["deployment"].is_string(),
                    "a line about a deployment without its id: {line}"
                );
            }
            if event["deployment"] == id.as_str() {
                about_it += 1;
            }
        }
    }
    assert!(
        about_it >= 2,
        "start and end of {id} are logged with its id"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_format_text_in_the_config_file_gives_plain_lines() -> anyhow::Result<()> {
    let options = ClusterOptions {
        extra: "log_format = \"text\"\n".into(),
        ..ClusterOptions::for_tests(1)
    };
    let cluster = Cluster::start_with(options).await?;
    cluster.wait_leader(Duration::from_secs(20)).await?;
    let log = logs(&cluster).concat();
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.iter().any(|l| l.contains("server started")), "{log}");
    for line in lines {
        assert!(
            !line.starts_with('{'),
            "a JSON line with log_format = text: {line}"
        );
        assert!(
            !line.contains('\u{1b}'),
            "ANSI escape in a log file: {line}"
        );
    }
    Ok(())
}
