//! Pausing a local server with SIGSTOP (a long GC pause, a frozen VM) and resuming it with SIGCONT, by
//! its pid; whether it is stopped is read from `/proc`, so it needs no state of its own.

use anyhow::Context;
use convoy_node::local::Server;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// SIGSTOP and SIGCONT for a local server.
pub trait Pause {
    /// SIGSTOP: the process stays, sockets open, but does nothing.
    fn pause(&self) -> anyhow::Result<()>;
    /// SIGCONT after [`Pause::pause`].
    fn resume(&self) -> anyhow::Result<()>;
    /// Whether the process is stopped (state `T` in `/proc/<pid>/stat`).
    fn is_paused(&self) -> bool;
}

fn signal(server: &Server, signal: Signal) -> anyhow::Result<()> {
    let pid = server
        .pid()
        .with_context(|| format!("server {} is not running", server.id))?;
    kill(Pid::from_raw(pid as i32), signal)
        .with_context(|| format!("{signal} to server {}", server.id))
}

/// Whether the process `pid` is stopped: the state after the command name in `/proc/<pid>/stat`.
pub fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after) = stat.rsplit_once(')')?;
            after.split_whitespace().next().map(|state| state == "T")
        })
        .unwrap_or(false)
}

impl Pause for Server {
    fn pause(&self) -> anyhow::Result<()> {
        signal(self, Signal::SIGSTOP)?;
        // The kernel stops the process asynchronously; wait until /proc shows it.
        for _ in 0..100 {
            if self.is_paused() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(())
    }

    fn resume(&self) -> anyhow::Result<()> {
        signal(self, Signal::SIGCONT)
    }

    fn is_paused(&self) -> bool {
        self.pid().is_some_and(is_stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_child_reads_as_stopped_and_a_running_one_does_not() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(!is_stopped(pid));
        kill(Pid::from_raw(pid as i32), Signal::SIGSTOP).unwrap();
        let stopped = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            is_stopped(pid)
        });
        assert!(stopped, "SIGSTOP did not show in /proc/{pid}/stat");
        kill(Pid::from_raw(pid as i32), Signal::SIGCONT).unwrap();
        let running = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(5));
            !is_stopped(pid)
        });
        assert!(running, "SIGCONT did not show in /proc/{pid}/stat");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
