//! Servers keeping their write-ahead logs outside their data dirs (`log_wal_dir`, as on a disk of
//! their own): a whole cluster killed and restarted has every write, read back from those WALs;
//! a server restarted without the setting refuses to start, saying where its WAL is, instead of
//! starting on an empty log; `convoy replay` reads it where it is; with the setting back it rejoins.

use std::path::Path;
use std::time::{Duration, Instant};

use convoy_tests::scenario::{create_resources, kill_all_and_restart, wait_resources};
use convoy_tests::{convoy_bin, Cluster, ClusterOptions};
use serde_json::json;

/// RocksDB's WAL files (`000012.log`) in `dir`.
fn wal_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension() == Some("log".as_ref()))
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wals_apart_from_the_data_dirs_keep_every_write_and_are_never_opened_without(
) -> anyhow::Result<()> {
    let wal_disk = tempfile::tempdir()?;
    let options = ClusterOptions {
        wal_root: Some(wal_disk.path().to_path_buf()),
        ..ClusterOptions::for_tests(3)
    };
    let mut cluster = Cluster::start_with(options).await?;
    let leader = cluster.wait_leader(Duration::from_secs(10)).await?;
    let client = cluster.server(leader).client();
    let written = create_resources(&client, 30).await?;
    for id in 1..=3u64 {
        let data = cluster.dir().join(format!("data/{id}"));
        assert!(
            wal_files(&wal_disk.path().join(id.to_string())) > 0,
            "server {id}'s WAL is in its log_wal_dir"
        );
        assert_eq!(wal_files(&data), 0, "server {id}'s data dir has no WAL");
    }

    // Killed at once: the writes are only in the WALs (far below a memtable flush).
    let leader = kill_all_and_restart(&mut cluster, &written).await?;

    // A follower restarted with the setting gone from its config refuses to start.
    let follower = (1..=3).find(|id| *id != leader).expect("a follower");
    let config_path = cluster.server(follower).config.clone();
    let config = std::fs::read_to_string(&config_path)?;
    let without: String = config
        .lines()
        .filter(|line| !line.starts_with("log_wal_dir"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(without, config, "the harness wrote log_wal_dir");
    std::fs::write(&config_path, &without)?;
    cluster.restart(follower)?;
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut exit = None;
    while exit.is_none() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        exit = cluster.server_mut(follower).exit_status();
    }
    let log = std::fs::read_to_string(cluster.server(follower).log_path())?;
    let status =
        exit.unwrap_or_else(|| panic!("server {follower} started without its WAL:\n{log}"));
    assert!(!status.success(), "{status}");
    let wal = wal_disk.path().join(follower.to_string());
    assert!(
        log.contains("keeps its write-ahead log in")
            && log.contains(&wal.display().to_string())
            && log.contains("log_wal_dir"),
        "the refusal names where the WAL is and the setting:\n{log}"
    );

    // `convoy replay` (no config) finds the stopped server's WAL where its data dir recorded it.
    let replay = std::process::Command::new(convoy_bin())
        .arg("replay")
        .arg(cluster.dir().join(format!("data/{follower}")))
        .output()?;
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(
        replay.status.success() && stdout.contains("digest"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let last_index: u64 = stdout
        .split("up to index ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no index in {stdout}"));
    assert!(last_index >= 30, "every write was replayed: {stdout}");

    // With the setting back it starts, and the cluster's writes go on.
    std::fs::write(&config_path, &config)?;
    cluster.restart(follower)?;
    wait_resources(
        &cluster.server(follower).client(),
        &written,
        Duration::from_secs(15),
    )
    .await
    .map_err(|e| anyhow::anyhow!("server {follower} back: {e}\n{}", cluster.logs()))?;
    let (status, _) = cluster
        .server(leader)
        .client()
        .post("/v1/resources", &json!({"name": "after"}))
        .await?;
    assert_eq!(status, 201);
    Ok(())
}
