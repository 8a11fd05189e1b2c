//! What the agent holds on disk (`DIR/state.json`): per resource the current version and each held
//! version's progress, written atomically so a restarted agent reports honestly.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use convoy_actors::domain::{ResourceReport, Target, VersionProgress};
use serde::{Deserialize, Serialize};

/// Everything the agent knows about what it holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// Per resource name.
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceState>,
    /// Resources this node does not want (`--uninterested`): reported `interested: false`, never
    /// installed. From the flags, not saved.
    #[serde(skip)]
    pub uninterested: BTreeSet<String>,
}

/// One resource on this node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceState {
    /// The version the node runs now.
    #[serde(default)]
    pub current: Option<u64>,
    /// Every version it holds (or tried to).
    #[serde(default)]
    pub versions: BTreeMap<u64, VersionState>,
    /// Removed on the server's word (uninstall) and holding nothing since; reported as `removed`.
    #[serde(default)]
    pub removed: bool,
    /// The process of its run command, while it runs: written as soon as it started, so an agent
    /// started again re-attaches to it instead of starting a second copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<RunRecord>,
}

/// A run command's process as `state.json` keeps it: its pid alone could name another process
/// after a reboot or a wrap-around, its pid and start time cannot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The version it runs.
    pub version: u64,
    /// Its pid, also its process group.
    pub pid: i32,
    /// When it started, in clock ticks after boot (`/proc/<pid>/stat`, field 22).
    pub start_ticks: u64,
}

/// One held version: the reported progress plus what the agent needs to carry on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionState {
    /// What the node reports of this version (the domain's own type; its fields sit at the top level of
    /// `state.json`, as before).
    #[serde(flatten)]
    pub progress: VersionProgress,
    /// Whether the version has an artifact file (`artifact` in its version dir).
    #[serde(default)]
    pub has_artifact: bool,
    /// The version's declared health port.
    #[serde(default)]
    pub health_port: Option<u16>,
    /// Wall-clock ms of the last install (the health grace counts from here).
    #[serde(default)]
    pub installed_at_ms: Option<u64>,
    /// Wall-clock ms of the last failure (retries wait from here).
    #[serde(default)]
    pub failed_at_ms: Option<u64>,
    /// Wall-clock ms when its run command exited 0 under a restart policy that keeps it down
    /// (`on-failure`, `never`): done, and not started again, by this agent or a restarted one, until
    /// it is installed again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_ms: Option<u64>,
}

impl VersionState {
    /// Finished with an error.
    pub fn failed(&self) -> bool {
        self.progress.done && self.progress.error.is_some()
    }

    /// Records a failed attempt: finished, with `error`.
    pub fn fail(&mut self, error: String, now_ms: u64) {
        self.progress.done = true;
        self.progress.error = Some(error);
        self.failed_at_ms = Some(now_ms);
    }
}

impl AgentState {
    /// The state of `resource` at `version`, if held.
    pub fn version(&self, resource: &str, version: u64) -> Option<&VersionState> {
        self.resources.get(resource)?.versions.get(&version)
    }

    /// The state of `resource` at `version`, created empty if absent.
    pub fn version_mut(&mut self, resource: &str, version: u64) -> &mut VersionState {
        let r = self.resources.entry(resource.to_string()).or_default();
        r.removed = false;
        r.versions.entry(version).or_default()
    }

    /// The current version of `resource`.
    pub fn current(&self, resource: &str) -> Option<u64> {
        self.resources.get(resource).and_then(|r| r.current)
    }

    /// The `resources` part of a report (`POST /v1/nodes/{id}/report`).
    pub fn report(&self) -> BTreeMap<String, ResourceReport> {
        let mut out: BTreeMap<String, ResourceReport> = self
            .resources
            .iter()
            .map(|(name, r)| {
                let report = ResourceReport {
                    interested: Some(!self.uninterested.contains(name)),
                    current: r.current,
                    versions: r
                        .versions
                        .iter()
                        .map(|(v, s)| (*v, s.progress.clone()))
                        .collect(),
                    removed: r.removed,
                    log: None,
                };
                (name.clone(), report)
            })
            .collect();
        for name in &self.uninterested {
            out.entry(name.clone()).or_insert_with(|| ResourceReport {
                interested: Some(false),
                ..ResourceReport::default()
            });
        }
        out
    }

