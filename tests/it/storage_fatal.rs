//! A server whose disk fills up stops the way a supervisor needs: `/readyz` answers 503 `fatal` with
//! the reason, the process logs why and exits with status 1, and the rest of the cluster keeps taking
//! writes. Root only: that server's data dir is on a small tmpfs, nearly full when it starts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use convoy_tests::{Cluster, ClusterOptions};
use serde_json::json;

/// A tmpfs mounted for the test's lifetime (lazily unmounted on drop).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(path: &Path, size_mib: u32) -> anyhow::Result<Self> {
        std::fs::create_dir_all(path)?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(path)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "mounting a tmpfs at {} needs root: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Ok(Self(path.to_path_buf()))
    }

    /// Writes zeros to `filler` until at most `leave` bytes are free (RocksDB preallocates its
    /// write-ahead log, so filling the disk under a running server would take tens of MB of writes).
    fn fill(&self, leave: u64) -> anyhow::Result<u64> {
        let mut file = std::fs::File::create(self.0.join("filler"))?;
        let chunk = vec![0u8; 256 * 1024];
        let mut written = 0u64;
        loop {
            match file.write_all(&chunk).and_then(|()| file.sync_all()) {
                Ok(()) => written += chunk.len() as u64,
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => return Err(e.into()),
            }
        }
        file.set_len(written.saturating_sub(leave))?;
        file.sync_all()?;
        Ok(written)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_that_fills_up_makes_the_server_unready_then_exit_with_status_1(
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir()?;
    // Server 3's data dir is a symlink into the tmpfs, which also holds the filler beside it.
    let disk = Tmpfs::mount(&temp.path().join("disk-3"), 32)?;
    std::fs::create_dir_all(disk.0.join("data"))?;
    std::fs::create_dir_all(temp.path().join("data"))?;
    std::os::unix::fs::symlink(disk.0.join("data"), temp.path().join("data/3"))?;
    let filled = disk.fill(3 << 20)?;
    assert!(filled > 0, "the filler wrote nothing");
    let mut cluster = Cluster::spawn_in(temp.path(), ClusterOptions::for_tests(3))?;
    if let Err(e) = cluster.wait_leader(Duration::from_secs(15)).await {
        anyhow::bail!("{e}; server 3: {}", cluster.server(3).log_tail(5));
    }
    let api = cluster.api_client().with_patience(Duration::from_secs(5));
    api.post::<_, serde_json::Value>("/v1/resources", &json!({"name": "before"}))
        .await?;
    let third = cluster.server(3).client();
    let (status, body) = third.get("/readyz").await?;
    assert_eq!(
        status, 200,
        "server 3 is ready while its disk has room: {body}"
    );

    // Writes of ~40 KB each go on through the others; server 3's appends soon fail on the full disk.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut seen_fatal, mut exit, mut k) = (None, None, 0u32);
    while Instant::now() < deadline && exit.is_none() {
        k += 1;
        let name = format!("c-{k}");
        let nodes: Vec<String> = (0..2_000).map(|n| format!("node-{k}-{n:05}")).collect();
        let _ = api
            .post::<_, serde_json::Value>("/v1/consumers", &json!({"name": name, "nodes": nodes}))
            .await;
        if let Ok((503, body)) = third.get("/readyz").await {
            if body["error"]["code"] == "fatal" {
                seen_fatal.get_or_insert(body);
            }
        }
        exit = cluster.server_mut(3).exit_status();
    }
    let log = std::fs::read_to_string(cluster.server(3).log_path())?;
    let status = exit.unwrap_or_else(|| {
        panic!(
            "server 3 did not exit within 60 s of a full disk ({k} writes); log tail:\n{}",
            log.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        )
    });
    assert_eq!(status.code(), Some(1), "{status}");
    assert!(
        log.contains("exiting with status 1"),
        "the log says why it exits"
    );
    let body = seen_fatal.expect("/readyz answered 503 fatal before the exit");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("fatal error"), "the reason: {body}");

    // The two others still acknowledge writes.
    let others = cluster.api_client().of(&format!(
        "{},{}",
        cluster.server(1).http_addr,
        cluster.server(2).http_addr
    ))?;
    others
        .post::<_, serde_json::Value>("/v1/resources", &json!({"name": "after"}))
        .await?;
    Ok(())
}
