//! The simulation as CI runs it: a seed replays to the same trace, the fsync mutation is caught
//! by some seed, and a batch of seeds passes (seeds per second printed).

use super::batch::run_batch;
use super::disk::FsyncModel;
use super::run::{run, SimOptions, PRODUCTION_HEARTBEAT_MS};

fn options(seed: u64, minutes: f64) -> SimOptions {
    SimOptions {
        seed,
        minutes,
        ..SimOptions::default()
    }
}

/// Seed 1000 at ten minutes, as the batch runs it: long enough for a membership change whose learner
/// does not catch up, whose error once carried openraft's metrics with wall-clock instants.
#[test]
fn one_seed_run_twice_gives_the_same_trace() {
    let first = run(&options(1000, 10.0));
    let second = run(&options(1000, 10.0));
    assert!(first.violations.is_empty(), "{:?}", first.violations);
    assert!(
        first.stats.acked > 10,
        "the workload wrote: {:?}",
        first.stats
    );
    assert!(
        first.stats.faults > 0,
        "faults were injected: {:?}",
        first.stats
    );
    assert_eq!(
        (first.trace_hash.as_str(), first.trace_lines),
        (second.trace_hash.as_str(), second.trace_lines),
        "seed 1000 diverged on its replay"
    );
    let other = run(&options(8, 0.5));
    assert_ne!(
        first.trace_hash, other.trace_hash,
        "another seed, another run"
    );
}

#[test]
fn a_disk_that_acknowledges_before_syncing_is_caught() {
    let caught = (1..=30).find_map(|seed| {
        let report = run(&SimOptions {
            fsync: FsyncModel::AckBeforeSync,
            ..options(seed, 1.0)
        });
        (!report.violations.is_empty()).then_some((seed, report))
    });
    let Some((seed, report)) = caught else {
        panic!("no seed in 1..=30 caught writes acknowledged before their fsync");
    };
    println!(
        "seed {seed} catches ack-before-sync: {:?}",
        report.violations.iter().map(|v| v.rule).collect::<Vec<_>>()
    );
    let honest = run(&options(seed, 1.0));
    assert!(
        honest.violations.is_empty(),
        "seed {seed} fails even with honest disks: {:?}",
        honest.violations
    );
}

/// The mutation behind the regression seeds 880024 and 990002: with openraft's leader restore back on
/// (at the production heartbeat they were found with), some seed of 1..=200 breaks a checker (seed 103:
/// log matching), and that seed passes with convoy's settings. The regression seeds no longer replay
/// their original runs (the workload and the harness changed since), so this is what keeps the fix
/// honest: take `enable_leader_restore: Some(false)` out of `RaftConfig::openraft_config` and the
/// simulation fails.
#[test]
fn a_leader_restored_in_its_term_is_caught() {
    let restored = |seed| SimOptions {
        heartbeat_ms: PRODUCTION_HEARTBEAT_MS,
        ..options(seed, 1.0)
    };
    let caught = (1..=200).find_map(|seed| {
        let report = run(&SimOptions {
            leader_restore: true,
            ..restored(seed)
        });
        (!report.violations.is_empty()).then_some((seed, report))
    });
    let Some((seed, report)) = caught else {
        panic!("no seed in 1..=200 caught a leader restored in its term");
    };
    println!(
        "seed {seed} catches leader restore: {:?}",
        report
            .violations
            .iter()
            .map(|v| v.rule)
            .collect::<std::collections::BTreeSet<_>>()
    );
    let honest = run(&restored(seed));
    assert!(
        honest.violations.is_empty(),
        "seed {seed} fails even without leader restore: {:?}",
        honest.violations
    );
}

/// A number from the environment, else `default`.
fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Seeds that failed with a finding not yet fixed, with the simulated minutes they failed at: the batch
/// skips those of its range (and says so); [`the_open_finding_seeds_pass`], ignored, replays them all until
/// they are fixed. 1406 (met on 2026-12-02 when weak subscriptions drew start jitters): openraft's "follower
/// log reversion is not allowed" on the leader right after a follower's crash lost 3 unsynced entries
/// (docs/RELIABILITY.md, open). The log-IO assertion's seeds are fixed: [`LOG_IO_SEEDS`].
const OPEN_FINDINGS: [(u64, f64); 1] = [(1406, 10.0)];

