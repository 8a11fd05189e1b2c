//! README.md's cluster walkthrough, run as written: the shell lines between its `walkthrough:begin` and
//! `walkthrough:end` markers run with `bash -e` in a temp dir holding `examples/cluster/`'s configs, against the
//! freshly built `convoy`, on free ports (the README's 808x/908x are rewritten), with none of this machine's
//! environment but `PATH`. Every step must succeed (the authenticated `curl -f`s fail a step on any error, a
//! 401 among them) and show what the README says: 401 without a token, the cluster with its three members,
//! the resource written through server 2 and read through server 3. The servers it started are killed by pid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use convoy_node::local::free_ports;
use convoy_tests::convoy_bin;
use serde_json::Value;

/// The walkthrough may take this long, its waits on `/readyz` included.
const PATIENCE: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository root")
        .to_path_buf()
}

/// The shell block between the README's walkthrough markers.
fn walkthrough(readme: &str) -> String {
    let begin = readme
        .find("<!-- walkthrough:begin -->")
        .expect("README.md has a <!-- walkthrough:begin --> marker");
    let end = readme[begin..]
        .find("<!-- walkthrough:end -->")
        .map(|e| begin + e)
        .expect("README.md has a <!-- walkthrough:end --> marker after its begin");
    let block = &readme[begin..end];
    let start = block
        .find("```sh\n")
        .expect("a ```sh block between the markers")
        + 6;
    let stop = block[start..]
        .find("```")
        .expect("the block's closing fence")
        + start;
    block[start..stop].to_string()
}

/// The README's ports, each to a free one.
fn port_map() -> anyhow::Result<BTreeMap<String, String>> {
    let free = free_ports(6)?;
    Ok(["8081", "8082", "8083", "9081", "9082", "9083"]
        .into_iter()
        .zip(free)
        .map(|(old, new)| (old.to_string(), new.to_string()))
        .collect())
}

/// `text` with the README's ports rewritten (through placeholders, so that a new port is never rewritten again).
fn rewrite_ports(text: &str, ports: &BTreeMap<String, String>) -> String {
    let placeholder = |i: usize| format!("\u{0}port{i}\u{0}");
    let held = ports
        .keys()
        .enumerate()
        .fold(text.to_string(), |t, (i, old)| {
            t.replace(old.as_str(), &placeholder(i))
        });
    ports
        .values()
        .enumerate()
        .fold(held, |t, (i, new)| t.replace(&placeholder(i), new))
}

/// The walkthrough as a script for `dir`: traced (each command on a line of its own starting `@@ `, its output
/// after it), stopping at the first failing step, and writing its background jobs' pids to `dir/pids` at exit.
fn script(block: &str, dir: &Path, ports: &BTreeMap<String, String>) -> String {
    let bin = convoy_bin();
    let body = rewrite_ports(block, ports)
        .replace("cargo build\n", "")
        .replace("cd examples/cluster", &format!("cd '{}'", dir.display()))
        .replace("../../target/debug/convoy", &format!("'{}'", bin.display()));
    format!(
        "set -euo pipefail\nexec 2>&1\ntrap 'jobs -p > \"{}/pids\"' EXIT\nPS4='\n@@ '\nset -x\n{body}",
        dir.display()
    )
}

/// The traced steps: each command (expanded) with what it printed.
fn steps(output: &str) -> Vec<(String, String)> {
    output
        .split("\n@@ ")
        .skip(1)
        .map(|step| match step.split_once('\n') {
            Some((command, printed)) => (command.to_string(), printed.trim().to_string()),
            None => (step.to_string(), String::new()),
        })
        .collect()
}

/// What the one step whose command contains every one of `words` printed.
fn printed<'a>(steps: &'a [(String, String)], words: &[&str], output: &str) -> &'a str {
    let found: Vec<_> = steps
        .iter()
        .filter(|(command, _)| words.iter().all(|w| command.contains(w)))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one step runs {words:?}; the walkthrough printed:\n{output}"
    );
    &found[0].1
}

fn json(text: &str, output: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}\nthe walkthrough printed:\n{output}"))
}

fn kill_all(pids: &str) {
    for pid in pids
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[test]
fn the_readme_cluster_walkthrough_runs_as_written() -> anyhow::Result<()> {
    let readme = std::fs::read_to_string(repo().join("README.md"))?;
    let block = walkthrough(&readme);
    let dir = tempfile::Builder::new()
        .prefix("convoy-readme-")
        .tempdir()?;
    let ports = port_map()?;
    for n in 1..=3 {
        let name = format!("server-{n}.toml");
        let config = std::fs::read_to_string(repo().join("examples/cluster").join(&name))?;
        std::fs::write(dir.path().join(&name), rewrite_ports(&config, &ports))?;
    }
    let mut bash = Command::new("bash")
        .arg("-c")
        .arg(script(&block, dir.path(), &ports))
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = bash.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = bash.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = bash.kill();
            let _ = bash.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = reader.join().unwrap_or_default();
    let pids = std::fs::read_to_string(dir.path().join("pids")).unwrap_or_default();
    let logs = || {
        (1..=3)
            .map(|n| {
                let log = std::fs::read_to_string(dir.path().join(format!("server-{n}.log")))
                    .unwrap_or_default();
                format!("--- server-{n}.log ---\n{log}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(
            status.is_some_and(|s| s.success()),
            "the walkthrough stopped ({status:?}, within {PATIENCE:?}); it printed:\n{output}\n{}",
            logs()
        );
        assert_eq!(
            pids.split_whitespace().count(),
            3,
            "three servers: {pids:?}"
        );
        let steps = steps(&output);
        let port = |p: &str| ports[p].clone();
        let anonymous = printed(&steps, &["-w", "/v1/cluster"], &output);
        assert_eq!(anonymous, "401", "{output}");
        let cluster = json(
            printed(
                &steps,
                &["Bearer", &format!("{}/v1/cluster", port("8081"))],
                &output,
            ),
            &output,
        );
        assert!(cluster["leader_id"].as_u64().is_some(), "{cluster}");
        assert_eq!(
            cluster["members"].as_array().map(Vec::len),
            Some(3),
            "{cluster}"
        );
        let written = json(
            printed(&steps, &["-XPOST", "/v1/resources"], &output),
            &output,
        );
        assert_eq!(written["name"], "web", "{written}");
        let read = printed(&steps, &["consistent=true"], &output);
        assert!(
            read.contains("\"web\""),
            "server 3 lists web: {read}\n{output}"
        );
    }));
    kill_all(&pids);
    if let Err(panic) = checked {
        std::panic::resume_unwind(panic);
    }
    Ok(())
}
