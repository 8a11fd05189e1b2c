//! The shrinker: ddmin finds the few items a failure needs, and a seed failing under the
//! ack-before-sync mutation shrinks to fewer commands and faults and still fails, with a replay
//! command that names the shrunk schedule.

use super::disk::FsyncModel;
use super::run::{run, SimOptions};
use super::shrink::{ddmin, shrink};

#[test]
fn ddmin_keeps_only_what_the_failure_needs() {
    let mut tries = 0;
    let kept = ddmin((0..40).collect(), |items| {
        tries += 1;
        items.contains(&3) && items.contains(&17) && items.contains(&31)
    });
    assert_eq!(kept, vec![3, 17, 31]);
    assert!(tries < 200, "{tries} tries");
}

#[test]
fn ddmin_of_a_failure_needing_nothing_is_empty() {
    assert_eq!(ddmin((0..10).collect(), |_| true), Vec::<u64>::new());
}

#[test]
fn a_failing_seed_shrinks_and_still_fails() {
    let failing = (1..=30)
        .map(|seed| {
            run(&SimOptions {
                seed,
                minutes: 1.0,
                fsync: FsyncModel::AckBeforeSync,
                ..SimOptions::default()
            })
        })
        .find(|r| !r.violations.is_empty())
        .expect("some seed in 1..=30 fails under ack-before-sync");
    let shrunk = shrink(&failing, 12).expect("the run failed");
    let (ops, faults) = shrunk.after;
    println!(
        "seed {} shrunk in {} runs from {:?} to {:?} (commands, faults): {}",
        failing.options.seed,
        shrunk.runs,
        shrunk.before,
        shrunk.after,
        shrunk.report.replay_command()
    );
    assert!(
        ops + faults < shrunk.before.0 + shrunk.before.1,
        "nothing removed: {:?}",
        shrunk.before
    );
    let replay = shrunk.report.replay_command();
    assert!(
        replay.contains("--keep-ops") && replay.contains("--keep-faults"),
        "{replay}"
    );
    // The shrunk schedule replayed on its own still fails with the same checker.
    let again = run(&shrunk.report.options);
    assert!(
        again.violations.iter().any(|v| v.rule == shrunk.rule),
        "the shrunk schedule passes: {:?}",
        again.violations
    );
    assert_eq!(
        again.trace_hash, shrunk.report.trace_hash,
        "the replay is exact"
    );
}
