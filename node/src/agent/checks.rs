//! Health checks of the current versions, made when the rules say one is due, and the rules'
//! decisions carried out: state updated, processes torn down, versions failed.

use super::executor::Executor;
use super::health;
use super::health_policy::{Check, Decision};
use super::metrics::{metrics, Failure};

impl Executor {
    /// Checks every watched current version whose check is due: `GET /health` on its port, or
    /// without a port whether its process runs; a snooze file suspends the check (counted passed).
    pub async fn check_health(&mut self) {
        let rules = self.config.health.clone();
        let now = self.config.clock.wall_ms();
        let due: Vec<(String, u64)> = self
            .watches
            .iter()
            .filter(|(_, w)| w.check_due(now, &rules))
            .map(|(name, w)| (name.clone(), w.version))
            .collect();
        for (resource, version) in due {
            let current = self.state.current(&resource) == Some(version);
            let Some(vs) = self
                .state
                .version(&resource, version)
                .filter(|v| current && v.progress.installed && !v.failed())
            else {
                self.watches.remove(&resource);
                continue;
            };
            let port = vs.health_port;
            let present = health::snoozed(
                &self.resource_dir(&resource),
                &self.version_dir(&resource, version),
            );
            let Some(watch) = self.watches.get_mut(&resource) else {
                continue;
            };
            let check = if watch.snoozed(now, present, &rules) {
                tracing::debug!(resource, version, "health check snoozed");
                Check::Snoozed
            } else {
                if present && watch.snooze_expired(now, &rules) {
                    tracing::warn!(
                        resource,
                        version,
                        max_ms = rules.snooze_max.as_millis() as u64,
                        "snooze file older than the snooze maximum: checking anyway"
                    );
                }
                match port {
                    Some(port) => {
                        let began = std::time::Instant::now();
                        let checked =
                            health::check(&self.http, port, self.config.health_timeout).await;
                        metrics().health_check(began.elapsed());
                        match checked {
                            Ok(()) => Check::Passed,
                            Err(e) => Check::Failed(e),
                        }
                    }
                    None => {
                        let running = self
                            .processes
                            .get_mut(&resource)
                            .filter(|p| p.version == version)
                            .is_some_and(|p| p.handle.running());
                        if !running {
                            // Gone: `supervise` sees the exit and applies the rules to it.
                            continue;
                        }
                        Check::Passed
                    }
                }
            };
            let has_process = self.config.run_command.is_some();
            let Some(watch) = self.watches.get_mut(&resource) else {
                continue;
            };
            let decision = watch.observe(self.config.clock.wall_ms(), check, has_process, &rules);
            self.apply(&resource, version, decision, Failure::Unhealthy)
                .await;
        }
    }

    /// Carries out a decision of the health rules for `resource` at `version`; a failure is counted
    /// as `why`.
    pub(super) async fn apply(
        &mut self,
        resource: &str,
        version: u64,
        decision: Decision,
        why: Failure,
    ) {
        let healthy = self.watches.get(resource).map(|w| w.healthy());
        let vs = self.state.version_mut(resource, version);
        if let Some(healthy) = healthy {
            vs.progress.healthy = Some(healthy);
        }
        match decision {
            Decision::Keep => {}
            Decision::Proven => {
                vs.progress.done = true;
                tracing::info!(resource, version, "healthy: version done");
            }
            Decision::Recovered => tracing::info!(resource, version, "healthy again"),
            Decision::Tolerated { failures, reason } => {
                let max = self.config.health.max_consecutive_failures;
                tracing::warn!(resource, version, failures, max, error = %reason, "health check failed (tolerated)");
            }
            Decision::Unhealthy(reason) => {
                tracing::warn!(resource, version, error = %reason, "unhealthy")
            }
            Decision::Restart {
                at_ms,
                restarts,
                reason,
            } => {
                let wait_ms = at_ms.saturating_sub(self.config.clock.wall_ms());
                tracing::warn!(resource, version, restarts, max = self.config.health.max_restarts, wait_ms, error = %reason, "restarting the process after a backoff");
                self.stop_process(resource).await;
            }
            Decision::Finished => {
                tracing::info!(
                    resource,
                    version,
                    "run command exited 0: finished, not restarted"
                );
                vs.progress.done = true;
                vs.progress.healthy = Some(true);
                vs.finished_at_ms = Some(self.config.clock.wall_ms());
                self.watches.remove(resource);
            }
            Decision::Fail(reason) => {
                tracing::warn!(resource, version, error = %reason, "version failed");
                metrics().failure(why);
                vs.fail(reason, self.config.clock.wall_ms());
                vs.progress.healthy = Some(false);
                self.watches.remove(resource);
                self.stop_process(resource).await;
            }
        }
        self.save();
    }
}
