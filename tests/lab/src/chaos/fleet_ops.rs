//! The chaos workload's fleet operations on resource `mr`: nodes in two consumers (`multi`, weak, and
//! `multi-b`) that report on their own every 300 ms and install slower than the node timeout (reporting
//! all along), versions retracted and unretracted, a version held back because its nodes fail it, and
//! subscriptions deleted and restored (with both gone, the nodes are told to uninstall `mr`); plus linearizable reads of the nodes' targets and liveness for the fleet checkers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use convoy_actors::domain::NodeView;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tokio::sync::watch;

use super::history::{now_ms, Ban, LivenessRead, NodeTarget, ReportAck};
use super::workload::Shared;
use convoy_node::client::ApiClient;

/// The servers' node timeout in chaos runs.
pub const NODE_TIMEOUT_MS: u64 = 8_000;
/// How long a node of `multi` takes to install a version: past the node timeout.
pub const SLOW_INSTALL: Duration = Duration::from_millis(NODE_TIMEOUT_MS + 1_000);
/// How often those nodes report.
const REPORT_EVERY: Duration = Duration::from_millis(300);
/// The resource.
const RESOURCE: &str = "mr";

fn stopped(stop: &watch::Receiver<bool>) -> bool {
    *stop.borrow()
}

async fn pause_for(stop: &mut watch::Receiver<bool>, d: Duration) {
    let _ = tokio::time::timeout(d, stop.wait_for(|s| *s)).await;
}

/// Creates `mr` v1, consumers `multi` and `multi-b` sharing `n` nodes `multi-<i>`, both subscribed
/// weakly; returns the node ids.
pub async fn setup(api: &ApiClient, n: usize) -> anyhow::Result<Vec<String>> {
    api.post::<_, Value>("/v1/resources", &json!({"name": RESOURCE}))
        .await
        .context("creating mr")?;
    api.post::<_, Value>(&format!("/v1/resources/{RESOURCE}/versions"), &json!({}))
        .await
        .context("publishing mr v1")?;
    let ids: Vec<String> = (0..n).map(|i| format!("multi-{i}")).collect();
    for c in ["multi", "multi-b"] {
        api.post::<_, Value>("/v1/consumers", &json!({"name": c, "nodes": ids}))
            .await
            .with_context(|| format!("creating consumer {c}"))?;
        subscribe(api, c).await.context("subscribing")?;
    }
    Ok(ids)
}

async fn subscribe(api: &ApiClient, consumer: &str) -> anyhow::Result<Value> {
    Ok(api
        .put(
            &format!("/v1/consumers/{consumer}/subscriptions/{RESOURCE}"),
            &json!({"mode": "weak"}),
        )
        .await?)
}

/// What one self-reporting node runs and is doing.
#[derive(Default)]
struct Node {
    current: Option<u64>,
    installing: Option<(u64, Instant)>,
    /// The last version it failed to install (it keeps running `current`).
    failed: Option<u64>,
    removed: bool,
}

impl Node {
    fn report(&self) -> Value {
        let mut versions = serde_json::Map::new();
        let done = json!({"downloaded": true, "installed": true, "done": true, "healthy": true});
        if let Some(v) = self.current {
            versions.insert(v.to_string(), done);
        }
        if let Some(v) = self.failed {
            versions.insert(
                v.to_string(),
                json!({"downloaded": true, "installed": false, "done": true, "error": "exit 1"}),
            );
        }
        if let Some((v, _)) = self.installing {
            versions.insert(
                v.to_string(),
                json!({"downloaded": true, "installed": false, "done": false}),
            );
        }
        let mut r = json!({"current": self.current, "versions": versions});
        if self.removed {
            r["removed"] = json!(true);
        }
        json!({"resources": {RESOURCE: r}})
    }

