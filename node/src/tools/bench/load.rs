//! A closed-loop load generator: N clients, each a loop of requests over one shared keep-alive HTTP
//! client for a fixed time, recording every request's latency.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::measure::percentile;

/// What one load level did.
#[derive(Clone, Debug, Default)]
pub struct LoadResult {
    /// Concurrent clients.
    pub clients: usize,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that failed.
    pub errors: u64,
    /// The first failure, to tell a slow system from a broken bench.
    pub first_error: Option<String>,
    /// From the start until the last request returned.
    pub elapsed: Duration,
    /// Latency of every successful request, µs.
    pub latencies_us: Vec<u64>,
}

impl LoadResult {
    /// Successful requests per second.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs == 0.0 {
            0.0
        } else {
            self.ok as f64 / secs
        }
    }

    /// The `p` percentile of successful latencies, ms.
    pub fn percentile_ms(&self, p: f64) -> Option<f64> {
        percentile(self.latencies_us.clone(), p).map(|us| us as f64 / 1000.0)
    }

    /// A one-line summary of failures, empty when there were none.
    pub fn error_note(&self) -> String {
        match &self.first_error {
            Some(e) if self.errors > 0 => format!("{} errors, first: {e}", self.errors),
            _ => String::new(),
        }
    }
}

/// Runs `clients` loops of `op(client, seq)` until `duration` has passed (no request starts after it;
/// the ones in flight finish and count).
pub async fn closed_loop<F, Fut>(clients: usize, duration: Duration, op: F) -> LoadResult
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let op = Arc::new(op);
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let op = op.clone();
            tokio::spawn(async move {
                let mut part = LoadResult::default();
                let mut seq = 0u64;
                while start.elapsed() < duration {
                    let sent = Instant::now();
                    match op(client, seq).await {
                        Ok(()) => {
                            part.ok += 1;
                            part.latencies_us.push(sent.elapsed().as_micros() as u64);
                        }
                        Err(e) => {
                            part.errors += 1;
                            part.first_error.get_or_insert(e);
                            // A failing system is not hammered in a tight loop.
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    }
                    seq += 1;
                }
                part
            })
        })
        .collect();
    let mut total = LoadResult {
        clients,
        ..LoadResult::default()
    };
    for task in tasks {
        if let Ok(part) = task.await {
            total.ok += part.ok;
            total.errors += part.errors;
            if total.first_error.is_none() {
                total.first_error = part.first_error;
            }
            total.latencies_us.extend(part.latencies_us);
        }
    }
    total.elapsed = start.elapsed();
    total
}

/// Runs `clients` loops that together call `op(i)` once for each `i` in `0..total` (claimed in order),
/// stopping early after `limit`; a failed call is retried up to 10 times.
pub async fn fixed_count<F, Fut>(clients: usize, total: u64, limit: Duration, op: F) -> LoadResult
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let op = Arc::new(op);
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (op, next) = (op.clone(), next.clone());
            tokio::spawn(async move {
                let mut part = LoadResult::default();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= total || start.elapsed() > limit {
                        return part;
                    }
                    for _ in 0..10 {
                        let sent = Instant::now();
                        match op(i).await {
                            Ok(()) => {
                                part.ok += 1;
                                part.latencies_us.push(sent.elapsed().as_micros() as u64);
                                break;
                            }
                            Err(e) => {
                                part.errors += 1;
                                part.first_error.get_or_insert(e);
                                tokio::time::sleep(Duration::from_millis(50)).await;
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let mut total_result = LoadResult {
        clients,
        ..LoadResult::default()
    };
    for task in tasks {
        if let Ok(part) = task.await {
            total_result.ok += part.ok;
            total_result.errors += part.errors;
            if total_result.first_error.is_none() {
                total_result.first_error = part.first_error;
            }
            total_result.latencies_us.extend(part.latencies_us);
        }
    }
    total_result.elapsed = start.elapsed();
    total_result
}

/// A keep-alive HTTP client for load: enough idle connections for every client, a bound on each
/// request; with `token`, every request carries `Authorization: Bearer <token>` (convoy's servers
/// run with auth on, as in production; etcd's clients pass `None`).
pub fn http_client(token: Option<&str>) -> reqwest::Client {
    reqwest::Client::builder()
        .default_headers(auth_headers(token))
        .pool_max_idle_per_host(1024)
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .expect("reqwest client")
}

/// `Authorization: Bearer <token>` (marked sensitive), or no header at all.
pub fn auth_headers(token: Option<&str>) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(token) = token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .expect("a token is printable ASCII");
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    headers
}

/// POSTs JSON; `Ok(body)` on a 2xx answer, else the status and body as the error.
pub async fn post_ok(
    http: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> Result<Vec<u8>, String> {
    post_text(
        http,
        url,
        serde_json::to_string(body).map_err(|e| e.to_string())?,
    )
    .await
}

/// POSTs JSON already written as text; like [`post_ok`].
pub async fn post_text(http: &reqwest::Client, url: &str, body: String) -> Result<Vec<u8>, String> {
    let response = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if status.is_success() {
        Ok(bytes.to_vec())
    } else {
        Err(format!(
            "{url}: {status} {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        ))
    }
}

/// GETs JSON from `url`.
pub async fn get_json(http: &reqwest::Client, url: &str) -> Result<serde_json::Value, String> {
    let response = http
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("{url}: {e}"))?;
    if !status.is_success() {
        return Err(format!("{url}: {status}"));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{url}: {e}"))
}

/// Creates consumer `name` of `nodes`: the first 10,000 with `POST /v1/consumers`, the rest added
/// 10,000 at a time (`PUT /v1/consumers/{name}/nodes`), keeping each request small.
pub async fn register_consumer(
    http: &reqwest::Client,
    base: &str,
    name: &str,
    nodes: &[String],
) -> Result<(), String> {
    for (k, part) in nodes.chunks(10_000).enumerate() {
        if k == 0 {
            let body = serde_json::json!({"name": name, "nodes": part});
            post_ok(http, &format!("{base}/v1/consumers"), &body).await?;
        } else {
            let url = format!("{base}/v1/consumers/{name}/nodes");
            let r = http
                .put(&url)
                .json(&serde_json::json!({"add": part}))
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            if !r.status().is_success() {
                return Err(format!("{url}: {}", r.status()));
            }
        }
    }
    Ok(())
}
