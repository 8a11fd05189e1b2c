//! The agent's imperative shell for one node: carries out the planned actions (download, install,
//! rollback), health-checks the current versions, runs their processes, and keeps `state.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use convoy_actors::domain::Target;

pub use super::config::{AgentConfig, ResourceDoc, VersionDoc};
use super::fetch::{fetch, ARTIFACT};
use super::health;
use super::install::{read_current, run_install_command, switch_current, InstallEnv};
use super::plan::{plan, valid_name, Action};
use super::process::RunningProcess;
use super::state::{now_ms, AgentState, VersionState};

/// The agent's state and the processes it runs.
pub struct Executor {
    pub(super) config: AgentConfig,
    pub(super) state: AgentState,
    pub(super) processes: BTreeMap<String, RunningProcess>,
    http: reqwest::Client,
}

impl Executor {
    /// Opens `state_dir` (creating it), loads `state.json` and reconciles it with the `current` links.
    pub fn open(config: AgentConfig) -> anyhow::Result<Self> {
        std::fs::create_dir_all(config.state_dir.join("resources"))?;
        let state = AgentState::load(&config.state_dir.join("state.json"))?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()?;
        let mut ex = Self {
            config,
            state,
            processes: BTreeMap::new(),
            http,
        };
        ex.reconcile();
        Ok(ex)
    }

    /// What is held (tests inspect it).
    #[cfg(test)]
    pub fn state(&self) -> &AgentState {
        &self.state
    }

    /// The body of `POST /v1/nodes/{id}/report`.
    pub fn report_body(&self) -> serde_json::Value {
        serde_json::json!({ "active": true, "resources": self.state.report() })
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
            now_ms(),
            self.config.retry.as_millis() as u64,
        )
    }

    /// Plans and carries out the actions for `targets`, then checks health and supervises processes.
    pub async fn step(
        &mut self,
        targets: &BTreeMap<String, Target>,
        views: &BTreeMap<String, ResourceDoc>,
    ) {
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
            && !matches!(action, Action::Retry { .. })
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
        }
        self.save();
    }

    fn retry(&mut self, resource: &str, version: u64) {
        let artifact = self.version_dir(resource, version).join(ARTIFACT);
        let vs = self.state.version_mut(resource, version);
        tracing::info!(resource, version, error = ?vs.error, "retrying a failed version");
        let keep = vs.downloaded && (!vs.has_artifact || artifact.exists());
        *vs = VersionState {
            downloaded: keep,
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
                tracing::info!(resource, version, url = %artifact.url, "downloading");
                fetch(&self.http, artifact, &dir)
                    .await
                    .map(|_| true)
                    .map_err(|e| e.to_string())
            }
        };
        let vs = self.state.version_mut(resource, version);
        vs.health_port = doc.health_port;
        match result {
            Ok(has_artifact) => {
                vs.downloaded = true;
                vs.has_artifact = has_artifact;
                tracing::info!(resource, version, has_artifact, "downloaded");
            }
            Err(e) => {
                tracing::warn!(resource, version, error = %e, "download failed");
                vs.downloaded = false;
                vs.fail(e, now_ms());
            }
        }
    }

    async fn install(&mut self, resource: &str, version: u64, health_port: Option<u16>) {
        let vdir = self.version_dir(resource, version);
        let artifact = vdir.join(ARTIFACT);
        if !self
            .state
            .version(resource, version)
            .is_some_and(|v| v.downloaded)
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
            vs.downloaded = false;
            vs.has_artifact = false;
            return;
        }
        let port = health_port.or(vs.health_port);
        vs.health_port = port;
        vs.installed = false;
        vs.done = false;
        vs.error = None;
        vs.healthy = None;
        let previous = self.state.current(resource);
        tracing::info!(resource, version, ?previous, "installing");
        let installed = match &self.config.install_command {
            Some(command) => {
                let env = self.env(resource, version, &artifact, port);
                run_install_command(command, &env, &vdir, self.config.install_timeout).await
            }
            None => switch_current(&self.resource_dir(resource), version)
                .map_err(|e| format!("cannot switch current: {e}")),
        };
        if let Err(e) = installed {
            tracing::warn!(resource, version, error = %e, "install failed");
            self.state.version_mut(resource, version).fail(e, now_ms());
            return;
        }
        if let Some(prev) = previous.filter(|p| *p != version) {
            if let Some(p) = self
                .state
                .resources
                .get_mut(resource)
                .and_then(|r| r.versions.get_mut(&prev))
            {
                p.installed = false;
            }
        }
        self.state
            .resources
            .entry(resource.to_string())
            .or_default()
            .current = Some(version);
        let vs = self.state.version_mut(resource, version);
        vs.installed = true;
        vs.installed_at_ms = Some(now_ms());
        vs.healthy = Some(port.is_none());
        vs.done = port.is_none();
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

    /// Health-checks every installed current version that declares a port (unless snoozed).
    pub async fn check_health(&mut self) {
        let due: Vec<(String, u64, u16)> = self
            .state
            .resources
            .iter()
            .filter_map(|(name, r)| {
                let v = r.current?;
                let vs = r.versions.get(&v)?;
                let port = vs.health_port?;
                (vs.installed && !vs.failed()).then(|| (name.clone(), v, port))
            })
            .collect();
        for (resource, version, port) in due {
            if health::snoozed(
                &self.resource_dir(&resource),
                &self.version_dir(&resource, version),
            ) {
                tracing::debug!(resource, version, "health checks snoozed");
                continue;
            }
            let result = health::check(&self.http, port, self.config.health_timeout).await;
            let grace = self.config.health_grace.as_millis() as u64;
            let now = now_ms();
            let vs = self.state.version_mut(&resource, version);
            match result {
                Ok(()) => {
                    if vs.healthy != Some(true) {
                        tracing::info!(resource, version, "healthy");
                    }
                    vs.healthy = Some(true);
                    vs.done = true;
                }
                Err(e) => {
                    if vs.healthy != Some(false) || !vs.done {
                        tracing::warn!(resource, version, error = %e, "unhealthy");
                    }
                    vs.healthy = Some(false);
                    let since = now.saturating_sub(vs.installed_at_ms.unwrap_or(now));
                    if !vs.done && since >= grace {
                        vs.fail(format!("health check failed: {e}"), now);
                    }
                }
            }
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
            if r.current == Some(linked) || !r.versions.get(&linked).is_some_and(|v| v.downloaded) {
                continue;
            }
            tracing::warn!(resource = %name, linked, recorded = ?r.current, "current link and state differ: following the link");
            if let Some(prev) = r.current.and_then(|p| r.versions.get_mut(&p)) {
                prev.installed = false;
            }
            r.current = Some(linked);
            let vs = r.versions.get_mut(&linked).expect("checked");
            let port = vs.health_port;
            *vs = VersionState {
                downloaded: true,
                installed: true,
                done: port.is_none(),
                healthy: Some(port.is_none()),
                installed_at_ms: Some(now_ms()),
                ..vs.clone()
            };
            vs.error = None;
        }
        self.save();
    }

    /// Writes `state.json`; a failure is logged (the next step tries again).
    pub fn save(&self) {
        if let Err(e) = self.state.save(&self.config.state_dir.join("state.json")) {
            tracing::error!(error = %e, "cannot write state.json");
        }
    }
}
