//! A cluster of real `convoy server` processes on loopback, each with its own data dir, that a
//! test can kill (SIGKILL), stop (SIGTERM), pause (SIGSTOP), resume, restart and partition.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::http::Client;

/// The `convoy` binary: `$CONVOY_BIN`, else `target/<profile>/convoy` next to the test binary.
pub fn convoy_bin() -> PathBuf {
    if let Ok(path) = std::env::var("CONVOY_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test> → target/<profile>/convoy
    let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = profile_dir.join("convoy");
    assert!(
        bin.exists(),
        "{} not found: build it first (`cargo build -p convoy-node`) or set CONVOY_BIN",
        bin.display()
    );
    bin
}

/// Reserves a free loopback port (released just before the server binds it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// One server process and everything needed to restart it.
#[derive(Debug)]
pub struct ServerProc {
    /// The server's id.
    pub id: u64,
    /// Its HTTP address.
    pub http_addr: String,
    /// Its transport address.
    pub raft_addr: String,
    /// Its config file.
    pub config: PathBuf,
    /// Its log file (stdout and stderr).
    pub log: PathBuf,
    child: Option<Child>,
}

impl ServerProc {
    /// The OS pid, if running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process was started and not killed by the test.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// An HTTP client for this server.
    pub fn client(&self) -> Client {
        Client::new(&self.http_addr)
    }

    fn spawn(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let child = Command::new(convoy_bin())
            .arg("server")
            .arg("--config")
            .arg(&self.config)
            .env(
                "RUST_LOG",
                std::env::var("CONVOY_TEST_LOG").unwrap_or_else(|_| "info,openraft=warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("spawning server {}", self.id))?;
        self.child = Some(child);
        Ok(())
    }

    fn signal(&self, signal: Signal) -> anyhow::Result<()> {
        let pid = self
            .pid()
            .ok_or_else(|| anyhow!("server {} is not running", self.id))?;
        kill(Pid::from_raw(pid as i32), signal)?;
        Ok(())
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.wait();
        }
    }

    /// SIGTERM, wait for a clean exit (up to 10 s, then SIGKILL); returns whether it exited cleanly.
    pub fn terminate(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return false;
        };
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
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

    /// SIGSTOP: the process freezes, sockets stay open.
    pub fn pause(&self) -> anyhow::Result<()> {
        self.signal(Signal::SIGSTOP)
    }

    /// SIGCONT after [`ServerProc::pause`].
    pub fn resume(&self) -> anyhow::Result<()> {
        self.signal(Signal::SIGCONT)
    }

    /// The tail of the server's log, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            // A paused process must be continued to die cleanly on some kernels.
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGCONT);
        }
        self.kill();
    }
}

/// Tunables for a test cluster.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// Heartbeat in ms.
    pub heartbeat_ms: u64,
    /// Election timeout range in ms.
    pub election_ms: (u64, u64),
    /// Snapshot every this many entries.
    pub snapshot_every: u64,
    /// How long a request may wait for a leader.
    pub request_timeout_ms: u64,
    /// Extra lines appended to every server's config.
    pub extra: String,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            heartbeat_ms: 50,
            election_ms: (250, 500),
            snapshot_every: 10_000,
            request_timeout_ms: 3_000,
            extra: String::new(),
        }
    }
}

/// A set of server processes sharing a secret, in one temp dir removed on drop.
pub struct Cluster {
    /// The servers by id (including stopped ones).
    pub servers: BTreeMap<u64, ServerProc>,
    dir: tempfile::TempDir,
    options: ClusterOptions,
}

impl Cluster {
    /// Starts `n` founding servers (ids 1..=n) and waits for a leader.
    pub async fn start(n: u64) -> anyhow::Result<Self> {
        Self::start_with(n, ClusterOptions::default()).await
    }

