//! The agent against a real temp dir and `file://` artifacts: download, checksum, `current`
//! switch, install command, health checks and snooze, rollback, restart, run-command teardown.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use convoy_actors::domain::{Artifact, Target};
use convoy_time::ManualClock;
use tempfile::TempDir;

use super::executor::{AgentConfig, Executor, ResourceDoc, VersionDoc};
use super::fetch::{sha256_hex, Sources};
use super::health::test_server::TestServer;
use super::health::SNOOZE_FILE;
use super::health_policy::HealthRules;
use super::install::read_current;
use super::process::TeardownTimes;

/// A temp state dir, a temp dir of published artifacts, and the published versions of `web`.
pub(super) struct World {
    pub(super) state: TempDir,
    src: TempDir,
    pub(super) doc: ResourceDoc,
}

impl World {
    pub(super) fn new() -> Self {
        Self {
            state: tempfile::tempdir().unwrap(),
            src: tempfile::tempdir().unwrap(),
            doc: ResourceDoc::default(),
        }
    }

    /// Publishes `web` version `v` with `content`; `sha` overrides the published hash.
    pub(super) fn publish(
        &mut self,
        v: u64,
        content: &str,
        sha: Option<&str>,
        health_port: Option<u16>,
    ) -> PathBuf {
        let path = self.src.path().join(format!("web-{v}.tar"));
        std::fs::write(&path, content).unwrap();
        self.doc.versions.push(VersionDoc {
            version: v,
            artifact: Some(Artifact {
                url: format!("file://{}", path.display()),
                sha256: Some(sha.map_or_else(|| sha256_hex(content.as_bytes()), String::from)),
                size: Some(content.len() as u64),
            }),
            health_port,
        });
        path
    }

    /// Short waits; a health check whenever asked (interval 0), no grace.
    pub(super) fn config(&self) -> AgentConfig {
        AgentConfig {
            health: HealthRules {
                interval: Duration::ZERO,
                grace: Duration::ZERO,
                ..HealthRules::default()
            },
            health_timeout: Duration::from_millis(500),
            retry: Duration::from_secs(3600),
            teardown: TeardownTimes {
                graceful: Duration::from_millis(100),
                abort: Duration::from_millis(100),
                term: Duration::from_millis(500),
                kill: Duration::from_secs(2),
                http: Duration::from_millis(200),
            },
            sources: Sources {
                artifact_root: Some(self.src.path().to_path_buf()),
                allow_http: true,
            },
            ..AgentConfig::new(self.state.path().to_path_buf())
        }
    }

    pub(super) fn views(&self) -> BTreeMap<String, ResourceDoc> {
        BTreeMap::from([("web".to_string(), self.doc.clone())])
    }

    pub(super) fn web(&self) -> PathBuf {
        self.state.path().join("resources/web")
    }
}

