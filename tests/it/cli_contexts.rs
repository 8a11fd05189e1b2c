//! The CLI in daily use, through the real binary against a real cluster with tokens on (issue 29, item
//! 5): `convoy login` writes a private config file of named contexts without printing the token, every
//! command then finds its servers and token there, `context list|use|current` switch, flags and
//! `CONVOY_*` win over the context, `-o yaml` and `-o wide`, `--limit` and `--watch` on lists, and
//! `node list` in natural order (`node-2` before `node-10`).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context as _;
use convoy_tests::cli::{command, run};
use convoy_tests::scenario::{post_ok, publish, resource_with_v1};
use convoy_tests::{Cluster, ClusterOptions};
use serde_json::{json, Value};

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `convoy ARGS` must succeed; its stdout.
fn ok(config_home: &Path, args: &[&str]) -> String {
    let out = run(config_home, args, &[]);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "convoy {args:?} failed: {stdout}{stderr}"
    );
    stdout
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("exists")
        .permissions()
        .mode()
        & 0o777
}

/// A child's stdout, line by line, on a channel (read on a thread of its own).
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits up to `within` for a line containing `want`; every line read until then.
fn wait_line(rx: &mpsc::Receiver<String>, want: &str, within: Duration) -> Result<String, String> {
    let deadline = std::time::Instant::now() + within;
    let mut seen = String::new();
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(want) => return Ok(line),
            Ok(line) => seen += &format!("{line}\n"),
            Err(_) => break,
        }
    }
    Err(seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_contexts_outputs_and_lists_through_the_binary() -> anyhow::Result<()> {
    let cluster = Cluster::start_with(ClusterOptions::for_tests(1).with_auth()).await?;
    cluster.wait_token_known(Duration::from_secs(30)).await?;
    let server = cluster.http_addrs().join(",");
    let token_file = cluster.dir().join("admin-token");
    let secret = std::fs::read_to_string(&token_file)?.trim().to_string();
    let api = cluster.client_except(0);
    resource_with_v1(&api, "app").await?;
    let home = tempfile::tempdir()?;
    let home = home.path();
    let config = home.join("convoy").join("config.toml");

    // Before any login: no context.
    let out = run(home, &["context", "current"], &[]);
    let (_, stderr) = text(&out);
    assert!(
        out.status.code() == Some(1) && stderr.contains("convoy login"),
        "{stderr}"
    );

    // login: checks the token, saves the context 0600 in a 0700 directory, never prints the secret.
    let tf = token_file.to_str().context("utf-8 path")?;
    let out = run(
        home,
        &[
            "login",
            "--server",
            &server,
            "--token-file",
            tf,
            "--name",
            "lab",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("context lab") && stdout.contains("bootstrap"),
        "{stdout}"
    );
    assert!(!stdout.contains(&secret) && !stderr.contains(&secret));
    assert_eq!(mode(&config), 0o600);
    assert_eq!(mode(config.parent().context("a directory")?), 0o700);

    // Every command reads the current context: servers and token.
    let list = ok(home, &["resource", "list"]);
    assert!(list.contains("app"), "{list}");
    assert_eq!(
        ok(home, &["context", "current"]).trim(),
        format!("lab ({server})")
    );

    // A second context (a wrong token, checked: refused and not saved; unchecked: saved).
    let wrong = home.join("wrong-token");
    std::fs::write(&wrong, "not-the-token-of-this-cluster")?;
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600))?;
    let wf = wrong.to_str().context("utf-8 path")?;
    let out = run(
        home,
        &[
            "login",
            "--server",
            &server,
            "--token-file",
            wf,
            "--name",
            "bad",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let out = run(
        home,
        &[
            "login",
            "--server",
            &server,
            "--token-file",
            wf,
            "--name",
            "bad",
            "--no-check",
        ],
        &[],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let contexts = ok(home, &["context", "list"]);
    assert!(
        contexts.contains("* ") && contexts.contains("bad") && contexts.contains("lab"),
        "{contexts}"
    );
    assert!(!contexts.contains(&secret), "{contexts}");
    assert_eq!(
        ok(home, &["context", "current"]).trim(),
        format!("bad ({server})")
    );
    let out = run(home, &["resource", "list"], &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the bad token: {:?}",
        text(&out)
    );
    ok(home, &["context", "use", "lab"]);
    assert!(ok(home, &["resource", "list"]).contains("app"));

    // Flags and CONVOY_* win: another context, a token, or another server.
    let out = run(home, &["resource", "list", "--context", "bad"], &[]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let out = run(home, &["resource", "list"], &[("CONVOY_CONTEXT", "bad")]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    let out = run(
        home,
        &["resource", "list", "--context", "bad"],
        &[("CONVOY_TOKEN", secret.as_str())],
    );
    assert!(
        out.status.success(),
        "the variable's token wins: {:?}",
        text(&out)
    );
    let dead = format!("127.0.0.1:{}", convoy_node::local::free_port()?);
    let out = run(
        home,
        &["resource", "list"],
        &[("CONVOY_SERVER", dead.as_str())],
    );
    let (_, stderr) = text(&out);
    assert!(
        out.status.code() == Some(1) && stderr.contains(&dead),
        "{stderr}"
    );
    let out = run(home, &["context", "use", "nope"], &[]);
    let (_, stderr) = text(&out);
    assert!(stderr.contains("bad, lab"), "{stderr}");

    // -o yaml and -o wide.
    let yaml = ok(home, &["resource", "list", "-o", "yaml"]);
    assert!(yaml.starts_with("- name: app\n"), "{yaml}");
    let wide = ok(home, &["resource", "list", "-o", "wide"]);
    assert!(
        wide.lines().next().is_some_and(|h| h.contains("PUBLISHED")),
        "{wide}"
    );
    assert!(!ok(home, &["resource", "list"]).contains("PUBLISHED"));

    // node list in natural order, and --limit.
    let nodes: Vec<String> = [10, 2, 1, 100, 9]
        .iter()
        .map(|i| format!("node-{i}"))
        .collect();
    post_ok(
        &api,
        "/v1/consumers",
        json!({"name": "web", "nodes": nodes}),
    )
    .await?;
    let list = ok(home, &["node", "list"]);
    let order: Vec<&str> = list
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        order,
        ["node-1", "node-2", "node-9", "node-10", "node-100"],
        "{list}"
    );
    let json: Value =
        serde_json::from_str(&ok(home, &["node", "list", "-o", "json", "--limit", "2"]))?;
    let ids: Vec<&str> = json["nodes"]
        .as_array()
        .context("nodes")?
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    assert_eq!(ids, ["node-1", "node-2"], "{json}");
    for i in 0..3 {
        post_ok(&api, "/v1/resources", json!({"name": format!("lib-{i}")})).await?;
    }
    let limited = ok(home, &["resource", "list", "--limit", "2"]);
    assert_eq!(limited.lines().count(), 3, "header and 2 rows: {limited}");

    // --watch prints the list again when it changes.
    let mut child = command(home, &["resource", "list", "--watch", "-o", "json"], &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let rx = lines_of(&mut child);
    let first = wait_line(&rx, "\"lib-2\"", Duration::from_secs(20));
    post_ok(&api, "/v1/resources", json!({"name": "late"})).await?;
    publish(&api, "late", json!({})).await?;
    let later = wait_line(&rx, "\"late\"", Duration::from_secs(20));
    child.kill()?;
    child.wait()?;
    first.map_err(|seen| anyhow::anyhow!("no first frame: {seen}"))?;
    later.map_err(|seen| anyhow::anyhow!("the new resource never showed: {seen}"))?;
    Ok(())
}
