use super::*;
use convoy_raft::log_store::LogCompaction;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A strong secret (a sha256 in hex), in a file only its owner reads.
const SECRET: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn write_secret(dir: &Path, text: &str) {
    write_private(dir, "secret", text);
}

/// Writes `text` to `dir/name`, mode 0600 (a file holding a secret).
fn write_private(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = write(dir, name, text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

const FILE: &str = r#"
id = 2
data_dir = "data/2"
http_addr = "127.0.0.1:8082"
raft_addr = "127.0.0.1:9082"
cluster_secret_file = "secret"
initial_cluster_state = "new"
[[initial_cluster]]
id = 1
raft_addr = "127.0.0.1:9081"
http_addr = "127.0.0.1:8081"
[[initial_cluster]]
id = 2
raft_addr = "127.0.0.1:9082"
http_addr = "127.0.0.1:8082"
"#;

#[test]
fn reads_the_file_and_resolves_paths_next_to_it() {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), &format!("{SECRET}\n"));
    let config = write(dir.path(), "convoy.toml", FILE);
    let args = ServerArgs {
        config: Some(config),
        ..Default::default()
    };
    let resolved = args.resolve().unwrap();
    assert_eq!(resolved.raft.id, 2);
    assert_eq!(resolved.raft.data_dir, dir.path().join("data/2"));
    assert_eq!(resolved.raft.secret, SECRET.as_bytes());
    assert!(resolved.raft.bootstrap);
    assert_eq!(resolved.raft.initial_cluster.len(), 2);
    assert_eq!(
        resolved.raft.initial_cluster[&1].http_addr,
        "127.0.0.1:8081"
    );
}

#[test]
fn a_wal_dir_in_the_file_is_next_to_it_and_a_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), SECRET);
    let config = write(
        dir.path(),
        "convoy.toml",
        &format!("log_wal_dir = \"wal/2\"\n{FILE}"),
    );
    let args = ServerArgs {
        config: Some(config),
        ..Default::default()
    };
    let from_file = args.resolve().unwrap().raft.storage.wal_dir;
    assert_eq!(from_file, Some(dir.path().join("wal/2")));
    let flagged = ServerArgs {
        log_wal_dir: Some("/fast/wal".into()),
        ..args.clone()
    };
    let from_flag = flagged.resolve().unwrap().raft.storage.wal_dir;
    assert_eq!(from_flag, Some(PathBuf::from("/fast/wal")));
    let empty = ServerArgs {
        log_wal_dir: Some(PathBuf::new()),
        ..args
    };
    let err = empty.resolve().unwrap_err().to_string();
    assert!(err.contains("log_wal_dir"), "{err}");
}

#[test]
fn flags_override_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), SECRET);
    let config = write(dir.path(), "convoy.toml", FILE);
    let args = ServerArgs {
        config: Some(config),
        http_addr: Some("127.0.0.1:7000".into()),
        initial_cluster_state: Some("existing".into()),
        heartbeat_ms: Some(50),
        ..Default::default()
    };
    let resolved = args.resolve().unwrap();
    assert_eq!(resolved.raft.http_addr, "127.0.0.1:7000");
    assert!(!resolved.raft.bootstrap);
    assert_eq!(resolved.raft.heartbeat_ms, 50);
}

