//! The health rules carried out on real processes: a crash loop backs off and ends failed, a run
//! command that exits 0 is finished, a
//! process without a health port is healthy only while it stays up, an unhealthy process is torn
//! down and restarted, and a flapping health endpoint is tolerated.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::executor::{AgentConfig, Executor};
use super::executor_test::{alive, install, wait_pid, World};
use super::health::test_server::TestServer;
use super::health_policy::HealthRules;
use super::status::Phase;

/// Checks every 50 ms, no grace, one failure tolerated, two restarts from 100 ms up to 200 ms.
fn fast(w: &World, run: &str) -> AgentConfig {
    let mut c = w.config();
    c.health = HealthRules {
        interval: Duration::from_millis(50),
        grace: Duration::ZERO,
        max_consecutive_failures: 1,
        max_restarts: 2,
        backoff: Duration::from_millis(100),
        backoff_max: Duration::from_millis(200),
        ..HealthRules::default()
    };
    c.run_command = Some(run.to_string());
    c
}

/// Steps `ex` as the worker does (every 10 ms) until `until` holds; false after `limit`.
async fn drive(
    ex: &mut Executor,
    w: &World,
    limit: Duration,
    mut until: impl FnMut(&Executor) -> bool,
) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        ex.step(&install(1), &w.views()).await;
        if until(ex) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn a_crash_looping_process_backs_off_and_the_version_fails_after_max_restarts() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    let starts = w.state.path().join("starts");
    let run = r#"date +%s%3N >> "$CONVOY_STATE_DIR/starts"; exit 3"#;
    let mut ex = Executor::open(fast(&w, run)).unwrap();
    let mut ever_done = false;
    let failed = drive(&mut ex, &w, Duration::from_secs(10), |ex| {
        let v = ex.state().version("web", 1);
        ever_done |= v.is_some_and(|v| v.progress.done && v.progress.error.is_none());
        v.is_some_and(|v| v.failed())
    })
    .await;
    assert!(failed, "{:?}", ex.state().version("web", 1));
    assert!(
        !ever_done,
        "a process that keeps crashing never counts healthy"
    );
    let v1 = ex.state().version("web", 1).unwrap();
    assert_eq!(
        v1.progress.error.as_deref(),
        Some("run command exited: exit status: 3 (gave up after 2 restarts)")
    );
    assert_eq!(v1.progress.healthy, Some(false));
    let at: Vec<u64> = lines(&starts).iter().map(|l| l.parse().unwrap()).collect();
    assert_eq!(at.len(), 3, "the first start and two restarts: {at:?}");
    assert!(
        at[1] - at[0] >= 100 && at[2] - at[1] >= 200,
        "backoff: {at:?}"
    );
    assert!(ex.processes.is_empty());
    assert_eq!(ex.phases()["web"].phase, Phase::Failed);
    // Failed for good: no more starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    ex.step(&install(1), &w.views()).await;
    assert_eq!(lines(&starts).len(), 3);
}

#[tokio::test]
async fn a_run_command_that_exits_0_is_finished_not_restarted_nor_failed_even_after_an_agent_restart(
) {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    let starts = w.state.path().join("starts");
    let run = r#"date +%s%3N >> "$CONVOY_STATE_DIR/starts"; exit 0"#;
    let mut ex = Executor::open(fast(&w, run)).unwrap();
    let done = drive(&mut ex, &w, Duration::from_secs(10), |ex| {
        ex.state()
            .version("web", 1)
            .is_some_and(|v| v.progress.done)
    })
    .await;
    assert!(done, "{:?}", ex.state().version("web", 1));
    // Longer than the restarts' backoff and a few health intervals.
    drive(&mut ex, &w, Duration::from_millis(600), |_| false).await;
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(
        v1.progress.error.is_none() && !v1.failed() && v1.progress.healthy == Some(true),
        "{v1:?}"
    );
    assert_eq!(lines(&starts).len(), 1, "started once, never again");
    assert!(ex.processes.is_empty());
    // An agent restart does not start a finished run command again.
    drop(ex);
    let mut ex = Executor::open(fast(&w, run)).unwrap();
    drive(&mut ex, &w, Duration::from_millis(400), |_| false).await;
    assert_eq!(
        lines(&starts).len(),
        1,
        "started again after an agent restart"
    );
    assert!(ex.state().version("web", 1).unwrap().progress.done);
}

