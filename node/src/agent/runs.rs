//! Supervision of the `--run-command` processes: one per resource, started after install, torn
//! down (Aurora's escalation) when another version replaces it, when the health rules say so, or
//! when the agent stops; an exited process is started again after the rules' backoff.

use super::executor::Executor;
use super::fetch::ARTIFACT;
use super::health_policy::HealthWatch;
use super::process::{spawn, teardown, Stopped};

impl Executor {
    /// Tears down the resource's process (if any) and starts the run command for `version`.
    pub(super) async fn restart_process(&mut self, resource: &str, version: u64) {
        self.stop_process(resource).await;
        let Some(command) = self.config.run_command.clone() else {
            return;
        };
        let vdir = self.version_dir(resource, version);
        let artifact = vdir.join(ARTIFACT);
        let port = self
            .state
            .version(resource, version)
            .and_then(|v| v.health_port);
        let spawned = spawn(
            &command,
            &self.env(resource, version, &artifact, port),
            &vdir,
        );
        match spawned {
            Ok(p) => {
                tracing::info!(resource, version, pid = ?p.child.id(), "run command started");
                self.processes.insert(resource.to_string(), p);
                if let Some(w) = self
                    .watches
                    .get_mut(resource)
                    .filter(|w| w.version == version)
                {
                    w.started(self.config.clock.wall_ms());
                }
            }
            Err(e) => {
                tracing::warn!(resource, version, error = %e, "run command could not start");
                self.watches.remove(resource);
                let vs = self.state.version_mut(resource, version);
                vs.progress.healthy = Some(false);
                vs.fail(
                    format!("run command could not start: {e}"),
                    self.config.clock.wall_ms(),
                );
            }
        }
    }

    /// Tears down the resource's process, if it runs one.
    pub(super) async fn stop_process(&mut self, resource: &str) -> Option<Stopped> {
        let mut p = self.processes.remove(resource)?;
        let stopped = teardown(&mut p.child, p.health_port, &self.config.teardown).await;
        tracing::info!(resource, version = p.version, ?stopped, "process torn down");
        Some(stopped)
    }

    /// Starts the process of an installed current version that has none (after install or an
    /// agent restart); a process that exited goes to the health rules, which restart it after a
    /// backoff or fail the version.
    pub(super) async fn supervise(&mut self) {
        if self.config.run_command.is_none() {
            return;
        }
        let wanted: Vec<(String, u64, bool)> = self
            .state
            .resources
            .iter()
            .filter_map(|(name, r)| {
                let v = r.current?;
                let vs = r.versions.get(&v)?;
                (vs.progress.installed && !vs.failed()).then(|| (name.clone(), v, vs.progress.done))
            })
            .collect();
        let rules = self.config.health.clone();
        for (resource, version, done) in wanted {
            let now = self.config.clock.wall_ms();
            let watch = self
                .watches
                .entry(resource.clone())
                .or_insert_with(|| HealthWatch::new(version, now, done));
            if watch.version != version {
                *watch = HealthWatch::new(version, now, done);
            }
            let status = match self.processes.get_mut(&resource) {
                Some(p) if p.version == version => match p.child.try_wait() {
                    Ok(None) => continue,
                    Ok(Some(status)) => Some(status.to_string()),
                    Err(e) => Some(e.to_string()),
                },
                _ => None,
            };
            match status {
                Some(status) => {
                    self.processes.remove(&resource);
                    let decision = self
                        .watches
                        .get_mut(&resource)
                        .map(|w| w.exited(now, &status, &rules));
                    if let Some(decision) = decision {
                        self.apply(&resource, version, decision).await;
                    }
                }
                None => {
                    let start = self
                        .watches
                        .get(&resource)
                        .is_none_or(|w| !w.restart_pending() || w.restart_due(now));
                    if start {
                        self.restart_process(&resource, version).await;
                    }
                }
            }
        }
    }

    /// Tears down every process (agent shutdown).
    pub async fn shutdown(&mut self) {
        let names: Vec<String> = self.processes.keys().cloned().collect();
        for name in names {
            self.stop_process(&name).await;
        }
        self.save();
    }
}
