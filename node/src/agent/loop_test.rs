//! The agent's loops (report → targets → act) against a fake convoy API: failover past a dead
//! server and a 503, honest reports, bad answers that must not crash it, and reports that keep
//! going every interval while a long install runs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::executor::{AgentConfig, Executor};
use super::fetch::sha256_hex;
use super::reporter::{self, parse_targets, pause_after, report_once};
use super::{work, work_once};
use crate::client::{ApiClient, ClientError};

/// One round as the two loops make it: report what is held, act on the answer's targets.
async fn round(client: &ApiClient, ex: &mut Executor, node: &str) -> Result<bool, ClientError> {
    let before = ex.report_body();
    let targets = report_once(client, node, &before).await?;
    work_once(client, ex, &targets).await;
    Ok(ex.report_body() != before)
}

type Handler = dyn Fn(&str, &str, &Value) -> (u16, Value) + Send + Sync;

/// A fake API: `handler(method, path, body)` answers; every request is recorded.
struct FakeApi {
    addr: String,
    seen: Arc<Mutex<Vec<(String, String, Value)>>>,
}

impl FakeApi {
    fn start(handler: Box<Handler>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut len = 0usize;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0u8; len];
                let _ = reader.read_exact(&mut body);
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let mut parts = line.split_whitespace();
                let (method, path) = (
                    parts.next().unwrap_or("").to_string(),
                    parts.next().unwrap_or("").to_string(),
                );
                // Routed on the path alone, as the server's router does (the agent asks shows for a page).
                let route = path.split('?').next().unwrap_or("");
                let (status, answer) = handler(&method, route, &body);
                log.lock().unwrap().push((method, path, body));
                let answer = answer.to_string();
                // A 429 says when to come back, as the server's report budget does.
                let retry_after = if status == 429 {
                    "retry-after: 7\r\n"
                } else {
                    ""
                };
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{retry_after}content-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        Self { addr, seen }
    }

    fn reports(&self) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(m, p, _)| m == "POST" && p.ends_with("/report"))
            .map(|(_, _, b)| b.clone())
            .collect()
    }
}

fn closed_addr() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn rounds_ride_through_a_dead_server_and_a_503_and_report_progress() {
    let src = tempfile::tempdir().unwrap();
    let artifact = src.path().join("web-3.tar");
    std::fs::write(&artifact, "three").unwrap();
    let url = format!("file://{}", artifact.display());
    let sha = sha256_hex(b"three");
    let no_leader = FakeApi::start(Box::new(|_, _, _| {
        (
            503,
            json!({"error": {"code": "no_leader", "message": "no leader yet"}}),
        )
    }));
    let api = FakeApi::start(Box::new(move |method, path, _| match (method, path) {
        ("POST", "/v1/nodes/n1/report") => (
            200,
            json!({"targets": {"web": {"version": 3, "download": true, "install": true}}}),
        ),
        ("GET", "/v1/resources/web") => (
            200,
            json!({"name": "web", "versions": [{"version": 3, "artifact": {"url": url, "sha256": sha, "size": 5},
                   "metadata": {}, "depends_on": [], "published_at": 1}]}),
        ),
        _ => (
            404,
            json!({"error": {"code": "not_found", "message": path}}),
        ),
    }));
    let servers = format!("{},{},{}", closed_addr(), no_leader.addr, api.addr);
    let client = ApiClient::new(&servers)
        .unwrap()
        .with_patience(Duration::from_secs(5));
    let state = tempfile::tempdir().unwrap();
    let mut config = AgentConfig::new(state.path().to_path_buf());
    config.sources.artifact_root = Some(src.path().to_path_buf());
    let mut ex = Executor::open(config).unwrap();

    assert!(
        round(&client, &mut ex, "n1").await.unwrap(),
        "the first round makes progress"
    );
    assert!(
        !round(&client, &mut ex, "n1").await.unwrap(),
        "then nothing changes"
    );
    let reports = api.reports();
    assert_eq!(reports[0], json!({"active": true, "resources": {}}));
    let last = &reports[1]["resources"]["web"];
    assert_eq!(last["current"], 3);
    assert_eq!(last["interested"], true);
    assert_eq!(last["versions"]["3"]["done"], true);
    assert_eq!(last["versions"]["3"]["error"], Value::Null);
    assert_eq!(
        std::fs::read_to_string(state.path().join("resources/web/current/artifact")).unwrap(),
        "three"
    );
}

#[tokio::test]
async fn bad_answers_are_survived() {
    let api = FakeApi::start(Box::new(|method, path, _| match (method, path) {
        ("POST", _) => (
            200,
            json!({"targets": {"web": "garbage", "../etc": {"version": 1, "download": true, "install": true}}}),
        ),
        _ => (200, json!(["not", "a", "resource"])),
    }));
    let client = ApiClient::new(&api.addr).unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut ex = Executor::open(AgentConfig::new(state.path().to_path_buf())).unwrap();
    assert!(!round(&client, &mut ex, "n1").await.unwrap());
    assert!(ex.state().resources.is_empty());
    assert!(parse_targets(&json!("nonsense")).is_empty());
    assert!(parse_targets(
        &json!({"targets": {"web": {"version": 2, "download": true, "install": false}}})
    )
    .contains_key("web"));
}

