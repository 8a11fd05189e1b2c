//! `convoy sim --metrics-addr`: the simulated fleet's per-node error ratio in Prometheus' text format
//! (`GET /metrics`), so that metric analysis (DEPLOYMENTS.md §15) can judge its deployments: each node exports
//! `convoy_sim_error_ratio{node, resource, version}` for the version it runs, high for the bad version.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What each node runs: node id → resource → current version (kept by the fleet's node tasks).
pub type Currents = Arc<Mutex<BTreeMap<String, BTreeMap<String, u64>>>>;

/// The error ratio each node reports.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorModel {
    /// The ratio of a node on a good version.
    pub base: f64,
    /// The version (resource, version) whose nodes report `bad_ratio`.
    pub bad: Option<(String, u64)>,
    /// The ratio of a node running the bad version.
    pub bad_ratio: f64,
}

/// The exposition text for `currents` under `model`.
pub fn render(currents: &BTreeMap<String, BTreeMap<String, u64>>, model: &ErrorModel) -> String {
    let mut out = String::from(
        "# HELP convoy_sim_error_ratio Share of a simulated node's requests that fail, on the version it runs.\n# TYPE convoy_sim_error_ratio gauge\n",
    );
    for (node, resources) in currents {
        for (resource, version) in resources {
            let bad = model
                .bad
                .as_ref()
                .is_some_and(|(r, v)| r == resource && v == version);
            let ratio = if bad { model.bad_ratio } else { model.base };
            out.push_str(&format!(
                "convoy_sim_error_ratio{{node=\"{node}\",resource=\"{resource}\",version=\"{version}\"}} {ratio}\n"
            ));
        }
    }
    out
}

/// Serves `/metrics` (any path) on `addr` until the runtime stops; answers the address bound.
pub async fn serve(
    addr: &str,
    currents: Currents,
    model: ErrorModel,
) -> anyhow::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let body = render(&currents.lock().unwrap_or_else(|e| e.into_inner()), &model);
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                let _ = sock.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
            });
        }
    });
    Ok(bound)
}

#[cfg(test)]
#[path = "metrics_test.rs"]
mod tests;