    /// Follows `target` (the report's answer for `mr`); an install of a version in `bad` fails.
    fn follow(&mut self, target: Option<&Value>, bad: &std::collections::BTreeSet<u64>) {
        if let Some((v, since)) = self.installing {
            if since.elapsed() >= SLOW_INSTALL {
                if bad.contains(&v) {
                    self.failed = Some(v);
                } else {
                    self.current = Some(v);
                }
                self.installing = None;
            }
            return;
        }
        let Some(t) = target else {
            return;
        };
        self.removed = false;
        if t["uninstall"] == true {
            self.current = None;
            self.removed = true;
        } else if let (Some(v), true) = (t["version"].as_u64(), t["install"] == true) {
            if self.current != Some(v) && self.failed != Some(v) {
                self.failed = None;
                self.installing = Some((v, Instant::now()));
            }
        }
    }
}

/// Reports every node every 300 ms, following its targets with slow installs; records each
/// acknowledged report.
pub async fn reporters(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    ids: Vec<String>,
    mut stop: watch::Receiver<bool>,
) {
    let mut nodes: BTreeMap<String, Node> = ids
        .iter()
        .map(|id| {
            let node = Node {
                current: Some(1),
                ..Node::default()
            };
            (id.clone(), node)
        })
        .collect();
    while !stopped(&stop) {
        // Concurrently, so one slow answer does not silence the others.
        let sent = nodes.iter().map(|(id, node)| {
            let (api, body) = (api.clone(), node.report());
            async move {
                let sent_ms = now_ms();
                let answer = api
                    .post::<_, Value>(&format!("/v1/nodes/{id}/report"), &body)
                    .await;
                (sent_ms, answer.ok())
            }
        });
        let answers = futures::future::join_all(sent).await;
        for ((id, node), (sent_ms, answer)) in nodes.iter_mut().zip(answers) {
            if let Some(answer) = answer {
                shared.history.reports.lock().unwrap().push(ReportAck {
                    node: id.clone(),
                    sent_ms,
                    acked_ms: now_ms(),
                });
                let bad = shared.bad.lock().unwrap().clone();
                node.follow(answer["targets"].get(RESOURCE), &bad);
            }
        }
        pause_for(&mut stop, REPORT_EVERY).await;
    }
}

/// Every 1–2 s one operation on `mr`: publish, retract the newest version (and later unretract it),
/// hold a fresh version back by failing it, or delete and restore
/// `multi-b`'s subscription. Records the bans.
pub async fn operator(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xf1ee7);
    let mut retracted: Vec<u64> = Vec::new();
    while !stopped(&stop) {
        pause_for(
            &mut stop,
            Duration::from_millis(rng.gen_range(1_000..2_000)),
        )
        .await;
        shared.history.operation();
        match rng.gen_range(0..5) {
            0 => {
                let _ = publish(&api).await;
            }
            1 => {
                let Some(v) = publish(&api).await else {
                    continue;
                };
                let path = format!("/v1/resources/{RESOURCE}/versions/{v}/retract");
                let body = json!({"message": "chaos"});
                if api.post::<_, Value>(&path, &body).await.is_ok() {
                    shared.history.bans.lock().unwrap().push(Ban {
                        resource: RESOURCE.into(),
                        version: v,
                        consumer: None,
                        from_ms: now_ms(),
                        until_ms: None,
                    });
                    retracted.push(v);
                }
            }
            2 if !retracted.is_empty() => {
                let v = retracted.remove(rng.gen_range(0..retracted.len()));
                let sent = now_ms();
                let path = format!("/v1/resources/{RESOURCE}/versions/{v}/unretract");
                // Lifted from the moment it was sent (it may apply even if the answer is lost).
                if let Some(b) = shared
                    .history
                    .bans
                    .lock()
                    .unwrap()
                    .iter_mut()
                    .find(|b| b.consumer.is_none() && b.version == v && b.until_ms.is_none())
                {
                    b.until_ms = Some(sent);
                }
                let _ = api.post::<_, Value>(&path, &json!({})).await;
            }
            3 => hold_back(&shared, &api).await,
            _ => uninstall_and_restore(&api, rng.gen_bool(0.5), &mut stop).await,
        }
    }
}

