//! One server process of a local cluster, what is needed to restart it, and clients of it.

use std::path::{Path, PathBuf};

use super::process::ChildProcess;
use crate::client::{ApiClient, RawClient};
use crate::tls::DevPki;

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
    pub(super) process: ChildProcess,
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

    /// Whether the process runs (a stopped one counts as running).
    pub fn is_running(&self) -> bool {
        self.process.is_running()
    }

    /// The OS pid while it runs (to read `/proc/<pid>/status`, or to signal it).
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Where its stdout and stderr go.
    pub fn log_path(&self) -> &Path {
        self.process.log_path()
    }

    /// The last `lines` lines of its log.
    pub fn log_tail(&self, lines: usize) -> String {
        self.process.log_tail(lines)
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
