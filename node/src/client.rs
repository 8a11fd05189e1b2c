//! An HTTP client of the convoy API that knows several servers and moves on to the next when one
//! is down or has no leader — used by the CLI, the agent, the simulated fleet and the demo.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use crate::client_error::{cause, ClientError};

/// The comma-separated `servers` as URLs; a bare `host:port` gets `scheme`.
fn server_urls(servers: &str, scheme: &str) -> Result<Vec<String>, ClientError> {
    let urls: Vec<String> = servers
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.starts_with("http://") || s.starts_with("https://") {
                s.trim_end_matches('/').to_string()
            } else {
                format!("{scheme}{s}")
            }
        })
        .collect();
    if urls.is_empty() {
        return Err(ClientError::NoServers);
    }
    Ok(urls)
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
    /// Give up after one round in which no server could be connected to (a person waiting), instead
    /// of retrying for the whole patience (an agent riding out a restart).
    fail_fast: bool,
}

impl ApiClient {
    /// A client of the comma-separated `servers` (`host:port` or `http://host:port`).
    pub fn new(servers: &str) -> Result<Self, ClientError> {
        let servers = server_urls(servers, "http://")?;
        let http = with_timeouts(reqwest::Client::builder())
            .build()
            .expect("reqwest client");
        Ok(Self {
            servers,
            preferred: AtomicUsize::new(0),
            http,
            patience: Duration::from_secs(20),
            auth: None,
            fail_fast: false,
        })
    }