    /// Records every resource of `targets` this node wants and knows nothing of, holding nothing, so
    /// the next report names it (wanted, no `current`, no version): the server then knows the node
    /// holds nothing of it, and a machine re-imaged (or started on an empty state dir) gets its
    /// versions back. An uninstall target adds nothing, and such an entry no longer targeted goes (a
    /// resource deleted since is not named again). Answers whether it added one.
    pub fn note_targets(&mut self, targets: &BTreeMap<String, Target>) -> bool {
        self.resources.retain(|name, r| {
            targets.contains_key(name)
                || r.current.is_some()
                || !r.versions.is_empty()
                || r.removed
                || r.running.is_some()
        });
        let mut added = false;
        for (name, t) in targets {
            if t.uninstall
                || !valid_name(name)
                || self.uninterested.contains(name)
                || self.resources.contains_key(name)
            {
                continue;
            }
            self.resources
                .insert(name.clone(), ResourceState::default());
            added = true;
        }
        added
    }

    /// `resource` is to be removed: it runs or holds a version of it.
    pub fn holds_any(&self, resource: &str) -> bool {
        self.resources
            .get(resource)
            .is_some_and(|r| r.current.is_some() || !r.versions.is_empty())
    }

    /// Reads `path`; a missing file is an empty state.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| anyhow::anyhow!("{} is not a valid agent state: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
        }
    }

    /// Writes `path` atomically: a temp file, fsync, rename, fsync of the directory.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(path, &bytes)
    }
}

/// Writes `bytes` to `path` through `path.tmp` and a rename, so readers see the old or the new file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")));
    Ok(())
}

/// `path` with `.tmp` appended to its file name.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Best-effort fsync of a directory, so a rename inside it survives a crash.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A resource name that is safe as a directory name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_and_load_round_trip_and_report() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert_eq!(AgentState::load(&path).unwrap(), AgentState::default());
        let mut s = AgentState::default();
        s.resources.entry("web".into()).or_default().current = Some(2);
        let v = s.version_mut("web", 2);
        v.progress.downloaded = true;
        v.progress.installed = true;
        v.progress.done = true;
        v.progress.healthy = Some(true);
        s.version_mut("web", 3).fail("sha256 mismatch".into(), 5);
        s.resources.get_mut("web").unwrap().running = Some(RunRecord {
            version: 2,
            pid: 4242,
            start_ticks: 987_654,
        });
        s.save(&path).unwrap();
        assert!(!tmp_path(&path).exists());
        let back = AgentState::load(&path).unwrap();
        assert_eq!(back, s);
        let report = serde_json::to_value(back.report()).unwrap();
        assert_eq!(report["web"]["current"], 2);
        assert_eq!(report["web"]["interested"], true);
        assert_eq!(report["web"]["versions"]["2"]["done"], true);
        assert_eq!(report["web"]["versions"]["3"]["error"], "sha256 mismatch");
    }

    #[test]
    fn a_state_file_keeps_its_flat_layout() {
        // What an agent wrote before `VersionState` held the domain's `VersionProgress`: an upgraded agent
        // reads it, and writes the same keys at the same level.
        let old = serde_json::json!({"resources": {"web": {"current": 2, "versions": {"2": {
            "downloaded": true, "installed": true, "done": true, "error": null, "healthy": true,
            "has_artifact": true, "health_port": 8080, "installed_at_ms": 7, "failed_at_ms": null
        }}, "removed": false}}});
        let s: AgentState = serde_json::from_value(old.clone()).unwrap();
        let v = s.version("web", 2).unwrap();
        assert!(v.progress.installed && v.progress.done && v.has_artifact);
        assert_eq!(
            (v.progress.healthy, v.health_port),
            (Some(true), Some(8080))
        );
        assert_eq!(serde_json::to_value(&s).unwrap(), old);
    }

    #[test]
    fn a_targeted_resource_it_knows_nothing_of_is_reported_wanted_and_holding_nothing() {
        // Issue 36 item 2: an agent on an empty state dir reported nothing of the resource, and the
        // server kept believing the node ran what it ran before.
        let target = |uninstall| Target {
            version: 2,
            download: false,
            install: false,
            uninstall,
        };
        let mut s = AgentState::default();
        s.uninterested.insert("off".into());
        let targets = BTreeMap::from([
            ("web".to_string(), target(false)),
            ("gone".to_string(), target(true)),
            ("off".to_string(), target(false)),
        ]);
        assert!(s.note_targets(&targets));
        let report = serde_json::to_value(s.report()).unwrap();
        let web = &report["web"];
        assert_eq!(web["interested"], true, "{web}");
        assert!(web["current"].is_null() && web["versions"] == serde_json::json!({}));
        assert_eq!(web["removed"], false);
        assert!(report.get("gone").is_none(), "{report}");
        assert_eq!(report["off"]["interested"], false);
        assert!(!s.note_targets(&targets), "added once");
        s.note_targets(&BTreeMap::new());
        assert!(
            s.resources.is_empty(),
            "no longer targeted: {:?}",
            s.resources
        );
    }

    #[test]
    fn a_corrupt_state_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, b"{not json").unwrap();
        assert!(AgentState::load(&path).is_err());
    }
}
