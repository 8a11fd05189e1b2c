//! `convoy bench --scenario crowded` (issue 37 §2) at a small scale through the binary: it completes and
//! reports the writes' p50 and p99 quiet and crowded, and the elections during the run (never timings).

use std::process::Command;

use anyhow::{ensure, Context};
use convoy_tests::convoy_bin;
use serde_json::Value;

#[test]
fn the_crowded_bench_completes_and_reports_quiet_and_crowded_writes_and_elections(
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("results.json");
    let run = Command::new(convoy_bin())
        .args(["bench", "--scenario", "crowded", "--crowded-scale", "0.01"])
        .args(["--duration", "2s", "--dir"])
        .arg(dir.path().join("clusters"))
        .arg("--out")
        .arg(&out)
        .env_remove("CONVOY_SERVER")
        .env_remove("CONVOY_TOKEN")
        .output()?;
    ensure!(
        run.status.success(),
        "convoy bench failed: {}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let saved: Value = serde_json::from_slice(&std::fs::read(&out)?)?;
    let rows = saved["rows"].as_array().context("rows")?;
    let value = |metric: &str| {
        rows.iter()
            .find(|r| r["scenario"] == "crowded" && r["metric"] == metric)
            .and_then(|r| r["value"].as_f64())
    };
    for metric in [
        "writes, quiet, 16 clients: p50",
        "writes, quiet, 16 clients: p99",
        "writes, crowded, readers listing everything, 16 clients: p50",
        "writes, crowded, readers listing everything, 16 clients: p99",
        "crowded p99 / quiet p99",
        "elections during the run",
    ] {
        ensure!(value(metric).is_some(), "no {metric:?} in {rows:?}");
    }
    ensure!(
        value("list pages read by 4 readers while writing").is_some_and(|p| p > 0.0),
        "the readers read nothing: {rows:?}"
    );
    Ok(())
}
