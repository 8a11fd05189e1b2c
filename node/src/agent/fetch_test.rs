//! Downloads against a source that stalls: the attempt fails within the stall timeout with an
//! error naming the URL but no credentials, nothing is left behind, and the executor tries again
//! as many times as configured before reporting the version failed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use convoy_actors::domain::{Artifact, Target};

use super::executor::{AgentConfig, Executor, ResourceDoc, VersionDoc};
use super::fetch::{fetch, shown_url, FetchError, Sources};

/// Plain `http://` allowed, as `--allow-http` does.
const HTTP: Sources = Sources {
    artifact_root: None,
    allow_http: true,
};

/// A source that answers every request with headers announcing 1,000 bytes, sends 10, then holds
/// the connection silent for `hold`. Counts the connections.
struct StallingSource {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl StallingSource {
    fn start(hold: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    let head = "HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n0123456789";
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.flush();
                    std::thread::sleep(hold);
                });
            }
        });
        Self { port, connections }
    }

    /// A URL with credentials and a token, which no error may show.
    fn url(&self) -> String {
        format!(
            "http://deployer:hunter2@127.0.0.1:{}/web-1.tar?token=s3cr3t",
            self.port
        )
    }
}

fn artifact(url: String) -> Artifact {
    Artifact {
        url,
        sha256: Some("0".repeat(64)),
        size: Some(1000),
    }
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn shown_urls_drop_credentials_and_queries_and_stay_short() {
    assert_eq!(
        shown_url("http://user:pw@host:80/a/b.tar?token=x#f"),
        "http://host:80/a/b.tar?…"
    );
    assert_eq!(shown_url("https://host/a@b.tar"), "https://host/a@b.tar");
    assert_eq!(shown_url("file:///srv/web-1.tar"), "file:///srv/web-1.tar");
    let long = format!("http://host/{}", "é".repeat(200));
    let shown = shown_url(&long);
    assert!(
        shown.len() <= 100 + '…'.len_utf8() && shown.ends_with('…'),
        "{shown}"
    );
}

#[tokio::test]
async fn a_stalled_download_fails_within_the_stall_timeout_naming_the_url_without_secrets() {
    let source = StallingSource::start(Duration::from_secs(5));
    let dir = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let started = Instant::now();
    let err = fetch(
        &http,
        &artifact(source.url()),
        dir.path(),
        Duration::from_millis(300),
        &HTTP,
    )
    .await
    .unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(matches!(err, FetchError::Stalled { .. }), "{err:?}");
    assert!(err.transient());
    let text = err.to_string();
    assert_eq!(
        text,
        format!(
            "download of http://127.0.0.1:{}/web-1.tar?… stalled: no data for 300 ms",
            source.port
        )
    );
    assert!(
        !text.contains("hunter2") && !text.contains("s3cr3t"),
        "{text}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[tokio::test]
async fn a_refused_connection_names_the_url_without_secrets() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://u:hunter2@127.0.0.1:{port}/a.tar?sig=s3cr3t");
    let err = fetch(
        &reqwest::Client::new(),
        &artifact(url),
        dir.path(),
        Duration::from_secs(5),
        &HTTP,
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "download of http://127.0.0.1:{port}/a.tar?… failed: "
        )),
        "{text}"
    );
    assert!(
        !text.contains("hunter2") && !text.contains("s3cr3t"),
        "{text}"
    );
}

#[tokio::test]
async fn the_executor_retries_a_stalled_download_then_reports_the_version_failed() {
    let source = StallingSource::start(Duration::from_secs(5));
    let state = tempfile::tempdir().unwrap();
    let config = AgentConfig {
        download_stall: Duration::from_millis(200),
        download_attempts: 2,
        download_backoff: Duration::from_millis(50),
        retry: Duration::from_secs(3600),
        sources: HTTP,
        ..AgentConfig::new(state.path().to_path_buf())
    };
    let mut ex = Executor::open(config).unwrap();
    let views = BTreeMap::from([(
        "web".to_string(),
        ResourceDoc {
            versions: vec![VersionDoc {
                version: 1,
                artifact: Some(artifact(source.url())),
                health_port: None,
            }],
        },
    )]);
    let targets = BTreeMap::from([(
        "web".to_string(),
        Target {
            version: 1,
            download: true,
            install: true,
            uninstall: false,
        },
    )]);
    let started = Instant::now();
    ex.step(&targets, &views).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(source.connections.load(Ordering::SeqCst), 2, "two attempts");
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.done && !v1.progress.downloaded && !v1.progress.installed,
        "{v1:?}"
    );
    let error = v1.progress.error.clone().unwrap();
    assert!(error.contains("stalled: no data for 200 ms"), "{error}");
    assert!(
        !error.contains("hunter2") && !error.contains("s3cr3t"),
        "{error}"
    );
    let report = ex.report_body();
    assert_eq!(report["resources"]["web"]["versions"]["1"]["error"], error);
    assert!(leftovers(&state.path().join("resources/web/1")).is_empty());
    // Still targeted: not tried again before `--retry-ms`.
    ex.step(&targets, &views).await;
    assert_eq!(source.connections.load(Ordering::SeqCst), 2);
}
