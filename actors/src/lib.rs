//! convoy-actors: the deployment domain as a pure, deterministic core, and the leader-side actors.
#![warn(missing_docs)]
pub mod domain;
pub mod leader;