#[tokio::test]
async fn without_a_health_port_a_process_is_healthy_while_it_stays_up_and_restarted_when_killed() {
    let mut w = World::new();
    w.publish(1, "one", None, None);
    let pids = w.state.path().join("pids");
    let run = r#"echo $$ >> "$CONVOY_STATE_DIR/pids"; exec sleep 1000"#;
    let mut ex = Executor::open(fast(&w, run)).unwrap();
    let started = Instant::now();
    ex.step(&install(1), &w.views()).await;
    assert!(!ex.state().version("web", 1).unwrap().progress.done);
    assert_eq!(ex.phases()["web"].phase, Phase::Watching);
    assert!(
        drive(&mut ex, &w, Duration::from_secs(5), |ex| ex
            .state()
            .version("web", 1)
            .is_some_and(|v| v.progress.done))
        .await
    );
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "up one interval first"
    );
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(true)
    );
    let first = wait_pid(&pids).await;
    kill(Pid::from_raw(first), Signal::SIGKILL).unwrap();
    let mut saw_down = false;
    let restarted = drive(&mut ex, &w, Duration::from_secs(5), |ex| {
        saw_down |= ex.state().version("web", 1).unwrap().progress.healthy == Some(false);
        lines(&pids).len() == 2
            && ex.state().version("web", 1).unwrap().progress.healthy == Some(true)
    })
    .await;
    assert!(restarted && saw_down, "{:?}", lines(&pids));
    let v1 = ex.state().version("web", 1).unwrap();
    assert!(v1.progress.done && v1.progress.error.is_none(), "{v1:?}");
    assert_eq!(ex.watches["web"].restarts(), 1);
    ex.shutdown().await;
}

#[tokio::test]
async fn a_flapping_endpoint_is_tolerated_and_an_unhealthy_process_is_torn_down_and_restarted() {
    let server = TestServer::start("ok");
    let mut w = World::new();
    w.publish(1, "one", None, Some(server.port));
    let pids = w.state.path().join("pids");
    let run = r#"echo $$ >> "$CONVOY_STATE_DIR/pids"; exec sleep 1000"#;
    let mut config = fast(&w, run);
    config.health.interval = Duration::ZERO;
    let mut ex = Executor::open(config).unwrap();
    ex.step(&install(1), &w.views()).await;
    ex.check_health().await;
    assert!(ex.state().version("web", 1).unwrap().progress.done);
    let first = wait_pid(&pids).await;

    // Flapping: failed, passed, failed, passed... never two failures in a row.
    for _ in 0..5 {
        server.set("flap");
        ex.check_health().await;
        assert_eq!(
            ex.state().version("web", 1).unwrap().progress.healthy,
            Some(true)
        );
        server.set("ok");
        ex.check_health().await;
    }
    assert!(alive(first) && ex.watches["web"].restarts() == 0);

    // Two failures in a row: torn down (it has no /quitquitquit: SIGTERM), restarted after 100 ms.
    server.set("broken");
    ex.check_health().await;
    ex.check_health().await;
    assert_eq!(
        ex.state().version("web", 1).unwrap().progress.healthy,
        Some(false)
    );
    assert!(!alive(first), "the unhealthy process was torn down");
    assert_eq!(ex.phases()["web"].phase, Phase::Restarting);
    server.set("ok");
    let back = drive(&mut ex, &w, Duration::from_secs(5), |ex| {
        ex.state().version("web", 1).unwrap().progress.healthy == Some(true)
    })
    .await;
    assert!(back);
    // The restarted process writes its pid once it runs; health answers for it from the test server.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while lines(&pids).len() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let all = lines(&pids);
    assert_eq!(all.len(), 2, "{all:?}");
    let second: i32 = all[1].parse().unwrap();
    assert!(alive(second));
    assert!(ex
        .state()
        .version("web", 1)
        .unwrap()
        .progress
        .error
        .is_none());
    assert!(server.saw("POST /quitquitquit"));
    ex.shutdown().await;
    assert!(!alive(second));
}
