//! The CLI's fleet and cluster views and conventions through the real binary against a real cluster:
//! `node list|show`, `consumer show` with the version distribution, `cluster status` showing a killed
//! server as unreachable, `version`, client flags before the command, durations with units, `deploy
//! status`, `deploy pulse` of an unknown id, a refused rollback suggesting `deploy undo`, `deploy undo`,
//! and a fast, explained failure when no server listens.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use convoy_tests::scenario::{consumer, get_ok, publish, report_running, resource_with_v1};
use convoy_tests::{convoy_bin, Cluster};
use serde_json::{json, Value};

/// Runs `convoy ARGS` (nothing from this environment's CONVOY_* leaks in).
fn convoy(args: &[&str]) -> Output {
    Command::new(convoy_bin())
        .args(args)
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .output()
        .expect("run convoy")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `convoy ARGS` must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let out = convoy(args);
    assert!(
        out.status.success(),
        "convoy {args:?} failed: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_views_and_cli_conventions_through_the_binary() -> anyhow::Result<()> {
    let mut cluster = Cluster::start(3).await?;
    let leader = cluster.wait_leader(Duration::from_secs(20)).await?;
    let api = cluster.client_except(0);
    let servers = cluster.http_addrs().join(",");
    let s = servers.as_str();
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let nodes = consumer(&api, "web", 3).await?;
    report_running(&api, &nodes, "app", 1).await?;

    // Client flags before the command; the leader's liveness table answers through any server.
    let page: Value = serde_json::from_str(&ok(&[
        "-o",
        "json",
        "--server",
        s,
        "node",
        "list",
        "--consumer",
        "web",
    ]))?;
    assert_eq!(page["total"], 3, "{page}");
    for n in page["nodes"].as_array().unwrap() {
        assert_eq!(n["versions"]["app"], 1, "{n}");
        assert!(
            n["last_report_ms"].is_u64(),
            "the leader heard from it: {n}"
        );
    }
    let show = ok(&["node", "show", "web-0", "--server", s]);
    assert!(
        show.contains("last report:") && show.contains(" ago"),
        "{show}"
    );
    assert!(show.contains("web"), "{show}");

    // consumer show: the version distribution.
    let c: Value = serde_json::from_str(&ok(&[
        "consumer", "show", "web", "-o", "json", "--server", s,
    ]))?;
    assert_eq!(c["versions"]["app"]["1"], 3, "{c}");
    let table = ok(&["consumer", "show", "web", "--server", s]);
    assert!(
        table.contains("VERSION") && table.contains("LAST REPORT"),
        "{table}"
    );

    // version: the client's and every server's.
    let version = ok(&["version", "--server", s]);
    assert!(
        version.contains(&format!("client  {}", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    assert_eq!(
        version.matches(env!("CARGO_PKG_VERSION")).count(),
        4,
        "{version}"
    );

    // Durations with units; deploy status is deploy info.
    let started = ok(&[
        "deploy",
        "start",
        "web",
        "app",
        "--version",
        "2",
        "--strategy",
        "all-at-once",
        "--pulse-interval-ms",
        "10s",
        "--min-healthy-ms",
        "1500ms",
        "-o",
        "json",
        "--server",
        s,
    ]);
    let id = serde_json::from_str::<Value>(&started)?["id"]
        .as_str()
        .unwrap()
        .to_string();
    let view = get_ok(&api, &format!("/v1/deployments/{id}")).await?;
    assert_eq!(view["settings"]["pulse_interval_ms"], 10_000, "{view}");
    assert_eq!(view["settings"]["min_healthy_ms"], 1_500, "{view}");
    let status = ok(&["deploy", "status", &id, "--server", s]);
    assert!(status.contains("failed nodes tolerated: 0"), "{status}");

    // Bash completes the deployment id by asking the cluster.
    let script = ok(&["completion", "bash"]);
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("convoy.bash"), &script)?;
    let bin_dir = convoy_bin().parent().unwrap().to_path_buf();
    let words = "COMP_WORDS=(convoy deploy info d-); COMP_CWORD=3; _convoy_deployment_ids; echo ${COMPREPLY[@]}";
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; {words}",
            dir.path().join("convoy.bash").display()
        ))
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("CONVOY_SERVER", s)
        .output()?;
    assert!(
        stdout(&out).split_whitespace().any(|w| w == id),
        "completion of {id}: {}{}",
        stdout(&out),
        stderr(&out)
    );

    // A pulse for a deployment that does not exist exits 1.
    let out = convoy(&["deploy", "pulse", "d-99", "--server", s]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("d-99 does not exist"),
        "{}",
        stderr(&out)
    );

    // A finished deployment: rollback is refused with the way back; undo starts it.
    ok(&["deploy", "abort", &id, "--server", s]);
    let out = convoy(&["deploy", "rollback", &id, "--server", s]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("convoy deploy undo {id}")),
        "{}",
        stderr(&out)
    );
    let undone = ok(&["deploy", "undo", &id, "-o", "json", "--server", s]);
    let undo_id = serde_json::from_str::<Value>(&undone)?["id"]
        .as_str()
        .unwrap()
        .to_string();
    let undo = get_ok(&api, &format!("/v1/deployments/{undo_id}")).await?;
    assert_eq!(undo["version"], 1, "{undo}");
    assert_eq!(
        undo["settings"]["pulse_interval_ms"], 10_000,
        "same policy: {undo}"
    );
    assert_eq!(undo["nodes"].as_array().unwrap().len(), 3, "{undo}");

    // cluster status: a SIGKILLed follower is unreachable, not "follower".
    let victim = cluster
        .running()
        .into_iter()
        .find(|i| *i != leader)
        .unwrap();
    let victim_addr = cluster.server(victim).http_addr.clone();
    cluster.server_mut(victim).kill();
    let members: Value =
        serde_json::from_str(&ok(&["cluster", "status", "-o", "json", "--server", s]))?;
    let dead = members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["http_addr"] == victim_addr.as_str())
        .unwrap();
    assert_eq!(dead["reachable"], false, "{members}");
    assert!(dead["role"].is_null(), "{members}");
    let alive: Vec<&Value> = members
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["reachable"] == true)
        .collect();
    assert_eq!(alive.len(), 2, "{members}");
    assert!(alive.iter().any(|m| m["role"] == "leader"), "{members}");
    let table = ok(&["cluster", "status", "--server", s]);
    assert!(table.contains("unreachable"), "{table}");

    // No server: a fast failure with the real cause once and the CONVOY_SERVER hint.
    let port = convoy_node::local::free_port()?;
    let dead_server = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let out = convoy(&["deploy", "list", "--server", &dead_server]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert_eq!(
        err.matches(&dead_server).count(),
        1,
        "the address once: {err}"
    );
    assert!(err.contains("CONVOY_SERVER"), "{err}");
    Ok(())
}
