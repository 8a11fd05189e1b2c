//! A child process a local cluster starts and steers — a convoy server, or the lab's etcd member — with
//! its output appended to a log file, and kill and terminate by its own pid. The one place the demo,
//! the benchmarks, the lab and the multi-process tests spawn, kill and restart processes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long [`ChildProcess::terminate`] waits after SIGTERM before it sends SIGKILL. A server's own
/// shutdown takes at most its HTTP drain (5 s) plus the raft runtime's (2 s).
pub const TERMINATE_PATIENCE: Duration = Duration::from_secs(10);

/// One restartable child process: the command is kept so it can be started again after a kill.
#[derive(Debug)]
pub struct ChildProcess {
    name: String,
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    launcher: Vec<String>,
    log: PathBuf,
    child: Option<Child>,
}

impl ChildProcess {
    /// A process named `name` (for messages) running `program args`, its stdout and stderr appended
    /// to `log`. Not started yet: see [`ChildProcess::spawn`].
    pub fn new(
        name: impl Into<String>,
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
        log: impl Into<PathBuf>,
    ) -> Self {
        Self {
            name: name.into(),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            launcher: Vec::new(),
            log: log.into(),
            child: None,
        }
    }

    /// Sets an environment variable for every start.
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Runs the process through `launcher` (`launcher... program args`, e.g. the lab's `ip netns exec
    /// NS`); empty: directly.
    pub fn launched_by(mut self, launcher: Vec<String>) -> Self {
        self.launcher = launcher;
        self
    }

    /// Starts the process (again, after a kill).
    pub fn spawn(&mut self) -> anyhow::Result<()> {
        anyhow::ensure!(self.child.is_none(), "{} is already running", self.name);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .with_context(|| format!("opening {}", self.log.display()))?;
        let mut command = match self.launcher.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(&self.program);
                c
            }
            None => Command::new(&self.program),
        };
        let child = command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {} ({})", self.name, self.program.display()))?;
        self.child = Some(child);
        Ok(())
    }

    /// Whether the process was started and not killed (a stopped one counts as running).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// How it ended, once it has exited on its own (it is then reaped and no longer running);
    /// `None` while it runs or when it was never started.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        self.child = None;
        Some(status)
    }

    /// The OS pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Where its stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The last `lines` lines of its log, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // A stopped process is continued first: some kernels keep it until it runs.
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGCONT);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGCONT and SIGTERM, then waits up to [`TERMINATE_PATIENCE`] for it to exit (SIGKILL after that);
    /// returns whether it exited on its own with status 0.
    pub fn terminate(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return false;
        };
        // A stopped process (the lab pauses servers) is continued first, or it never sees SIGTERM.
        let pid = Pid::from_raw(child.id() as i32);
        let _ = kill(pid, Signal::SIGCONT);
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + TERMINATE_PATIENCE;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_and_restart_a_real_child() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = ChildProcess::new("sleeper", "sleep", ["30"], dir.path().join("log"));
        assert!(!p.is_running());
        assert!(!p.terminate(), "terminating a process that never started");
        p.spawn().unwrap();
        let first = p.pid().unwrap();
        assert!(p.spawn().is_err(), "a second start while running");
        p.kill();
        assert!(!p.is_running());
        assert!(
            !Path::new(&format!("/proc/{first}")).exists()
                || std::fs::read_to_string(format!("/proc/{first}/stat"))
                    .map(|s| s.contains(") Z"))
                    .unwrap_or(true),
            "the killed child is gone"
        );
        p.spawn().unwrap();
        assert_ne!(p.pid(), Some(first));
        assert!(
            !p.terminate(),
            "sleep killed by SIGTERM exits with a signal, not 0"
        );
    }

    #[test]
    fn terminate_reports_a_clean_exit_and_the_log_keeps_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = ChildProcess::new(
            "shell",
            "sh",
            [
                "-c",
                "echo one; echo two; trap 'exit 0' TERM; while :; do sleep 0.05; done",
            ],
            dir.path().join("log"),
        )
        .env("UNUSED", "x");
        p.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(p.terminate(), "the trap exits 0 on SIGTERM");
        assert_eq!(p.log_tail(1), "two");
        assert_eq!(p.log_tail(5), "one\ntwo");
    }
}