#[test]
fn refuses_bad_values_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), "short");
    let config = write(dir.path(), "convoy.toml", FILE);
    let base = ServerArgs {
        config: Some(config),
        ..Default::default()
    };
    let err = base.resolve().unwrap_err().to_string();
    assert!(err.contains("cluster_secret_file"), "{err}");

    write_secret(dir.path(), SECRET);
    let bad_state = ServerArgs {
        initial_cluster_state: Some("maybe".into()),
        ..base.clone()
    };
    let err = bad_state.resolve().unwrap_err().to_string();
    assert!(
        err.contains("initial_cluster_state") && err.contains("maybe"),
        "{err}"
    );

    let bad_addr = ServerArgs {
        raft_addr: Some("nowhere".into()),
        ..base.clone()
    };
    assert!(bad_addr
        .resolve()
        .unwrap_err()
        .to_string()
        .contains("raft_addr"));

    for chunk in [0, 16 * 1024 * 1024 + 1] {
        let bad_chunk = ServerArgs {
            snapshot_chunk_bytes: Some(chunk),
            ..base.clone()
        };
        let err = bad_chunk.resolve().unwrap_err().to_string();
        assert!(
            err.contains("snapshot_chunk_bytes") && err.contains(&chunk.to_string()),
            "{err}"
        );
    }
    let small_chunks = ServerArgs {
        snapshot_chunk_bytes: Some(1024),
        ..base.clone()
    };
    assert_eq!(
        small_chunks.resolve().unwrap().raft.snapshot_chunk_bytes,
        1024
    );

    let tuned = ServerArgs {
        log_memtable_mb: Some(64),
        log_compaction: Some("universal".into()),
        background_io_mb_per_sec: Some(16),
        ..base.clone()
    };
    let storage = tuned.resolve().unwrap().raft.storage;
    assert_eq!(storage.log_memtable_bytes, 64 << 20);
    assert_eq!(storage.log_compaction, LogCompaction::Universal);
    assert_eq!(storage.background_io_bytes_per_sec, Some(16 << 20));
    let untuned = base.clone().resolve().unwrap().raft.storage;
    assert_eq!(untuned, StorageTuning::default(), "no cap unless asked");
    for (bad, key) in [
        (
            ServerArgs {
                log_memtable_mb: Some(0),
                ..base.clone()
            },
            "log_memtable_mb",
        ),
        (
            ServerArgs {
                log_compaction: Some("fifo".repeat(1000)),
                ..base.clone()
            },
            "log_compaction",
        ),
        (
            ServerArgs {
                background_io_mb_per_sec: Some(u64::MAX),
                ..base.clone()
            },
            "background_io_mb_per_sec",
        ),
    ] {
        let err = bad.resolve().unwrap_err().to_string();
        assert!(err.contains(key) && err.len() < 300, "{err}");
    }

    let not_founder = ServerArgs {
        id: Some(9),
        ..base
    };
    let err = not_founder.resolve().unwrap_err().to_string();
    assert!(err.contains("id 9"), "{err}");
}

#[test]
fn missing_keys_say_where_to_set_them() {
    let err = ServerArgs::default().resolve().unwrap_err().to_string();
    assert!(err.contains("--id") && err.contains("CONVOY_ID"), "{err}");
}

#[test]
fn parses_initial_cluster_flag() {
    let members = parse_initial_cluster("1=a:1=b:2, 2=c:3=d:4").unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[1].raft_addr, "c:3");
    assert!(parse_initial_cluster("1=a:1").is_err());
    assert!(parse_initial_cluster("x=a:1=b:2").is_err());
}

#[test]
fn unknown_file_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(dir.path(), "convoy.toml", "id = 1\nbogus = 3\n");
    let args = ServerArgs {
        config: Some(config),
        ..Default::default()
    };
    assert!(args.resolve().unwrap_err().to_string().contains("bogus"));
}

fn resolve_auth(extra: &str, http_addr: Option<&str>) -> Result<ServerConfig, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), SECRET);
    write_private(
        dir.path(),
        "admin-token",
        "cvy_00112233445566778899aabbccddeeff\n",
    );
    let config = write(dir.path(), "convoy.toml", &format!("{extra}\n{FILE}"));
    // A server joining an existing cluster: its listening address is not held to a founder entry,
    // so only the auth rules decide here.
    ServerArgs {
        config: Some(config),
        http_addr: http_addr.map(String::from),
        initial_cluster_state: Some("existing".into()),
        ..Default::default()
    }
    .resolve()
}

