//! Values with no domain dependency: ids and time, refusals of their own, thresholds, strategies, statuses and
//! their transition table, the OpenAPI schemas of hand-written encodings, and an apply's outcome.

pub mod ids;
pub mod invalid;
pub mod outcome;
pub mod schema;
pub mod status;
pub mod strategy;
pub mod threshold;
