//! The agent's imperative shell for one node: carries out the planned actions (download, install,
//! rollback), keeps `state.json`, and publishes each change for the reporter. Health checks are in
//! `checks`, the processes in `runs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use convoy_actors::domain::{Target, VersionProgress, MAX_LOG_PATH_BYTES};
use tokio::sync::watch;

use super::app_log::LogPaths;
pub use super::config::{AgentConfig, ResourceDoc, VersionDoc};
use super::fetch::{fetch, shown_url, ARTIFACT};
use super::health_policy::HealthWatch;
use super::install::{read_current, run_install_command, switch_current, InstallEnv};
use super::metrics::{metrics, Failure};
use super::plan::{plan, valid_name, Action};
use super::process::RunningProcess;
use super::state::{AgentState, VersionState};
use super::status::{Phase, ResourcePhase, Snapshot};

/// The longest wait between two attempts of a download.
const DOWNLOAD_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The agent's state and the processes it runs.
pub struct Executor {
    pub(super) config: AgentConfig,
    pub(super) state: AgentState,
    pub(super) processes: BTreeMap<String, RunningProcess>,
    /// The health of each resource's current version, when it has a health port or a process.
    pub(super) watches: BTreeMap<String, HealthWatch>,
    pub(super) http: reqwest::Client,
    /// What is under way per resource (download, install) and for which version.
    activity: BTreeMap<String, (Phase, u64)>,
    /// Where each change is published (the reporter reads it).
    snapshots: Option<watch::Sender<Snapshot>>,
    /// What `state.json` holds now (a save that would write the same bytes is skipped).
    saved: Option<AgentState>,
}

impl Executor {
    /// The clock the agent reads (the configuration's).
    pub fn clock(&self) -> convoy_time::SharedClock {
        self.config.clock.clone()
    }

    /// Opens `state_dir` (creating it), loads `state.json` and reconciles it with the `current` links.
    pub fn open(config: AgentConfig) -> anyhow::Result<Self> {
        std::fs::create_dir_all(config.state_dir.join("resources"))?;
        let mut state = AgentState::load(&config.state_dir.join("state.json"))?;
        state.uninterested = config.uninterested.clone();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()?;
        let mut ex = Self {
            config,
            state,
            processes: BTreeMap::new(),
            watches: BTreeMap::new(),
            http,
            activity: BTreeMap::new(),
            snapshots: None,
            saved: None,
        };
        ex.reconcile();
        ex.adopt();
        ex.watch_current();
        Ok(ex)
    }

    /// A channel that receives the report body and phases after every change.
    pub fn subscribe(&mut self) -> watch::Receiver<Snapshot> {
        let (tx, rx) = watch::channel(self.snapshot());
        self.snapshots = Some(tx);
        rx
    }

