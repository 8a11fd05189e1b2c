//! A simulated fleet for end-to-end tests: one task per node reports to any live server over HTTP, acts
//! on its targets at set speeds, fails chosen installs, and logs when each download and install was
//! allowed and when it ended, so a test can check the windows from the agents' side.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::task::JoinHandle;

/// What a node was doing during a [`Span`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Prefetching a version it was allowed to download but not yet to install.
    Prefetch,
    /// Installing (or switching back to) a version it was allowed to install.
    Install,
}

/// One piece of work: from the answer that allowed it to the report that said it was over.
#[derive(Clone, Debug)]
pub struct Span {
    /// The node.
    pub node: String,
    /// The version worked on.
    pub version: u64,
    /// What kind of work.
    pub phase: Phase,
    /// When the node received the permission (wall-clock ms, comparable with leader-stamped times).
    pub start: u64,
    /// When the node finished (before it reported it); `None` while running.
    pub end: Option<u64>,
}

/// How the fleet behaves.
#[derive(Clone, Debug)]
pub struct FleetConfig {
    /// The resource the nodes run.
    pub resource: String,
    /// Time to download a version.
    pub download: Duration,
    /// Time to install a version.
    pub install: Duration,
    /// Report period while idle.
    pub interval: Duration,
    /// Installs that fail: (node id, version).
    pub fail: BTreeSet<(String, u64)>,
}

impl FleetConfig {
    /// A fleet running `resource` with quick work and no failures.
    pub fn new(resource: &str) -> Self {
        Self {
            resource: resource.to_string(),
            download: Duration::from_millis(50),
            install: Duration::from_millis(150),
            interval: Duration::from_millis(50),
            fail: BTreeSet::new(),
        }
    }

    /// Makes `node`'s install of `version` fail.
    pub fn failing(mut self, node: &str, version: u64) -> Self {
        self.fail.insert((node.to_string(), version));
        self
    }
}

/// Per-version progress as a node reports it.
#[derive(Clone, Debug, Default)]
struct Progress {
    downloaded: bool,
    installed: bool,
    done: bool,
    error: Option<String>,
}

/// Wall-clock milliseconds, the unit of the servers' event times.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as u64
}

/// The most intervals `[start, end]` open at one instant (`None`: still open). An interval ending
/// in the millisecond another starts does not overlap it.
pub fn max_overlap(intervals: impl IntoIterator<Item = (u64, Option<u64>)>) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for (start, end) in intervals {
        edges.push((start, 1));
        edges.push((end.unwrap_or(u64::MAX), -1));
    }
    // At equal instants the end sorts first.
    edges.sort();
    let (mut open, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        open += d;
        most = most.max(open);
    }
    most as usize
}

/// Work under way: (phase, version, due, index of its span).
type Busy = (Phase, u64, Instant, usize);

/// One simulated node.
struct SimNode {
    id: String,
    current: Option<u64>,
    versions: BTreeMap<u64, Progress>,
    busy: Option<Busy>,
}

impl SimNode {
    fn report(&self, resource: &str) -> Value {
        let versions: serde_json::Map<String, Value> = self
            .versions
            .iter()
            .map(|(v, p)| {
                let mut entry = json!({"downloaded": p.downloaded, "installed": p.installed,
                    "done": p.done, "healthy": p.error.is_none()});
                if let Some(e) = &p.error {
                    entry["error"] = json!(e);
                }
                (v.to_string(), entry)
            })
            .collect();
        let mut state = json!({"interested": true, "versions": versions});
        if let Some(c) = self.current {
            state["current"] = json!(c);
        }
        json!({"active": true, "resources": {resource: state}})
    }
}

/// A running simulated fleet; its tasks stop when it is dropped.
pub struct Fleet {
    tasks: Vec<JoinHandle<()>>,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Fleet {
    /// Starts one task per node, each already running `running` (if any), reporting to `servers`
    /// (`host:port`, the next tried when one fails).
    pub fn start(
        servers: &[String],
        nodes: &[String],
        running: Option<u64>,
        config: FleetConfig,
    ) -> Self {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("http client");
        let config = Arc::new(config);
        let servers: Arc<Vec<String>> = Arc::new(servers.to_vec());
        let tasks = nodes
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut versions = BTreeMap::new();
                if let Some(v) = running {
                    let done = Progress {
                        downloaded: true,
                        installed: true,
                        done: true,
                        error: None,
                    };
                    versions.insert(v, done);
                }
                let node = SimNode {
                    id: id.clone(),
                    current: running,
                    versions,
                    busy: None,
                };
                tokio::spawn(run(
                    node,
                    i,
                    servers.clone(),
                    http.clone(),
                    config.clone(),
                    spans.clone(),
                ))
            })
            .collect();
        Self { tasks, spans }
    }

    /// Every span so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }

    /// The most spans of `phase` on `version` that were ever running at the same instant.
    pub fn max_concurrent(&self, phase: Phase, version: u64) -> usize {
        max_overlap(
            self.spans()
                .into_iter()
                .filter(|s| s.phase == phase && s.version == version)
                .map(|s| (s.start, s.end)),
        )
    }

    /// The nodes in the order their `phase` spans on `version` started.
    pub fn order(&self, phase: Phase, version: u64) -> Vec<String> {
        let mut spans: Vec<Span> = self
            .spans()
            .into_iter()
            .filter(|s| s.phase == phase && s.version == version)
            .collect();
        spans.sort_by_key(|s| s.start);
        spans.into_iter().map(|s| s.node).collect()
    }
}

