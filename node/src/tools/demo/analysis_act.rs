//! The demo's final act: a bad version rolled back by its metrics alone. A third simulated fleet exports each
//! node's error ratio (`convoy sim --metrics-addr`'s exporter), a local Prometheus scrapes it, and a batch
//! deployment with metric analysis (DEPLOYMENTS.md §15) rolls itself back after its first batch. Skipped, with
//! a message, when no `prometheus` binary is on the PATH.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::{json, Value};

use crate::client::ApiClient;
use crate::sim::metrics::{self, ErrorModel};
use crate::sim::node::Behaviour;
use crate::sim::{node_ids, Fleet, FleetPlan};

/// The provider line every demo server's config gets, for a Prometheus the act starts on `port`.
pub fn provider_config(port: u16) -> String {
    format!("analysis_provider = [{{ name = \"prom\", prometheus = \"http://127.0.0.1:{port}\", timeout = \"2s\" }}]\n")
}

/// A Prometheus child, killed when dropped.
struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn has_prometheus() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("prometheus").is_file()))
}

async fn start_prometheus(
    dir: &std::path::Path,
    port: u16,
    target: &str,
) -> anyhow::Result<Prometheus> {
    let dir = dir.join("prometheus");
    std::fs::create_dir_all(&dir)?;
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: sim\n    static_configs:\n      - targets: [\"{target}\"]\n"),
    )?;
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prometheus.log"))?)
        .spawn()
        .context("starting prometheus")?;
    let p = Prometheus(child);
    let http = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/api/v1/query?query=up");
    for _ in 0..200 {
        if let Ok(r) = http.get(&url).send().await {
            if let Ok(v) = r.json::<Value>().await {
                if v["data"]["result"][0]["value"][1] == "1" {
                    return Ok(p);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "prometheus did not scrape the fleet (log in {})",
        dir.display()
    )
}

/// Runs the act against the cluster behind `client`, with Prometheus on `port`.
pub async fn run(
    client: &Arc<ApiClient>,
    dir: &std::path::Path,
    port: u16,
    behaviour: Behaviour,
    nodes: usize,
) -> anyhow::Result<()> {
    println!(
        "\n\x1b[1m==> Metric analysis: a bad version of checkout, rolled back by its error rate alone\x1b[0m"
    );
    if !has_prometheus() {
        println!("    skipped: no `prometheus` binary on the PATH (apt-get install prometheus)");
        return Ok(());
    }
    let ids = node_ids("checkout", nodes);
    client
        .post::<_, Value>("/v1/resources", &json!({"name": "checkout"}))
        .await?;
    for label in ["v1", "v2"] {
        client
            .post::<_, Value>("/v1/resources/checkout/versions", &json!({"label": label}))
            .await?;
    }
    client
        .post::<_, Value>("/v1/consumers", &json!({"name": "checkout", "nodes": ids}))
        .await?;
    let currents = metrics::Currents::default();
    let model = ErrorModel {
        base: 0.002,
        bad: Some(("checkout".into(), 2)),
        bad_ratio: 0.3,
    };
    let exporter = metrics::serve("127.0.0.1:0", currents.clone(), model).await?;
    let plan = FleetPlan {
        currents: Some(currents),
        ..FleetPlan::default()
    };
    let fleet = Fleet::spawn_with(
        client.clone(),
        ids.clone(),
        behaviour,
        Duration::from_millis(200),
        Some(("checkout".into(), 1)),
        plan,
    );
    let _prometheus = start_prometheus(dir, port, &exporter.to_string()).await?;
    client
        .put::<_, Value>(
            "/v1/consumers/checkout/subscriptions/checkout",
            &json!({"mode": "strong", "pin": 1}),
        )
        .await?;
    println!("    {nodes} nodes export convoy_sim_error_ratio at http://{exporter}/metrics; Prometheus on 127.0.0.1:{port} scrapes it every second");
    let query = "max(convoy_sim_error_ratio{node=~\"{{nodes}}\",resource=\"checkout\"})";
    let started: Value = client
        .post(
            "/v1/deployments",
            &json!({"consumer": "checkout", "resource": "checkout", "version": 2,
                    "strategy": {"batch": {"sizes": [2, nodes.saturating_sub(2).max(1)]}},
                    "message": "demo: judged by its metrics",
                    "analysis": {"provider": "prom", "mode": "per_batch", "metrics": [{
                        "name": "errors", "query": query, "success": "result < 0.05",
                        "interval_ms": 2000, "count": 2}]}}),
        )
        .await?;
    let id = started["id"].as_str().context("deployment id")?.to_string();
    println!("    deployment {id}: batches of 2 then the rest; each batch promoted only if max error ratio < 5%");
    let mut said = 0;
    let status = loop {
        let view: Value = client.get(&format!("/v1/deployments/{id}")).await?;
        let events: Vec<String> = view["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["message"].as_str())
            .filter(|m| m.starts_with("analysis"))
            .map(String::from)
            .collect();
        for line in &events[said.min(events.len())..] {
            println!("    {line}");
        }
        said = events.len();
        let status = view["status"].as_str().unwrap_or("?").to_string();
        if !status.starts_with("ROLL_") && !status.starts_with("ROLLING_") {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    fleet.stop().await;
    println!("    deployment {id} ended {status}: no person looked at a graph");
    if status != "ROLLED_BACK" {
        bail!("deployment {id} ended {status}, not ROLLED_BACK");
    }
    Ok(())
}
