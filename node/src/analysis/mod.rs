//! Metric analysis on the server (DEPLOYMENTS.md "Analysis"): the providers of the servers' config
//! (`[[analysis_provider]]`: a Prometheus address, a timeout, headers from a file; never an address from a
//! request) and the leader's measuring task, which queries Prometheus' `/api/v1/query` when a measurement is
//! due and proposes it as `RecordMeasurement`. What a measurement means is the domain's (`analysis/`).

pub mod prometheus;
pub mod provider;
pub mod runner;
