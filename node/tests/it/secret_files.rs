//! The CLI and the agent refuse a token file, or a CLI config file holding tokens, that group or others
//! may read or write: the error names the file and its mode, never the secret.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const SECRET: &str = "cvy_00112233445566778899aabbccddeeff";

/// Writes `text` to `path` with `mode`.
fn with_mode(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `convoy args` with `home` as its config home and no server to reach (port 9 on loopback).
fn convoy(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_convoy"))
        .args(args)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_CONTEXT")
        .output()
        .unwrap()
}

/// Asserts `out` failed before reaching for a server, with stderr naming `words` and not echoing the
/// secret.
fn refused(what: &str, out: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: ran anyway: {stderr}");
    for word in words {
        assert!(
            stderr.contains(word),
            "{what}: {word:?} missing from: {stderr}"
        );
    }
    assert!(
        !stderr.contains(SECRET),
        "{what}: the secret is echoed: {stderr}"
    );
    // Refused before any server is asked (a warning and then a request is not a refusal).
    assert!(
        !stderr.contains("reachable"),
        "{what}: a server was asked: {stderr}"
    );
}

#[test]
fn a_token_file_others_may_read_is_refused_by_the_cli_login_and_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let token = dir.path().join("token");
    with_mode(&token, SECRET, 0o644);
    let tf = token.to_str().unwrap();
    let state = dir.path().join("state");
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "a command's --token-file",
            vec![
                "resource",
                "list",
                "--server",
                "127.0.0.1:9",
                "--token-file",
                tf,
            ],
        ),
        (
            "login's --token-file",
            vec![
                "login",
                "--server",
                "127.0.0.1:9",
                "--token-file",
                tf,
                "--no-check",
            ],
        ),
        (
            "the agent's --token-file",
            vec![
                "agent",
                "--node-id",
                "web-1",
                "--server",
                "127.0.0.1:9",
                "--state-dir",
                state.to_str().unwrap(),
                "--token-file",
                tf,
            ],
        ),
    ];
    for (what, args) in cases {
        let out = convoy(&home, &args);
        refused(what, &out, &[tf, "0644", "chmod 600"]);
    }
    // login wrote nothing.
    assert!(!home.join("convoy").join("config.toml").exists());
}

#[test]
fn a_cli_config_file_holding_a_token_that_others_may_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("convoy").join("config.toml");
    let text = format!(
        "current = \"lab\"\n[contexts.lab]\nserver = \"127.0.0.1:9\"\ntoken = \"{SECRET}\"\n"
    );
    with_mode(&config, &text, 0o640);
    let out = convoy(dir.path(), &["resource", "list"]);
    refused(
        "a config file of mode 0640",
        &out,
        &[config.to_str().unwrap(), "0640", "chmod 600"],
    );
    // Without a token in it the file holds no secret: a loose mode is no reason to refuse.
    with_mode(
        &config,
        "current = \"lab\"\n[contexts.lab]\nserver = \"127.0.0.1:9\"\n",
        0o644,
    );
    let out = convoy(dir.path(), &["context", "current"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
}
