//! A local cluster of real `convoy server` processes on loopback (optionally each in its own network
//! namespace), each with its own RocksDB data dir under one directory: start, stop, kill, pause, restart,
//! join, partition through the fault layer, and wait for a leader. The one harness of the demo, chaos,
//! the benchmarks and the multi-process tests.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::json;

use crate::client::{ApiClient, RawClient};
use crate::dev::netns::{NetLab, HTTP_PORT, RAFT_PORT};
use crate::dev::process::ChildProcess;
use crate::tls::{init_dev_pki, DevPki};

/// Server ids that get a namespace in a `netns` cluster: the founders and the servers that may join.
pub const MAX_SERVERS: u64 = 9;

/// How long [`Cluster::start`] waits for the founders to agree on a leader.
pub const START_PATIENCE: Duration = Duration::from_secs(20);

/// How the local servers are configured. `None` leaves a key to the server's own default.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// Founding servers (ids 1..=n).
    pub servers: u64,
    /// Raft heartbeat, ms.
    pub heartbeat_ms: u64,
    /// Election timeout range, ms.
    pub election_ms: (u64, u64),
    /// A node silent this long becomes inactive, ms.
    pub node_timeout_ms: Option<u64>,
    /// How long a write waits for a leader and a quorum, ms.
    pub request_timeout_ms: Option<u64>,
    /// Entries between snapshots while the state is small.
    pub snapshot_every: u64,
    /// The most entries between snapshots; `Some(snapshot_every)` fixes the interval (benchmarks
    /// that need a snapshot of a large state after a known number of writes). `None`: the
    /// server's default.
    pub snapshot_max_every: Option<u64>,
    /// Serve `POST /v1/debug/faults` (needed by [`Cluster::partition`]).
    pub fault_injection: bool,
    /// The servers' `RUST_LOG`.
    pub log_filter: String,
    /// Give each server its own network namespace and address (root only).
    pub netns: bool,
    /// Lines appended to every server's config file.
    pub extra: String,
    /// Keep each server's write-ahead log in `WAL_ROOT/<id>` (`log_wal_dir`) instead of its data
    /// dir, e.g. on another disk; `None`: in the data dir.
    pub wal_root: Option<PathBuf>,
    /// The `convoy` binary to run; `None`: [`convoy_bin`].
    pub exe: Option<PathBuf>,
    /// Serve the API over HTTPS with a development CA made for the cluster (`dir/tls`).
    pub tls: bool,
    /// With `tls`: servers require client certificates (the harness's clients present one).
    pub tls_client_auth: bool,
    /// Run with token auth: this secret becomes the `bootstrap` admin token (written to
    /// `dir/admin-token`, 0600) and the harness's clients send it.
    pub bootstrap_token: Option<String>,
}

impl Default for ClusterOptions {
    /// What the demo, chaos and the benchmarks run: three servers, quiet logs.
    fn default() -> Self {
        Self {
            servers: 3,
            heartbeat_ms: 50,
            election_ms: (250, 500),
            node_timeout_ms: Some(10_000),
            request_timeout_ms: None,
            snapshot_every: 10_000,
            snapshot_max_every: None,
            fault_injection: false,
            log_filter: "warn".into(),
            netns: false,
            extra: String::new(),
            wal_root: None,
            exe: None,
            tls: false,
            tls_client_auth: false,
            bootstrap_token: None,
        }
    }
}

impl ClusterOptions {
    /// What the multi-process tests run: `n` servers, the server's own node timeout, writes that give
    /// up after 3 s, the fault layer on, logs at `$CONVOY_TEST_LOG` (default: the server's own).
    pub fn for_tests(n: u64) -> Self {
        Self {
            servers: n,
            node_timeout_ms: None,
            request_timeout_ms: Some(3_000),
            fault_injection: true,
            log_filter: std::env::var("CONVOY_TEST_LOG")
                .unwrap_or_else(|_| crate::logging::DEFAULT_FILTER.into()),
            ..Self::default()
        }
    }

    /// Token auth on, as in production: a fresh admin token becomes the bootstrap token (written
    /// to `DIR/admin-token`), and every client the cluster hands out sends it.
    pub fn with_auth(self) -> Self {
        Self {
            bootstrap_token: Some(new_admin_token()),
            ..self
        }
    }
}

