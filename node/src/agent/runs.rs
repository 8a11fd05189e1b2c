//! Supervision of the `--run-command` processes: one per resource, started after install, torn
//! down (Aurora's escalation) when another version replaces it, when the health rules say so, or
//! when the agent stops; an exited process is started again after the rules' backoff.
//!
//! Each process is recorded in `state.json` (pid and start time) as soon as it started and forgotten
//! once torn down, so an agent killed and started again re-attaches to the copy still running
//! ([`Executor::adopt`]) instead of starting a second one: exactly one copy runs. Its stdout and
//! stderr go to its log files (`app_log`), which outlive the agent; a start that fails quotes the
//! end of its stderr.

use std::process::Stdio;

use super::executor::Executor;
use super::fetch::ARTIFACT;
use super::health_policy::HealthWatch;
use super::metrics::Failure;
use super::proc_stat;
use super::process::{spawn, teardown, Handle, RunningProcess, Stopped};

impl Executor {
    /// Re-attaches to the processes an earlier run of the agent recorded and that still run (same
    /// pid, same start time); forgets the records of the others. Called once, at start.
    pub(super) fn adopt(&mut self) {
        for (name, r) in self.state.resources.iter_mut() {
            let Some(rec) = r.running.clone() else {
                continue;
            };
            if !proc_stat::same_and_running(rec.pid, rec.start_ticks) {
                tracing::info!(resource = %name, version = rec.version, pid = rec.pid, "the process recorded as running is gone");
                r.running = None;
                continue;
            }
            tracing::info!(resource = %name, version = rec.version, pid = rec.pid, "re-attached to the process still running");
            let health_port = r.versions.get(&rec.version).and_then(|v| v.health_port);
            let stderr_from = self.config.app_logs.stderr_len(name);
            self.processes.insert(
                name.clone(),
                RunningProcess {
                    version: rec.version,
                    health_port,
                    handle: Handle::Adopted {
                        pid: rec.pid,
                        start_ticks: rec.start_ticks,
                    },
                    stderr_from,
                },
            );
        }
        self.save();
    }

    /// Records the resource's process in `state.json` now (`None`: it has none), so that it is
    /// found again after a crash of the agent.
    fn record(&mut self, resource: &str) {
        let record = self
            .processes
            .get(resource)
            .and_then(RunningProcess::record);
        if let Some(r) = self.state.resources.get_mut(resource) {
            r.running = record;
        }
        self.save();
    }

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
        let logs = self.config.app_logs.clone();
        logs.rotate(resource);
        let stderr_from = logs.stderr_len(resource);
        let spawned = logs.open(resource).and_then(|(out, err)| {
            spawn(
                &command,
                &self.env(resource, version, &artifact, port),
                &vdir,
                Stdio::from(out),
                Stdio::from(err),
            )
        });
        match spawned {
            Ok(mut p) => {
                tracing::info!(resource, version, pid = ?p.handle.pid(), "run command started");
                p.stderr_from = stderr_from;
                self.processes.insert(resource.to_string(), p);
                self.record(resource);
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
                super::metrics::metrics().failure(Failure::Start);
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

    /// Tears down the resource's process, if it runs one, and forgets its record.
    pub(super) async fn stop_process(&mut self, resource: &str) -> Option<Stopped> {
        let mut p = self.processes.remove(resource)?;
        let stopped = teardown(&mut p.handle, p.health_port, &self.config.teardown).await;
        tracing::info!(resource, version = p.version, ?stopped, "process torn down");
        self.record(resource);
        Some(stopped)
    }

    /// Starts the process of an installed current version that has none (after install or an
    /// agent restart); a process that exited goes to the health rules, which restart it after a
    /// backoff, fail the version or, by the restart policy, call it finished (never started again). A process of a resource that no longer wants one (another
    /// version current, nothing current, no run command) is torn down; logs past their cap rotate.
    pub(super) async fn supervise(&mut self) {
        let wanted: Vec<(String, u64, bool)> = self
            .state
            .resources
            .iter()
            .filter(|_| self.config.run_command.is_some())
            .filter_map(|(name, r)| {
                let v = r.current?;
                let vs = r.versions.get(&v)?;
                (vs.progress.installed && !vs.failed() && vs.finished_at_ms.is_none())
                    .then(|| (name.clone(), v, vs.progress.done))
            })
            .collect();
        let stale: Vec<String> = self
            .processes
            .keys()
            .filter(|name| !wanted.iter().any(|(w, _, _)| w == *name))
            .cloned()
            .collect();
        for name in stale {
            tracing::info!(resource = %name, "its process is not wanted any more");
            self.stop_process(&name).await;
        }
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
                Some(p) if p.version == version => match p.handle.exit_status() {
                    None => {
                        self.config.app_logs.rotate(&resource);
                        continue;
                    }
                    Some((status, success)) => {
                        let said = self.config.app_logs.stderr_tail(&resource, p.stderr_from);
                        Some(if said.is_empty() || success {
                            (status, success)
                        } else {
                            (format!("{status}; its stderr ends: {said}"), success)
                        })
                    }
                },
                _ => None,
            };
            match status {
                Some((status, success)) => {
                    self.processes.remove(&resource);
                    self.record(&resource);
                    let decision = self
                        .watches
                        .get_mut(&resource)
                        .map(|w| w.exited(now, &status, success, &rules));
                    if let Some(decision) = decision {
                        self.apply(&resource, version, decision, Failure::Exited)
                            .await;
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
