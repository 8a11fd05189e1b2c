//! A local cluster: servers sharing a secret under one directory, started as child processes, killed,
//! terminated and restarted, joined, and waited on until they agree on a leader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::files::{write_private, write_secret};
use super::options::{convoy_bin, ClusterOptions, Placement, START_PATIENCE};
use super::ports::free_ports;
use super::process::ChildProcess;
use super::server::Server;
use crate::client::{ApiClient, RawClient};
use crate::tls::{init_dev_pki, DevPki};

/// Servers sharing a secret, configured under one directory (a temp dir removed on drop, or a
/// directory the caller keeps).
pub struct Cluster {
    /// The servers by id (stopped ones too).
    pub servers: BTreeMap<u64, Server>,
    dir: PathBuf,
    /// Temp dirs removed when the cluster is dropped (its own directory, WAL directories).
    _temps: Vec<tempfile::TempDir>,
    options: ClusterOptions,
    exe: PathBuf,
    founders: String,
    tls: Option<DevPki>,
}

/// Server `id`'s (transport, HTTP) addresses: free loopback ports, or fixed ports on its own address.
fn address_pair(
    placement: Option<&Arc<dyn Placement>>,
    id: u64,
) -> anyhow::Result<(String, String)> {
    Ok(match placement {
        Some(place) => place.addresses(id),
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
    /// first leader replicates it after its election; until then a server is not ready and answers 503).
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
        let placement = options.placement.clone();
        let addrs: Vec<(u64, String, String)> = match &placement {
            Some(_) => (1..=options.servers)
                .map(|id| address_pair(placement.as_ref(), id).map(|(r, h)| (id, r, h)))
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
            if let Some(place) = &placement {
                hosts.extend(place.hosts());
            }
            Some(init_dev_pki(&dir.join("tls"), &hosts)?)
        } else {
            None
        };
        let mut cluster = Self {
            servers: BTreeMap::new(),
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
        } else if let Some(place) = &o.placement {
            text.push_str(&place.config_without_auth());
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
        .launched_by(
            o.placement
                .as_ref()
                .map(|place| place.launcher(id))
                .unwrap_or_default(),
        );
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
            self.options
                .placement
                .as_ref()
                .is_none_or(|place| id <= place.max_id()),
            "server {id} has no place: ids above the placement's last have none"
        );
        let (raft, http) = address_pair(self.options.placement.as_ref(), id)?;
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
        if let Err(e) = &result {
            // The error first, shortened, then the logs: a CI excerpt keeps an output's head and tail,
            // and the logs between them would push the cause out of both.
            let cause: String = format!("{e:#}").chars().take(4_000).collect();
            eprintln!("failed: {cause}\n(the servers' logs follow; the whole error is at the end)");
            eprintln!("{}", self.logs());
        }
        result
    }
}
