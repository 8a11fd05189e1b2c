//! convoy-tests' one integration-test binary: a module per scenario file, all through real `convoy`
//! processes (one binary per crate links RocksDB once; its tests run as threads of one process).
//! Pick one file's tests with `cargo build -p convoy-node && cargo test -p convoy-tests --test it api_routes::`
//! (the build first: `-p convoy-tests` alone does not rebuild the `convoy` binary the tests start).

mod agent_e2e;
mod agent_snooze;
mod agent_stall;
mod api_errors;
mod api_routes;
mod api_watch;
mod chaos_smoke;
mod cli_fleet;
mod cluster_durability;
mod cluster_handover;
mod cluster_membership;
mod cluster_partition;
mod cluster_replication;
mod cluster_snapshot_stream;
mod cluster_wal_dir;
mod e2e_bad_requests;
mod e2e_coordinated;
mod e2e_fleet_defaults;
mod e2e_fleet_judgement;
mod e2e_fleet_policy;
mod e2e_fleet_reconverge;
mod e2e_fleet_retract;
mod e2e_fleet_thresholds;
mod e2e_fleet_uninstall;
mod e2e_groups;
mod e2e_plan;
mod e2e_retention;
mod e2e_rollouts;
mod e2e_selection_rules;
mod e2e_watch;
mod failover_leader_kill;
mod job_verbs;
mod monitoring_logs;
mod monitoring_metrics;
mod monitoring_rollbacks;
mod openapi_responses;
mod operator_mistakes;
mod replay_offline;
mod security_agent_cost;
mod security_limits;
mod security_report_inflight;
mod security_report_rate;
mod security_tls;
mod security_token_life;
mod security_tokens;
mod server_startup;
mod storage_fatal;
mod ui_browser;
