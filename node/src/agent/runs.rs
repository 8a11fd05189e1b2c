//! Supervision of the `--run-command` processes: one per resource, started after install, torn
//! down (Aurora's escalation) when another version replaces it or the agent stops.

use super::executor::Executor;
use super::fetch::ARTIFACT;
use super::process::{spawn, teardown, Stopped};
use super::state::now_ms;

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
            }
            Err(e) => {
                tracing::warn!(resource, version, error = %e, "run command could not start");
                let vs = self.state.version_mut(resource, version);
                vs.fail(format!("run command could not start: {e}"), now_ms());
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

    /// Starts the process of an installed current version that has none (after an agent restart),
    /// and deals with processes that exited: before the version is done that is a failure of the
    /// version; after, the process is started again.
    pub(super) async fn supervise(&mut self) {
        if self.config.run_command.is_none() {
            return;
        }
        let wanted: Vec<(String, u64)> = self
            .state
            .resources
            .iter()
            .filter_map(|(name, r)| {
                let v = r.current?;
                let vs = r.versions.get(&v)?;
                (vs.installed && !vs.failed()).then(|| (name.clone(), v))
            })
            .collect();
        for (resource, version) in wanted {
            let status = match self.processes.get_mut(&resource) {
                Some(p) if p.version == version => match p.child.try_wait() {
                    Ok(None) => continue,
                    Ok(Some(status)) => Some(status.to_string()),
                    Err(e) => Some(e.to_string()),
                },
                _ => None,
            };
            let done = self
                .state
                .version(&resource, version)
                .is_some_and(|v| v.done);
            match status {
                Some(status) if !done => {
                    tracing::warn!(resource, version, %status, "run command exited before the version was healthy");
                    self.processes.remove(&resource);
                    let vs = self.state.version_mut(&resource, version);
                    vs.healthy = Some(false);
                    vs.fail(format!("run command exited: {status}"), now_ms());
                }
                Some(status) => {
                    tracing::warn!(resource, version, %status, "run command exited: starting it again");
                    self.restart_process(&resource, version).await;
                }
                None => self.restart_process(&resource, version).await,
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