pub(super) fn install(v: u64) -> BTreeMap<String, Target> {
    BTreeMap::from([(
        "web".to_string(),
        Target {
            version: v,
            download: false,
            install: true,
            uninstall: false,
        },
    )])
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn downloads_checks_sha256_and_switches_current() {
    let mut w = World::new();
    w.publish(1, "release one", None, None);
    w.publish(2, "release two", None, None);
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    assert_eq!(
        std::fs::read_to_string(w.web().join("1/artifact")).unwrap(),
        "release one"
    );
    assert_eq!(
        files(&w.web().join("1")),
        vec!["artifact"],
        "no artifact.tmp left"
    );
    assert_eq!(read_current(&w.web()), Some(1));
    let report = ex.report_body();
    assert_eq!(report["resources"]["web"]["current"], 1);
    let v1 = &report["resources"]["web"]["versions"]["1"];
    assert_eq!(
        (v1["downloaded"].as_bool(), v1["installed"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(
        (v1["done"].as_bool(), v1["healthy"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(v1["error"].is_null());

    ex.step(&install(2), &w.views()).await;
    assert_eq!(read_current(&w.web()), Some(2));
    assert_eq!(
        std::fs::read_to_string(w.web().join("current/artifact")).unwrap(),
        "release two"
    );
    assert!(!w.web().join("current.tmp").exists());
    let s = ex.state();
    assert_eq!(s.current("web"), Some(2));
    assert!(
        !s.version("web", 1).unwrap().progress.installed
            && s.version("web", 1).unwrap().progress.downloaded
    );
    assert!(s.version("web", 2).unwrap().progress.done);
}

#[tokio::test]
async fn a_bad_checksum_fails_cleanly_and_leaves_current_alone() {
    let mut w = World::new();
    w.publish(1, "release one", None, None);
    let wrong = "0".repeat(64);
    w.publish(2, "tampered", Some(&wrong), None);
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    ex.step(&install(2), &w.views()).await;
    let v2 = ex.state().version("web", 2).unwrap().clone();
    let expected =
        format!("sha256 mismatch: the artifact is not the one published with sha256 {wrong}");
    assert_eq!(v2.progress.error.as_deref(), Some(expected.as_str()));
    assert!(
        !expected.contains(&sha256_hex(b"tampered")),
        "the hash of a file the server cannot see is not echoed"
    );
    assert!(v2.progress.done && !v2.progress.downloaded && !v2.progress.installed);
    assert!(
        files(&w.web().join("2")).is_empty(),
        "{:?}",
        files(&w.web().join("2"))
    );
    assert_eq!(read_current(&w.web()), Some(1));
    assert_eq!(ex.state().current("web"), Some(1));
    // Reported as a finished failure of version 2.
    let report = ex.report_body();
    assert_eq!(
        report["resources"]["web"]["versions"]["2"]["error"],
        expected.as_str()
    );
    assert_eq!(report["resources"]["web"]["versions"]["2"]["done"], true);
    // Still targeted: no retry before the retry wait.
    ex.step(&install(2), &w.views()).await;
    assert_eq!(ex.state().version("web", 2).unwrap(), &v2);
}

#[tokio::test]
async fn a_version_without_artifact_downloads_nothing() {
    let mut w = World::new();
    w.doc.versions.push(VersionDoc {
        version: 1,
        ..Default::default()
    });
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.downloaded && v1.progress.installed && v1.progress.done && !v1.has_artifact
    );
    assert!(files(&w.web().join("1")).is_empty());
    // A version the server has not published (yet) is left alone.
    ex.step(&install(9), &w.views()).await;
    assert!(ex
        .state()
        .version("web", 9)
        .is_none_or(|v| !v.progress.downloaded && !v.progress.done));
}

#[tokio::test]
async fn install_command_success_and_failure() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    w.publish(2, "two", None, None);
    let mut config = w.config();
    config.install_command = Some(
        r#"if [ "$CONVOY_VERSION" = 2 ]; then echo "no space left on device" >&2; exit 4; fi
           cp "$CONVOY_ARTIFACT" "$CONVOY_STATE_DIR/installed-$CONVOY_RESOURCE-$CONVOY_VERSION""#
            .into(),
    );
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    assert_eq!(
        std::fs::read_to_string(w.state.path().join("installed-web-1")).unwrap(),
        "one"
    );
    assert_eq!(ex.state().current("web"), Some(1));
    assert!(ex.state().version("web", 1).unwrap().progress.done);
    assert_eq!(
        read_current(&w.web()),
        None,
        "the command installs, not the symlink"
    );

    ex.step(&install(2), &w.views()).await;
    let v2 = ex.state().version("web", 2).unwrap();
    let error = v2.progress.error.clone().unwrap();
    assert!(v2.progress.done && !v2.progress.installed, "{v2:?}");
    assert!(
        error.contains("exit status: 4") && error.contains("no space left on device"),
        "{error}"
    );
    assert_eq!(ex.state().current("web"), Some(1));
}

#[tokio::test]
async fn health_check_gates_done_tolerates_failures_and_snooze_counts_healthy() {
    let server = TestServer::start("starting");
    let mut w = World::new();
    w.publish(1, "one", None, Some(server.port));
    let mut config = w.config();
    config.health.max_consecutive_failures = 1;
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.installed && !v1.progress.done && v1.progress.healthy == Some(false),
        "{v1:?}"
    );
    assert!(server.saw("GET /health"));

    server.set("ok");
    ex.check_health().await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.done && v1.progress.healthy == Some(true) && v1.progress.error.is_none(),
        "{v1:?}"
    );

    // One failed check after healthy is tolerated (max_consecutive_failures = 1); two are not.
    server.set("dying");
    ex.check_health().await;
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(true)
    );
    ex.check_health().await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.done && v1.progress.healthy == Some(false) && v1.progress.error.is_none(),
        "no process to restart: reported unhealthy, not failed: {v1:?}"
    );

    // Snoozed: the check is not made and counts as passed, though the task says dying.
    let asked = server.seen.lock().unwrap().len();
    std::fs::write(w.web().join(SNOOZE_FILE), b"").unwrap();
    ex.check_health().await;
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(true)
    );
    std::fs::remove_file(w.web().join(SNOOZE_FILE)).unwrap();
    std::fs::write(w.web().join("1").join(SNOOZE_FILE), b"").unwrap();
    ex.check_health().await;
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(true)
    );
    assert_eq!(
        server.seen.lock().unwrap().len(),
        asked,
        "no check while snoozed"
    );
    std::fs::remove_file(w.web().join("1").join(SNOOZE_FILE)).unwrap();
    ex.check_health().await;
    ex.check_health().await;
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(false)
    );
}

