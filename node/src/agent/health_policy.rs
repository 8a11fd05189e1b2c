//! Aurora's health rules for the version a resource runs, as a pure state machine: time comes in
//! as milliseconds, check results and process exits come in as events, decisions come out. The
//! executor does the I/O (HTTP checks, signals, spawning) and applies the decisions.
//!
//! The rules (docs/CLI.md, `convoy agent`):
//! - a check is due `interval` after the (re)start and `interval` after the previous check;
//! - during `grace` after a (re)start (Aurora's `initial_interval`) failed checks do not count;
//! - after it, up to `max_consecutive_failures` failed checks in a row are tolerated; one more
//!   makes the version unhealthy;
//! - an unhealthy version with a process, or a process that exited, is torn down and started
//!   again after a backoff that doubles from `backoff` up to `backoff_max`; the need for one
//!   restart more than `max_restarts` fails the version; the count starts again once the version
//!   has stayed healthy for `stable`;
//! - a run command that exits is judged by the restart policy (seed 002): under `on-failure` (the
//!   default) and `never` an exit with status 0 is finished (done, not restarted, not failed);
//!   `always` restarts it whatever its status; `never` fails the version on a non-zero exit;
//! - an unhealthy version without a process fails if it never passed a check, and is reported
//!   unhealthy (and checked on) if it did;
//! - while a snooze file exists, a due check is not made and counts as passed, for at most
//!   `snooze_max` from when the file was first seen; then checks resume until it is removed.

use std::time::Duration;

/// What an exited run command gets (`--restart-policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RestartPolicy {
    /// Restarted after a non-zero exit; an exit with status 0 is finished.
    #[default]
    OnFailure,
    /// Restarted after every exit.
    Always,
    /// Never restarted: an exit with status 0 is finished, any other fails the version.
    Never,
}

/// The knobs of the rules (flags of `convoy agent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthRules {
    /// What an exited run command gets.
    pub restart: RestartPolicy,
    /// Between two checks (Aurora's `interval_secs`).
    pub interval: Duration,
    /// After a (re)start, failed checks do not count for this long (Aurora's `initial_interval_secs`).
    pub grace: Duration,
    /// Failed checks in a row tolerated after the grace (Aurora's `max_consecutive_failures`).
    pub max_consecutive_failures: u32,
    /// Restarts allowed before the version is failed.
    pub max_restarts: u32,
    /// Wait before the first restart; doubled for each further one.
    pub backoff: Duration,
    /// The longest wait before a restart.
    pub backoff_max: Duration,
    /// Healthy this long in a row, the restart count starts again from zero.
    pub stable: Duration,
    /// The longest a snooze file suspends checks.
    pub snooze_max: Duration,
}

impl Default for HealthRules {
    /// The flags' defaults.
    fn default() -> Self {
        Self {
            restart: RestartPolicy::OnFailure,
            interval: Duration::from_secs(1),
            grace: Duration::from_secs(30),
            max_consecutive_failures: 3,
            max_restarts: 5,
            backoff: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            stable: Duration::from_secs(300),
            snooze_max: Duration::from_secs(3600),
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The outcome of one health check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// `/health` answered `ok` (or, without a health port, the process was running).
    Passed,
    /// It did not; why.
    Failed(String),
    /// Not made: a snooze file suspends checks (counts as passed).
    Snoozed,
}

/// What the executor must do after an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to do or report: a pass while healthy, a failure inside the grace or (while
    /// unhealthy) within `max_consecutive_failures`, or any event after the version failed.
    Keep,
    /// The first passed check: the version is done and healthy.
    Proven,
    /// Healthy again after being unhealthy.
    Recovered,
    /// A failed check, tolerated: `failures` in a row so far.
    Tolerated {
        /// Failed checks in a row.
        failures: u32,
        /// Why the last one failed.
        reason: String,
    },
    /// Unhealthy, with no process to restart: report it and keep checking.
    Unhealthy(String),
    /// Tear the process down (if it still runs) and start it again at `at_ms`.
    Restart {
        /// When to start it again.
        at_ms: u64,
        /// Restarts so far, this one included.
        restarts: u32,
        /// Why it restarts: the failed health check, or the run command's exit status.
        reason: String,
    },
    /// The version failed for good: tear its process down and report this error.
    Fail(String),
    /// The run command exited with status 0 and the policy does not restart it: the version is done,
    /// not failed, and its process is not started again.
    Finished,
}

/// The health of the version a resource runs: what the rules need to remember.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthWatch {
    /// The version watched.
    pub version: u64,
    /// When the process (or, without one, the install) last started; the grace counts from here.
    started_ms: u64,
    /// The version passed a check once (it is done); kept across restarts.
    proven: bool,
    /// Healthy now (what is reported).
    healthy: bool,
    /// Since when healthy without a break; `None` while not healthy.
    healthy_since_ms: Option<u64>,
    /// Failed checks in a row that counted (after the grace).
    failures: u32,
    /// When the last check was made (or snoozed); `None` since the (re)start.
    last_check_ms: Option<u64>,
    /// Restarts made (or scheduled).
    restarts: u32,
    /// The process is down and is to be started again at this time.
    restart_at_ms: Option<u64>,
    /// When the present snooze file was first seen.
    snooze_since_ms: Option<u64>,
    /// Failed for good, or finished: nothing more is checked or restarted.
    failed: bool,
}

impl HealthWatch {
    /// Watches `version`, (re)started at `now_ms`; `proven` when it was done before (an agent restart).
    pub fn new(version: u64, now_ms: u64, proven: bool) -> Self {
        Self {
            version,
            started_ms: now_ms,
            proven,
            healthy: proven,
            healthy_since_ms: proven.then_some(now_ms),
            failures: 0,
            last_check_ms: None,
            restarts: 0,
            restart_at_ms: None,
            snooze_since_ms: None,
            failed: false,
        }
    }