/// Deletes `multi-b`'s subscription (and with `both`, `multi`'s too: then the nodes are told to
/// uninstall `mr`), waits, and restores them, `multi` first. `multi`'s holds outlive its subscription and
/// keep their versions off the nodes whichever consumer decides their targets.
async fn uninstall_and_restore(api: &ApiClient, both: bool, stop: &mut watch::Receiver<bool>) {
    let path = |c: &str| format!("/v1/consumers/{c}/subscriptions/{RESOURCE}");
    let _ = api.delete::<Value>(&path("multi-b")).await;
    if both {
        let _ = api.delete::<Value>(&path("multi")).await;
    }
    pause_for(stop, Duration::from_millis(1_000)).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while subscribe(api, "multi").await.is_err() && Instant::now() < deadline {
        pause_for(stop, Duration::from_millis(200)).await;
    }
    let _ = subscribe(api, "multi-b").await;
}

async fn publish(api: &ApiClient) -> Option<u64> {
    let path = format!("/v1/resources/{RESOURCE}/versions");
    let answer = api.post::<_, Value>(&path, &json!({})).await.ok()?;
    answer["version"].as_u64()
}

/// Publishes a version its nodes fail and deploys it to `multi` by hand: the failures hold it back on
/// `multi` (by the deployment's rollback or the weak subscription's brake: a hold needs evidence), which
/// the sampler records from the consumer's view.
async fn hold_back(shared: &Shared, api: &ApiClient) {
    let Some(v) = publish(api).await else {
        return;
    };
    shared.bad.lock().unwrap().insert(v);
    let spec = json!({"consumer": "multi", "resource": RESOURCE, "version": v,
                      "strategy": {"all_at_once": {}}});
    let Ok(started) = api.post::<_, Value>("/v1/deployments", &spec).await else {
        return;
    };
    if let Some(id) = started["id"].as_str() {
        let _ = api
            .post::<_, Value>(&format!("/v1/deployments/{id}/rollback"), &json!({}))
            .await;
    }
}

/// Every 250 ms reads a random node of `ids` linearizably: its liveness, and its `mr` target when no
/// deployment of it holds the node; every few reads also `multi`'s holds (recorded as bans).
pub async fn sampler(
    shared: Arc<Shared>,
    api: Arc<ApiClient>,
    ids: Vec<String>,
    seed: u64,
    mut stop: watch::Receiver<bool>,
) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5a3f);
    let mut k = 0u64;
    while !stopped(&stop) {
        pause_for(&mut stop, Duration::from_millis(250)).await;
        k += 1;
        if k.is_multiple_of(8) {
            record_holds(&shared, &api).await;
        }
        let id = &ids[rng.gen_range(0..ids.len())];
        let start_ms = now_ms();
        let read = tokio::time::timeout(
            Duration::from_secs(3),
            api.get::<NodeView>(&format!("/v1/nodes/{id}?consistent=true")),
        )
        .await;
        let Ok(Ok(view)) = read else {
            continue;
        };
        shared.history.liveness.lock().unwrap().push(LivenessRead {
            node: id.clone(),
            start_ms,
            active: view.active,
        });
        let Some(t) = view.targets.get(RESOURCE) else {
            continue;
        };
        if !view.deployments.is_empty() {
            continue;
        }
        let current = view.resources.get(RESOURCE).and_then(|r| r.current);
        shared
            .history
            .node_targets
            .lock()
            .unwrap()
            .push(NodeTarget {
                node: id.clone(),
                consumers: view.consumers.clone(),
                resource: RESOURCE.into(),
                version: t.version,
                moving: (t.download || t.install) && current != Some(t.version),
                start_ms,
            });
    }
}

async fn record_holds(shared: &Shared, api: &ApiClient) {
    let Ok(c) = api
        .get::<Value>("/v1/consumers/multi?consistent=true")
        .await
    else {
        return;
    };
    let holds = c["holds"].as_array().cloned().unwrap_or_default();
    let mut bans = shared.history.bans.lock().unwrap();
    for h in holds {
        let (Some(version), Some(at)) = (h["version"].as_u64(), h["at"].as_u64()) else {
            continue;
        };
        let known = bans
            .iter()
            .any(|b| b.consumer.as_deref() == Some("multi") && b.version == version);
        if !known && h["resource"] == RESOURCE {
            bans.push(Ban {
                resource: RESOURCE.into(),
                version,
                consumer: Some("multi".into()),
                from_ms: at,
                until_ms: None,
            });
        }
    }
}
