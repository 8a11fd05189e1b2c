//! The shrinker: a failing seed replayed with its person commands and faults removed (delta
//! debugging, Zeller's ddmin over the complements, over the faults then the commands), keeping a
//! removal when the run still fails with the same checker; it ends with the schedule that still
//! fails and the one command that replays it.

use super::run::{run, RunReport, SimOptions};
use super::schedule::{List, Schedule};

/// What a shrink came to.
pub struct Shrunk {
    /// The rule the original run broke first, which every kept removal still breaks.
    pub rule: &'static str,
    /// The last failing run of the shrunk schedule.
    pub report: RunReport,
    /// Commands and faults the original run drew.
    pub before: (u64, u64),
    /// Commands and faults the shrunk schedule keeps.
    pub after: (u64, u64),
    /// Runs the shrink took.
    pub runs: u64,
}

/// Shrinks the schedule of `failing` (a run with violations) in at most `max_runs` replays.
/// Returns `None` when `failing` did not fail.
pub fn shrink(failing: &RunReport, max_runs: u64) -> Option<Shrunk> {
    let rule = failing.violations.first()?.rule;
    let stats = &failing.stats;
    let mut options = failing.options.clone();
    let mut runs = 0u64;
    let mut last = failing.clone();
    let all_ops: Vec<u64> = match &options.schedule.ops {
        Some(list) => list.0.iter().copied().collect(),
        None => (0..stats.ops).collect(),
    };
    let all_faults: Vec<u64> = match &options.schedule.faults {
        Some(list) => list.0.iter().copied().collect(),
        None => (0..stats.faults).collect(),
    };
    let mut ops = all_ops.clone();
    let mut faults = all_faults.clone();
    let fails = |ops: &[u64], faults: &[u64], runs: &mut u64, last: &mut RunReport| {
        if *runs >= max_runs {
            return false;
        }
        *runs += 1;
        let candidate = SimOptions {
            schedule: schedule(ops, faults),
            ..options.clone()
        };
        let report = run(&candidate);
        let still = report.violations.iter().any(|v| v.rule == rule);
        if still {
            *last = report;
        }
        still
    };
    // Faults first (fewer, and each one changes much), then the commands, then the faults again.
    faults = ddmin(faults, |f| fails(&ops, f, &mut runs, &mut last));
    ops = ddmin(ops, |o| fails(o, &faults, &mut runs, &mut last));
    faults = ddmin(faults, |f| fails(&ops, f, &mut runs, &mut last));
    options.schedule = schedule(&ops, &faults);
    last.options = options;
    Some(Shrunk {
        rule,
        report: last,
        before: (all_ops.len() as u64, all_faults.len() as u64),
        after: (ops.len() as u64, faults.len() as u64),
        runs,
    })
}

fn schedule(ops: &[u64], faults: &[u64]) -> Schedule {
    Schedule {
        ops: Some(List(ops.iter().copied().collect())),
        faults: Some(List(faults.iter().copied().collect())),
    }
}

/// Zeller's ddmin over complements: the smallest (1-minimal as far as `fails` allows) sublist of
/// `items` for which `fails` still holds; `items` itself is assumed to fail.
pub fn ddmin(mut items: Vec<u64>, mut fails: impl FnMut(&[u64]) -> bool) -> Vec<u64> {
    if items.is_empty() {
        return items;
    }
    if fails(&[]) {
        return Vec::new();
    }
    let mut n = 2usize;
    while items.len() >= 2 {
        let chunk = items.len().div_ceil(n);
        let mut reduced = false;
        for start in (0..items.len()).step_by(chunk) {
            let complement: Vec<u64> = items[..start]
                .iter()
                .chain(items[(start + chunk).min(items.len())..].iter())
                .copied()
                .collect();
            if fails(&complement) {
                items = complement;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if n >= items.len() {
                break;
            }
            n = (2 * n).min(items.len());
        }
    }
    items
}

/// Prints a shrink: the schedule kept (the drawn commands and faults, from the trace) and the
/// command that replays it.
pub fn print(shrunk: &Shrunk) {
    let r = &shrunk.report;
    println!(
        "shrunk in {} runs, still failing with {}: {} of {} commands and {} of {} faults kept",
        shrunk.runs, shrunk.rule, shrunk.after.0, shrunk.before.0, shrunk.after.1, shrunk.before.1
    );
    for line in r.trace.iter().filter(|l| is_schedule_line(l)) {
        println!("  {line}");
    }
    for v in r.violations.iter().take(5) {
        println!("  violation {}: {}", v.rule, v.detail);
    }
    println!("replay: {}", r.replay_command());
}

/// Whether a trace line is a kept command or fault (what the shrunk schedule shows).
fn is_schedule_line(line: &str) -> bool {
    line.split_whitespace()
        .nth(1)
        .is_some_and(|w| w == "op" || w == "fault")
        && !line.contains(" dropped")
}

/// `convoy-lab simulate --seed S --shrink`: runs the seed and, if it fails, shrinks it.
pub fn run_cli(options: &SimOptions, max_runs: u64) -> anyhow::Result<()> {
    let report = run(options);
    if report.violations.is_empty() {
        println!(
            "seed {} passes: nothing to shrink ({})",
            options.seed,
            report.replay_command()
        );
        return Ok(());
    }
    super::cli::print_failure(&report);
    let Some(shrunk) = shrink(&report, max_runs) else {
        anyhow::bail!("seed {} failed but could not be shrunk", options.seed);
    };
    print(&shrunk);
    anyhow::bail!(
        "seed {} fails ({}); shrunk replay: {}",
        options.seed,
        shrunk.rule,
        shrunk.report.replay_command()
    )
}
