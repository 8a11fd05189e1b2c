//! The CLI never surprises a script (issue 41, item 6), through the real binary: `--server` naming one
//! of the context's own servers keeps its token, output into a closed pipe ends the command quietly,
//! `deploy list --limit N` keeps the newest N, window times carry their zone, a bad cron field is named,
//! `deploy resume` of a window-held deployment fails naming the window, one node is "1 node", and a weak
//! subscription shows no strategy it never uses and its brake window as a duration.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use convoy_tests::scenario::{
    consumer, deployment, post_ok, publish, report_running, resource_with_v1,
};
use convoy_tests::{convoy_bin, free_port, Cluster, ClusterOptions};
use serde_json::{json, Value};

/// `convoy ARGS` with its config under `home` and no `CONVOY_*` of this environment; `env` adds some.
fn command(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(convoy_bin());
    c.args(args)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .env_remove("CONVOY_TOKEN_FILE")
        .env_remove("CONVOY_CONTEXT")
        .env_remove("CONVOY_CA_FILE");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(home, args, env).output().expect("run convoy")
}

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