    /// The report body and the phases now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            body: self.report_body(),
            phases: self.phases(),
        }
    }

    /// What is going on per resource: a download or install under way, else what its current
    /// version's state and health watch say.
    pub fn phases(&self) -> BTreeMap<String, ResourcePhase> {
        let mut out: BTreeMap<String, ResourcePhase> = self
            .state
            .resources
            .iter()
            .map(|(name, r)| {
                let phase = match r.current {
                    None if r.versions.values().any(VersionState::failed) => {
                        let v = r.versions.iter().rev().find(|(_, s)| s.failed());
                        (Phase::Failed, v.map(|(v, _)| *v))
                    }
                    None => (Phase::Idle, None),
                    Some(v) => {
                        let vs = r.versions.get(&v);
                        let restarting = self
                            .watches
                            .get(name)
                            .is_some_and(|w| w.version == v && w.restart_pending());
                        if vs.is_some_and(VersionState::failed) {
                            (Phase::Failed, Some(v))
                        } else if restarting {
                            (Phase::Restarting, Some(v))
                        } else if vs.is_some_and(|s| s.progress.installed && !s.progress.done)
                            || self.watches.get(name).is_some_and(|w| !w.proven())
                        {
                            (Phase::Watching, Some(v))
                        } else {
                            (Phase::Running, Some(v))
                        }
                    }
                };
                let (phase, version) = phase;
                let restarts = self
                    .watches
                    .get(name)
                    .filter(|w| Some(w.version) == version)
                    .map_or(0, HealthWatch::restarts);
                (
                    name.clone(),
                    ResourcePhase {
                        phase,
                        version,
                        restarts,
                        logs: self.app_logs(name),
                    },
                )
            })
            .collect();
        for (name, (phase, version)) in &self.activity {
            out.insert(
                name.clone(),
                ResourcePhase {
                    phase: *phase,
                    version: Some(*version),
                    restarts: 0,
                    logs: self.app_logs(name),
                },
            );
        }
        out
    }

    /// Where the process of `resource` logs, with a run command.
    fn app_logs(&self, resource: &str) -> Option<LogPaths> {
        self.config
            .run_command
            .is_some()
            .then(|| self.config.app_logs.paths(resource))
    }

    /// Publishes the snapshot if it changed.
    fn publish(&self) {
        if let Some(tx) = &self.snapshots {
            let now = self.snapshot();
            tx.send_if_modified(|s| {
                let changed = *s != now;
                if changed {
                    *s = now;
                }
                changed
            });
        }
    }

    /// Marks `phase` of `version` under way for `resource` (`None`: nothing under way) and publishes.
    fn set_activity(&mut self, resource: &str, activity: Option<(Phase, u64)>) {
        match activity {
            Some(a) => self.activity.insert(resource.to_string(), a),
            None => self.activity.remove(resource),
        };
        self.publish();
    }

    /// Watches the health of each current version that has a health port or a process.
    fn watch_current(&mut self) {
        let now = self.config.clock.wall_ms();
        let has_process = self.config.run_command.is_some();
        for (name, r) in &self.state.resources {
            let Some(v) = r.current else { continue };
            let Some(vs) = r.versions.get(&v) else {
                continue;
            };
            if vs.progress.installed && !vs.failed() && (vs.health_port.is_some() || has_process) {
                self.watches
                    .insert(name.clone(), HealthWatch::new(v, now, vs.progress.done));
            }
        }
    }

    /// What is held (tests inspect it).
    #[cfg(test)]
    pub fn state(&self) -> &AgentState {
        &self.state
    }

    /// The body of `POST /v1/nodes/{id}/report`. With a run command, each resource it holds names its
    /// app's stdout log (an absolute path: `--state-dir` is made absolute at start); the server stores
    /// it only when it changes.
    pub fn report_body(&self) -> serde_json::Value {
        let mut resources = self.state.report();
        if self.config.run_command.is_some() {
            for (name, r) in &mut resources {
                let holds = r.current.is_some() || !r.versions.is_empty();
                if holds && !r.removed && r.interested != Some(false) {
                    r.log = self.log_path(name);
                }
            }
        }
        serde_json::json!({ "active": true, "resources": resources })
    }

    /// `resource`'s stdout log as the report names it: `None` when the server would refuse the path (and
    /// with it the whole report): not UTF-8, over [`MAX_LOG_PATH_BYTES`], or holding a control character.
    fn log_path(&self, resource: &str) -> Option<String> {
        let path = self.config.app_logs.paths(resource).stdout;
        let path = path
            .to_str()
            .filter(|p| p.len() <= MAX_LOG_PATH_BYTES && !p.chars().any(char::is_control));
        if path.is_none() {
            tracing::debug!(
                resource,
                "the app's log path is not reported: not UTF-8, over {MAX_LOG_PATH_BYTES} bytes or with a control character"
            );
        }
        path.map(str::to_string)
    }

    /// `DIR/resources/<resource>`.
    pub fn resource_dir(&self, resource: &str) -> PathBuf {
        self.config.state_dir.join("resources").join(resource)
    }

    /// `DIR/resources/<resource>/<version>`.
    pub fn version_dir(&self, resource: &str, version: u64) -> PathBuf {
        self.resource_dir(resource).join(version.to_string())
    }

    /// The actions the targets call for now.
    pub fn plan(&self, targets: &BTreeMap<String, Target>) -> Vec<Action> {
        plan(
            &self.state,
            targets,
            self.config.clock.wall_ms(),
            self.config.retry.as_millis() as u64,
        )
    }

    /// Plans and carries out the actions for `targets`, then checks health and supervises processes.
    pub async fn step(
        &mut self,
        targets: &BTreeMap<String, Target>,
        views: &BTreeMap<String, ResourceDoc>,
    ) {
        self.state.note_targets(targets);
        for action in self.plan(targets) {
            self.act(&action, views).await;
        }
        self.supervise().await;
        self.check_health().await;
        self.save();
    }

    /// Carries out one action; failures are recorded on the version, never raised.
    pub async fn act(&mut self, action: &Action, views: &BTreeMap<String, ResourceDoc>) {
        let (resource, version) = (action.resource(), action.version());
        if !valid_name(resource) {
            tracing::warn!(
                resource,
                "refusing a resource name that is not a safe directory name"
            );
            return;
        }
        if self
            .state
            .version(resource, version)
            .is_some_and(VersionState::failed)
            && !matches!(action, Action::Retry { .. } | Action::Uninstall { .. })
        {
            return;
        }
        let doc = views
            .get(resource)
            .and_then(|d| d.versions.iter().find(|v| v.version == version));
        match action {
            Action::Retry { .. } => self.retry(resource, version),
            Action::Download { .. } => match doc {
                Some(doc) => self.download(resource, doc).await,
                None => {
                    tracing::warn!(resource, version, "version not published on the server yet")
                }
            },
            Action::Install { .. } => {
                self.install(resource, version, doc.and_then(|d| d.health_port))
                    .await
            }
            Action::Uninstall { .. } => self.uninstall(resource).await,
        }
        self.save();
    }

    fn retry(&mut self, resource: &str, version: u64) {
        let artifact = self.version_dir(resource, version).join(ARTIFACT);
        let vs = self.state.version_mut(resource, version);
        tracing::info!(resource, version, error = ?vs.progress.error, "retrying a failed version");
        let keep = vs.progress.downloaded && (!vs.has_artifact || artifact.exists());
        *vs = VersionState {
            progress: VersionProgress {
                downloaded: keep,
                ..VersionProgress::default()
            },
            has_artifact: vs.has_artifact && keep,
            health_port: vs.health_port,
            ..VersionState::default()
        };
    }

    async fn download(&mut self, resource: &str, doc: &VersionDoc) {
        let version = doc.version;
        let dir = self.version_dir(resource, version);
        let result = match &doc.artifact {
            None => std::fs::create_dir_all(&dir)
                .map(|_| false)
                .map_err(|e| e.to_string()),
            Some(artifact) => {
                self.set_activity(resource, Some((Phase::Downloading, version)));
                let attempts = self.config.download_attempts.max(1);
                let mut attempt = 1;
                let result = loop {
                    tracing::info!(resource, version, url = %shown_url(&artifact.url), attempt, "downloading");
                    match fetch(
                        &self.http,
                        artifact,
                        &dir,
                        self.config.download_stall,
                        &self.config.sources,
                    )
                    .await
                    {
                        Ok(_) => break Ok(true),
                        Err(e) if e.transient() && attempt < attempts => {
                            let wait = self
                                .config
                                .download_backoff
                                .saturating_mul(1 << (attempt - 1).min(16))
                                .min(DOWNLOAD_BACKOFF_MAX);
                            tracing::warn!(resource, version, attempt, error = %e, retry_in_ms = wait.as_millis() as u64, "download attempt failed");
                            tokio::time::sleep(wait).await;
                            attempt += 1;
                        }
                        Err(e) => break Err(e.to_string()),
                    }
                };
                self.set_activity(resource, None);
                result
            }
        };
        let vs = self.state.version_mut(resource, version);
        vs.health_port = doc.health_port;
        match result {
            Ok(has_artifact) => {
                vs.progress.downloaded = true;
                vs.has_artifact = has_artifact;
                tracing::info!(resource, version, has_artifact, "downloaded");
            }
            Err(e) => {
                tracing::warn!(resource, version, error = %e, "download failed");
                metrics().failure(Failure::Download);
                vs.progress.downloaded = false;
                vs.fail(e, self.config.clock.wall_ms());
            }
        }
    }

    async fn install(&mut self, resource: &str, version: u64, health_port: Option<u16>) {
        let vdir = self.version_dir(resource, version);
        let artifact = vdir.join(ARTIFACT);
        if !self
            .state
            .version(resource, version)
            .is_some_and(|v| v.progress.downloaded)
        {
            tracing::debug!(resource, version, "not downloaded (yet): install waits");
            return;
        }
        let vs = self.state.version_mut(resource, version);
        if vs.has_artifact && !artifact.exists() {
            tracing::warn!(
                resource,
                version,
                "artifact missing: downloading it again before install"
            );
            vs.progress.downloaded = false;
            vs.has_artifact = false;
            return;
        }
        let port = health_port.or(vs.health_port);
        vs.health_port = port;
        vs.progress.installed = false;
        vs.progress.done = false;
        vs.progress.error = None;
        vs.progress.healthy = None;
        let previous = self.state.current(resource);
        tracing::info!(resource, version, ?previous, "installing");
        self.set_activity(resource, Some((Phase::Installing, version)));
        let installed = match &self.config.install_command {
            Some(command) => {
                let env = self.env(resource, version, &artifact, port);
                run_install_command(command, &env, &vdir, self.config.install_timeout).await
            }
            None => switch_current(&self.resource_dir(resource), version)
                .map_err(|e| format!("cannot switch current: {e}")),
        };
        self.activity.remove(resource);
        metrics().install(installed.is_ok());
        if let Err(e) = installed {
            tracing::warn!(resource, version, error = %e, "install failed");
            metrics().failure(Failure::Install);
            self.state
                .version_mut(resource, version)
                .fail(e, self.config.clock.wall_ms());
            return;
        }
        if let Some(prev) = previous.filter(|p| *p != version) {
            if let Some(p) = self
                .state
                .resources
                .get_mut(resource)
                .and_then(|r| r.versions.get_mut(&prev))
            {
                p.progress.installed = false;
            }
        }
        self.state
            .resources
            .entry(resource.to_string())
            .or_default()
            .current = Some(version);
        let watched = port.is_some() || self.config.run_command.is_some();
        let now = self.config.clock.wall_ms();
        let vs = self.state.version_mut(resource, version);
        vs.progress.installed = true;
        vs.installed_at_ms = Some(now);
        vs.finished_at_ms = None;
        vs.progress.healthy = Some(!watched);
        vs.progress.done = !watched;
        if watched {
            self.watches
                .insert(resource.to_string(), HealthWatch::new(version, now, false));
        } else {
            self.watches.remove(resource);
        }
        self.save();
        if self.config.run_command.is_some() {
            self.restart_process(resource, version).await;
        }
        tracing::info!(resource, version, "installed");
    }

    /// The variables of an install or run command.
    pub(super) fn env<'a>(
        &'a self,
        resource: &'a str,
        version: u64,
        artifact: &'a Path,
        port: Option<u16>,
    ) -> InstallEnv<'a> {
        InstallEnv {
            resource,
            version,
            artifact,
            state_dir: &self.config.state_dir,
            health_port: port,
        }
    }

    /// Brings state in line with the `current` links after a crash between a switch and a save.
    fn reconcile(&mut self) {
        if self.config.install_command.is_some() {
            return;
        }
        let names: Vec<String> = self.state.resources.keys().cloned().collect();
        for name in names {
            let Some(linked) = read_current(&self.resource_dir(&name)) else {
                continue;
            };
            let r = self.state.resources.get_mut(&name).expect("listed");
            if r.current == Some(linked)
                || !r
                    .versions
                    .get(&linked)
                    .is_some_and(|v| v.progress.downloaded)
            {
                continue;
            }
            tracing::warn!(resource = %name, linked, recorded = ?r.current, "current link and state differ: following the link");
            if let Some(prev) = r.current.and_then(|p| r.versions.get_mut(&p)) {
                prev.progress.installed = false;
            }
            r.current = Some(linked);
            let vs = r.versions.get_mut(&linked).expect("checked");
            let port = vs.health_port;
            vs.progress = VersionProgress {
                downloaded: true,
                installed: true,
                done: port.is_none(),
                error: None,
                healthy: Some(port.is_none()),
            };
            vs.installed_at_ms = Some(self.config.clock.wall_ms());
        }
        self.save();
    }

    /// Writes `state.json` if it changed (a failure is logged; the next step tries again) and
    /// publishes the snapshot.
    pub fn save(&mut self) {
        if self.saved.as_ref() != Some(&self.state) {
            match self.state.save(&self.config.state_dir.join("state.json")) {
                Ok(()) => self.saved = Some(self.state.clone()),
                Err(e) => tracing::error!(error = %e, "cannot write state.json"),
            }
        }
        self.publish();
    }
}
