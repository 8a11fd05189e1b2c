//! A relay's view of the fleet: many simulated nodes report through `POST /v1/nodes/reports`, one
//! request per round for a whole frontier of nodes, as a rack relay or a fleet simulator would.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::load::post_text;

/// The body of `POST /v1/nodes/reports` for `(node, report)` pairs, each report the JSON text of
/// a `POST /v1/nodes/{id}/report` body (an object). Written as text: a relay of thousands of nodes
/// should not build a JSON tree per report.
pub fn batch_body<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut body = String::from("{\"reports\":[");
    for (k, (node, report)) in entries.into_iter().enumerate() {
        if k > 0 {
            body.push(',');
        }
        let rest = report.trim_start().trim_start_matches('{').trim_start();
        body.push_str("{\"node\":");
        body.push_str(&serde_json::to_string(node).expect("a string encodes"));
        if !rest.starts_with('}') {
            body.push(',');
        }
        body.push_str(rest);
    }
    body.push_str("]}");
    body
}

/// Posts one batch; the answer's bytes, retried on failure until `deadline`.
pub async fn post_batch(
    http: &reqwest::Client,
    url: &str,
    body: String,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    loop {
        match post_text(http, url, body.clone()).await {
            Ok(bytes) => return Ok(bytes),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The `rejected` part of a batch answer, read without building the targets.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Rejected {
    /// Node → why its report was not taken.
    #[serde(default)]
    pub rejected: std::collections::BTreeMap<String, String>,
}

/// The nodes a batch answer lists as not taken.
pub fn rejected(answer: &Value) -> BTreeSet<String> {
    answer["rejected"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// What a relayed rollout sent.
#[derive(Debug, Default)]
pub struct RelayStats {
    /// Batch requests.
    pub requests: u64,
    /// Node reports inside them.
    pub reports: u64,
}

/// Instant agents behind relays, moving their nodes to version `to`.
pub struct RelayFleet {
    /// Every node's id, in rollout order.
    pub nodes: Vec<String>,
    /// Relay `r` speaks for nodes `r`, `r + relays`, ...
    pub relays: usize,
    /// How many of its nodes a relay keeps in play at once, in id order.
    pub frontier: usize,
    /// The version they are moved to.
    pub to: u64,
    /// A node's report body before (`[0]`) and after (`[1]`) it installed `to`, as JSON text.
    pub reports: [String; 2],
    /// Whether a node's targets let it install `v`.
    pub allowed: fn(&Value, u64) -> bool,
}

/// Runs the fleet until every node reported `to` done. Each round a relay reports all its nodes
/// in play in one request: a node the last answer allowed to install reports `to` installed and
/// healthy (and leaves), the others report what they run (a heartbeat).
pub async fn rollout(
    http: reqwest::Client,
    url: String,
    fleet: Arc<RelayFleet>,
    limit: Duration,
) -> Result<RelayStats, String> {
    let (requests, reports) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + limit;
    let tasks: Vec<_> = (0..fleet.relays)
        .map(|r| {
            let (http, url, fleet) = (http.clone(), url.clone(), fleet.clone());
            let (requests, reports) = (requests.clone(), reports.clone());
            tokio::spawn(async move {
                let nodes = &fleet.nodes;
                let mut owned = (r..nodes.len()).step_by(fleet.relays);
                let mut in_play: Vec<(usize, bool)> = Vec::new();
                loop {
                    while in_play.len() < fleet.frontier {
                        match owned.next() {
                            Some(i) => in_play.push((i, false)),
                            None => break,
                        }
                    }
                    if in_play.is_empty() {
                        return Ok(());
                    }
                    let body = batch_body(in_play.iter().map(|(i, may)| {
                        (
                            nodes[*i].as_str(),
                            fleet.reports[usize::from(*may)].as_str(),
                        )
                    }));
                    let answer = post_batch(&http, &url, body, deadline).await?;
                    let answer: Value =
                        serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
                    requests.fetch_add(1, Ordering::Relaxed);
                    reports.fetch_add(in_play.len() as u64, Ordering::Relaxed);
                    let refused = rejected(&answer);
                    let mut moved = false;
                    in_play.retain_mut(|(i, may)| {
                        let id = &nodes[*i];
                        if refused.contains(id) {
                            return true;
                        }
                        if *may {
                            moved = true;
                            return false;
                        }
                        *may = (fleet.allowed)(&answer["targets"][id], fleet.to);
                        moved |= *may;
                        true
                    });
                    if Instant::now() > deadline {
                        return Err(format!("relay {r}: {} nodes still in play", in_play.len()));
                    }
                    if !moved {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(RelayStats {
        requests: requests.load(Ordering::Relaxed),
        reports: reports.load(Ordering::Relaxed),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_batch_body_is_the_reports_with_their_nodes() {
        let body = batch_body([
            ("n-1", r#"{"active": true, "resources": {}}"#),
            ("n\"2", "{}"),
        ]);
        let parsed: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            parsed,
            json!({"reports": [{"node": "n-1", "active": true, "resources": {}}, {"node": "n\"2"}]})
        );
        assert_eq!(batch_body([]), r#"{"reports":[]}"#);
    }

    #[test]
    fn rejected_nodes_are_read_from_the_answer() {
        let answer = json!({"targets": {}, "rejected": {"a": "busy", "b": "busy"}});
        assert_eq!(
            rejected(&answer),
            BTreeSet::from(["a".to_string(), "b".to_string()])
        );
        assert!(rejected(&json!({"targets": {}})).is_empty());
    }
}
