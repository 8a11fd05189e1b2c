//! Each configuration mistake that once passed silently now stops `convoy server` at start with one
//! line on stderr that names the key, the value and the fix, and no backtrace.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// A valid single-founder config for `dir`, with `tweak` applied to its text.
fn config(dir: &Path, tweak: impl Fn(String) -> String) -> std::path::PathBuf {
    let text = "id = 1\ndata_dir = \"data\"\nhttp_addr = \"127.0.0.1:0\"\nraft_addr = \"127.0.0.1:19581\"\n\
                cluster_secret_file = \"secret\"\ninitial_cluster_state = \"new\"\n\n\
                [[initial_cluster]]\nid = 1\nraft_addr = \"127.0.0.1:19581\"\nhttp_addr = \"127.0.0.1:0\"\n"
        .to_string();
    let path = dir.join("server.toml");
    std::fs::write(&path, tweak(text)).unwrap();
    path
}

/// Writes `secret` with `mode`.
fn secret(dir: &Path, secret: &[u8], mode: u32) {
    private(dir, "secret", secret, mode);
}

/// Writes `text` to `dir/name` with `mode`.
fn private(dir: &Path, name: &str, text: impl AsRef<[u8]>, mode: u32) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const GOOD_SECRET: &[u8] = b"3q2+7wAAAAC4kLzYb1Q0mTQeWw9mFzq1x0s8t3oPZ2hYv1YxNnM=";

/// Runs the server on `config` and returns its stderr, asserting it refused to start.
fn refused(config: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_convoy"))
        .args(["server", "--config"])
        .arg(config)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "started anyway: {stderr}");
    stderr
}

#[test]
fn each_config_mistake_stops_the_server_with_one_line_naming_key_and_fix() {
    type Setup = fn(&Path) -> std::path::PathBuf;
    let cases: Vec<(&str, Setup, &[&str])> = vec![
        (
            "duplicate ids",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                config(d, |t| {
                    t + "\n[[initial_cluster]]\nid = 1\nraft_addr = \"127.0.0.1:19582\"\nhttp_addr = \"127.0.0.1:19583\"\n"
                })
            },
            &["initial_cluster", "duplicate"],
        ),
        (
            "own raft_addr differs from its initial_cluster entry",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                config(d, |t| {
                    t.replacen(
                        "raft_addr = \"127.0.0.1:19581\"",
                        "raft_addr = \"127.0.0.1:19599\"",
                        1,
                    )
                })
            },
            &["raft_addr", "19599", "initial_cluster"],
        ),
        (
            "a new cluster in a data_dir holding someone else's files",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                std::fs::create_dir_all(d.join("data")).unwrap();
                std::fs::write(d.join("data/notes.txt"), "mine").unwrap();
                config(d, |t| t)
            },
            &["data_dir", "notes.txt", "empty directory"],
        ),
        (
            "a secret readable by others",
            |d| {
                secret(d, GOOD_SECRET, 0o644);
                config(d, |t| t)
            },
            &["cluster_secret_file", "0644", "chmod 600"],
        ),
        (
            "a bootstrap token file readable by others",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                private(
                    d,
                    "admin-token",
                    "cvy_00112233445566778899aabbccddeeff\n",
                    0o644,
                );
                config(d, |t| {
                    format!("bootstrap_token_file = \"admin-token\"\n{t}")
                })
            },
            &["bootstrap_token_file", "admin-token", "0644", "chmod 600"],
        ),
        (
            "a provider headers file readable by others",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                private(
                    d,
                    "prom-headers",
                    "Authorization: Bearer 3q2+7wprom\n",
                    0o644,
                );
                config(d, |t| {
                    format!(
                        "analysis_provider = [{{ name = \"prom\", prometheus = \"http://127.0.0.1:9\", headers_file = \"prom-headers\" }}]\n{t}"
                    )
                })
            },
            &[
                "analysis_provider.headers_file",
                "prom-headers",
                "0644",
                "chmod 600",
            ],
        ),
        (
            "a short, low-entropy secret",
            |d| {
                secret(d, b"aaaaaaaabbbbbbbb", 0o600);
                config(d, |t| t)
            },
            &["cluster_secret_file", "32"],
        ),
        (
            "no token on a non-loopback address",
            |d| {
                secret(d, GOOD_SECRET, 0o600);
                config(d, |t| {
                    t.replace("http_addr = \"127.0.0.1:0\"", "http_addr = \"0.0.0.0:0\"")
                })
            },
            &["bootstrap_token_file", "insecure_no_auth"],
        ),
    ];
    for (what, setup, words) in cases {
        let dir = tempfile::tempdir().unwrap();
        let stderr = refused(&setup(dir.path()));
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{what}: one line, got:\n{stderr}");
        for word in words {
            assert!(
                stderr.contains(word),
                "{what}: {word:?} missing from: {stderr}"
            );
        }
        assert!(!stderr.contains("backtrace"), "{what}: {stderr}");
        assert!(
            !stderr.contains("aaaaaaaabbbbbbbb") && !stderr.contains("3q2+7w"),
            "{what}: the secret is echoed: {stderr}"
        );
    }
}
