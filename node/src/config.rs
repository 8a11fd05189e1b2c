//! Server configuration: a TOML file, overridden by `--flags`, overridden by `CONVOY_*` variables.
//!
//! clap reads a flag or its environment variable; a key given neither way falls back to the file,
//! then to the default. Errors name the key and the value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::config_checks as checks;
use convoy_actors::leader::{DEFAULT_DEPLOYMENT_HISTORY, DEFAULT_FORGET_NODES_AFTER};
use convoy_raft::log_store::{StorageTuning, MAX_BACKGROUND_IO_MB_PER_SEC, MAX_LOG_MEMTABLE_MB};
use convoy_raft::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES;
use convoy_raft::{Member, NodeId, RaftConfig};
use serde::Deserialize;

use crate::api::auth::{secret, AuthMode};
use convoy_actors::domain::SecretHash;

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file that could not be read: the config file, or the cluster secret file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for convoy.
    #[error("invalid config file {path}: {source}")]
    Parse {
        /// The config file's path, as given.
        path: PathBuf,
        /// What the parser said.
        source: Box<toml::de::Error>,
    },
    /// A required key is missing everywhere.
    #[error("missing `{key}`: set it in the config file, as --{flag} or as {env}")]
    Missing {
        /// The TOML key.
        key: &'static str,
        /// The flag name.
        flag: &'static str,
        /// The environment variable.
        env: &'static str,
    },
    /// A key has a value convoy cannot use.
    #[error("invalid `{key}` = {value:?}: {reason}")]
    Invalid {
        /// The TOML key whose value is refused, whether the value came from the file, a flag or a
        /// variable.
        key: &'static str,
        /// The offending value.
        value: String,
        /// Why the value is refused, e.g. `expected host:port`.
        reason: String,
    },
}

/// One founding member, as in `[[initial_cluster]]`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct InitialMember {
    /// The member's id.
    pub id: NodeId,
    /// Its transport address.
    pub raft_addr: String,
    /// Its HTTP address.
    pub http_addr: String,
}

/// The config file's keys (all optional here; required ones are checked after merging).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    id: Option<NodeId>,
    data_dir: Option<PathBuf>,
    http_addr: Option<String>,
    raft_addr: Option<String>,
    cluster_secret_file: Option<PathBuf>,
    initial_cluster_state: Option<String>,
    #[serde(default)]
    initial_cluster: Vec<InitialMember>,
    heartbeat_ms: Option<u64>,
    election_timeout_min_ms: Option<u64>,
    election_timeout_max_ms: Option<u64>,
    snapshot_every: Option<u64>,
    snapshot_max_every: Option<u64>,
    snapshot_chunk_bytes: Option<usize>,
    log_memtable_mb: Option<u64>,
    log_compaction: Option<String>,
    background_io_mb_per_sec: Option<u64>,
    log_wal_dir: Option<PathBuf>,
    node_timeout_ms: Option<u64>,
    deployment_history: Option<u32>,
    forget_nodes_after: Option<String>,
    request_timeout_ms: Option<u64>,
    enable_fault_injection: Option<bool>,
    tls_cert_file: Option<PathBuf>,
    tls_key_file: Option<PathBuf>,
    tls_client_ca_file: Option<PathBuf>,
    tls_ca_file: Option<PathBuf>,
    bootstrap_token_file: Option<PathBuf>,
    insecure_no_auth: Option<bool>,
    log_format: Option<String>,
}

