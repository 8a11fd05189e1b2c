//! The CI chaos smoke: `convoy-lab chaos` over two short seeds (every fault kind, a real three-server
//! cluster, the full workload and every checker) must finish with zero violations.

use std::process::Command;

use convoy_lab::lab_bin;

#[test]
fn two_short_chaos_seeds_find_no_violation() {
    let out = Command::new(lab_bin())
        .args([
            "chaos",
            "--seed",
            "101",
            "--seeds",
            "2",
            "--duration",
            "15s",
            "--nodes",
            "12",
        ])
        .env("RUST_LOG", "error")
        .output()
        .expect("running convoy-lab chaos");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chaos failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("2 seeds"), "{stdout}");
    assert!(stdout.contains(" 0 violations"), "{stdout}");
    // Faults really struck: the summary counts them.
    let faults: usize = stdout
        .lines()
        .find(|l| l.ends_with("0 violations") && l.contains("seeds"))
        .and_then(|l| l.split(", ").nth(1))
        .and_then(|f| f.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(faults >= 6, "too few faults injected: {stdout}");
    // Each seed judged the states its servers' logs went through (`chaos/replayed.rs`).
    for seed in ["seed 101:", "seed 102:"] {
        let judged: usize = stdout
            .lines()
            .find(|l| l.starts_with(seed))
            .and_then(|l| l.split(" replayed states").next())
            .and_then(|l| l.rsplit(", ").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(judged > 0, "{seed} judged no replayed state: {stdout}");
    }
}

/// Regression: a follower restarted behind a purged log while the state held tens of thousands of
/// nodes never caught up — every AppendEntries of big entries and the multi-megabyte snapshot timed
/// out (openraft's 75 ms and 200 ms budgets) and was resent forever.
#[test]
fn follower_catches_up_through_a_snapshot_of_a_big_state() {
    let out = Command::new(lab_bin())
        .args(["chaos", "--catch-up", "50000"])
        .env("RUST_LOG", "error")
        .output()
        .expect("running convoy-lab chaos --catch-up");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "catch-up failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("catch-up: 50000 nodes"), "{stdout}");
}

/// As root (CI is), partitions are real: each server in its own network namespace, links cut with
/// nftables. The run must use them (its fault lines say so), clean them up, and find no violation.
#[test]
fn nftables_partitions_between_namespaces_find_no_violation() {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("skipped: network namespaces need root");
        return;
    }
    let out = Command::new(lab_bin())
        .args([
            "chaos",
            "--netns",
            "--seed",
            "11",
            "--duration",
            "12s",
            "--nodes",
            "8",
            "--verbose",
            "--faults",
            "partition-minority,partition-leader,partition-one-way",
        ])
        .env("RUST_LOG", "error")
        .output()
        .expect("running convoy-lab chaos --netns");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "chaos --netns failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("(nftables)"),
        "no nftables partition struck:\n{stdout}"
    );
    assert!(stdout.contains(" 0 violations"), "{stdout}");
    let namespaces = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left = String::from_utf8_lossy(&namespaces.stdout);
    assert!(!left.contains("cv"), "namespaces left behind: {left}");
}

/// Replays one chaos seed and fails on any violation it reports.
fn replay(seed: &str, duration: &str) {
    let out = Command::new(lab_bin())
        .args(["chaos", "--seed", seed, "--duration", duration])
        .env("RUST_LOG", "error")
        .output()
        .expect("running convoy-lab chaos");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "chaos seed {seed} failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" 0 violations"), "{stdout}");
}

/// Regression (issue 22 item 12): on these seeds nodes of consumer `multi`, also members of
/// `multi-b`, were sent a version held back on `multi` (`banned-target`): the hold went with a
/// deleted subscription, and `multi-b`'s selection ignored it.
#[test]
fn a_hold_keeps_its_version_off_nodes_in_two_consumers_seed_328016241() {
    replay("328016241", "12s");
}

/// Regression (issue 22 item 12), the second seed that found it.
#[test]
fn a_hold_keeps_its_version_off_nodes_in_two_consumers_seed_424246() {
    replay("424246", "20s");
}