    /// Passed a check once (it is done).
    pub fn proven(&self) -> bool {
        self.proven
    }

    /// Healthy now (what is reported): set by a passed check, cleared once failures run past
    /// `max_consecutive_failures` or the process exits.
    pub fn healthy(&self) -> bool {
        self.healthy
    }

    /// Failed for good.
    #[cfg(test)]
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Restarts made so far.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// The process is down, waiting for its restart.
    pub fn restart_pending(&self) -> bool {
        self.restart_at_ms.is_some()
    }

    /// A check is due: not failed, not waiting for a restart, and `interval` passed since the
    /// (re)start or the last check.
    pub fn check_due(&self, now_ms: u64, rules: &HealthRules) -> bool {
        let since = self.last_check_ms.unwrap_or(self.started_ms);
        !self.failed
            && self.restart_at_ms.is_none()
            && now_ms >= since.saturating_add(ms(rules.interval))
    }

    /// The process is to be started again now.
    pub fn restart_due(&self, now_ms: u64) -> bool {
        !self.failed && self.restart_at_ms.is_some_and(|at| now_ms >= at)
    }

    /// Whether a due check is snoozed, given whether a snooze file is `present` now: yes for at
    /// most `snooze_max` from when the file was first seen; a removed file ends the snooze.
    pub fn snoozed(&mut self, now_ms: u64, present: bool, rules: &HealthRules) -> bool {
        if !present {
            self.snooze_since_ms = None;
            return false;
        }
        let since = *self.snooze_since_ms.get_or_insert(now_ms);
        now_ms.saturating_sub(since) < ms(rules.snooze_max)
    }

    /// The snooze file has outlived `snooze_max` (checks run despite it).
    pub fn snooze_expired(&self, now_ms: u64, rules: &HealthRules) -> bool {
        self.snooze_since_ms
            .is_some_and(|since| now_ms.saturating_sub(since) >= ms(rules.snooze_max))
    }

    /// The process was started (again) at `now_ms`: a new grace begins. After an exit or a
    /// teardown it stays unhealthy until a check passes; the first start after an agent restart
    /// keeps the health the version had.
    pub fn started(&mut self, now_ms: u64) {
        self.started_ms = now_ms;
        self.restart_at_ms = None;
        self.last_check_ms = None;
        self.failures = 0;
    }

    /// A check was made at `now_ms`; `has_process` says whether a process can be restarted.
    pub fn observe(
        &mut self,
        now_ms: u64,
        check: Check,
        has_process: bool,
        rules: &HealthRules,
    ) -> Decision {
        if self.failed {
            return Decision::Keep;
        }
        self.last_check_ms = Some(now_ms);
        let reason = match check {
            Check::Passed | Check::Snoozed => return self.passed(now_ms, rules),
            Check::Failed(reason) => reason,
        };
        if now_ms < self.started_ms.saturating_add(ms(rules.grace)) {
            return Decision::Keep;
        }
        self.failures += 1;
        if self.failures <= rules.max_consecutive_failures {
            return if self.healthy {
                Decision::Tolerated {
                    failures: self.failures,
                    reason,
                }
            } else {
                Decision::Keep
            };
        }
        self.failures = 0;
        self.unhealthy();
        let reason = format!("health check failed: {reason}");
        if has_process {
            self.restart(now_ms, reason, rules)
        } else if !self.proven {
            self.failed = true;
            Decision::Fail(reason)
        } else {
            Decision::Unhealthy(reason)
        }
    }

    /// The process exited at `now_ms` with `status`, with status 0 when `success`.
    pub fn exited(
        &mut self,
        now_ms: u64,
        status: &str,
        success: bool,
        rules: &HealthRules,
    ) -> Decision {
        if self.failed {
            return Decision::Keep;
        }
        if success && rules.restart != RestartPolicy::Always {
            self.failed = true;
            self.proven = true;
            self.healthy = true;
            return Decision::Finished;
        }
        self.unhealthy();
        let reason = format!("run command exited: {status}");
        if rules.restart == RestartPolicy::Never {
            self.failed = true;
            return Decision::Fail(format!("{reason} (restart policy never)"));
        }
        self.restart(now_ms, reason, rules)
    }

    fn passed(&mut self, now_ms: u64, rules: &HealthRules) -> Decision {
        self.failures = 0;
        let since = *self.healthy_since_ms.get_or_insert(now_ms);
        if self.restarts > 0 && now_ms.saturating_sub(since) >= ms(rules.stable) {
            self.restarts = 0;
        }
        let was_healthy = std::mem::replace(&mut self.healthy, true);
        if !std::mem::replace(&mut self.proven, true) {
            Decision::Proven
        } else if !was_healthy {
            Decision::Recovered
        } else {
            Decision::Keep
        }
    }

    fn unhealthy(&mut self) {
        self.healthy = false;
        self.healthy_since_ms = None;
    }

    fn restart(&mut self, now_ms: u64, reason: String, rules: &HealthRules) -> Decision {
        if self.restarts >= rules.max_restarts {
            self.failed = true;
            return Decision::Fail(format!(
                "{reason} (gave up after {} restarts)",
                self.restarts
            ));
        }
        let doubling = 1u32 << self.restarts.min(20);
        let wait = rules
            .backoff
            .saturating_mul(doubling)
            .min(rules.backoff_max);
        self.restarts += 1;
        let at_ms = now_ms.saturating_add(ms(wait));
        self.restart_at_ms = Some(at_ms);
        Decision::Restart {
            at_ms,
            restarts: self.restarts,
            reason,
        }
    }
}