/// `convoy server` flags; each has a `CONVOY_*` variable and a config-file key of the same name.
#[derive(Clone, Debug, Default, Args)]
pub struct ServerArgs {
    /// TOML config file; flags and CONVOY_* variables override its keys.
    #[arg(long, env = "CONVOY_CONFIG")]
    pub config: Option<PathBuf>,
    /// This server's id (unique, non-zero).
    #[arg(long, env = "CONVOY_ID")]
    pub id: Option<NodeId>,
    /// Data directory (RocksDB log, vote, snapshots).
    #[arg(long, env = "CONVOY_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// HTTP API address, e.g. 127.0.0.1:8081.
    #[arg(long, env = "CONVOY_HTTP_ADDR")]
    pub http_addr: Option<String>,
    /// Internal transport address, e.g. 127.0.0.1:9081.
    #[arg(long, env = "CONVOY_RAFT_ADDR")]
    pub raft_addr: Option<String>,
    /// File holding the cluster secret peers authenticate with.
    #[arg(long, env = "CONVOY_CLUSTER_SECRET_FILE")]
    pub cluster_secret_file: Option<PathBuf>,
    /// "new" bootstraps from initial_cluster when data_dir is empty; "existing" waits to be added.
    #[arg(long, env = "CONVOY_INITIAL_CLUSTER_STATE")]
    pub initial_cluster_state: Option<String>,
    /// Founding members as `id=raft_addr=http_addr,...` (replaces the file's [[initial_cluster]]).
    #[arg(long, env = "CONVOY_INITIAL_CLUSTER")]
    pub initial_cluster: Option<String>,
    /// Raft heartbeat period in ms (default 50).
    #[arg(long, env = "CONVOY_HEARTBEAT_MS", value_parser = crate::cli::parse_millis)]
    pub heartbeat_ms: Option<u64>,
    /// Lower bound of the election timeout in ms (default 250).
    #[arg(long, env = "CONVOY_ELECTION_TIMEOUT_MIN_MS", value_parser = crate::cli::parse_millis)]
    pub election_timeout_min_ms: Option<u64>,
    /// Upper bound of the election timeout in ms (default 500).
    #[arg(long, env = "CONVOY_ELECTION_TIMEOUT_MAX_MS", value_parser = crate::cli::parse_millis)]
    pub election_timeout_max_ms: Option<u64>,
    /// Build a snapshot after this many log entries, more as the state grows (default 10000).
    #[arg(long, env = "CONVOY_SNAPSHOT_EVERY")]
    pub snapshot_every: Option<u64>,
    /// The most log entries between two snapshots however large the state (default 1000000);
    /// at or below `snapshot_every` the interval is fixed.
    #[arg(long, env = "CONVOY_SNAPSHOT_MAX_EVERY")]
    pub snapshot_max_every: Option<u64>,
    /// Test knob: stream snapshots to followers in chunks of this many bytes (default 4 MiB,
    /// 1..=16 MiB); tests lower it so that a small snapshot is many chunks.
    #[arg(long, env = "CONVOY_SNAPSHOT_CHUNK_BYTES")]
    pub snapshot_chunk_bytes: Option<usize>,
    /// Size of the raft log's RocksDB memtable in MiB (default 8, at most 1024): larger flushes less
    /// often, and a restart after a crash replays more.
    #[arg(long, env = "CONVOY_LOG_MEMTABLE_MB")]
    pub log_memtable_mb: Option<u64>,
    /// Compaction style of the raft log's RocksDB files: "level" (default) or "universal".
    #[arg(long, env = "CONVOY_LOG_COMPACTION")]
    pub log_compaction: Option<String>,
    /// Cap on what RocksDB's flushes and compactions write, MiB/s (default 0: no cap), so that they
    /// leave the disk to the log's fsyncs.
    #[arg(long, env = "CONVOY_BACKGROUND_IO_MB_PER_SEC")]
    pub background_io_mb_per_sec: Option<u64>,
    /// Directory of the raft log's write-ahead log, e.g. on a disk of its own (default: inside the
    /// data dir). Fixed when the data dir is created; a later start with another is refused.
    #[arg(long, env = "CONVOY_LOG_WAL_DIR")]
    pub log_wal_dir: Option<PathBuf>,
    /// A node that stops reporting for this long becomes inactive, in ms (default 30000).
    #[arg(long, env = "CONVOY_NODE_TIMEOUT_MS", value_parser = crate::cli::parse_millis)]
    pub node_timeout_ms: Option<u64>,
    /// Finished deployments that keep their node list and node events (default 1000); older ones
    /// keep only their summary.
    #[arg(long, env = "CONVOY_DEPLOYMENT_HISTORY")]
    pub deployment_history: Option<u32>,
    /// A node in no consumer that stops reporting for this long is forgotten (humantime, e.g. `7d`,
    /// the default; `0s`: never).
    #[arg(long, env = "CONVOY_FORGET_NODES_AFTER")]
    pub forget_nodes_after: Option<String>,
    /// How long a write may wait for a leader (forwarding and retries included), in ms (default 10000).
    #[arg(long, env = "CONVOY_REQUEST_TIMEOUT_MS", value_parser = crate::cli::parse_millis)]
    pub request_timeout_ms: Option<u64>,
    /// Test only: expose `POST /v1/debug/faults` to drop or delay this server's outgoing RPCs.
    #[arg(long, env = "CONVOY_ENABLE_FAULT_INJECTION")]
    pub enable_fault_injection: Option<bool>,
    /// PEM certificate chain of the HTTP API; with `tls_key_file`, the API speaks only HTTPS.
    #[arg(long, env = "CONVOY_TLS_CERT_FILE")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `tls_cert_file`.
    #[arg(long, env = "CONVOY_TLS_KEY_FILE")]
    pub tls_key_file: Option<PathBuf>,
    /// With TLS: every client must present a certificate chaining to this PEM CA.
    #[arg(long, env = "CONVOY_TLS_CLIENT_CA_FILE")]
    pub tls_client_ca_file: Option<PathBuf>,
    /// With TLS: the PEM CA this server trusts when it calls another server's API (forwarding).
    #[arg(long, env = "CONVOY_TLS_CA_FILE")]
    pub tls_ca_file: Option<PathBuf>,
    /// File holding the first admin token's secret: turns token auth on; the first leader of a new
    /// cluster creates the admin token `bootstrap` from it (once).
    #[arg(long, env = "CONVOY_BOOTSTRAP_TOKEN_FILE")]
    pub bootstrap_token_file: Option<PathBuf>,
    /// Serve the API without tokens on a non-loopback http_addr (a WARN is logged at start).
    #[arg(long, env = "CONVOY_INSECURE_NO_AUTH")]
    pub insecure_no_auth: Option<bool>,
    /// Development mode: one server on loopback (`--http-addr`, default 127.0.0.1:7700) with a temporary
    /// data dir removed on exit and a printed admin token (see `convoy_node::server::devmode`).
    #[arg(long, env = "CONVOY_DEV", conflicts_with_all = ["config", "initial_cluster", "id", "data_dir"])]
    pub dev: bool,
}

