//! `convoy-lab chaos`: seeded fault injection against a real local cluster, with checkers over the
//! recorded history; anyone can rerun a seed (`cargo run -p convoy-lab -- chaos --seed 7 --duration 60s`).

mod catchup;
pub mod check;
mod check_fleet;
mod check_limits;
pub mod check_policies;
pub mod check_state;
pub mod check_waits;
mod faults;
mod fleet_ops;
mod history;
mod mistakes;
pub mod replayed;
mod run;
mod workload;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};

pub use faults::FaultKind;
use run::{RunConfig, SeedReport};

use convoy_node::measure::{parse_duration, percentile};

/// `convoy-lab chaos` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ChaosArgs {
    /// The first seed; the fault schedule and the workload's choices follow from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many seeds to run, one after another (seed, seed+1, ...).
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// How long each seed runs its workload and faults: `90s`, `2m` or seconds.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Fault kinds to draw from (comma-separated); default: all.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub faults: Vec<FaultKind>,
    /// Simulated nodes in the fleet.
    #[arg(long, default_value_t = 20)]
    pub nodes: usize,
    /// Keep each seed's data dirs and server logs here (default: temp dirs, removed).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Print every fault as it strikes.
    #[arg(long)]
    pub verbose: bool,
    /// Root only: put each server in its own network namespace (veth, its own address) and make
    /// partitions real, with nftables rules between the namespaces.
    #[arg(long)]
    pub netns: bool,
    /// Instead of seeds: restart a follower that missed a purged log while the state holds this
    /// many nodes, and measure its catch-up through a snapshot.
    #[arg(long, value_name = "NODES")]
    pub catch_up: Option<usize>,
}

fn summary_line(r: &SeedReport) -> String {
    format!(
        "seed {}: {} faults, {} operations, {} writes acknowledged, {} deployments, {} group deployments, {} reads and {} node targets checked, {} fleet targets and {} liveness reads against {} bans, {} replayed states, {} violations",
        r.seed,
        r.faults.len(),
        r.operations,
        r.acked,
        r.deployments,
        r.groups,
        r.observations,
        r.targets,
        r.fleet.0,
        r.fleet.1,
        r.fleet.2,
        r.replayed_states,
        r.violations.len()
    )
}

fn print_recoveries(reports: &[SeedReport]) {
    let writes: Vec<u64> = reports
        .iter()
        .flat_map(|r| r.recoveries.iter().filter_map(|x| x.0))
        .collect();
    let progress: Vec<u64> = reports
        .iter()
        .flat_map(|r| r.recoveries.iter().filter_map(|x| x.1))
        .collect();
    let kills: usize = reports.iter().map(|r| r.recoveries.len()).sum();
    if kills == 0 {
        return;
    }
    let fmt = |v: Option<u64>| v.map_or("-".to_string(), |ms| format!("{ms} ms"));
    println!(
        "leader kills: {kills}; SIGKILL → first acknowledged write: p50 {} p99 {} max {} ({} samples); \
         → next deployment progress: p50 {} p99 {} max {} ({} samples)",
        fmt(percentile(writes.clone(), 0.5)),
        fmt(percentile(writes.clone(), 0.99)),
        fmt(writes.iter().copied().max()),
        writes.len(),
        fmt(percentile(progress.clone(), 0.5)),
        fmt(percentile(progress.clone(), 0.99)),
        fmt(progress.iter().copied().max()),
        progress.len(),
    );
}

/// Runs the seeds; fails if any found a violation.
pub fn run(args: ChaosArgs) -> anyhow::Result<()> {
    let kinds = if args.faults.is_empty() {
        FaultKind::ALL.to_vec()
    } else {
        args.faults.clone()
    };
    let config = RunConfig {
        duration: args.duration,
        kinds,
        nodes: args.nodes,
        verbose: args.verbose,
        netns: args.netns,
    };
    let rt = tokio::runtime::Runtime::new()?;
    if let Some(nodes) = args.catch_up {
        let temp = tempfile::Builder::new()
            .prefix("convoy-catchup-")
            .tempdir()?;
        let dir = args
            .dir
            .clone()
            .unwrap_or_else(|| temp.path().to_path_buf());
        let c = rt.block_on(catchup::run(nodes, &dir))?;
        println!(
            "catch-up: {} nodes, state {} bytes, leader log purged to {}; the restarted follower \
             reached the leader's digest in {} ms (restart included)",
            c.nodes,
            c.state_bytes,
            c.purged,
            c.catch_up.as_millis()
        );
        return Ok(());
    }
    let mut reports = Vec::new();
    for seed in args.seed..args.seed + args.seeds {
        let temp;
        let dir = match &args.dir {
            Some(dir) => dir.join(format!("seed-{seed}")),
            None => {
                temp = tempfile::Builder::new().prefix("convoy-chaos-").tempdir()?;
                temp.path().to_path_buf()
            }
        };
        let report = rt
            .block_on(run::run_seed(seed, &config, &dir))
            .with_context(|| format!("seed {seed} (logs in {})", dir.display()))?;
        println!("{}", summary_line(&report));
        for v in &report.violations {
            println!("  VIOLATION {}: {}", v.rule, v.detail);
        }
        reports.push(report);
    }
    let faults: usize = reports.iter().map(|r| r.faults.len()).sum();
    let violations: usize = reports.iter().map(|r| r.violations.len()).sum();
    println!(
        "{} seeds, {faults} faults, {violations} violations",
        reports.len()
    );
    print_recoveries(&reports);
    if violations > 0 {
        bail!("{violations} violations");
    }
    Ok(())
}