#[test]
fn a_bootstrap_token_file_turns_auth_on_and_keeps_only_the_hash() {
    let resolved = resolve_auth("bootstrap_token_file = \"admin-token\"", None).unwrap();
    assert_eq!(resolved.auth, AuthMode::On);
    assert_eq!(
        resolved.bootstrap_token,
        Some(secret::hash("cvy_00112233445566778899aabbccddeeff"))
    );
    // On any address: the token is what protects it.
    let public = resolve_auth(
        "bootstrap_token_file = \"admin-token\"",
        Some("0.0.0.0:8082"),
    );
    assert_eq!(public.unwrap().auth, AuthMode::On);
}

#[test]
fn without_tokens_only_loopback_or_an_explicit_insecure_flag_serves() {
    assert_eq!(resolve_auth("", None).unwrap().auth, AuthMode::Off);
    assert_eq!(
        resolve_auth("", Some("localhost:8082")).unwrap().auth,
        AuthMode::Off
    );
    assert_eq!(
        resolve_auth("", Some("[::1]:8082")).unwrap().auth,
        AuthMode::Off
    );
    let refused = resolve_auth("", Some("0.0.0.0:8082"))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("http_addr")
            && refused.contains("0.0.0.0:8082")
            && refused.contains("insecure_no_auth"),
        "{refused}"
    );
    assert!(resolve_auth("", Some("10.1.2.3:8082")).is_err());
    let insecure = resolve_auth("insecure_no_auth = true", Some("10.1.2.3:8082")).unwrap();
    assert_eq!(insecure.auth, AuthMode::Off);
    assert_eq!(insecure.bootstrap_token, None);
}

#[test]
fn a_bad_bootstrap_token_file_is_named_and_never_echoed() {
    let missing = resolve_auth("bootstrap_token_file = \"nope\"", None)
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("bootstrap_token_file") && missing.contains("nope"),
        "{missing}"
    );
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), SECRET);
    write_private(dir.path(), "short", "cvy_tiny\n");
    let config = write(
        dir.path(),
        "convoy.toml",
        &format!("bootstrap_token_file = \"short\"\n{FILE}"),
    );
    let short = ServerArgs {
        config: Some(config),
        ..Default::default()
    }
    .resolve()
    .unwrap_err()
    .to_string();
    assert!(
        short.contains("bootstrap_token_file") && !short.contains("cvy_tiny"),
        "{short}"
    );
}

#[test]
fn loopback_addresses_are_recognised() {
    for (addr, want) in [
        ("127.0.0.1:1", true),
        ("127.8.9.10:1", true),
        ("localhost:1", true),
        ("[::1]:1", true),
        ("0.0.0.0:1", false),
        ("[::]:1", false),
        ("192.168.1.1:1", false),
        ("example.com:1", false),
    ] {
        assert_eq!(is_loopback(addr), want, "{addr}");
    }
}

#[test]
fn log_format_is_read_from_the_file_and_a_bad_value_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let args = |text: &str| ServerArgs {
        config: Some(write(dir.path(), "log.toml", text)),
        ..ServerArgs::default()
    };
    assert_eq!(
        args("log_format = \"json\"").log_format().unwrap(),
        Some(crate::logging::LogFormat::Json)
    );
    assert_eq!(args("id = 1").log_format().unwrap(), None);
    let err = args("log_format = \"xml\"")
        .log_format()
        .unwrap_err()
        .to_string();
    assert!(err.contains("log_format") && err.contains("xml"), "{err}");
}

#[test]
fn duration_flags_take_units() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        server: ServerArgs,
    }
    let cmd = Cmd::try_parse_from(["convoy", "--node-timeout-ms", "30s", "--heartbeat-ms", "50"])
        .unwrap();
    assert_eq!(cmd.server.node_timeout_ms, Some(30_000));
    assert_eq!(cmd.server.heartbeat_ms, Some(50));
    assert!(Cmd::try_parse_from(["convoy", "--request-timeout-ms", "soon"]).is_err());
}

