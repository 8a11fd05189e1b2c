//! Aurora-style HTTP health checks (`GET http://127.0.0.1:<port>/health` must answer `ok`) and the
//! `.healthchecksnooze` file that suspends them.

use std::path::Path;
use std::time::Duration;

/// The snooze file's name, looked up in the resource dir and in the version dir.
pub const SNOOZE_FILE: &str = ".healthchecksnooze";

/// Whether health checks of this version are suspended by a snooze file.
pub fn snoozed(resource_dir: &Path, version_dir: &Path) -> bool {
    resource_dir.join(SNOOZE_FILE).exists() || version_dir.join(SNOOZE_FILE).exists()
}

/// One health check: `Ok` when `/health` answers 200 with body `ok` (trimmed) within `timeout`.
pub async fn check(http: &reqwest::Client, port: u16, timeout: Duration) -> Result<(), String> {
    let url = format!("http://127.0.0.1:{port}/health");
    let attempt = async {
        let response = http
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        let body = body.trim();
        if status.is_success() && body == "ok" {
            Ok(())
        } else {
            let shown: String = body.chars().take(100).collect();
            Err(format!("GET {url} answered {status}: {shown:?}"))
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "GET {url}: no answer within {} ms",
            timeout.as_millis()
        )),
    }
}

/// A tiny HTTP server for tests: answers `GET /health` with the current body and records
/// every request line it sees.
#[cfg(test)]
pub mod test_server {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    /// A running test server.
    #[derive(Clone)]
    pub struct TestServer {
        /// Its port on 127.0.0.1.
        pub port: u16,
        /// What `/health` answers now.
        pub body: Arc<Mutex<String>>,
        /// Request lines seen (`POST /quitquitquit HTTP/1.1`, ...).
        pub seen: Arc<Mutex<Vec<String>>>,
    }

    impl TestServer {
        /// Starts a server answering `body` on a thread (lives until the test process ends).
        pub fn start(body: &str) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let server = TestServer {
                port: listener.local_addr().unwrap().port(),
                body: Arc::new(Mutex::new(body.to_string())),
                seen: Arc::new(Mutex::new(Vec::new())),
            };
            let s = server.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { continue };
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    let _ = reader.read_line(&mut line);
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                            break;
                        }
                    }
                    s.seen.lock().unwrap().push(line.trim().to_string());
                    let body = s.body.lock().unwrap().clone();
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes());
                }
            });
            server
        }

        /// Changes what `/health` answers.
        pub fn set(&self, body: &str) {
            *self.body.lock().unwrap() = body.to_string();
        }

        /// Whether a request line starting with `prefix` was seen.
        pub fn saw(&self, prefix: &str) -> bool {
            self.seen
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.starts_with(prefix))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_server::TestServer;
    use super::*;

    #[tokio::test]
    async fn ok_then_failing_then_unreachable() {
        let http = reqwest::Client::new();
        let t = Duration::from_secs(2);
        let server = TestServer::start("ok\n");
        check(&http, server.port, t).await.unwrap();
        server.set("overloaded");
        let err = check(&http, server.port, t).await.unwrap_err();
        assert!(err.contains("overloaded"), "{err}");
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert!(check(&http, closed, t).await.is_err());
    }

    #[test]
    fn snooze_file_in_resource_or_version_dir() {
        let dir = tempfile::tempdir().unwrap();
        let vdir = dir.path().join("1");
        std::fs::create_dir(&vdir).unwrap();
        assert!(!snoozed(dir.path(), &vdir));
        std::fs::write(vdir.join(SNOOZE_FILE), b"").unwrap();
        assert!(snoozed(dir.path(), &vdir));
        std::fs::remove_file(vdir.join(SNOOZE_FILE)).unwrap();
        std::fs::write(dir.path().join(SNOOZE_FILE), b"").unwrap();
        assert!(snoozed(dir.path(), &vdir));
    }
}