/// The merged, validated server configuration.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// What the replicated log needs.
    pub raft: RaftConfig,
    /// Liveness timeout for nodes, used by the leader's consumer actors.
    pub node_timeout: Duration,
    /// Finished deployments that keep their per-node detail (the leader prunes older ones).
    pub deployment_history: u32,
    /// Nodes in no consumer silent this long are forgotten by the leader; zero: never.
    pub forget_nodes_after: Duration,
    /// Whether the test-only fault endpoint is served.
    pub fault_injection: bool,
    /// TLS for the HTTP API; `None`: plain HTTP.
    pub tls: Option<crate::tls::ServerTls>,
    /// Whether the API checks tokens.
    pub auth: AuthMode,
    /// The hash of `bootstrap_token_file`'s secret (the secret itself is not kept).
    pub bootstrap_token: Option<SecretHash>,
}

impl ServerArgs {
    /// The config file's `log_format` (`text` or `json`), if it sets one; read before logging starts, so
    /// that `--log-format` or `CONVOY_LOG_FORMAT` (global flags) can override it.
    pub fn log_format(&self) -> Result<Option<crate::logging::LogFormat>, ConfigError> {
        let Some(path) = &self.config else {
            return Ok(None);
        };
        match read_file(path)?.log_format {
            None => Ok(None),
            Some(v) => crate::logging::LogFormat::parse(&v)
                .map(Some)
                .ok_or_else(|| invalid("log_format", &v, "expected \"text\" or \"json\"")),
        }
    }

