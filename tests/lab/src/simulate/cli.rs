//! `convoy-lab simulate`: one seed (`--seed S`, its trace with `--trace`) or many (`--seeds N`,
//! on `--jobs` threads), a summary with seeds per second, and for every failing seed its
//! violations, the end of its trace and the one command that replays it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::disk::FsyncModel;
use super::reads::ReadMode;
use super::run::{run, RunReport, SimOptions};
use super::schedule::{List, Schedule};

/// A rule broken on purpose, to show the checkers catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mutation {
    /// The disks acknowledge writes before syncing them (a crash may lose acknowledged entries).
    AckBeforeSync,
    /// Reads are served from the reading server's applied state without the read index (stale).
    StaleReads,
}

/// `convoy-lab simulate`'s flags.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Run this one seed (and print its trace's hash).
    #[arg(long, conflicts_with = "seeds")]
    pub seed: Option<u64>,
    /// Run this many seeds, from `--first-seed`.
    #[arg(long)]
    pub seeds: Option<u64>,
    /// The first seed of `--seeds`.
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,
    /// Simulated minutes of workload and faults per seed (then the end checks).
    #[arg(long, default_value_t = 1.0)]
    pub minutes: f64,
    /// Servers in the simulated cluster.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=7))]
    pub servers: u64,
    /// Break a rule on purpose (the run should then fail).
    #[arg(long, value_enum)]
    pub mutate: Option<Mutation>,
    /// Inject no faults (workload only).
    #[arg(long)]
    pub no_faults: bool,
    /// Print the whole trace of `--seed`.
    #[arg(long)]
    pub trace: bool,
    /// Send only these person commands (by number, e.g. `0,3,7-9`): a shrunk schedule.
    #[arg(long, value_parser = List::parse)]
    pub keep_ops: Option<List>,
    /// Inject only these faults (by number, e.g. `1,4`): a shrunk schedule.
    #[arg(long, value_parser = List::parse)]
    pub keep_faults: Option<List>,
    /// When `--seed` fails, shrink it: replay it with commands and faults removed while it still
    /// fails with the same checker, then print the shrunk schedule and its replay command.
    #[arg(long, requires = "seed")]
    pub shrink: bool,
    /// The most replays `--shrink` makes.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub shrink_runs: u64,
    /// Threads running seeds side by side (each run stays on one thread).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub jobs: u64,
}

impl SimArgs {
    fn options(&self, seed: u64) -> SimOptions {
        SimOptions {
            seed,
            servers: self.servers,
            minutes: self.minutes,
            fsync: match self.mutate {
                Some(Mutation::AckBeforeSync) => FsyncModel::AckBeforeSync,
                _ => FsyncModel::Honest,
            },
            reads: match self.mutate {
                Some(Mutation::StaleReads) => ReadMode::Stale,
                _ => ReadMode::Consistent,
            },
            faults: !self.no_faults,
            keep_trace: self.trace || self.shrink,
            schedule: Schedule {
                ops: self.keep_ops.clone(),
                faults: self.keep_faults.clone(),
            },
        }
    }
}

/// Prints a failing run: its violations, the end of its trace, and how to replay it.
pub fn print_failure(report: &RunReport) {
    eprintln!(
        "seed {} FAILED ({} violations); the end of its trace:",
        report.options.seed,
        report.violations.len()
    );
    let tail = report.trace.len().saturating_sub(60);
    for line in &report.trace[tail..] {
        eprintln!("  {line}");
    }
    for v in report.violations.iter().take(10) {
        eprintln!("  violation {}: {}", v.rule, v.detail);
    }
    eprintln!("replay: {}", report.replay_command());
}

/// Runs `convoy-lab simulate`.
pub fn run_cli(args: SimArgs) -> anyhow::Result<()> {
    if args.minutes <= 0.0 || args.minutes > 24.0 * 60.0 {
        anyhow::bail!("--minutes must be in (0, 1440], not {}", args.minutes);
    }
    let seeds: Vec<u64> = match (args.seed, args.seeds) {
        (Some(seed), _) => vec![seed],
        (None, Some(n)) => (args.first_seed..args.first_seed.saturating_add(n)).collect(),
        (None, None) => vec![args.first_seed],
    };
    if let (true, Some(seed)) = (args.shrink, args.seed) {
        return super::shrink::run_cli(&args.options(seed), args.shrink_runs);
    }
    let single = seeds.len() == 1;
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(Mutex::new(Vec::<RunReport>::new()));
    let totals = Arc::new(Mutex::new((0u64, 0u64, 0u64)));
    let seeds = Arc::new(seeds);
    let args = Arc::new(args);
    let workers: Vec<_> = (0..args.jobs.min(seeds.len() as u64).max(1))
        .map(|_| {
            let (next, failures, totals, seeds, args) = (
                next.clone(),
                failures.clone(),
                totals.clone(),
                seeds.clone(),
                args.clone(),
            );
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(&seed) = seeds.get(i) else {
                    return;
                };
                let report = run(&args.options(seed));
                if single {
                    if args.trace {
                        for line in &report.trace {
                            println!("{line}");
                        }
                    }
                    let s = &report.stats;
                    println!(
                        "seed {seed}: trace {} ({} lines); {:.1} simulated s, {} acknowledged writes ({} refused), {} unknown, {} faults, {} terms, index {}, {} messages ({} lost, {} duplicated)",
                        report.trace_hash, report.trace_lines, s.sim_ms as f64 / 1000.0, s.acked, s.refused, s.unknown, s.faults, s.terms, s.applied, s.net.sent, s.net.lost, s.net.duplicated
                    );
                }
                {
                    let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
                    t.0 += 1;
                    t.1 += report.stats.sim_ms;
                    t.2 += report.stats.acked;
                    if !single && t.0 % 100 == 0 {
                        eprintln!("{} seeds run, {} failed", t.0, failures.lock().map(|f| f.len()).unwrap_or(0));
                    }
                }
                if !report.violations.is_empty() {
                    print_failure(&report);
                    failures.lock().unwrap_or_else(|e| e.into_inner()).push(report);
                }
            })
        })
        .collect();
    for worker in workers {
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("a simulation thread panicked"))?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let (runs, sim_ms, acked) = *totals.lock().unwrap_or_else(|e| e.into_inner());
    let failures = failures.lock().unwrap_or_else(|e| e.into_inner());
    println!(
        "{runs} seeds in {elapsed:.1} s on {} threads: {:.2} seeds/s ({:.0} seeds/hour), {:.1} simulated minutes per seed, {:.0} acknowledged writes per seed; {} failed",
        args.jobs,
        runs as f64 / elapsed.max(1e-9),
        runs as f64 * 3600.0 / elapsed.max(1e-9),
        sim_ms as f64 / 60_000.0 / runs.max(1) as f64,
        acked as f64 / runs.max(1) as f64,
        failures.len()
    );
    if !failures.is_empty() {
        for report in failures.iter() {
            eprintln!("failed: {}", report.replay_command());
        }
        anyhow::bail!("{} of {runs} seeds failed", failures.len());
    }
    Ok(())
}
