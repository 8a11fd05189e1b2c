//! Metric analysis (DEPLOYMENTS.md "Analysis"): the `analysis` spec a subscription, deployment or group override
//! may carry, its condition language, query templating, and the replicated run a deployment keeps (measurements,
//! counters, the verdict). Pure: the leader measures, `apply` records, this decides.
//!
//! The bottom layer of the domain: it uses no other module of the crate, so `values` (the settings) can hold
//! its spec; its refusals are [`spec::AnalysisInvalid`], which `values` turns into an `Invalid`.

pub mod condition;
pub mod run;
pub mod spec;
pub mod template;
