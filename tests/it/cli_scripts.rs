//! The CLI never surprises a script (issue 41, item 6), through the real binary: `--server` naming one
//! of the context's own servers keeps its token, output into a closed pipe ends the command quietly,
//! `deploy list --limit N` keeps the newest N, window times carry their zone, a bad cron field is named,
//! `deploy resume` of a window-held deployment fails naming the window, one node is "1 node", and a weak
//! subscription shows no strategy it never uses and its brake window as a duration.

use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use convoy_tests::cli::{command, run};
use convoy_tests::scenario::{
    consumer, deployment, post_ok, publish, report_running, resource_with_v1,
};
use convoy_tests::{free_port, Cluster, ClusterOptions};
use serde_json::{json, Value};

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_the_contexts_servers_keeps_its_token() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1).with_auth()).await?;
    let addr = cluster.http_addrs()[0].clone();
    let token_file = cluster.dir().join("admin-token");
    let home = tempfile::tempdir()?;
    let home = home.path();
    // A context of two servers (the second one down), as a three-server context with one picked.
    let servers = format!("{addr},127.0.0.1:{}", free_port()?);
    let tf = token_file.to_str().context("utf-8 path")?;
    let out = run(
        home,
        &[
            "login",
            "--server",
            &servers,
            "--token-file",
            tf,
            "--no-check",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    for server in [addr.clone(), format!("http://{addr}")] {
        let out = run(home, &["resource", "list", "--server", &server], &[]);
        assert!(out.status.success(), "--server {server}: {}", text(&out));
        let out = run(home, &["resource", "list"], &[("CONVOY_SERVER", &server)]);
        assert!(
            out.status.success(),
            "CONVOY_SERVER={server}: {}",
            text(&out)
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_into_a_closed_pipe_ends_quietly() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    let home = tempfile::tempdir()?;
    let mut child = command(
        home.path(),
        &["resource", "list", "-w", "--server", &addr],
        &[],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()?;
    // Read the first line, then close the pipe as `head -1` does; the next frame meets it closed.
    let mut first = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut first)?;
    assert!(first.contains("NAME"), "{first}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            child.kill()?;
            child.wait()?;
            anyhow::bail!("still running 30 s after its pipe closed");
        }
        n += 1;
        post_ok(&api, "/v1/resources", json!({"name": format!("lib-{n}")})).await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().context("stderr")?, &mut stderr)?;
    assert!(
        status.success() && stderr.is_empty(),
        "{status:?}: {stderr}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_list_limit_keeps_the_newest() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    let mut ids = Vec::new();
    for c in ["c1", "c2", "c3"] {
        consumer(&api, c, 1).await?;
        let started = post_ok(
            &api,
            "/v1/deployments",
            json!({"consumer": c, "resource": "app", "version": 1}),
        )
        .await?;
        ids.push(started["id"].as_str().context("id")?.to_string());
    }
    let home = tempfile::tempdir()?;
    let out = run(
        home.path(),
        &[
            "deploy", "list", "--limit", "2", "-o", "json", "--server", &addr,
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout)?;
    let listed: Vec<&str> = listed
        .as_array()
        .context("an array")?
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()], "{}", text(&out));
    let out = run(home.path(), &["deploy", "list", "--server", &addr], &[]);
    let table = String::from_utf8_lossy(&out.stdout);
    let first = table.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with(&ids[2]), "newest first: {table}");
    Ok(())
}

/// `convoy ARGS --server addr` with no config and no `CONVOY_*`.
fn at(addr: &str, args: &[&str]) -> Output {
    let home = tempfile::tempdir().expect("a temp dir");
    let mut all = args.to_vec();
    all.extend(["--server", addr]);
    run(home.path(), &all, &[])
}

/// `convoy window create NAME --kind allow --schedule SCHEDULE --duration 1h --time-zone ZONE` at `addr`.
fn create_window(addr: &str, name: &str, schedule: &str, zone: &str) -> Output {
    let args = [
        "window",
        "create",
        name,
        "--kind",
        "allow",
        "--schedule",
        schedule,
    ];
    let more = ["--duration", "1h", "--time-zone", zone];
    at(addr, &[&args[..], &more[..]].concat())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_times_carry_their_zone() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let create =
        |name: &str, schedule: &str, zone: &str| create_window(&addr, name, schedule, zone);
    let out = create("berlin", "0 22 * * *", "Europe/Berlin");
    assert!(out.status.success(), "{}", text(&out));
    let out = at(&addr, &["window", "next", "berlin"]);
    let next = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = next.lines().skip(1).collect();
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r.contains("22:00:00 CE") && r.contains("23:00:00 CE")),
        "in Berlin's wall time, naming CET or CEST: {}",
        text(&out)
    );
    let out = create("utc", "0 3 * * *", "UTC");
    assert!(out.status.success(), "{}", text(&out));
    let out = at(&addr, &["window", "list"]);
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(
        list.lines()
            .any(|l| l.starts_with("utc ") && l.contains("03:00:00 UTC"))
            && list
                .lines()
                .any(|l| l.starts_with("berlin ") && l.contains("22:00:00 CE")),
        "{list}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_cron_field_is_named_with_its_value() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let create =
        |name: &str, schedule: &str, zone: &str| create_window(&addr, name, schedule, zone);
    // A bad field is named with its value; a huge schedule is not echoed whole.
    let out = create("bad", "0 25 * * *", "UTC");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1)
            && stderr.contains("hour field \"25\"")
            && stderr.contains("0-23"),
        "{}",
        text(&out)
    );
    let huge = "1,".repeat(5_000);
    let out = create("huge", &huge, "UTC");
    assert!(
        out.status.code() == Some(1) && out.stderr.len() < 1_000,
        "{}",
        text(&out)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_a_window_held_deployment_fails_naming_the_window() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let nodes = consumer(&api, "web", 2).await?;
    report_running(&api, &nodes, "app", 1).await?;
    // Open one second a year: closed now.
    post_ok(
        &api,
        "/v1/windows",
        json!({"name": "newyear", "kind": "allow", "schedule": "0 0 1 1 *", "duration": "1s",
               "time_zone": "UTC"}),
    )
    .await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "web", "resource": "app", "version": 2}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?.to_string();
    let before = deployment(&api, &id).await?;
    assert_eq!(before["paused_by"], "window", "{before}");
    let out = at(&addr, &["deploy", "resume", &id]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1)
            && stderr.contains("held by window newyear")
            && stderr.contains("closed until")
            && stderr.contains("-01-01 00:00:00 UTC"),
        "{}",
        text(&out)
    );
    let after = deployment(&api, &id).await?;
    assert_eq!(after["paused_by"], "window", "{after}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_is_one_node() -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    publish(&api, "app", json!({"label": "v2"})).await?;
    let nodes = consumer(&api, "c1", 1).await?;
    report_running(&api, &nodes, "app", 1).await?;
    let started = post_ok(
        &api,
        "/v1/deployments",
        json!({"consumer": "c1", "resource": "app", "version": 2}),
    )
    .await?;
    let id = started["id"].as_str().context("id")?;
    let home = tempfile::tempdir()?;
    // In the server's events and the CLI's own lines.
    let out = run(home.path(), &["deploy", "info", id, "--server", &addr], &[]);
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(
        info.contains("deploy version 2 to 1 node") && !info.contains("1 nodes"),
        "{}",
        text(&out)
    );
    let out = run(
        home.path(),
        &["consumer", "show", "c1", "--server", &addr],
        &[],
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("consumer: c1 (1 node)") && !shown.contains("1 nodes"),
        "{}",
        text(&out)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_subscription_shows_no_strategy_and_its_brake_window_as_a_duration(
) -> anyhow::Result<()> {
    let cluster = Cluster::start(1).await?;
    let addr = cluster.http_addrs()[0].clone();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    consumer(&api, "web", 1).await?;
    let out = at(&addr, &["consumer", "subscribe", "web", "app"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && shown.contains("mode:          weak")
            && shown.contains("settings:      none")
            && !shown.contains("strategy:")
            && !shown.contains("completion:")
            && shown.contains("within 10m hold it back")
            && !shown.contains(" ms"),
        "{}",
        text(&out)
    );
    // Given a strategy, it is shown as what a deployment by hand takes.
    let out = at(
        &addr,
        &[
            "consumer",
            "subscribe",
            "web",
            "app",
            "--strategy",
            "all-at-once",
        ],
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && shown.contains("by hand:") && shown.contains("strategy:"),
        "{}",
        text(&out)
    );
    Ok(())
}
