//! A resource's process (`--run-command`) and Aurora's teardown escalation: POST /quitquitquit,
//! wait, POST /abortabortabort, wait, SIGTERM, wait, SIGKILL — stopping as soon as it exited.
//! The process is either the agent's own child, or one an earlier run of the agent started and
//! recorded (pid and start time), re-attached to after a restart: watched through `/proc` and
//! signalled by its process group, never mistaken for a process that took its pid since.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use super::install::InstallEnv;
use super::proc_stat;
use super::state::RunRecord;

/// The waits of the escalation.
#[derive(Clone, Debug)]
pub struct TeardownTimes {
    /// After /quitquitquit (Aurora: 5 s).
    pub graceful: Duration,
    /// After /abortabortabort.
    pub abort: Duration,
    /// After SIGTERM.
    pub term: Duration,
    /// After SIGKILL.
    pub kill: Duration,
    /// Timeout of each HTTP POST.
    pub http: Duration,
}

impl TeardownTimes {
    /// Aurora's graceful wait, and short fixed waits after it.
    pub fn with_graceful(graceful: Duration) -> Self {
        Self {
            graceful,
            abort: Duration::from_secs(1),
            term: Duration::from_secs(5),
            kill: Duration::from_secs(5),
            http: Duration::from_secs(1),
        }
    }
}

/// The step at which the process was seen gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It had exited before the teardown began.
    AlreadyExited,
    /// It exited after /quitquitquit.
    Quit,
    /// It exited after /abortabortabort.
    Abort,
    /// It exited after SIGTERM.
    Term,
    /// It exited after SIGKILL.
    Kill,
    /// It was still there after SIGKILL and its wait.
    Unkillable,
}

/// A process the agent runs for a resource's version.
#[derive(Debug)]
pub struct RunningProcess {
    /// The version it runs.
    pub version: u64,
    /// Its health port (for the HTTP steps of the teardown).
    pub health_port: Option<u16>,
    /// The process (leader of its own process group).
    pub handle: Handle,
    /// The length of its stderr log when it started: what it wrote comes after.
    pub stderr_from: u64,
}

impl RunningProcess {
    /// What `state.json` keeps of it, so that an agent started again finds it (`None` once gone).
    pub fn record(&self) -> Option<RunRecord> {
        let (pid, start_ticks) = match &self.handle {
            Handle::Child(child) => {
                let pid = child.id()? as i32;
                (pid, proc_stat::read(pid)?.start_ticks)
            }
            Handle::Adopted { pid, start_ticks } => (*pid, *start_ticks),
        };
        Some(RunRecord {
            version: self.version,
            pid,
            start_ticks,
        })
    }
}

/// How the agent holds the process.
#[derive(Debug)]
pub enum Handle {
    /// Its own child.
    Child(Child),
    /// Started by an earlier run of the agent, found again by pid and start time.
    Adopted {
        /// Its pid (and process group).
        pid: i32,
        /// Its start time in clock ticks after boot (`/proc/<pid>/stat`).
        start_ticks: u64,
    },
}

impl Handle {
    /// Its pid, while known.
    pub fn pid(&self) -> Option<i32> {
        match self {
            Handle::Child(child) => child.id().map(|p| p as i32),
            Handle::Adopted { pid, .. } => Some(*pid),
        }
    }

    /// `None` while it runs; once it is gone, how it ended and whether with status 0 (an adopted
    /// process's status is unknown: not a success).
    pub fn exit_status(&mut self) -> Option<(String, bool)> {
        match self {
            Handle::Child(child) => match child.try_wait() {
                Ok(None) => None,
                Ok(Some(status)) => Some((status.to_string(), status.success())),
                Err(e) => Some((e.to_string(), false)),
            },
            Handle::Adopted { pid, start_ticks } => {
                (!proc_stat::same_and_running(*pid, *start_ticks)).then(|| {
                    (
                        "exited (started by an earlier run of the agent: status unknown)".into(),
                        false,
                    )
                })
            }
        }
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        self.exit_status().is_none()
    }

    /// Waits up to `wait` for it to be gone; whether it is.
    async fn wait_exit(&mut self, wait: Duration) -> bool {
        match self {
            Handle::Child(child) => match tokio::time::timeout(wait, child.wait()).await {
                Ok(_) => true,
                Err(_) => !self.running(),
            },
            Handle::Adopted { .. } => {
                let end = tokio::time::Instant::now() + wait;
                while self.running() {
                    if tokio::time::Instant::now() >= end {
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                true
            }
        }
    }

    /// Sends `signal` to its process group (to it alone when it leads none). An adopted process is
    /// signalled only while its pid still names it.
    fn send(&self, signal: Signal) {
        let Some(raw) = self.pid() else { return };
        let pid = Pid::from_raw(raw);
        if let Handle::Adopted { start_ticks, .. } = self {
            match proc_stat::read(raw) {
                Some(s) if s.start_ticks == *start_ticks && s.running() => {
                    if s.pgrp != raw {
                        let _ = kill(pid, signal);
                        return;
                    }
                }
                _ => return,
            }
        }
        if let Err(e) = killpg(pid, signal) {
            tracing::debug!(%pid, ?signal, error = %e, "killpg failed, signalling the process");
            let _ = kill(pid, signal);
        }
    }
}

/// Starts `command` via `sh -c` in `cwd`, in its own process group, with the version's variables,
/// its stdout and stderr going to `stdout` and `stderr` (the app's log files: not pipes to the
/// agent, so the app outlives an agent that dies).
pub fn spawn(
    command: &str,
    env: &InstallEnv<'_>,
    cwd: &Path,
    stdout: Stdio,
    stderr: Stdio,
) -> std::io::Result<RunningProcess> {
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.vars())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    Ok(RunningProcess {
        version: env.version,
        health_port: env.health_port,
        handle: Handle::Child(child),
        stderr_from: 0,
    })
}

/// Tears the process down with Aurora's escalation, skipping the HTTP steps without a health port.
/// Signals go to its process group, so what it started goes too.
pub async fn teardown(
    process: &mut Handle,
    health_port: Option<u16>,
    times: &TeardownTimes,
) -> Stopped {
    if !process.running() {
        return Stopped::AlreadyExited;
    }
    if let Some(port) = health_port {
        let http = reqwest::Client::builder()
            .timeout(times.http)
            .build()
            .unwrap_or_default();
        for (path, wait, step) in [
            ("quitquitquit", times.graceful, Stopped::Quit),
            ("abortabortabort", times.abort, Stopped::Abort),
        ] {
            let url = format!("http://127.0.0.1:{port}/{path}");
            if let Err(e) = http.post(&url).send().await {
                tracing::debug!(%url, error = %e, "teardown request not answered");
            }
            if process.wait_exit(wait).await {
                return step;
            }
        }
    }
    for (signal, wait, step) in [
        (Signal::SIGTERM, times.term, Stopped::Term),
        (Signal::SIGKILL, times.kill, Stopped::Kill),
    ] {
        process.send(signal);
        if process.wait_exit(wait).await {
            return step;
        }
    }
    Stopped::Unkillable
}
