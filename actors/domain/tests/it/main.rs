//! The domain's integration tests, one binary: scenarios of DEPLOYMENTS.md driven through `ClusterState` with
//! the test kit (`convoy_domain::testing`), and property tests over random command sequences.

mod analysis_properties;
mod brake_properties;
mod budget_properties;
mod composed_properties;
mod coordinated_cases;
mod group_scenarios;
mod limit_properties;
mod properties;
mod properties_judgement;
mod rollback_properties;
mod rolling_scenarios;
mod selection_properties;
mod wait_properties;
mod weak_window_properties;
mod window_properties;