/// The `convoy` binary to start servers from: `$CONVOY_BIN`; else this process itself when it is
/// `convoy`; else `target/<profile>/convoy` beside a test binary (`target/<profile>/deps/<test>`).
pub fn convoy_bin() -> PathBuf {
    if let Ok(path) = std::env::var("CONVOY_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current exe");
    if exe.file_name().is_some_and(|n| n == "convoy") {
        return exe;
    }
    let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = profile_dir.join("convoy");
    assert!(
        bin.exists(),
        "{} not found: build it first (`cargo build -p convoy-node`) or set CONVOY_BIN",
        bin.display()
    );
    bin
}

/// A fresh admin token secret (`cvy_` and 32 random bytes in hex), for `bootstrap_token`.
pub fn new_admin_token() -> String {
    let hex: String = (0..32)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect();
    format!("cvy_{hex}")
}

/// Writes a fresh cluster secret (32 random bytes in hex) to `path`, readable by its owner only.
pub fn write_secret(path: &Path) -> anyhow::Result<()> {
    let secret: String = (0..32)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect();
    write_private(path, secret.as_bytes())
}

/// Writes `bytes` to a new file at `path` (replacing one there), mode 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(bytes)?;
    Ok(())
}

/// Reserves a free loopback port (released just before the server binds it).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(free_ports(1)?[0])
}

/// `n` distinct free loopback ports, chosen at random below the kernel's ephemeral range, and every
/// listener held until all are chosen, so that the kernel cannot hand one port out twice (it did:
/// two founders once got the same address). Below that range no process's outgoing connection can
/// take a server's port while the server is down for a restart (one did, under load: the restarted
/// server could not listen).
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    use rand::Rng;
    let below = ephemeral_ports_start();
    let mut rng = rand::thread_rng();
    let mut listeners = Vec::with_capacity(n);
    // Random ports in a range of thousands are nearly always free; the cap ends a loop over a
    // machine whose every such port is taken.
    for _ in 0..10_000 {
        if listeners.len() == n {
            break;
        }
        let port = rng.gen_range(FIRST_TEST_PORT..below);
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)) {
            listeners.push(listener);
        }
    }
    anyhow::ensure!(
        listeners.len() == n,
        "no {n} free loopback ports between {FIRST_TEST_PORT} and {below}"
    );
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect()
}

/// The lowest port servers of the harness listen on.
const FIRST_TEST_PORT: u16 = 10_000;

/// The first port of the kernel's ephemeral range (`ip_local_port_range`), 32768 unless set, and
/// never below [`FIRST_TEST_PORT`] + 1000.
fn ephemeral_ports_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
        .max(FIRST_TEST_PORT + 1_000)
}

/// One server process and what is needed to restart it.
#[derive(Debug)]
pub struct Server {
    /// Its id.
    pub id: u64,
    /// Its HTTP address.
    pub http_addr: String,
    /// Its transport address.
    pub raft_addr: String,
    /// Its config file.
    pub config: PathBuf,
    /// With TLS, what its clients trust and present.
    pub tls: Option<DevPki>,
    /// The admin token its clients send, with token auth.
    pub token: Option<String>,
    process: ChildProcess,
}

impl Server {
    /// An HTTP client of this server that answers status and body raw (over HTTPS, trusting the
    /// cluster's CA and presenting its certificate, when the cluster has TLS).
    pub fn client(&self) -> RawClient {
        RawClient::from(self.api_client())
    }

    /// This server's URL: `https://` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.http_addr)
    }

    /// A failover client of this server alone, set up for the cluster's TLS.
    pub fn api_client(&self) -> ApiClient {
        let client = ApiClient::new(&self.url())
            .expect("one server address")
            .with_token(self.token.as_deref());
        match &self.tls {
            Some(pki) => client
                .with_tls(Some(&pki.ca), Some((&pki.cert, &pki.key)))
                .expect("the cluster's TLS files"),
            None => client,
        }
    }

    /// How the process ended, once it has exited on its own (see [`ChildProcess::exit_status`]).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.process.exit_status()
    }

    /// Whether the process runs (paused counts as running).
    pub fn is_running(&self) -> bool {
        self.process.is_running()
    }

    /// The OS pid while it runs (to read `/proc/<pid>/status`).
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Whether it is stopped with SIGSTOP.
    pub fn is_paused(&self) -> bool {
        self.process.is_paused()
    }

    /// Where its stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        self.process.log_path()
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        self.process.log_tail(lines)
    }

    /// SIGSTOP: the process stays but does nothing (a long GC pause, a frozen VM).
    pub fn pause(&self) -> anyhow::Result<()> {
        self.process.pause()
    }

    /// SIGCONT after [`Server::pause`].
    pub fn resume(&self) -> anyhow::Result<()> {
        self.process.resume()
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        self.process.kill()
    }

    /// SIGTERM and wait for the exit; returns whether the server shut down cleanly.
    pub fn terminate(&mut self) -> bool {
        self.process.terminate()
    }
}

