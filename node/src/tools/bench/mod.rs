//! `convoy bench`: throughput, latency, failover and scale of a real local 3-server cluster (RocksDB,
//! fsync), with nothing but convoy. The comparisons with etcd and wrk are the lab's
//! (`cargo run -p convoy-lab -- bench --scenario throughput --etcd`), built on the modules made public here.

mod apply_pause;
pub mod cluster;
pub mod context;
mod crowded;
pub mod failover;
mod ingest;
mod ingest_batched;
mod ingest_check;
mod large_state;
pub mod load;
mod pulse;
mod relay;
pub mod report;
mod report_flood;
mod rollout;
mod scale;
pub mod throughput;

use anyhow::Context;

pub use context::{BenchArgs, BenchOptions, Ctx, Scenario, DEFAULT_SCENARIOS};

/// Runs one scenario.
pub async fn run_scenario(ctx: &mut Ctx, scenario: Scenario) -> anyhow::Result<()> {
    let result = match scenario {
        Scenario::Throughput => throughput::run(ctx).await,
        Scenario::Ingest => ingest::run(ctx).await,
        Scenario::Rollout => rollout::run(ctx).await,
        Scenario::Failover => failover::run(ctx).await,
        Scenario::Pulse => pulse::run(ctx).await,
        Scenario::Scale => scale::run(ctx).await,
        Scenario::Restart => scale::restart(ctx).await,
        Scenario::LargeState => large_state::run(ctx).await,
        Scenario::ApplyPauseResources => apply_pause::run(ctx, apply_pause::Objects::Resources),
        Scenario::ApplyPauseNodes => apply_pause::run(ctx, apply_pause::Objects::Nodes),
        Scenario::ReportFlood => report_flood::run(ctx).await,
        Scenario::Crowded => crowded::run(ctx).await,
    };
    result.with_context(|| format!("scenario {scenario:?}"))
}

/// Runs the chosen scenarios, prints the table, merges it into `--out`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    let mut ctx = Ctx::new(args.options, args.scenario.clone())?;
    let outcome: anyhow::Result<()> = rt.block_on(async {
        for scenario in &args.scenario {
            run_scenario(&mut ctx, *scenario).await?;
        }
        Ok(())
    });
    ctx.finish()?;
    outcome
}