#[tokio::test]
async fn a_snooze_during_the_grace_lets_the_version_be_done() {
    let server = TestServer::start("not yet");
    let mut w = World::new();
    w.publish(1, "one", None, Some(server.port));
    let mut config = w.config();
    config.health.grace = Duration::from_secs(3600);
    let mut ex = Executor::open(config).unwrap();
    std::fs::create_dir_all(w.web()).unwrap();
    std::fs::write(w.web().join(SNOOZE_FILE), b"").unwrap();
    ex.step(&install(1), &w.views()).await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.done && v1.progress.healthy == Some(true),
        "{v1:?}"
    );
}

#[tokio::test]
async fn a_version_that_never_gets_healthy_fails_after_the_grace() {
    let server = TestServer::start("not yet");
    let mut w = World::new();
    w.publish(1, "one", None, Some(server.port));
    let clock = ManualClock::new(1_000_000);
    let mut config = w.config();
    config.health.grace = Duration::from_millis(200);
    config.health.max_consecutive_failures = 0;
    config.clock = Arc::new(clock.clone());
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    ex.check_health().await;
    assert!(
        !ex.state().version("web", 1).unwrap().progress.done,
        "failures in the grace do not count"
    );
    // The grace is over when the agent's clock says so, not after a real wait.
    clock.advance(Duration::from_millis(250));
    ex.check_health().await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert_eq!(
        v1.installed_at_ms,
        Some(1_000_000),
        "installed at the clock's time"
    );
    assert!(
        v1.progress.done && v1.progress.healthy == Some(false),
        "{v1:?}"
    );
    assert!(
        v1.progress
            .error
            .as_deref()
            .unwrap()
            .starts_with("health check failed: "),
        "{v1:?}"
    );
}

#[tokio::test]
async fn rollback_reswitches_current_without_downloading_and_state_survives_a_restart() {
    let mut w = World::new();
    let src1 = w.publish(1, "one", None, None);
    w.publish(2, "two", None, None);
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    ex.step(&install(2), &w.views()).await;
    assert_eq!(read_current(&w.web()), Some(2));
    // The published artifact is gone and no views are given: a rollback must not download.
    std::fs::remove_file(src1).unwrap();
    ex.step(&install(1), &BTreeMap::new()).await;
    assert_eq!(read_current(&w.web()), Some(1));
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.installed && v1.progress.done && v1.progress.error.is_none(),
        "{v1:?}"
    );
    assert!(!ex.state().version("web", 2).unwrap().progress.installed);

    let before = ex.report_body();
    drop(ex);
    let ex = Executor::open(w.config()).unwrap();
    assert_eq!(
        ex.report_body(),
        before,
        "a restarted agent reports what it holds"
    );
}

#[tokio::test]
async fn a_restart_follows_the_current_link_after_a_crash_before_saving() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    w.publish(2, "two", None, None);
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    ex.step(&install(2), &w.views()).await;
    let after_v2 = ex.state().clone();
    ex.step(&install(1), &BTreeMap::new()).await;
    drop(ex);
    // Simulate a crash between the switch to 1 and the save: state.json still says 2.
    after_v2.save(&w.state.path().join("state.json")).unwrap();
    let ex = Executor::open(w.config()).unwrap();
    assert_eq!(ex.state().current("web"), Some(1));
    assert!(ex.state().version("web", 1).unwrap().progress.installed);
    assert!(!ex.state().version("web", 2).unwrap().progress.installed);
}

#[tokio::test]
async fn run_command_is_replaced_with_the_version_and_torn_down_on_shutdown() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    w.publish(2, "two", None, None);
    let mut config = w.config();
    config.run_command =
        Some(r#"echo $$ > "$CONVOY_STATE_DIR/pid-$CONVOY_VERSION"; exec sleep 1000"#.into());
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    let pid1 = wait_pid(&w.state.path().join("pid-1")).await;
    ex.step(&install(2), &w.views()).await;
    let pid2 = wait_pid(&w.state.path().join("pid-2")).await;
    assert!(!alive(pid1), "version 1's process was torn down");
    assert!(alive(pid2));
    assert_eq!(ex.processes.get("web").map(|p| p.version), Some(2));
    ex.shutdown().await;
    assert!(!alive(pid2));
    assert!(ex.processes.is_empty());
}