/// The seeds of openraft's log-IO assertion (`expect submitted < new_submitted`, `io_progress.rs`: a
/// follower installed a snapshot that ended before the log IO it had already submitted under the same
/// leader), with their simulated minutes: 7200050 and 2027621, 2032322, 2042541, 2043407 (the first
/// overnight run), CI seeds 1094, 1919 and 1943 (2026-12-02). Fixed on convoy's side by
/// `convoy_raft::network::overtaken` (docs/RELIABILITY.md, "the log-IO assertion"). The course of most
/// changed since they were found; 1943 and 2032322 still meet it without the guard (1919 did until the
/// dependency rule of issue 36 changed its course).
const LOG_IO_SEEDS: [(u64, f64); 8] = [
    (7200050, 1.0),
    (2027621, 1.0),
    (2032322, 1.0),
    (2042541, 1.0),
    (2043407, 1.0),
    (1094, 10.0),
    (1919, 10.0),
    (1943, 10.0),
];

/// With the guard, every seed of [`LOG_IO_SEEDS`] passes; without it (the mutation
/// `no-overtaken-guard`), 1943 and 2032322 meet openraft's assertion, so the guard is what fixes them.
/// A change to the domain changes the seeds' course: when one stops meeting the assertion without the guard,
/// find one that does (`convoy-lab simulate --seeds N --first-seed F --mutate no-overtaken-guard`).
#[test]
fn the_log_io_seeds_pass_with_the_overtaken_guard_and_fail_without_it() {
    for (seed, minutes) in LOG_IO_SEEDS {
        assert_seed_passes(seed, minutes);
    }
    let reproducing = LOG_IO_SEEDS
        .into_iter()
        .filter(|(seed, _)| [1943, 2032322].contains(seed));
    for (seed, minutes) in reproducing {
        let report = run(&SimOptions {
            no_overtaken_guard: true,
            ..options(seed, minutes)
        });
        assert!(
            report
                .violations
                .iter()
                .any(|v| v.detail.contains("expect submitted")),
            "seed {seed} without the guard no longer meets the assertion (its course changed: find another, see the doc): {:?}",
            report.violations.iter().take(3).collect::<Vec<_>>()
        );
    }
}

/// The CI batch: `CONVOY_SIM_SEEDS` seeds (default 1,000, from seed 1,000) of `CONVOY_SIM_MINUTES`
/// simulated minutes each (default 10) on `CONVOY_SIM_JOBS` threads (default 2): about 9 minutes of
/// two idle cores (docs/RELIABILITY.md measures it). It fails with the replay command of the first
/// failing seed (and prints every failure's trace as it comes).
#[test]
fn a_batch_of_seeds_passes() {
    let seeds: u64 = env_or("CONVOY_SIM_SEEDS", 1000);
    let minutes: f64 = env_or("CONVOY_SIM_MINUTES", 10.0);
    let jobs: u64 = env_or("CONVOY_SIM_JOBS", 2);
    let list: Vec<u64> = (1000..1000 + seeds)
        .filter(|s| !OPEN_FINDINGS.iter().any(|(open, _)| open == s))
        .collect();
    println!("skipped, open findings: {OPEN_FINDINGS:?}");
    let batch = run_batch(
        &list,
        jobs,
        |seed| options(seed, minutes),
        |report| {
            if !report.violations.is_empty() {
                super::cli::print_failure(report);
            }
        },
    );
    println!(
        "{} seeds of {minutes} simulated minutes on {jobs} threads in {:.1} s: {:.2} seeds/s, {:.2} simulated minutes per seed",
        batch.runs,
        batch.elapsed.as_secs_f64(),
        batch.seeds_per_second(),
        batch.minutes_per_seed()
    );
    assert_eq!(batch.runs, list.len() as u64, "every seed ran");
    if let Some(first) = batch.failures.first() {
        let failing: Vec<u64> = batch.failures.iter().map(|r| r.options.seed).collect();
        panic!(
            "{} of {} seeds failed ({failing:?}); replay the first: {}",
            failing.len(),
            batch.runs,
            first.replay_command()
        );
    }
}

/// Seeds that found bugs, replayed every CI run. 880024 (3 servers) and 990002 (5 servers): a power cut
/// while the leader's disk was slow lost entries the followers had committed; the restarted leader restored
/// its leadership in the same term (openraft's `enable_leader_restore`) and wrote other entries at those
/// indexes (log matching and state machine safety broken). Fixed in `convoy_raft`'s openraft config.
/// They replay with the production heartbeat they were found with (50 ms), not the simulation's.
#[test]
fn the_regression_seeds_pass() {
    for (seed, servers) in [(880024, 3), (990002, 5)] {
        let report = run(&SimOptions {
            servers,
            heartbeat_ms: PRODUCTION_HEARTBEAT_MS,
            ..options(seed, 1.0)
        });
        assert!(
            report.violations.is_empty(),
            "seed {seed} with {servers} servers: {:?}",
            report.violations.iter().take(5).collect::<Vec<_>>()
        );
    }
}

