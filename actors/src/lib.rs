//! convoy-actors: the leader-side actors that drive the deployment domain (`convoy-domain`, re-exported as `domain`).
#![warn(missing_docs)]
pub use convoy_domain as domain;
pub mod leader;