/// Servers sharing a secret, configured under one directory (a temp dir removed on drop, or a
/// directory the caller keeps).
pub struct Cluster {
    /// The servers by id (stopped ones too).
    pub servers: BTreeMap<u64, Server>,
    /// The namespaces and bridge, with `netns`.
    pub netlab: Option<NetLab>,
    dir: PathBuf,
    /// Temp dirs removed when the cluster is dropped (its own directory, WAL directories).
    _temps: Vec<tempfile::TempDir>,
    options: ClusterOptions,
    exe: PathBuf,
    founders: String,
    tls: Option<DevPki>,
}

/// Server `id`'s (transport, HTTP) addresses: free loopback ports, or fixed ports on its own address.
fn address_pair(netlab: Option<&NetLab>, id: u64) -> anyhow::Result<(String, String)> {
    Ok(match netlab {
        Some(lab) => (
            format!("{}:{RAFT_PORT}", lab.ip(id)),
            format!("{}:{HTTP_PORT}", lab.ip(id)),
        ),
        None => {
            let ports = free_ports(2)?;
            (
                format!("127.0.0.1:{}", ports[0]),
                format!("127.0.0.1:{}", ports[1]),
            )
        }
    })
}

impl Cluster {
    /// Starts `n` founding servers with the tests' options in a temp dir and waits for a leader.
    pub async fn start(n: u64) -> anyhow::Result<Self> {
        Self::start_with(ClusterOptions::for_tests(n)).await
    }

    /// Starts `options.servers` founders in a temp dir and waits until they agree on a leader.
    pub async fn start_with(options: ClusterOptions) -> anyhow::Result<Self> {
        let temp = tempfile::Builder::new().prefix("convoy-test-").tempdir()?;
        let mut cluster = Self::spawn_in(temp.path(), options)?;
        cluster._temps.push(temp);
        cluster.wait_leader(START_PATIENCE).await?;
        cluster.wait_ready(START_PATIENCE).await?;
        cluster.wait_token_known(START_PATIENCE).await?;
        Ok(cluster)
    }

    /// Waits until every running server answers `GET /readyz` 200: a member that knows its leader
    /// and has applied what it saw committed (a founder that knows the leader from its heartbeats
    /// may not have the membership entry yet, and refuses writes as "not a member" until it has).
    pub async fn wait_ready(&self, timeout: Duration) -> anyhow::Result<()> {
        self.wait_every_server("/readyz", "ready", timeout).await
    }

    /// With token auth, waits until every running server has applied the bootstrap token (the
    /// first leader replicates it after its election; until then a server answers 401).
    pub async fn wait_token_known(&self, timeout: Duration) -> anyhow::Result<()> {
        if self.options.bootstrap_token.is_none() {
            return Ok(());
        }
        self.wait_every_server("/v1/whoami", "knows the bootstrap token", timeout)
            .await
    }

    /// Waits until `GET path` answers 200 on every running server.
    async fn wait_every_server(
        &self,
        path: &str,
        what: &str,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        for id in self.running() {
            loop {
                match self.server(id).client().get(path).await {
                    Ok((200, _)) => break,
                    other if Instant::now() > deadline => {
                        bail!("server {id}: not {what} after {timeout:?}: {other:?}")
                    }
                    _ => tokio::time::sleep(Duration::from_millis(25)).await,
                }
            }
        }
        Ok(())
    }

