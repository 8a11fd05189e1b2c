//! convoy-tests: fixtures that start real `convoy server` processes on loopback and talk to them
//! over HTTP, with helpers to kill, pause, restart and partition them.

pub mod cluster;
pub mod http;

pub use cluster::{Cluster, ServerProc};
pub use http::Client;