    /// Merges flags/environment over the config file over defaults, and validates the result.
    pub fn resolve(&self) -> Result<ServerConfig, ConfigError> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let base_dir = self
            .config
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let storage = self.storage_tuning(&file, &base_dir)?;
        let id = self.id.or(file.id).ok_or(ConfigError::Missing {
            key: "id",
            flag: "id",
            env: "CONVOY_ID",
        })?;
        if id == 0 {
            return Err(invalid("id", "0", "ids start at 1"));
        }
        let data_dir = self
            .data_dir
            .clone()
            .or(file.data_dir.map(|d| relative_to(&base_dir, d)))
            .ok_or(ConfigError::Missing {
                key: "data_dir",
                flag: "data-dir",
                env: "CONVOY_DATA_DIR",
            })?;
        let http_addr = self
            .http_addr
            .clone()
            .or(file.http_addr)
            .ok_or(ConfigError::Missing {
                key: "http_addr",
                flag: "http-addr",
                env: "CONVOY_HTTP_ADDR",
            })?;
        let raft_addr = self
            .raft_addr
            .clone()
            .or(file.raft_addr)
            .ok_or(ConfigError::Missing {
                key: "raft_addr",
                flag: "raft-addr",
                env: "CONVOY_RAFT_ADDR",
            })?;
        check_addr("http_addr", &http_addr)?;
        check_addr("raft_addr", &raft_addr)?;
        let secret_file = self
            .cluster_secret_file
            .clone()
            .or(file.cluster_secret_file.map(|f| relative_to(&base_dir, f)))
            .ok_or(ConfigError::Missing {
                key: "cluster_secret_file",
                flag: "cluster-secret-file",
                env: "CONVOY_CLUSTER_SECRET_FILE",
            })?;
        let secret = std::fs::read(&secret_file).map_err(|source| ConfigError::Read {
            path: secret_file.clone(),
            source,
        })?;
        let secret = secret.trim_ascii().to_vec();
        #[cfg(unix)]
        checks::check_secret_mode(&secret_file)?;
        checks::check_secret_strength(&secret)?;
        let state = self
            .initial_cluster_state
            .clone()
            .or(file.initial_cluster_state)
            .unwrap_or_else(|| "new".into());
        let bootstrap = match state.as_str() {
            "new" => true,
            "existing" => false,
            other => {
                return Err(invalid(
                    "initial_cluster_state",
                    other,
                    "expected \"new\" or \"existing\"",
                ))
            }
        };
        let members = match &self.initial_cluster {
            Some(spec) => parse_initial_cluster(spec)?,
            None => file.initial_cluster,
        };
        let mut initial_cluster = BTreeMap::new();
        for m in members {
            let member = Member {
                raft_addr: m.raft_addr,
                http_addr: m.http_addr,
            };
            if initial_cluster.insert(m.id, member).is_some() {
                return Err(invalid(
                    "initial_cluster",
                    &m.id.to_string(),
                    "duplicate member id",
                ));
            }
        }
        if bootstrap && !initial_cluster.contains_key(&id) {
            return Err(invalid(
                "initial_cluster",
                &format!("{:?}", initial_cluster.keys().collect::<Vec<_>>()),
                &format!("this server's id {id} must be a founding member when initial_cluster_state = \"new\""),
            ));
        }
        if bootstrap {
            checks::check_founders(id, &raft_addr, &http_addr, &initial_cluster)?;
        }
        checks::check_data_dir(&data_dir, bootstrap)?;
        let mut raft = RaftConfig::new(id, data_dir, &raft_addr, &http_addr);
        raft.secret = secret;
        raft.initial_cluster = initial_cluster;
        raft.bootstrap = bootstrap;
        raft.heartbeat_ms = self
            .heartbeat_ms
            .or(file.heartbeat_ms)
            .unwrap_or(raft.heartbeat_ms);
        let min = self
            .election_timeout_min_ms
            .or(file.election_timeout_min_ms)
            .unwrap_or(raft.election_timeout_ms.0);
        let max = self
            .election_timeout_max_ms
            .or(file.election_timeout_max_ms)
            .unwrap_or(raft.election_timeout_ms.1);
        if min <= raft.heartbeat_ms || max <= min {
            return Err(invalid(
                "election_timeout_min_ms",
                &format!("{min}..{max}"),
                &format!("need heartbeat_ms ({}) < min < max", raft.heartbeat_ms),
            ));
        }
        raft.election_timeout_ms = (min, max);
        let every = self
            .snapshot_every
            .or(file.snapshot_every)
            .unwrap_or(raft.snapshot_every);
        if every < 10 {
            return Err(invalid(
                "snapshot_every",
                &every.to_string(),
                "must be at least 10",
            ));
        }
        raft.snapshot_every = every;
        raft.snapshot_max_every = self
            .snapshot_max_every
            .or(file.snapshot_max_every)
            .unwrap_or(raft.snapshot_max_every);
        let chunk = self
            .snapshot_chunk_bytes
            .or(file.snapshot_chunk_bytes)
            .unwrap_or(raft.snapshot_chunk_bytes);
        if chunk == 0 || chunk > MAX_SNAPSHOT_CHUNK_BYTES {
            return Err(invalid(
                "snapshot_chunk_bytes",
                &chunk.to_string(),
                &format!("must be 1..={MAX_SNAPSHOT_CHUNK_BYTES}"),
            ));
        }
        raft.snapshot_chunk_bytes = chunk;
        raft.storage = storage;
        let node_timeout_ms = self
            .node_timeout_ms
            .or(file.node_timeout_ms)
            .unwrap_or(30_000);
        if node_timeout_ms == 0 {
            return Err(invalid("node_timeout_ms", "0", "must be positive"));
        }
        let request_timeout_ms = self
            .request_timeout_ms
            .or(file.request_timeout_ms)
            .unwrap_or(10_000);
        if request_timeout_ms < 100 {
            return Err(invalid(
                "request_timeout_ms",
                &request_timeout_ms.to_string(),
                "must be at least 100",
            ));
        }
        raft.request_timeout = Duration::from_millis(request_timeout_ms);
        let path = |flag: &Option<PathBuf>, key: Option<PathBuf>| {
            flag.clone().or(key.map(|f| relative_to(&base_dir, f)))
        };
        let tls = match (
            path(&self.tls_cert_file, file.tls_cert_file),
            path(&self.tls_key_file, file.tls_key_file),
        ) {
            (Some(cert), Some(key)) => Some(crate::tls::ServerTls {
                cert,
                key,
                client_ca: path(&self.tls_client_ca_file, file.tls_client_ca_file),
                ca: path(&self.tls_ca_file, file.tls_ca_file),
            }),
            (None, None) => None,
            (cert, _) => {
                return Err(invalid(
                    if cert.is_some() {
                        "tls_key_file"
                    } else {
                        "tls_cert_file"
                    },
                    "(missing)",
                    "tls_cert_file and tls_key_file go together: set both or neither",
                ))
            }
        };
        let bootstrap_token = self
            .bootstrap_token_file
            .clone()
            .or(file.bootstrap_token_file.map(|f| relative_to(&base_dir, f)))
            .map(|path| {
                secret::read_file(&path)
                    .map(|s| secret::hash(&s))
                    .map_err(|e| {
                        invalid(
                            "bootstrap_token_file",
                            &path.display().to_string(),
                            &e.to_string(),
                        )
                    })
            })
            .transpose()?;
        let insecure = self
            .insecure_no_auth
            .or(file.insecure_no_auth)
            .unwrap_or(false);
        let auth = auth_mode(bootstrap_token.is_some(), insecure, &http_addr)?;
        let forget_nodes_after = match self.forget_nodes_after.clone().or(file.forget_nodes_after) {
            None => DEFAULT_FORGET_NODES_AFTER,
            Some(text) => humantime::parse_duration(&text).map_err(|e| {
                let shown: String = text.chars().take(100).collect();
                invalid(
                    "forget_nodes_after",
                    &shown,
                    &format!("{e}: give a duration such as 7d or 12h, or 0s for never"),
                )
            })?,
        };
        Ok(ServerConfig {
            forget_nodes_after,
            tls,
            raft,
            node_timeout: Duration::from_millis(node_timeout_ms),
            deployment_history: self
                .deployment_history
                .or(file.deployment_history)
                .unwrap_or(DEFAULT_DEPLOYMENT_HISTORY),
            fault_injection: self
                .enable_fault_injection
                .or(file.enable_fault_injection)
                .unwrap_or(false),
            auth,
            bootstrap_token,
        })
    }
}

