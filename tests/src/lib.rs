//! convoy-tests: fixtures that start real `convoy server` processes on loopback and talk to them
//! over HTTP, with helpers to kill, pause, restart and partition them.

pub mod cluster;
pub mod fleet;
pub mod http;
pub mod scenario;

pub use cluster::{Cluster, ServerProc};
pub use fleet::{Fleet, FleetConfig, Phase};
pub use http::Client;
