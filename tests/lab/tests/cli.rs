//! The `convoy-lab` binary lists the lab's commands (and `cargo test -p convoy-lab` builds it).

use std::process::Command;

#[test]
fn help_lists_chaos_bench_and_simulate() {
    let out = Command::new(env!("CARGO_BIN_EXE_convoy-lab"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = String::from_utf8_lossy(&out.stdout);
    for command in ["chaos", "bench", "simulate"] {
        assert!(
            help.contains(command),
            "`convoy-lab --help` does not mention {command}:\n{help}"
        );
    }
}

#[test]
fn bench_takes_convoys_scenarios_and_wrk() {
    let out = Command::new(env!("CARGO_BIN_EXE_convoy-lab"))
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["throughput", "failover", "wrk", "--etcd", "--state-objects"] {
        assert!(
            help.contains(word),
            "`convoy-lab bench --help` does not mention {word}:\n{help}"
        );
    }
}
