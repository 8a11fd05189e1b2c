//! Many seeds on a few threads (each run stays on its thread, whose executor is its own): what the
//! CLI's `--seeds N --jobs J` and CI's batch test both run. Failures come back in seed order, so
//! "the first failing seed" is the same whatever the threads' timing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::run::{run, RunReport, SimOptions};

/// What a batch of seeds came to.
#[derive(Debug, Default)]
pub struct Batch {
    /// Seeds run.
    pub runs: u64,
    /// Simulated milliseconds, all runs together.
    pub sim_ms: u64,
    /// Acknowledged writes, all runs together.
    pub acked: u64,
    /// The failing runs, by seed.
    pub failures: Vec<RunReport>,
    /// Wall time of the whole batch.
    pub elapsed: Duration,
}

impl Batch {
    /// Seeds per wall-clock second.
    pub fn seeds_per_second(&self) -> f64 {
        self.runs as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Simulated minutes per seed, on average.
    pub fn minutes_per_seed(&self) -> f64 {
        self.sim_ms as f64 / 60_000.0 / self.runs.max(1) as f64
    }
}

/// Runs every seed of `seeds` with `options(seed)` on `jobs` threads (at least one), calling
/// `each` with every report as it comes (from the thread that ran it).
pub fn run_batch(
    seeds: &[u64],
    jobs: u64,
    options: impl Fn(u64) -> SimOptions + Sync,
    each: impl Fn(&RunReport) + Sync,
) -> Batch {
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let batch = Mutex::new(Batch::default());
    let threads = jobs.clamp(1, seeds.len().max(1) as u64);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst) as usize;
                let Some(&seed) = seeds.get(i) else {
                    return;
                };
                let report = run(&options(seed));
                each(&report);
                let mut b = batch.lock().unwrap_or_else(|e| e.into_inner());
                b.runs += 1;
                b.sim_ms += report.stats.sim_ms;
                b.acked += report.stats.acked;
                if !report.violations.is_empty() {
                    b.failures.push(report);
                }
            });
        }
    });
    let mut batch = batch.into_inner().unwrap_or_else(|e| e.into_inner());
    batch.failures.sort_by_key(|r| r.options.seed);
    batch.elapsed = started.elapsed();
    batch
}
