//! A local cluster of `convoy server` child processes on loopback, each with its own RocksDB data dir
//! under one directory (optionally each in its own network namespace), that the demo and the chaos
//! harness kill, pause, restart, add and remove.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::client::ApiClient;
use crate::netns::{NetLab, HTTP_PORT, RAFT_PORT};

/// How the local servers are configured.
#[derive(Clone, Debug)]
pub struct LocalOptions {
    /// Founding servers (ids 1..=n).
    pub servers: u64,
    /// Raft heartbeat, ms.
    pub heartbeat_ms: u64,
    /// Election timeout range, ms.
    pub election_ms: (u64, u64),
    /// A node silent this long becomes inactive, ms.
    pub node_timeout_ms: u64,
    /// Entries between snapshots.
    pub snapshot_every: u64,
    /// Serve `POST /v1/debug/faults`.
    pub fault_injection: bool,
    /// The servers' `RUST_LOG`.
    pub log_filter: String,
    /// Give each server its own network namespace and address (root only).
    pub netns: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        Self {
            servers: 3,
            heartbeat_ms: 50,
            election_ms: (250, 500),
            node_timeout_ms: 10_000,
            snapshot_every: 10_000,
            fault_injection: false,
            log_filter: "warn".into(),
            netns: false,
        }
    }
}

/// One server child process.
pub struct Server {
    /// Its id.
    pub id: u64,
    /// Its HTTP address.
    pub http_addr: String,
    config: PathBuf,
    log: PathBuf,
    log_filter: String,
    exe: PathBuf,
    /// The network namespace it runs in, if any.
    netns: Option<String>,
    child: Option<Child>,
    paused: bool,
}

