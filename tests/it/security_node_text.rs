//! Issue 37, item 7, through the real binary: text a node supplies never reaches a terminal raw. A
//! report whose app log path holds a control, bidi or zero-width character is refused (400 naming the
//! field, without the character), so `convoy node show` never prints one; a node's error text (free
//! text, quoted by the deployment's events) is shown by `convoy deploy info` with each such character
//! escaped (`\u{202e}`).

use std::time::Duration;

use anyhow::{ensure, Context};
use convoy_tests::scenario::{
    consumer, get_ok, post_ok, publish, report_running, resource_with_v1,
};
use convoy_tests::{convoy_bin, eventually, Cluster, RawClient};
use serde_json::json;

/// Characters that reorder, hide or control what a terminal shows.
const HIDDEN: [char; 9] = [
    '\u{202e}', '\u{202a}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{061c}', '\u{200b}', '\u{feff}',
    '\u{1b}',
];

/// `convoy args --server server`'s stdout, asserting it succeeded.
fn cli(server: &str, args: &[&str]) -> anyhow::Result<String> {
    let out = std::process::Command::new(convoy_bin())
        .args(args)
        .args(["--server", server])
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .output()?;
    ensure!(out.status.success(), "convoy {args:?}: {out:?}");
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

async fn scenario(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let server = cluster.http_addrs().join(",");
    resource_with_v1(api, "web").await?;
    let nodes = consumer(api, "edge", 1).await?;
    report_running(api, &nodes, "web", 1).await?;

    for c in HIDDEN {
        let log = format!("/var/log/web{c}gol.log");
        let (status, body) = api
            .post(
                "/v1/nodes/edge-0/report",
                &json!({"resources": {"web": {"current": 1, "log": log}}}),
            )
            .await?;
        let text = body.to_string();
        ensure!(
            status == 400 && text.contains("resources.web.log"),
            "a log path with U+{:04X}: {status} {text}",
            c as u32
        );
        ensure!(
            !text.contains(c),
            "the refusal echoes U+{:04X}: {text}",
            c as u32
        );
    }
    let shown = cli(&server, &["node", "show", "edge-0"])?;
    ensure!(
        !shown.contains(HIDDEN),
        "node show prints a hidden character: {shown:?}"
    );

    let v2 = publish(api, "web", json!({})).await?;
    let started = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "edge", "resource": "web", "version": v2,
               "rollback_on_failure": false}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?.to_string();
    let error = "exit 1: \u{202e}gnp.exe\u{200b} \u{1b}[2J";
    let report = json!({"resources": {"web": {"current": 1, "versions": {
        v2.to_string(): {"downloaded": true, "done": true, "error": error}}}}});
    eventually(Duration::from_secs(15), || async {
        post_ok(api, "/v1/nodes/edge-0/report", report.clone())
            .await
            .ok()?;
        let view = get_ok(api, &format!("/v1/deployments/{id}")).await.ok()?;
        view["events"].to_string().contains("gnp.exe").then_some(())
    })
    .await
    .context("no event quotes the node's error")?;
    let info = cli(&server, &["deploy", "info", &id])?;
    ensure!(
        info.contains(r"exit 1: \u{202e}gnp.exe\u{200b} \u{1b}[2J"),
        "deploy info does not show the error escaped:\n{info}"
    );
    ensure!(
        !info.contains(HIDDEN),
        "deploy info prints a hidden character: {info:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_text_is_refused_as_a_path_and_escaped_as_an_error() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    cluster.wait_leader(Duration::from_secs(10)).await?;
    let api = cluster.server(1).client();
    cluster.logs_on_error(scenario(&cluster, &api).await)
}
