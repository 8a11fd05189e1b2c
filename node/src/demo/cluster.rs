//! The demo's local cluster: three `convoy server` child processes on loopback, each with its own
//! RocksDB data dir under the demo directory, that the demo can kill and restart.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::Context;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// One server child process.
pub struct Server {
    /// Its id.
    pub id: u64,
    /// Its HTTP address.
    pub http_addr: String,
    config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Server {
    fn spawn(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let child = Command::new(std::env::current_exe()?)
            .arg("server")
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting server {}", self.id))?;
        self.child = Some(child);
        Ok(())
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            for _ in 0..100 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Three servers sharing a secret.
pub struct LocalCluster {
    /// The servers, ids 1..=3.
    pub servers: Vec<Server>,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl LocalCluster {
    /// Writes configs under `dir` and starts three servers.
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let secret: String = (0..32)
            .map(|_| format!("{:x}", rand::random::<u8>() % 16))
            .collect();
        std::fs::write(dir.join("secret"), secret)?;
        let addrs: Vec<(u64, String, String)> = (1..=3)
            .map(|id| {
                Ok((
                    id,
                    format!("127.0.0.1:{}", free_port()?),
                    format!("127.0.0.1:{}", free_port()?),
                ))
            })
            .collect::<anyhow::Result<_>>()?;
        let mut members = String::new();
        for (id, raft, http) in &addrs {
            members.push_str(&format!(
                "\n[[initial_cluster]]\nid = {id}\nraft_addr = \"{raft}\"\nhttp_addr = \"{http}\"\n"
            ));
        }
        let mut servers = Vec::new();
        for (id, raft, http) in &addrs {
            let config = dir.join(format!("server-{id}.toml"));
            std::fs::write(
                &config,
                format!(
                    "id = {id}\ndata_dir = \"data/{id}\"\nhttp_addr = \"{http}\"\nraft_addr = \"{raft}\"\n\
                     cluster_secret_file = \"secret\"\ninitial_cluster_state = \"new\"\n\
                     heartbeat_ms = 100\nelection_timeout_min_ms = 400\nelection_timeout_max_ms = 800\n\
                     node_timeout_ms = 10000\n{members}"
                ),
            )?;
            let mut server = Server {
                id: *id,
                http_addr: http.clone(),
                config,
                log: dir.join(format!("server-{id}.log")),
                child: None,
            };
            server.spawn()?;
            servers.push(server);
        }
        Ok(Self { servers })
    }

    /// Every server's HTTP address, comma-separated (what `--server` takes).
    pub fn addresses(&self) -> String {
        self.servers
            .iter()
            .map(|s| s.http_addr.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A server by id.
    pub fn server_mut(&mut self, id: u64) -> Option<&mut Server> {
        self.servers.iter_mut().find(|s| s.id == id)
    }

    /// Restarts a killed server from its data dir.
    pub fn restart(&mut self, id: u64) -> anyhow::Result<()> {
        let server = self.server_mut(id).context("no such server")?;
        server.kill();
        server.spawn()
    }

    /// Stops every server with SIGTERM.
    pub fn stop(&mut self) {
        for server in &mut self.servers {
            server.terminate();
        }
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for server in &mut self.servers {
            server.kill();
        }
    }
}
