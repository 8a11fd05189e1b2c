//! Metric analysis against a real Prometheus (Debian's `prometheus`, started here on a loopback port with a
//! temp config scraping a tiny exporter this test serves every second): a good version promoted batch by
//! batch; a bad version, whose error rate the exporter reports high, rolled back before its second batch;
//! an empty result and NaN paused as inconclusive; a leader killed mid-analysis whose successor continues
//! the count; Prometheus stopped mid-deployment counted as errors and paused at the limit. Skipped, with a
//! message, when the `prometheus` binary is absent (`.ci/run` installs it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use convoy_tests::scenario::{
    event_messages, post_ok, publish, resource_with_v1, strong_fleet_at_v1, wait_deployment,
    wait_status,
};
use convoy_tests::{eventually, free_port, Cluster, ClusterOptions, FleetConfig, RawClient};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LONG: Duration = Duration::from_secs(60);

/// The exporter's series: `name{labels}` → value as Prometheus' text format writes it (`NaN` allowed).
type Series = Arc<Mutex<BTreeMap<String, String>>>;

/// Serves `GET /metrics` with `series` on a loopback port; answers its address.
async fn exporter(series: Series) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?.to_string();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let series = series.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let body: String = series
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| format!("{k} {v}\n"))
                    .collect();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
            });
        }
    });
    Ok(addr)
}

/// A Prometheus process scraping `target` every second; killed on drop.
struct Prometheus {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    async fn start(target: &str) -> anyhow::Result<Prometheus> {
        let dir = tempfile::tempdir()?;
        let port = free_port()?;
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: app\n    static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        )?;
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log"))?)
            .spawn()?;
        let p = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        let http = reqwest::Client::new();
        let url = format!("http://{}/api/v1/query?query=up", p.addr);
        eventually(LONG, || {
            let (http, url) = (http.clone(), url.clone());
            async move {
                let v: Value = http.get(&url).send().await.ok()?.json().await.ok()?;
                (v["data"]["result"][0]["value"][1] == "1").then_some(())
            }
        })
        .await?;
        Ok(p)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.stop();
    }
}

fn prometheus_binary() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("prometheus"))
            .find(|p| p.is_file())
    })
}

/// A consumer of `n` nodes on `resource` v1 (strong, pinned), its fleet running, v2 published.
async fn fleet(
    cluster: &Cluster,
    api: &RawClient,
    name: &str,
    n: usize,
) -> anyhow::Result<(Vec<String>, convoy_tests::Fleet)> {
    let resource = format!("{name}app");
    resource_with_v1(api, &resource).await?;
    publish(api, &resource, json!({"label": "v2"})).await?;
    strong_fleet_at_v1(cluster, api, name, n, FleetConfig::new(&resource)).await
}

/// Starts a batch deployment of v2 to `name` with `analysis`; answers its id.
async fn deploy(
    api: &RawClient,
    name: &str,
    sizes: &[u32],
    analysis: Value,
) -> anyhow::Result<String> {
    let v = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": name, "resource": format!("{name}app"), "version": 2,
               "strategy": {"batch": {"sizes": sizes}}, "analysis": analysis}),
    )
    .await?;
    Ok(v["id"].as_str().unwrap_or_default().to_string())
}