#[tokio::test]
async fn no_server_at_all_backs_off() {
    let client = ApiClient::new(&closed_addr())
        .unwrap()
        .with_patience(Duration::from_millis(100));
    let state = tempfile::tempdir().unwrap();
    let mut ex = Executor::open(AgentConfig::new(state.path().to_path_buf())).unwrap();
    let outcome = round(&client, &mut ex, "n1").await.map(drop);
    assert!(
        matches!(outcome, Err(ClientError::Unreachable { .. })),
        "{outcome:?}"
    );
    let interval = Duration::from_millis(100);
    let mut failures = 0;
    let first = pause_after(outcome, interval, &mut failures);
    let unreachable = || {
        Err(ClientError::Unreachable {
            servers: String::new(),
            last: String::new(),
        })
    };
    let second = pause_after(unreachable(), interval, &mut failures);
    assert!(first > interval && second > first, "{first:?} {second:?}");
    for _ in 0..10 {
        pause_after(unreachable(), interval, &mut failures);
    }
    assert!(pause_after(unreachable(), interval, &mut failures) <= Duration::from_secs(30));
    assert_eq!(pause_after(Ok(()), interval, &mut failures), interval);
    assert_eq!(failures, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_go_on_every_interval_while_a_long_install_runs() {
    let api = FakeApi::start(Box::new(|method, path, _| match (method, path) {
        ("POST", "/v1/nodes/n1/report") => (
            200,
            json!({"targets": {"web": {"version": 1, "download": true, "install": true}}}),
        ),
        ("GET", "/v1/resources/web") => (200, json!({"name": "web", "versions": [{"version": 1}]})),
        _ => (
            404,
            json!({"error": {"code": "not_found", "message": path}}),
        ),
    }));
    let client = Arc::new(ApiClient::new(&api.addr).unwrap());
    let state = tempfile::tempdir().unwrap();
    let config = AgentConfig {
        install_command: Some("sleep 1.5".into()),
        ..AgentConfig::new(state.path().to_path_buf())
    };
    let mut ex = Executor::open(config).unwrap();
    let (tx, rx) = tokio::sync::watch::channel(None);
    let status = state.path().join("status.json");
    let reporter = tokio::spawn(reporter::run(
        client.clone(),
        "n1".into(),
        Duration::from_millis(100),
        ex.subscribe(),
        tx,
        status.clone(),
        ex.clock(),
    ));
    let installing = |r: &Value| {
        let v = &r["resources"]["web"]["versions"]["1"];
        v["downloaded"] == true && v["installed"] == false
    };
    let done = |r: &Value| r["resources"]["web"]["versions"]["1"]["done"] == true;
    let watch_it = async {
        let mut phases = Vec::new();
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(&status) {
                let s: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let phase = s["phases"]["web"]["phase"].clone();
                if phases.last() != Some(&phase) && !phase.is_null() {
                    phases.push(phase);
                }
            }
            // The status file is written beside the reports, not before them: wait for both.
            if api.reports().iter().any(done) && phases.last() == Some(&json!("running")) {
                return phases;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "never done and running; phases {phases:?}; reports: {:?}",
            api.reports()
        );
    };
    let phases = tokio::select! {
        _ = work(&client, &mut ex, rx, Duration::from_millis(100)) => panic!("the worker stopped"),
        phases = watch_it => phases,
    };
    reporter.abort();
    let during = api.reports().iter().filter(|r| installing(r)).count();
    assert!(
        during >= 8,
        "only {during} reports during a 1.5 s install at 100 ms"
    );
    assert!(
        phases.contains(&json!("installing")) && phases.last() == Some(&json!("running")),
        "{phases:?}"
    );
}

#[tokio::test]
async fn a_rate_limited_report_waits_for_retry_after_then_reports_again() {
    let api = FakeApi::start(Box::new(|_, _, _| {
        (
            429,
            json!({"error": {"code": "rate_limited", "message": "token \"a\" is over its report budget"}}),
        )
    }));
    let client = ApiClient::new(&api.addr).unwrap();
    let outcome = report_once(&client, "n1", &json!({})).await.map(drop);
    assert_eq!(
        api.reports().len(),
        1,
        "a 429 is not sent to another server at once"
    );
    let interval = Duration::from_millis(100);
    let mut failures = 0;
    let pause = pause_after(outcome, interval, &mut failures);
    assert_eq!(
        pause,
        Duration::from_secs(7),
        "the server's Retry-After, not the interval"
    );
    assert_eq!(
        pause_after(Ok(()), interval, &mut failures),
        interval,
        "then as usual"
    );
}