    /// Trusts the PEM CA `ca` for `https://` servers (besides the usual roots) and presents
    /// `identity` (PEM certificate and key files) when a server asks for a client certificate.
    pub fn with_tls(
        mut self,
        ca: Option<&std::path::Path>,
        identity: Option<(&std::path::Path, &std::path::Path)>,
    ) -> Result<Self, crate::tls::TlsError> {
        self.http = with_timeouts(crate::tls::client_builder(ca, identity)?)
            .build()
            .map_err(|e| crate::tls::TlsError::Config(e.to_string()))?;
        Ok(self)
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

    /// Sends the token read from `file` (`None`: no token): what `--token-file` gives the agent
    /// and the simulator.
    pub fn with_token_file(
        self,
        file: Option<&std::path::Path>,
    ) -> Result<Self, crate::common::token_file::SecretFileError> {
        let token = file.map(crate::common::token_file::read_file).transpose()?;
        Ok(self.with_token(token.as_deref()))
    }

    /// A client of other `servers` with this one's credentials, TLS and patience: how tools that
    /// talk to each server in turn (digests, faults) reach them. A bare `host:port` gets this
    /// client's scheme.
    pub fn of(&self, servers: &str) -> Result<Self, ClientError> {
        let scheme = if self.servers[0].starts_with("https://") {
            "https://"
        } else {
            "http://"
        };
        Ok(Self {
            servers: server_urls(servers, scheme)?,
            preferred: AtomicUsize::new(0),
            http: self.http.clone(),
            patience: self.patience,
            auth: self.auth.clone(),
            fail_fast: self.fail_fast,
        })
    }

    /// How long a call keeps trying other servers before giving up (default 20 s).
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Gives up as soon as every server has refused the connection once (503s are still retried for
    /// the patience: a leader election is worth waiting for). What the CLI uses.
    pub fn with_fail_fast(mut self) -> Self {
        self.fail_fast = true;
        self
    }

    /// One `GET path` to the server at `server` (a URL, e.g. a member's `http_addr` with this
    /// client's scheme), with this client's token and TLS, giving up after `timeout`.
    pub async fn get_from<T: DeserializeOwned>(
        &self,
        server: &str,
        path: &str,
        timeout: Duration,
    ) -> Result<T, ClientError> {
        let response = self
            .request(server, Method::GET, path)
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| ClientError::Unreachable {
                servers: server.to_string(),
                last: cause(&e),
            })?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap_or_default();
        decode(server, path, status, &bytes)
    }

    /// The scheme every server is spoken to with (`http` or `https`, from the first address).
    pub fn scheme(&self) -> &'static str {
        if self.servers[0].starts_with("https://") {
            "https"
        } else {
            "http"
        }
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

    /// Every request to `server` starts here: the one place its URL and headers are made.
    fn request(&self, server: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{server}{path}"));
        match &self.auth {
            Some(auth) => request.header(reqwest::header::AUTHORIZATION, auth.clone()),
            None => request,
        }
    }

    /// One request to the first server, no retry: its status and its body as JSON (`Null` when
    /// empty or not JSON), whatever the status — for probes and tests that look at refusals.
    pub async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<(u16, Value), ClientError> {
        let server = &self.servers[0];
        let mut request = self.request(server, method, path);
        if let Some((content_type, bytes)) = body {
            request = request.header("content-type", content_type).body(bytes);
        }
        let response = request.send().await.map_err(|e| ClientError::Unreachable {
            servers: server.clone(),
            last: cause(&e),
        })?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap_or_default();
        Ok((
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        ))
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
        let started = Instant::now();
        let deadline = started + self.patience;
        let n = self.servers.len();
        let mut attempt = 0usize;
        let mut last;
        // Servers of the current round that refused the connection.
        let mut refused = 0usize;
        // The last 503 (a server that answered, without a leader to serve the request).
        let mut unavailable: Option<String> = None;
        loop {
            let index = (self.preferred.load(Ordering::Relaxed) + attempt) % n;
            let server = &self.servers[index];
            let mut request = self.request(server, method.clone(), path);
            if let Some(body) = body {
                request = request.json(body);
            }
            match request.send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = retry_after(&response);
                    let bytes = response.bytes().await.unwrap_or_default();
                    if status == 429 {
                        self.preferred.store(index, Ordering::Relaxed);
                        return Err(rate_limited(&bytes, retry_after));
                    }
                    if status == 503 {
                        last = format!("{server}: {}", error_message(server, status, &bytes));
                        // Only convoy's own 503 says the cluster has no leader.
                        if api_error(&bytes).is_some() {
                            unavailable = Some(last.clone());
                        }
                    } else {
                        self.preferred.store(index, Ordering::Relaxed);
                        return decode(server, path, status, &bytes);
                    }
                }
                Err(e) if e.is_connect() => {
                    refused += 1;
                    last = format!("{server}: {}", failure(&e));
                }
                Err(e) => {
                    return Err(ClientError::Unreachable {
                        servers: self.servers.join(","),
                        last: format!("{server}: {}", failure(&e)),
                    })
                }
            }
            attempt += 1;
            if attempt.is_multiple_of(n) {
                if self.fail_fast && refused == n {
                    return Err(ClientError::Unreachable {
                        servers: self.servers.join(","),
                        last,
                    });
                }
                refused = 0;
            }
            // Every server is tried once, even with no patience left.
            if attempt >= n && Instant::now() >= deadline {
                // A person is told the servers answered (the agent and the tools keep one variant
                // for "try again later").
                return Err(match unavailable.filter(|_| self.fail_fast) {
                    Some(last) => ClientError::NoLeader {
                        servers: self.servers.join(","),
                        waited: started.elapsed(),
                        last,
                    },
                    None => ClientError::Unreachable {
                        servers: self.servers.join(","),
                        last,
                    },
                });
            }
            if attempt.is_multiple_of(n) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

impl ApiClient {
    /// `GET path` as a stream (Server-Sent Events), open for at most `open_for`: the first server that
    /// answers 200 (the next one is tried on a refused connection or a 503); an API error otherwise.
    pub async fn open_stream(
        &self,
        path: &str,
        open_for: Duration,
    ) -> Result<reqwest::Response, ClientError> {
        let mut last = String::new();
        let mut unavailable = None;
        for attempt in 0..self.servers.len() {
            let index = (self.preferred.load(Ordering::Relaxed) + attempt) % self.servers.len();
            let server = &self.servers[index];
            let request = self
                .request(server, Method::GET, path)
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .timeout(open_for);
            match request.send().await {
                Ok(response) if response.status().is_success() => {
                    self.preferred.store(index, Ordering::Relaxed);
                    return Ok(response);
                }
                Ok(response) => {
                    let status = response.status().as_u16();
                    let bytes = response.bytes().await.unwrap_or_default();
                    let refused = match decode::<Value>(server, path, status, &bytes) {
                        Err(e) => e,
                        Ok(_) => ClientError::Decode {
                            server: server.clone(),
                            path: path.to_string(),
                            reason: format!("status {status} is not a stream"),
                        },
                    };
                    if status != 503 {
                        return Err(refused);
                    }
                    // Busy or without a leader: the next server may serve it.
                    unavailable = Some(refused);
                }
                Err(e) => last = format!("{server}: {}", cause(&e)),
            }
        }
        Err(unavailable.unwrap_or_else(|| ClientError::Unreachable {
            servers: self.servers.join(","),
            last,
        }))
    }
}

/// How long a request may take, answer included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Every request gives up after [`REQUEST_TIMEOUT`], a connection attempt after [`CONNECT_TIMEOUT`].
fn with_timeouts(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    builder
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
}

/// Why a request with the client's own timeouts failed: which timeout ran out and how long it is
/// (`no answer within 2s (connect timeout)`), else the root cause.
fn failure(e: &reqwest::Error) -> String {
    match (e.is_timeout(), e.is_connect()) {
        (true, true) => format!(
            "no answer within {}s (connect timeout)",
            CONNECT_TIMEOUT.as_secs()
        ),
        (true, false) => format!(
            "no answer within {}s (request timeout)",
            REQUEST_TIMEOUT.as_secs()
        ),
        _ => cause(e),
    }
}

/// The most a server's `Retry-After` is honoured for (a wrong header never parks a client for long).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The `Retry-After` of an answer in seconds (1 s when absent or not a number, at most
/// [`MAX_RETRY_AFTER`]).
fn retry_after(response: &reqwest::Response) -> Duration {
    let secs = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(secs).clamp(Duration::from_secs(1), MAX_RETRY_AFTER)
}

/// A 429 answer as an error: its message and when to come back.
fn rate_limited(bytes: &[u8], retry_after: Duration) -> ClientError {
    let body: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    ClientError::RateLimited {
        message: body["error"]["message"]
            .as_str()
            .unwrap_or("rate limited")
            .to_string(),
        retry_after,
    }
}

/// The `(code, message)` of the API's error shape (`{"error": {"code", "message"}}`), if `bytes` is one.
fn api_error(bytes: &[u8]) -> Option<(String, String)> {
    let body: Value = serde_json::from_slice(bytes).ok()?;
    let error = body.get("error")?;
    Some((
        error["code"].as_str()?.to_string(),
        error["message"].as_str()?.to_string(),
    ))
}

/// What an error answer says: the API's message, or, for an answer that is not convoy's (a proxy, another
/// service), who answered what, so that an error is never empty.
fn error_message(server: &str, status: u16, bytes: &[u8]) -> String {
    match api_error(bytes) {
        Some((_, message)) => message,
        None => {
            let reason = reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("");
            let body = if bytes.iter().all(u8::is_ascii_whitespace) {
                "an empty body".to_string()
            } else {
                format!(
                    "a body that is not convoy's: {}",
                    convoy_actors::domain::clip(String::from_utf8_lossy(bytes).trim())
                )
            };
            format!(
                "{server} answered {status} {reason} with {body} (not a convoy server, or a proxy in between?)"
            )
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
    Err(ClientError::Api {
        status,
        code: api_error(bytes).map_or_else(|| "http_error".to_string(), |(code, _)| code),
        message: error_message(server, status, bytes),
    })
}

/// One server's API, answered raw: `(status, JSON body)` whatever the status. A view of
/// [`ApiClient::exchange`] for the multi-process tests and probes, which assert on refusals too.
#[derive(Clone, Debug)]
pub struct RawClient(std::sync::Arc<ApiClient>);

impl From<ApiClient> for RawClient {
    fn from(client: ApiClient) -> Self {
        Self(std::sync::Arc::new(client))
    }
}

impl RawClient {
    /// A raw client of the server at `addr` (`host:port`, or a URL with `https://`).
    pub fn new(addr: &str) -> Self {
        Self::from(ApiClient::new(addr).expect("one server address"))
    }

    fn json(body: &Value) -> Option<(&'static str, Vec<u8>)> {
        Some(("application/json", serde_json::to_vec(body).expect("JSON")))
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<(u16, Value), ClientError> {
        self.0.exchange(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Result<(u16, Value), ClientError> {
        self.0.exchange(Method::POST, path, Self::json(body)).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> Result<(u16, Value), ClientError> {
        self.0.exchange(Method::PUT, path, Self::json(body)).await
    }

    /// `PATCH path` with a JSON body.
    pub async fn patch(&self, path: &str, body: &Value) -> Result<(u16, Value), ClientError> {
        self.0.exchange(Method::PATCH, path, Self::json(body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<(u16, Value), ClientError> {
        self.0.exchange(Method::DELETE, path, None).await
    }

    /// `POST path` with `body` sent as is under `content_type` (malformed-input tests).
    pub async fn post_bytes(
        &self,
        path: &str,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Result<(u16, Value), ClientError> {
        let body = Some((content_type, body.into()));
        self.0.exchange(Method::POST, path, body).await
    }

    /// `POST path` with raw text declared as JSON (malformed-input tests).
    pub async fn post_raw(&self, path: &str, body: &str) -> Result<(u16, Value), ClientError> {
        self.post_bytes(path, "application/json", body).await
    }
}