    /// Like [`Cluster::start`] with options.
    pub async fn start_with(n: u64, options: ClusterOptions) -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new().prefix("convoy-test-").tempdir()?;
        std::fs::write(dir.path().join("secret"), "test-cluster-secret-0123456789")?;
        let mut cluster = Self {
            servers: BTreeMap::new(),
            dir,
            options,
        };
        let founders: Vec<(u64, String, String)> = (1..=n)
            .map(|id| {
                (
                    id,
                    format!("127.0.0.1:{}", free_port()),
                    format!("127.0.0.1:{}", free_port()),
                )
            })
            .collect();
        for (id, raft_addr, http_addr) in &founders {
            cluster.add_server_proc(*id, raft_addr, http_addr, "new", &founders)?;
        }
        for server in cluster.servers.values_mut() {
            server.spawn()?;
        }
        cluster.wait_leader(Duration::from_secs(20)).await?;
        Ok(cluster)
    }

    /// The cluster's temp dir.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn add_server_proc(
        &mut self,
        id: u64,
        raft_addr: &str,
        http_addr: &str,
        state: &str,
        founders: &[(u64, String, String)],
    ) -> anyhow::Result<()> {
        let o = &self.options;
        let mut text = format!(
            "id = {id}\ndata_dir = \"data/{id}\"\nhttp_addr = \"{http_addr}\"\nraft_addr = \"{raft_addr}\"\n\
             cluster_secret_file = \"secret\"\ninitial_cluster_state = \"{state}\"\n\
             heartbeat_ms = {}\nelection_timeout_min_ms = {}\nelection_timeout_max_ms = {}\n\
             snapshot_every = {}\nrequest_timeout_ms = {}\nenable_fault_injection = true\n{}\n",
            o.heartbeat_ms, o.election_ms.0, o.election_ms.1, o.snapshot_every, o.request_timeout_ms, o.extra
        );
        for (fid, fraft, fhttp) in founders {
            text.push_str(&format!(
                "[[initial_cluster]]\nid = {fid}\nraft_addr = \"{fraft}\"\nhttp_addr = \"{fhttp}\"\n"
            ));
        }
        let config = self.dir.path().join(format!("server-{id}.toml"));
        std::fs::write(&config, text)?;
        self.servers.insert(
            id,
            ServerProc {
                id,
                http_addr: http_addr.to_string(),
                raft_addr: raft_addr.to_string(),
                config,
                log: self.dir.path().join(format!("server-{id}.log")),
                child: None,
            },
        );
        Ok(())
    }

    /// Starts a brand-new server (`initial_cluster_state = "existing"`) that waits to be added.
    pub fn spawn_joiner(&mut self, id: u64) -> anyhow::Result<()> {
        let raft_addr = format!("127.0.0.1:{}", free_port());
        let http_addr = format!("127.0.0.1:{}", free_port());
        self.add_server_proc(id, &raft_addr, &http_addr, "existing", &[])?;
        self.servers.get_mut(&id).expect("just added").spawn()
    }

    /// A server by id.
    pub fn server(&self, id: u64) -> &ServerProc {
        &self.servers[&id]
    }

    /// A server by id, mutably.
    pub fn server_mut(&mut self, id: u64) -> &mut ServerProc {
        self.servers.get_mut(&id).expect("server id")
    }

    /// Restarts a stopped server from its data dir with the same config.
    pub fn restart(&mut self, id: u64) -> anyhow::Result<()> {
        let server = self.server_mut(id);
        server.kill();
        server.spawn()
    }

    /// Ids of servers whose processes are running.
    pub fn running(&self) -> Vec<u64> {
        self.servers
            .values()
            .filter(|s| s.is_running())
            .map(|s| s.id)
            .collect()
    }

    /// Every server's HTTP address (stopped ones too: fleets skip to the next on failure).
    pub fn http_addrs(&self) -> Vec<String> {
        self.servers.values().map(|s| s.http_addr.clone()).collect()
    }

    /// A client of some running server other than `not`.
    pub fn client_except(&self, not: u64) -> Client {
        let id = self
            .running()
            .into_iter()
            .find(|id| *id != not)
            .expect("another running server");
        self.server(id).client()
    }

    /// Waits until every running server (except paused ones in `ignore`) agrees on one leader
    /// that is running; returns its id.
    pub async fn wait_leader(&self, timeout: Duration) -> anyhow::Result<u64> {
        self.wait_leader_among(&self.running(), timeout).await
    }

    /// Waits until the servers `ids` agree on a leader among them.
    pub async fn wait_leader_among(&self, ids: &[u64], timeout: Duration) -> anyhow::Result<u64> {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        while Instant::now() < deadline {
            let mut seen = Vec::new();
            for id in ids {
                match self.server(*id).client().get("/v1/cluster").await {
                    Ok((200, body)) => seen.push(body["leader_id"].as_u64()),
                    other => {
                        last = format!("server {id}: {other:?}");
                        seen.push(None);
                    }
                }
            }
            if let Some(Some(leader)) = seen.first() {
                if ids.contains(leader) && seen.iter().all(|s| *s == Some(*leader)) {
                    return Ok(*leader);
                }
            }
            if seen.iter().all(Option::is_some) {
                last = format!("{seen:?}");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        bail!("no agreed leader among {ids:?} within {timeout:?}; last seen {last}")
    }

    /// Sets this server's fault policy: outgoing RPCs to `blocked` are dropped.
    pub async fn block(&self, id: u64, blocked: &[u64]) -> anyhow::Result<()> {
        let (status, body) = self
            .server(id)
            .client()
            .post("/v1/debug/faults", &json!({"blocked": blocked}))
            .await?;
        if status != 200 {
            bail!("setting faults on server {id}: {status} {body}");
        }
        Ok(())
    }

    /// Cuts `side` off from the rest, both ways.
    pub async fn partition(&self, side: &[u64]) -> anyhow::Result<()> {
        let all: Vec<u64> = self.servers.keys().copied().collect();
        let other: Vec<u64> = all
            .iter()
            .copied()
            .filter(|id| !side.contains(id))
            .collect();
        for id in self.running() {
            if side.contains(&id) {
                self.block(id, &other).await?;
            } else {
                self.block(id, side).await?;
            }
        }
        Ok(())
    }

    /// Removes every fault.
    pub async fn heal(&self) -> anyhow::Result<()> {
        for id in self.running() {
            self.block(id, &[]).await?;
        }
        Ok(())
    }

    /// The tail of every server's log, for assertion messages.
    pub fn logs(&self) -> String {
        self.servers
            .values()
            .map(|s| format!("--- server {} ---\n{}", s.id, s.log_tail(30)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Retries `f` until it returns `Some` or `timeout` passes.
pub async fn eventually<T, F, Fut>(timeout: Duration, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            bail!("condition not met within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// `Value` helper: the names in a `GET /v1/resources` answer.
pub fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
