//! Tests of Aurora's teardown escalation against real processes, with short waits.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::health::test_server::TestServer;
use super::install::InstallEnv;
use super::process::{teardown, RunningProcess, Stopped, TeardownTimes};

/// Starts `command` as the agent does, its output dropped.
fn spawn(command: &str, env: &InstallEnv<'_>, cwd: &Path) -> std::io::Result<RunningProcess> {
    super::process::spawn(command, env, cwd, Stdio::null(), Stdio::null())
}

fn short() -> TeardownTimes {
    TeardownTimes {
        graceful: Duration::from_millis(300),
        abort: Duration::from_millis(200),
        term: Duration::from_millis(500),
        kill: Duration::from_millis(2000),
        http: Duration::from_millis(300),
    }
}

fn env<'a>(dir: &'a Path, port: Option<u16>) -> InstallEnv<'a> {
    InstallEnv {
        resource: "web",
        version: 1,
        artifact: dir,
        state_dir: dir,
        health_port: port,
    }
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Alive and not a zombie waiting for its (re-)parent to reap it.
fn alive(pid: i32) -> bool {
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
async fn a_process_without_http_goes_through_to_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn(
        "exec sleep 1000",
        &env(dir.path(), Some(closed_port())),
        dir.path(),
    )
    .unwrap();
    let started = Instant::now();
    assert_eq!(
        teardown(&mut p.handle, p.health_port, &short()).await,
        Stopped::Term
    );
    // It waited out the graceful and abort steps first.
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_process_ignoring_sigterm_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let script = "trap '' TERM; touch ready; exec sleep 1000";
    let mut p = spawn(script, &env(dir.path(), None), dir.path()).unwrap();
    // SIGTERM must not arrive before the trap is set.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dir.path().join("ready").exists() {
        assert!(Instant::now() < deadline, "run command did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(teardown(&mut p.handle, None, &short()).await, Stopped::Kill);
}

#[tokio::test]
async fn http_steps_are_sent_to_the_health_port_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start("ok");
    let mut p = spawn(
        "exec sleep 1000",
        &env(dir.path(), Some(server.port)),
        dir.path(),
    )
    .unwrap();
    assert_eq!(
        teardown(&mut p.handle, p.health_port, &short()).await,
        Stopped::Term
    );
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        vec!["POST /quitquitquit", "POST /abortabortabort"]
    );
}

#[tokio::test]
async fn a_process_that_quits_gracefully_is_not_escalated() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start("ok");
    // Stands in for a task that finishes its shutdown shortly after /quitquitquit.
    let mut p = spawn(
        "exec sleep 0.2",
        &env(dir.path(), Some(server.port)),
        dir.path(),
    )
    .unwrap();
    let times = TeardownTimes {
        graceful: Duration::from_secs(5),
        ..short()
    };
    assert_eq!(
        teardown(&mut p.handle, p.health_port, &times).await,
        Stopped::Quit
    );
    assert!(server.saw("POST /quitquitquit") && !server.saw("POST /abortabortabort"));
}

#[tokio::test]
async fn an_exited_process_needs_no_teardown_and_the_group_goes_with_the_leader() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = spawn("exit 0", &env(dir.path(), None), dir.path()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while p.handle.running() {
        assert!(Instant::now() < deadline, "`exit 0` did not exit");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        teardown(&mut p.handle, None, &short()).await,
        Stopped::AlreadyExited
    );

    // A grandchild started by the run command is signalled with its process group.
    let mut p = spawn(
        "sleep 1000 & echo $! > pid; wait",
        &env(dir.path(), None),
        dir.path(),
    )
    .unwrap();
    let pid_file = dir.path().join("pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(&pid_file).map_or(true, |s| s.trim().is_empty()) {
        assert!(Instant::now() < deadline, "run command did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    assert_eq!(teardown(&mut p.handle, None, &short()).await, Stopped::Term);
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(grandchild),
        "grandchild {grandchild} survived the teardown"
    );
}