    /// Writes configs and a fresh secret under `dir` (kept) and starts the founders without waiting.
    pub fn spawn_in(dir: &Path, options: ClusterOptions) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)?;
        write_secret(&dir.join("secret"))?;
        if let Some(token) = &options.bootstrap_token {
            write_private(&dir.join("admin-token"), token.as_bytes())?;
        }
        let netlab = if options.netns {
            Some(NetLab::create(MAX_SERVERS)?)
        } else {
            None
        };
        let addrs: Vec<(u64, String, String)> = match &netlab {
            Some(_) => (1..=options.servers)
                .map(|id| address_pair(netlab.as_ref(), id).map(|(r, h)| (id, r, h)))
                .collect::<anyhow::Result<_>>()?,
            // All founders' ports at once, so that no two of them share one.
            None => {
                let ports = free_ports(2 * options.servers as usize)?;
                (1..=options.servers)
                    .zip(ports.chunks(2))
                    .map(|(id, p)| {
                        (
                            id,
                            format!("127.0.0.1:{}", p[0]),
                            format!("127.0.0.1:{}", p[1]),
                        )
                    })
                    .collect()
            }
        };
        let founders = addrs
            .iter()
            .map(|(id, raft, http)| {
                format!("\n[[initial_cluster]]\nid = {id}\nraft_addr = \"{raft}\"\nhttp_addr = \"{http}\"\n")
            })
            .collect();
        let exe = options.exe.clone().unwrap_or_else(convoy_bin);
        let tls = if options.tls {
            let mut hosts = vec!["127.0.0.1".to_string(), "localhost".to_string()];
            if let Some(lab) = &netlab {
                hosts.extend((1..=MAX_SERVERS).map(|id| lab.ip(id).to_string()));
            }
            Some(init_dev_pki(&dir.join("tls"), &hosts)?)
        } else {
            None
        };
        let mut cluster = Self {
            servers: BTreeMap::new(),
            netlab,
            dir: dir.to_path_buf(),
            _temps: Vec::new(),
            options,
            exe,
            founders,
            tls,
        };
        for (id, raft, http) in addrs {
            cluster.spawn_server(id, raft, http, "new")?;
        }
        Ok(cluster)
    }

    /// Keeps `temp` (e.g. the directory the cluster was spawned in) until the cluster is dropped.
    pub fn keeping(mut self, temp: tempfile::TempDir) -> Self {
        self._temps.push(temp);
        self
    }

    /// The directory holding the configs, data dirs and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn spawn_server(
        &mut self,
        id: u64,
        raft_addr: String,
        http_addr: String,
        state: &str,
    ) -> anyhow::Result<()> {
        let o = &self.options;
        let mut text = format!(
            "id = {id}\ndata_dir = \"data/{id}\"\nhttp_addr = \"{http_addr}\"\nraft_addr = \"{raft_addr}\"\n\
             cluster_secret_file = \"secret\"\ninitial_cluster_state = \"{state}\"\n\
             heartbeat_ms = {}\nelection_timeout_min_ms = {}\nelection_timeout_max_ms = {}\n\
             snapshot_every = {}\nenable_fault_injection = {}\n",
            o.heartbeat_ms, o.election_ms.0, o.election_ms.1, o.snapshot_every, o.fault_injection,
        );
        if let Some(max) = o.snapshot_max_every {
            text.push_str(&format!("snapshot_max_every = {max}\n"));
        }
        if o.bootstrap_token.is_some() {
            text.push_str("bootstrap_token_file = \"admin-token\"\n");
        } else if self.netlab.is_some() {
            // A namespace lab's servers listen on private 10.213.x.y addresses, without tokens.
            text.push_str("insecure_no_auth = true\n");
        }
        if let Some(root) = &o.wal_root {
            text.push_str(&format!("log_wal_dir = {:?}\n", root.join(id.to_string())));
        }
        if let Some(ms) = o.node_timeout_ms {
            text.push_str(&format!("node_timeout_ms = {ms}\n"));
        }
        if let Some(ms) = o.request_timeout_ms {
            text.push_str(&format!("request_timeout_ms = {ms}\n"));
        }
        if let Some(pki) = &self.tls {
            text.push_str(&format!(
                "tls_cert_file = {:?}\ntls_key_file = {:?}\ntls_ca_file = {:?}\n",
                pki.cert, pki.key, pki.ca
            ));
            if o.tls_client_auth {
                text.push_str(&format!("tls_client_ca_file = {:?}\n", pki.ca));
            }
        }
        text.push_str(&o.extra);
        text.push('\n');
        // A joiner knows the founders too; `existing` makes it wait to be added instead of bootstrapping.
        text.push_str(&self.founders);
        let config = self.dir.join(format!("server-{id}.toml"));
        std::fs::write(&config, text)?;
        let args = [
            "server".into(),
            "--config".into(),
            config.clone().into_os_string(),
        ];
        let mut process = ChildProcess::new(
            format!("server {id}"),
            &self.exe,
            args,
            self.dir.join(format!("server-{id}.log")),
        )
        .env("RUST_LOG", o.log_filter.clone())
        .in_netns(self.netlab.as_ref().map(|lab| lab.ns(id)));
        process.spawn()?;
        self.servers.insert(
            id,
            Server {
                id,
                http_addr,
                raft_addr,
                config,
                tls: self.tls.clone(),
                token: self.options.bootstrap_token.clone(),
                process,
            },
        );
        Ok(())
    }

    /// Starts a new server `id` that waits to be added (`initial_cluster_state = "existing"`);
    /// returns its (raft, http) addresses for `POST /v1/cluster/members`.
    pub fn spawn_joiner(&mut self, id: u64) -> anyhow::Result<(String, String)> {
        anyhow::ensure!(
            !self.servers.contains_key(&id),
            "server {id} exists already"
        );
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
        self.servers.remove(&id);
    }

    /// A server by id; panics naming the id if there is none (a test's own mistake).
    pub fn server(&self, id: u64) -> &Server {
        self.get(id)
            .unwrap_or_else(|| panic!("no server {id} in this cluster"))
    }

    /// A server by id, to steer; panics naming the id if there is none.
    pub fn server_mut(&mut self, id: u64) -> &mut Server {
        self.get_mut(id)
            .unwrap_or_else(|| panic!("no server {id} in this cluster"))
    }

    /// A server by id, if there is one.
    pub fn get(&self, id: u64) -> Option<&Server> {
        self.servers.get(&id)
    }

    /// A server by id, to steer, if there is one.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Server> {
        self.servers.get_mut(&id)
    }

    /// Restarts server `id` from its data dir with the same config (killing it first if it runs).
    pub fn restart(&mut self, id: u64) -> anyhow::Result<()> {
        let server = self
            .get_mut(id)
            .with_context(|| format!("no server {id}"))?;
        server.process.kill();
        server.process.spawn()
    }

    /// Stops every server with SIGTERM.
    pub fn stop(&mut self) {
        for server in self.servers.values_mut() {
            server.terminate();
        }
    }

    /// Ids of servers whose processes run (paused ones too).
    pub fn running(&self) -> Vec<u64> {
        self.servers
            .values()
            .filter(|s| s.is_running())
            .map(|s| s.id)
            .collect()
    }

    /// Every server's HTTP address (stopped ones too: clients skip to the next on failure).
    pub fn http_addrs(&self) -> Vec<String> {
        self.servers.values().map(|s| s.http_addr.clone()).collect()
    }

    /// Every server's URL, comma-separated (what `--server` takes).
    pub fn addresses(&self) -> String {
        self.servers
            .values()
            .map(Server::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A failover client of every server, set up for the cluster's TLS.
    pub fn api_client(&self) -> ApiClient {
        let client = ApiClient::new(&self.addresses())
            .expect("server addresses")
            .with_token(self.options.bootstrap_token.as_deref());
        match &self.tls {
            Some(pki) => client
                .with_tls(Some(&pki.ca), Some((&pki.cert, &pki.key)))
                .expect("the cluster's TLS files"),
            None => client,
        }
    }

    /// A client of `servers` (one address or several, comma-separated) with the cluster's token and TLS.
    pub fn client_of(&self, servers: &str) -> ApiClient {
        self.api_client().of(servers).expect("server addresses")
    }

    /// A raw client of some running server other than `not`.
    pub fn client_except(&self, not: u64) -> RawClient {
        let id = self
            .running()
            .into_iter()
            .find(|id| *id != not)
            .expect("another running server");
        self.server(id).client()
    }

    /// Waits until every running server agrees on one leader that runs; returns its id.
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

    /// Sets server `id`'s fault policy: its outgoing RPCs to `blocked` are dropped.
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

    /// Cuts `side` off from the rest, both ways, in the transport's fault layer.
    pub async fn partition(&self, side: &[u64]) -> anyhow::Result<()> {
        let other: Vec<u64> = self
            .servers
            .keys()
            .copied()
            .filter(|id| !side.contains(id))
            .collect();
        for id in self.running() {
            let blocked = if side.contains(&id) { &other[..] } else { side };
            self.block(id, blocked).await?;
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

    /// `result`, after printing the tail of every server's log if it is an error: a failed test shows what
    /// the servers did.
    pub fn logs_on_error<T>(&self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        if result.is_err() {
            eprintln!("{}", self.logs());
        }
        result
    }
}

/// Waits until a server `api` reaches names a leader other than `not` (the survivors keep naming a
/// killed leader until they elect anew); returns its id.
pub async fn wait_leader(
    api: &ApiClient,
    not: Option<u64>,
    timeout: Duration,
) -> anyhow::Result<u64> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(c) = api.get::<serde_json::Value>("/v1/cluster").await {
            if let Some(id) = c["leader_id"].as_u64().filter(|l| Some(*l) != not) {
                return Ok(id);
            }
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "no leader elected within {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
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