pub(super) async fn wait_pid(path: &Path) -> i32 {
    for _ in 0..250 {
        if let Ok(s) = std::fs::read_to_string(path) {
            if let Ok(pid) = s.trim().parse() {
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} never written", path.display());
}

pub(super) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[tokio::test]
async fn a_restarted_agent_re_attaches_to_its_process_and_tears_it_down_at_the_next_switch() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    w.publish(2, "two", None, None);
    let mut config = w.config();
    config.run_command = Some(
        r#"echo $$ > "$CONVOY_STATE_DIR/pid-$CONVOY_VERSION"; echo started >&2; exec sleep 1000"#
            .into(),
    );
    let mut ex = Executor::open(config.clone()).unwrap();
    ex.step(&install(1), &w.views()).await;
    let pid1 = wait_pid(&w.state.path().join("pid-1")).await;
    let recorded = ex.state().resources["web"].running.clone().unwrap();
    assert_eq!((recorded.version, recorded.pid), (1, pid1));
    // A crash: the executor vanishes without tearing anything down.
    std::mem::forget(ex);
    std::fs::remove_file(w.state.path().join("pid-1")).unwrap();

    let mut ex = Executor::open(config).unwrap();
    assert_eq!(
        ex.processes.get("web").and_then(|p| p.handle.pid()),
        Some(pid1)
    );
    for _ in 0..5 {
        ex.step(&install(1), &w.views()).await;
    }
    assert!(alive(pid1));
    assert!(
        !w.state.path().join("pid-1").exists(),
        "a second copy of version 1 was started"
    );
    ex.step(&install(2), &w.views()).await;
    let pid2 = wait_pid(&w.state.path().join("pid-2")).await;
    assert!(!alive(pid1), "the re-attached process was not torn down");
    assert_eq!(
        ex.state().resources["web"].running.as_ref().map(|r| r.pid),
        Some(pid2)
    );
    let logs = ex.config.app_logs.paths("web");
    assert_eq!(
        std::fs::read_to_string(logs.stderr).unwrap(),
        "started\nstarted\n"
    );
    ex.shutdown().await;
    assert!(!alive(pid2));
    assert_eq!(ex.state().resources["web"].running, None);
}

#[tokio::test]
async fn a_record_whose_process_is_gone_is_forgotten_and_the_app_started_once() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    let mut config = w.config();
    config.run_command = Some(r#"echo $$ >> "$CONVOY_STATE_DIR/pids"; exec sleep 1000"#.into());
    let mut ex = Executor::open(config.clone()).unwrap();
    ex.step(&install(1), &w.views()).await;
    let pid1 = wait_pid(&w.state.path().join("pids")).await;
    ex.shutdown().await;
    // The record names a process that is gone (here: a start time it never had).
    let mut state = ex.state().clone();
    state.resources.get_mut("web").unwrap().running = Some(super::state::RunRecord {
        version: 1,
        pid: std::process::id() as i32,
        start_ticks: 1,
    });
    state.save(&w.state.path().join("state.json")).unwrap();
    assert!(!alive(pid1));
    let mut ex = Executor::open(config).unwrap();
    assert!(ex.processes.is_empty(), "adopted a stranger");
    ex.step(&install(1), &w.views()).await;
    // The new copy writes its pid once its shell runs: wait for that line (the step does not), then
    // check that more steps start no third copy.
    let pids = w.state.path().join("pids");
    let lines = || std::fs::read_to_string(&pids).unwrap().lines().count();
    for _ in 0..250 {
        if lines() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for _ in 0..3 {
        ex.step(&install(1), &w.views()).await;
    }
    assert_eq!(lines(), 2, "{}", std::fs::read_to_string(&pids).unwrap());
    ex.shutdown().await;
}

#[tokio::test]
async fn the_report_names_each_apps_log_only_with_a_run_command() {
    let mut w = World::new();
    w.doc.versions.push(VersionDoc {
        version: 1,
        ..Default::default()
    });
    let mut ex = Executor::open(w.config()).unwrap();
    ex.step(&install(1), &w.views()).await;
    let body = ex.report_body();
    assert_eq!(body["resources"]["web"]["current"], 1, "{body}");
    assert!(body["resources"]["web"]["log"].is_null(), "no app: {body}");
    ex.shutdown().await;

    let mut config = w.config();
    config.run_command = Some("exec sleep 1000".into());
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    let body = ex.report_body();
    let log = body["resources"]["web"]["log"].as_str().unwrap_or_default();
    assert_eq!(
        std::path::Path::new(log),
        ex.config.app_logs.paths("web").stdout,
        "{body}"
    );
    assert!(log.starts_with('/'), "absolute: {log}");
    ex.shutdown().await;
}
