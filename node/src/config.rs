//! Server configuration: a TOML file, overridden by `--flags`, overridden by `CONVOY_*` variables.
//!
//! clap reads a flag or its environment variable; a key given neither way falls back to the file,
//! then to the default. Errors name the key and the value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::api::auth::{secret, AuthMode};
use crate::config_checks as checks;
use crate::config_error::invalid;
pub use crate::config_error::ConfigError;
use crate::config_sources::{parse_initial_cluster, read_file, relative_to};
pub use crate::config_sources::{FileConfig, InitialMember, ServerArgs};
use convoy_actors::domain::{FleetLimits, SecretHash, MAX_FLEET_LIMIT};
use convoy_actors::leader::{DEFAULT_DEPLOYMENT_HISTORY, DEFAULT_FORGET_NODES_AFTER};
use convoy_raft::log_store::{StorageTuning, MAX_BACKGROUND_IO_MB_PER_SEC, MAX_LOG_MEMTABLE_MB};
use convoy_raft::network::inbox::MAX_SNAPSHOT_CHUNK_BYTES;
use convoy_raft::{Member, RaftConfig};

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
    /// The `Host` names the API answers to (`allowed_hosts`, checked, lower-case) and this server's own.
    pub hosts: crate::api::host::HostPolicy,
    /// Each token's report budget on this server (`agent_report_bytes_per_sec`, `agent_reports_per_sec`).
    pub report_rates: crate::api::report_rate::Rates,
    /// The analysis providers (`[[analysis_provider]]`), resolved: the only addresses the leader queries.
    pub analysis_providers: Vec<crate::analysis::provider::Provider>,
    /// The fleet-wide limits of this server's config (`max_concurrent_downloads`, `max_concurrent_installs`):
    /// what it proposes when it leads and no one set them by the API.
    pub fleet_limits: FleetLimits,
}

/// Most `allowed_hosts` entries.
pub const MAX_ALLOWED_HOSTS: usize = 64;

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
        raft.state_format = convoy_actors::domain::STATE_FORMAT;
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
                crate::common::token_file::read_file(&path)
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
        let hosts = crate::api::host::HostPolicy {
            own: http_addr.clone(),
            allowed: allowed_hosts(
                self.allowed_hosts
                    .clone()
                    .or(file.allowed_hosts)
                    .unwrap_or_default(),
            )?,
        };
        let forget_nodes_after = match self.forget_nodes_after.clone().or(file.forget_nodes_after) {
            None => DEFAULT_FORGET_NODES_AFTER,
            Some(text) => convoy_time::parse_duration(&text).map_err(|e| {
                let shown: String = text.chars().take(100).collect();
                invalid(
                    "forget_nodes_after",
                    &shown,
                    &format!("{e} (7d or 12h, or 0s for never)"),
                )
            })?,
        };
        let report_rates = report_rates(
            self.agent_report_bytes_per_sec
                .or(file.agent_report_bytes_per_sec),
            self.agent_reports_per_sec.or(file.agent_reports_per_sec),
        )?;
        let analysis_providers =
            crate::analysis::provider::resolve(file.analysis_provider, &base_dir)?;
        let fleet_limits = FleetLimits {
            max_concurrent_downloads: fleet_limit(
                "max_concurrent_downloads",
                self.max_concurrent_downloads
                    .or(file.max_concurrent_downloads),
            )?,
            max_concurrent_installs: fleet_limit(
                "max_concurrent_installs",
                self.max_concurrent_installs
                    .or(file.max_concurrent_installs),
            )?,
        };
        Ok(ServerConfig {
            fleet_limits,
            analysis_providers,
            report_rates,
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
            hosts,
        })
    }
}

/// A fleet-wide limit of the config: 1..=[`MAX_FLEET_LIMIT`] when set.
fn fleet_limit(key: &'static str, v: Option<u32>) -> Result<Option<u32>, ConfigError> {
    match v {
        Some(n) if n == 0 || n > MAX_FLEET_LIMIT => Err(invalid(
            key,
            &n.to_string(),
            &format!("must be 1..={MAX_FLEET_LIMIT} (leave it out for no limit)"),
        )),
        v => Ok(v),
    }
}

/// The report budget per token: each key within its bounds, defaults otherwise.
fn report_rates(
    bytes: Option<u64>,
    requests: Option<u64>,
) -> Result<crate::api::report_rate::Rates, ConfigError> {
    use crate::api::report_rate::{Rates, BYTES_PER_SEC_RANGE, REQUESTS_PER_SEC_RANGE};
    let within = |key: &'static str, v: u64, (lo, hi): (u64, u64)| {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(invalid(
                key,
                &v.to_string(),
                &format!("must be {lo}..={hi}"),
            ))
        }
    };
    let defaults = Rates::default();
    Ok(Rates {
        bytes_per_sec: within(
            "agent_report_bytes_per_sec",
            bytes.unwrap_or(defaults.bytes_per_sec),
            BYTES_PER_SEC_RANGE,
        )?,
        requests_per_sec: within(
            "agent_reports_per_sec",
            requests.unwrap_or(defaults.requests_per_sec),
            REQUESTS_PER_SEC_RANGE,
        )?,
    })
}

/// `allowed_hosts`, each entry checked and lower-cased, at most [`MAX_ALLOWED_HOSTS`].
fn allowed_hosts(entries: Vec<String>) -> Result<Vec<String>, ConfigError> {
    if entries.len() > MAX_ALLOWED_HOSTS {
        return Err(invalid(
            "allowed_hosts",
            &format!("{} entries", entries.len()),
            &format!("at most {MAX_ALLOWED_HOSTS} names"),
        ));
    }
    entries
        .iter()
        .map(|entry| {
            crate::api::host::check_entry(entry).map_err(|reason| {
                let shown: String = entry.chars().take(100).collect();
                invalid("allowed_hosts", &shown, &reason)
            })
        })
        .collect()
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

fn check_addr(key: &'static str, addr: &str) -> Result<(), ConfigError> {
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => Ok(()),
        _ => Err(invalid(key, addr, "expected host:port")),
    }
}

#[cfg(test)]
#[path = "config_test.rs"]
mod tests;
