//! convoy-node: everything the `convoy` binary does, as a library — the server's assembly, its HTTP API,
//! the CLI client, the agent, the simulated fleet, the local-cluster launcher and the operator's tools
//! (demo, bench, replay). The binary (`main.rs`), the lab (`tests/lab`) and the multi-process tests
//! (`tests/`) are thin users of it.

pub mod agent;
pub mod analysis;
pub mod api;
pub mod cli;
pub mod client;
pub mod client_error;
pub mod client_pages;
pub mod common;
pub mod config;
pub mod config_checks;
pub mod config_error;
pub mod config_sources;
pub mod leader;
pub mod listener;
pub mod local;
pub mod logging;
pub mod machine;
pub mod measure;
pub mod membership;
pub mod membership_probe;
pub mod metrics;
pub mod readiness;
pub mod replica;
pub mod server;
pub mod sim;
pub mod sse;
pub mod systemd;
pub mod tls;
pub mod tools;

#[cfg(test)]
mod imports_test;

/// This build's version (the workspace's), as `convoy version` and `GET /v1/cluster` show it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
