//! Values with no domain dependency: ids and time, refusals of their own, thresholds, strategies, statuses and
//! their transition table, the OpenAPI schemas of hand-written encodings, an apply's outcome, and text safe to
//! show.

pub mod count;
pub mod ids;
pub mod invalid;
pub mod outcome;
pub mod schema;
pub mod status;
pub mod strategy;
pub mod text;
pub mod threshold;