/// On with a bootstrap token file; without one, off on a loopback `http_addr` or with `insecure_no_auth`,
/// and an error anywhere else.
fn auth_mode(bootstrap: bool, insecure: bool, http_addr: &str) -> Result<AuthMode, ConfigError> {
    if bootstrap {
        return Ok(AuthMode::On);
    }
    if insecure || is_loopback(http_addr) {
        return Ok(AuthMode::Off);
    }
    Err(invalid(
        "http_addr",
        http_addr,
        "without bootstrap_token_file the API has no authentication, which convoy serves only on a \
         loopback address; set bootstrap_token_file, or insecure_no_auth = true to serve it to anyone",
    ))
}

/// Whether `host:port` names a loopback host (`localhost`, 127.0.0.0/8, `[::1]`).
pub fn is_loopback(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

fn relative_to(base: &Path, path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        base.join(path)
    }
}

impl From<checks::Refusal> for ConfigError {
    fn from(r: checks::Refusal) -> Self {
        ConfigError::Invalid {
            key: r.key,
            value: r.value,
            reason: r.reason,
        }
    }
}

impl ServerArgs {
    /// The log's RocksDB tuning from the flags and `file` (flags win; a relative path in `file` is
    /// relative to `base_dir`, the file's directory), checked.
    fn storage_tuning(
        &self,
        file: &FileConfig,
        base_dir: &Path,
    ) -> Result<StorageTuning, ConfigError> {
        let mut tuning = StorageTuning {
            wal_dir: self
                .log_wal_dir
                .clone()
                .or(file.log_wal_dir.clone().map(|d| relative_to(base_dir, d))),
            ..StorageTuning::default()
        };
        if tuning.wal_dir.as_deref() == Some(Path::new("")) {
            return Err(invalid("log_wal_dir", "", "must name a directory"));
        }
        if let Some(mb) = self.log_memtable_mb.or(file.log_memtable_mb) {
            if mb == 0 || mb > MAX_LOG_MEMTABLE_MB {
                return Err(invalid(
                    "log_memtable_mb",
                    &mb.to_string(),
                    &format!("must be 1..={MAX_LOG_MEMTABLE_MB}"),
                ));
            }
            tuning.log_memtable_bytes = (mb as usize) << 20;
        }
        if let Some(style) = self
            .log_compaction
            .as_ref()
            .or(file.log_compaction.as_ref())
        {
            tuning.log_compaction = style.parse().map_err(|reason: String| {
                let shown: String = style.chars().take(32).collect();
                invalid("log_compaction", &shown, &reason)
            })?;
        }
        match self
            .background_io_mb_per_sec
            .or(file.background_io_mb_per_sec)
        {
            None | Some(0) => {}
            Some(mb) if mb > MAX_BACKGROUND_IO_MB_PER_SEC => {
                return Err(invalid(
                    "background_io_mb_per_sec",
                    &mb.to_string(),
                    &format!("must be at most {MAX_BACKGROUND_IO_MB_PER_SEC} (0: no cap)"),
                ))
            }
            Some(mb) => tuning.background_io_bytes_per_sec = Some(mb << 20),
        }
        Ok(tuning)
    }
}

fn invalid(key: &'static str, value: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        key,
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

fn check_addr(key: &'static str, addr: &str) -> Result<(), ConfigError> {
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => Ok(()),
        _ => Err(invalid(key, addr, "expected host:port")),
    }
}

/// Parses `1=127.0.0.1:9081=127.0.0.1:8081,2=...`.
fn parse_initial_cluster(spec: &str) -> Result<Vec<InitialMember>, ConfigError> {
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|item| {
            let parts: Vec<&str> = item.trim().split('=').collect();
            match parts.as_slice() {
                [id, raft_addr, http_addr] => Ok(InitialMember {
                    id: id.parse().map_err(|_| {
                        invalid("initial_cluster", item, "member id must be a number")
                    })?,
                    raft_addr: raft_addr.to_string(),
                    http_addr: http_addr.to_string(),
                }),
                _ => Err(invalid(
                    "initial_cluster",
                    item,
                    "expected id=raft_addr=http_addr",
                )),
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "config_test.rs"]
mod tests;