impl Server {
    fn spawn(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let mut command = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(&self.exe);
                c
            }
            None => Command::new(&self.exe),
        };
        let child = command
            .arg("server")
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", &self.log_filter)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting server {}", self.id))?;
        self.child = Some(child);
        self.paused = false;
        Ok(())
    }

    /// Whether the process runs (paused counts as running).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The process id while it runs (to read `/proc/<pid>/status`).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Where its stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Whether it is stopped with SIGSTOP.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    fn signal(&self, signal: Signal) -> anyhow::Result<()> {
        let child = self
            .child
            .as_ref()
            .with_context(|| format!("server {} is not running", self.id))?;
        kill(Pid::from_raw(child.id() as i32), signal)
            .with_context(|| format!("{signal} to server {}", self.id))
    }

    /// SIGSTOP: the process stays but does nothing (a long GC pause, a frozen VM).
    pub fn pause(&mut self) -> anyhow::Result<()> {
        self.signal(Signal::SIGSTOP)?;
        self.paused = true;
        Ok(())
    }

    /// SIGCONT after [`Server::pause`].
    pub fn resume(&mut self) -> anyhow::Result<()> {
        self.signal(Signal::SIGCONT)?;
        self.paused = false;
        Ok(())
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.paused = false;
    }

    fn terminate(&mut self) {
        if self.paused {
            let _ = self.resume();
        }
        if let Some(mut child) = self.child.take() {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            for _ in 0..100 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Servers sharing a secret, configured under one directory.
pub struct LocalCluster {
    /// The servers by id order.
    pub servers: Vec<Server>,
    dir: PathBuf,
    options: LocalOptions,
    founders: String,
    /// This binary's path, taken once: a rebuild replacing the file must not strand a restart.
    exe: PathBuf,
    /// The namespaces and bridge, with `netns`.
    pub netlab: Option<NetLab>,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Namespaces made for a `netns` cluster: the founders and the servers that may join later.
pub const MAX_SERVERS: u64 = 9;

/// Server `id`'s (transport, HTTP) addresses: free loopback ports, or fixed ports on its own address.
fn address_pair(netlab: Option<&NetLab>, id: u64) -> anyhow::Result<(String, String)> {
    Ok(match netlab {
        Some(lab) => (
            format!("{}:{RAFT_PORT}", lab.ip(id)),
            format!("{}:{HTTP_PORT}", lab.ip(id)),
        ),
        None => (
            format!("127.0.0.1:{}", free_port()?),
            format!("127.0.0.1:{}", free_port()?),
        ),
    })
}

impl LocalCluster {
    /// Writes configs under `dir` and starts three servers.
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        Self::start_with(dir, LocalOptions::default())
    }

    /// Writes configs under `dir` and starts `options.servers` servers.
    pub fn start_with(dir: &Path, options: LocalOptions) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let secret: String = (0..32)
            .map(|_| format!("{:x}", rand::random::<u8>() % 16))
            .collect();
        std::fs::write(dir.join("secret"), secret)?;
        let netlab = if options.netns {
            Some(NetLab::create(MAX_SERVERS)?)
        } else {
            None
        };
        let addrs: Vec<(u64, String, String)> = (1..=options.servers)
            .map(|id| address_pair(netlab.as_ref(), id).map(|(r, h)| (id, r, h)))
            .collect::<anyhow::Result<_>>()?;
        let mut founders = String::new();
        for (id, raft, http) in &addrs {
            founders.push_str(&format!(
                "\n[[initial_cluster]]\nid = {id}\nraft_addr = \"{raft}\"\nhttp_addr = \"{http}\"\n"
            ));
        }
        let mut cluster = Self {
            servers: Vec::new(),
            dir: dir.to_path_buf(),
            options,
            founders,
            exe: std::env::current_exe()?,
            netlab,
        };
        for (id, raft, http) in addrs {
            cluster.spawn_server(id, raft, http, "new")?;
        }
        Ok(cluster)
    }

    fn spawn_server(
        &mut self,
        id: u64,
        raft_addr: String,
        http_addr: String,
        state: &str,
    ) -> anyhow::Result<()> {
        let o = &self.options;
        let config = self.dir.join(format!("server-{id}.toml"));
        std::fs::write(
            &config,
            format!(
                "id = {id}\ndata_dir = \"data/{id}\"\nhttp_addr = \"{http_addr}\"\nraft_addr = \"{raft_addr}\"\n\
                 cluster_secret_file = \"secret\"\ninitial_cluster_state = \"{state}\"\n\
                 heartbeat_ms = {}\nelection_timeout_min_ms = {}\nelection_timeout_max_ms = {}\n\
                 node_timeout_ms = {}\nsnapshot_every = {}\nenable_fault_injection = {}\n\
                 insecure_no_auth = {}\n{}",
                o.heartbeat_ms,
                o.election_ms.0,
                o.election_ms.1,
                o.node_timeout_ms,
                o.snapshot_every,
                o.fault_injection,
                // A namespace lab's servers listen on private 10.213.x.y addresses, without tokens.
                self.netlab.is_some(),
                self.founders
            ),
        )?;
        let mut server = Server {
            id,
            http_addr,
            config,
            log: self.dir.join(format!("server-{id}.log")),
            log_filter: o.log_filter.clone(),
            exe: self.exe.clone(),
            netns: self.netlab.as_ref().map(|lab| lab.ns(id)),
            child: None,
            paused: false,
        };
        server.spawn()?;
        self.servers.push(server);
        Ok(())
    }

    /// Starts a new server `id` that waits to be added (`initial_cluster_state = "existing"`);
    /// returns its (raft, http) addresses for `POST /v1/cluster/members`.
    pub fn spawn_joiner(&mut self, id: u64) -> anyhow::Result<(String, String)> {
        anyhow::ensure!(self.server(id).is_none(), "server {id} exists already");
        anyhow::ensure!(
            self.netlab.is_none() || id <= MAX_SERVERS,
            "server ids above {MAX_SERVERS} have no namespace"
        );
        let (raft, http) = address_pair(self.netlab.as_ref(), id)?;
        self.spawn_server(id, raft.clone(), http.clone(), "existing")?;
        Ok((raft, http))
    }

    /// Stops server `id` and forgets it (after it was removed from the cluster).
    pub fn forget(&mut self, id: u64) {
        if let Some(server) = self.server_mut(id) {
            server.kill();
        }
        self.servers.retain(|s| s.id != id);
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
    pub fn server(&self, id: u64) -> Option<&Server> {
        self.servers.iter().find(|s| s.id == id)
    }

    /// A server by id, to steer.
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

/// Waits until a server names a leader other than `not` (the survivors keep naming a killed leader
/// until they elect anew); returns its id.
pub async fn wait_leader(
    api: &ApiClient,
    not: Option<u64>,
    timeout: Duration,
) -> anyhow::Result<u64> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Ok(c) = api.get::<serde_json::Value>("/v1/cluster").await {
            if let Some(id) = c["leader_id"].as_u64().filter(|l| Some(*l) != not) {
                return Ok(id);
            }
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "no leader elected within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for server in &mut self.servers {
            if server.paused {
                let _ = server.resume();
            }
            server.kill();
        }
    }
}
