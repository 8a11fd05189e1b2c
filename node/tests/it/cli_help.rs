//! The `convoy` binary starts and describes its commands (this also makes `cargo test`
//! build the binary that the multi-process tests in `tests/` start).

use std::process::Command;

#[test]
fn help_lists_every_top_level_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_convoy"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = String::from_utf8_lossy(&out.stdout);
    for command in [
        "server", "agent", "sim", "demo", "resource", "consumer", "deploy", "group", "cluster",
    ] {
        assert!(
            help.contains(command),
            "`convoy --help` does not mention {command}:\n{help}"
        );
    }
}

/// Fault injection is the lab's (`convoy-lab chaos`), not the product's: `convoy chaos` is an unknown
/// command and `convoy --help` names neither chaos nor network namespaces.
#[test]
fn the_product_has_no_chaos_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_convoy"))
        .args(["chaos", "--seed", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "`convoy chaos` ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unrecognized subcommand 'chaos'"),
        "`convoy chaos` is not refused as unknown:\n{stderr}"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_convoy"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        !help.contains("chaos"),
        "`convoy --help` mentions chaos:\n{help}"
    );
    assert!(
        !help.contains("netns"),
        "`convoy --help` mentions netns:\n{help}"
    );
}

#[test]
fn a_bad_config_is_refused_with_the_key_named() {
    let dir = std::env::temp_dir().join(format!("convoy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad.toml");
    std::fs::write(&config, "id = 1\nbogus_key = 3\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_convoy"))
        .args(["server", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bogus_key"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
