//! An HTTP client of the convoy API that knows several servers and moves on to the next when one
//! is down or has no leader — used by the CLI, the agent, the simulated fleet and the demo.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Why an API call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with the API's error shape.
    #[error("{message} ({status} {code})")]
    Api {
        /// HTTP status.
        status: u16,
        /// The API's error code.
        code: String,
        /// The server's message.
        message: String,
    },
    /// No server could be reached (or none had a leader) before the deadline.
    #[error("no convoy server reachable at {servers}: {last}")]
    Unreachable {
        /// The servers tried.
        servers: String,
        /// The last failure.
        last: String,
    },
    /// The answer was not the JSON expected.
    #[error("unexpected answer from {server}{path}: {reason}")]
    Decode {
        /// The server.
        server: String,
        /// The path.
        path: String,
        /// What did not match.
        reason: String,
    },
    /// No server address was given.
    #[error("no server given: pass --server host:port[,host:port...] or set CONVOY_SERVER")]
    NoServers,
}

/// A client of one convoy cluster.
#[derive(Debug)]
pub struct ApiClient {
    servers: Vec<String>,
    preferred: AtomicUsize,
    http: reqwest::Client,
    patience: Duration,
    /// `Authorization: Bearer <secret>`, marked sensitive so `Debug` never shows it.
    auth: Option<reqwest::header::HeaderValue>,
}

impl ApiClient {
    /// A client of the comma-separated `servers` (`host:port` or `http://host:port`).
    pub fn new(servers: &str) -> Result<Self, ClientError> {
        let servers: Vec<String> = servers
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                if s.starts_with("http://") || s.starts_with("https://") {
                    s.trim_end_matches('/').to_string()
                } else {
                    format!("http://{s}")
                }
            })
            .collect();
        if servers.is_empty() {
            return Err(ClientError::NoServers);
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .connect_timeout(Duration::from_secs(2))
            .build()
            .expect("reqwest client");
        Ok(Self {
            servers,
            preferred: AtomicUsize::new(0),
            http,
            patience: Duration::from_secs(20),
            auth: None,
        })
    }

    /// Sends `Authorization: Bearer <secret>` with every request (`None`: no header).
    pub fn with_token(mut self, secret: Option<&str>) -> Self {
        self.auth = secret
            .and_then(|s| reqwest::header::HeaderValue::from_str(&format!("Bearer {s}")).ok())
            .map(|mut v| {
                v.set_sensitive(true);
                v
            });
        self
    }

    /// How long a call keeps trying other servers before giving up (default 20 s).
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// The servers, as URLs.
    pub fn servers(&self) -> &[String] {
        &self.servers
    }

    /// `GET path`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.call(Method::GET, path, None::<&()>).await
    }

    /// `POST path` with a JSON body.
    pub async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        self.call(Method::POST, path, Some(body)).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        self.call(Method::PUT, path, Some(body)).await
    }

    /// `DELETE path`.
    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        self.call(Method::DELETE, path, None::<&()>).await
    }

    /// Sends a request, moving to the next server on a refused connection or a 503 (no leader),
    /// until one answers or the patience runs out. Other errors return at once: a request that
    /// may have been carried out is never sent twice.
    pub async fn call<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, ClientError> {
        let deadline = Instant::now() + self.patience;
        let n = self.servers.len();
        let mut attempt = 0usize;
        let mut last;
        loop {
            let index = (self.preferred.load(Ordering::Relaxed) + attempt) % n;
            let server = &self.servers[index];
            let mut request = self.http.request(method.clone(), format!("{server}{path}"));
            if let Some(body) = body {
                request = request.json(body);
            }
            if let Some(auth) = &self.auth {
                request = request.header(reqwest::header::AUTHORIZATION, auth.clone());
            }
            match request.send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let bytes = response.bytes().await.unwrap_or_default();
                    if status == 503 {
                        last = format!("{server}: {}", String::from_utf8_lossy(&bytes));
                    } else {
                        self.preferred.store(index, Ordering::Relaxed);
                        return decode(server, path, status, &bytes);
                    }
                }
                Err(e) if e.is_connect() => last = format!("{server}: {e}"),
                Err(e) => {
                    return Err(ClientError::Unreachable {
                        servers: self.servers.join(","),
                        last: format!("{server}: {e}"),
                    })
                }
            }
            attempt += 1;
            if Instant::now() >= deadline {
                return Err(ClientError::Unreachable {
                    servers: self.servers.join(","),
                    last,
                });
            }
            if attempt.is_multiple_of(n) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

fn decode<T: DeserializeOwned>(
    server: &str,
    path: &str,
    status: u16,
    bytes: &[u8],
) -> Result<T, ClientError> {
    if (200..300).contains(&status) {
        let bytes: &[u8] = if bytes.is_empty() { b"null" } else { bytes };
        return serde_json::from_slice(bytes).map_err(|e| ClientError::Decode {
            server: server.to_string(),
            path: path.to_string(),
            reason: e.to_string(),
        });
    }
    let body: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let error = &body["error"];
    Err(ClientError::Api {
        status,
        code: error["code"].as_str().unwrap_or("http_error").to_string(),
        message: error["message"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned()),
    })
}
