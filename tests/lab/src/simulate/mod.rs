//! Deterministic simulation (`convoy-lab simulate`): the whole cluster in one thread from a seed.
//! Three or five servers run the real openraft over in-memory stores that model fsync
//! ([`disk`], [`log_store`]) and convoy's real state machine applied through convoy-raft's apply
//! path ([`sm_store`]), talking over a simulated network ([`net`]), on a virtual clock and a
//! seeded RNG ([`runtime`], [`executor`], [`watch`]). A seeded workload, the leader's own jobs
//! and seeded faults ([`workload`], [`leader`], [`faults`]) drive it; the checkers ([`observe`],
//! and `chaos::check`'s domain checkers) run at every step; a run's trace hashes to the same
//! value every time its seed is replayed ([`run`]).
//! docs/RELIABILITY.md, "Deterministic simulation", says what is simulated and what is not.

pub mod batch;
pub mod cluster;
pub mod decoded;
pub mod disk;
pub mod executor;
pub mod faults;
pub mod history;
pub mod leader;
pub mod linearize;
pub mod log_store;
pub mod membership;
pub mod net;
pub mod observe;
pub mod reads;
pub mod run;
pub mod runtime;
pub mod schedule;
pub mod shrink;
pub mod sm_store;
pub mod snapshots;
pub mod watch;
pub mod workload;

mod cli;

pub use cli::{run_cli, SimArgs};
pub use disk::FsyncModel;
pub use run::{run, RunReport, SimOptions};

#[cfg(test)]
mod check_test;
#[cfg(test)]
mod disk_test;
#[cfg(test)]
mod executor_test;
#[cfg(test)]
mod leader_test;
#[cfg(test)]
mod linearize_test;
#[cfg(test)]
mod membership_test;
#[cfg(test)]
mod run_test;
#[cfg(test)]
mod shrink_test;
