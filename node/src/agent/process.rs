//! A resource's process (`--run-command`) and Aurora's teardown escalation: POST /quitquitquit,
//! wait, POST /abortabortabort, wait, SIGTERM, wait, SIGKILL — stopping as soon as it exited.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use super::install::InstallEnv;

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
    /// The child (leader of its own process group).
    pub child: Child,
}

/// Starts `command` via `sh -c` in `cwd`, in its own process group, with the version's variables.
pub fn spawn(command: &str, env: &InstallEnv<'_>, cwd: &Path) -> std::io::Result<RunningProcess> {
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.vars())
        .stdin(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    Ok(RunningProcess {
        version: env.version,
        health_port: env.health_port,
        child,
    })
}

/// Tears `child` down with Aurora's escalation, skipping the HTTP steps without a health port.
/// Signals go to the child's process group, so what it started goes too.
pub async fn teardown(
    child: &mut Child,
    health_port: Option<u16>,
    times: &TeardownTimes,
) -> Stopped {
    if exited(child) {
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
            if wait_exit(child, wait).await {
                return step;
            }
        }
    }
    for (signal, wait, step) in [
        (Signal::SIGTERM, times.term, Stopped::Term),
        (Signal::SIGKILL, times.kill, Stopped::Kill),
    ] {
        send(child, signal);
        if wait_exit(child, wait).await {
            return step;
        }
    }
    Stopped::Unkillable
}

fn exited(child: &mut Child) -> bool {
    !matches!(child.try_wait(), Ok(None))
}

async fn wait_exit(child: &mut Child, wait: Duration) -> bool {
    match tokio::time::timeout(wait, child.wait()).await {
        Ok(_) => true,
        Err(_) => exited(child),
    }
}

fn send(child: &Child, signal: Signal) {
    let Some(pid) = child.id() else { return };
    let pid = Pid::from_raw(pid as i32);
    if let Err(e) = killpg(pid, signal) {
        tracing::debug!(%pid, ?signal, error = %e, "killpg failed, signalling the process");
        let _ = kill(pid, signal);
    }
}
