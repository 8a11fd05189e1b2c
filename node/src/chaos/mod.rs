//! `convoy chaos`: seeded fault injection against a real local cluster, with checkers over the
//! recorded history; anyone can rerun a seed (`convoy chaos --seed 7 --duration 60s`).

mod check;
mod faults;
mod history;
mod run;
mod workload;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};

pub use faults::FaultKind;
use run::{RunConfig, SeedReport};

/// `convoy chaos` flags.
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
}

/// Parses `90s`, `2m`, `1500ms` or a number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("duration {s:?}: expected e.g. 90s, 2m or 1500ms"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        other => Err(format!(
            "duration {s:?}: unknown unit {other:?} (use ms, s or m)"
        )),
    }
}

fn percentile(mut samples: Vec<u64>, p: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    Some(samples[rank - 1])
}

fn summary_line(r: &SeedReport) -> String {
    format!(
        "seed {}: {} faults, {} operations, {} writes acknowledged, {} deployments, {} reads checked, {} violations",
        r.seed,
        r.faults.len(),
        r.operations,
        r.acked,
        r.deployments,
        r.observations,
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
    };
    let rt = tokio::runtime::Runtime::new()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_refuse_nonsense() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("5h").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn percentiles_take_the_rank_at_or_above() {
        assert_eq!(percentile(vec![], 0.5), None);
        assert_eq!(percentile(vec![5, 1, 3], 0.5), Some(3));
        assert_eq!(percentile((1..=100).collect(), 0.99), Some(99));
        assert_eq!(percentile(vec![7], 0.99), Some(7));
    }
}
