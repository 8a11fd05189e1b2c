//! The agent's settings and the lenient view of published versions it reads from the API.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use convoy_actors::domain::Artifact;
use serde::Deserialize;

use convoy_time::SharedClock;

use super::app_log::AppLogs;
use super::fetch::Sources;
use super::health_policy::HealthRules;
use super::process::TeardownTimes;

/// `GET /v1/resources/{name}`, read leniently: only what the agent needs.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ResourceDoc {
    /// Every published version of the resource, oldest first; empty when the answer has none.
    #[serde(default)]
    pub versions: Vec<VersionDoc>,
}

/// One published version, as the agent needs it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct VersionDoc {
    /// Its number: 1, 2, ... per resource.
    pub version: u64,
    /// What to download, if anything.
    #[serde(default)]
    pub artifact: Option<Artifact>,
    /// The port of its `/health`, `/quitquitquit`, `/abortabortabort`.
    #[serde(default)]
    pub health_port: Option<u16>,
}

/// How the agent installs and checks versions.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Where versions and `state.json` live.
    pub state_dir: PathBuf,
    /// Run via `sh -c` to install a version instead of switching `current`.
    pub install_command: Option<String>,
    /// Run via `sh -c` after install, torn down when another version replaces it.
    pub run_command: Option<String>,
    /// Aurora's health rules: interval, grace, failures tolerated, restarts and their backoff, snooze.
    pub health: HealthRules,
    /// Timeout of one health check.
    pub health_timeout: Duration,
    /// A download that receives no byte for this long fails.
    pub download_stall: Duration,
    /// Attempts of a download that fails on the way (stall, connection, HTTP status) before the
    /// version is reported failed.
    pub download_attempts: u32,
    /// Wait before the second attempt; doubled for each further one.
    pub download_backoff: Duration,
    /// Timeout of the install command.
    pub install_timeout: Duration,
    /// Wait before a failed version that is still targeted is tried again.
    pub retry: Duration,
    /// Waits of the run command's teardown: after /quitquitquit, /abortabortabort, SIGTERM and
    /// SIGKILL.
    pub teardown: TeardownTimes,
    /// Resources this node does not want (reported `interested: false`; the server has them removed).
    pub uninterested: BTreeSet<String>,
    /// Where artifacts may come from (`--artifact-root`, `--allow-http`).
    pub sources: Sources,
    /// The apps' log files: where, how big, how many kept.
    pub app_logs: AppLogs,
    /// Where the agent reads the time (failures, restarts, health watches, status file).
    pub clock: SharedClock,
}

impl AgentConfig {
    /// Defaults for `state_dir` (what the flags default to).
    pub fn new(state_dir: PathBuf) -> Self {
        Self {
            app_logs: AppLogs::new(&state_dir),
            state_dir,
            install_command: None,
            run_command: None,
            health: HealthRules::default(),
            health_timeout: Duration::from_secs(2),
            download_stall: Duration::from_secs(30),
            download_attempts: 3,
            download_backoff: Duration::from_secs(1),
            install_timeout: Duration::from_secs(600),
            retry: Duration::from_secs(10),
            teardown: TeardownTimes::with_graceful(Duration::from_secs(5)),
            uninterested: BTreeSet::new(),
            sources: Sources::default(),
            clock: convoy_time::system(),
        }
    }
}
