//! A local cluster of real `convoy server` processes on one machine: what the demo and the benchmarks run,
//! and what the lab (`tests/lab`) and the multi-process tests build on. It starts, kills, terminates and
//! restarts servers as child processes and waits for a leader; faults (pauses, partitions, network
//! namespaces) are the lab's, not the product's.

pub mod cluster;
pub mod files;
pub mod options;
pub mod ports;
pub mod process;
pub mod server;
pub mod wait;

pub use cluster::Cluster;
pub use files::{new_admin_token, write_private, write_secret};
pub use options::{convoy_bin, ClusterOptions, Placement, START_PATIENCE};
pub use ports::{free_port, free_ports};
pub use server::Server;
pub use wait::{eventually, wait_leader};
