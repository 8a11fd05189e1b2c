//! A real `convoy agent` process for the multi-process tests: started against every server of a cluster
//! with its own state dir and log file, stopped with SIGTERM (then SIGKILL) when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use convoy_node::client::RawClient;
use convoy_node::local::{convoy_bin, eventually, Cluster};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// A running agent; SIGTERM (so it tears down what it runs) and SIGKILL after 10 s when dropped.
pub struct Agent {
    child: Option<Child>,
    /// Its `--node-id`.
    pub node: String,
    /// Its `--state-dir`.
    pub state: PathBuf,
    /// Its stdout and stderr.
    pub log: PathBuf,
}

impl Agent {
    /// Starts `convoy agent --node-id node` against every server of `cluster`, with `--state-dir`
    /// `dir/node` and its output in `dir/node.log`, plus `flags`.
    pub fn start(
        cluster: &Cluster,
        node: &str,
        dir: &Path,
        flags: &[&str],
    ) -> anyhow::Result<Self> {
        Self::start_with_env(cluster, node, dir, flags, &[])
    }

    /// [`Agent::start`] with extra environment variables (seen by its install and run commands).
    pub fn start_with_env(
        cluster: &Cluster,
        node: &str,
        dir: &Path,
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let state = dir.join(node);
        let log = dir.join(format!("{node}.log"));
        // Appended to, so an agent started again on the same state dir keeps its predecessor's lines.
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        let child = Command::new(convoy_bin())
            .args(["agent", "--node-id", node, "--retry-ms", "600000"])
            .args(flags)
            .arg("--server")
            .arg(cluster.http_addrs().join(","))
            .arg("--state-dir")
            .arg(&state)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        Ok(Agent {
            child: Some(child),
            node: node.to_string(),
            state,
            log,
        })
    }

    /// Waits (10 s at most) until the cluster sees its node active; the error carries its log.
    pub async fn wait_active(&self, api: &RawClient) -> anyhow::Result<()> {
        let path = format!("/v1/nodes/{}", self.node);
        eventually(Duration::from_secs(10), || async {
            let (status, node) = api.get(&path).await.ok()?;
            (status == 200 && node["active"] == true).then_some(())
        })
        .await
        .with_context(|| format!("agent {} never active:\n{}", self.node, self.output()))
    }

    /// What it logged so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Starts `convoy agent --node-id node` in the working directory `dir` with every path flag
    /// relative to it: `--state-dir node`, plus `flags` (which may name relative paths too).
    pub fn start_relative(
        cluster: &Cluster,
        node: &str,
        dir: &Path,
        flags: &[&str],
    ) -> anyhow::Result<Self> {
        let log = dir.join(format!("{node}.log"));
        let out = std::fs::File::create(&log)?;
        let child = Command::new(convoy_bin())
            .args(["agent", "--node-id", node, "--retry-ms", "600000"])
            .args(flags)
            .arg("--server")
            .arg(cluster.http_addrs().join(","))
            .args(["--state-dir", node])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        Ok(Agent {
            child: Some(child),
            node: node.to_string(),
            state: dir.join(node),
            log,
        })
    }

    /// Kills it with SIGKILL (no teardown of what it runs, as in a crash) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether it still runs (false once it exited).
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = kill(Pid::from_raw(c.id() as i32), Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