async fn run(
    mut node: SimNode,
    index: usize,
    servers: Arc<Vec<String>>,
    http: reqwest::Client,
    config: Arc<FleetConfig>,
    spans: Arc<Mutex<Vec<Span>>>,
) {
    let mut server = index % servers.len();
    loop {
        finish_due(&mut node, &config, &spans);
        let url = format!("http://{}/v1/nodes/{}/report", servers[server], node.id);
        let answer = match http
            .post(&url)
            .json(&node.report(&config.resource))
            .send()
            .await
        {
            Ok(resp) if resp.status().is_success() => resp.json::<Value>().await.ok(),
            _ => None,
        };
        let Some(answer) = answer else {
            server = (server + 1) % servers.len();
            tokio::time::sleep(config.interval).await;
            continue;
        };
        let target = &answer["targets"][&config.resource];
        abandon_if_retargeted(&mut node, target["version"].as_u64(), &spans);
        promote_prefetch(&mut node, target, &spans);
        if node.busy.is_none() {
            if let Some(version) = target["version"].as_u64() {
                let download = target["download"].as_bool().unwrap_or(false);
                let install = target["install"].as_bool().unwrap_or(false);
                start_work(&mut node, version, download, install, &config, &spans);
            }
        }
        let pause = match node.busy {
            Some((_, _, due, _)) => due
                .saturating_duration_since(Instant::now())
                .min(config.interval),
            None => config.interval,
        };
        tokio::time::sleep(pause).await;
    }
}

/// A node told to run another version than the one it is working on drops that work, as an agent that
/// cancels an install it is no longer asked for (a rollback reaching a node mid-install).
fn abandon_if_retargeted(node: &mut SimNode, target: Option<u64>, spans: &Mutex<Vec<Span>>) {
    let (Some((_, busy_version, _, span)), Some(target)) = (node.busy, target) else {
        return;
    };
    if busy_version == target {
        return;
    }
    node.busy = None;
    if node.versions.get(&busy_version).is_some_and(|p| !p.done) {
        node.versions.remove(&busy_version);
    }
    spans.lock().unwrap()[span].end = Some(now_ms());
}

/// A node prefetching the version it is now allowed to install has left the download window for the
/// install window: its prefetch span ends and an install span (download then install) begins.
fn promote_prefetch(node: &mut SimNode, target: &Value, spans: &Mutex<Vec<Span>>) {
    let Some((Phase::Prefetch, version, due, span)) = node.busy else {
        return;
    };
    if target["version"].as_u64() != Some(version) || target["install"] != true {
        return;
    }
    let now = now_ms();
    let mut log = spans.lock().unwrap();
    log[span].end = Some(now);
    log.push(Span {
        node: node.id.clone(),
        version,
        phase: Phase::Install,
        start: now,
        end: None,
    });
    node.busy = Some((Phase::Install, version, due, log.len() - 1));
}

fn start_work(
    node: &mut SimNode,
    version: u64,
    download: bool,
    install: bool,
    config: &FleetConfig,
    spans: &Mutex<Vec<Span>>,
) {
    let held = node.versions.get(&version).cloned();
    let (phase, took) = match held {
        None if download || install => (
            if install {
                Phase::Install
            } else {
                Phase::Prefetch
            },
            config.download,
        ),
        // Held and installed before (a rollback target): switch back.
        Some(p) if p.installed && install && node.current != Some(version) => {
            (Phase::Install, config.install)
        }
        Some(p) if p.downloaded && !p.done && install => (Phase::Install, config.install),
        _ => return,
    };
    let now = Instant::now();
    let span = {
        let mut log = spans.lock().unwrap();
        log.push(Span {
            node: node.id.clone(),
            version,
            phase,
            start: now_ms(),
            end: None,
        });
        log.len() - 1
    };
    node.versions.entry(version).or_default();
    node.busy = Some((phase, version, now + took, span));
}

fn finish_due(node: &mut SimNode, config: &FleetConfig, spans: &Mutex<Vec<Span>>) {
    let Some((phase, version, due, span)) = node.busy else {
        return;
    };
    let now = Instant::now();
    if due > now {
        return;
    }
    node.busy = None;
    let progress = node.versions.entry(version).or_default();
    if !progress.downloaded {
        progress.downloaded = true;
        if phase == Phase::Prefetch {
            spans.lock().unwrap()[span].end = Some(now_ms());
        } else {
            // Allowed to install: go on installing without waiting for the next answer.
            node.busy = Some((phase, version, now + config.install, span));
        }
        return;
    }
    if progress.installed {
        node.current = Some(version);
    } else if config.fail.contains(&(node.id.clone(), version)) {
        progress.done = true;
        progress.error = Some(format!("install of version {version} failed (test)"));
    } else {
        progress.installed = true;
        progress.done = true;
        node.current = Some(version);
    }
    spans.lock().unwrap()[span].end = Some(now_ms());
}
