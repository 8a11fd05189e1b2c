//! `convoy-lab bench`: convoy's benchmark scenarios (`convoy bench`'s, same flags) and the comparisons
//! with other systems on the same machine: a 3-member etcd driven with the same load (`--etcd`, after
//! the `throughput`, `failover` and `crowded` scenarios), and wrk, an external load generator (`--scenario wrk`).

mod against_etcd;
pub mod cpu;
pub mod etcd;
pub mod wrk;

use anyhow::Context;
use clap::builder::PossibleValue;
use clap::ValueEnum;
use convoy_node::tools::bench::{self, BenchOptions, Ctx, Scenario};

/// A scenario of the lab's bench: one of convoy's, or the wrk sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabScenario {
    /// One of `convoy bench`'s scenarios.
    Convoy(Scenario),
    /// (h) wrk (external load generator, Lua scripts in `tests/lab/src/compare/wrk/`) creating
    /// resources on the leader at each `--state-objects` size and `--clients` level; etcd too with
    /// `--etcd`. Not in the default set (needs `wrk`; fills up to 1M objects).
    Wrk,
}

impl ValueEnum for LabScenario {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: &[LabScenario] = &[
            LabScenario::Convoy(Scenario::Throughput),
            LabScenario::Convoy(Scenario::Ingest),
            LabScenario::Convoy(Scenario::Rollout),
            LabScenario::Convoy(Scenario::Failover),
            LabScenario::Convoy(Scenario::Pulse),
            LabScenario::Convoy(Scenario::Scale),
            LabScenario::Convoy(Scenario::Restart),
            LabScenario::Convoy(Scenario::LargeState),
            LabScenario::Convoy(Scenario::ApplyPauseResources),
            LabScenario::Convoy(Scenario::ApplyPauseNodes),
            LabScenario::Convoy(Scenario::ReportFlood),
            LabScenario::Convoy(Scenario::Crowded),
            LabScenario::Wrk,
        ];
        ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            LabScenario::Convoy(s) => s.to_possible_value(),
            LabScenario::Wrk => Some(PossibleValue::new("wrk")),
        }
    }
}

/// `convoy-lab bench` flags: convoy's, and those of the comparisons.
#[derive(Debug, Clone, clap::Args)]
pub struct LabBenchArgs {
    /// Scenarios to run, comma-separated: `convoy bench`'s, and `wrk`.
    #[arg(long, value_enum, value_delimiter = ',', default_value = bench::DEFAULT_SCENARIOS)]
    pub scenario: Vec<LabScenario>,
    /// `convoy bench`'s flags.
    #[command(flatten)]
    pub options: BenchOptions,
    /// Also start a 3-member etcd on loopback and drive it with the same load (needs `etcd` on PATH).
    #[arg(long)]
    pub etcd: bool,
    /// Objects stored before each `wrk` measurement (a state-size sweep).
    #[arg(long, value_delimiter = ',', default_value = "0,100000,1000000")]
    pub state_objects: Vec<u64>,
    /// `wrk`: at each size and level also run convoy's own load generator (the `throughput` scenario's)
    /// against both systems, so that the two generators' numbers come from the same run.
    #[arg(long)]
    pub own_client: bool,
}

/// What the comparisons add to convoy's bench context.
pub struct Compare {
    /// Whether etcd runs too (`--etcd` and an `etcd` binary on PATH).
    pub etcd: bool,
    /// A keep-alive HTTP client of etcd (no token).
    pub etcd_http: reqwest::Client,
    /// `--state-objects`.
    pub state_objects: Vec<u64>,
    /// `--own-client`.
    pub own_client: bool,
}

/// Runs the chosen scenarios (each of convoy's followed by etcd's with `--etcd`), prints the table,
/// merges it into `--out`.
pub fn run(args: LabBenchArgs) -> anyhow::Result<()> {
    if args.etcd && !etcd::available() {
        eprintln!("--etcd: no etcd binary on PATH (apt-get install -y etcd-server etcd-client); skipping etcd");
    }
    let cmp = Compare {
        etcd: args.etcd && etcd::available(),
        etcd_http: bench::load::http_client(None),
        state_objects: args.state_objects.clone(),
        own_client: args.own_client,
    };
    let rt = tokio::runtime::Runtime::new()?;
    let convoy_scenarios = args
        .scenario
        .iter()
        .filter_map(|s| match s {
            LabScenario::Convoy(s) => Some(*s),
            LabScenario::Wrk => None,
        })
        .collect();
    let mut ctx = Ctx::new(args.options, convoy_scenarios)?;
    let outcome: anyhow::Result<()> = rt.block_on(async {
        for scenario in &args.scenario {
            match *scenario {
                LabScenario::Convoy(s) => {
                    bench::run_scenario(&mut ctx, s).await?;
                    let against = match s {
                        Scenario::Throughput if cmp.etcd => {
                            against_etcd::etcd_throughput(&mut ctx, &cmp).await
                        }
                        Scenario::Failover if cmp.etcd => {
                            against_etcd::etcd_failover(&mut ctx, &cmp).await
                        }
                        Scenario::Crowded if cmp.etcd => {
                            against_etcd::etcd_crowded(&mut ctx, &cmp).await
                        }
                        _ => Ok(()),
                    };
                    against.with_context(|| format!("scenario {s:?} against etcd"))?;
                }
                LabScenario::Wrk => wrk::run_scenario(&mut ctx, &cmp)
                    .await
                    .context("scenario wrk")?,
            }
        }
        Ok(())
    });
    ctx.finish()?;
    outcome
}