fn analysis(query: &str, count: u32, extra: Value) -> Value {
    let mut metric = json!({"name": "errors", "query": query, "success": "result < 0.05",
                            "interval_ms": 1000, "count": count});
    if let (Some(m), Some(e)) = (metric.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    json!({"provider": "prom", "mode": "per_batch", "metrics": [metric]})
}

const ERRORS: &str = "max(app_error_ratio{node=~\"{{nodes}}\"})";

fn installed_at(view: &Value, node: &str) -> Option<u64> {
    view["events"]
        .as_array()?
        .iter()
        .find_map(|e| (e["node"] == node && e["action"] == "install").then(|| e["at"].as_u64())?)
}

fn event_at(view: &Value, text: &str) -> Option<u64> {
    view["events"].as_array()?.iter().find_map(|e| {
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains(text))
            .then(|| e["at"].as_u64())?
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_against_a_real_prometheus() -> anyhow::Result<()> {
    if prometheus_binary().is_none() {
        eprintln!(
            "SKIPPED: no `prometheus` binary on PATH (apt-get install prometheus; .ci/run does)"
        );
        return Ok(());
    }
    let series: Series = Arc::default();
    let target = exporter(series.clone()).await?;
    {
        let mut s = series.lock().unwrap();
        for node in [
            "good-0",
            "good-1",
            "good-2",
            "good-3",
            "failover-0",
            "failover-1",
            "outage-0",
            "outage-1",
        ] {
            s.insert(
                format!("app_error_ratio{{node=\"{node}\"}}"),
                "0.001".into(),
            );
        }
        for node in ["bad-0", "bad-1", "bad-2", "bad-3"] {
            s.insert(
                format!("app_error_ratio{{node=\"{node}\"}}"),
                "0.001".into(),
            );
        }
        s.insert("app_latency{node=\"nan-0\"}".into(), "NaN".into());
    }
    let mut prometheus = Prometheus::start(&target).await?;
    let options = ClusterOptions {
        extra: format!(
            "analysis_provider = [{{ name = \"prom\", prometheus = \"http://{}\", timeout = \"2s\" }}]\n",
            prometheus.addr
        ),
        ..ClusterOptions::for_tests(3)
    };
    let mut cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    let result = scenarios(&mut cluster, &api, &mut prometheus, &series).await;
    cluster.logs_on_error(result)
}

async fn scenarios(
    cluster: &mut Cluster,
    api: &RawClient,
    prometheus: &mut Prometheus,
    series: &Series,
) -> anyhow::Result<()> {
    let (good_nodes, _good) = fleet(cluster, api, "good", 4).await?;
    let (_, _bad) = fleet(cluster, api, "bad", 4).await?;
    let (_, _empty) = fleet(cluster, api, "empty", 2).await?;
    let (_, _nan) = fleet(cluster, api, "nan", 2).await?;

    // A good version: each batch of two is promoted only after its analysis passed (two good measurements).
    let good = deploy(api, "good", &[2], analysis(ERRORS, 2, json!({}))).await?;
    // A bad version: once its first batch is measured, the exporter raises the batch's error rate; the next
    // measurement fails the analysis and the deployment rolls back before the second batch starts.
    let bad = deploy(api, "bad", &[2], analysis(ERRORS, 30, json!({}))).await?;
    // No series, and NaN: inconclusive, paused.
    let empty = deploy(
        api,
        "empty",
        &[1],
        analysis("max(app_missing{node=~\"{{nodes}}\"})", 1, json!({})),
    )
    .await?;
    let nan = deploy(
        api,
        "nan",
        &[1],
        analysis("max(app_latency{node=~\"{{nodes}}\"})", 1, json!({})),
    )
    .await?;

    let view = wait_status(api, &good, "ROLLED_FORWARD", LONG).await?;
    let passed = event_at(&view, "analysis of batch 1 passed").expect("batch 1 passed");
    for node in &good_nodes[2..] {
        let at = installed_at(&view, node).expect("installed");
        assert!(
            at >= passed,
            "{node} installed at {at}, before batch 1 passed at {passed}"
        );
    }
    assert!(
        event_at(&view, "analysis of batch 2 passed").is_some(),
        "{:?}",
        event_messages(&view)
    );
    let run = &view["analysis"];
    assert_eq!(run["passed"], 2);
    assert_eq!(run["metrics"][0]["successes"], 2);

    wait_deployment(api, &bad, LONG, |v| {
        v["analysis"]["metrics"][0]["successes"].as_u64() >= Some(1)
    })
    .await?;
    let raised_at = convoy_node::leader::wall_ms();
    for node in ["bad-0", "bad-1"] {
        series
            .lock()
            .unwrap()
            .insert(format!("app_error_ratio{{node=\"{node}\"}}"), "0.3".into());
    }
    let view = wait_status(api, &bad, "ROLLED_BACK", LONG).await?;
    let failed_at = event_at(&view, "analysis failed").expect("the failure event");
    eprintln!(
        "bad batch: rolled back {} ms after its error rate was raised (interval 1000 ms, scrape 1000 ms)",
        failed_at.saturating_sub(raised_at)
    );
    assert!(
        event_messages(&view)
            .iter()
            .any(|m| m.contains("analysis failed: metric errors")),
        "{:?}",
        event_messages(&view)
    );
    assert!(
        installed_at(&view, "bad-2").is_none(),
        "the second batch never started"
    );
    let last = view["analysis"]["metrics"][0]["last"].as_array().unwrap();
    assert_eq!(last.last().unwrap()["measured"]["value"], 0.3, "{last:?}");

    for id in [&empty, &nan] {
        let view = wait_status(api, id, "ROLL_FORWARD_PAUSED", LONG).await?;
        assert_eq!(view["paused_by"], "analysis");
        assert!(
            event_messages(&view)
                .iter()
                .any(|m| m.contains("analysis inconclusive")),
            "{:?}",
            event_messages(&view)
        );
    }
    let view = wait_status(api, &nan, "ROLL_FORWARD_PAUSED", LONG).await?;
    assert_eq!(view["analysis"]["metrics"][0]["last"][0]["measured"], "nan");
    let view = wait_status(api, &empty, "ROLL_FORWARD_PAUSED", LONG).await?;
    assert_eq!(
        view["analysis"]["metrics"][0]["last"][0]["measured"],
        "empty"
    );

    // Leaders killed mid-analysis (3 times here; `CONVOY_ANALYSIS_KILLS=20` for the benchmark's 20): each
    // successor continues the count where it stood: what was recorded before the kill is kept, nothing is
    // counted twice, and every measurement keeps to the phase's schedule (no restart).
    let kills: u32 = std::env::var("CONVOY_ANALYSIS_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(3);
    let count = 2 * kills + 2;
    let (_, _failover) = fleet(cluster, api, "failover", 2).await?;
    let id = deploy(api, "failover", &[2], analysis(ERRORS, count, json!({}))).await?;
    let mut reader = api.clone();
    let mut since = None;
    for round in 0..kills {
        let before = wait_deployment(&reader, &id, LONG, |v| {
            v["analysis"]["metrics"][0]["taken"].as_u64() >= Some(u64::from(2 * round + 1))
        })
        .await?;
        since = since.or(before["analysis"]["measuring_since"].as_u64());
        assert_eq!(
            before["analysis"]["measuring_since"].as_u64(),
            since,
            "the phase never restarts"
        );
        let kept = before["analysis"]["metrics"][0]["last"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let taken = before["analysis"]["metrics"][0]["taken"]
            .as_u64()
            .unwrap_or(0);
        let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
        cluster.server_mut(leader).kill();
        reader = cluster.client_except(leader);
        let after = wait_deployment(&reader, &id, LONG, |v| {
            v["analysis"]["metrics"][0]["taken"].as_u64() > Some(taken)
                || v["status"] == "ROLLED_FORWARD"
        })
        .await?;
        let m = &after["analysis"]["metrics"][0];
        assert_eq!(
            m["total"], m["attempts"],
            "round {round}: a measurement counted twice: {m}"
        );
        let newest = kept.last().expect("a measurement before the kill");
        assert!(
            m["last"].as_array().unwrap().contains(newest),
            "round {round}: the measurement before the kill was lost: {m}"
        );
        cluster.restart(leader)?;
    }
    let view = wait_status(&reader, &id, "ROLLED_FORWARD", LONG).await?;
    let m = &view["analysis"]["metrics"][0];
    assert_eq!(m["taken"].as_u64(), Some(u64::from(count)), "{m}");
    assert_eq!(m["total"], m["attempts"], "{m}");
    let since = since.expect("measured");
    let first_shown = m["total"].as_u64().unwrap() - m["last"].as_array().unwrap().len() as u64;
    for (k, x) in m["last"].as_array().unwrap().iter().enumerate() {
        let at = x["at"].as_u64().unwrap();
        let due = since + 1000 * (first_shown + k as u64);
        assert!(
            at >= due,
            "measurement {} at {at}, before its time {due}: {m}",
            first_shown + k as u64
        );
    }
    eprintln!(
        "{kills} leader kills mid-analysis: {count} measurements, each counted once, on schedule"
    );

    // Prometheus stopped mid-deployment: errors, paused once past the consecutive-error limit (asked through a
    // server that was not killed last, as the restarted one may still be catching up).
    let api = &reader;
    let (_, _outage) = fleet(cluster, api, "outage", 2).await?;
    let id = deploy(
        api,
        "outage",
        &[1],
        analysis(ERRORS, 10, json!({"consecutive_error_limit": 2})),
    )
    .await?;
    wait_deployment(api, &id, LONG, |v| {
        v["analysis"]["metrics"][0]["taken"].as_u64() >= Some(1)
    })
    .await?;
    prometheus.stop();
    let view = wait_status(api, &id, "ROLL_FORWARD_PAUSED", LONG).await?;
    assert_eq!(view["paused_by"], "analysis");
    let m = &view["analysis"]["metrics"][0];
    assert_eq!(m["consecutive_errors"], 3, "{m}");
    assert!(
        event_messages(&view)
            .iter()
            .any(|t| t.contains("3 consecutive errors, 2 tolerated")),
        "{:?}",
        event_messages(&view)
    );
    Ok(())
}

/// A PromQL parse error: Prometheus answers it HTTP 400 (`bad_data`).
const UNPARSABLE: &str = "max(app_error_ratio{node=~\"{{nodes}}\"}";

/// Issue 36 §5 against a real Prometheus: a dry-run metric whose every query errors (a PromQL parse error,
/// answered HTTP 400) neither blocks nor decides a per-batch analysis: the deployment rolls forward batch by
/// batch on its good metric alone, and the dry-run metric's errors are recorded and shown. And a background
/// analysis in which every measurement errored never ends ROLLED_FORWARD: every node done, it waits for a
/// successful measurement, saying so, then pauses at its error limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analysis_never_passes_what_prometheus_did_not_measure() -> anyhow::Result<()> {
    if prometheus_binary().is_none() {
        eprintln!(
            "SKIPPED: no `prometheus` binary on PATH (apt-get install prometheus; .ci/run does)"
        );
        return Ok(());
    }
    let series: Series = Arc::default();
    let target = exporter(series.clone()).await?;
    for node in ["dry-0", "dry-1", "dry-2", "dry-3"] {
        series.lock().unwrap().insert(
            format!("app_error_ratio{{node=\"{node}\"}}"),
            "0.001".into(),
        );
    }
    let prometheus = Prometheus::start(&target).await?;
    let options = ClusterOptions {
        extra: format!(
            "analysis_provider = [{{ name = \"prom\", prometheus = \"http://{}\", timeout = \"2s\" }}]\n",
            prometheus.addr
        ),
        ..ClusterOptions::for_tests(3)
    };
    let cluster = Cluster::start_with(options).await?;
    let api = cluster.client_except(0);
    let result = unmeasured(&cluster, &api).await;
    cluster.logs_on_error(result)
}

async fn unmeasured(cluster: &Cluster, api: &RawClient) -> anyhow::Result<()> {
    let (_, _dry) = fleet(cluster, api, "dry", 4).await?;
    let (_, _bgerr) = fleet(cluster, api, "bgerr", 2).await?;

    // Per batch: `errors` judged (two good measurements a batch), `shadow` dry-run and unparsable.
    let mut with_dry = analysis(ERRORS, 2, json!({}));
    with_dry["metrics"].as_array_mut().expect("metrics").push(
        json!({"name": "shadow", "query": UNPARSABLE, "success": "result < 0.05",
                     "interval_ms": 1000, "count": 2, "dry_run": true}),
    );
    let dry = deploy(api, "dry", &[2], with_dry).await?;
    // Background: one judged metric, every query of it errors.
    let bg = post_ok(
        api,
        "/v1/deployments",
        json!({"consumer": "bgerr", "resource": "bgerrapp", "version": 2,
               "strategy": {"all_at_once": {}},
               "analysis": {"provider": "prom", "mode": "background", "metrics": [
                   {"name": "errors", "query": UNPARSABLE, "success": "result < 0.05",
                    "interval_ms": 1000, "consecutive_error_limit": 3}]}}),
    )
    .await?;
    let bg = bg["id"].as_str().unwrap_or_default().to_string();

    let view = wait_status(api, &dry, "ROLLED_FORWARD", LONG).await?;
    for batch in [1, 2] {
        assert!(
            event_at(&view, &format!("analysis of batch {batch} passed")).is_some(),
            "{:?}",
            event_messages(&view)
        );
    }
    let run = &view["analysis"];
    assert_eq!(run["passed"], 2, "{run}");
    assert_eq!(run["metrics"][0]["name"], "errors", "{run}");
    assert_eq!(run["metrics"][0]["successes"], 2, "{run}");
    let shadow = &run["metrics"][1];
    assert_eq!(shadow["name"], "shadow", "{shadow}");
    assert_eq!(shadow["taken"], 0, "{shadow}");
    assert!(shadow["total"].as_u64() >= Some(1), "{shadow}");
    let errors: Vec<&str> = shadow["last"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["measured"]["error"].as_str())
        .collect();
    assert!(
        !errors.is_empty() && errors.iter().all(|e| e.contains("HTTP 400")),
        "the dry-run metric's errors are recorded: {shadow}"
    );

    // Every node of the background deployment installs v2; its analysis never measured anything.
    let view = wait_deployment(api, &bg, LONG, |v| v["status"] != "ROLLING_FORWARD").await?;
    assert_eq!(view["status"], "ROLL_FORWARD_PAUSED", "{view}");
    assert_eq!(view["paused_by"], "analysis", "{view}");
    let m = &view["analysis"]["metrics"][0];
    assert_eq!(m["successes"], 0, "{m}");
    assert!(
        event_messages(&view)
            .iter()
            .any(|t| t.contains("consecutive errors, 3 tolerated (last: HTTP 400")),
        "{:?}",
        event_messages(&view)
    );
    Ok(())
}
