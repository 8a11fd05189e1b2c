//! (e) Pulse-timeout precision: coordinated deployments whose pulses stop; from each deadline
//! (`last_pulse_at` + `pulse_interval_ms`) to the leader's AWAITING_PULSE event.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{json, Value};

use super::cluster;
use super::context::Ctx;
use super::load::{get_json, post_ok};
use crate::measure::percentile;

const SCENARIO: &str = "pulse";
const INTERVAL_MS: u64 = 1000;

/// `at` of the first AWAITING_PULSE event since the last pulse minus the deadline, ms (negative =
/// early); the deadline runs from `last_pulse_at`, or from the first event when no pulse was recorded.
/// (A coordinated deployment starts awaiting its first pulse; that event is before `last_pulse_at`.)
pub fn lateness(view: &Value) -> Option<i64> {
    let events = view["events"].as_array()?;
    let interval = view["settings"]["pulse_interval_ms"].as_u64()?;
    let from = view["last_pulse_at"]
        .as_u64()
        .or_else(|| events.first()?["at"].as_u64())?;
    let fired = events
        .iter()
        .filter(|e| {
            e["status"]
                .as_str()
                .is_some_and(|s| s.ends_with("AWAITING_PULSE"))
        })
        .filter_map(|e| e["at"].as_u64())
        .find(|&at| at >= from)?;
    Some(fired as i64 - (from + interval) as i64)
}

/// Starts `--pulses` deployments (one resource each, staggered over one interval), pulses each once,
/// then lets every pulse lapse.
pub async fn run(ctx: &mut Ctx) -> anyhow::Result<()> {
    let n = ctx.args.pulses;
    let cluster = cluster::start(&ctx.dir("pulse"), cluster::options(ctx, 10_000)).await?;
    let leader = cluster::leader(&ctx.http, &cluster, Duration::from_secs(30)).await?;
    let base = format!("http://{}", cluster::addr(&cluster, leader));
    let http = ctx.http.clone();
    let err = anyhow::Error::msg;
    post_ok(
        &http,
        &format!("{base}/v1/consumers"),
        &json!({"name": "pulse", "nodes": ["p-node"]}),
    )
    .await
    .map_err(err)?;
    for k in 0..n {
        post_ok(
            &http,
            &format!("{base}/v1/resources"),
            &json!({"name": format!("pr-{k}")}),
        )
        .await
        .map_err(err)?;
        for _ in 0..2 {
            post_ok(
                &http,
                &format!("{base}/v1/resources/pr-{k}/versions"),
                &json!({}),
            )
            .await
            .map_err(err)?;
        }
    }
    // The node holds version 1 of every resource, so each deployment has it and waits on it forever.
    let done = json!({"downloaded": true, "installed": true, "done": true, "healthy": true});
    let held: serde_json::Map<String, Value> = (0..n)
        .map(|k| {
            (
                format!("pr-{k}"),
                json!({"current": 1, "versions": {"1": done.clone()}}),
            )
        })
        .collect();
    post_ok(
        &http,
        &format!("{base}/v1/nodes/p-node/report"),
        &json!({"active": true, "resources": held}),
    )
    .await
    .map_err(err)?;
    let view_url = format!("{base}/v1/nodes/p-node");
    let last = format!("pr-{}", n - 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while get_json(&http, &view_url)
        .await
        .ok()
        .and_then(|v| v["resources"][&last]["current"].as_u64())
        != Some(1)
    {
        anyhow::ensure!(
            Instant::now() < deadline,
            "p-node's report not applied within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let starts = (0..n).map(|k| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            tokio::time::sleep(Duration::from_millis((k as u64 * INTERVAL_MS) / n as u64)).await;
            let spec = json!({"consumer": "pulse", "resource": format!("pr-{k}"), "version": 2, "pulse_interval_ms": INTERVAL_MS});
            let d: Value = serde_json::from_slice(&post_ok(&http, &format!("{base}/v1/deployments"), &spec).await?)
                .map_err(|e| e.to_string())?;
            let id = d["id"].as_str().unwrap_or_default().to_string();
            post_ok(&http, &format!("{base}/v1/deployments/{id}/pulse"), &json!({})).await?;
            Ok::<_, String>(id)
        }
    });
    let ids: Vec<String> = join_all(starts)
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let deadline =
        Instant::now() + Duration::from_millis(3 * INTERVAL_MS) + Duration::from_secs(10);
    let mut samples = Vec::new();
    let mut pending = ids.clone();
    while !pending.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let mut still = Vec::new();
        for id in pending {
            match get_json(&http, &format!("{base}/v1/deployments/{id}"))
                .await
                .ok()
                .as_ref()
                .and_then(lateness)
            {
                Some(ms) => samples.push(ms),
                None => still.push(id),
            }
        }
        pending = still;
    }
    let note = format!("{} of {n} deployments, interval {INTERVAL_MS} ms, started over one interval; event `at` is the leader's stamp on the Tick it proposes", samples.len());
    let late: Vec<u64> = samples.iter().map(|&ms| ms.max(0) as u64).collect();
    for (name, p) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
        ctx.results.add(
            SCENARIO,
            format!("deadline → AWAITING_PULSE, {name}"),
            percentile(late.clone(), p).map(|v| v as f64),
            "ms",
            note.clone(),
        );
    }
    let early = samples.iter().filter(|&&ms| ms < 0).count();
    ctx.results.add(
        SCENARIO,
        "fired before the deadline",
        Some(early as f64),
        "deployments",
        "must be 0",
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_runs_from_the_last_pulse_plus_the_interval() {
        let view = json!({"last_pulse_at": 10_000, "settings": {"pulse_interval_ms": 1000},
            "events": [{"at": 9_900, "status": "ROLLING_FORWARD"}, {"at": 11_007, "status": "ROLL_FORWARD_AWAITING_PULSE"}]});
        assert_eq!(lateness(&view), Some(7));
    }

    #[test]
    fn without_a_pulse_the_deadline_runs_from_the_first_event_and_nothing_fired_is_none() {
        let view = json!({"settings": {"pulse_interval_ms": 500},
            "events": [{"at": 100, "status": "ROLLING_FORWARD"}, {"at": 598, "status": "ROLL_BACK_AWAITING_PULSE"}]});
        assert_eq!(lateness(&view), Some(-2));
        let started_waiting = json!({"last_pulse_at": 200, "settings": {"pulse_interval_ms": 500},
            "events": [{"at": 100, "status": "ROLL_FORWARD_AWAITING_PULSE"}, {"at": 200, "status": "ROLLING_FORWARD"},
                       {"at": 703, "status": "ROLL_FORWARD_AWAITING_PULSE"}]});
        assert_eq!(lateness(&started_waiting), Some(3));
        let waiting = json!({"settings": {"pulse_interval_ms": 500}, "events": [{"at": 100, "status": "ROLLING_FORWARD"}]});
        assert_eq!(lateness(&waiting), None);
    }
}
