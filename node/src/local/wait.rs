//! Waiting on a local cluster: for a leader other than a killed one, and for any condition.

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::client::ApiClient;

/// Waits until a server `api` reaches names a leader other than `not` (the survivors keep naming a
/// killed leader until they elect anew); returns its id.
pub async fn wait_leader(
    api: &ApiClient,
    not: Option<u64>,
    timeout: Duration,
) -> anyhow::Result<u64> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(c) = api.get::<serde_json::Value>("/v1/cluster").await {
            if let Some(id) = c["leader_id"].as_u64().filter(|l| Some(*l) != not) {
                return Ok(id);
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "no leader elected within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Retries `f` until it returns `Some` or `timeout` passes.
pub async fn eventually<T, F, Fut>(timeout: Duration, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            bail!("condition not met within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
