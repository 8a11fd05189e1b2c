//! Operator mistakes as chaos faults (issue 27): a member's data dir wiped and the member restarted as
//! it was, a member restarted with another cluster's secret, with a wrong id, or on another member's
//! data dir. Each is injected on a follower, held, and undone; what the mistaken server did is recorded
//! in the fault's line. The checks: it either refuses to start (exits non-zero) or is refused by its
//! peers and is not ready; a wiped member rejoins through `replace-member`; and no server panics
//! ([`no_panics`], run with the other checks). The majority keeps taking writes meanwhile, which the
//! run's own checks (failover time, nothing acknowledged lost) cover.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::Value;

use super::check::Violation;
use super::faults::{FaultKind, Injector, Planned};
use convoy_node::local::files::write_secret;
use convoy_node::local::Cluster;

/// How long a mistaken server may take to refuse to start.
const REFUSE_WITHIN: Duration = Duration::from_secs(15);

/// Replaces the `key = ...` line of the config text `text` with `key = value`.
fn set_key(text: &str, key: &str, value: &str) -> String {
    text.lines()
        .map(|line| {
            if line.split('=').next().is_some_and(|k| k.trim() == key) {
                format!("{key} = {value}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Server `id`'s config file and its text.
fn config_of(cluster: &Cluster, id: u64) -> anyhow::Result<(PathBuf, String)> {
    let path = cluster
        .get(id)
        .with_context(|| format!("no server {id}"))?
        .config
        .clone();
    let text = std::fs::read_to_string(&path)?;
    Ok((path, text))
}

/// Waits until server `id` exits on its own; its status, or `None` if it still runs.
async fn exits(injector: &Injector, id: u64, within: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let status = injector
            .cluster
            .lock()
            .unwrap()
            .get_mut(id)
            .and_then(|s| s.exit_status());
        if status.is_some() {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Server `id`'s `/readyz` code, or `ready`.
async fn readiness(injector: &Injector, id: u64) -> String {
    let client = {
        let cluster = injector.cluster.lock().unwrap();
        match cluster.get(id) {
            Some(server) => server.client(),
            None => return "gone".into(),
        }
    };
    match client.get("/readyz").await {
        Ok((200, _)) => "ready".into(),
        Ok((_, body)) => body["error"]["code"].as_str().unwrap_or("?").to_string(),
        Err(e) => format!("unreachable ({e})"),
    }
}

/// Kills server `id`, rewrites its config with `edit`, starts it, and reports what it did within
/// the hold; then puts the config back and restarts it as it was.
async fn restart_mistaken(
    injector: &Injector,
    id: u64,
    hold: Duration,
    edit: impl FnOnce(&str, &Path) -> anyhow::Result<String>,
) -> anyhow::Result<String> {
    let (path, original) = config_of(&injector.cluster.lock().unwrap(), id)?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mistaken = edit(&original, &dir)?;
    {
        let mut cluster = injector.cluster.lock().unwrap();
        cluster.server_mut(id).kill();
        std::fs::write(&path, mistaken)?;
        cluster.restart(id)?;
    }
    let outcome = match exits(injector, id, hold.max(Duration::from_secs(3))).await {
        Some(status) => format!("refused to start ({status})"),
        None => format!("runs, /readyz {}", readiness(injector, id).await),
    };
    std::fs::write(&path, original)?;
    injector.cluster.lock().unwrap().restart(id)?;
    Ok(outcome)
}

/// Injects mistake `fault` on a follower; the fault's line.
pub(super) async fn run(injector: &Injector, fault: &Planned, id: u64) -> anyhow::Result<String> {
    let what = match fault.kind {
        FaultKind::WipeAndRestart => wipe_and_replace(injector, id).await?,
        FaultKind::OtherSecret => {
            restart_mistaken(injector, id, fault.hold, |text, dir| {
                let other = dir.join(format!("other-secret-{id}"));
                write_secret(&other)?;
                Ok(set_key(text, "cluster_secret_file", &format!("{other:?}")))
            })
            .await?
        }
        FaultKind::WrongId => {
            restart_mistaken(injector, id, fault.hold, |text, _| {
                Ok(set_key(text, "id", &(id + 100).to_string()))
            })
            .await?
        }
        FaultKind::OtherDataDir => {
            let other = injector
                .cluster
                .lock()
                .unwrap()
                .servers
                .keys()
                .copied()
                .find(|other| *other != id)
                .context("no other member")?;
            restart_mistaken(injector, id, fault.hold, |text, _| {
                Ok(set_key(text, "data_dir", &format!("\"data/{other}\"")))
            })
            .await?
        }
        _ => anyhow::bail!("{:?} is not an operator mistake", fault.kind),
    };
    Ok(format!("{:?} {id}: {what}", fault.kind))
}

/// Wipes follower `id`'s data dir and restarts it as it was (it must refuse to start), then brings
/// it back as the runbook says: `existing`, started, `replace-member`.
async fn wipe_and_replace(injector: &Injector, id: u64) -> anyhow::Result<String> {
    let (path, original) = config_of(&injector.cluster.lock().unwrap(), id)?;
    let data = {
        let mut cluster = injector.cluster.lock().unwrap();
        cluster.server_mut(id).kill();
        let data = cluster.dir().join("data").join(id.to_string());
        std::fs::remove_dir_all(&data)?;
        cluster.restart(id)?;
        data
    };
    let refused = match exits(injector, id, REFUSE_WITHIN).await {
        Some(status) if !status.success() => format!("refused to start ({status})"),
        Some(status) => format!("VIOLATION: exited with {status}"),
        None => "VIOLATION: bootstrapped on an emptied data dir".to_string(),
    };
    // The runbook: an empty data dir, `existing`, started, then replace-member.
    {
        let mut cluster = injector.cluster.lock().unwrap();
        cluster.server_mut(id).kill();
        if data.exists() {
            std::fs::remove_dir_all(&data)?;
        }
        std::fs::write(
            &path,
            set_key(&original, "initial_cluster_state", "\"existing\""),
        )?;
        cluster.restart(id)?;
    }
    let api = injector
        .cluster
        .lock()
        .unwrap()
        .api_client()
        .with_patience(Duration::from_secs(15));
    let replaced = api
        .post::<_, Value>(
            &format!("/v1/cluster/members/{id}/replace"),
            &serde_json::json!({}),
        )
        .await;
    // A non-empty data dir never bootstraps: the original config is safe again.
    std::fs::write(&path, original)?;
    Ok(match replaced {
        Ok(_) => format!("{refused}; rejoined through replace-member"),
        Err(e) => format!("{refused}; VIOLATION: replace-member failed: {e}"),
    })
}

/// A violation for every server whose log shows a panic.
pub fn no_panics(cluster: &Cluster) -> Vec<Violation> {
    cluster
        .servers
        .values()
        .filter(|s| {
            std::fs::read_to_string(s.log_path())
                .map(|log| log.contains("panicked"))
                .unwrap_or(false)
        })
        .map(|s| Violation {
            rule: "no server panics",
            detail: format!("server {} panicked: {}", s.id, s.log_tail(10)),
        })
        .collect()
}

/// A violation for every mistake whose line records one (a wiped member that bootstrapped, a
/// replace-member that failed).
pub fn from_faults(faults: &[super::history::FaultRecord]) -> Vec<Violation> {
    faults
        .iter()
        .filter(|f| f.what.contains("VIOLATION"))
        .map(|f| Violation {
            rule: "a mistaken server refuses to start or rejoins through replace-member",
            detail: f.what.clone(),
        })
        .collect()
}

#[cfg(test)]
#[path = "mistakes_test.rs"]
mod tests;
