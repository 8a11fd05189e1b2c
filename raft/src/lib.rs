//! convoy-raft: the replicated log (openraft + RocksDB + bincode/TCP), knowing nothing of deployments.
//!
//! The application plugs in through [`StateMachine`]; everything else — durable log, snapshots,
//! the authenticated internal transport, proposal batching and forwarding — lives here.

#![warn(missing_docs)]

pub mod background;
pub mod codec;
pub mod error;
pub mod failover;
pub mod handover;
pub mod identity;
pub mod log_store;
pub mod network;
pub mod node;
pub mod replay;
pub mod sm_store;
pub mod state_machine;
pub mod stats;
pub mod types;

pub use error::RaftError;
pub use node::{RaftConfig, RaftNode};
pub use state_machine::{FrozenState, StateMachine};
pub use types::{Member, NodeId, Proposal, Reply, TypeConfig};