#[test]
fn forget_nodes_after_needs_a_unit_and_a_bare_number_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write_secret(dir.path(), SECRET);
    let config = write(dir.path(), "convoy.toml", FILE);
    let with = |value: &str| ServerArgs {
        config: Some(config.clone()),
        forget_nodes_after: Some(value.into()),
        ..Default::default()
    };
    assert_eq!(
        with("12h").resolve().unwrap().forget_nodes_after,
        Duration::from_secs(12 * 3_600)
    );
    assert_eq!(
        with("0").resolve().unwrap().forget_nodes_after,
        Duration::ZERO
    );
    let err = with("90").resolve().unwrap_err().to_string();
    assert!(
        err.contains("forget_nodes_after") && err.contains("90s") && err.contains("0s for never"),
        "{err}"
    );
}

#[test]
fn allowed_hosts_are_checked_lower_cased_and_bounded() {
    let resolved = resolve_auth(
        "allowed_hosts = [\"Convoy.Example\", \"proxy.example:443\"]",
        None,
    )
    .unwrap();
    assert_eq!(
        resolved.hosts.allowed,
        ["convoy.example", "proxy.example:443"]
    );
    assert_eq!(resolved.hosts.own, "127.0.0.1:8082");
    assert!(resolve_auth("", None).unwrap().hosts.allowed.is_empty());
    let bad = resolve_auth("allowed_hosts = [\"https://x\"]", None)
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("allowed_hosts") && bad.contains("https://x"),
        "{bad}"
    );
    let many: Vec<String> = (0..=MAX_ALLOWED_HOSTS)
        .map(|i| format!("\"h{i}.example\""))
        .collect();
    let too_many = resolve_auth(&format!("allowed_hosts = [{}]", many.join(", ")), None)
        .unwrap_err()
        .to_string();
    assert!(too_many.contains("65 entries"), "{too_many}");
}

#[test]
fn the_report_budget_keys_default_and_are_bounded_naming_the_key() {
    use crate::api::report_rate::Rates;
    assert_eq!(
        resolve_auth("", None).unwrap().report_rates,
        Rates::default()
    );
    let set = resolve_auth(
        "agent_report_bytes_per_sec = 65536\nagent_reports_per_sec = 20",
        None,
    )
    .unwrap();
    assert_eq!(
        set.report_rates,
        Rates {
            bytes_per_sec: 65_536,
            requests_per_sec: 20
        }
    );
    for (line, key, value) in [
        (
            "agent_report_bytes_per_sec = 0",
            "agent_report_bytes_per_sec",
            "0",
        ),
        (
            "agent_report_bytes_per_sec = 2000000000",
            "agent_report_bytes_per_sec",
            "2000000000",
        ),
        ("agent_reports_per_sec = 0", "agent_reports_per_sec", "0"),
    ] {
        let err = resolve_auth(line, None).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(value), "{line}: {err}");
    }
}

#[test]
fn the_fleet_limit_keys_are_off_by_default_and_bounded_naming_the_key() {
    use convoy_actors::domain::FleetLimits;
    assert_eq!(
        resolve_auth("", None).unwrap().fleet_limits,
        FleetLimits::default()
    );
    let set = resolve_auth(
        "max_concurrent_downloads = 50\nmax_concurrent_installs = 10",
        None,
    )
    .unwrap();
    assert_eq!(
        set.fleet_limits,
        FleetLimits {
            max_concurrent_downloads: Some(50),
            max_concurrent_installs: Some(10),
        }
    );
    for (line, key, value) in [
        (
            "max_concurrent_installs = 0",
            "max_concurrent_installs",
            "0",
        ),
        (
            "max_concurrent_downloads = 1000001",
            "max_concurrent_downloads",
            "1000001",
        ),
    ] {
        let err = resolve_auth(line, None).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(value), "{line}: {err}");
    }
}
