//! convoy-tests: the multi-process tests' own helpers — a real agent process, a scripted fleet that records when each node
//! worked, and request shortcuts. The cluster harness and the HTTP client are the library's
//! (`convoy_node::local`, `convoy_node::client`) and the lab's pauses and partitions (`convoy_lab`),
//! re-exported here for the tests.

pub mod agent;
pub mod cli;
pub mod fleet;
pub mod scenario;
pub mod schema;
pub mod stub;

pub use agent::Agent;
pub use convoy_lab::{Partitions, Pause};
pub use convoy_node::client::RawClient;
pub use convoy_node::local::{convoy_bin, eventually, free_port, Cluster, ClusterOptions};
pub use fleet::{Fleet, FleetConfig, Phase};
pub use scenario::names;
