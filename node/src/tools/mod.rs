//! The operator's tools beside the server: the demo (a local cluster, a simulated fleet, a rollout
//! through a leader kill), the benchmarks of convoy alone, and the offline replay of a stopped server's
//! log. Fault injection and comparisons with other systems are the lab's (`tests/lab`).

pub mod bench;
pub mod demo;
pub mod replay;