/// Runs `seed` for `minutes` with the defaults and fails with its first violations.
fn assert_seed_passes(seed: u64, minutes: f64) {
    let report = run(&options(seed, minutes));
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations.iter().take(5).collect::<Vec<_>>()
    );
}

/// Seed 21 (3 servers, 3 minutes): one `ReportNodes` of a consumer carried c3-n0's install failure with
/// c3-n2's and c3-n4's reports of the new version; taken in node order, the failure started the walk back
/// while the later nodes still looked blank, so deployment d-131 re-targeted c3-n0 before c3-n4 and c3-n2
/// (`rollback-order` on every server). Fixed in `convoy_domain`: a batch is noted whole before it is acted on.
#[test]
fn the_rollback_order_seed_passes() {
    assert_seed_passes(21, 3.0);
}

/// Seed 1068 (3 servers, 10 minutes): deployment d-26 (batches of 3, 2, 2, blank nodes) was rolled back
/// while only c14-n3 of its first batch had reported the version; the walk back re-targeted c14-n3 and
/// counted c14-n2 and c14-n1 back (nothing installed, as far as the server knew). One later `ReportNodes`
/// said both ran the version after all, and they were re-targeted in the batch's order, c14-n1 first
/// (`rollback-order` on every server). Fixed in `convoy_domain`: such nodes wait in the walk back's order.
#[test]
fn the_rollback_again_order_seed_passes() {
    assert_seed_passes(1068, 10.0);
}

/// Seed 7000032 (3 servers, 10 minutes), found by the hunt of new seeds: deployment d-118 (all at once,
/// blank nodes) counted c7-m20 and c7-n6 back at once when it rolled back, re-targeted the four others, and
/// re-targeted c7-m20 and c7-n6 again when one later batch said they ran the version after all. The walk
/// back was in order; the checker took a node's place from its first `rollback` event only and so called
/// it a violation. Fixed in the checker (`chaos::check::rollback_order`).
#[test]
fn the_counted_back_seed_passes() {
    assert_seed_passes(7000032, 10.0);
}

/// Seeds where a membership change reached a leader on its way out (3 servers). 7000012 and 7000038 (10
/// minutes), 2001041 and 2001587 (1 minute, the first overnight run): a voter removed while it led was added
/// back through itself, still leading for openraft's `removed_leader_step_down`, and openraft failed its
/// assertion "Only leader is allowed to call update_effective_membership()" (so did 1085, 1188, 1238, 1305,
/// 1379, 1438, 1650, 1728 and 1942 of the CI range). 7600011, 7600019 and 7600038 (1 minute): the removal
/// stopped half way, the leader a learner of its own membership, which openraft keeps leading for good; a
/// first fix that admitted voters only refused its add-back forever (so did 1053 and 1070 of the range).
/// Fixed in `convoy_raft`: a leader answers membership changes "not the leader" exactly when openraft
/// would fail that assertion (`node::may_change_membership`, which the harness's `membership` calls too);
/// `membership_test` shows both cases step by step.
#[test]
fn the_membership_seeds_pass() {
    for (seed, minutes) in [
        (7000012, 10.0),
        (7000038, 10.0),
        (2001041, 1.0),
        (2001587, 1.0),
        (7600011, 1.0),
        (7600019, 1.0),
        (7600038, 1.0),
    ] {
        assert_seed_passes(seed, minutes);
    }
}

/// The open findings ([`OPEN_FINDINGS`]): a finding fails until it is fixed; run them with
/// `cargo test -p convoy-lab --lib simulate::run_test::the_open_finding_seeds_pass -- --ignored`
/// and move a seed to the regression tests once it is fixed. An empty list passes.
#[test]
#[ignore = "open finding: seed 1406 (openraft's follower log reversion after a follower lost unsynced entries)"]
fn the_open_finding_seeds_pass() {
    let mut failed = Vec::new();
    for (seed, minutes) in OPEN_FINDINGS {
        let report = run(&options(seed, minutes));
        let first = report.violations.iter().take(3).collect::<Vec<_>>();
        println!(
            "seed {seed}: {} violations {first:?}",
            report.violations.len()
        );
        if !report.violations.is_empty() {
            failed.push((
                seed,
                format!("{first:?}; replay: {}", report.replay_command()),
            ));
        }
    }
    assert!(failed.is_empty(), "failing open findings: {failed:?}");
}
